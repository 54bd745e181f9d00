// Reference elementwise kernels (see elementwise.h): one value at a time, in index order.
#include "ref/elementwise.h"

#include "ref/math.h"

namespace onemodel::impl {
namespace ref {

void BinaryF32(int32_t op, const float* a, int64_t sa, const float* b, int64_t sb, float* out, int64_t n) {
  if (op == kBinPowF32) {
    for (int64_t i = 0; i < n; ++i) out[i] = math::Pow(a[i * sa], b[i * sb]);
    return;
  }
  for (int64_t i = 0; i < n; ++i) {
    const float x = a[i * sa], y = b[i * sb];
    switch (op) {
      case kBinAddF32: out[i] = x + y; break;
      case kBinSubF32: out[i] = x - y; break;
      case kBinMulF32: out[i] = x * y; break;
      case kBinDivF32: out[i] = x / y; break;
      case kBinMaxF32: out[i] = MaxIeee(x, y); break;
      case kBinMinF32: out[i] = MinIeee(x, y); break;
      default: break;
    }
  }
}

void UnaryF32(int32_t op, float p0, float p1, const float* x, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const float v = x[i];
    float r = v;
    switch (op) {
      case kUnReluF32: r = v != v ? v : v > 0.0f ? v : 0.0f; break;
      case kUnClipF32:
        r = v < p0 ? p0 : v;
        r = r > p1 ? p1 : r;
        break;
      case kUnHardSigmoidF32: {
        const float y = p0 * v + p1;
        r = y != y ? y : y < 0.0f ? 0.0f : y > 1.0f ? 1.0f : y;
        break;
      }
      case kUnHardSwishF32: {
        const float y = (1.0f / 6.0f) * v + 0.5f;
        r = y != y ? y : v * (y < 0.0f ? 0.0f : y > 1.0f ? 1.0f : y);
        break;
      }
      case kUnEluF32: r = v < 0.0f ? p0 * (math::Exp(v) - 1.0f) : v; break;
      case kUnSeluF32: r = v <= 0.0f ? p1 * (p0 * math::Exp(v) - p0) : p1 * v; break;
      case kUnCeluF32: {
        const float m = p0 * (math::Exp(v / p0) - 1.0f);
        r = (v > 0.0f ? v : 0.0f) + (m < 0.0f ? m : 0.0f);
        break;
      }
      case kUnLeakyReluF32: r = v < 0.0f ? p0 * v : v; break;
      case kUnThresholdedReluF32: r = v > p0 ? v : 0.0f; break;
      case kUnSoftsignF32: r = v / (1.0f + (v < 0.0f ? -v : v)); break;
      case kUnSoftplusF32: r = math::Softplus(v); break;
      case kUnMishF32: r = v * math::Tanh(math::Softplus(v)); break;
      case kUnSwishF32: r = v * math::Sigmoid(p0 * v); break;
      case kUnGeluErfF32: r = 0.5f * v * (1.0f + math::Erf(v * 0.7071067811865476f)); break;
      case kUnGeluTanhF32:
        r = 0.5f * v * (1.0f + math::Tanh(0.7978845608028654f * (v + 0.044715f * (v * v * v))));
        break;
      default: break;
    }
    out[i] = r;
  }
}

void MathF32(int32_t op, const float* x, float* out, int64_t n) {
  static float (*const fns[])(float) = {
      &math::Exp,  &math::Tanh, &math::Sigmoid, &math::Erf,   &math::Log,   &math::Atan, &math::Asin, &math::Acos,
      &math::Sinh, &math::Cosh, &math::Asinh,   &math::Acosh, &math::Atanh, &math::Sin,  &math::Cos,  &math::Tan};
  static_assert(sizeof(fns) / sizeof(fns[0]) == size_t(kMathLastF32) + 1, "one function per MathF32 op");
  float (*f)(float) = fns[op >= 0 && op <= kMathLastF32 ? op : 0];
  for (int64_t i = 0; i < n; ++i) out[i] = f(x[i]);
}

void MathF64(int32_t op, const double* x, double* out, int64_t n) {
  double (*f)(double) = op == kMathLogF64 ? &math::LogD : &math::ExpD;
  for (int64_t i = 0; i < n; ++i) out[i] = f(x[i]);
}

void RangeF32(const float* x, int64_t n, float* lo, float* hi) {
  float mn = 0.0f, mx = 0.0f;
  for (int64_t i = 0; i < n; ++i) {
    const float v = x[i];
    mn = v < mn ? v : mn;
    mx = v > mx ? v : mx;
  }
  *lo = mn;
  *hi = mx;
}

void QuantizeF32(const float* x, int64_t n, float scale, int32_t zp, int32_t lo, int32_t hi, uint8_t* y) {
  for (int64_t i = 0; i < n; ++i) {
    const float q = x[i] / scale;
    const float r = math::RoundEven(q);
    // In binary64: an integral value plus a small integer is exact; inf clamps.
    double v = r != r ? double(zp) : double(r) + double(zp);
    v = v < double(lo) ? double(lo) : v > double(hi) ? double(hi) : v;
    y[i] = uint8_t(int32_t(v));
  }
}

void QuantDequantF32(const float* x, int64_t n, float scale, int32_t zp, int32_t lo, int32_t hi, float dq_scale,
                     int32_t dq_zp, float* y) {
  for (int64_t i = 0; i < n; ++i) {
    uint8_t b = 0;
    QuantizeF32(x + i, 1, scale, zp, lo, hi, &b);
    const int32_t q = lo < 0 ? int32_t(int8_t(b)) : int32_t(b);
    y[i] = float(q - dq_zp) * dq_scale;
  }
}

}  // namespace ref
}  // namespace onemodel::impl
