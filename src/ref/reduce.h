// Reference (oracle) reductions along one contiguous run: the canonical L-lane order.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/exact.h"

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

// The kernel-table entry: SumCanonical at the project's L.
float SumF32(const float* x, size_t n);

// Per plane c < planes of n contiguous floats (plane c at x + c * n): out[c] = the fold
// of its elements in order from -0.0, acc = acc + x[i] (GlobalAveragePool's sums).
void SumPlanesF32(const float* x, int64_t planes, int64_t n, float* out);

}  // namespace ref
}  // namespace onemodel::impl
