// Oracle tests of the operators' fast paths: single-operator graphs run by a session at
// the target under test with 1, 2, 3 and 7 threads, bitwise against the oracle (ISA
// ref, one thread). The shapes and inputs are chosen to reach each path and its edges:
// convolution through im2col + GEMM with padding, strides, dilation and groups (signed
// zero results at padded positions included), patch deconvolution, max pooling planes,
// nearest resize, broadcast binary runs and GEMMs split by rows and by columns.
#include "tests/catch.h"

#include <cstring>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "core/error.h"
#include "core/random.h"
#include "onnx/import.h"
#include "onnx/onnx.pb.h"
#include "passes/passes.h"
#include "runtime/dispatch.h"
#include "runtime/session.h"
#include "tests/test_util.h"

namespace onemodel::impl {
namespace test {
namespace {

struct Attr {
  std::string name;
  std::vector<int64_t> ints;
  bool is_float = false;
  float f = 0;
  std::string s;
};
Attr Ints(std::string n, std::vector<int64_t> v) { Attr a; a.name = std::move(n); a.ints = std::move(v); return a; }
Attr Int(std::string n, int64_t v) { return Ints(std::move(n), {v}); }
Attr Float(std::string n, float v) { Attr a; a.name = std::move(n); a.is_float = true; a.f = v; return a; }
Attr Str(std::string n, std::string v) { Attr a; a.name = std::move(n); a.s = std::move(v); return a; }

struct Init {
  std::string name;
  Shape shape;
  std::vector<float> data;
  bool int64 = false;
};

// One node `op` with inputs: "X" (a graph input), then initializers (empty name: an
// omitted optional input); one output "Y".
std::string OneOp(const std::string& op, const Shape& x, const std::vector<Init>& inits, const std::vector<Attr>& attrs,
                  int64_t opset = 19) {
  const onnx::TensorProto::DataType xt = onnx::TensorProto::FLOAT;
  onnx::ModelProto m;
  m.set_ir_version(8);
  auto* os = m.add_opset_import();
  os->set_domain("");
  os->set_version(opset);
  auto* g = m.mutable_graph();
  g->set_name(op);
  auto* in = g->add_input();
  in->set_name("X");
  auto* tt = in->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(xt);
  for (int64_t d : x) tt->mutable_shape()->add_dim()->set_dim_value(d);
  auto* node = g->add_node();
  node->set_op_type(op);
  node->add_input("X");
  for (const Init& i : inits) {
    node->add_input(i.name);
    if (i.name.empty()) continue;
    auto* t = g->add_initializer();
    t->set_name(i.name);
    for (int64_t d : i.shape) t->add_dims(d);
    if (i.int64) {
      t->set_data_type(onnx::TensorProto::INT64);
      for (float v : i.data) t->add_int64_data(int64_t(v));
    } else {
      t->set_data_type(onnx::TensorProto::FLOAT);
      for (float v : i.data) t->add_float_data(v);
    }
  }
  node->add_output("Y");
  for (const Attr& a : attrs) {
    auto* pa = node->add_attribute();
    pa->set_name(a.name);
    if (a.is_float) { pa->set_type(onnx::AttributeProto::FLOAT); pa->set_f(a.f); }
    else if (!a.s.empty()) { pa->set_type(onnx::AttributeProto::STRING); pa->set_s(a.s); }
    else if (a.name == "group" || a.name == "transA" || a.name == "transB" || a.name == "ceil_mode" || a.name == "axis" || a.name == "approximate" ||
               a.name == "count_include_pad") {
      pa->set_type(onnx::AttributeProto::INT);
      pa->set_i(a.ints[0]);
    } else {
      pa->set_type(onnx::AttributeProto::INTS);
      for (int64_t v : a.ints) pa->add_ints(v);
    }
  }
  g->add_output()->set_name("Y");
  return m.SerializeAsString();
}

// Values: 0 plain, 1 with specials, 2 with runs of -0.0 (zero results whose sign the
// fold decides), 3 all -0.0.
std::vector<float> Values(SplitMix64& rng, int64_t n, int kind, float lo = -1.0f, float hi = 1.0f) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    float x = rng.Uniform(lo, hi);
    if (kind == 1 && rng.NextU32() % 7 == 0) x = F32Specials()[rng.NextU32() % F32Specials().size()];
    if (kind == 2 && (i / 13) % 3 != 0) x = -0.0f;
    if (kind == 3) x = -0.0f;
    v[size_t(i)] = x;
  }
  return v;
}
std::vector<float> Positive(SplitMix64& rng, int64_t n) {
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = rng.Uniform(0.25f, 1.0f);
  return v;
}

Value Input(const Shape& s, const std::vector<float>& v) {
  Tensor t(DType::kFloat, s);
  std::memcpy(t.mutable_data<float>(), v.data(), v.size() * sizeof(float));
  return Value::FromTensor(t);
}

// Runs the model at ISA ref on one thread and at the target under test on 1, 2, 3 and
// 7 threads; every output must be the same bytes (NaNs: any NaN).
void CheckAgainstOracle(const std::string& what, const std::string& bytes, const Shape& xs, const std::vector<float>& x) {
  auto run = [&](const std::string& isa, int threads) {
    SessionOptions o;
    o.isa = isa;
    o.threads = threads;
    Session s = Session::FromBytes(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), o, what);
    std::vector<Tensor> outs;
    for (int r = 0; r < 3; ++r) {
      auto out = s.Run({{"X", Input(xs, x)}});
      REQUIRE(!out.empty());
      outs.push_back(out[0].tensor);
    }
    return outs;
  };
  const auto want_runs = run("ref", 1);
  const Tensor& want = want_runs[0];
  REQUIRE(want.dtype() == DType::kFloat);
  for (int threads : {1, 2, 3, 7}) {
    // Three runs per session: the second reads what the first derived from constants
    // (OpContext::ConstDerived); the third follows the memory plan the second made
    // (runtime/memory_plan.h).
    const auto got_runs = run(IsaName(ActiveIsa()), threads);
    for (size_t r = 0; r < got_runs.size(); ++r) {
      const Tensor& got = got_runs[r];
      INFO(what << " at " << IsaName(ActiveIsa()) << ", " << threads << " threads, run " << r + 1);
      REQUIRE(got.shape() == want.shape());
      CHECK(DiffF32(want.data<float>(), got.data<float>(), size_t(want.numel())) == "");
    }
  }
}

}  // namespace

TEST_CASE("exact paths: Conv through im2col and GEMM equals the oracle", "[exact_paths]") {
  SplitMix64 rng(101);
  struct G { int64_t C, H, W, M, K, S, P, D, group; };
  const G geos[] = {
      {3, 17, 19, 8, 3, 1, 1, 1, 1},  {6, 12, 11, 16, 3, 2, 1, 1, 2}, {4, 15, 15, 9, 3, 1, 2, 2, 1},
      {5, 9, 30, 12, 1, 1, 0, 1, 1},  {8, 10, 10, 5, 5, 2, 2, 1, 1},  {16, 7, 7, 33, 3, 1, 1, 1, 1},
      {4, 8, 8, 8, 1, 2, 0, 1, 1},    {8, 6, 6, 16, 3, 1, 1, 1, 4},
      // Few input channels (a first layer; the direct kernel): 3x3 and 7x7 stride 2.
      {3, 20, 33, 16, 3, 2, 1, 1, 1}, {3, 23, 26, 8, 7, 2, 3, 1, 1},
  };
  for (const G& g : geos) {
    const int64_t Cg = g.C / g.group;
    const Shape xs{2, g.C, g.H, g.W};
    for (int kind : {0, 1, 2, 3}) {
      // Kinds 2 and 3 (-0.0 inputs) with positive weights: zero results whose sign only
      // the reference fold (padding taps skipped) gets right.
      const auto w = kind >= 2 ? Positive(rng, g.M * Cg * g.K * g.K) : Values(rng, g.M * Cg * g.K * g.K, 0);
      const auto x = Values(rng, 2 * g.C * g.H * g.W, kind);
      for (bool bias : {false, true}) {
        std::vector<Init> inits{{"W", {g.M, Cg, g.K, g.K}, w}};
        if (bias) inits.push_back({"B", {g.M}, Values(rng, g.M, 0)});
        const std::string m = OneOp("Conv", xs, inits,
                                    {Ints("kernel_shape", {g.K, g.K}), Ints("strides", {g.S, g.S}),
                                     Ints("pads", {g.P, g.P, g.P, g.P}), Ints("dilations", {g.D, g.D}), Int("group", g.group)});
        CheckAgainstOracle("Conv C" + std::to_string(g.C) + " M" + std::to_string(g.M) + " K" + std::to_string(g.K) +
                               " S" + std::to_string(g.S) + " P" + std::to_string(g.P) + " D" + std::to_string(g.D) +
                               " g" + std::to_string(g.group) + " kind " + std::to_string(kind) + (bias ? " bias" : ""),
                           m, xs, x);
      }
    }
  }
  // Non-finite weights (the GEMM path is not exact for them: 0 * inf at a padding tap).
  auto w = Values(rng, 8 * 3 * 9, 0);
  w[5] = U2F(0x7F800000u);
  const Shape xs{1, 3, 9, 9};
  CheckAgainstOracle("Conv with an infinite weight", OneOp("Conv", xs, {{"W", {8, 3, 3, 3}, w}}, {Ints("pads", {1, 1, 1, 1})}), xs,
                     Values(rng, 243, 1));
  // The same with more input channels (past the direct kernel: the GEMM path must refuse).
  auto w8 = Values(rng, 8 * 8 * 9, 0);
  w8[77] = U2F(0xFF800000u);
  const Shape xs8{1, 8, 9, 9};
  CheckAgainstOracle("Conv with an infinite weight, 8 channels",
                     OneOp("Conv", xs8, {{"W", {8, 8, 3, 3}, w8}}, {Ints("pads", {1, 1, 1, 1})}), xs8, Values(rng, 648, 1));
  // 1-D, depthwise (the plane path) and asymmetric padding.
  const Shape x1{2, 6, 40};
  CheckAgainstOracle("Conv 1-D", OneOp("Conv", x1, {{"W", {8, 6, 5}, Values(rng, 240, 0)}}, {Ints("pads", {2, 1}), Ints("strides", {2})}),
                     x1, Values(rng, 480, 1));
  for (int64_t s : {1, 2}) {
    for (int64_t k : {3, 5}) {
      const Shape xs2{2, 6, 23, 37};
      CheckAgainstOracle("Conv depthwise k" + std::to_string(k) + " s" + std::to_string(s),
                         OneOp("Conv", xs2, {{"W", {6, 1, k, k}, Values(rng, 6 * k * k, 0)}, {"B", {6}, Values(rng, 6, 0)}},
                               {Ints("pads", {k / 2, k / 2, k / 2, k / 2}), Ints("strides", {s, s}), Int("group", 6)}),
                         xs2, Values(rng, 2 * 6 * 23 * 37, 2));
    }
  }
  // Tall planes (several row strips of the channel-lane kernel), 20 channels (a partial
  // lane block), dilation.
  const Shape xtall{1, 20, 90, 75};
  for (int64_t s : {1, 2})
    CheckAgainstOracle("Conv depthwise tall s" + std::to_string(s),
                       OneOp("Conv", xtall, {{"W", {20, 1, 3, 3}, Values(rng, 180, 0)}},
                             {Ints("pads", {2, 2, 2, 2}), Ints("strides", {s, s}), Ints("dilations", {2, 2}), Int("group", 20)}),
                       xtall, Values(rng, 20 * 90 * 75, s == 1 ? 2 : 1));
  const Shape xd{1, 8, 13, 14};
  CheckAgainstOracle("Conv depthwise", OneOp("Conv", xd, {{"W", {8, 1, 3, 3}, Values(rng, 72, 0)}},
                                             {Ints("pads", {1, 1, 1, 1}), Ints("strides", {2, 2}), Int("group", 8)}),
                     xd, Values(rng, 8 * 13 * 14, 2));
}

