// The rotation of RotaryEmbedding (ONNX's and com.microsoft's, ops/nn/rotary.cpp), shared
// with GroupQueryAttention's do_rotary (ops/nn/ms_attention.cpp).
#pragma once

#include <cstdint>

namespace onemodel::impl {
namespace ops {

// Rotates the first 2 * half channels of one head row x into out (the other channels are
// not touched), with the cache rows c and s (half values each): pairs (k, k + half), or
// (2k, 2k + 1) when interleaved, become (c * x1 - s * x2, s * x1 + c * x2), each product
// rounded to f32 (ONNX's reference and ONNX Runtime's CPU kernel).
inline void RotateRow(const float* x, float* out, const float* c, const float* s, int64_t half, bool interleaved) {
  for (int64_t k = 0; k < half; ++k) {
    const int64_t i1 = interleaved ? 2 * k : k, i2 = interleaved ? 2 * k + 1 : k + half;
    const float x1 = x[i1], x2 = x[i2];
    out[i1] = c[k] * x1 - s[k] * x2;
    out[i2] = s[k] * x1 + c[k] * x2;
  }
}

}  // namespace ops
}  // namespace onemodel::impl
