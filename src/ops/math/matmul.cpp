// MatMul (and ONNX Runtime's FusedMatMul) and Gemm: the node validated into its parameters, then the row of its
// family's table (ops/math/matmul.h) the plan takes. The definition is ref/gemm.h (ref::MatMul, ref::Gemm): each output
// element has one accumulator that starts at -0.0 and folds its K products in index order (exact-contract section 3);
// narrow floats accumulate in f32 and round once; integers wrap. Kernels: src/kernels/gemm.cpp; tests:
// tests/ops/math/matmul_test.cpp.
#include "ops/math/matmul.h"

#include <algorithm>
#include <type_traits>
#include <vector>

#include "ops/ops.h"
#include "ops/parallel.h"
#include "ops/util.h"
#include "ref/transpose.h"

namespace onemodel::impl {
namespace ops {
namespace {

bool FloatOperands(const MatMulParams& p) { return p.a->dtype() == DType::kFloat; }
bool FloatGemm(const GemmNode& g) { return g.a->dtype() == DType::kFloat; }

// The definition for the node's element type (bool is refused when parsed).
void MatMulReference(const OpContext&, const MatMulParams& p) {
  DispatchNumeric(p.a->dtype(), [&]<class T>() {
    if constexpr (!std::is_same_v<T, bool>)
      ref::MatMul<T>(p.batches, p.ia, p.ib, p.M, p.N, p.K, p.a->data<T>(), p.b->data<T>(), p.out->mutable_data<T>());
  });
}

// Fast rows: the GEMM twins run on hardware fused multiply-adds (elsewhere the exact row
// is as fast and gives the oracle's bits).
bool FmaChosen(const MatMulParams& p) { return p.fma; }
bool FmaGemmChosen(const GemmNode& g) { return g.fma; }

// The GEMM kernel (ref::GemmF32's fold: per output, k ascending from -0.0); kFma: its
// fused multiply-add twins (ref::GemmFmaF32's fold, fast rows).
template <bool kFma>
void MatMulGemm(const OpContext& ctx, const MatMulParams& p) {
  const int64_t M = p.M, N = p.N, K = p.K;
  const float* pa = p.a->data<float>();
  const float* pb = p.b->data<float>();
  float* po = p.out->mutable_data<float>();
  const int threads = ctx.pool ? ctx.pool->threads() : 1;
  const int64_t rows = p.batches * M;  // A's batches are contiguous rows when B is 2-D
  if (p.b_2d && rows >= 16) {
    if (const Tensor* packed = PackedConstB(ctx, 1, K, N, N, 1)) {
      // A constant 2-D B (a weight), packed once per session.
      ParallelGemmPackedF32(ctx, rows, N, K, pa, K, 1, packed->data<float>(), po, N, nullptr, Activation::kNone, kFma);
      return;
    }
  }
  if (threads > 1 && p.batches >= threads && M * N * K < (int64_t(1) << 22)) {
    // Many small products (attention heads): whole products over the threads.
    auto* kernel = GemmFnsOf(ctx, kFma).plain;
    ParallelFor(ctx, p.batches, 1, [&](int64_t b, int64_t e) {
      for (int64_t bi = b; bi < e; ++bi)
        kernel(M, N, K, pa + p.ia[bi] * M * K, K, 1, pb + p.ib[bi] * K * N, N, 1, po + bi * M * N, N);
    });
    return;
  }
  for (int64_t bi = 0; bi < p.batches; ++bi)
    ParallelGemmF32(ctx, M, N, K, pa + p.ia[bi] * M * K, K, 1, pb + p.ib[bi] * K * N, N, 1, po + bi * M * N, N, nullptr,
                    Activation::kNone, kFma);
}

constexpr const char* kMatMulOps[] = {"MatMul", "com.microsoft.FusedMatMul"};
constexpr AlgorithmRow<MatMulParams, MatMulRun> kMatMulRows[] = {
    {"reference", Exactness::kExact, "", nullptr, nullptr, MatMulReference},
    {"gemm-fma", Exactness::kFast, "GemmFmaF32, GemmBiasActFmaF32, GemmPackBF32, GemmPackedFmaF32", FloatOperands,
     FmaChosen, MatMulGemm<true>},
    {"gemm", Exactness::kExact, "GemmF32, GemmBiasActF32, GemmPackBF32, GemmPackedF32", FloatOperands, nullptr,
     MatMulGemm<false>},
};

void GemmReference(const OpContext&, const GemmNode& g) {
  DispatchNumeric(g.a->dtype(), [&]<class T>() {
    if constexpr (!std::is_same_v<T, bool>)
      ref::Gemm<T>(g.p, g.a->data<T>(), g.b->data<T>(), g.c ? g.c->data<T>() : nullptr, g.out->mutable_data<T>());
  });
}

// The full sums by the GEMM kernel, then alpha and the bias as the reference. A constant
// B is packed once per session for many rows, and, transposed, stored as [K, N] once for
// few rows (row-major rows serve the matrix-vector kernels).
template <bool kFma>
void GemmKernels(const OpContext& ctx, const GemmNode& g) {
  const ref::GemmParams& p = g.p;
  const int64_t M = p.M, N = p.N, K = p.K;
  const float* pa = g.a->data<float>();
  const float* pb = g.b->data<float>();
  const float* pc = g.c ? g.c->data<float>() : nullptr;
  float* po = g.out->mutable_data<float>();
  const bool ta = p.ta, tb = p.tb;
  const Tensor* packed = M >= 16 ? PackedConstB(ctx, 1, K, N, tb ? 1 : N, tb ? K : 1) : nullptr;
  const Tensor* bt =
      !packed && tb && ctx.kernels
          ? ctx.ConstDerived(1, "B^T", [&](const Tensor& t) { return TransposedF32(t.data<float>(), N, K); })
          : nullptr;
  constexpr Activation kNone = Activation::kNone;
  if (packed)
    ParallelGemmPackedF32(ctx, M, N, K, pa, ta ? 1 : K, ta ? M : 1, packed->data<float>(), po, N, nullptr, kNone, kFma);
  else if (bt)
    ParallelGemmF32(ctx, M, N, K, pa, ta ? 1 : K, ta ? M : 1, bt->data<float>(), N, 1, po, N, nullptr, kNone, kFma);
  else
    ParallelGemmF32(ctx, M, N, K, pa, ta ? 1 : K, ta ? M : 1, pb, tb ? 1 : N, tb ? K : 1, po, N, nullptr, kNone, kFma);
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) {
      float r = p.alpha * po[m * N + n];
      if (p.has_c) r = r + p.beta * pc[m * p.c_sm + n * p.c_sn];
      po[m * N + n] = r;
    }
}

constexpr const char* kGemmOps[] = {"Gemm"};
constexpr AlgorithmRow<GemmNode, GemmRun> kGemmRows[] = {
    {"reference", Exactness::kExact, "", nullptr, nullptr, GemmReference},
    {"gemm-fma", Exactness::kFast, "GemmFmaF32, GemmBiasActFmaF32, GemmPackBF32, GemmPackedFmaF32", FloatGemm,
     FmaGemmChosen, GemmKernels<true>},
    {"gemm", Exactness::kExact, "GemmF32, GemmBiasActF32, GemmPackBF32, GemmPackedF32", FloatGemm, nullptr,
     GemmKernels<false>},
};

// The element types MatMul and Gemm take: the numeric ones but bool.
void RequireNumeric(const OpContext& ctx, DType dt) {
  if (dt == DType::kBool) throw ctx.Fail(ErrorCode::kTypeMismatch, "bool is not supported");
  if (!DispatchNumeric(dt, []<class T>() {}))
    throw ctx.Fail(ErrorCode::kTypeMismatch, "element type " + DTypeName(dt) + " is not supported");
}

}  // namespace

const FamilyTable<MatMulParams, MatMulRun>& MatMulTable() {
  static constexpr FamilyTable<MatMulParams, MatMulRun> kTable{"matmul", kMatMulOps, kMatMulRows};
  return kTable;
}
const FamilyTable<GemmNode, GemmRun>& GemmTable() {
  static constexpr FamilyTable<GemmNode, GemmRun> kTable{"gemm", kGemmOps, kGemmRows};
  return kTable;
}

namespace {

// MatMul of a and b (numpy matmul: 1-D operands promoted, batches broadcast) into output
// 0; b_is_input: b is the node's input 1 as it is (a constant one may be packed once).
void MatMulOf(OpContext& ctx, const Tensor& a, const Tensor& b, bool b_is_input) {
  if (a.dtype() != b.dtype()) throw ctx.Fail(ErrorCode::kTypeMismatch, "A and B have different element types");
  if (a.rank() == 0 || b.rank() == 0) throw ctx.Fail(ErrorCode::kShapeMismatch, "MatMul inputs must have rank >= 1");
  Shape sa = a.shape(), sb = b.shape();
  const bool a1 = sa.size() == 1, b1 = sb.size() == 1;
  if (a1) sa.insert(sa.begin(), 1);
  if (b1) sb.push_back(1);
  const int64_t M = sa[sa.size() - 2], K = sa.back(), N = sb.back();
  if (sb[sb.size() - 2] != K) {
    throw ctx.Fail(ErrorCode::kShapeMismatch,
                   "A " + ShapeToString(a.shape()) + " and B " + ShapeToString(b.shape()) + " do not agree on K");
  }
  const Shape ba(sa.begin(), sa.end() - 2), bb(sb.begin(), sb.end() - 2);
  const Shape batch = BroadcastShapes(ctx, {ba, bb});
  Shape out_shape = batch;
  if (!a1) out_shape.push_back(M);
  if (!b1) out_shape.push_back(N);
  RequireNumeric(ctx, a.dtype());
  Tensor& out = ctx.out_uninit(0, a.dtype(), out_shape);  // every element is written
  const auto ia = BroadcastIndex(ba, batch), ib = BroadcastIndex(bb, batch);
  const MatMulParams p{
      &a, &b, &out, int64_t(ia.size()), M, N, K, ia.data(), ib.data(), bb.empty() && b_is_input, ctx.kernels->fma_f32};
  PlanRow(ctx, MatMulTable(), p).run(ctx, p);
}

// FusedMatMul's operand: t with its leading axis moved before the last (trans_batch: axes
// [1, r-1) are the batch, axis 0 the rows) and then its last two axes swapped (trans);
// t itself when neither applies.
Tensor Operand(const Tensor& t, bool trans, bool trans_batch) {
  const int64_t r = t.rank();
  if (r < 2 || (!trans && !trans_batch)) return t;
  Shape perm;
  if (trans_batch) {
    for (int64_t i = 1; i < r - 1; ++i) perm.push_back(i);
    perm.push_back(0);
  } else {
    for (int64_t i = 0; i < r - 1; ++i) perm.push_back(i);
  }
  perm.push_back(r - 1);
  if (trans) std::swap(perm[size_t(r - 2)], perm[size_t(r - 1)]);
  Shape s;
  for (int64_t i : perm) s.push_back(t.shape()[size_t(i)]);
  Tensor out(t.dtype(), s);
  ref::Transpose(perm, t, out);
  return out;
}

}  // namespace

void MatMul(OpContext& ctx) { MatMulOf(ctx, ctx.in(0), ctx.in(1), true); }

// ONNX Runtime's FusedMatMul (com.microsoft): Y = alpha * (A' B'), A' and B' the operands
// transposed as transA / transB and transBatchA / transBatchB say (Operand; a transBatch
// needs A and B of one rank, 3 or more). The product is MatMul's (its table plans it), then
// each element times alpha once (none when alpha is 1; narrow floats: the rounded product).
void FusedMatMul(OpContext& ctx) {
  const Tensor& a = ctx.in(0);
  const Tensor& b = ctx.in(1);
  const bool ta = ctx.attr_i("transA", 0) != 0, tb = ctx.attr_i("transB", 0) != 0;
  const bool tba = ctx.attr_i("transBatchA", 0) != 0, tbb = ctx.attr_i("transBatchB", 0) != 0;
  const float alpha = ctx.attr_f("alpha", 1.0f);
  if ((tba || tbb) && (a.rank() != b.rank() || a.rank() < 3))
    throw ctx.Fail(ErrorCode::kShapeMismatch, "transBatchA / transBatchB need A and B of one rank, 3 or more: A " +
                                                  ShapeToString(a.shape()) + ", B " + ShapeToString(b.shape()));
  if (a.dtype() != DType::kFloat && a.dtype() != DType::kFloat16 && a.dtype() != DType::kBFloat16 &&
      a.dtype() != DType::kDouble)
    throw ctx.Fail(ErrorCode::kTypeMismatch,
                   "A must be float, float16, bfloat16 or double, got " + DTypeName(a.dtype()));
  const Tensor a2 = Operand(a, ta, tba), b2 = Operand(b, tb, tbb);
  MatMulOf(ctx, a2, b2, b2.raw() == b.raw());
  if (alpha == 1.0f) return;
  Tensor& y = ctx.outputs[0].tensor;
  const int64_t n = y.numel();
  if (y.dtype() == DType::kDouble) {
    for (int64_t i = 0; i < n; ++i) y.mutable_data<double>()[i] *= double(alpha);
  } else if (y.dtype() == DType::kFloat) {
    float* py = y.mutable_data<float>();
    ParallelFor(ctx, n, 16384, [&](int64_t b0, int64_t e0) {
      for (int64_t i = b0; i < e0; ++i) py[i] = alpha * py[i];
    });
  } else {
    const std::vector<float> w = ToF32(ctx, y);  // one widened copy: y is rewritten in place
    for (int64_t i = 0; i < n; ++i) StoreF32(y, i, alpha * w[size_t(i)]);
  }
}

// Y = alpha * (A' B') + beta * C: the full sum first, then alpha, then the bias.
void Gemm(OpContext& ctx) {
  const Tensor& a = ctx.in(0);
  const Tensor& b = ctx.in(1);
  GemmNode g;
  ref::GemmParams& p = g.p;
  p.ta = ctx.attr_i("transA", 0) != 0;
  p.tb = ctx.attr_i("transB", 0) != 0;
  p.alpha = ctx.attr_f("alpha", 1.0f);
  p.beta = ctx.attr_f("beta", 1.0f);
  if (a.rank() != 2 || b.rank() != 2) throw ctx.Fail(ErrorCode::kShapeMismatch, "A and B must be 2-D");
  if (a.dtype() != b.dtype()) throw ctx.Fail(ErrorCode::kTypeMismatch, "A and B have different element types");
  p.M = p.ta ? a.shape()[1] : a.shape()[0];
  p.K = p.ta ? a.shape()[0] : a.shape()[1];
  const int64_t K2 = p.tb ? b.shape()[1] : b.shape()[0];
  p.N = p.tb ? b.shape()[0] : b.shape()[1];
  if (p.K != K2) throw ctx.Fail(ErrorCode::kShapeMismatch, "A and B do not agree on K");
  p.has_c = ctx.has_input(2);
  // C broadcast to [M, N] (numpy rules): element (m, n) reads C at m * c_sm + n * c_sn.
  if (p.has_c) {
    ctx.RequireInputType(ctx.in(2), a.dtype(), "C");
    const Shape& cs = ctx.in(2).shape();
    const int64_t cm = cs.size() == 2 ? cs[0] : 1, cn = cs.empty() ? 1 : cs.back();
    if (cs.size() > 2 || (cm != 1 && cm != p.M) || (cn != 1 && cn != p.N))
      throw ctx.Fail(ErrorCode::kShapeMismatch,
                     "C " + ShapeToString(cs) + " must broadcast to [M, N] = " + ShapeToString(Shape{p.M, p.N}));
    p.c_sn = cn == 1 ? 0 : 1;
    p.c_sm = cm == 1 ? 0 : cn;
    g.c = &ctx.in(2);
  }
  RequireNumeric(ctx, a.dtype());
  g.a = &a;
  g.b = &b;
  g.out = &ctx.out_uninit(0, a.dtype(), {p.M, p.N});  // every element is written
  g.fma = ctx.kernels->fma_f32;
  PlanRow(ctx, GemmTable(), g).run(ctx, g);
}

}  // namespace ops
}  // namespace onemodel::impl
