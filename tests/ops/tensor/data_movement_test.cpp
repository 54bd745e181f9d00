// Data movement: Transpose, Gather, Pad, Where and Cast (ops/tensor/shape_ops.h, ops/tensor/pad.h,
// ops/math/elementwise.h, ops/tensor/cast.h): every bit moved as the oracle moves it.
#include "tests/catch.h"

#include <string>
#include <vector>

#include "tests/ops/op_test.h"
#include "tests/test_util.h"

namespace onemodel::impl {
namespace test {
namespace {

std::vector<OpCase> DataMovementCases() {
  std::vector<OpCase> cases;
  {
    SplitMix64 rng(1401);
    const Shape xs{2, 3, 37, 41};
    const int64_t n = 2 * 3 * 37 * 41;
    const auto x = Values(rng, n, 1, -8.0f, 8.0f);
    // Transposes whose last axis changes (the tiled kernel), and a plain 2-D one.
    const std::vector<std::vector<int64_t>> perms = {{0, 2, 3, 1}, {3, 2, 1, 0}, {1, 3, 0, 2}, {0, 1, 3, 2}};
    for (const auto& perm : perms) {
      cases.push_back(XCase("Transpose " + std::to_string(perm[0]) + std::to_string(perm[1]) + std::to_string(perm[2]) +
                                std::to_string(perm[3]),
                            OneOp("Transpose", xs, {}, {Ints("perm", perm)}), xs, x));
    }
    const Shape x2{67, 130};
    cases.push_back(XCase("Transpose 2-D", OneOp("Transpose", x2, {}, {}), x2, Values(rng, 67 * 130, 1)));
    // Gather on every axis: negative and repeated indices, a 2-D index tensor.
    for (int64_t axis = 0; axis < 4; ++axis) {
      const float d = float(xs[size_t(axis)]);
      cases.push_back(
          XCase("Gather axis " + std::to_string(axis),
                OneOp("Gather", xs, {{"I", {5}, {0.0f, d - 1, -1.0f, 1.0f, 0.0f}, true}}, {Int("axis", axis)}), xs, x));
      cases.push_back(XCase("Gather 2-D indices axis " + std::to_string(axis),
                            OneOp("Gather", xs, {{"I", {2, 2}, {1.0f, -2.0f, 0.0f, d - 1}, true}}, {Int("axis", axis)}),
                            xs, x));
    }
    // Pad in every mode, pads growing and cropping several axes; the constant given.
    const std::vector<std::vector<float>> pads = {
        {0, 1, 2, 3, 1, 0, 3, 2}, {0, 0, -2, 5, 0, 1, 3, -4}, {1, 0, 0, 0, 0, 0, 0, 0}};
    for (const char* mode : {"constant", "edge", "reflect", "wrap"}) {
      for (size_t i = 0; i < pads.size(); ++i) {
        std::vector<Init> ins = {{"P", {8}, pads[i], true}};
        if (std::string(mode) == "constant") ins.push_back({"V", {}, {2.5f}});
        cases.push_back(XCase(std::string("Pad ") + mode + " " + std::to_string(i),
                              OneOp("Pad", xs, ins, {Str("mode", mode)}), xs, x));
      }
    }
    cases.push_back(XCase("Pad constant without a value", OneOp("Pad", xs, {{"P", {8}, pads[0], true}}, {}), xs, x));
    // Where with broadcasting (a condition [3, 1, 41], another operand [37, 1]), on floats
    // and on int64.
    const auto B = onnx::TensorProto::BOOL, F = onnx::TensorProto::FLOAT, I64 = onnx::TensorProto::INT64;
    std::vector<double> cond(3 * 41);
    for (double& c : cond) c = double(rng.NextU32() % 2);
    const std::vector<double> yb = Floats(rng, 37, -3.0f, 3.0f);
    std::vector<double> i1(37 * 41), i2(41);
    for (double& v : i1) v = double(int32_t(rng.NextU32() % 20000) - 10000);
    for (double& v : i2) v = double(int32_t(rng.NextU32() % 100));
    const std::string where = TypedGraph(
        xs, {{"C", B, {3, 1, 41}, cond}, {"Yb", F, {37, 1}, yb}, {"I1", I64, {37, 41}, i1}, {"I2", I64, {41}, i2}},
        {{"Where", {"C", "X", "Yb"}, {"Y"}}, {"Where", {"C", "I1", "I2"}, {"Z"}}}, {"Y", "Z"});
    cases.push_back(FeedsCase("Where broadcast", where, {{"X", Input(xs, x)}}));
  }
  {
    // Cast of integers to float (an int32 and an int64 input fed, so no folding): the
    // int-to-float algorithm against the project's conversion routines.
    SplitMix64 rng(1402);
    const auto I32 = onnx::TensorProto::INT32, I64 = onnx::TensorProto::INT64;
    std::vector<double> i32(300), i64(300);
    for (size_t i = 0; i < i32.size(); ++i) {
      i32[i] = double(int32_t(rng.NextU32()));
      i64[i] = double(int64_t(rng.NextU32()) * 4093 - (int64_t(1) << 40));
    }
    i32[0] = 16777217.0;  // 2^24 + 1: rounds
    i32[1] = -2147483648.0;
    const Shape xs{1};
    cases.push_back(FeedsCase("Cast int32 and int64 to float",
                              TypedGraph(xs, {{"A", I32, {300}, i32}, {"B", I64, {300}, i64}},
                                         {{"Cast", {"A"}, {"Y"}, {AI("to", 1)}}, {"Cast", {"B"}, {"Z"}, {AI("to", 1)}}},
                                         {"Y", "Z"}, {"A", "B"}),
                              {{"X", Input(xs, {0.0f})}}));
  }
  return cases;
}

const bool kDataMovementRegistered =
    RegisterFamily({"data_movement", {"Transpose", "Gather", "Pad", "Where", "Cast", "CastLike"}, &DataMovementCases});

}  // namespace

TEST_CASE("ops/data_movement: every case at every algorithm equals the oracle", "[ops][exact_paths]") {
  RunFamily("data_movement");
}

}  // namespace test
}  // namespace onemodel::impl
