// Splitting an operator's independent outputs over the session's threads, and the
// dispatched GEMM with that split. A chunk boundary never falls inside a fold, so the
// thread count changes speed, never bits (exact-contract section 3).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <string>

#include "core/function_ref.h"
#include "core/threadpool.h"
#include "ref/gemm.h"
#include "ops/op_context.h"

namespace onemodel::impl {
namespace ops {

// Calls fn(begin, end) over chunks of [0, n), each at least `grain` long, on the
// session's threads (inline when it has one, or n is small).
inline void ParallelFor(const OpContext& ctx, int64_t n, int64_t grain, FunctionRef<void(int64_t, int64_t)> fn) {
  if (n <= 0) return;
  if (!ctx.pool || ctx.pool->threads() <= 1 || n < 2 * grain) {
    fn(0, n);
    return;
  }
  ctx.pool->ParallelFor(n, grain, fn);
}

// Output 0 = f(input 0) elementwise for a float input: fn(x, out, n) over chunks of
// `chunk` elements, split over the threads, into a new output. Returns false (nothing
// done) for other element types.
inline bool MapChunksF32(OpContext& ctx, int64_t chunk, FunctionRef<void(const float*, float*, int64_t)> fn) {
  const Tensor& x = ctx.in(0);
  if (x.dtype() != DType::kFloat) return false;
  Tensor out = ctx.NewTensor(DType::kFloat, x.shape(), false, "output");
  const float* px = x.data<float>();
  float* po = out.mutable_data<float>();
  const int64_t n = x.numel();
  ParallelFor(ctx, (n + chunk - 1) / chunk, std::max<int64_t>(1, 32768 / chunk), [&](int64_t b, int64_t e) {
    for (int64_t c = b; c < e; ++c) fn(px + c * chunk, po + c * chunk, std::min(chunk, n - c * chunk));
  });
  ctx.set_out(0, std::move(out));
  return true;
}

// out = a op b for float tensors broadcast to out's shape (numpy rules; out allocated by
// the caller), op a BinaryOpF32 code: runs handed to the session's BinaryF32 kernel
// (ref::BinaryF32 without a table), split over the threads. Defined in elementwise.cpp.
void BroadcastBinaryF32(const OpContext& ctx, int32_t code, const Tensor& a, const Tensor& b, Tensor& out);

// The float fast path of a unary operator: the session's UnaryF32 (op, p0, p1:
// ref/elementwise.h) over chunks, split over threads. Returns false (nothing
// done) without a kernel table or for other element types.
inline bool UnaryFastF32(OpContext& ctx, int32_t op, float p0 = 0.0f, float p1 = 0.0f) {
  auto* kernel = ctx.kernels->UnaryF32;
  return MapChunksF32(ctx, 4096, [&](const float* x, float* y, int64_t n) { kernel(op, p0, p1, x, y, n); });
}

// The session's float GEMM kernels a product runs: the exact ones, or (fma: a fast row
// planned it) their fused multiply-add twins (ref/gemm.h GemmFmaF32 and the others).
struct GemmFns {
  decltype(KernelTable::GemmF32) plain;
  decltype(KernelTable::GemmBiasActF32) bias_act;
  decltype(KernelTable::GemmPackedF32) packed;
  decltype(KernelTable::GemmPackedIndirectF32) packed_indirect;
};
inline GemmFns GemmFnsOf(const OpContext& ctx, bool fma) {
  const KernelTable& k = *ctx.kernels;
  if (fma) return {k.GemmFmaF32, k.GemmBiasActFmaF32, k.GemmPackedFmaF32, k.GemmPackedIndirectFmaF32};
  return {k.GemmF32, k.GemmBiasActF32, k.GemmPackedF32, k.GemmPackedIndirectF32};
}

// The session's GEMM kernel (ref::GemmF32 when the context has no table), with C's
// columns or rows split over the threads. With row_bias or an activation it is the session's
// GemmBiasActF32: each finished row m of C takes + row_bias[m], then the activation.
// fma: the twins (GemmFnsOf).
inline void ParallelGemmF32(const OpContext& ctx, int64_t M, int64_t N, int64_t K, const float* A, int64_t a_rs,
                            int64_t a_cs, const float* B, int64_t b_rs, int64_t b_cs, float* C, int64_t ldc,
                            const float* row_bias = nullptr, Activation act = Activation::kNone, bool fma = false) {
  const bool epi = row_bias || act != Activation::kNone;
  const GemmFns fns = GemmFnsOf(ctx, fma);
  auto* plain = fns.plain;
  auto* fused = fns.bias_act;
  auto kernel = [&](int64_t m, int64_t n, int64_t k, const float* a, int64_t ars, int64_t acs, const float* b,
                    int64_t brs, int64_t bcs, float* c, int64_t ldc_, const float* bias) {
    if (epi)
      fused(m, n, k, a, ars, acs, b, brs, bcs, c, ldc_, bias, act);
    else
      plain(m, n, k, a, ars, acs, b, brs, bcs, c, ldc_);
  };
  if (N == 1 && M > 1 && ctx.VectorKernels() && ldc == 1) {
    // A matrix-vector product: as C^T = B^T A^T, one row of M outputs (contiguous when
    // C's rows are one element apart), each still folding k in order from -0.0; the
    // epilogue then per element (row m of C is element m of that row).
    plain(1, M, K, B, 0, b_rs, A, a_cs, a_rs, C, M);
    if (epi)
      for (int64_t m = 0; m < M; ++m) ref::EpilogueF32(C + m, 1, row_bias ? row_bias + m : nullptr, act);
    return;
  }
  const int threads = ctx.pool ? ctx.pool->threads() : 1;
  // Below ~64k multiply-adds a split costs more than it saves.
  if (threads <= 1 || M * N * K < (int64_t(1) << 16)) {
    kernel(M, N, K, A, a_rs, a_cs, B, b_rs, b_cs, C, ldc, row_bias);
    return;
  }
  // Columns when each thread gets at least 256 (it then packs only its own part of B),
  // else rows when there are enough, else columns anyway.
  if (N < 256 * threads && M >= 16 * threads) {
    ParallelFor(ctx, M, 16, [&](int64_t b, int64_t e) {
      kernel(e - b, N, K, A + b * a_rs, a_rs, a_cs, B, b_rs, b_cs, C + b * ldc, ldc, row_bias ? row_bias + b : nullptr);
    });
  } else {
    // Column chunks of whole 64-column groups.
    const int64_t groups = (N + 63) / 64;
    ParallelFor(ctx, groups, 1, [&](int64_t b, int64_t e) {
      const int64_t n0 = b * 64, n1 = std::min(N, e * 64);
      kernel(M, n1 - n0, K, A, a_rs, a_cs, B + n0 * b_cs, b_rs, b_cs, C + n0, ldc, row_bias);
    });
  }
}

// The GEMM against a B packed once by the session's GemmPackBF32 (from
// OpContext::ConstDerived, see PackedConstB): C's rows or its columns, in groups of 64,
// over the threads; the epilogue as in ParallelGemmF32.
inline void ParallelGemmPackedF32(const OpContext& ctx, int64_t M, int64_t N, int64_t K, const float* A, int64_t a_rs,
                                  int64_t a_cs, const float* packed, float* C, int64_t ldc,
                                  const float* row_bias = nullptr, Activation act = Activation::kNone,
                                  bool fma = false) {
  auto* kernel = GemmFnsOf(ctx, fma).packed;
  const int threads = ctx.pool ? ctx.pool->threads() : 1;
  if (threads <= 1 || M * N * K < (int64_t(1) << 16)) {
    kernel(M, N, K, A, a_rs, a_cs, packed, 0, N, C, ldc, row_bias, act);
  } else if (N < 256 * threads && M >= 16 * threads) {
    ParallelFor(ctx, M, 16, [&](int64_t b, int64_t e) {
      kernel(e - b, N, K, A + b * a_rs, a_rs, a_cs, packed, 0, N, C + b * ldc, ldc, row_bias ? row_bias + b : nullptr,
             act);
    });
  } else {
    const int64_t groups = (N + 63) / 64;
    ParallelFor(ctx, groups, 1, [&](int64_t b, int64_t e) {
      const int64_t n0 = b * 64, n1 = std::min(N, e * 64);
      kernel(M, N, K, A, a_rs, a_cs, packed, n0, n1, C + n0, ldc, row_bias, act);
    });
  }
}

// Input `input` (a float K x N matrix, B(k, n) = B[k * b_rs + n * b_cs]) packed for the
// session's GEMM kernel, made once per session when the input is constant; null when it
// is not constant, the session runs the reference kernels, or the session's prepack option is off (the
// packed copy costs as much memory as the weight: measured, it saves little on one
// thread and keeps two threads from each packing their share on every run).
inline const Tensor* PackedConstB(const OpContext& ctx, size_t input, int64_t K, int64_t N, int64_t b_rs,
                                  int64_t b_cs) {
  if (!ctx.prepack || !ctx.VectorKernels()) return nullptr;
  auto* pack = ctx.kernels->GemmPackBF32;
  return ctx.ConstDerived(input, "packed B", [&](const Tensor& t) {
    Tensor p =
        Tensor::Uninitialized(DType::kFloat, Shape{std::max<int64_t>(ref::GemmPackedFloats(K, N), 1)}, "packed weight");
    pack(K, N, t.data<float>(), b_rs, b_cs, p.mutable_data<float>());
    return p;
  });
}

}  // namespace ops
}  // namespace onemodel::impl
