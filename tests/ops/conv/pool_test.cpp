// Pooling: MaxPool, AveragePool, LpPool and their global forms on the pool table
// (ops/conv/pool.h).
#include "tests/catch.h"

#include <string>
#include <vector>

#include "tests/ops/op_test.h"
#include "tests/test_util.h"

namespace onemodel::impl {
namespace test {
namespace {

std::vector<OpCase> PoolCases() {
  std::vector<OpCase> cases;
  {
    SplitMix64 rng(304);
    const Shape xp{2, 5, 17, 18};
    for (int kind : {0, 1, 2}) {
      cases.push_back(XCase(
          "MaxPool 3x3 s2 p1 kind " + std::to_string(kind),
          OneOp("MaxPool", xp, {}, {Ints("kernel_shape", {3, 3}), Ints("strides", {2, 2}), Ints("pads", {1, 1, 1, 1})}),
          xp, Values(rng, 2 * 5 * 17 * 18, kind)));
      cases.push_back(XCase("AveragePool 3x3 s2 p1 kind " + std::to_string(kind),
                            OneOp("AveragePool", xp, {},
                                  {Ints("kernel_shape", {3, 3}), Ints("strides", {2, 2}), Ints("pads", {1, 1, 1, 1})}),
                            xp, Values(rng, 2 * 5 * 17 * 18, kind)));
      cases.push_back(
          XCase("AveragePool 3x2 counting pads, uneven pads kind " + std::to_string(kind),
                OneOp("AveragePool", xp, {},
                      {Ints("kernel_shape", {3, 2}), Ints("pads", {2, 0, 1, 1}), Int("count_include_pad", 1)}),
                xp, Values(rng, 2 * 5 * 17 * 18, kind)));
      // ceil_mode with counted pads: the last window of a row reaches past the padding,
      // and those taps are not counted.
      cases.push_back(XCase("AveragePool 3x3 s2 p1 ceil counting pads kind " + std::to_string(kind),
                            OneOp("AveragePool", xp, {},
                                  {Ints("kernel_shape", {3, 3}), Ints("strides", {2, 2}), Ints("pads", {1, 1, 1, 1}),
                                   Int("ceil_mode", 1), Int("count_include_pad", 1)}),
                            xp, Values(rng, 2 * 5 * 17 * 18, kind)));
      cases.push_back(XCase("AveragePool 2x2 ceil dilated kind " + std::to_string(kind),
                            OneOp("AveragePool", xp, {},
                                  {Ints("kernel_shape", {2, 2}), Ints("strides", {2, 2}), Ints("dilations", {2, 1}),
                                   Int("ceil_mode", 1)}),
                            xp, Values(rng, 2 * 5 * 17 * 18, kind)));
      cases.push_back(XCase("MaxPool 2x2 ceil dilated kind " + std::to_string(kind),
                            OneOp("MaxPool", xp, {},
                                  {Ints("kernel_shape", {2, 2}), Ints("strides", {2, 2}), Ints("dilations", {2, 1}),
                                   Int("ceil_mode", 1)}),
                            xp, Values(rng, 2 * 5 * 17 * 18, kind)));
    }
  }
  {
    SplitMix64 rng(307);
    const Shape xb{2, 5, 9, 11};
    for (int kind : {0, 1, 2}) {
      cases.push_back(XCase("GlobalAveragePool kind " + std::to_string(kind), OneOp("GlobalAveragePool", xb, {}, {}),
                            xb, Values(rng, Count(xb), kind)));
      cases.push_back(XCase("GlobalMaxPool kind " + std::to_string(kind), OneOp("GlobalMaxPool", xb, {}, {}), xb,
                            Values(rng, Count(xb), kind)));
      cases.push_back(XCase("GlobalLpPool p=2 kind " + std::to_string(kind), OneOp("GlobalLpPool", xb, {}, {}), xb,
                            Values(rng, Count(xb), kind)));
      cases.push_back(XCase(
          "LpPool 3x3 s2 p1 p=2 kind " + std::to_string(kind),
          OneOp("LpPool", xb, {}, {Ints("kernel_shape", {3, 3}), Ints("strides", {2, 2}), Ints("pads", {1, 1, 1, 1})}),
          xb, Values(rng, Count(xb), kind)));
      cases.push_back(XCase("GlobalAveragePool of 13 channels kind " + std::to_string(kind),
                            OneOp("GlobalAveragePool", {1, 13, 4, 7}, {}, {}), {1, 13, 4, 7},
                            Values(rng, 13 * 28, kind)));
    }
  }
  return cases;
}

const bool kPoolRegistered = RegisterFamily(
    {"pool", {"MaxPool", "AveragePool", "LpPool", "GlobalMaxPool", "GlobalAveragePool", "GlobalLpPool"}, &PoolCases});

}  // namespace

TEST_CASE("ops/pool: every case at every algorithm equals the oracle", "[ops][exact_paths]") { RunFamily("pool"); }

}  // namespace test
}  // namespace onemodel::impl
