// Per-target helpers shared by the kernels (include after simd/simd.h, which names the
// target's namespace ONEMODEL_NS): pure data movement, no arithmetic, so no bits to match.
#pragma once

#include <cstdint>
#include <cstring>

namespace onemodel {
namespace ONEMODEL_NS {

// dst[q * ds + j] = src[j * ss + q] for j < rows, q < cols (rows, cols <= kL): the rows
// go through a kL x kL tile with constant strides, which compilers turn into shuffles.
template <int64_t kL>
inline void TransposeTile(const float* src, int64_t ss, float* dst, int64_t ds, int64_t rows, int64_t cols) {
  alignas(64) float t[kL * kL];
  if (rows == kL && cols == kL) {
    for (int64_t j = 0; j < kL; ++j) std::memcpy(t + j * kL, src + j * ss, sizeof(float) * size_t(kL));
    alignas(64) float u[kL * kL];
    for (int64_t q = 0; q < kL; ++q)
      for (int64_t j = 0; j < kL; ++j) u[q * kL + j] = t[j * kL + q];
    for (int64_t q = 0; q < kL; ++q) std::memcpy(dst + q * ds, u + q * kL, sizeof(float) * size_t(kL));
    return;
  }
  for (int64_t q = 0; q < cols; ++q)
    for (int64_t j = 0; j < rows; ++j) dst[q * ds + j] = src[j * ss + q];
}

}  // namespace ONEMODEL_NS
}  // namespace onemodel
