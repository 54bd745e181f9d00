// Conv's fast row "qdq-u8s8" (ops/conv/conv_int8.h) and the fast pass that opens it
// (MarkConvInputGrids, passes/fast_passes.cpp): QDQ convolutions built here run in an exact
// and a fast session at the target under test. Where the pass fires, the fast session
// plans the row (by itself on dot-product targets, forced on the others) and every output
// is within the row's bound of the integer-exact result
// (computed here in binary64); where it must not (input not on a grid, two groups, an
// activation the row lacks, a fold too short to be worth it) or the weights are not int8 values (the row gives way at
// run time), the fast session's outputs are those of a fast session without the pass.
// The fast pass that folds a BatchNormalization into the Conv before it (FoldConvBatchNorm),
// within its bound of the binary64 result, and where it must not fire.
#include "tests/catch.h"

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "core/npy.h"
#include "core/random.h"
#include "runtime/dispatch.h"
#include "runtime/session.h"
#include "tests/ops/op_test.h"
#include "tests/test_util.h"

namespace onemodel::impl {
namespace test::conv_fast_test {
namespace {

struct QConvCase {
  int64_t C = 8, M = 16, H = 9, W = 7, K = 3, group = 1, stride = 1, pad = 1;
  bool input_grid = true;  // X goes through QuantizeLinear -> DequantizeLinear
  bool int8_weights = true;
  bool per_channel = true;
  bool relu = true;
  bool out_qdq = false;  // the result goes through QuantizeLinear -> DequantizeLinear
  const char* act = "Relu";
  bool xq_output = false;  // Xq is a graph output too: Q and DQ stay apart (a plain DQ input)
};

struct Built {
  std::string model;
  std::vector<float> x;
  // The integer-exact result (binary64) and each output's bound scale sum |terms|.
  std::vector<double> want;
};

constexpr float kXScale = 0.03125f * 1.1f;
constexpr int32_t kXZero = 117;

Built Build(const QConvCase& c, uint64_t seed) {
  SplitMix64 rng(seed);
  const int64_t Cg = c.C / c.group, taps = c.K * c.K, wn = c.M * Cg * taps;
  std::vector<double> wq(static_cast<size_t>(wn)), ws(static_cast<size_t>(c.per_channel ? c.M : 1)),
      b(static_cast<size_t>(c.M));
  for (auto& v : wq) v = double(int32_t(rng.NextU32() % 255) - 127);
  for (auto& v : ws) v = double(rng.Uniform(0.001f, 0.02f));
  for (auto& v : b) v = double(rng.Uniform(-0.5f, 0.5f));
  Built out;
  out.x.resize(size_t(c.C * c.H * c.W));
  for (auto& v : out.x) v = rng.Uniform(-4.0f, 4.0f);
  std::vector<TInit> inits = {{"xs", onnx::TensorProto::FLOAT, {}, {double(kXScale)}},
                              {"xz", onnx::TensorProto::UINT8, {}, {double(kXZero)}},
                              {"B", onnx::TensorProto::FLOAT, {c.M}, b}};
  std::vector<TNode> nodes;
  std::string xin = "X";
  if (c.input_grid) {
    nodes.push_back({"QuantizeLinear", {"X", "xs", "xz"}, {"Xq"}});
    nodes.push_back({"DequantizeLinear", {"Xq", "xs", "xz"}, {"Xd"}});
    xin = "Xd";
  }
  if (c.int8_weights) {
    inits.push_back({"Wq", onnx::TensorProto::INT8, {c.M, Cg, c.K, c.K}, wq});
    inits.push_back({"ws", onnx::TensorProto::FLOAT, c.per_channel ? Shape{c.M} : Shape{}, ws});
    nodes.push_back({"DequantizeLinear", {"Wq", "ws"}, {"Wd"}, {AI("axis", 0)}});
  } else {
    std::vector<double> wf(static_cast<size_t>(wn));
    for (auto& v : wf) v = double(rng.Uniform(-0.3f, 0.3f));
    inits.push_back({"Wd", onnx::TensorProto::FLOAT, {c.M, Cg, c.K, c.K}, wf});
  }
  const std::vector<TAttr> attrs = {AInts("pads", {c.pad, c.pad, c.pad, c.pad}), AInts("strides", {c.stride, c.stride}),
                                    AI("group", c.group)};
  const std::string conv_out = c.relu || c.out_qdq ? "Yc" : "Y";
  nodes.push_back({"Conv", {xin, "Wd", "B"}, {conv_out}, attrs});
  std::string last = conv_out;
  if (c.relu) {
    const std::string o = c.out_qdq ? "Yr" : "Y";
    nodes.push_back({c.act, {last}, {o}});
    last = o;
  }
  if (c.out_qdq) {
    inits.push_back({"ys", onnx::TensorProto::FLOAT, {}, {0.05}});
    inits.push_back({"yz", onnx::TensorProto::UINT8, {}, {3}});
    nodes.push_back({"QuantizeLinear", {last, "ys", "yz"}, {"Yq"}});
    nodes.push_back({"DequantizeLinear", {"Yq", "ys", "yz"}, {"Y"}});
  }
  out.model = TypedGraph({1, c.C, c.H, c.W}, inits, nodes,
                         c.xq_output ? std::vector<std::string>{"Y", "Xq"} : std::vector<std::string>{"Y"});
  // The integer-exact convolution: q(x) - zp times the weights' codes, in binary64.
  const int64_t OH = (c.H + 2 * c.pad - c.K) / c.stride + 1, OW = (c.W + 2 * c.pad - c.K) / c.stride + 1;
  std::vector<double> xq(out.x.size());
  for (size_t i = 0; i < xq.size(); ++i)
    xq[i] = std::clamp(std::nearbyint(double(out.x[i] / kXScale)) + kXZero, 0.0, 255.0) - kXZero;
  out.want.resize(size_t(c.M * OH * OW));
  for (int64_t m = 0; m < c.M; ++m)
    for (int64_t oh = 0; oh < OH; ++oh)
      for (int64_t ow = 0; ow < OW; ++ow) {
        double acc = 0;
        const int64_t grp = m / (c.M / c.group);
        for (int64_t ci = 0; ci < Cg; ++ci)
          for (int64_t kh = 0; kh < c.K; ++kh)
            for (int64_t kw = 0; kw < c.K; ++kw) {
              const int64_t ih = oh * c.stride - c.pad + kh, iw = ow * c.stride - c.pad + kw;
              if (ih < 0 || ih >= c.H || iw < 0 || iw >= c.W) continue;
              acc += xq[size_t(((grp * Cg + ci) * c.H + ih) * c.W + iw)] *
                     wq[size_t(((m * Cg + ci) * c.K + kh) * c.K + kw)];
            }
        const double s = double(float(kXScale)) * double(float(ws[size_t(c.per_channel ? m : 0)]));
        double v = acc * s + double(float(b[size_t(m)]));
        if (c.relu) v = std::max(v, 0.0);
        out.want[size_t((m * OH + oh) * OW + ow)] = v;
      }
  return out;
}

struct Ran {
  std::vector<float> y;
  std::string row;
};
// without_pass: the fast session without the pass that opens the integer row (the float
// rows it would plan anyway, "im2col-gemm-fma" on FMA targets).
Ran RunIt(const Built& b, const QConvCase& c, Mode mode, int threads, bool force = false, bool without_pass = false) {
  SessionOptions o;
  o.mode = mode;
  o.isa = IsaName(ActiveIsa());
  o.threads = threads;
  if (force) o.algorithms["Conv"] = "qdq-u8s8";
  if (without_pass) o.disabled_passes = {"conv-input-grid"};
  Session s = Session::FromBytes(reinterpret_cast<const uint8_t*>(b.model.data()), b.model.size(), o, "qconv");
  const auto out = s.Run({{"X", Input({1, c.C, c.H, c.W}, b.x)}});
  Ran r;
  r.y.assign(out[0].tensor.data<float>(), out[0].tensor.data<float>() + out[0].tensor.numel());
  for (const NodePlan& p : s.plans())
    if (p.op_type == "Conv") r.row = p.row;
  return r;
}

}  // namespace

TEST_CASE("ops/conv fast: the integer row where the QDQ pattern fits, within its bound", "[ops][fast][int8]") {
  QConvCase plain_dq;  // the input from a DequantizeLinear of its own (Q's result read twice)
  plain_dq.xq_output = true;
  const std::vector<QConvCase> cases = {
      {},                                                       // 3x3, pad 1, Relu
      {64, 24, 12, 10, 1, 1, 1, 0},                             // pointwise: rows straight from the input
      {8, 40, 11, 13, 3, 1, 2, 1},                              // stride 2, channels off the tiles
      {12, 17, 6, 5, 3, 1, 1, 0, true, true, false, false},     // per-tensor weights, no activation
      {8, 32, 7, 7, 3, 1, 1, 1, true, true, true, true, true},  // a fused quantisation of the result
      {3, 16, 15, 13, 7, 1, 2, 3},                              // a first layer: 3 channels padded to 4
      {6, 20, 8, 9, 3, 1, 1, 1},                                // 6 channels padded to 8
      plain_dq,
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    const QConvCase& c = cases[i];
    const Built b = Build(c, 100 + i);
    INFO("case " << i << " at " << IsaName(ActiveIsa()));
    const Ran exact = RunIt(b, c, Mode::kExact, 1);
    CHECK(exact.row != "qdq-u8s8");
    if (ActiveIsa() == Isa::kRef) {
      // The oracle session runs the model as written (no passes, reference rows), in
      // either mode: nothing to force.
      const Ran fast = RunIt(b, c, Mode::kFast, 1);
      CHECK(fast.row == "reference");
      CHECK(std::memcmp(fast.y.data(), exact.y.data(), fast.y.size() * sizeof(float)) == 0);
      continue;
    }
    // Automatic planning takes the row on dot-product instructions only (conv_int8.h);
    // forced, it runs on every target.
    const bool native_dot = MakeDispatch(ActiveIsa()).kernels.native_dot_u8s8;
    CHECK((RunIt(b, c, Mode::kFast, 1).row == "qdq-u8s8") == native_dot);
    for (int threads : {1, 3}) {
      const Ran fast = RunIt(b, c, Mode::kFast, threads, true);
      CHECK(fast.row == "qdq-u8s8");
      REQUIRE(fast.y.size() == b.want.size());
      int bad = 0;
      bool differs = false;
      for (size_t k = 0; k < b.want.size(); ++k) {
        const double want = b.want[k];
        differs = differs || std::memcmp(&fast.y[k], &exact.y[k], 4) != 0;
        if (c.out_qdq) {
          // One step of the result's grid: a value at a rounding boundary may land on
          // either side (exact mode's float sum rounds, the integer sum does not).
          if (std::fabs(double(fast.y[k]) - double(exact.y[k])) > 0.05 * 1.0001) ++bad;
          continue;
        }
        // float(sum) exact (|sum| < 2^24), the combined scale and the product rounded, the
        // bias added: 3 roundings of values at most |want| + |bias| + |sum * scale|.
        const double tol = 4 * 0x1p-24 * (std::fabs(want) + 1.0);
        if (!(std::fabs(double(fast.y[k]) - want) <= tol)) {
          if (bad++ < 3) FAIL_CHECK("element " << k << ": fast " << fast.y[k] << ", want " << want);
        }
      }
      CHECK(bad == 0);
      if (!c.out_qdq) CHECK(differs);  // the integer row really ran (exact mode's sum rounds)
    }
  }
}

// (The comparison is with the fast session without the pass: its float rows, fast mode's
// own, are tested in tests/ops/math/gemm_fast_test.cpp.)
TEST_CASE("ops/conv fast: where the pattern does not fit, the integer row changes nothing", "[ops][fast][int8]") {
  QConvCase no_grid;  // X straight into the Conv: no grid, the pass does not fire
  no_grid.input_grid = false;
  QConvCase grouped;  // two groups: the row does not fit
  grouped.group = 2;
  QConvCase float_weights;  // weights not on an int8 grid: the row gives way at run time
  float_weights.int8_weights = false;
  QConvCase swish;  // an activation the row lacks, fused into the Conv by exact mode
  swish.act = "HardSwish";
  QConvCase short_fold;  // 16 channels, 1x1: a fold of 16 terms, not chosen
  short_fold.C = 16;
  short_fold.K = 1;
  short_fold.pad = 0;
  int i = 0;
  for (const QConvCase& c : {no_grid, grouped, float_weights, swish, short_fold}) {
    INFO("case " << i << " at " << IsaName(ActiveIsa()));
    const Built b = Build(c, 200 + uint64_t(i++));
    const Ran exact = RunIt(b, c, Mode::kFast, 2, false, true);
    const Ran fast = RunIt(b, c, Mode::kFast, 2);
    REQUIRE(fast.y.size() == exact.y.size());
    CHECK(std::memcmp(fast.y.data(), exact.y.data(), fast.y.size() * sizeof(float)) == 0);
    if (i != 3) CHECK(fast.row != "qdq-u8s8");  // float weights: planned, given way at run time
  }
}

TEST_CASE("ops/conv fast: exact sessions over the committed graphs plan no fast row", "[ops][fast]") {
  // testdata/graphs (the golden graphs: a QDQ convolution net among them): each runs on
  // its stored inputs in an exact and a fast session at the target under test: the exact
  // session plans no fast row.
  namespace fs = std::filesystem;
  const fs::path dir = "testdata/graphs";
  REQUIRE(fs::is_directory(dir));  // run from the repository's root
  auto read = [](const fs::path& f) {
    std::ifstream in(f, std::ios::binary);
    return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
  };
  int graphs = 0, qdq_fast_rows = -1;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() != ".onnx") continue;
    fs::path inputs = entry.path();
    inputs.replace_extension(".inputs");
    if (!fs::exists(inputs)) continue;
    std::map<std::string, Value> feeds;
    std::ifstream list(inputs);
    for (std::string line; std::getline(list, line);) {
      const size_t eq = line.find('=');
      if (eq == std::string::npos) continue;
      const std::vector<uint8_t> bytes = read(dir / line.substr(eq + 1));
      feeds[line.substr(0, eq)] = Value::FromTensor(ParseNpy(bytes.data(), bytes.size(), line));
    }
    const std::vector<uint8_t> model = read(entry.path());
    INFO(entry.path().string() << " at " << IsaName(ActiveIsa()));
    int fast_rows[2] = {0, 0};
    for (Mode mode : {Mode::kExact, Mode::kFast}) {
      SessionOptions o;
      o.mode = mode;
      o.isa = IsaName(ActiveIsa());
      Session s = Session::FromBytes(model.data(), model.size(), o, entry.path().string());
      s.Run(feeds);
      for (const NodePlan& p : s.plans())
        fast_rows[mode == Mode::kFast] += mode == Mode::kExact ? p.fast : p.row == "qdq-u8s8";
    }
    CHECK(fast_rows[0] == 0);
    if (entry.path().stem() == "qdq_conv_net") qdq_fast_rows = fast_rows[1];
    ++graphs;
  }
  CHECK(graphs >= 5);
  CHECK(qdq_fast_rows == 0);  // its convolutions' folds (36 and 4 terms) are too short
}