TEST_CASE("exact paths: MatMul and Gemm split by rows and by columns equal the oracle", "[exact_paths]") {
  SplitMix64 rng(202);
  const Shape a1{3, 70, 300};
  CheckAgainstOracle("MatMul batched, rows split", OneOp("MatMul", a1, {{"B", {300, 130}, Values(rng, 300 * 130, 1)}}, {}), a1,
                     Values(rng, 3 * 70 * 300, 1));
  const Shape a2{5, 64};
  CheckAgainstOracle("MatMul few rows, columns split", OneOp("MatMul", a2, {{"B", {64, 1000}, Values(rng, 64000, 0)}}, {}), a2,
                     Values(rng, 320, 2));
  const Shape se{1, 40, 1, 1};
  CheckAgainstOracle("Conv 1x1 on a 1x1 plane (matrix-vector)",
                     OneOp("Conv", se, {{"W", {96, 40, 1, 1}, Values(rng, 96 * 40, 1)}, {"B", {96}, Values(rng, 96, 0)}}, {}), se,
                     Values(rng, 40, 1));
  const Shape g1{1, 300};
  CheckAgainstOracle("Gemm one row, constant transposed B",
                     OneOp("Gemm", g1, {{"B", {100, 300}, Values(rng, 30000, 1)}, {"C", {100}, Values(rng, 100, 0)}}, {Int("transB", 1)}),
                     g1, Values(rng, 300, 2));
  const Shape mv{37, 300};
  CheckAgainstOracle("MatMul by a column", OneOp("MatMul", mv, {{"B", {300, 1}, Values(rng, 300, 1)}}, {}), mv, Values(rng, 37 * 300, 2));
  const Shape a3{200, 96};
  for (int t = 0; t < 4; ++t) {
    const bool ta = t & 1, tb = t & 2;
    const Shape as = ta ? Shape{96, 200} : a3;
    CheckAgainstOracle("Gemm transA=" + std::to_string(ta) + " transB=" + std::to_string(tb),
                       OneOp("Gemm", as, {{"B", tb ? Shape{77, 96} : Shape{96, 77}, Values(rng, 96 * 77, 1)}, {"C", {77}, Values(rng, 77, 0)}},
                             {Int("transA", ta), Int("transB", tb), Float("alpha", 0.75f), Float("beta", -1.5f)}),
                       as, Values(rng, 200 * 96, 1));
  }
}

TEST_CASE("exact paths: ConvTranspose, MaxPool, Resize and broadcast arithmetic equal the oracle", "[exact_paths]") {
  SplitMix64 rng(303);
  const Shape xt{2, 6, 9, 11};
  CheckAgainstOracle("ConvTranspose 2x2 stride 2",
                     OneOp("ConvTranspose", xt, {{"W", {6, 5, 2, 2}, Values(rng, 120, 1)}, {"B", {5}, Values(rng, 5, 0)}},
                           {Ints("kernel_shape", {2, 2}), Ints("strides", {2, 2})}),
                     xt, Values(rng, 2 * 6 * 99, 1));
  CheckAgainstOracle("ConvTranspose 3x3 stride 2 (general path)",
                     OneOp("ConvTranspose", xt, {{"W", {6, 4, 3, 3}, Values(rng, 216, 0)}},
                           {Ints("strides", {2, 2}), Ints("pads", {1, 1, 1, 1})}),
                     xt, Values(rng, 2 * 6 * 99, 2));
  const Shape xp{2, 5, 17, 18};
  for (int kind : {0, 1, 2}) {
    CheckAgainstOracle("MaxPool 3x3 s2 p1 kind " + std::to_string(kind),
                       OneOp("MaxPool", xp, {}, {Ints("kernel_shape", {3, 3}), Ints("strides", {2, 2}), Ints("pads", {1, 1, 1, 1})}), xp,
                       Values(rng, 2 * 5 * 17 * 18, kind));
    CheckAgainstOracle("AveragePool 3x3 s2 p1 kind " + std::to_string(kind),
                       OneOp("AveragePool", xp, {}, {Ints("kernel_shape", {3, 3}), Ints("strides", {2, 2}), Ints("pads", {1, 1, 1, 1})}), xp,
                       Values(rng, 2 * 5 * 17 * 18, kind));
    CheckAgainstOracle("AveragePool 3x2 counting pads, uneven pads kind " + std::to_string(kind),
                       OneOp("AveragePool", xp, {}, {Ints("kernel_shape", {3, 2}), Ints("pads", {2, 0, 1, 1}), Int("count_include_pad", 1)}), xp,
                       Values(rng, 2 * 5 * 17 * 18, kind));
    // ceil_mode with counted pads: the last window of a row reaches past the padding,
    // and those taps are not counted.
    CheckAgainstOracle("AveragePool 3x3 s2 p1 ceil counting pads kind " + std::to_string(kind),
                       OneOp("AveragePool", xp, {}, {Ints("kernel_shape", {3, 3}), Ints("strides", {2, 2}), Ints("pads", {1, 1, 1, 1}),
                                                     Int("ceil_mode", 1), Int("count_include_pad", 1)}),
                       xp, Values(rng, 2 * 5 * 17 * 18, kind));
    CheckAgainstOracle("AveragePool 2x2 ceil dilated kind " + std::to_string(kind),
                       OneOp("AveragePool", xp, {}, {Ints("kernel_shape", {2, 2}), Ints("strides", {2, 2}), Ints("dilations", {2, 1}), Int("ceil_mode", 1)}),
                       xp, Values(rng, 2 * 5 * 17 * 18, kind));
    CheckAgainstOracle("MaxPool 2x2 ceil dilated kind " + std::to_string(kind),
                       OneOp("MaxPool", xp, {}, {Ints("kernel_shape", {2, 2}), Ints("strides", {2, 2}), Ints("dilations", {2, 1}), Int("ceil_mode", 1)}),
                       xp, Values(rng, 2 * 5 * 17 * 18, kind));
  }
  const Shape xr{1, 3, 7, 9};
  for (int kind : {0, 1, 2}) {
    for (const char* nm : {"floor", "round_prefer_floor"}) {
      CheckAgainstOracle(std::string("Resize nearest ") + nm + " kind " + std::to_string(kind),
                         OneOp("Resize", xr, {{"", {}, {}}, {"scales", {4}, {1.0f, 1.0f, 2.0f, 1.5f}}},
                               {Str("mode", "nearest"), Str("coordinate_transformation_mode", "asymmetric"), Str("nearest_mode", nm)}),
                         xr, Values(rng, 3 * 63, kind));
    }
  }
  struct B { Shape x, y; };
  const B bs[] = {{{2, 3, 4, 5}, {3, 1, 1}}, {{2, 3, 4, 5}, {4, 5}}, {{2, 1, 5}, {1, 4, 1}}, {{7, 300}, {1}}, {{1}, {6, 40}}, {{2, 3, 4, 5}, {2, 3, 4, 5}}};
  for (const B& b : bs) {
    int64_t nx = 1, ny = 1;
    for (int64_t d : b.x) nx *= d;
    for (int64_t d : b.y) ny *= d;
    for (const char* op : {"Add", "Sub", "Mul", "Div", "Max", "Min"}) {
      CheckAgainstOracle(std::string(op) + " broadcast", OneOp(op, b.x, {{"Y2", b.y, Values(rng, ny, 1)}}, {}), b.x, Values(rng, nx, 1));
    }
  }
}

TEST_CASE("exact paths: 3-D convolution and ConvTranspose by stride phases equal the oracle", "[exact_paths]") {
  SplitMix64 rng(1301);
  auto count = [](const Shape& s) { int64_t n = 1; for (int64_t d : s) n *= d; return n; };
  struct C3 { Shape x, w; std::vector<Attr> attrs; const char* what; };
  const C3 convs[] = {
      {{2, 4, 6, 7, 8}, {8, 4, 3, 3, 3}, {Ints("pads", {1, 1, 1, 1, 1, 1})}, "3x3x3 pad 1"},
      {{1, 6, 7, 9, 10}, {8, 3, 2, 3, 3}, {Int("group", 2), Ints("strides", {2, 1, 2}), Ints("dilations", {1, 2, 1}),
                                          Ints("pads", {0, 2, 1, 1, 0, 1})}, "grouped, strided, dilated, uneven pads"},
      {{1, 5, 4, 5, 6}, {7, 5, 1, 1, 1}, {}, "1x1x1"},
      {{1, 3, 5, 5, 5}, {4, 3, 3, 3, 3}, {Str("auto_pad", "SAME_UPPER"), Ints("strides", {2, 2, 2})}, "SAME_UPPER stride 2"},
  };
  // Kinds 2 and 3 (runs of -0.0, all -0.0) give zero results whose sign the padding
  // taps' fix-up must get right; their bias is -0.0, which keeps that sign. With kind 3
  // the weights are positive: every term is -0.0, so the reference's sums are -0.0 and a
  // padding tap's +0.0 would make them +0.0.
  for (const C3& c : convs) {
    for (int kind : {0, 1, 2, 3}) {
      const auto w = kind == 3 ? Positive(rng, count(c.w)) : Values(rng, count(c.w), 0);
      const std::vector<Init> inits = {{"W", c.w, w}, {"B", {c.w[0]}, Values(rng, c.w[0], kind >= 2 ? 3 : 0)}};
      CheckAgainstOracle(std::string("Conv 3-D ") + c.what + " kind " + std::to_string(kind), OneOp("Conv", c.x, inits, c.attrs), c.x,
                         Values(rng, count(c.x), kind));
    }
  }
  struct T { Shape x, w; std::vector<Attr> attrs; const char* what; };
  const T transposed[] = {
      {{2, 6, 13}, {6, 5, 4}, {Ints("strides", {3}), Ints("pads", {1, 2}), Ints("dilations", {2}), Ints("output_padding", {1})},
       "1-D stride 3 dilated"},
      {{2, 6, 9, 11}, {6, 4, 3, 3}, {Ints("strides", {2, 2}), Ints("pads", {1, 1, 1, 1})}, "3x3 stride 2 pad 1"},
      {{1, 4, 7, 6}, {4, 4, 3, 4}, {Int("group", 2), Ints("strides", {2, 3}), Ints("dilations", {1, 2}), Ints("pads", {0, 2, 1, 0})},
       "grouped, strides 2x3"},
      {{1, 5, 6, 7}, {5, 4, 3, 3}, {Ints("strides", {2, 2}), Ints("output_shape", {12, 15}), Str("auto_pad", "SAME_UPPER")},
       "SAME_UPPER with output_shape"},
      {{1, 5, 6, 7}, {5, 4, 1, 1}, {Ints("strides", {2, 2})}, "1x1 stride 2 (phases without taps)"},
      {{1, 4, 3, 4, 5}, {4, 6, 3, 3, 3}, {Ints("strides", {2, 2, 2}), Ints("pads", {1, 1, 1, 1, 1, 1})}, "3-D stride 2"},
      {{1, 8, 5, 6}, {8, 4, 3, 3}, {}, "stride 1"},
  };
  for (const T& t : transposed) {
    for (int kind : {0, 1, 2, 3}) {
      int64_t group = 1;
      for (const Attr& a : t.attrs) if (a.name == "group") group = a.ints[0];
      const int64_t M = t.w[1] * group;
      std::vector<Init> use = {{"W", t.w, kind == 3 ? Positive(rng, count(t.w)) : Values(rng, count(t.w), 0)}};
      if (kind < 2) use.push_back({"B", {M}, Values(rng, M, 0)});  // kinds 2, 3: no bias, so zero results keep their sign
      CheckAgainstOracle(std::string("ConvTranspose ") + t.what + " kind " + std::to_string(kind), OneOp("ConvTranspose", t.x, use, t.attrs),
                         t.x, Values(rng, count(t.x), kind));
    }
  }
}

