// ConvTranspose: the reference, the patch GEMM and the stride phases by taps (ops/conv/conv_transpose.h).
#include "tests/catch.h"

#include <string>
#include <vector>

#include "tests/ops/op_test.h"
#include "tests/test_util.h"

namespace onemodel::impl {
namespace test {
namespace {

std::vector<OpCase> ConvTransposeCases() {
  std::vector<OpCase> cases;
  {
    SplitMix64 rng(303);
    const Shape xt{2, 6, 9, 11};
    cases.push_back(
        XCase("ConvTranspose 2x2 stride 2",
              OneOp("ConvTranspose", xt, {{"W", {6, 5, 2, 2}, Values(rng, 120, 1)}, {"B", {5}, Values(rng, 5, 0)}},
                    {Ints("kernel_shape", {2, 2}), Ints("strides", {2, 2})}),
              xt, Values(rng, 2 * 6 * 99, 1)));
    cases.push_back(XCase("ConvTranspose 3x3 stride 2 (general path)",
                          OneOp("ConvTranspose", xt, {{"W", {6, 4, 3, 3}, Values(rng, 216, 0)}},
                                {Ints("strides", {2, 2}), Ints("pads", {1, 1, 1, 1})}),
                          xt, Values(rng, 2 * 6 * 99, 2)));
  }
  {
    SplitMix64 rng(1302);
    auto count = [](const Shape& s) {
      int64_t n = 1;
      for (int64_t d : s) n *= d;
      return n;
    };
    struct T {
      Shape x, w;
      std::vector<Attr> attrs;
      const char* what;
    };
    const T transposed[] = {
        {{2, 6, 13},
         {6, 5, 4},
         {Ints("strides", {3}), Ints("pads", {1, 2}), Ints("dilations", {2}), Ints("output_padding", {1})},
         "1-D stride 3 dilated"},
        {{2, 6, 9, 11}, {6, 4, 3, 3}, {Ints("strides", {2, 2}), Ints("pads", {1, 1, 1, 1})}, "3x3 stride 2 pad 1"},
        {{1, 4, 7, 6},
         {4, 4, 3, 4},
         {Int("group", 2), Ints("strides", {2, 3}), Ints("dilations", {1, 2}), Ints("pads", {0, 2, 1, 0})},
         "grouped, strides 2x3"},
        {{1, 5, 6, 7},
         {5, 4, 3, 3},
         {Ints("strides", {2, 2}), Ints("output_shape", {12, 15}), Str("auto_pad", "SAME_UPPER")},
         "SAME_UPPER with output_shape"},
        {{1, 5, 6, 7}, {5, 4, 1, 1}, {Ints("strides", {2, 2})}, "1x1 stride 2 (phases without taps)"},
        {{1, 4, 3, 4, 5},
         {4, 6, 3, 3, 3},
         {Ints("strides", {2, 2, 2}), Ints("pads", {1, 1, 1, 1, 1, 1})},
         "3-D stride 2"},
        {{1, 8, 5, 6}, {8, 4, 3, 3}, {}, "stride 1"},
    };
    for (const T& t : transposed) {
      for (int kind : {0, 1, 2, 3}) {
        int64_t group = 1;
        for (const Attr& a : t.attrs)
          if (a.name == "group") group = a.ints[0];
        const int64_t M = t.w[1] * group;
        std::vector<Init> use = {{"W", t.w, kind == 3 ? Positive(rng, count(t.w)) : Values(rng, count(t.w), 0)}};
        if (kind < 2)
          use.push_back({"B", {M}, Values(rng, M, 0)});  // kinds 2, 3: no bias, so zero results keep their sign
        cases.push_back(XCase(std::string("ConvTranspose ") + t.what + " kind " + std::to_string(kind),
                              OneOp("ConvTranspose", t.x, use, t.attrs), t.x, Values(rng, count(t.x), kind)));
      }
    }
  }
  return cases;
}

const bool kConvTransposeRegistered = RegisterFamily({"conv_transpose", {"ConvTranspose"}, &ConvTransposeCases});

}  // namespace

TEST_CASE("ops/conv_transpose: every case at every algorithm equals the oracle", "[ops][exact_paths]") {
  RunFamily("conv_transpose");
}

}  // namespace test
}  // namespace onemodel::impl
