// Reference MatMul and Gemm. Each output element has one accumulator that starts at
// -0.0 and folds its K products in index order (exact-contract section 3); narrow
// floats accumulate in f32 and round once; integers wrap.
#include <algorithm>
#include <type_traits>
#include <vector>

#include "ops/ops.h"
#include "ops/parallel.h"
#include "ops/util.h"

namespace onemodel::impl {
namespace ops {
namespace {

template <class C>
C Zero() {
  if constexpr (std::is_floating_point_v<C>)
    return C(-0.0);
  else
    return C(0);
}
template <class C>
C MulAdd(C acc, C a, C b) {
  if constexpr (std::is_floating_point_v<C>) {
    const C p = a * b;  // rounded, then added: never an FMA
    return acc + p;
  } else {
    using U = std::make_unsigned_t<C>;
    return C(U(U(acc) + U(U(a) * U(b))));
  }
}

}  // namespace

void MatMul(OpContext& ctx) {
  const Tensor& a = ctx.in(0);
  const Tensor& b = ctx.in(1);
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
  Tensor& out = ctx.out_uninit(0, a.dtype(), out_shape);  // every element is written
  const auto ia = BroadcastIndex(ba, batch), ib = BroadcastIndex(bb, batch);
  const bool ok = DispatchNumeric(a.dtype(), [&]<class T>() {
    if constexpr (std::is_same_v<T, bool>) {
      throw ctx.Fail(ErrorCode::kTypeMismatch, "bool is not supported");
    } else {
      using C = typename Compute<T>::type;
      const T* pa = a.data<T>();
      const T* pb = b.data<T>();
      T* po = out.mutable_data<T>();
      if constexpr (std::is_same_v<T, float>) {
        // The GEMM kernel (ref::GemmF32's fold: per output, k ascending from -0.0).
        const int threads = ctx.pool ? ctx.pool->threads() : 1;
        const int64_t rows = int64_t(ia.size()) * M;  // A's batches are contiguous rows when B is 2-D
        if (bb.empty() && rows >= 16) {
          if (const Tensor* packed = PackedConstB(ctx, 1, K, N, N, 1)) {
            // A constant 2-D B (a weight), packed once per session.
            ParallelGemmPackedF32(ctx, rows, N, K, pa, K, 1, packed->data<float>(), po, N);
            return;
          }
        }
        if (threads > 1 && int64_t(ia.size()) >= threads && M * N * K < (int64_t(1) << 22)) {
          // Many small products (attention heads): whole products over the threads.
          auto* kernel = ctx.kernels->GemmF32;
          ParallelFor(ctx, int64_t(ia.size()), 1, [&](int64_t b, int64_t e) {
            for (int64_t bi = b; bi < e; ++bi) {
              kernel(M, N, K, pa + ia[size_t(bi)] * M * K, K, 1, pb + ib[size_t(bi)] * K * N, N, 1, po + bi * M * N, N);
            }
          });
          return;
        }
        for (size_t bi = 0; bi < ia.size(); ++bi) {
          ParallelGemmF32(ctx, M, N, K, pa + ia[bi] * M * K, K, 1, pb + ib[bi] * K * N, N, 1, po + int64_t(bi) * M * N,
                          N);
        }
        return;
      }
      // One row of accumulators at a time: every output still folds its K products in
      // index order from -0.0; the n loop only visits B's rows contiguously.
      std::vector<C> acc(static_cast<size_t>(N));
      for (size_t bi = 0; bi < ia.size(); ++bi) {
        const T* A = pa + ia[bi] * M * K;
        const T* B = pb + ib[bi] * K * N;
        T* O = po + int64_t(bi) * M * N;
        for (int64_t m = 0; m < M; ++m) {
          std::fill(acc.begin(), acc.end(), Zero<C>());
          for (int64_t k = 0; k < K; ++k) {
            const C x = Widen(A[m * K + k]);
            const T* brow = B + k * N;
            for (int64_t n = 0; n < N; ++n) acc[size_t(n)] = MulAdd<C>(acc[size_t(n)], x, Widen(brow[n]));
          }
          for (int64_t n = 0; n < N; ++n) O[m * N + n] = Narrow<T>(acc[size_t(n)]);
        }
      }
    }
  });
  if (!ok) throw ctx.Fail(ErrorCode::kTypeMismatch, "element type " + DTypeName(a.dtype()) + " is not supported");
}

// Y = alpha * (A' B') + beta * C: the full sum first, then alpha, then the bias.
void Gemm(OpContext& ctx) {
  const Tensor& a = ctx.in(0);
  const Tensor& b = ctx.in(1);
  const bool ta = ctx.attr_i("transA", 0) != 0, tb = ctx.attr_i("transB", 0) != 0;
  const float alpha = ctx.attr_f("alpha", 1.0f), beta = ctx.attr_f("beta", 1.0f);
  if (a.rank() != 2 || b.rank() != 2) throw ctx.Fail(ErrorCode::kShapeMismatch, "A and B must be 2-D");
  if (a.dtype() != b.dtype()) throw ctx.Fail(ErrorCode::kTypeMismatch, "A and B have different element types");
  const int64_t M = ta ? a.shape()[1] : a.shape()[0], K = ta ? a.shape()[0] : a.shape()[1];
  const int64_t K2 = tb ? b.shape()[1] : b.shape()[0], N = tb ? b.shape()[0] : b.shape()[1];
  if (K != K2) throw ctx.Fail(ErrorCode::kShapeMismatch, "A and B do not agree on K");
  const bool has_c = ctx.has_input(2);
  // C broadcast to [M, N] (numpy rules): element (m, n) reads C at m * c_sm + n * c_sn.
  int64_t c_sm = 0, c_sn = 0;
  if (has_c) {
    ctx.RequireInputType(ctx.in(2), a.dtype(), "C");
    const Shape& cs = ctx.in(2).shape();
    const int64_t cm = cs.size() == 2 ? cs[0] : 1, cn = cs.empty() ? 1 : cs.back();
    if (cs.size() > 2 || (cm != 1 && cm != M) || (cn != 1 && cn != N))
      throw ctx.Fail(ErrorCode::kShapeMismatch,
                     "C " + ShapeToString(cs) + " must broadcast to [M, N] = " + ShapeToString(Shape{M, N}));
    c_sn = cn == 1 ? 0 : 1;
    c_sm = cm == 1 ? 0 : cn;
  }
  Tensor& out = ctx.out_uninit(0, a.dtype(), {M, N});  // every element is written
  const bool ok = DispatchNumeric(a.dtype(), [&]<class T>() {
    if constexpr (std::is_same_v<T, bool>) {
      throw ctx.Fail(ErrorCode::kTypeMismatch, "bool is not supported");
    } else {
      using C = typename Compute<T>::type;
      const T* pa = a.data<T>();
      const T* pb = b.data<T>();
      const T* pc = has_c ? ctx.in(2).template data<T>() : nullptr;
      T* po = out.mutable_data<T>();
      if constexpr (std::is_same_v<T, float>) {
        // The full sums by the GEMM kernel, then alpha and the bias as below. A constant
        // transposed B is stored as [K, N] once (row-major rows serve every kernel path).
        // A constant B is packed once per session for many rows, and, transposed, stored
        // as [K, N] once for few rows (row-major rows serve the matrix-vector kernels).
        const Tensor* packed = M >= 16 ? PackedConstB(ctx, 1, K, N, tb ? 1 : N, tb ? K : 1) : nullptr;
        const Tensor* bt =
            !packed && tb && ctx.kernels
                ? ctx.ConstDerived(1, "B^T", [&](const Tensor& t) { return TransposedF32(t.data<float>(), N, K); })
                : nullptr;
        if (packed)
          ParallelGemmPackedF32(ctx, M, N, K, pa, ta ? 1 : K, ta ? M : 1, packed->data<float>(), po, N);
        else if (bt)
          ParallelGemmF32(ctx, M, N, K, pa, ta ? 1 : K, ta ? M : 1, bt->data<float>(), N, 1, po, N);
        else
          ParallelGemmF32(ctx, M, N, K, pa, ta ? 1 : K, ta ? M : 1, pb, tb ? 1 : N, tb ? K : 1, po, N);
        for (int64_t m = 0; m < M; ++m)
          for (int64_t n = 0; n < N; ++n) {
            float r = alpha * po[m * N + n];
            if (has_c) r = r + beta * pc[m * c_sm + n * c_sn];
            po[m * N + n] = r;
          }
        return;
      }
      for (int64_t m = 0; m < M; ++m) {
        for (int64_t n = 0; n < N; ++n) {
          C acc = Zero<C>();
          for (int64_t k = 0; k < K; ++k) {
            const C x = Widen(ta ? pa[k * M + m] : pa[m * K + k]);
            const C y = Widen(tb ? pb[n * K + k] : pb[k * N + n]);
            acc = MulAdd<C>(acc, x, y);
          }
          C r = acc;
          if constexpr (std::is_floating_point_v<C>)
            r = C(alpha) * acc;
          else
            r = C(typename std::make_unsigned_t<C>(C(alpha)) * typename std::make_unsigned_t<C>(acc));
          if (has_c) {
            const C cv = Widen(pc[m * c_sm + n * c_sn]);
            if constexpr (std::is_floating_point_v<C>)
              r = r + C(beta) * cv;
            else
              r = C(typename std::make_unsigned_t<C>(r) +
                    typename std::make_unsigned_t<C>(C(beta)) * typename std::make_unsigned_t<C>(cv));
          }
          po[m * N + n] = Narrow<T>(r);
        }
      }
    }
  });
  if (!ok) throw ctx.Fail(ErrorCode::kTypeMismatch, "element type " + DTypeName(a.dtype()) + " is not supported");
}

}  // namespace ops
}  // namespace onemodel::impl