TEST_CASE("exact paths: activations and data movement equal the oracle", "[exact_paths]") {
  SplitMix64 rng(404);
  const Shape xs{2, 3, 37, 41};
  const int64_t n = 2 * 3 * 37 * 41;
  for (int kind : {0, 1, 2}) {
    const auto x = Values(rng, n, kind, -8.0f, 8.0f);
    const std::string k = " kind " + std::to_string(kind);
    CheckAgainstOracle("Relu" + k, OneOp("Relu", xs, {}, {}), xs, x);
    CheckAgainstOracle("HardSwish" + k, OneOp("HardSwish", xs, {}, {}), xs, x);
    CheckAgainstOracle("Log" + k, OneOp("Log", xs, {}, {}), xs, x);
    for (const char* f : {"Atan", "Asin", "Acos", "Sinh", "Cosh", "Asinh", "Acosh", "Atanh"}) {
      CheckAgainstOracle(f + k, OneOp(f, xs, {}, {}), xs, x);
      CheckAgainstOracle(f + std::string(" of small values") + k, OneOp(f, xs, {}, {}), xs, Values(rng, n, kind, -1.5f, 1.5f));
    }
    for (const char* f : {"Sin", "Cos", "Tan"}) {
      CheckAgainstOracle(f + k, OneOp(f, xs, {}, {}), xs, x);
      CheckAgainstOracle(f + std::string(" of large values") + k, OneOp(f, xs, {}, {}), xs, Values(rng, n, kind, -3e5f, 3e5f));
    }
    CheckAgainstOracle("Pow by a scalar 2" + k, OneOp("Pow", xs, {{"P", {}, {2.0f}}}, {}), xs, x);
    CheckAgainstOracle("Pow by a broadcast row" + k, OneOp("Pow", xs, {{"P", {41}, Values(rng, 41, kind, -3.0f, 3.0f)}}, {}), xs, x);
    CheckAgainstOracle("Pow by an int64 3" + k, OneOp("Pow", xs, {{"P", {}, {3.0f}, true}}, {}), xs, x);
    CheckAgainstOracle("Pow of positives by a tensor" + k, OneOp("Pow", xs, {{"P", xs, Values(rng, n, kind, -4.0f, 4.0f)}}, {}), xs,
                       Positive(rng, n));
    CheckAgainstOracle("Elu" + k, OneOp("Elu", xs, {}, {Float("alpha", 0.7f)}), xs, x);
    CheckAgainstOracle("Selu" + k, OneOp("Selu", xs, {}, {}), xs, x);
    CheckAgainstOracle("Celu" + k, OneOp("Celu", xs, {}, {Float("alpha", 1.5f)}), xs, x);
    CheckAgainstOracle("LeakyRelu" + k, OneOp("LeakyRelu", xs, {}, {Float("alpha", 0.1f)}), xs, x);
    CheckAgainstOracle("ThresholdedRelu" + k, OneOp("ThresholdedRelu", xs, {}, {Float("alpha", 0.5f)}), xs, x);
    CheckAgainstOracle("Softsign" + k, OneOp("Softsign", xs, {}, {}), xs, x);
    CheckAgainstOracle("Softplus" + k, OneOp("Softplus", xs, {}, {}), xs, x);
    CheckAgainstOracle("Mish" + k, OneOp("Mish", xs, {}, {}), xs, x);
    CheckAgainstOracle("Gelu" + k, OneOp("Gelu", xs, {}, {}, 20), xs, x);
    CheckAgainstOracle("Gelu tanh" + k, OneOp("Gelu", xs, {}, {Str("approximate", "tanh")}, 20), xs, x);
    CheckAgainstOracle("HardSigmoid" + k, OneOp("HardSigmoid", xs, {}, {Float("alpha", 0.3f), Float("beta", 0.4f)}), xs, x);
    CheckAgainstOracle("Clip" + k, OneOp("Clip", xs, {{"lo", {}, {-0.0f}}, {"hi", {}, {6.0f}}}, {}), xs, x);
    CheckAgainstOracle("Transpose" + k, OneOp("Transpose", xs, {}, {Ints("perm", {0, 3, 1, 2})}), xs, x);
    CheckAgainstOracle("Transpose last axis kept" + k, OneOp("Transpose", xs, {}, {Ints("perm", {2, 0, 1, 3})}), xs, x);
    CheckAgainstOracle("Slice" + k,
                       OneOp("Slice", xs, {{"s", {3}, {1, -3, 30}, true}, {"e", {3}, {3, 2, 2}, true}, {"a", {3}, {1, 2, 3}, true},
                                           {"st", {3}, {1, -2, -3}, true}}, {}),
                       xs, x);
    CheckAgainstOracle("Log of positives" + k, OneOp("Log", xs, {}, {}), xs, Positive(rng, n));
    CheckAgainstOracle("Concat" + k, OneOp("Concat", xs, {{"C2", {2, 2, 37, 41}, Values(rng, 2 * 2 * 37 * 41, kind)}}, {Int("axis", 1)}), xs, x);
  }
}

TEST_CASE("exact paths: normalisations, softmax, functions and pooling equal the oracle", "[exact_paths]") {
  SplitMix64 rng(505);
  for (int kind : {0, 1, 2}) {
    const std::string k = " kind " + std::to_string(kind);
    const Shape xl{3, 17, 96};
    const auto x = Values(rng, 3 * 17 * 96, kind, -3.0f, 3.0f);
    CheckAgainstOracle("LayerNormalization" + k,
                       OneOp("LayerNormalization", xl, {{"S", {96}, Values(rng, 96, 0)}, {"B", {96}, Values(rng, 96, 0)}}, {Float("epsilon", 1e-5f)}),
                       xl, x);
    CheckAgainstOracle("LayerNormalization over two axes" + k,
                       OneOp("LayerNormalization", xl, {{"S", {17, 96}, Values(rng, 17 * 96, 0)}}, {Int("axis", 1)}), xl, x);
    CheckAgainstOracle("RMSNormalization" + k, OneOp("RMSNormalization", xl, {{"S", {96}, Values(rng, 96, 0)}}, {}, 23), xl, x);
    CheckAgainstOracle("Softmax" + k, OneOp("Softmax", xl, {}, {Int("axis", -1)}), xl, x);
    CheckAgainstOracle("Softmax middle axis" + k, OneOp("Softmax", xl, {}, {Int("axis", 1)}), xl, x);
    for (const char* f : {"Exp", "Tanh", "Sigmoid", "Erf"}) CheckAgainstOracle(std::string(f) + k, OneOp(f, xl, {}, {}), xl, x);
    const Shape xb{2, 5, 9, 11};
    const auto xbv = Values(rng, 2 * 5 * 99, kind);
    CheckAgainstOracle("BatchNormalization" + k,
                       OneOp("BatchNormalization", xb, {{"S", {5}, Values(rng, 5, 0)}, {"B", {5}, Values(rng, 5, 0)},
                                                        {"M", {5}, Values(rng, 5, 0)}, {"V", {5}, Positive(rng, 5)}}, {}),
                       xb, xbv);
    CheckAgainstOracle("GlobalAveragePool" + k, OneOp("GlobalAveragePool", xb, {}, {}), xb, xbv);
  }
}

TEST_CASE("an output too large to allocate is a typed error naming its node, at every ISA", "[exact_paths]") {
  const Shape xs{1, 1};
  const std::string bytes = OneOp("Expand", xs, {{"shape", {3}, {1048576.0f, 1048576.0f, 1048576.0f}, true}}, {});
  for (const std::string& isa : {std::string("ref"), std::string(IsaName(ActiveIsa()))}) {
    SessionOptions o;
    o.isa = isa;
    Session s = Session::FromBytes(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), o, "expand");
    std::vector<float> x(1, 1.0f);
    try {
      s.Run({{"X", Input(xs, x)}});
      FAIL("a 2^60-element output was allocated at " << isa);
    } catch (const Error& e) {
      INFO(e.what());
      CHECK(e.code() == ErrorCode::kOutOfRange);
      CHECK(std::string(e.what()).find("Expand node (output 'Y') output") != std::string::npos);
    }
  }
}

TEST_CASE("exact paths: Conv with a fused Relu or HardSwish equals the unfused oracle", "[exact_paths]") {
  SplitMix64 rng(606);
  // Conv -> Relu / HardSwish (fused at every ISA but ref) and, as a control, the same
  // with the Conv output also a graph output (not fused). Four convolutions: 3x3 with
  // padding from 4 channels (the direct kernel, the epilogue in its tiles) and from 8
  // (im2col and GEMM: the zero fix-up, then the epilogue), 1x1 (the epilogue in the GEMM
  // tiles) and depthwise (the epilogue in the channel-lane kernel). -0.0 inputs with positive
  // weights make zero results; a bias of -0.0 keeps their sign up to the activation.
  struct Cv { const char* name; Shape w; int64_t group; int64_t pad; };
  const Cv convs[] = {{"3x3", {8, 4, 3, 3}, 1, 1},
                      {"3x3 8 channels", {8, 8, 3, 3}, 1, 1},
                      {"1x1", {8, 4, 1, 1}, 1, 0},
                      {"depthwise", {4, 1, 3, 3}, 4, 1}};
  for (const Cv& cv : convs)
  for (const std::string act : {"Relu", "HardSwish"})
  for (bool also_output : {false, true})
    for (int kind : {0, 2, 3}) {
      const int64_t C = cv.w[1] * cv.group;
      const Shape xs{1, C, 11, 13};
      const int64_t nw = cv.w[0] * cv.w[1] * cv.w[2] * cv.w[3], M = cv.w[0];
      onnx::ModelProto m;
      REQUIRE(m.ParseFromString(OneOp("Conv", xs, {{"W", cv.w, kind >= 2 ? Positive(rng, nw) : Values(rng, nw, 0)},
                                                         {"B", {M}, std::vector<float>(size_t(M), kind == 3 ? -0.0f : 0.25f)}},
                                          {Ints("pads", {cv.pad, cv.pad, cv.pad, cv.pad}), Int("group", cv.group)})));
      auto* g = m.mutable_graph();
      g->mutable_node(0)->set_output(0, "C");
      auto* relu = g->add_node();
      relu->set_op_type(act);
      relu->add_input("C");
      relu->add_output("Y");
      if (also_output) g->add_output()->set_name("C");
      // Y first: CheckAgainstOracle compares the first output.
      CheckAgainstOracle(std::string("Conv ") + cv.name + "+" + act + (also_output ? " (Conv output kept)" : "") + " kind " +
                             std::to_string(kind),
                         m.SerializeAsString(), xs, Values(rng, C * 11 * 13, kind));
    }
}

