// Elementwise operators: broadcast arithmetic (BinaryF32), the activations and functions (UnaryF32,
// MathF32, MathF64), Pow, Clip, and data movement met on the way.
#include "tests/catch.h"

#include <string>
#include <vector>

#include "tests/ops/op_test.h"
#include "tests/test_util.h"

namespace onemodel::impl {
namespace test {
namespace {

std::vector<OpCase> ElementwiseCases() {
  std::vector<OpCase> cases;
  {
    SplitMix64 rng(306);
    struct B {
      Shape x, y;
    };
    // The last three: one run longer than 32K elements (same shapes, or one operand a
    // single value on either side), cut into pieces of 16K over the threads.
    const B bs[] = {{{2, 3, 4, 5}, {3, 1, 1}}, {{2, 3, 4, 5}, {4, 5}}, {{2, 1, 5}, {1, 4, 1}},
                    {{7, 300}, {1}},           {{1}, {6, 40}},         {{2, 3, 4, 5}, {2, 3, 4, 5}},
                    {{3, 23457}, {3, 23457}},  {{70001}, {1}},         {{1}, {2, 40001}}};
    for (const B& b : bs) {
      int64_t nx = 1, ny = 1;
      for (int64_t d : b.x) nx *= d;
      for (int64_t d : b.y) ny *= d;
      for (const char* op : {"Add", "Sub", "Mul", "Div", "Max", "Min"}) {
        cases.push_back(XCase(std::string(op) + " broadcast", OneOp(op, b.x, {{"Y2", b.y, Values(rng, ny, 1)}}, {}),
                              b.x, Values(rng, nx, 1)));
      }
    }
  }
  {
    SplitMix64 rng(404);
    const Shape xs{2, 3, 37, 41};
    const int64_t n = 2 * 3 * 37 * 41;
    for (int kind : {0, 1, 2}) {
      const auto x = Values(rng, n, kind, -8.0f, 8.0f);
      const std::string k = " kind " + std::to_string(kind);
      cases.push_back(XCase("Relu" + k, OneOp("Relu", xs, {}, {}), xs, x));
      cases.push_back(XCase("HardSwish" + k, OneOp("HardSwish", xs, {}, {}), xs, x));
      cases.push_back(XCase("Log" + k, OneOp("Log", xs, {}, {}), xs, x));
      for (const char* f : {"Atan", "Asin", "Acos", "Sinh", "Cosh", "Asinh", "Acosh", "Atanh"}) {
        cases.push_back(XCase(f + k, OneOp(f, xs, {}, {}), xs, x));
        cases.push_back(XCase(f + std::string(" of small values") + k, OneOp(f, xs, {}, {}), xs,
                              Values(rng, n, kind, -1.5f, 1.5f)));
      }
      for (const char* f : {"Sin", "Cos", "Tan"}) {
        cases.push_back(XCase(f + k, OneOp(f, xs, {}, {}), xs, x));
        cases.push_back(XCase(f + std::string(" of large values") + k, OneOp(f, xs, {}, {}), xs,
                              Values(rng, n, kind, -3e5f, 3e5f)));
      }
      cases.push_back(XCase("Pow by a scalar 2" + k, OneOp("Pow", xs, {{"P", {}, {2.0f}}}, {}), xs, x));
      cases.push_back(XCase("Pow by a broadcast row" + k,
                            OneOp("Pow", xs, {{"P", {41}, Values(rng, 41, kind, -3.0f, 3.0f)}}, {}), xs, x));
      cases.push_back(XCase("Pow by an int64 3" + k, OneOp("Pow", xs, {{"P", {}, {3.0f}, true}}, {}), xs, x));
      cases.push_back(XCase("Pow of positives by a tensor" + k,
                            OneOp("Pow", xs, {{"P", xs, Values(rng, n, kind, -4.0f, 4.0f)}}, {}), xs,
                            Positive(rng, n)));
      cases.push_back(XCase("Elu" + k, OneOp("Elu", xs, {}, {Float("alpha", 0.7f)}), xs, x));
      cases.push_back(XCase("Selu" + k, OneOp("Selu", xs, {}, {}), xs, x));
      cases.push_back(XCase("Celu" + k, OneOp("Celu", xs, {}, {Float("alpha", 1.5f)}), xs, x));
      cases.push_back(XCase("LeakyRelu" + k, OneOp("LeakyRelu", xs, {}, {Float("alpha", 0.1f)}), xs, x));
      cases.push_back(XCase("ThresholdedRelu" + k, OneOp("ThresholdedRelu", xs, {}, {Float("alpha", 0.5f)}), xs, x));
      cases.push_back(XCase("Softsign" + k, OneOp("Softsign", xs, {}, {}), xs, x));
      cases.push_back(XCase("Softplus" + k, OneOp("Softplus", xs, {}, {}), xs, x));
      cases.push_back(XCase("Mish" + k, OneOp("Mish", xs, {}, {}), xs, x));
      cases.push_back(XCase("Gelu" + k, OneOp("Gelu", xs, {}, {}, 20), xs, x));
      cases.push_back(XCase("Gelu tanh" + k, OneOp("Gelu", xs, {}, {Str("approximate", "tanh")}, 20), xs, x));
      // ONNX Runtime's: Gelu, FastGelu (with and without its bias), BiasGelu, QuickGelu.
      const Init bias{"b", {41}, Values(rng, 41, kind)};
      cases.push_back(XCase("com.microsoft.Gelu" + k, OneOp("com.microsoft.Gelu", xs, {}, {}), xs, x));
      cases.push_back(XCase("FastGelu" + k, OneOp("com.microsoft.FastGelu", xs, {}, {}), xs, x));
      cases.push_back(XCase("FastGelu with bias" + k, OneOp("com.microsoft.FastGelu", xs, {bias}, {}), xs, x));
      cases.push_back(XCase("BiasGelu" + k, OneOp("com.microsoft.BiasGelu", xs, {bias}, {}), xs, x));
      cases.push_back(XCase("QuickGelu" + k, OneOp("com.microsoft.QuickGelu", xs, {}, {}), xs, x));
      cases.push_back(
          XCase("QuickGelu alpha" + k, OneOp("com.microsoft.QuickGelu", xs, {}, {Float("alpha", -0.5f)}), xs, x));
      // float16 through Casts: ONNX Runtime's Gelu and FastGelu; opset 28's SwiGLU (A = X,
      // B = -X and the other way round; float and float16).
      {
        const auto F = onnx::TensorProto::FLOAT;
        const std::vector<TInit> b16 = {{"bf", F, {41}, std::vector<double>(bias.data.begin(), bias.data.end())}};
        const std::vector<TNode> gelu16 = {
            {"Cast", {"X"}, {"xh"}, {AI("to", 10)}}, {"Cast", {"bf"}, {"bh"}, {AI("to", 10)}},
            {"com.microsoft.Gelu", {"xh"}, {"g"}},   {"com.microsoft.FastGelu", {"xh", "bh"}, {"fg"}},
            {"Cast", {"g"}, {"Y"}, {AI("to", 1)}},   {"Cast", {"fg"}, {"Y2"}, {AI("to", 1)}}};
        cases.push_back(XCase("Gelu and FastGelu float16" + k, TypedGraph(xs, b16, gelu16, {"Y", "Y2"}), xs, x));
        const std::vector<TNode> swiglu = {{"Neg", {"X"}, {"n"}},
                                           {"SwiGLU", {"X", "n"}, {"Y"}},
                                           {"SwiGLU", {"n", "X"}, {"Y2"}, {AF("alpha", 1.702f)}},
                                           {"Cast", {"X"}, {"xh"}, {AI("to", 10)}},
                                           {"Cast", {"n"}, {"nh"}, {AI("to", 10)}},
                                           {"SwiGLU", {"xh", "nh"}, {"yh"}},
                                           {"Cast", {"yh"}, {"Y3"}, {AI("to", 1)}}};
        cases.push_back(
            XCase("SwiGLU, alpha, float16" + k, TypedGraph(xs, {}, swiglu, {"Y", "Y2", "Y3"}, {}, 28), xs, x));
      }
      cases.push_back(
          XCase("HardSigmoid" + k, OneOp("HardSigmoid", xs, {}, {Float("alpha", 0.3f), Float("beta", 0.4f)}), xs, x));
      cases.push_back(XCase("Clip" + k, OneOp("Clip", xs, {{"lo", {}, {-0.0f}}, {"hi", {}, {6.0f}}}, {}), xs, x));
      cases.push_back(XCase("Transpose" + k, OneOp("Transpose", xs, {}, {Ints("perm", {0, 3, 1, 2})}), xs, x));
      cases.push_back(
          XCase("Transpose last axis kept" + k, OneOp("Transpose", xs, {}, {Ints("perm", {2, 0, 1, 3})}), xs, x));
      cases.push_back(XCase("Slice" + k,
                            OneOp("Slice", xs,
                                  {{"s", {3}, {1, -3, 30}, true},
                                   {"e", {3}, {3, 2, 2}, true},
                                   {"a", {3}, {1, 2, 3}, true},
                                   {"st", {3}, {1, -2, -3}, true}},
                                  {}),
                            xs, x));
      cases.push_back(XCase("Log of positives" + k, OneOp("Log", xs, {}, {}), xs, Positive(rng, n)));
      cases.push_back(XCase(
          "Concat" + k,
          OneOp("Concat", xs, {{"C2", {2, 2, 37, 41}, Values(rng, 2 * 2 * 37 * 41, kind)}}, {Int("axis", 1)}), xs, x));
    }
  }
  {
    // X (float, specials included) cast to binary64, then Exp, Log and Exp of a scaled
    // copy (large arguments: overflow and underflow): MathF64, byte for byte.
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
    cases.push_back(FeedsCase("binary64 Exp and Log", TypedGraph(xs, inits, nodes, {"E", "L", "EK"}),
                              {{"X", Input(xs, Values(rng, Count(xs), 1, -4.0f, 4.0f))}}));
  }
  return cases;
}

const bool kElementwiseRegistered = RegisterFamily({"elementwise", {}, &ElementwiseCases});

}  // namespace

TEST_CASE("ops/elementwise: every case at every algorithm equals the oracle", "[ops][exact_paths]") {
  RunFamily("elementwise");
}

}  // namespace test
}  // namespace onemodel::impl
