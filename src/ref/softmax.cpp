// The reference softmax row kernel (see softmax.h).
#include "ref/softmax.h"

#include <cmath>

#include "core/exact.h"
#include "ref/math.h"
#include "ref/reduce.h"

namespace onemodel::impl {
namespace ref {

void SoftmaxRowF32(const float* x, float* out, int64_t n) {
  float m = -__builtin_inff();
  for (int64_t i = 0; i < n; ++i) {
    const float v = x[i];
    if (v != v || m != m)
      m = __builtin_nanf("");
    else if (v == m)
      m = std::signbit(m) ? v : m;
    else if (v > m)
      m = v;
  }
  for (int64_t i = 0; i < n; ++i) out[i] = math::Exp(x[i] - m);
  const float s = SumCanonical<kCanonicalLanes>(out, size_t(n));
  for (int64_t i = 0; i < n; ++i) out[i] = out[i] / s;
}

}  // namespace ref
}  // namespace onemodel::impl
