// The reference (oracle) softmax kernel of the dispatch table (the Softmax operator's
// row, ops/nn/softmax.cpp); the per-target kernels in src/kernels/ equal it bit for bit.
#pragma once

#include <cstdint>

namespace onemodel::impl {
namespace ref {

// Softmax of one contiguous row of n: m = the IEEE maximum of the row (NaN if any is
// NaN), e[i] = Exp(x[i] - m), s = the canonical L-lane sum of e, out[i] = e[i] / s.
void SoftmaxRowF32(const float* x, float* out, int64_t n);

}  // namespace ref
}  // namespace onemodel::impl
