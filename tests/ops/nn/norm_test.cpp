// The normalisations: LayerNormalization, RMSNormalization, BatchNormalization, InstanceNormalization
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
    SplitMix64 rng(506);
    const Shape xi{2, 6, 13, 17};
    for (int kind : {0, 1, 2})
      cases.push_back(
          XCase("InstanceNormalization kind " + std::to_string(kind),
                OneOp("InstanceNormalization", xi, {{"S", {6}, Values(rng, 6, 0)}, {"B", {6}, Values(rng, 6, 0)}},
                      {Float("epsilon", 1e-5f)}),
                xi, Values(rng, Count(xi), kind, -3.0f, 3.0f)));
  }
  return cases;
}

const bool kRegistered = RegisterFamily(
    {"norms", {"LayerNormalization", "RMSNormalization", "InstanceNormalization", "BatchNormalization"}, &NormsCases});

}  // namespace

TEST_CASE("ops/norms: every case at every algorithm equals the oracle", "[ops][exact_paths]") { RunFamily("norms"); }

}  // namespace test
}  // namespace onemodel::impl