TEST_CASE("exact paths: a fed weight replaces its initializer, never a tensor derived from it", "[exact_paths]") {
  // B is an initializer and also a graph input: runs without B use the initializer (and
  // the session keeps B transposed for the kernels); a run that feeds B must use the fed
  // values, and a later run without it the initializer again.
  SplitMix64 rng(707);
  const Shape as{2, 40};
  onnx::ModelProto m;
  REQUIRE(m.ParseFromString(OneOp("Gemm", as, {{"B", {30, 40}, Values(rng, 1200, 1)}}, {Int("transB", 1)})));
  auto* in = m.mutable_graph()->add_input();
  in->set_name("B");
  auto* tt = in->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(onnx::TensorProto::FLOAT);
  tt->mutable_shape()->add_dim()->set_dim_value(30);
  tt->mutable_shape()->add_dim()->set_dim_value(40);
  const std::string bytes = m.SerializeAsString();
  const auto x = Values(rng, 80, 1), fed = Values(rng, 1200, 1);
  auto session = [&](const std::string& isa) {
    SessionOptions o;
    o.isa = isa;
    return Session::FromBytes(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), o, "fed weight");
  };
  Session oracle = session("ref"), s = session(IsaName(ActiveIsa()));
  const Tensor want_init = oracle.Run({{"X", Input(as, x)}})[0].tensor;
  const Tensor want_fed = oracle.Run({{"X", Input(as, x)}, {"B", Input({30, 40}, fed)}})[0].tensor;
  REQUIRE(DiffF32(want_init.data<float>(), want_fed.data<float>(), 60) != "");  // the feed matters
  for (int r = 0; r < 2; ++r) {
    const Tensor a = s.Run({{"X", Input(as, x)}})[0].tensor;
    CHECK(DiffF32(want_init.data<float>(), a.data<float>(), 60) == "");
    const Tensor b = s.Run({{"X", Input(as, x)}, {"B", Input({30, 40}, fed)}})[0].tensor;
    CHECK(DiffF32(want_fed.data<float>(), b.data<float>(), 60) == "");
  }
}

namespace {
// A graph of float nodes over inputs X (shape xs) and, when ys is not empty, Y; scalar
// or vector initializers; every listed output is a graph output.
struct GNode { std::string op; std::vector<std::string> in; std::string out; std::vector<Attr> attrs = {}; };
std::string Graph(const Shape& xs, const Shape& ys, const std::vector<Init>& inits, const std::vector<GNode>& nodes,
                  const std::vector<std::string>& outputs, onnx::TensorProto::DataType type = onnx::TensorProto::FLOAT) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  auto* os = m.add_opset_import();
  os->set_domain("");
  os->set_version(19);
  auto* g = m.mutable_graph();
  g->set_name("chain");
  auto add_in = [&](const char* name, const Shape& sh) {
    auto* in = g->add_input();
    in->set_name(name);
    auto* tt = in->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(type);
    for (int64_t d : sh) tt->mutable_shape()->add_dim()->set_dim_value(d);
  };
  add_in("X", xs);
  if (!ys.empty()) add_in("Y", ys);
  for (const Init& i : inits) {
    auto* t = g->add_initializer();
    t->set_name(i.name);
    for (int64_t d : i.shape) t->add_dims(d);
    t->set_data_type(type);
    for (float v : i.data) {
      if (type == onnx::TensorProto::DOUBLE) t->add_double_data(double(v));
      else t->add_float_data(v);
    }
  }
  for (const GNode& n : nodes) {
    auto* node = g->add_node();
    node->set_op_type(n.op);
    node->set_name(n.out);
    for (const auto& in : n.in) node->add_input(in);
    node->add_output(n.out);
    for (const Attr& a : n.attrs) {
      auto* pa = node->add_attribute();
      pa->set_name(a.name);
      pa->set_type(onnx::AttributeProto::FLOAT);
      pa->set_f(a.f);
    }
  }
  for (const auto& o : outputs) g->add_output()->set_name(o);
  return m.SerializeAsString();
}

// Every output of the model at the ISA under test (1, 2, 3, 7 threads, three runs each)
// against the oracle's, bitwise (NaNs: any NaN).
void CheckAllOutputs(const std::string& what, const std::string& bytes, const std::map<std::string, Value>& feeds) {
  auto run = [&](const std::string& isa, int threads) {
    SessionOptions o;
    o.isa = isa;
    o.threads = threads;
    Session s = Session::FromBytes(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), o, what);
    std::vector<std::vector<Value>> runs;  // the third follows the memory plan
    for (int r = 0; r < 3; ++r) runs.push_back(s.Run(feeds));
    return runs;
  };
  const auto want = run("ref", 1)[0];
  for (int threads : {1, 2, 3, 7}) {
    const auto got = run(IsaName(ActiveIsa()), threads);
    for (const auto* outs : {&got[0], &got[1], &got[2]}) {
      REQUIRE(outs->size() == want.size());
      for (size_t o = 0; o < want.size(); ++o) {
        INFO(what << " output " << o << " at " << IsaName(ActiveIsa()) << ", " << threads << " threads");
        const Tensor& w = want[o].tensor;
        const Tensor& g = (*outs)[o].tensor;
        REQUIRE(g.shape() == w.shape());
        REQUIRE(g.dtype() == w.dtype());
        if (w.dtype() == DType::kFloat) CHECK(DiffF32(w.data<float>(), g.data<float>(), size_t(w.numel())) == "");
        else CHECK(std::memcmp(w.raw(), g.raw(), w.nbytes()) == 0);
      }
    }
  }
}
}  // namespace

TEST_CASE("exact paths: elementwise chains in one pass equal the unfused oracle", "[exact_paths]") {
  SplitMix64 rng(808);
  const Shape xs{3, 5000};  // several 2048-element chunks, a partial last one
  const auto x = Values(rng, 15000, 1, -6.0f, 6.0f), y = Values(rng, 15000, 2, -3.0f, 3.0f);
  const std::vector<Init> consts = {{"c2", {}, {1.41421356f}}, {"c1", {1}, {1.0f}}, {"ch", {1, 1}, {0.5f}}, {"cz", {}, {-0.0f}},
                                    {"v", {5000}, Values(rng, 5000, 0)}};
  // GELU as exported: x / sqrt2 -> Erf -> + 1 -> x * . -> * 0.5 (x read again, scalars of
  // rank 0 to 2).
  CheckAllOutputs("GELU chain",
                  Graph(xs, {}, consts,
                        {{"Div", {"X", "c2"}, "d"}, {"Erf", {"d"}, "e"}, {"Add", {"e", "c1"}, "a"}, {"Mul", {"X", "a"}, "m"},
                         {"Mul", {"m", "ch"}, "Z"}},
                        {"Z"}),
                  {{"X", Input(xs, x)}});
  // The running value on the right of Sub and Div, a second full input, every unary op,
  // HardSigmoid's attributes, a -0.0 scalar.
  CheckAllOutputs("mixed chain",
                  Graph(xs, xs, consts,
                        {{"Sub", {"c1", "X"}, "s"}, {"Tanh", {"s"}, "t"}, {"Div", {"Y", "t"}, "q"}, {"Sigmoid", {"q"}, "g"},
                         {"Exp", {"g"}, "e"}, {"Mul", {"e", "Y"}, "m"}, {"HardSigmoid", {"m"}, "h", {Float("alpha", 0.3f), Float("beta", 0.4f)}},
                         {"Add", {"h", "cz"}, "a"}, {"HardSwish", {"a"}, "w"}, {"Relu", {"w"}, "Z"}},
                        {"Z"}),
                  {{"X", Input(xs, x)}, {"Y", Input(xs, y)}});
  // A region whose values have several readers inside it (hardswish as x * clip(x + 3,
  // 0, 6) / 6 between scales), Clip with both bounds and with the lower one omitted.
  CheckAllOutputs("hardswish region",
                  Graph(xs, {}, {{"w", {}, {0.75f}}, {"b", {}, {-0.25f}}, {"three", {}, {3.0f}}, {"zero", {}, {0.0f}},
                                 {"six", {}, {6.0f}}},
                        {{"Mul", {"w", "X"}, "m"}, {"Add", {"m", "b"}, "a"}, {"Add", {"a", "three"}, "a3"},
                         {"Clip", {"a3", "zero", "six"}, "c"}, {"Mul", {"a", "c"}, "p"}, {"Div", {"p", "six"}, "h"},
                         {"Clip", {"h", "", "three"}, "q"}, {"Mul", {"w", "q"}, "r"}, {"Add", {"r", "b"}, "Z"}},
                        {"Z"}),
                  {{"X", Input(xs, x)}});
  // Row operands (the output's trailing dimensions, as a bias; with and without leading
  // ones), on either side, the chunks crossing rows: the fast path in pieces.
  CheckAllOutputs("chain with a bias row",
                  Graph(xs, {}, {consts[0], {"v", {5000}, Values(rng, 5000, 1)}, {"w", {1, 5000}, Values(rng, 5000, 0)}},
                        {{"Add", {"v", "X"}, "a"}, {"Erf", {"a"}, "e"}, {"Sub", {"e", "w"}, "s"}, {"Div", {"w", "s"}, "Z"}}, {"Z"}),
                  {{"X", Input(xs, x)}});
  // A column operand (not trailing dimensions): the body runs node by node.
  CheckAllOutputs("chain with a broadcast column",
                  Graph(xs, {}, {consts[0], {"col", {3, 1}, Values(rng, 3, 0)}},
                        {{"Add", {"X", "col"}, "a"}, {"Erf", {"a"}, "e"}, {"Mul", {"e", "c2"}, "Z"}}, {"Z"}),
                  {{"X", Input(xs, x)}});
  // An intermediate that is also a graph output, and one read twice: the chain stops
  // there and every output is still produced.
  CheckAllOutputs("chain cut by an output and a second reader",
                  Graph(xs, {}, consts,
                        {{"Mul", {"X", "c2"}, "m"}, {"Exp", {"m"}, "e"}, {"Tanh", {"e"}, "t"}, {"Add", {"t", "e"}, "a"},
                         {"Sigmoid", {"a"}, "s"}, {"Sub", {"s", "c1"}, "Z"}},
                        {"Z", "m"}),
                  {{"X", Input(xs, x)}});
}

TEST_CASE("exact paths: an elementwise chain on doubles runs its nodes one by one", "[exact_paths]") {
  SplitMix64 rng(809);
  const Shape xs{4, 100};
  const auto xv = Values(rng, 400, 1, -3.0f, 3.0f);
  Tensor t(DType::kDouble, xs);
  for (size_t i = 0; i < xv.size(); ++i) t.mutable_data<double>()[i] = double(xv[i]);
  CheckAllOutputs("double chain",
                  Graph(xs, {}, {{"c", {}, {0.75f}}}, {{"Mul", {"X", "c"}, "m"}, {"Exp", {"m"}, "e"}, {"Add", {"e", "c"}, "Z"}}, {"Z"},
                        onnx::TensorProto::DOUBLE),
                  {{"X", Value::FromTensor(t)}});
}

