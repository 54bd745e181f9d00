// Per-target helpers shared by the kernels (include after simd/simd.h, which names the
// target's namespace ONEMODEL_NS): pure data movement, no arithmetic, so no bits to match.
#pragma once

#include <cstdint>
#include <cstring>

namespace onemodel::impl {
namespace ONEMODEL_NS {

// dst[q * ds + j] = src[j * ss + q] for j < rows, q < cols (rows, cols <= kL, the lane
// count): a whole tile goes through the vocabulary's TransposeSquare (shuffles), partial
// ones element by element.
template <int64_t kL>
inline void TransposeTile(const float* src, int64_t ss, float* dst, int64_t ds, int64_t rows, int64_t cols) {
  static_assert(kL == int64_t(Lanes<VF32>()), "a tile is lanes x lanes");
  if (rows == kL && cols == kL) {
    VF32 v[kL];
    for (int64_t j = 0; j < kL; ++j) v[j] = Load<VF32>(src + j * ss);
    TransposeSquare(v);
    for (int64_t q = 0; q < kL; ++q) Store(v[q], dst + q * ds);
    return;
  }
  for (int64_t q = 0; q < cols; ++q)
    for (int64_t j = 0; j < rows; ++j) dst[q * ds + j] = src[j * ss + q];
}

}  // namespace ONEMODEL_NS
}  // namespace onemodel::impl
