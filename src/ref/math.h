// The project's own elementary functions (exact-contract section 4): range reduction
// and polynomials written as explicit basic operations (a multiply, then an add: never
// fused), so every target computes the same bits. No libm call except sqrt. Measured
// accuracy against a higher-precision reference is in docs/exact-mode.md and checked
// in tests/test_math.cpp.
#pragma once

namespace onemodel::impl {
namespace math {

float Exp(float x);
float Log(float x);
float Tanh(float x);
float Sigmoid(float x);
float Erf(float x);
float Sin(float x);
float Cos(float x);
float Tan(float x);
float Asin(float x);
float Acos(float x);
float Atan(float x);
float Sinh(float x);
float Cosh(float x);
float Asinh(float x);
float Acosh(float x);
float Atanh(float x);
float Softplus(float x);
float Pow(float x, float y);
// Exactly rounded helpers used by the functions above (no libm).
float RoundEven(float x);
double RoundEvenD(double x);
float Floor(float x);

// binary64 versions for double tensors (and as Pow's intermediate).
double ExpD(double x);
double LogD(double x);
double PowD(double x, double y);
// sin and cos in binary64 for |x| <= 2*pi*2^20 (used by the spectral operators):
// Cody-Waite reduction by pi/2 and Taylor polynomials to degree 19.
double SinD(double x);
double CosD(double x);

}  // namespace math
}  // namespace onemodel::impl