namespace {

// Conv -> BatchNormalization (-> Relu) for the fast pass "conv-batchnorm"
// (FoldConvBatchNorm, passes/fast_passes.cpp).
struct BnCase {
  int64_t C = 6, M = 10, H = 7, W = 6;
  bool bias = true, relu = true;
  bool conv_output = false;  // the Conv's result is a graph output too (a second reader)
  bool fed_scale = false;    // a feed may replace the scale: not a constant
  bool bad_var = false;      // one channel's variance + epsilon is negative: s is NaN
};
struct BnBuilt {
  std::string model;
  std::vector<float> x;
  std::vector<double> want, mag;  // binary64 result and sum |terms| (W s x, (b - mean) s, B)
};

BnBuilt BuildBn(const BnCase& c, uint64_t seed) {
  SplitMix64 rng(seed);
  const int64_t K = 3, per = c.C * K * K;
  const std::vector<double> w = Floats(rng, c.M * per, -0.5f, 0.5f), b = Floats(rng, c.M, -0.3f, 0.3f);
  const std::vector<double> scale = Floats(rng, c.M, -2.0f, 2.0f), shift = Floats(rng, c.M, -1.0f, 1.0f);
  const std::vector<double> mean = Floats(rng, c.M, -0.5f, 0.5f);
  std::vector<double> var = Floats(rng, c.M, 0.05f, 3.0f);
  if (c.bad_var) var[1] = -1.0;
  constexpr float kEps = 1e-3f;
  BnBuilt out;
  out.x = Values(rng, c.C * c.H * c.W, 0, -2.0f, 2.0f);
  std::vector<TInit> inits = {{"W", F, {c.M, c.C, K, K}, w},
                              {"scale", F, {c.M}, scale},
                              {"shift", F, {c.M}, shift},
                              {"mean", F, {c.M}, mean},
                              {"var", F, {c.M}, var}};
  std::vector<std::string> conv_in = {"X", "W"};
  if (c.bias) {
    inits.push_back({"Bc", F, {c.M}, b});
    conv_in.push_back("Bc");
  }
  std::vector<TNode> nodes = {
      {"Conv", conv_in, {"Yc"}, {AInts("pads", {1, 1, 1, 1})}},
      {"BatchNormalization", {"Yc", "scale", "shift", "mean", "var"}, {c.relu ? "Yb" : "Y"}, {AF("epsilon", kEps)}}};
  if (c.relu) nodes.push_back({"Relu", {"Yb"}, {"Y"}});
  std::vector<std::string> outputs = {"Y"};
  if (c.conv_output) outputs.push_back("Yc");
  out.model = TypedGraph({1, c.C, c.H, c.W}, inits, nodes, outputs,
                         c.fed_scale ? std::vector<std::string>{"scale"} : std::vector<std::string>{});
  const int64_t P = c.H * c.W;
  out.want.resize(size_t(c.M * P));
  out.mag.resize(out.want.size());
  for (int64_t m = 0; m < c.M; ++m) {
    const double sm = scale[size_t(m)] / std::sqrt(var[size_t(m)] + double(kEps));
    const double bm = c.bias ? b[size_t(m)] : 0.0;
    for (int64_t oh = 0; oh < c.H; ++oh)
      for (int64_t ow = 0; ow < c.W; ++ow) {
        double acc = 0, mag = 0;
        for (int64_t ci = 0; ci < c.C; ++ci)
          for (int64_t kh = 0; kh < K; ++kh)
            for (int64_t kw = 0; kw < K; ++kw) {
              const int64_t ih = oh - 1 + kh, iw = ow - 1 + kw;
              if (ih < 0 || ih >= c.H || iw < 0 || iw >= c.W) continue;
              const double t =
                  double(out.x[size_t((ci * c.H + ih) * c.W + iw)]) * w[size_t(m * per + (ci * K + kh) * K + kw)];
              acc += t;
              mag += std::fabs(t * sm);
            }
        double v = (acc + bm - mean[size_t(m)]) * sm + shift[size_t(m)];
        if (c.relu) v = std::max(v, 0.0);
        out.want[size_t(m * P + oh * c.W + ow)] = v;
        out.mag[size_t(m * P + oh * c.W + ow)] =
            mag + std::fabs((bm - mean[size_t(m)]) * sm) + std::fabs(shift[size_t(m)]);
      }
  }
  return out;
}

struct BnRan {
  std::vector<float> y;
  bool has_bn = false;
};
BnRan RunBn(const BnBuilt& b, const BnCase& c, Mode mode, int threads, bool without_pass = false) {
  SessionOptions o;
  o.mode = mode;
  o.isa = IsaName(ActiveIsa());
  o.threads = threads;
  if (without_pass) o.disabled_passes = {"conv-batchnorm"};
  Session s = Session::FromBytes(reinterpret_cast<const uint8_t*>(b.model.data()), b.model.size(), o, "conv-bn");
  std::map<std::string, Value> feeds = {{"X", Input({1, c.C, c.H, c.W}, b.x)}};
  if (c.fed_scale) {
    SplitMix64 rng(7);
    feeds["scale"] = Input({c.M}, Values(rng, c.M, 0, 0.5f, 1.5f));
  }
  const auto out = s.Run(feeds);
  BnRan r;
  r.y.assign(out[0].tensor.data<float>(), out[0].tensor.data<float>() + out[0].tensor.numel());
  for (const NodePlan& p : s.plans()) r.has_bn = r.has_bn || p.op_type == "BatchNormalization";
  return r;
}

}  // namespace

