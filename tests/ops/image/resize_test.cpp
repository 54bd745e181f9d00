// Resize and Upsample: nearest, separable linear/cubic and the general interpolation
// (ops/image/resize.h).
#include "tests/catch.h"

#include <string>
#include <vector>

#include "tests/ops/op_test.h"
#include "tests/test_util.h"

namespace onemodel::impl {
namespace test {
namespace {

std::vector<OpCase> ResizeCases() {
  std::vector<OpCase> cases;
  {
    SplitMix64 rng(305);
    const Shape xr{1, 3, 7, 9};
    for (int kind : {0, 1, 2}) {
      for (const char* nm : {"floor", "round_prefer_floor"}) {
        cases.push_back(XCase(std::string("Resize nearest ") + nm + " kind " + std::to_string(kind),
                              OneOp("Resize", xr, {{"", {}, {}}, {"scales", {4}, {1.0f, 1.0f, 2.0f, 1.5f}}},
                                    {Str("mode", "nearest"), Str("coordinate_transformation_mode", "asymmetric"),
                                     Str("nearest_mode", nm)}),
                              xr, Values(rng, 3 * 63, kind)));
      }
    }
  }
  {
    SplitMix64 rng(919);
    const auto F = onnx::TensorProto::FLOAT, I64 = onnx::TensorProto::INT64;
    const Shape xs{2, 3, 9, 11};
    struct R {
      const char* mode;
      const char* coord;
      std::vector<double> sizes;
    };
    const R configs[] = {{"linear", "half_pixel", {2, 3, 18, 22}},        {"linear", "align_corners", {2, 3, 17, 30}},
                         {"linear", "asymmetric", {2, 3, 5, 7}},          {"cubic", "half_pixel", {2, 3, 20, 13}},
                         {"linear", "pytorch_half_pixel", {2, 3, 1, 11}}, {"linear", "half_pixel", {2, 2, 18, 22}}};
    for (const R& c : configs)
      for (int kind : {0, 1, 2}) {
        const std::vector<TInit> inits = {{"sizes", I64, {4}, c.sizes}};
        const std::vector<TNode> nodes = {{"Resize",
                                           {"X", "", "", "sizes"},
                                           {"Y"},
                                           {AS("mode", c.mode), AS("coordinate_transformation_mode", c.coord)}}};
        (void)F;
        cases.push_back(FeedsCase(std::string("Resize ") + c.mode + " " + c.coord + " kind " + std::to_string(kind),
                                  TypedGraph(xs, inits, nodes, {"Y"}),
                                  {{"X", Input(xs, Values(rng, 2 * 3 * 9 * 11, kind, -4.0f, 4.0f))}}));
      }
  }
  {
    // Upsample (opset 9: scales as an input), which plans with Resize's table.
    SplitMix64 rng(921);
    const Shape xu{1, 2, 5, 6};
    for (const char* mode : {"nearest", "linear"})
      for (int kind : {0, 1, 2})
        cases.push_back(
            XCase(std::string("Upsample ") + mode + " kind " + std::to_string(kind),
                  OneOp("Upsample", xu, {{"scales", {4}, {1.0f, 1.0f, 2.0f, 3.0f}}}, {Str("mode", mode)}, 9), xu,
                  Values(rng, Count(xu), kind)));
  }
  return cases;
}

const bool kResizeRegistered = RegisterFamily({"resize", {"Resize", "Upsample"}, &ResizeCases});

}  // namespace

TEST_CASE("ops/resize: every case at every algorithm equals the oracle", "[ops][exact_paths]") { RunFamily("resize"); }

}  // namespace test
}  // namespace onemodel::impl
