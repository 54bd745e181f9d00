// RNN, GRU and LSTM (ops/nn/rnn.h): both directions, sequence lengths, batch-first layout, peepholes, clip,
// linear_before_reset.
#include "tests/catch.h"

#include <string>
#include <vector>

#include "tests/ops/op_test.h"
#include "tests/test_util.h"

namespace onemodel::impl {
namespace test {
namespace {

std::vector<OpCase> RnnCases() {
  std::vector<OpCase> cases;
  {
    SplitMix64 rng(939);
    const auto F = onnx::TensorProto::FLOAT, I32 = onnx::TensorProto::INT32;
    // Hidden and input sizes past a vector and a GEMV chunk's tile; both directions,
    // sequence lengths shorter than the sequence, batch-first layout, peepholes, clip,
    // GRU with and without linear_before_reset; inputs with specials.
    struct C {
      const char* op;
      int64_t G;
      const char* dir;
      int64_t layout;
      bool lbr;
      bool clip;
      bool lens;
    };
    const C configs[] = {
        {"LSTM", 4, "forward", 0, false, false, false},    {"LSTM", 4, "bidirectional", 0, false, true, true},
        {"LSTM", 4, "reverse", 1, false, false, true},     {"GRU", 3, "forward", 0, false, false, false},
        {"GRU", 3, "bidirectional", 1, true, false, true}, {"GRU", 3, "forward", 0, true, true, false},
        {"RNN", 1, "bidirectional", 0, false, false, true}};
    const int64_t S = 7, Bt = 3, I = 21, H = 19;
    for (const C& c : configs)
      for (int kind : {0, 1}) {
        const int64_t D = std::string(c.dir) == "bidirectional" ? 2 : 1;
        const Shape xs = c.layout ? Shape{Bt, S, I} : Shape{S, Bt, I};
        std::vector<TInit> inits = {
            {"W", F, {D, c.G * H, I}, Floats(rng, D * c.G * H * I, -0.3f, 0.3f)},
            {"R", F, {D, c.G * H, H}, Floats(rng, D * c.G * H * H, -0.3f, 0.3f)},
            {"B", F, {D, 2 * c.G * H}, Floats(rng, D * 2 * c.G * H, -0.2f, 0.2f)},
            {"L", I32, {Bt}, c.lens ? std::vector<double>{7, 4, 1} : std::vector<double>{7, 7, 7}},
            {"H0", F, c.layout ? Shape{Bt, D, H} : Shape{D, Bt, H}, Floats(rng, D * Bt * H, -0.5f, 0.5f)}};
        std::vector<std::string> ins = {"X", "W", "R", "B", "L", "H0"};
        std::vector<std::string> outs = {"Y", "Yh"};
        if (c.G == 4) {
          inits.push_back(
              {"C0", F, c.layout ? Shape{Bt, D, H} : Shape{D, Bt, H}, Floats(rng, D * Bt * H, -0.5f, 0.5f)});
          inits.push_back({"P", F, {D, 3 * H}, Floats(rng, D * 3 * H, -0.2f, 0.2f)});
          ins.push_back("C0");
          ins.push_back("P");
          outs.push_back("Yc");
        }
        std::vector<TAttr> attrs = {AI("hidden_size", H), AS("direction", c.dir), AI("layout", c.layout)};
        if (c.G == 3) attrs.push_back(AI("linear_before_reset", c.lbr ? 1 : 0));
        if (c.clip) attrs.push_back(AF("clip", 0.75f));
        cases.push_back(FeedsCase(std::string(c.op) + " " + c.dir + " layout " + std::to_string(c.layout) +
                                      (c.lbr ? " lbr" : "") + (c.clip ? " clip" : "") + (c.lens ? " lens" : "") +
                                      " kind " + std::to_string(kind),
                                  TypedGraph(xs, inits, {{c.op, ins, outs, attrs}}, outs),
                                  {{"X", Input(xs, Values(rng, S * Bt * I, kind, -2.0f, 2.0f))}}));
      }
  }
  return cases;
}

const bool kRnnRegistered = RegisterFamily({"rnn", {"RNN", "GRU", "LSTM"}, &RnnCases});

}  // namespace

TEST_CASE("ops/rnn: every case at every algorithm equals the oracle", "[ops][exact_paths]") { RunFamily("rnn"); }

}  // namespace test
}  // namespace onemodel::impl
