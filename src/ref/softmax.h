// The reference (oracle) softmax family: Softmax, LogSoftmax and Hardmax (ONNX
// Operators.md) for every node (ref::Softmax, the softmax table's reference row,
// ops/nn/softmax.cpp), and the row kernels of the dispatch table (ref::SoftmaxRowsF32,
// the Softmax rows row's and the fused attention's kernel, and its fast twin
// ref::SoftmaxRowsFmaF32); the per-target kernels in src/kernels/ equal them bit for bit.
#pragma once

#include <cstdint>

#include "core/compute.h"

namespace onemodel::impl {
namespace ref {

// Softmax of one contiguous row of n: m = the IEEE maximum of the row (NaN if any is
// NaN), e[i] = Exp(x[i] - m), s = the canonical L-lane sum of e, out[i] = e[i] / s.
void SoftmaxRowF32(const float* x, float* out, int64_t n);

// `rows` rows of n: row r reads x + r * n and writes y + r * n (y may be x). Each element
// first takes the unfused attention's elementwise steps, as its nodes compute them: t =
// x / scale (scale_op kBinDivF32) or x * scale (kBinMulF32; any other value: no scale),
// then, with a mask, t = t + mask[r * mask_row_stride + j * mask_stride] (IEEE operations,
// ref/elementwise.h's BinaryF32); then SoftmaxRowF32 of the row of t.
void SoftmaxRowsF32(const float* x, float* y, int64_t rows, int64_t n, int32_t scale_op, float scale, const float* mask,
                    int64_t mask_row_stride, int64_t mask_stride);

// Fast mode's exp on u <= 0 (the softmax's x - max): +0 below -87, else the reduction n
// = RoundEven(u * log2(e)), r = fma(-n, C1, u), r = fma(-n, C2, r) (C1 + C2 = ln 2), the
// polynomial of Exp's coefficients in fused multiply-adds (FusedMulAddF32: p = fma(p, r,
// c), then fma(p, r * r, r) + 1), times 2^n (n in [-126, 0]: one rounding). NaN stays
// NaN. Over every float in [-87, 0] its relative error from exp is at most 1.42 u (u =
// 2^-24; measured exhaustively against the C library's double exp, 1.01 ulp); below -87
// the absolute error is under exp(-87) < 1.7e-38.
float ExpFmaNonPositiveF32(float u);

// Fast mode's erf (the Erf step of an elementwise chain in fast sessions on FMA targets,
// ops/fused/fused_ops.cpp), over n values: for |x| <= 1, x * P(x^2) with math::Erf's
// coefficients in fused multiply-adds; above, with a = min(|x|, 4) and t = 1 / fma(p, a,
// 1), erf = 1 - t * Q(t) * ExpFmaNonPositiveF32(-a * a) (Abramowitz and Stegun 7.1.26,
// the polynomial in fused multiply-adds), its sign x's. NaN stays NaN, +-inf give +-1.
// Over every float in [0, 4] (and by symmetry [-4, 0]) with a normal result its relative
// error from erf is at most 3.63 u (measured exhaustively against the C library's double
// erf; 1.83e-7 absolute at most); subnormal results are within one subnormal step.
void ErfFmaF32(const float* x, float* out, int64_t n);

// Fast mode's twin of SoftmaxRowsF32 (the Softmax row "rows-fma" and the fused attention
// in fast sessions): the same elementwise steps and maximum m, then e = ExpFmaNonPositiveF32
// (t - m), s = the canonical L-lane sum of e, and y = e * (1 / s) (the reciprocal rounded
// once, then each product). A NaN anywhere in the row (or an infinite maximum) gives a
// row of NaN, as SoftmaxRowF32's.
void SoftmaxRowsFmaF32(const float* x, float* y, int64_t rows, int64_t n, int32_t scale_op, float scale,
                       const float* mask, int64_t mask_row_stride, int64_t mask_stride);

enum class SoftmaxKind : uint8_t { kSoftmax, kLogSoftmax, kHardmax };

// A Softmax, LogSoftmax or Hardmax node as `outputs` rows of `per_output` elements: row
// o's element i is at flat index base[o] + offsets[i] of x and y (the reduction layout of
// the node's axes, ops/math/reduce_layout.h: the axis from opset 13, the flattened
// trailing block [axis, rank) before). `lanes`: the row's elements form contiguous runs,
// and its sum takes the canonical L-lane order (else it folds left to right).
struct SoftmaxParams {
  SoftmaxKind kind = SoftmaxKind::kSoftmax;
  int64_t outputs = 0, per_output = 0;
  bool lanes = false;
  const int64_t* base = nullptr;     // outputs entries
  const int64_t* offsets = nullptr;  // per_output entries
};

// The family along every row, in the compute type C (f32 for float, float16 and
// bfloat16; f64 for double), each result rounded once to T. Per row: m = the IEEE maximum
// (MaxOf from -inf, in index order), e[i] = Exp(x[i] - m), s = SumOrdered(e) (ref/reduce.h),
// then y[i] = e[i] / s (Softmax) or (x[i] - m) - Log(s) (LogSoftmax). Hardmax: y = 1 at
// the first maximum, 0 elsewhere: best starts at 0 and moves to i when x[i] > x[best] (a
// NaN never does). On a contiguous float row Softmax gives SoftmaxRowF32's bits (the same
// steps). T: float, double, Half, BF16 (the instantiations).
template <class T>
void Softmax(const SoftmaxParams& p, const T* x, T* y);
extern template void Softmax<float>(const SoftmaxParams&, const float*, float*);
extern template void Softmax<double>(const SoftmaxParams&, const double*, double*);
extern template void Softmax<Half>(const SoftmaxParams&, const Half*, Half*);
extern template void Softmax<BF16>(const SoftmaxParams&, const BF16*, BF16*);

}  // namespace ref
}  // namespace onemodel::impl
