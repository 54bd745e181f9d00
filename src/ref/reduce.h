// Reference (oracle) reductions: the canonical L-lane order along one contiguous run
// (exact-contract section 3), the ordered sum of a reduction's elements, IEEE 754-2019
// max/min, and Exp/Log in the compute type (the reductions of ops/math/reduce.cpp and
// the softmax family of ref/softmax.h fold with these).
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "core/exact.h"
#include "ref/math.h"

namespace onemodel::impl {
namespace ref {

// Returns the sum of x[0..n) in the canonical L-lane order of exact-contract section 3:
// partial sum j (0 <= j < L) starts at -0.0 and folds x[i] for i mod L == j in index
// order; then lanes combine pairwise: j += j + L/2, j += j + L/4, ... down to lane 0.
template <size_t L>
float SumCanonical(const float* x, size_t n) {
  static_assert(L >= 1 && (L & (L - 1)) == 0, "L must be a power of two");
  float acc[L];
  for (size_t j = 0; j < L; ++j) acc[j] = -0.0f;
  for (size_t i = 0; i < n; ++i) acc[i % L] += x[i];
  for (size_t h = L / 2; h >= 1; h /= 2) {
    for (size_t j = 0; j < h; ++j) acc[j] += acc[j + h];
  }
  return acc[0];
}

// The same order over any sequence: get(i) for i in [0, n), at the project's L, in the
// compute type C (float or double). Every reference kernel that sums along one
// contiguous run uses this.
template <class C, class Get>
C SumCanonicalBy(int64_t n, Get get) {
  C acc[kCanonicalLanes];
  for (size_t j = 0; j < kCanonicalLanes; ++j) acc[j] = C(-0.0);
  for (int64_t i = 0; i < n; ++i) acc[size_t(i) % kCanonicalLanes] += get(i);
  for (size_t h = kCanonicalLanes / 2; h >= 1; h /= 2) {
    for (size_t j = 0; j < h; ++j) acc[j] += acc[j + h];
  }
  return acc[0];
}

// Sum of get(0..n) in the canonical order (lanes: the elements form contiguous runs) or
// folded left to right from -0.0 (floats); integers wrap (unsigned arithmetic), in order.
template <class C, class Get>
C SumOrdered(int64_t n, bool lanes, Get get) {
  if constexpr (std::is_floating_point_v<C>) {
    if (lanes) return SumCanonicalBy<C>(n, get);
    C acc = C(-0.0);
    for (int64_t i = 0; i < n; ++i) acc += get(i);
    return acc;
  } else {
    using U = std::make_unsigned_t<C>;
    U acc = 0;
    for (int64_t i = 0; i < n; ++i) acc = U(acc + U(get(i)));
    return C(acc);
  }
}

// IEEE 754-2019 maximum / minimum for floats: NaN if either is NaN (the default quiet
// NaN), +0.0 above -0.0; the plain comparison for integers.
template <class C>
C MaxOf(C a, C b) {
  if constexpr (std::is_floating_point_v<C>) {
    if (a != a || b != b) return std::numeric_limits<C>::quiet_NaN();
    if (a == b) return std::signbit(a) ? b : a;
  }
  return a > b ? a : b;
}
template <class C>
C MinOf(C a, C b) {
  if constexpr (std::is_floating_point_v<C>) {
    if (a != a || b != b) return std::numeric_limits<C>::quiet_NaN();
    if (a == b) return std::signbit(a) ? a : b;
  }
  return a < b ? a : b;
}

// The project's Exp and Log (ref/math.h) in the compute type C: float or double.
template <class C>
C ExpC(C v) {
  if constexpr (std::is_same_v<C, float>)
    return math::Exp(v);
  else
    return math::ExpD(v);
}
template <class C>
C LogC(C v) {
  if constexpr (std::is_same_v<C, float>)
    return math::Log(v);
  else
    return math::LogD(v);
}

// The kernel-table entry: SumCanonical at the project's L.
float SumF32(const float* x, size_t n);

// Per plane c < planes of n contiguous floats (plane c at x + c * n): out[c] = the fold
// of its elements in order from -0.0, acc = acc + x[i] (GlobalAveragePool's sums).
void SumPlanesF32(const float* x, int64_t planes, int64_t n, float* out);

}  // namespace ref
}  // namespace onemodel::impl
