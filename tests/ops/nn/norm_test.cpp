// The normalisations: LayerNormalization, RMSNormalization, BatchNormalization, InstanceNormalization,
// ONNX Runtime's SimplifiedLayerNormalization, SkipLayerNormalization and SkipSimplifiedLayerNormalization
// (ops/nn/norm.h).
#include "tests/catch.h"

#include <string>
#include <vector>

#include "tests/ops/op_test.h"
#include "tests/test_util.h"

namespace onemodel::impl {
namespace test {
namespace {

std::vector<OpCase> NormsCases() {
  std::vector<OpCase> cases;
  {
    SplitMix64 rng(505);
    for (int kind : {0, 1, 2}) {
      const std::string k = " kind " + std::to_string(kind);
      const Shape xl{3, 17, 96};
      const auto x = Values(rng, 3 * 17 * 96, kind, -3.0f, 3.0f);
      cases.push_back(
          XCase("LayerNormalization" + k,
                OneOp("LayerNormalization", xl, {{"S", {96}, Values(rng, 96, 0)}, {"B", {96}, Values(rng, 96, 0)}},
                      {Float("epsilon", 1e-5f)}),
                xl, x));
      cases.push_back(
          XCase("LayerNormalization over two axes" + k,
                OneOp("LayerNormalization", xl, {{"S", {17, 96}, Values(rng, 17 * 96, 0)}}, {Int("axis", 1)}), xl, x));
      cases.push_back(XCase("RMSNormalization" + k,
                            OneOp("RMSNormalization", xl, {{"S", {96}, Values(rng, 96, 0)}}, {}, 23), xl, x));
      for (const char* f : {"Exp", "Tanh", "Sigmoid", "Erf"})
        cases.push_back(XCase(std::string(f) + k, OneOp(f, xl, {}, {}), xl, x));
      const Shape xb{2, 5, 9, 11};
      const auto xbv = Values(rng, 2 * 5 * 99, kind);
      cases.push_back(XCase("BatchNormalization" + k,
                            OneOp("BatchNormalization", xb,
                                  {{"S", {5}, Values(rng, 5, 0)},
                                   {"B", {5}, Values(rng, 5, 0)},
                                   {"M", {5}, Values(rng, 5, 0)},
                                   {"V", {5}, Positive(rng, 5)}},
                                  {}),
                            xb, xbv));
    }
  }
  {
    // ONNX Runtime's SkipLayerNormalization, SkipSimplifiedLayerNormalization (skip of the
    // input's shape or broadcast, bias and beta or not, every output or only Y) and
    // SimplifiedLayerNormalization (with its inv_std_var or not).
    SplitMix64 rng(507);
    const auto F = onnx::TensorProto::FLOAT;
    auto vals = [&](int64_t n, int kind) {
      std::vector<double> v;
      for (float f : Values(rng, n, kind, -2.0f, 2.0f)) v.push_back(f);
      return v;
    };
    const Shape xs{3, 17, 96};
    for (int kind : {0, 1, 2}) {
      const std::string k = " kind " + std::to_string(kind);
      const auto x = Values(rng, Count(xs), kind, -3.0f, 3.0f);
      for (bool full : {false, true})
        for (bool rms : {false, true}) {
          const Shape ss = full ? xs : Shape{17, 96};
          std::vector<TInit> inits = {{"S", F, ss, vals(Count(ss), kind)},
                                      {"G", F, {96}, vals(96, 0)},
                                      {"BE", F, {96}, vals(96, 0)},
                                      {"BI", F, {96}, vals(96, 0)}};
          const std::string op =
              rms ? "com.microsoft.SkipSimplifiedLayerNormalization" : "com.microsoft.SkipLayerNormalization";
          const std::vector<std::string> in =
              rms ? std::vector<std::string>{"X", "S", "G", "BI"} : std::vector<std::string>{"X", "S", "G", "BE", "BI"};
          const std::vector<std::string> outs =
              full ? std::vector<std::string>{"Y", "M", "I", "V"} : std::vector<std::string>{"Y"};
          const std::vector<TNode> nodes = {{op, in, outs, {AF("epsilon", 1e-6f)}}};
          cases.push_back(
              XCase(op + (full ? " every output" : " skip broadcast") + k, TypedGraph(xs, inits, nodes, outs), xs, x));
        }
      cases.push_back(XCase("SimplifiedLayerNormalization" + k,
                            OneOp("SimplifiedLayerNormalization", xs, {{"S", {96}, Values(rng, 96, 0)}}, {}), xs, x));
      const std::vector<TNode> sln = {
          {"SimplifiedLayerNormalization", {"X", "S"}, {"Y", "I"}, {AI("axis", 1), AF("epsilon", 1e-4f)}}};
      cases.push_back(XCase("SimplifiedLayerNormalization with inv_std_var" + k,
                            TypedGraph(xs, {{"S", F, {17, 96}, vals(17 * 96, 0)}}, sln, {"Y", "I"}), xs, x));
    }
  }
  {
    SplitMix64 rng(506);
    const Shape xi{2, 6, 13, 17};
    for (int kind : {0, 1, 2})
      cases.push_back(
          XCase("InstanceNormalization kind " + std::to_string(kind),
                OneOp("InstanceNormalization", xi, {{"S", {6}, Values(rng, 6, 0)}, {"B", {6}, Values(rng, 6, 0)}},
                      {Float("epsilon", 1e-5f)}),
                xi, Values(rng, Count(xi), kind, -3.0f, 3.0f)));
  }
  {
    // ONNX Runtime's EmbedLayerNormalization: the word table fed (specials in it), with and
    // without segments, mask and position_ids.
    SplitMix64 rng(707);
    const auto F = onnx::TensorProto::FLOAT, I32 = onnx::TensorProto::INT32;
    const Shape ws{30, 48};
    std::vector<double> ids, seg, mask, pos;
    for (int i = 0; i < 2 * 9; ++i) {
      ids.push_back(double(rng.NextU32() % 30));
      seg.push_back(double(rng.NextU32() % 2));
      mask.push_back(i % 9 < 7 ? 1.0 : 0.0);
      pos.push_back(double(i % 9 + 1));
    }
    for (int variant : {0, 1, 2})
      for (int kind : {0, 1}) {
        std::vector<TInit> inits = {{"IDS", I32, {2, 9}, ids},
                                    {"PE", F, {12, 48}, Floats(rng, 12 * 48, -1.0f, 1.0f)},
                                    {"G", F, {48}, Floats(rng, 48, 0.5f, 1.5f)},
                                    {"BE", F, {48}, Floats(rng, 48, -0.5f, 0.5f)}};
        std::vector<std::string> in = {"IDS", "", "X", "PE", "", "G", "BE"};
        std::vector<std::string> outs = {"Y", "MI"};
        if (variant != 1) {
          inits.push_back({"SEG", I32, {2, 9}, seg});
          inits.push_back({"SE", F, {2, 48}, Floats(rng, 96, -1.0f, 1.0f)});
          in[1] = "SEG", in[4] = "SE";
          inits.push_back({"M", I32, {2, 9}, mask});
          in.push_back("M");
        }
        if (variant == 2) {
          inits.push_back({"POS", I32, {2, 9}, pos});
          in.push_back("POS");
          outs.push_back("SUM");
        }
        cases.push_back(
            XCase("EmbedLayerNormalization variant " + std::to_string(variant) + " kind " + std::to_string(kind),
                  TypedGraph(ws, inits, {{"com.microsoft.EmbedLayerNormalization", in, outs}}, outs), ws,
                  Values(rng, Count(ws), kind, -1.0f, 1.0f)));
      }
  }
  return cases;
}

const bool kNormRegistered =
    RegisterFamily({"norms",
                    {"LayerNormalization", "RMSNormalization", "InstanceNormalization", "BatchNormalization",
                     "SimplifiedLayerNormalization", "com.microsoft.SkipLayerNormalization",
                     "com.microsoft.SkipSimplifiedLayerNormalization", "com.microsoft.EmbedLayerNormalization"},
                    &NormsCases});

}  // namespace

TEST_CASE("ops/norms: every case at every algorithm equals the oracle", "[ops][exact_paths]") { RunFamily("norms"); }

}  // namespace test
}  // namespace onemodel::impl
