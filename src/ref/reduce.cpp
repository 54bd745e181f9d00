// Reference reductions (see reduce.h).
#include "ref/reduce.h"

namespace onemodel::impl {
namespace ref {

float SumF32(const float* x, size_t n) { return SumCanonical<kCanonicalLanes>(x, n); }

void SumPlanesF32(const float* x, int64_t planes, int64_t n, float* out) {
  for (int64_t c = 0; c < planes; ++c) {
    float acc = -0.0f;
    for (int64_t i = 0; i < n; ++i) acc = acc + x[c * n + i];
    out[c] = acc;
  }
}

}  // namespace ref
}  // namespace onemodel::impl
