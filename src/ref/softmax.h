// The reference (oracle) softmax family: Softmax, LogSoftmax and Hardmax (ONNX
// Operators.md) for every node (ref::Softmax, the softmax table's reference row,
// ops/nn/softmax.cpp), and the row kernel of the dispatch table (ref::SoftmaxRowF32,
// the Softmax row's kernel); the per-target kernels in src/kernels/ equal it bit for bit.
#pragma once

#include <cstdint>

#include "core/compute.h"

namespace onemodel::impl {
namespace ref {

// Softmax of one contiguous row of n: m = the IEEE maximum of the row (NaN if any is
// NaN), e[i] = Exp(x[i] - m), s = the canonical L-lane sum of e, out[i] = e[i] / s.
void SoftmaxRowF32(const float* x, float* out, int64_t n);

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