TEST_CASE("passes: elementwise chains form where every inner value has one reader", "[exact_paths][passes]") {
  const Shape xs{2, 8};
  const std::vector<Init> c = {{"c", {}, {2.0f}}};
  auto count = [&](const std::vector<GNode>& nodes, const std::vector<std::string>& outs, size_t* nodes_after) {
    const std::string b = Graph(xs, {}, c, nodes, outs);
    Model m = ImportModel(reinterpret_cast<const uint8_t*>(b.data()), b.size(), "chain", "");
    const int n = FuseElementwiseChains(*m.graph);
    *nodes_after = m.graph->nodes.size();
    return n;
  };
  size_t after = 0;
  // GELU: one chain of five.
  CHECK(count({{"Div", {"X", "c"}, "d"}, {"Erf", {"d"}, "e"}, {"Add", {"e", "c"}, "a"}, {"Mul", {"X", "a"}, "m"},
               {"Mul", {"m", "c"}, "Z"}},
              {"Z"}, &after) == 1);
  CHECK(after == 1);
  // m is a graph output, so Mul stays; e has two readers, both in the region, so
  // Exp -> Tanh -> Add -> Sigmoid -> Sub is one region.
  CHECK(count({{"Mul", {"X", "c"}, "m"}, {"Exp", {"m"}, "e"}, {"Tanh", {"e"}, "t"}, {"Add", {"t", "e"}, "a"},
               {"Sigmoid", {"a"}, "s"}, {"Sub", {"s", "c"}, "Z"}},
              {"Z", "m"}, &after) == 1);
  CHECK(after == 2);
  // A region with a value read twice inside it (x * clip(x + 3, 0, 6) / 6): one node.
  CHECK(count({{"Add", {"X", "c"}, "a"}, {"Clip", {"a", "c", "c"}, "k"}, {"Mul", {"a", "k"}, "m"}, {"Div", {"m", "c"}, "Z"}},
              {"Z"}, &after) == 1);
  CHECK(after == 1);
  // The same with the shared value also read after the region: Add stays outside.
  CHECK(count({{"Add", {"X", "c"}, "a"}, {"Clip", {"a", "c", "c"}, "k"}, {"Mul", {"a", "k"}, "m"}, {"Div", {"m", "c"}, "d"},
               {"Neg", {"d"}, "n"}, {"Add", {"n", "a"}, "Z"}},
              {"Z"}, &after) >= 1);
  CHECK(after == 4);
  // Not chainable ops break chains; a lone node is left as it is.
  CHECK(count({{"Exp", {"X"}, "e"}, {"Neg", {"e"}, "n"}, {"Exp", {"n"}, "Z"}}, {"Z"}, &after) == 0);
  CHECK(after == 3);
}

namespace {
// A graph over a float input X with typed initializers and nodes with any attributes
// (the integer operators' tests); every listed name is a graph output. Initializers
// named in `fed` are also graph inputs (a feed may replace them).
struct TInit { std::string name; onnx::TensorProto::DataType type; Shape shape; std::vector<double> data; };
struct TAttr { std::string name; int64_t i = 0; std::vector<int64_t> ints = {}; std::vector<float> floats = {}; std::string s = {}; int kind = 0; };
TAttr AF(std::string n, float v) { TAttr a; a.name = std::move(n); a.floats = {v}; a.kind = 3; return a; }
TAttr AI(std::string n, int64_t v) { TAttr a; a.name = std::move(n); a.i = v; a.kind = 0; return a; }
TAttr AInts(std::string n, std::vector<int64_t> v) { TAttr a; a.name = std::move(n); a.ints = std::move(v); a.kind = 1; return a; }
TAttr AS(std::string n, std::string v) { TAttr a; a.name = std::move(n); a.s = std::move(v); a.kind = 2; return a; }
struct TNode { std::string op; std::vector<std::string> in; std::vector<std::string> out; std::vector<TAttr> attrs = {}; };
std::string TypedGraph(const Shape& xs, const std::vector<TInit>& inits, const std::vector<TNode>& nodes,
                       const std::vector<std::string>& outputs, const std::vector<std::string>& fed = {}) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  auto* os = m.add_opset_import();
  os->set_domain("");
  os->set_version(21);
  auto* g = m.mutable_graph();
  g->set_name("typed");
  auto add_in = [&](const std::string& name, onnx::TensorProto::DataType t, const Shape& sh) {
    auto* in = g->add_input();
    in->set_name(name);
    auto* tt = in->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(t);
    for (int64_t d : sh) tt->mutable_shape()->add_dim()->set_dim_value(d);
  };
  add_in("X", onnx::TensorProto::FLOAT, xs);
  for (const TInit& i : inits) {
    for (const auto& f : fed) if (f == i.name) add_in(i.name, i.type, i.shape);
    auto* t = g->add_initializer();
    t->set_name(i.name);
    t->set_data_type(i.type);
    for (int64_t d : i.shape) t->add_dims(d);
    for (double v : i.data) {
      switch (i.type) {
        case onnx::TensorProto::FLOAT: t->add_float_data(float(v)); break;
        case onnx::TensorProto::INT64: t->add_int64_data(int64_t(v)); break;
        default: t->add_int32_data(int32_t(v)); break;  // 8-bit and int32 types
      }
    }
  }
  for (const TNode& n : nodes) {
    auto* node = g->add_node();
    node->set_op_type(n.op);
    node->set_name(n.out.empty() ? n.op : n.out[0]);
    for (const auto& in : n.in) node->add_input(in);
    for (const auto& o : n.out) node->add_output(o);
    for (const TAttr& a : n.attrs) {
      auto* pa = node->add_attribute();
      pa->set_name(a.name);
      if (a.kind == 0) { pa->set_type(onnx::AttributeProto::INT); pa->set_i(a.i); }
      else if (a.kind == 1) { pa->set_type(onnx::AttributeProto::INTS); for (int64_t v : a.ints) pa->add_ints(v); }
      else if (a.kind == 3) { pa->set_type(onnx::AttributeProto::FLOAT); pa->set_f(a.floats[0]); }
      else { pa->set_type(onnx::AttributeProto::STRING); pa->set_s(a.s); }
    }
  }
  for (const auto& o : outputs) g->add_output()->set_name(o);
  return m.SerializeAsString();
}
std::vector<double> Ints8(SplitMix64& rng, int64_t n, bool is_signed) {
  std::vector<double> v(static_cast<size_t>(n));
  for (double& x : v) x = is_signed ? double(int32_t(rng.NextU32() % 256) - 128) : double(rng.NextU32() % 256);
  return v;
}
std::vector<double> Floats(SplitMix64& rng, int64_t n, float lo, float hi) {
  std::vector<double> v(static_cast<size_t>(n));
  for (double& x : v) x = double(rng.Uniform(lo, hi));
  return v;
}
}  // namespace

TEST_CASE("exact paths: the integer operators equal the oracle", "[exact_paths]") {
  SplitMix64 rng(909);
  const auto U8 = onnx::TensorProto::UINT8, I8 = onnx::TensorProto::INT8, F = onnx::TensorProto::FLOAT;
  // Dynamic quantisation of a transformer's linear layer: DynamicQuantizeLinear, then
  // MatMulInteger against int8 or uint8 weights (scalar and per-column zero points, odd
  // K), Cast to float and the scales; the int32 product and the quantised X are outputs.
  for (bool w_signed : {true, false})
    for (bool per_col : {false, true})
      for (int kind : {0, 1}) {
        const int64_t K = 23, N = 19;
        const Shape xs{2, 37, K};
        const std::vector<TInit> inits = {
            {"W", w_signed ? I8 : U8, {K, N}, Ints8(rng, K * N, w_signed)},
            {"Wz", w_signed ? I8 : U8, per_col ? Shape{N} : Shape{}, per_col ? Ints8(rng, N, w_signed) : std::vector<double>{w_signed ? 3.0 : 130.0}},
            {"Ws", F, {}, {0.0125}}};
        const std::vector<TNode> nodes = {{"DynamicQuantizeLinear", {"X"}, {"Xq", "Xs", "Xz"}},
                                          {"MatMulInteger", {"Xq", "W", "Xz", "Wz"}, {"P"}},
                                          {"Cast", {"P"}, {"Pf"}, {AI("to", 1)}},
                                          {"Mul", {"Pf", "Xs"}, {"Q"}},
                                          {"Mul", {"Q", "Ws"}, {"Y"}}};
        CheckAllOutputs(std::string("dynamic quantised MatMul ") + (w_signed ? "int8" : "uint8") + (per_col ? " per column" : "") +
                            " kind " + std::to_string(kind),
                        TypedGraph(xs, inits, nodes, {"Y", "P", "Xq"}),
                        {{"X", Input(xs, Values(rng, 2 * 37 * K, kind, -3.0f, 5.0f))}});
      }
  // QDQ convolution: X quantised (per tensor) and dequantised, the weight dequantised per
  // output channel (constant: folded once per session), a float Conv with bias, then
  // quantised again (int8) and dequantised; also QuantizeLinear per axis.
  {
    const Shape xs{1, 6, 13, 15};
    const int64_t M = 8, Cg = 3;
    const std::vector<TInit> inits = {
        {"xs", F, {}, {0.05}}, {"xz", U8, {}, {128}}, {"W", I8, {M, Cg, 3, 3}, Ints8(rng, M * Cg * 9, true)},
        {"ws", F, {M}, Floats(rng, M, 0.001f, 0.02f)}, {"wz", I8, {M}, std::vector<double>(size_t(M), 0.0)},
        {"B", F, {M}, Floats(rng, M, -0.5f, 0.5f)}, {"ys", F, {}, {0.1}}, {"yz", I8, {}, {-3}},
        {"cs", F, {6}, Floats(rng, 6, 0.01f, 0.1f)}, {"cz", U8, {6}, Ints8(rng, 6, false)}};
    const std::vector<TNode> nodes = {
        {"QuantizeLinear", {"X", "xs", "xz"}, {"Xq"}},
        {"DequantizeLinear", {"Xq", "xs", "xz"}, {"Xd"}},
        {"DequantizeLinear", {"W", "ws", "wz"}, {"Wd"}, {AI("axis", 0)}},
        {"Conv", {"Xd", "Wd", "B"}, {"C"}, {AInts("pads", {1, 1, 1, 1}), AInts("strides", {2, 1}), AI("group", 2)}},
        {"QuantizeLinear", {"C", "ys", "yz"}, {"Cq"}},
        {"DequantizeLinear", {"Cq", "ys", "yz"}, {"Y"}},
        {"QuantizeLinear", {"X", "cs", "cz"}, {"Xc"}, {AI("axis", 1)}},
        {"DequantizeLinear", {"Xc", "cs", "cz"}, {"Xcd"}, {AI("axis", 1)}}};
    for (int kind : {0, 1})
      CheckAllOutputs("QDQ Conv kind " + std::to_string(kind), TypedGraph(xs, inits, nodes, {"Y", "Cq", "Xcd", "Xc"}),
                      {{"X", Input(xs, Values(rng, 6 * 13 * 15, kind, -8.0f, 8.0f))}});
  }
  // ConvInteger after dynamic quantisation: uint8 weights with per-channel zero points,
  // padding, stride, dilation, groups; 1-D too.
  for (int variant = 0; variant < 3; ++variant) {
    const Shape xs = variant == 2 ? Shape{2, 4, 29} : Shape{2, 4, 11, 12};
    const int64_t M = 6, Cg = variant == 1 ? 2 : 4, group = variant == 1 ? 2 : 1, ks = variant == 2 ? 1 : 3;
    const Shape wsh = variant == 2 ? Shape{M, Cg, 5} : Shape{M, Cg, 3, 3};
    const int64_t nw = M * Cg * (variant == 2 ? 5 : 9);
    (void)ks;
    const std::vector<TInit> inits = {{"W", U8, wsh, Ints8(rng, nw, false)}, {"Wz", U8, {M}, Ints8(rng, M, false)}};
    std::vector<TAttr> attrs = {AI("group", group)};
    if (variant == 0) { attrs.push_back(AInts("pads", {1, 2, 1, 0})); attrs.push_back(AInts("dilations", {1, 2})); }
    if (variant == 1) { attrs.push_back(AInts("pads", {1, 1, 1, 1})); attrs.push_back(AInts("strides", {2, 2})); }
    if (variant == 2) { attrs.push_back(AInts("pads", {2, 2})); attrs.push_back(AInts("strides", {2})); }
    const std::vector<TNode> nodes = {{"DynamicQuantizeLinear", {"X"}, {"Xq", "Xs", "Xz"}},
                                      {"ConvInteger", {"Xq", "W", "Xz", "Wz"}, {"P"}, attrs},
                                      {"Cast", {"P"}, {"Y"}, {AI("to", 1)}}};
    int64_t n = 1;
    for (int64_t d : xs) n *= d;
    CheckAllOutputs("ConvInteger variant " + std::to_string(variant), TypedGraph(xs, inits, nodes, {"Y", "P"}),
                    {{"X", Input(xs, Values(rng, n, 0, -2.0f, 2.0f))}});
  }
  // QLinearMatMul and QLinearConv between QuantizeLinear and DequantizeLinear.
  {
    const Shape xs{5, 33};
    const std::vector<TInit> inits = {{"as", F, {}, {0.02}}, {"az", U8, {}, {100}}, {"B", I8, {33, 21}, Ints8(rng, 33 * 21, true)},
                                      {"bs", F, {}, {0.01}}, {"bz", I8, {}, {2}}, {"ys", F, {}, {0.05}}, {"yz", U8, {}, {120}}};
    const std::vector<TNode> nodes = {{"QuantizeLinear", {"X", "as", "az"}, {"Xq"}},
                                      {"QLinearMatMul", {"Xq", "as", "az", "B", "bs", "bz", "ys", "yz"}, {"Yq"}},
                                      {"DequantizeLinear", {"Yq", "ys", "yz"}, {"Y"}}};
    CheckAllOutputs("QLinearMatMul", TypedGraph(xs, inits, nodes, {"Y", "Yq"}), {{"X", Input(xs, Values(rng, 5 * 33, 1, -2.0f, 2.0f))}});
    const Shape cs{1, 3, 10, 9};
    const std::vector<TInit> cinits = {{"as", F, {}, {0.02}}, {"az", U8, {}, {100}}, {"W", U8, {4, 3, 3, 3}, Ints8(rng, 108, false)},
                                       {"ws", F, {}, {0.01}}, {"wz", U8, {}, {128}}, {"ys", F, {}, {0.05}}, {"yz", U8, {}, {120}}};
    const std::vector<TNode> cnodes = {{"QuantizeLinear", {"X", "as", "az"}, {"Xq"}},
                                       {"QLinearConv", {"Xq", "as", "az", "W", "ws", "wz", "ys", "yz"}, {"Yq"}, {AInts("pads", {1, 1, 1, 1})}},
                                       {"DequantizeLinear", {"Yq", "ys", "yz"}, {"Y"}}};
    CheckAllOutputs("QLinearConv", TypedGraph(cs, cinits, cnodes, {"Y", "Yq"}), {{"X", Input(cs, Values(rng, 270, 0, -2.0f, 2.0f))}});
  }
}

