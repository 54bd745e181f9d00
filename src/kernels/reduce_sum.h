// The canonical L-lane contiguous sum on vectors: L/n registers of n lanes each hold
// the L partial sums; the pairwise tree first adds registers, then lanes within one.
// Equal to ref::SumCanonical<L> bit for bit on every target. Compiled per target.
#pragma once

#include "simd/simd.h"

namespace onemodel::impl {
namespace ONEMODEL_NS {

template <size_t L>
float SumCanonicalVec(const float* x, size_t n) {
  constexpr size_t N = Lanes<VF32>();
  static_assert(L % N == 0, "L must be a multiple of the vector width");
  constexpr size_t R = L / N;
  VF32 acc[R];
  for (size_t r = 0; r < R; ++r) acc[r] = Set<VF32>(-0.0f);
  size_t i = 0;
  for (; i + L <= n; i += L) {
    for (size_t r = 0; r < R; ++r) acc[r] = Add(acc[r], Load<VF32>(x + i + r * N));
  }
  // Tail: element i + k belongs to lane k; missing lanes add -0.0 (the identity).
  for (size_t r = 0; r < R && i + r * N < n; ++r) {
    const size_t left = n - (i + r * N);
    acc[r] = Add(acc[r], LoadN<VF32>(x + i + r * N, left < N ? left : N, -0.0f));
  }
  for (size_t h = R / 2; h >= 1; h /= 2) {
    for (size_t r = 0; r < h; ++r) acc[r] = Add(acc[r], acc[r + h]);
  }
  return ReduceSumTree(acc[0]);
}

}  // namespace ONEMODEL_NS
}  // namespace onemodel::impl