TEST_CASE("ops/conv fast: Conv -> BatchNormalization folded into the weights, within its bound", "[ops][fast]") {
  BnCase no_bias;
  no_bias.bias = false;
  no_bias.relu = false;
  BnCase wide;  // 40 channels: a longer fold, the GEMM rows
  wide.C = 40;
  wide.M = 24;
  wide.H = 9;
  wide.W = 11;
  BnCase read_twice, fed, bad;
  read_twice.conv_output = true;
  fed.fed_scale = true;
  bad.bad_var = true;
  const std::vector<std::pair<BnCase, bool>> cases = {{BnCase{}, true},    {no_bias, true}, {wide, true},
                                                      {read_twice, false}, {fed, false},    {bad, false}};
  for (size_t i = 0; i < cases.size(); ++i) {
    const auto& [c, folds] = cases[i];
    const BnBuilt b = BuildBn(c, 300 + i);
    INFO("case " << i << " at " << IsaName(ActiveIsa()));
    const BnRan exact = RunBn(b, c, Mode::kExact, 1);
    CHECK(exact.has_bn);  // exact sessions never fold
    const BnRan fast = RunBn(b, c, Mode::kFast, 1);
    if (ActiveIsa() == Isa::kRef) {  // the oracle runs the model as written, in either mode
      CHECK(fast.has_bn);
      CHECK(std::memcmp(fast.y.data(), exact.y.data(), fast.y.size() * sizeof(float)) == 0);
      continue;
    }
    const BnRan plain = RunBn(b, c, Mode::kFast, 1, true);
    CHECK(plain.has_bn);
    CHECK(fast.has_bn == !folds);
    if (!folds) {  // the pass did not fire: the fast session without it, bit for bit
      CHECK(std::memcmp(fast.y.data(), plain.y.data(), fast.y.size() * sizeof(float)) == 0);
      continue;
    }
    REQUIRE(fast.y.size() == b.want.size());
    // The folded Conv's fold (C * 9 terms and the bias) within gamma_{K+1} of its own
    // terms, each weight and the bias one rounding off W s and (b - mean) s + B.
    const int64_t terms = c.C * 9;
    const double u = 0x1p-24, gamma = (terms + 4) * u / (1 - (terms + 4) * u);
    int bad_outputs = 0;
    for (size_t k = 0; k < b.want.size(); ++k)
      if (!(std::fabs(double(fast.y[k]) - b.want[k]) <= gamma * b.mag[k])) ++bad_outputs;
    CHECK(bad_outputs == 0);
    for (int threads : {2, 3}) {
      const BnRan t = RunBn(b, c, Mode::kFast, threads);
      CHECK(std::memcmp(t.y.data(), fast.y.data(), fast.y.size() * sizeof(float)) == 0);
    }
  }
}

}  // namespace test::conv_fast_test
}  // namespace onemodel::impl