TEST_CASE("exact paths: RNN, GRU and LSTM equal the oracle", "[exact_paths]") {
  SplitMix64 rng(939);
  const auto F = onnx::TensorProto::FLOAT, I32 = onnx::TensorProto::INT32;
  // Hidden and input sizes past a vector and a GEMV chunk's tile; both directions,
  // sequence lengths shorter than the sequence, batch-first layout, peepholes, clip,
  // GRU with and without linear_before_reset; inputs with specials.
  struct C { const char* op; int64_t G; const char* dir; int64_t layout; bool lbr; bool clip; bool lens; };
  const C cases[] = {{"LSTM", 4, "forward", 0, false, false, false},      {"LSTM", 4, "bidirectional", 0, false, true, true},
                     {"LSTM", 4, "reverse", 1, false, false, true},       {"GRU", 3, "forward", 0, false, false, false},
                     {"GRU", 3, "bidirectional", 1, true, false, true},   {"GRU", 3, "forward", 0, true, true, false},
                     {"RNN", 1, "bidirectional", 0, false, false, true}};
  const int64_t S = 7, Bt = 3, I = 21, H = 19;
  for (const C& c : cases)
    for (int kind : {0, 1}) {
      const int64_t D = std::string(c.dir) == "bidirectional" ? 2 : 1;
      const Shape xs = c.layout ? Shape{Bt, S, I} : Shape{S, Bt, I};
      std::vector<TInit> inits = {{"W", F, {D, c.G * H, I}, Floats(rng, D * c.G * H * I, -0.3f, 0.3f)},
                                  {"R", F, {D, c.G * H, H}, Floats(rng, D * c.G * H * H, -0.3f, 0.3f)},
                                  {"B", F, {D, 2 * c.G * H}, Floats(rng, D * 2 * c.G * H, -0.2f, 0.2f)},
                                  {"L", I32, {Bt}, c.lens ? std::vector<double>{7, 4, 1} : std::vector<double>{7, 7, 7}},
                                  {"H0", F, c.layout ? Shape{Bt, D, H} : Shape{D, Bt, H}, Floats(rng, D * Bt * H, -0.5f, 0.5f)}};
      std::vector<std::string> ins = {"X", "W", "R", "B", "L", "H0"};
      std::vector<std::string> outs = {"Y", "Yh"};
      if (c.G == 4) {
        inits.push_back({"C0", F, c.layout ? Shape{Bt, D, H} : Shape{D, Bt, H}, Floats(rng, D * Bt * H, -0.5f, 0.5f)});
        inits.push_back({"P", F, {D, 3 * H}, Floats(rng, D * 3 * H, -0.2f, 0.2f)});
        ins.push_back("C0");
        ins.push_back("P");
        outs.push_back("Yc");
      }
      std::vector<TAttr> attrs = {AI("hidden_size", H), AS("direction", c.dir), AI("layout", c.layout)};
      if (c.G == 3) attrs.push_back(AI("linear_before_reset", c.lbr ? 1 : 0));
      if (c.clip) attrs.push_back(AF("clip", 0.75f));
      CheckAllOutputs(std::string(c.op) + " " + c.dir + " layout " + std::to_string(c.layout) + (c.lbr ? " lbr" : "") +
                          (c.clip ? " clip" : "") + (c.lens ? " lens" : "") + " kind " + std::to_string(kind),
                      TypedGraph(xs, inits, {{c.op, ins, outs, attrs}}, outs),
                      {{"X", Input(xs, Values(rng, S * Bt * I, kind, -2.0f, 2.0f))}});
    }
}

TEST_CASE("exact paths: Resize linear and cubic equal the oracle", "[exact_paths]") {
  SplitMix64 rng(919);
  const auto F = onnx::TensorProto::FLOAT, I64 = onnx::TensorProto::INT64;
  const Shape xs{2, 3, 9, 11};
  struct R { const char* mode; const char* coord; std::vector<double> sizes; };
  const R cases[] = {{"linear", "half_pixel", {2, 3, 18, 22}},  {"linear", "align_corners", {2, 3, 17, 30}},
                     {"linear", "asymmetric", {2, 3, 5, 7}},    {"cubic", "half_pixel", {2, 3, 20, 13}},
                     {"linear", "pytorch_half_pixel", {2, 3, 1, 11}}, {"linear", "half_pixel", {2, 2, 18, 22}}};
  for (const R& c : cases)
    for (int kind : {0, 1, 2}) {
      const std::vector<TInit> inits = {{"sizes", I64, {4}, c.sizes}};
      const std::vector<TNode> nodes = {{"Resize", {"X", "", "", "sizes"}, {"Y"}, {AS("mode", c.mode), AS("coordinate_transformation_mode", c.coord)}}};
      (void)F;
      CheckAllOutputs(std::string("Resize ") + c.mode + " " + c.coord + " kind " + std::to_string(kind),
                      TypedGraph(xs, inits, nodes, {"Y"}), {{"X", Input(xs, Values(rng, 2 * 3 * 9 * 11, kind, -4.0f, 4.0f))}});
    }
}

TEST_CASE("passes: constant folding runs constant nodes once and never folds what a feed can replace", "[exact_paths][passes]") {
  SplitMix64 rng(929);
  const auto I8 = onnx::TensorProto::INT8, F = onnx::TensorProto::FLOAT;
  const Shape xs{4, 10};
  const auto w = Ints8(rng, 40, true), w2 = Ints8(rng, 40, true);
  const std::vector<TInit> inits = {{"W", I8, {10, 4}, w}, {"ws", F, {}, {0.03}}, {"F", I8, {10, 4}, w2}};
  // Wd = DequantizeLinear(W) is constant (folded); Fd = DequantizeLinear(F) is not: F is
  // also a graph input, so a feed may replace it.
  const std::vector<TNode> nodes = {{"DequantizeLinear", {"W", "ws"}, {"Wd"}},
                                    {"DequantizeLinear", {"F", "ws"}, {"Fd"}},
                                    {"MatMul", {"X", "Wd"}, {"A"}},
                                    {"MatMul", {"X", "Fd"}, {"B"}},
                                    {"Add", {"A", "B"}, {"Y"}}};
  const std::string bytes = TypedGraph(xs, inits, nodes, {"Y"}, {"F"});
  const Value x = Input(xs, Values(rng, 40, 0));
  CheckAllOutputs("folded and fed dequantisation", bytes, {{"X", x}});
  // Feeding F must change the result exactly as the oracle's does.
  Tensor f(DType::kInt8, Shape{10, 4});
  for (int64_t i = 0; i < 40; ++i) f.mutable_data<int8_t>()[i] = int8_t(int(i) - 20);
  CheckAllOutputs("fed F", bytes, {{"X", x}, {"F", Value::FromTensor(f)}});
  // The pass itself: one DequantizeLinear folded, the other kept.
  Model model = ImportModel(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), "folding", "");
  onemodel::impl::Graph g = *model.graph;
  CHECK(FoldConstants(g, model.opsets) == 1);
  CHECK(g.nodes.size() == 4);
  CHECK(g.initializers.count("Wd") == 1);
  CHECK(g.initializers.count("Fd") == 0);
}

namespace {
// X [N, 64] -> MatMul -> Relu -> MatMul -> Tanh -> Add X -> Sigmoid: intermediates of one
// size whose lifetimes chain, so a plan shares their bytes. N is symbolic.
std::string PlanGraph(SplitMix64& rng) {
  const auto F = onnx::TensorProto::FLOAT;
  const std::vector<TInit> inits = {{"W1", F, {64, 64}, Floats(rng, 64 * 64, -0.2f, 0.2f)},
                                    {"W2", F, {64, 64}, Floats(rng, 64 * 64, -0.2f, 0.2f)}};
  const std::vector<TNode> nodes = {{"MatMul", {"X", "W1"}, {"a"}}, {"Relu", {"a"}, {"b"}},
                                    {"MatMul", {"b", "W2"}, {"c"}}, {"Tanh", {"c"}, {"d"}},
                                    {"Add", {"d", "X"}, {"e"}},     {"Sigmoid", {"e"}, {"Y"}}};
  onnx::ModelProto m;
  m.ParseFromString(TypedGraph({1, 64}, inits, nodes, {"Y"}));
  m.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(0)->set_dim_param("N");
  return m.SerializeAsString();
}
Tensor Oracle(const std::string& bytes, const Value& x) {
  SessionOptions o;
  o.isa = "ref";
  o.threads = 1;
  return Session::FromBytes(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), o, "plan").Run({{"X", x}})[0].tensor;
}
}  // namespace

