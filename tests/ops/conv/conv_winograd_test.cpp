// Fast mode's Conv row "winograd-f4x4" (ops/conv/conv_winograd.h): 3x3 stride-1
// convolutions built here run in an exact and a fast session at the target under test.
//  - Where the row is chosen (32+ input channels, 64+ output channels, 144+ positions)
//    the fast session plans it on every vector target; every output is within
//    gamma_{C+16} (E + |bias|) of the binary64 convolution, where E sums the absolute
//    values of every term of the transform (|A^T| (|G||g||G^T| o |B^T||d||B|) |A| per
//    channel: docs/graph-passes.md "Fast passes"); exact mode's output is within the same
//    bound; some output differs from exact mode's; the bits are the same at 1, 2, 3 and 7
//    threads.
//  - Where it must not be chosen (stride 2, dilation 2, two groups, 5x5, 16 input
//    channels, a 7x7 output) the fast session plans another row; an input holding an inf
//    makes the row give way to the GEMM row (that row's bits); forced, the row runs
//    within the bound on every target; exact sessions refuse it by name.
#include "tests/catch.h"

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "core/random.h"
#include "runtime/dispatch.h"
#include "runtime/session.h"
#include "tests/ops/op_test.h"
#include "tests/test_util.h"

namespace onemodel::impl {
namespace test::conv_winograd_test {
namespace {

struct WCase {
  int64_t C = 32, M = 64, H = 14, W = 14, K = 3, pad = 1, stride = 1, dilation = 1, group = 1;
  bool relu = false;
};

struct Built {
  std::string model;
  Shape xs;
  std::vector<float> x;
  std::vector<double> want, bound;  // binary64 result and the row's bound per output
};

constexpr double kBT[6][6] = {{4, 0, -5, 0, 1, 0},  {0, -4, -4, 1, 1, 0}, {0, 4, -4, -1, 1, 0},
                              {0, -2, -1, 2, 1, 0}, {0, 2, -1, -2, 1, 0}, {0, 4, 0, -5, 0, 1}};
constexpr double kG[6][3] = {{1.0 / 4, 0, 0},
                             {-1.0 / 6, -1.0 / 6, -1.0 / 6},
                             {-1.0 / 6, 1.0 / 6, -1.0 / 6},
                             {1.0 / 24, 1.0 / 12, 1.0 / 6},
                             {1.0 / 24, -1.0 / 12, 1.0 / 6},
                             {0, 0, 1}};
constexpr double kAT[4][6] = {{1, 1, 1, 1, 1, 0}, {0, 1, -1, 2, -2, 0}, {0, 1, 1, 4, 4, 0}, {0, 1, -1, 8, -8, 1}};

Built Build(const WCase& c, uint64_t seed, float inf_at = 0) {
  SplitMix64 rng(seed);
  Built b;
  const int64_t Cg = c.C / c.group, OH = (c.H + 2 * c.pad - c.dilation * (c.K - 1) - 1) / c.stride + 1,
                OW = (c.W + 2 * c.pad - c.dilation * (c.K - 1) - 1) / c.stride + 1;
  b.xs = {1, c.C, c.H, c.W};
  b.x.resize(size_t(c.C * c.H * c.W));
  for (auto& v : b.x) v = rng.Uniform(-2.0f, 2.0f);
  if (inf_at != 0) b.x[b.x.size() / 2] = inf_at;
  std::vector<double> w(size_t(c.M * Cg * c.K * c.K)), bias(size_t(c.M));
  for (auto& v : w) v = double(rng.Uniform(-0.5f, 0.5f));
  for (auto& v : bias) v = double(rng.Uniform(-1.0f, 1.0f));
  const std::vector<TAttr> attrs = {AInts("pads", {c.pad, c.pad, c.pad, c.pad}), AInts("strides", {c.stride, c.stride}),
                                    AInts("dilations", {c.dilation, c.dilation}), AI("group", c.group)};
  std::vector<TNode> nodes = {{"Conv", {"X", "W", "B"}, {c.relu ? "Yc" : "Y"}, attrs}};
  if (c.relu) nodes.push_back({"Relu", {"Yc"}, {"Y"}});
  b.model = TypedGraph(
      b.xs, {{"W", onnx::TensorProto::FLOAT, {c.M, Cg, c.K, c.K}, w}, {"B", onnx::TensorProto::FLOAT, {c.M}, bias}},
      nodes, {"Y"});
  if (inf_at != 0 || c.K != 3 || c.stride != 1 || c.dilation != 1 || c.group != 1) return b;
  // The binary64 convolution and the bound: per output, the tile's |transform| terms.
  const double g = [&] {
    const double nu = double(c.C + 16) * 0x1p-24;
    return nu / (1 - nu);
  }();
  b.want.assign(size_t(c.M * OH * OW), 0.0);
  b.bound.assign(b.want.size(), 0.0);
  auto X = [&](int64_t ch, int64_t ih, int64_t iw) {
    return ih < 0 || ih >= c.H || iw < 0 || iw >= c.W ? 0.0 : double(b.x[size_t((ch * c.H + ih) * c.W + iw)]);
  };
  for (int64_t m = 0; m < c.M; ++m)
    for (int64_t oh = 0; oh < OH; ++oh)
      for (int64_t ow = 0; ow < OW; ++ow) {
        double s = bias[size_t(m)];
        for (int64_t ch = 0; ch < c.C; ++ch)
          for (int64_t kh = 0; kh < 3; ++kh)
            for (int64_t kw = 0; kw < 3; ++kw)
              s += X(ch, oh - c.pad + kh, ow - c.pad + kw) * w[size_t(((m * c.C + ch) * 3 + kh) * 3 + kw)];
        b.want[size_t((m * OH + oh) * OW + ow)] = c.relu ? std::max(s, 0.0) : s;
      }
  for (int64_t m = 0; m < c.M; ++m)
    for (int64_t ty = 0; ty < (OH + 3) / 4; ++ty)
      for (int64_t tx = 0; tx < (OW + 3) / 4; ++tx) {
        double e[6][6] = {};  // sum over channels of |U| o |V|
        for (int64_t ch = 0; ch < c.C; ++ch) {
          double u[6][6] = {}, v[6][6] = {};
          for (int i = 0; i < 6; ++i)
            for (int j = 0; j < 6; ++j)
              for (int a = 0; a < 3; ++a)
                for (int bb = 0; bb < 3; ++bb)
                  u[i][j] += std::fabs(kG[i][a]) * std::fabs(w[size_t(((m * c.C + ch) * 3 + a) * 3 + bb)]) *
                             std::fabs(kG[j][bb]);
          for (int i = 0; i < 6; ++i)
            for (int j = 0; j < 6; ++j)
              for (int a = 0; a < 6; ++a)
                for (int bb = 0; bb < 6; ++bb)
                  v[i][j] += std::fabs(kBT[i][a]) * std::fabs(X(ch, 4 * ty - c.pad + a, 4 * tx - c.pad + bb)) *
                             std::fabs(kBT[j][bb]);
          for (int i = 0; i < 6; ++i)
            for (int j = 0; j < 6; ++j) e[i][j] += u[i][j] * v[i][j];
        }
        for (int i = 0; i < 4; ++i)
          for (int j = 0; j < 4; ++j) {
            const int64_t oh = 4 * ty + i, ow = 4 * tx + j;
            if (oh >= OH || ow >= OW) continue;
            double sum = 0;
            for (int a = 0; a < 6; ++a)
              for (int bb = 0; bb < 6; ++bb) sum += std::fabs(kAT[i][a]) * e[a][bb] * std::fabs(kAT[j][bb]);
            b.bound[size_t((m * OH + oh) * OW + ow)] = g * (sum + std::fabs(bias[size_t(m)])) + 0x1p-140;
          }
      }
  return b;
}

struct Ran {
  std::vector<float> y;
  std::string row;
};
Ran RunIt(const Built& b, Mode mode, int threads, const std::string& force = "") {
  SessionOptions o;
  o.mode = mode;
  o.isa = IsaName(ActiveIsa());
  o.threads = threads;
  if (!force.empty()) o.algorithms["Conv"] = force;
  Session s = Session::FromBytes(reinterpret_cast<const uint8_t*>(b.model.data()), b.model.size(), o, "wconv");
  const auto out = s.Run({{"X", Input(b.xs, b.x)}});
  Ran r;
  r.y.assign(out[0].tensor.data<float>(), out[0].tensor.data<float>() + out[0].tensor.numel());
  for (const NodePlan& p : s.plans())
    if (p.op_type == "Conv") r.row = p.row;
  return r;
}

int OutsideBound(const Built& b, const std::vector<float>& y, const char* what) {
  REQUIRE(y.size() == b.want.size());
  int bad = 0;
  for (size_t i = 0; i < y.size(); ++i)
    if (!(std::fabs(double(y[i]) - b.want[i]) <= b.bound[i]) && bad++ < 3)
      FAIL_CHECK(what << " element " << i << ": " << y[i] << ", want " << b.want[i] << " within " << b.bound[i]);
  return bad;
}

}  // namespace

TEST_CASE("ops/conv winograd: F(4x4, 3x3) within its bound where chosen", "[ops][fast]") {
  const std::vector<WCase> cases = {
      {},                                     // 14x14, pad 1
      {32, 96, 13, 14, 3, 1},                 // partial tiles along both axes
      {48, 64, 16, 16, 3, 0},                 // no padding
      {64, 64, 12, 12, 3, 1, 1, 1, 1, true},  // Relu fused, 144 positions
      {128, 256, 12, 12, 3, 1},               // U of 4.5 MiB: chosen on a plane of 9 tiles only
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    const Built b = Build(cases[i], 300 + i);
    INFO("case " << i << " at " << IsaName(ActiveIsa()));
    const Ran exact = RunIt(b, Mode::kExact, 1);
    CHECK(exact.row != "winograd-f4x4");
    CHECK(OutsideBound(b, exact.y, "exact") == 0);
    const Ran fast = RunIt(b, Mode::kFast, 1);
    if (ActiveIsa() == Isa::kRef) {
      CHECK(fast.row == "reference");
      continue;
    }
    CHECK(fast.row == "winograd-f4x4");
    CHECK(OutsideBound(b, fast.y, "fast") == 0);
    bool differs = false;
    for (size_t k = 0; k < fast.y.size(); ++k) differs = differs || std::memcmp(&fast.y[k], &exact.y[k], 4) != 0;
    CHECK(differs);
    for (int threads : {2, 3, 7}) {
      INFO(threads << " threads");
      const Ran t = RunIt(b, Mode::kFast, threads);
      CHECK(std::memcmp(t.y.data(), fast.y.data(), t.y.size() * sizeof(float)) == 0);
    }
  }
}

TEST_CASE("ops/conv winograd: not chosen where it does not fit or pay, gives way on inf", "[ops][fast]") {
  if (ActiveIsa() == Isa::kRef) return;  // the oracle plans the reference row only
  WCase s2;
  s2.stride = 2;
  WCase d2;
  d2.dilation = 2;
  WCase g2;
  g2.group = 2;
  WCase k5;
  k5.K = 5;
  k5.pad = 2;
  WCase c16;
  c16.C = 16;
  WCase small;
  small.H = small.W = 7;
  int i = 0;
  for (const WCase& c : {s2, d2, g2, k5, c16, small}) {
    INFO("case " << i << " at " << IsaName(ActiveIsa()));
    const Built b = Build(c, 400 + uint64_t(i++));
    CHECK(RunIt(b, Mode::kFast, 2).row != "winograd-f4x4");
  }
  // An inf in the input: the row gives way to the GEMM row, with that row's bits.
  const Built b = Build(WCase{}, 500, INFINITY);
  const bool fma = MakeDispatch(ActiveIsa()).kernels.fma_f32;
  const Ran fast = RunIt(b, Mode::kFast, 2);
  CHECK(fast.row == "winograd-f4x4");
  const Ran gemm = RunIt(b, Mode::kFast, 2, fma ? "im2col-gemm-fma" : "im2col-gemm");
  CHECK(std::memcmp(fast.y.data(), gemm.y.data(), fast.y.size() * sizeof(float)) == 0);
  // Exact sessions refuse it by name; forced in a fast session it runs within its bound.
  try {
    RunIt(Build(WCase{}, 501), Mode::kExact, 1, "winograd-f4x4");
    FAIL("forcing winograd-f4x4 in an exact session was accepted");
  } catch (const Error& e) {
    CHECK(std::string(e.what()).find("'winograd-f4x4' is fast and this session is exact") != std::string::npos);
  }
  WCase few;  // 16 channels, 8x8: not chosen, but it fits
  few.C = 16;
  few.H = few.W = 8;
  const Built bf = Build(few, 502);
  const Ran forced = RunIt(bf, Mode::kFast, 3, "winograd-f4x4");
  CHECK(forced.row == "winograd-f4x4");
  CHECK(OutsideBound(bf, forced.y, "forced") == 0);
}

}  // namespace test::conv_winograd_test
}  // namespace onemodel::impl
