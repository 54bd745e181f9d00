// The reference softmax family and row kernel (see softmax.h).
#include "ref/softmax.h"

#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

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

template <class T>
void Softmax(const SoftmaxParams& p, const T* x, T* y) {
  using C = typename Compute<T>::type;
  static_assert(std::is_floating_point_v<C>, "the softmax family computes in float or double");
  const int64_t n = p.per_output;
  std::vector<C> e(static_cast<size_t>(n));
  for (int64_t o = 0; o < p.outputs; ++o) {
    const int64_t b = p.base[o];
    auto at = [&](int64_t i) -> C { return Widen(x[b + p.offsets[i]]); };
    if (p.kind == SoftmaxKind::kHardmax) {
      int64_t best = 0;
      for (int64_t i = 1; i < n; ++i)
        if (at(i) > at(best)) best = i;
      for (int64_t i = 0; i < n; ++i) y[b + p.offsets[i]] = Narrow<T>(C(i == best ? 1 : 0));
      continue;
    }
    C m = -std::numeric_limits<C>::infinity();
    for (int64_t i = 0; i < n; ++i) m = MaxOf(m, at(i));
    for (int64_t i = 0; i < n; ++i) e[size_t(i)] = ExpC(C(at(i) - m));
    const C s = SumOrdered<C>(n, p.lanes, [&](int64_t i) { return e[size_t(i)]; });
    if (p.kind == SoftmaxKind::kSoftmax) {
      for (int64_t i = 0; i < n; ++i) y[b + p.offsets[i]] = Narrow<T>(C(e[size_t(i)] / s));
    } else {
      const C ls = LogC(s);
      for (int64_t i = 0; i < n; ++i) y[b + p.offsets[i]] = Narrow<T>(C(C(at(i) - m) - ls));
    }
  }
}

template void Softmax<float>(const SoftmaxParams&, const float*, float*);
template void Softmax<double>(const SoftmaxParams&, const double*, double*);
template void Softmax<Half>(const SoftmaxParams&, const Half*, Half*);
template void Softmax<BF16>(const SoftmaxParams&, const BF16*, BF16*);

}  // namespace ref
}  // namespace onemodel::impl