TEST_CASE("memory plan: steady runs take every intermediate from one shared arena, same bits", "[exact_paths][memory_plan]") {
  SplitMix64 rng(1201);
  const std::string bytes = PlanGraph(rng);
  const Value x = Input({300, 64}, Values(rng, 300 * 64, 1)), x2 = Input({7, 64}, Values(rng, 7 * 64, 0));
  const Tensor want = Oracle(bytes, x), want2 = Oracle(bytes, x2);
  for (int threads : {1, 3}) {
    SessionOptions o;
    o.threads = threads;
    Session s = Session::FromBytes(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), o, "plan");
    std::vector<Tensor> kept;  // outputs the caller keeps while later runs reuse the arena
    for (int r = 0; r < 5; ++r) {
      kept.push_back(s.Run({{"X", x}})[0].tensor);
      const MemoryPlanStats st = s.memory_plan_stats();
      INFO(threads << " threads, run " << r + 1);
      CHECK(st.runs == uint64_t(r + 1));
      if (r >= 2) {
        // Run 1 recorded (with the weights' packing), run 2 made the steady plan.
        CHECK(st.last_replayed);
        CHECK(st.plans_built == 2);
        CHECK(st.planned_buffers >= 2);
        CHECK(st.last_from_arena == st.planned_buffers);
        CHECK(st.last_elsewhere == 1);  // the output, which outlives the run
        // [300, 64] intermediates (after fusion at least two), at most two alive at a time.
        CHECK(st.arena_bytes <= 2 * 300 * 64 * 4 + 128);
        CHECK(st.arena_bytes < st.planned_bytes);
      }
    }
    for (size_t r = 0; r < kept.size(); ++r) {
      INFO(threads << " threads, output kept from run " << r + 1);
      REQUIRE(kept[r].shape() == want.shape());
      CHECK(DiffF32(want.data<float>(), kept[r].data<float>(), size_t(want.numel())) == "");
    }
    // Other shapes make another plan; returning makes the first again; bits stay.
    const uint64_t built = s.memory_plan_stats().plans_built;
    for (int r = 0; r < 3; ++r) {
      const Tensor y = s.Run({{"X", x2}})[0].tensor;
      CHECK(DiffF32(want2.data<float>(), y.data<float>(), size_t(want2.numel())) == "");
    }
    CHECK(s.memory_plan_stats().plans_built == built + 1);
    CHECK(s.memory_plan_stats().last_replayed);
    const Tensor y = s.Run({{"X", x}})[0].tensor;
    CHECK(DiffF32(want.data<float>(), y.data<float>(), size_t(want.numel())) == "");
    CHECK(s.memory_plan_stats().plans_built == built + 2);
  }
}

// Native only: the wasm builds have no threads (std::thread cannot start there).
TEST_CASE("memory plan: concurrent runs of one session give the oracle's bits", "[exact_paths][memory_plan][native_only]") {
  SplitMix64 rng(1202);
  const std::string bytes = PlanGraph(rng);
  const Value x = Input({200, 64}, Values(rng, 200 * 64, 1));
  const Tensor want = Oracle(bytes, x);
  SessionOptions o;
  o.threads = 2;
  Session s = Session::FromBytes(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), o, "plan");
  std::vector<std::string> diffs(3);
  std::vector<std::thread> callers;
  for (int c = 0; c < 3; ++c) {
    callers.emplace_back([&, c] {
      for (int r = 0; r < 6; ++r) {
        const Tensor y = s.Run({{"X", x}})[0].tensor;
        const std::string d = DiffF32(want.data<float>(), y.data<float>(), size_t(want.numel()));
        if (!d.empty()) diffs[size_t(c)] = d;
      }
    });
  }
  for (auto& t : callers) t.join();
  for (const auto& d : diffs) CHECK(d == "");
  CHECK(s.memory_plan_stats().runs >= 1);
}

namespace {
// A network of the operators that keep prepared state (Conv with its fused Relu,
// MaxPool, ConvTranspose, Resize with fed scales, an elementwise chain, Softmax) and the
// small shape and layout operators of the reference models (Shape, Gather, Unsqueeze,
// Concat, Reshape, Transpose, MatMul, LayerNormalization). X is [1, 3, H, W] with H and
// W free; S holds Resize's scales (fed, so their values may change from run to run).
std::string SteadyGraph(SplitMix64& rng) {
  const auto F = onnx::TensorProto::FLOAT, I64 = onnx::TensorProto::INT64;
  const std::vector<TInit> inits = {
      {"W1", F, {8, 3, 3, 3}, Floats(rng, 8 * 27, -0.5f, 0.5f)}, {"B1", F, {8}, Floats(rng, 8, -0.1f, 0.1f)},
      {"Wt", F, {8, 4, 2, 2}, Floats(rng, 8 * 16, -0.5f, 0.5f)}, {"S", F, {4}, {1.0, 1.0, 0.5, 0.5}},
      {"K", F, {}, {0.75}}, {"K2", F, {}, {-0.25}}, {"Wm", F, {4, 16}, Floats(rng, 64, -0.5f, 0.5f)},
      {"Ls", F, {16}, Floats(rng, 16, 0.5f, 1.5f)}, {"Lb", F, {16}, Floats(rng, 16, -0.1f, 0.1f)},
      {"i0", I64, {}, {0}}, {"four", I64, {1}, {4}}, {"minus1", I64, {1}, {-1}}, {"ax0", I64, {1}, {0}}};
  const std::vector<TNode> nodes = {
      {"Conv", {"X", "W1", "B1"}, {"c"}, {AInts("pads", {1, 1, 1, 1})}},
      {"Relu", {"c"}, {"cr"}},
      {"MaxPool", {"cr"}, {"p"}, {AInts("kernel_shape", {3, 3}), AInts("strides", {2, 2}), AInts("pads", {1, 1, 1, 1})}},
      {"ConvTranspose", {"p", "Wt"}, {"t"}, {AInts("strides", {2, 2})}},
      {"Resize", {"t", "", "S"}, {"r"}, {AS("mode", "linear")}},
      {"Mul", {"r", "K"}, {"m"}}, {"Add", {"m", "K2"}, {"a"}}, {"Tanh", {"a"}, {"e"}},
      {"Shape", {"e"}, {"sh"}}, {"Gather", {"sh", "i0"}, {"n"}}, {"Unsqueeze", {"n", "ax0"}, {"n1"}},
      {"Concat", {"n1", "four", "minus1"}, {"shape3"}, {AI("axis", 0)}},
      {"Reshape", {"e", "shape3"}, {"f"}},
      {"Transpose", {"f"}, {"ft"}, {AInts("perm", {0, 2, 1})}},
      {"MatMul", {"ft", "Wm"}, {"mm"}},
      {"LayerNormalization", {"mm", "Ls", "Lb"}, {"ln"}, {AI("axis", -1)}},
      {"Softmax", {"ln"}, {"Y"}, {AI("axis", -1)}}};
  onnx::ModelProto m;
  m.ParseFromString(TypedGraph({1, 3, 16, 16}, inits, nodes, {"Y"}, {"S"}));
  auto* dims = m.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape();
  dims->mutable_dim(2)->set_dim_param("H");
  dims->mutable_dim(3)->set_dim_param("W");
  return m.SerializeAsString();
}
}  // namespace

TEST_CASE("prepared state: changing shapes and shape-deciding values give a fresh session's bits", "[exact_paths]") {
  // What operators keep between runs (OpContext::Prepared: geometry, coordinate tables,
  // compiled chains) is remade when an input shape or a value that decides shapes
  // (Resize's scales) changes: each run equals a fresh session at ISA ref.
  SplitMix64 rng(1301);
  const std::string bytes = SteadyGraph(rng);
  struct Case { int64_t h, w; std::vector<float> scales; };
  const std::vector<Case> cases = {{16, 16, {1, 1, 0.5f, 0.5f}}, {12, 20, {1, 1, 0.5f, 0.5f}}, {16, 16, {1, 1, 0.75f, 0.25f}},
                                   {16, 16, {1, 1, 0.5f, 0.5f}}, {9, 7, {1, 1, 1.0f, 0.5f}},    {16, 16, {1, 1, 0.5f, 0.5f}}};
  std::vector<Value> xs, ss;
  std::vector<Tensor> want;
  for (const Case& c : cases) {
    xs.push_back(Input({1, 3, c.h, c.w}, Values(rng, 3 * c.h * c.w, 0)));
    ss.push_back(Input({4}, c.scales));
    SessionOptions o;
    o.isa = "ref";
    o.threads = 1;
    Session fresh = Session::FromBytes(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), o, "steady");
    want.push_back(fresh.Run({{"X", xs.back()}, {"S", ss.back()}})[0].tensor);
  }
  for (int threads : {1, 3}) {
    SessionOptions o;
    o.isa = IsaName(ActiveIsa());
    o.threads = threads;
    Session s = Session::FromBytes(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), o, "steady");
    for (int pass = 0; pass < 2; ++pass)
      for (size_t i = 0; i < cases.size(); ++i) {
        INFO(threads << " threads, pass " << pass + 1 << ", case " << i + 1);
        const Tensor y = s.Run({{"X", xs[i]}, {"S", ss[i]}})[0].tensor;
        REQUIRE(y.shape() == want[i].shape());
        CHECK(DiffF32(want[i].data<float>(), y.data<float>(), size_t(y.numel())) == "");
      }
  }
}

TEST_CASE("steady state: a run takes from the heap only what it returns", "[exact_paths][memory_plan][allocs]") {
  // After the first runs (plans, prepared state, packed weights), a run of the same
  // shapes allocates the returned vector and the output's buffer and reference count,
  // nothing else (counted by the test binary's operator new, every thread). With a
  // vector kernel table (every row of the suite; the oracle, ISA ref, keeps its plain
  // loops, which may allocate).
  SplitMix64 rng(1302);
  const std::string bytes = SteadyGraph(rng);
  const Value x = Input({1, 3, 16, 16}, Values(rng, 3 * 256, 0)), sc = Input({4}, {1, 1, 0.5f, 0.5f});
  const std::map<std::string, Value> feeds = {{"X", x}, {"S", sc}};
  // The returned vector, the output's buffer (under 64 KiB: not recycled) and its
  // shared_ptr control block.
  constexpr long kPerRun = 3;
  auto session = [&](int threads) {
    SessionOptions o;
    o.isa = IsaName(ActiveIsa());
    o.threads = threads;
    return Session::FromBytes(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), o, "steady");
  };
  {
    // One thread: every chunk runs on the caller, so each run is exactly the same.
    Session s = session(1);
    for (int r = 0; r < 4; ++r) s.Run(feeds);
    for (int r = 0; r < 3; ++r) {
      StartCountingAllocations();
      std::vector<Value> out = s.Run(feeds);
      const long n = StopCountingAllocations();
      INFO("1 thread, steady run " << r + 1);
      CHECK(s.memory_plan_stats().last_replayed);
      CHECK(n <= kPerRun);
    }
  }
