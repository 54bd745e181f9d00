// The canonical L-lane contiguous sum on vectors: L/n registers of n lanes each hold
// the L partial sums; the pairwise tree first adds registers, then lanes within one.
// Equal to ref::SumCanonical<L> bit for bit on every target. Compiled per target.
#pragma once

#include "simd/simd.h"

namespace onemodel::impl {
namespace ONEMODEL_NS {

namespace detail {
// The end of the canonical sum: elements [i, n) of x (fewer than L) added to the L/n
// registers' lanes (element i + k to lane k; missing lanes add -0.0, the identity), then
// the pairwise tree: first registers, then lanes within one.
template <size_t L>
float SumCanonicalTail(VF32* acc, const float* x, size_t i, size_t n) {
  constexpr size_t N = Lanes<VF32>();
  constexpr size_t R = L / N;
  for (size_t r = 0; r < R && i + r * N < n; ++r) {
    const size_t left = n - (i + r * N);
    acc[r] = Add(acc[r], LoadN<VF32>(x + i + r * N, left < N ? left : N, -0.0f));
  }
  for (size_t h = R / 2; h >= 1; h /= 2) {
    for (size_t r = 0; r < h; ++r) acc[r] = Add(acc[r], acc[r + h]);
  }
  return ReduceSumTree(acc[0]);
}
}  // namespace detail

namespace detail {
// The canonical sum of f(x[i]) over i < n; kStore: out[i] = f(x[i]) as well (the tail's
// lanes past n are computed but not stored), and the tail is summed from out.
template <size_t L, bool kStore, class F>
float MapSumCanonical(const float* x, float* out, size_t n, F f) {
  constexpr size_t N = Lanes<VF32>();
  static_assert(L % N == 0, "L must be a multiple of the vector width");
  constexpr size_t R = L / N;
  VF32 acc[R];
  for (size_t r = 0; r < R; ++r) acc[r] = Set<VF32>(-0.0f);
  size_t i = 0;
  for (; i + L <= n; i += L) {
    for (size_t r = 0; r < R; ++r) {
      const VF32 v = f(Load<VF32>(x + i + r * N));
      if constexpr (kStore) Store(v, out + i + r * N);
      acc[r] = Add(acc[r], v);
    }
  }
  if constexpr (!kStore) {
    return SumCanonicalTail<L>(acc, x, i, n);
  } else {
    for (size_t j = i; j < n; j += N) {
      const size_t left = n - j;
      if (left >= N)
        Store(f(Load<VF32>(x + j)), out + j);
      else
        StoreN(f(LoadN<VF32>(x + j, left, 0.0f)), out + j, left);
    }
    return SumCanonicalTail<L>(acc, out, i, n);
  }
}
}  // namespace detail

// out[i] = f(x[i]) for i < n (f maps a vector to a vector lane by lane; the tail's
// lanes past n are computed but not stored), and returns the canonical L-lane sum of
// out: one pass where a map and then SumCanonicalVec would take two. x may be out.
template <size_t L, class F>
float MapSumCanonicalVec(const float* x, float* out, size_t n, F f) {
  return detail::MapSumCanonical<L, true>(x, out, n, f);
}

template <size_t L>
float SumCanonicalVec(const float* x, size_t n) {
  return detail::MapSumCanonical<L, false>(x, nullptr, n, [](VF32 v) { return v; });
}

}  // namespace ONEMODEL_NS
}  // namespace onemodel::impl
