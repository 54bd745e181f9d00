// Attention (ops/nn/attention.h): grouped heads, masks, causal, softcap, windows, 3-D inputs.
#include "tests/catch.h"

#include <string>
#include <vector>

#include "tests/ops/op_test.h"
#include "tests/test_util.h"

namespace onemodel::impl {
namespace test {
namespace {

std::vector<OpCase> AttentionCases() {
  std::vector<OpCase> cases;
  {
    SplitMix64 rng(1501);
    const auto F = onnx::TensorProto::FLOAT, B = onnx::TensorProto::BOOL;
    // Grouped heads (4 query heads on 2 key/value heads), lengths off the tile sizes.
    const Shape qs{2, 4, 37, 24};
    const int64_t nq = 2 * 4 * 37 * 24;
    std::vector<double> mask(37 * 45);
    for (size_t i = 0; i < mask.size(); ++i) mask[i] = (i % 7 == 3) ? 0.0 : 1.0;
    for (size_t j = 0; j < 45; ++j) mask[5 * 45 + j] = 0.0;  // one fully masked row
    struct Variant {
      const char* what;
      std::vector<TAttr> attrs;
      bool with_mask;
    };
    const Variant variants[] = {
        {"plain", {}, false},
        {"bool mask, causal, qk output after the bias", {AI("is_causal", 1), AI("qk_matmul_output_mode", 2)}, true},
        {"softcap and scale, softmax output",
         {AF("softcap", 4.0f), AF("scale", 0.3f), AI("qk_matmul_output_mode", 3)},
         true},
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
        cases.push_back(FeedsCase(std::string("Attention ") + v.what + " kind " + std::to_string(kind),
                                  m.SerializeAsString(), {{"X", Input(qs, Values(rng, nq, kind, -2.0f, 2.0f))}}));
      }
    }
    // 3-D inputs [batch, sequence, heads * size].
    const Shape q3{1, 19, 48};
    onnx::ModelProto m;
    m.ParseFromString(TypedGraph(q3,
                                 {{"K", F, {1, 23, 48}, Floats(rng, 23 * 48, -2.0f, 2.0f)},
                                  {"V", F, {1, 23, 32}, Floats(rng, 23 * 32, -1.0f, 1.0f)}},
                                 {{"Attention", {"X", "K", "V"}, {"Y"}, {AI("q_num_heads", 4), AI("kv_num_heads", 4)}}},
                                 {"Y"}));
    m.mutable_opset_import(0)->set_version(23);
    cases.push_back(
        FeedsCase("Attention 3-D", m.SerializeAsString(), {{"X", Input(q3, Values(rng, 19 * 48, 0, -2.0f, 2.0f))}}));
  }
  return cases;
}

const bool kAttentionRegistered = RegisterFamily({"attention", {"Attention"}, &AttentionCases});

}  // namespace

TEST_CASE("ops/attention: every case at every algorithm equals the oracle", "[ops][exact_paths]") {
  RunFamily("attention");
}

}  // namespace test
}  // namespace onemodel::impl