#ifndef __EMSCRIPTEN__
  {
    // Three threads: chunks go to whichever thread takes them, so a thread's scratch
    // buffer (ElementwiseChain's, LayerNormalization's) may grow the first time it
    // takes a chunk of some operator (the GEMM kernel's packing buffers too), however
    // many runs that takes; that growth is once per thread and buffer (a few times for
    // a buffer that grows in steps), bounded here by kGrowth, and kRuns is larger, so
    // one allocation more on every run would exceed the bound.
    constexpr int kRuns = 100;
    constexpr long kGrowth = 64;
    Session s = session(3);
    for (int r = 0; r < 4; ++r) s.Run(feeds);
    long total = 0;
    for (int r = 0; r < kRuns; ++r) {
      StartCountingAllocations();
      std::vector<Value> out = s.Run(feeds);
      total += StopCountingAllocations();
    }
    INFO("3 threads, " << kRuns << " steady runs");
    CHECK(s.memory_plan_stats().last_replayed);
    CHECK(total <= kRuns * kPerRun + kGrowth);
  }
#endif
}

TEST_CASE("exact paths: binary64 Exp and Log (MathF64) equal the oracle", "[exact_paths]") {
  // X (float, specials included) cast to binary64, then Exp, Log and Exp of a scaled
  // copy (large arguments: overflow and underflow), the binary64 outputs compared byte
  // for byte with ISA ref at 1 and 3 threads.
  SplitMix64 rng(1303);
  const auto F = onnx::TensorProto::FLOAT;
  const std::vector<TInit> inits = {{"k", F, {}, {300.0}}};
  const std::vector<TNode> nodes = {{"Cast", {"X"}, {"xd"}, {AI("to", 11)}},
                                    {"Exp", {"xd"}, {"E"}},
                                    {"Log", {"xd"}, {"L"}},
                                    {"Mul", {"X", "k"}, {"xk"}},
                                    {"Cast", {"xk"}, {"xkd"}, {AI("to", 11)}},
                                    {"Exp", {"xkd"}, {"EK"}}};
  const Shape xs{5, 1037};
  const std::string bytes = TypedGraph(xs, inits, nodes, {"E", "L", "EK"});
  const Value x = Input(xs, Values(rng, 5 * 1037, 1, -4.0f, 4.0f));
  auto run = [&](const std::string& isa, int threads) {
    SessionOptions o;
    o.isa = isa;
    o.threads = threads;
    Session s = Session::FromBytes(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), o, "f64");
    s.Run({{"X", x}});
    return s.Run({{"X", x}});
  };
  const std::vector<Value> want = run("ref", 1);
  for (int threads : {1, 3}) {
    const std::vector<Value> got = run(IsaName(ActiveIsa()), threads);
    REQUIRE(got.size() == want.size());
    for (size_t k = 0; k < want.size(); ++k) {
      INFO(IsaName(ActiveIsa()) << ", " << threads << " threads, output " << k);
      REQUIRE(got[k].tensor.dtype() == DType::kDouble);
      REQUIRE(got[k].tensor.shape() == want[k].tensor.shape());
      CHECK(DiffBytes(static_cast<const uint8_t*>(want[k].tensor.raw()), static_cast<const uint8_t*>(got[k].tensor.raw()),
                      size_t(want[k].tensor.numel()), 8) == "");
    }
  }
}

TEST_CASE("memory plan: a slice still held is never handed out again", "[memory_plan]") {
  // Run 1: A and B (same size) live one after the other, so the plan gives them one
  // slice. Run 2 keeps A while B is allocated: B must come from elsewhere, A's bytes stay.
  MemoryPlanner planner(true);
  {
    std::optional<MemoryPlanner::RunScope> run;
    REQUIRE(planner.Begin("k", &run));
    { Tensor a = Tensor::Uninitialized(DType::kFloat, {256}); }
    { Tensor b = Tensor::Uninitialized(DType::kFloat, {256}); }
    run->Finish();
  }
  CHECK(planner.stats().planned_buffers == 2);
  CHECK(planner.stats().arena_bytes == 1024);
  {
    std::optional<MemoryPlanner::RunScope> run;
    REQUIRE(planner.Begin("k", &run));
    {
      Tensor a(DType::kFloat, {256});
      a.mutable_data<float>()[0] = 42.0f;
      Tensor b = Tensor::Uninitialized(DType::kFloat, {256});
      CHECK(b.raw() != a.raw());
      b.mutable_data<float>()[0] = -1.0f;
      CHECK(a.data<float>()[0] == 42.0f);
    }
    run->Finish();
  }
  CHECK(!planner.stats().last_replayed);
  CHECK(planner.stats().last_from_arena == 1);
  CHECK(planner.stats().last_elsewhere == 1);
  // The run that left the plan made a new one (A and B alive together: two slices).
  CHECK(planner.stats().plans_built == 2);
  CHECK(planner.stats().arena_bytes == 2048);
}

TEST_CASE("exact paths: Transpose, Gather, Where and Pad move the oracle's bits", "[exact_paths]") {
  SplitMix64 rng(1401);
  const Shape xs{2, 3, 37, 41};
  const int64_t n = 2 * 3 * 37 * 41;
  const auto x = Values(rng, n, 1, -8.0f, 8.0f);
  // Transposes whose last axis changes (the tiled kernel), and a plain 2-D one.
  const std::vector<std::vector<int64_t>> perms = {{0, 2, 3, 1}, {3, 2, 1, 0}, {1, 3, 0, 2}, {0, 1, 3, 2}};
  for (const auto& perm : perms) {
    CheckAgainstOracle("Transpose " + std::to_string(perm[0]) + std::to_string(perm[1]) + std::to_string(perm[2]) + std::to_string(perm[3]),
                       OneOp("Transpose", xs, {}, {Ints("perm", perm)}), xs, x);
  }
  const Shape x2{67, 130};
  CheckAgainstOracle("Transpose 2-D", OneOp("Transpose", x2, {}, {}), x2, Values(rng, 67 * 130, 1));
  // Gather on every axis: negative and repeated indices, a 2-D index tensor.
  for (int64_t axis = 0; axis < 4; ++axis) {
    const float d = float(xs[size_t(axis)]);
    CheckAgainstOracle("Gather axis " + std::to_string(axis),
                       OneOp("Gather", xs, {{"I", {5}, {0.0f, d - 1, -1.0f, 1.0f, 0.0f}, true}}, {Int("axis", axis)}), xs, x);
    CheckAgainstOracle("Gather 2-D indices axis " + std::to_string(axis),
                       OneOp("Gather", xs, {{"I", {2, 2}, {1.0f, -2.0f, 0.0f, d - 1}, true}}, {Int("axis", axis)}), xs, x);
  }
  // Pad in every mode, pads growing and cropping several axes; the constant given.
  const std::vector<std::vector<float>> pads = {{0, 1, 2, 3, 1, 0, 3, 2}, {0, 0, -2, 5, 0, 1, 3, -4}, {1, 0, 0, 0, 0, 0, 0, 0}};
  for (const char* mode : {"constant", "edge", "reflect", "wrap"}) {
    for (size_t i = 0; i < pads.size(); ++i) {
      std::vector<Init> ins = {{"P", {8}, pads[i], true}};
      if (std::string(mode) == "constant") ins.push_back({"V", {}, {2.5f}});
      CheckAgainstOracle(std::string("Pad ") + mode + " " + std::to_string(i), OneOp("Pad", xs, ins, {Str("mode", mode)}), xs, x);
    }
  }
  CheckAgainstOracle("Pad constant without a value", OneOp("Pad", xs, {{"P", {8}, pads[0], true}}, {}), xs, x);
  // Where with broadcasting (a condition [3, 1, 41], another operand [37, 1]), on floats
  // and on int64.
  const auto B = onnx::TensorProto::BOOL, F = onnx::TensorProto::FLOAT, I64 = onnx::TensorProto::INT64;
  std::vector<double> cond(3 * 41);
  for (double& c : cond) c = double(rng.NextU32() % 2);
  const std::vector<double> yb = Floats(rng, 37, -3.0f, 3.0f);
  std::vector<double> i1(37 * 41), i2(41);
  for (double& v : i1) v = double(int32_t(rng.NextU32() % 20000) - 10000);
  for (double& v : i2) v = double(int32_t(rng.NextU32() % 100));
  const std::string where = TypedGraph(xs, {{"C", B, {3, 1, 41}, cond}, {"Yb", F, {37, 1}, yb}, {"I1", I64, {37, 41}, i1}, {"I2", I64, {41}, i2}},
                                       {{"Where", {"C", "X", "Yb"}, {"Y"}}, {"Where", {"C", "I1", "I2"}, {"Z"}}}, {"Y", "Z"});
  CheckAllOutputs("Where broadcast", where, {{"X", Input(xs, x)}});
}

TEST_CASE("exact paths: Attention through two GEMMs per head equals the oracle", "[exact_paths]") {
  SplitMix64 rng(1501);
  const auto F = onnx::TensorProto::FLOAT, B = onnx::TensorProto::BOOL;
  // Grouped heads (4 query heads on 2 key/value heads), lengths off the tile sizes.
  const Shape qs{2, 4, 37, 24};
  const int64_t nq = 2 * 4 * 37 * 24;
  std::vector<double> mask(37 * 45);
  for (size_t i = 0; i < mask.size(); ++i) mask[i] = (i % 7 == 3) ? 0.0 : 1.0;
  for (size_t j = 0; j < 45; ++j) mask[5 * 45 + j] = 0.0;  // one fully masked row
  struct Variant { const char* what; std::vector<TAttr> attrs; bool with_mask; };
  const Variant variants[] = {
      {"plain", {}, false},
      {"bool mask, causal, qk output after the bias", {AI("is_causal", 1), AI("qk_matmul_output_mode", 2)}, true},
      {"softcap and scale, softmax output", {AF("softcap", 4.0f), AF("scale", 0.3f), AI("qk_matmul_output_mode", 3)}, true},
      {"window", {AI("left_window_size", 5), AI("right_window_size", 3)}, false},
  };
  for (const Variant& v : variants) {
    for (int kind : {0, 1}) {
      std::vector<TInit> inits = {{"K", F, {2, 2, 45, 24}, Floats(rng, 2 * 2 * 45 * 24, -2.0f, 2.0f)},
                                  {"V", F, {2, 2, 45, 20}, Floats(rng, 2 * 2 * 45 * 20, -1.0f, 1.0f)}};
      std::vector<std::string> in = {"X", "K", "V"};
      if (v.with_mask) {
        inits.push_back({"M", B, {37, 45}, mask});
        in.push_back("M");
      }
      onnx::ModelProto m;
      m.ParseFromString(TypedGraph(qs, inits, {{"Attention", in, {"Y", "", "", "QK"}, v.attrs}}, {"Y", "QK"}));
      m.mutable_opset_import(0)->set_version(23);
      CheckAllOutputs(std::string("Attention ") + v.what + " kind " + std::to_string(kind), m.SerializeAsString(),
                      {{"X", Input(qs, Values(rng, nq, kind, -2.0f, 2.0f))}});
    }
  }
  // 3-D inputs [batch, sequence, heads * size].
  const Shape q3{1, 19, 48};
  onnx::ModelProto m;
  m.ParseFromString(TypedGraph(q3, {{"K", F, {1, 23, 48}, Floats(rng, 23 * 48, -2.0f, 2.0f)}, {"V", F, {1, 23, 32}, Floats(rng, 23 * 32, -1.0f, 1.0f)}},
                               {{"Attention", {"X", "K", "V"}, {"Y"}, {AI("q_num_heads", 4), AI("kv_num_heads", 4)}}}, {"Y"}));
  m.mutable_opset_import(0)->set_version(23);
  CheckAllOutputs("Attention 3-D", m.SerializeAsString(), {{"X", Input(q3, Values(rng, 19 * 48, 0, -2.0f, 2.0f))}});
}

}  // namespace test
}  // namespace onemodel::impl
