// Reference (oracle) kernels of the dispatch table's elementwise operations; the
// per-target kernels in src/kernels/ equal them bit for bit.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>

#include "core/bits.h"

namespace onemodel::impl {

// The float binary operations of BinaryF32: + - * / and IEEE 754-2019 maximum/minimum
// (a NaN operand gives NaN; -0 < +0), and Pow: math::Pow (binary64 inside, one rounding).
enum BinaryOpF32 : int32_t {
  kBinAddF32 = 0,
  kBinSubF32,
  kBinMulF32,
  kBinDivF32,
  kBinMaxF32,
  kBinMinF32,
  kBinPowF32,
  kBinLastF32 = kBinPowF32
};

// The float unary operations of UnaryF32, each exactly its operator's reference:
//   Relu         NaN stays; v > 0 ? v : +0
//   Clip(p0,p1)  v < p0 -> p0, then v > p1 -> p1 (NaN stays)
//   HardSigmoid(p0 = alpha, p1 = beta)  y = p0 * v + p1 (two roundings), clamped to [0, 1]
//   HardSwish    y = (1/6) * v + 0.5, clamped to [0, 1], times v
//   Elu(p0 = alpha)        v < 0 ? p0 * (Exp(v) - 1) : v
//   Selu(p0 = alpha, p1 = gamma)  v <= 0 ? p1 * (p0 * Exp(v) - p0) : p1 * v
//   Celu(p0 = alpha)       max(v, 0) + min(p0 * (Exp(v / p0) - 1), 0), as (v > 0 ? v : 0) + (m < 0 ? m : 0)
//   LeakyRelu(p0 = alpha)  v < 0 ? p0 * v : v
//   ThresholdedRelu(p0)    v > p0 ? v : 0
//   Softsign               v / (1 + (v < 0 ? -v : v))
//   Softplus               math::Softplus (NaN stays; v > 20: v; else Log1p(Exp(v)))
//   Mish                   v * Tanh(Softplus(v))
//   Swish(p0 = alpha)      v * Sigmoid(p0 * v)
//   GeluErf                (0.5 * v) * (1 + Erf(v * 0.70710678f))
//   GeluTanh               (0.5 * v) * (1 + Tanh(0.7978846f * (v + 0.044715f * ((v * v) * v))))
// (Exp, Tanh, Sigmoid, Erf, Log1p: the project's functions, ref/math.h.)
enum UnaryOpF32 : int32_t {
  kUnReluF32 = 0,
  kUnClipF32,
  kUnHardSigmoidF32,
  kUnHardSwishF32,
  kUnEluF32,
  kUnSeluF32,
  kUnCeluF32,
  kUnLeakyReluF32,
  kUnThresholdedReluF32,
  kUnSoftsignF32,
  kUnSoftplusF32,
  kUnMishF32,
  kUnSwishF32,
  kUnGeluErfF32,
  kUnGeluTanhF32,
  kUnLastF32 = kUnGeluTanhF32
};

// The activation a kernel applies after its sums (and bias): none, or a UnaryF32
// operation without parameters (the fused activations of passes/fuse_activation.cpp).
enum class Activation : int32_t { kNone = -1, kRelu = kUnReluF32, kHardSwish = kUnHardSwishF32 };

// The functions of MathF32 (math::Exp, Tanh, Sigmoid, Erf, Log, Atan, Asin, Acos, Sinh,
// Cosh, Asinh, Acosh, Atanh, Sin, Cos, Tan); kMathLastF32 is the last.
enum MathOpF32 : int32_t {
  kMathExpF32 = 0,
  kMathTanhF32,
  kMathSigmoidF32,
  kMathErfF32,
  kMathLogF32,
  kMathAtanF32,
  kMathAsinF32,
  kMathAcosF32,
  kMathSinhF32,
  kMathCoshF32,
  kMathAsinhF32,
  kMathAcoshF32,
  kMathAtanhF32,
  kMathSinF32,
  kMathCosF32,
  kMathTanF32,
  kMathLastF32 = kMathTanF32
};

// The binary64 functions of MathF64 (math::ExpD, LogD); kMathLastF64 is the last.
enum MathOpF64 : int32_t { kMathExpF64 = 0, kMathLogF64, kMathLastF64 = kMathLogF64 };

namespace ref {

// IEEE 754-2019 maximum and minimum: a NaN operand gives NaN; -0 < +0.
inline float MaxIeee(float a, float b) {
  if (IsNaNf(a) || IsNaNf(b)) return U2F(0x7FC00000u);
  if (a == b) return U2F(F2U(a) & F2U(b));
  return a > b ? a : b;
}
inline float MinIeee(float a, float b) {
  if (IsNaNf(a) || IsNaNf(b)) return U2F(0x7FC00000u);
  if (a == b) return U2F(F2U(a) | F2U(b));
  return a < b ? a : b;
}
inline double MaxIeee(double a, double b) {
  if (a != a || b != b) return std::numeric_limits<double>::quiet_NaN();
  if (a == b) return std::signbit(a) ? b : a;
  return a > b ? a : b;
}
inline double MinIeee(double a, double b) {
  if (a != a || b != b) return std::numeric_limits<double>::quiet_NaN();
  if (a == b) return std::signbit(a) ? a : b;
  return a < b ? a : b;
}

// out[i] = a[i * sa] op b[i * sb] for i < n; sa and sb are 0 (one value broadcast) or
// 1. Each result is one correctly rounded binary32 operation (Pow: math::Pow); out may
// alias a or b when its stride is 1.
void BinaryF32(int32_t op, const float* a, int64_t sa, const float* b, int64_t sb, float* out, int64_t n);

// out[i] = op(x[i]) for i < n; out may alias x.
void UnaryF32(int32_t op, float p0, float p1, const float* x, float* out, int64_t n);

// out[i] = f(x[i]) for i < n, f the project's own function (ref/math.h); out may alias x.
void MathF32(int32_t op, const float* x, float* out, int64_t n);
// The same for binary64 (MathOpF64).
void MathF64(int32_t op, const double* x, double* out, int64_t n);

// Linear quantisation to an 8-bit type (QuantizeLinear, DynamicQuantizeLinear): for
// i < n, y[i] = the low byte of clamp(round_half_even(x[i] / scale) + zp, lo, hi), the
// quotient rounded once in f32 and a NaN quotient taken as 0 (so it gives zp); lo, hi:
// 0, 255 (uint8) or -128, 127 (int8); zp inside [lo, hi].
void QuantizeF32(const float* x, int64_t n, float scale, int32_t zp, int32_t lo, int32_t hi, uint8_t* y);

// QuantizeLinear then DequantizeLinear without the 8-bit tensor between them: i < n,
// y[i] = float(q - dq_zp) * dq_scale (the difference exact in int32 and in f32, one
// rounding in the product), q the byte QuantizeF32 makes of x[i] with scale, zp, lo, hi
// (read as int8 when lo < 0).
void QuantDequantF32(const float* x, int64_t n, float scale, int32_t zp, int32_t lo, int32_t hi, float dq_scale,
                     int32_t dq_zp, float* y);

// DynamicQuantizeLinear's range: *lo = the fold of lo = x[i] < lo ? x[i] : lo from +0,
// *hi = the fold of hi = x[i] > hi ? x[i] : hi from +0 (NaNs never replace; -0 never
// replaces +0). Starting from +0 makes the result independent of the order: a zero result
// is +0, any other is the one smallest (largest) value.
void RangeF32(const float* x, int64_t n, float* lo, float* hi);

}  // namespace ref
}  // namespace onemodel::impl
