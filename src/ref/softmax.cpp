// The reference softmax family and row kernel (see softmax.h).
#include "ref/softmax.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "core/exact.h"
#include "ref/elementwise.h"
#include "ref/gemm.h"
#include "ref/math.h"
#include "ref/reduce.h"

namespace onemodel::impl {
namespace ref {

namespace {
// The attention's elementwise steps before the softmax, into y's row r.
void PreSteps(const float* x, float* y, int64_t r, int64_t n, int32_t scale_op, float scale, const float* mask,
              int64_t mask_row_stride, int64_t mask_stride) {
  const float* xr = x + r * n;
  float* yr = y + r * n;
  for (int64_t j = 0; j < n; ++j) {
    float t = xr[j];
    if (scale_op == kBinDivF32)
      t = t / scale;
    else if (scale_op == kBinMulF32)
      t = t * scale;
    if (mask) t = t + mask[r * mask_row_stride + j * mask_stride];
    yr[j] = t;
  }
}

// The IEEE maximum of a row (NaN if any element is; -0 < +0): SoftmaxRowF32's.
float RowMax(const float* x, int64_t n) {
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
  return m;
}
}  // namespace

void SoftmaxRowF32(const float* x, float* out, int64_t n) {
  const float m = RowMax(x, n);
  for (int64_t i = 0; i < n; ++i) out[i] = math::Exp(x[i] - m);
  const float s = SumCanonical<kCanonicalLanes>(out, size_t(n));
  for (int64_t i = 0; i < n; ++i) out[i] = out[i] / s;
}

void SoftmaxRowsF32(const float* x, float* y, int64_t rows, int64_t n, int32_t scale_op, float scale, const float* mask,
                    int64_t mask_row_stride, int64_t mask_stride) {
  for (int64_t r = 0; r < rows; ++r) {
    PreSteps(x, y, r, n, scale_op, scale, mask, mask_row_stride, mask_stride);
    SoftmaxRowF32(y + r * n, y + r * n, n);
  }
}

float ExpFmaNonPositiveF32(float u) {
  if (u != u) return u;
  if (u < -87.0f) return 0.0f;
  const float n = math::RoundEven(u * 1.44269504088896341f);
  float r = FusedMulAddF32(-n, 0.693147182464599609375f, u);
  r = FusedMulAddF32(-n, -1.904654299957768e-09f, r);
  const float z = r * r;
  float p = 1.9875691500e-4f;
  p = FusedMulAddF32(p, r, 1.3981999507e-3f);
  p = FusedMulAddF32(p, r, 8.3334519073e-3f);
  p = FusedMulAddF32(p, r, 4.1665795894e-2f);
  p = FusedMulAddF32(p, r, 1.6666665459e-1f);
  p = FusedMulAddF32(p, r, 5.0000001201e-1f);
  p = FusedMulAddF32(p, z, r);
  p = p + 1.0f;
  // 2^n for n in [-126, 0] (u >= -87), a normal float: one rounding in the product.
  const uint32_t bits = uint32_t(int32_t(n) + 127) << 23;
  float scale;
  std::memcpy(&scale, &bits, sizeof scale);
  return p * scale;
}

namespace {
float ErfFmaOne(float x) {
  if (x != x) return x;
  const float a = std::fabs(x);
  if (a <= 1.0f) {
    const float z = x * x;
    float p = 7.853861353153693e-5f;
    p = FusedMulAddF32(p, z, -8.010193625184903e-4f);
    p = FusedMulAddF32(p, z, 5.188327685732524e-3f);
    p = FusedMulAddF32(p, z, -2.685381193529856e-2f);
    p = FusedMulAddF32(p, z, 1.128358514861418e-1f);
    p = FusedMulAddF32(p, z, -3.761262582423300e-1f);
    p = FusedMulAddF32(p, z, 1.128379165726710e0f);
    return x * p;
  }
  const float c = std::fmin(a, 4.0f);
  const float t = 1.0f / FusedMulAddF32(0.3275911f, c, 1.0f);
  float p = 1.061405429f;
  p = FusedMulAddF32(p, t, -1.453152027f);
  p = FusedMulAddF32(p, t, 1.421413741f);
  p = FusedMulAddF32(p, t, -0.284496736f);
  p = FusedMulAddF32(p, t, 0.254829592f);
  p = p * t;
  const float y = FusedMulAddF32(-p, ExpFmaNonPositiveF32(-(c * c)), 1.0f);
  return std::copysign(y, x);
}
}  // namespace

void ErfFmaF32(const float* x, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = ErfFmaOne(x[i]);
}

void SoftmaxRowsFmaF32(const float* x, float* y, int64_t rows, int64_t n, int32_t scale_op, float scale,
                       const float* mask, int64_t mask_row_stride, int64_t mask_stride) {
  for (int64_t r = 0; r < rows; ++r) {
    PreSteps(x, y, r, n, scale_op, scale, mask, mask_row_stride, mask_stride);
    float* yr = y + r * n;
    const float m = RowMax(yr, n);
    for (int64_t j = 0; j < n; ++j) yr[j] = ExpFmaNonPositiveF32(yr[j] - m);
    const float inv = 1.0f / SumCanonical<kCanonicalLanes>(yr, size_t(n));
    for (int64_t j = 0; j < n; ++j) yr[j] = yr[j] * inv;
  }
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
