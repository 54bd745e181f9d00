// Softmax (ops/nn/softmax.h; reference ref::Softmax in src/ref/softmax.cpp, kernels SoftmaxRowF32 in
// src/kernels/elementwise.cpp): rows of every length around the lane counts, with
// specials (NaN, infinities, -0.0), along the last axis (the row algorithm) and along
// others, in the opset-13 form and the older flattened form; LogSoftmax and Hardmax share
// the layout.
#include "tests/catch.h"

#include <string>
#include <vector>

#include "tests/ops/op_test.h"
#include "tests/test_util.h"

namespace onemodel::impl {
namespace test {
namespace {

std::vector<OpCase> SoftmaxCases() {
  std::vector<OpCase> cases;
  SplitMix64 rng(515);
  for (int kind : {0, 1, 2}) {
    const std::string k = " kind " + std::to_string(kind);
    for (int64_t n : {1, 7, 16, 33, 96, 1000}) {
      const Shape xs{3, 5, n};
      cases.push_back(XCase("Softmax rows of " + std::to_string(n) + k, OneOp("Softmax", xs, {}, {Int("axis", -1)}), xs,
                            Values(rng, Count(xs), kind, -20.0f, 20.0f)));
    }
    const Shape xl{3, 17, 96};
    const auto x = Values(rng, Count(xl), kind, -3.0f, 3.0f);
    cases.push_back(XCase("Softmax middle axis" + k, OneOp("Softmax", xl, {}, {Int("axis", 1)}), xl, x));
    cases.push_back(XCase("Softmax first axis" + k, OneOp("Softmax", xl, {}, {Int("axis", 0)}), xl, x));
    cases.push_back(
        XCase("Softmax opset 11 over the trailing block" + k, OneOp("Softmax", xl, {}, {Int("axis", 1)}, 11), xl, x));
    cases.push_back(XCase("LogSoftmax" + k, OneOp("LogSoftmax", xl, {}, {Int("axis", -1)}), xl, x));
    cases.push_back(XCase("Hardmax" + k, OneOp("Hardmax", xl, {}, {Int("axis", -1)}), xl, x));
  }
  return cases;
}

const bool kSoftmaxRegistered = RegisterFamily({"softmax", {"Softmax", "LogSoftmax", "Hardmax"}, &SoftmaxCases});

}  // namespace

TEST_CASE("ops/softmax: every case at every algorithm equals the oracle", "[ops][exact_paths]") {
  RunFamily("softmax");
}

}  // namespace test
}  // namespace onemodel::impl
