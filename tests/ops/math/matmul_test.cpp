// MatMul, Gemm and ONNX Runtime's FusedMatMul: the GEMM kernel split by rows and by columns, matrix-vector products,
// transposes.
#include "tests/catch.h"

#include <string>
#include <vector>

#include "tests/ops/op_test.h"
#include "tests/test_util.h"

namespace onemodel::impl {
namespace test {
namespace {

std::vector<OpCase> MatmulCases() {
  std::vector<OpCase> cases;
  {
    SplitMix64 rng(202);
    const Shape a1{3, 70, 300};
    cases.push_back(XCase("MatMul batched, rows split",
                          OneOp("MatMul", a1, {{"B", {300, 130}, Values(rng, 300 * 130, 1)}}, {}), a1,
                          Values(rng, 3 * 70 * 300, 1)));
    const Shape a2{5, 64};
    cases.push_back(XCase("MatMul few rows, columns split",
                          OneOp("MatMul", a2, {{"B", {64, 1000}, Values(rng, 64000, 0)}}, {}), a2,
                          Values(rng, 320, 2)));
    const Shape g1{1, 300};
    cases.push_back(
        XCase("Gemm one row, constant transposed B",
              OneOp("Gemm", g1, {{"B", {100, 300}, Values(rng, 30000, 1)}, {"C", {100}, Values(rng, 100, 0)}},
                    {Int("transB", 1)}),
              g1, Values(rng, 300, 2)));
    const Shape mv{37, 300};
    cases.push_back(XCase("MatMul by a column", OneOp("MatMul", mv, {{"B", {300, 1}, Values(rng, 300, 1)}}, {}), mv,
                          Values(rng, 37 * 300, 2)));
    const Shape a3{200, 96};
    for (int t = 0; t < 4; ++t) {
      const bool ta = t & 1, tb = t & 2;
      const Shape as = ta ? Shape{96, 200} : a3;
      cases.push_back(XCase(
          "Gemm transA=" + std::to_string(ta) + " transB=" + std::to_string(tb),
          OneOp("Gemm", as,
                {{"B", tb ? Shape{77, 96} : Shape{96, 77}, Values(rng, 96 * 77, 1)}, {"C", {77}, Values(rng, 77, 0)}},
                {Int("transA", ta), Int("transB", tb), Float("alpha", 0.75f), Float("beta", -1.5f)}),
          as, Values(rng, 200 * 96, 1)));
    }
  }
  {
    // ONNX Runtime's FusedMatMul: alpha, transA / transB, transBatchA / transBatchB, a
    // constant B taken as it is (packed once) or transposed first.
    SplitMix64 rng(203);
    const auto F = onnx::TensorProto::FLOAT;
    struct T {
      Shape a, b;
      int ta, tb, tba, tbb;
      float alpha;
    };
    const T ts[] = {{{3, 40, 64}, {64, 50}, 0, 0, 0, 0, 0.5f},
                    {{3, 64, 40}, {50, 64}, 1, 1, 0, 0, 1.0f},
                    {{40, 3, 64}, {3, 64, 50}, 0, 0, 1, 0, -2.0f},
                    {{64, 3, 40}, {64, 3, 50}, 1, 0, 1, 1, 0.125f},
                    {{2, 40, 64}, {2, 50, 64}, 0, 1, 0, 0, 3.0f}};
    for (const T& t : ts) {
      const std::vector<TNode> nodes = {{"com.microsoft.FusedMatMul",
                                         {"X", "B"},
                                         {"Y"},
                                         {AI("transA", t.ta), AI("transB", t.tb), AI("transBatchA", t.tba),
                                          AI("transBatchB", t.tbb), AF("alpha", t.alpha)}}};
      std::vector<double> bv;
      for (float v : Values(rng, Count(t.b), 1)) bv.push_back(v);
      const std::string what = "FusedMatMul transA=" + std::to_string(t.ta) + " transB=" + std::to_string(t.tb) +
                               " transBatchA=" + std::to_string(t.tba) + " transBatchB=" + std::to_string(t.tbb);
      cases.push_back(XCase(what, TypedGraph(t.a, {{"B", F, t.b, bv}}, nodes, {"Y"}), t.a, Values(rng, Count(t.a), 1)));
    }
  }
  return cases;
}

const bool kMatmulRegistered =
    RegisterFamily({"matmul", {"MatMul", "Gemm", "com.microsoft.FusedMatMul"}, &MatmulCases});

}  // namespace

TEST_CASE("ops/matmul: every case at every algorithm equals the oracle", "[ops][exact_paths]") { RunFamily("matmul"); }

}  // namespace test
}  // namespace onemodel::impl
