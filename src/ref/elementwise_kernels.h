// Reference (oracle) kernels of the dispatch table's elementwise operations; the
// per-target kernels in src/kernels/ equal them bit for bit.
#pragma once

#include <cstdint>

namespace onemodel::impl {

// The float binary operations of BinaryF32: + - * / and IEEE 754-2019 maximum/minimum
// (a NaN operand gives NaN; -0 < +0), and Pow: math::Pow (binary64 inside, one rounding).
enum BinaryOpF32 : int32_t {
  kBinAddF32 = 0, kBinSubF32, kBinMulF32, kBinDivF32, kBinMaxF32, kBinMinF32, kBinPowF32, kBinLastF32 = kBinPowF32
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
  kUnReluF32 = 0, kUnClipF32, kUnHardSigmoidF32, kUnHardSwishF32, kUnEluF32, kUnSeluF32, kUnCeluF32, kUnLeakyReluF32,
  kUnThresholdedReluF32, kUnSoftsignF32, kUnSoftplusF32, kUnMishF32, kUnSwishF32, kUnGeluErfF32, kUnGeluTanhF32,
  kUnLastF32 = kUnGeluTanhF32
};

// The functions of MathF32 (math::Exp, Tanh, Sigmoid, Erf, Log, Atan, Asin, Acos, Sinh,
// Cosh, Asinh, Acosh, Atanh, Sin, Cos, Tan); kMathLastF32 is the last.
enum MathOpF32 : int32_t {
  kMathExpF32 = 0, kMathTanhF32, kMathSigmoidF32, kMathErfF32, kMathLogF32, kMathAtanF32, kMathAsinF32, kMathAcosF32,
  kMathSinhF32, kMathCoshF32, kMathAsinhF32, kMathAcoshF32, kMathAtanhF32, kMathSinF32, kMathCosF32, kMathTanF32,
  kMathLastF32 = kMathTanF32
};

// The binary64 functions of MathF64 (math::ExpD, LogD); kMathLastF64 is the last.
enum MathOpF64 : int32_t { kMathExpF64 = 0, kMathLogF64, kMathLastF64 = kMathLogF64 };

namespace ref {

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

// Softmax of one contiguous row of n: m = the IEEE maximum of the row (NaN if any is
// NaN), e[i] = Exp(x[i] - m), s = the canonical L-lane sum of e, out[i] = e[i] / s.
void SoftmaxRowF32(const float* x, float* out, int64_t n);

}  // namespace ref
}  // namespace onemodel::impl
