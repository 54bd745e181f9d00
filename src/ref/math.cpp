// Elementary functions (see math.h). Polynomial coefficients are the classic minimax
// fits for binary32 (as in Cephes); every Horner step is a rounded multiply followed by
// a rounded add, which -ffp-contract=off guarantees is never fused.
#include "ref/math.h"

#include "core/bits.h"

#include <cstdint>
#include <cstring>

namespace onemodel::impl {
namespace math {
namespace {

inline uint64_t D2U(double d) {
  uint64_t u;
  std::memcpy(&u, &d, 8);
  return u;
}
inline double U2D(uint64_t u) {
  double d;
  std::memcpy(&d, &u, 8);
  return d;
}
inline bool IsNaN(float x) { return (F2U(x) & 0x7FFFFFFFu) > 0x7F800000u; }
inline float Abs(float x) { return U2F(F2U(x) & 0x7FFFFFFFu); }
inline float CopySign(float m, float s) { return U2F((F2U(m) & 0x7FFFFFFFu) | (F2U(s) & 0x80000000u)); }
constexpr float kInf = __builtin_huge_valf();
constexpr float kNaN = __builtin_nanf("");
// 2^n as a binary32, n in [-126, 127].
inline float Pow2(int n) { return U2F(uint32_t(n + 127) << 23); }
inline double Pow2D(int n) { return U2D(uint64_t(n + 1023) << 52); }

// Multiplies by 2^n with a single rounding (subnormal results included).
float ScaleB(float y, int n) {
  if (n > 127) {
    y = y * Pow2(127);
    n -= 127;
    if (n > 127) n = 127;
  }
  if (n < -126) {
    y = y * Pow2(n + 64);
    return y * Pow2(-64);
  }
  return y * Pow2(n);
}
double ScaleBD(double y, int n) {
  if (n > 1023) {
    y = y * Pow2D(1023);
    n -= 1023;
    if (n > 1023) n = 1023;
  }
  if (n < -1022) {
    y = y * Pow2D(n + 512);
    return y * Pow2D(-512);
  }
  return y * Pow2D(n);
}

// Reduces |x| by multiples of pi/4: returns r in about [-pi/4, pi/4] and the octant
// j mod 8 of the even multiple j. In binary64, Cody-Waite with three parts of pi/4 whose
// first two have 24 significant bits, so j * part is exact for j < 2^24 (|x| < 1.3e7);
// beyond that the result is still deterministic but loses accuracy (decision,
// docs/exact-mode.md). j = trunc(|x| * 4/pi) rounded up to even (every binary64 of 2^53
// and more is an even integer already). Where |x| * 4/pi >= 2^63, j is -2^63 (octant
// 0): what the first oracle's int64 conversion and increment gave on every target (x86
// converts out-of-range values to -2^63; AArch64 and wasm saturate to 2^63 - 1, whose
// increment wraps to -2^63), kept so that no golden hash moves, now written without
// undefined behaviour. Such arguments have no meaningful reduction in binary64 anyway.
// The vector form (kernels/math_v.h) computes j and j mod 8 in binary64 the same way.
float ReducePiO4(float x, int* octant) {
  const double da = double(Abs(x));
  const double t = da * 1.2732395447351628;  // 4/pi
  double y = -9223372036854775808.0;         // -2^63
  int oct = 0;
  if (t < 9007199254740992.0) {  // 2^53
    int64_t j = int64_t(t);      // truncated
    j += j & 1;
    y = double(j);
    oct = int(j & 7);
  } else if (t < 9223372036854775808.0) {  // 2^63
    y = t;
    oct = int(int64_t(t) & 7);
  }
  *octant = oct;
  const double r =
      ((da - y * 0.785398125648498535156) - y * 3.77489470793079817668e-8) - y * 2.69515142907905952645e-15;
  return float(r);
}
float SinPoly(float x) {
  const float z = x * x;
  return ((-1.9515295891e-4f * z + 8.3321608736e-3f) * z - 1.6666654611e-1f) * z * x + x;
}
float CosPoly(float x) {
  const float z = x * x;
  return ((2.443315711809948e-5f * z - 1.388731625493765e-3f) * z + 4.166664568298827e-2f) * z * z - 0.5f * z + 1.0f;
}

}  // namespace

float RoundEven(float x) {
  const uint32_t e = (F2U(x) >> 23) & 0xFF;
  if (e >= 150) return x;
  const float a = Abs(x);
  const float r = e < 126 ? 0.0f : (a + 8388608.0f) - 8388608.0f;
  return CopySign(r, x);
}

double RoundEvenD(double x) {
  if (!(x == x) || x >= 4503599627370496.0 || x <= -4503599627370496.0) return x;
  const bool neg = (D2U(x) >> 63) != 0;
  const double a = neg ? -x : x;
  const double r = a < 0.5 ? 0.0 : (a + 4503599627370496.0) - 4503599627370496.0;  // 2^52: exact RNE
  return neg ? -r : r;
}

float Floor(float x) {
  const uint32_t u = F2U(x);
  const int e = int((u >> 23) & 0xFF) - 127;
  if (e >= 23) return x;
  const float t = e < 0 ? U2F(u & 0x80000000u) : U2F(u & ~((1u << (23 - e)) - 1u));
  return x < t ? t - 1.0f : t;
}

// log(1 + x) accurate for small x: log(u) * x / (u - 1) with u = 1 + x, which cancels
// the rounding error of u (Goldberg's method).
float Log1p(float x) {
  if (IsNaN(x)) return x;
  const float u = 1.0f + x;
  if (u == 1.0f) return x;
  if (u == kInf) return Log(u);
  return Log(u) * (x / (u - 1.0f));
}

// exp(a) / 2 for large a without overflowing early: exp(a - C1) * exp(C1 - ln 2),
// where a - C1 is exact (C1 has 9 significant bits) and the factor is a constant.
float HalfExpLarge(float a) { return Exp(a - 0.693359375f) * 1.00021219253540039f; }

float Exp(float x) {
  if (IsNaN(x)) return x;
  if (x > 88.72283935546875f) return kInf;
  if (x < -103.97208404541015625f) return 0.0f;
  const float n = RoundEven(x * 1.44269504088896341f);
  float r = x - n * 0.693359375f;
  r = r - n * -2.12194440e-4f;
  const float z = r * r;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * z + r;
  p = p + 1.0f;
  return ScaleB(p, int(n));
}

float Log(float x) {
  if (IsNaN(x)) return x;
  if (x < 0.0f) return kNaN;
  if (x == 0.0f) return -kInf;
  if (x == kInf) return x;
  int e = 0;
  if (x < 1.17549435e-38f) {
    x = x * 8388608.0f;
    e = -23;
  }
  const uint32_t u = F2U(x);
  e += int((u >> 23) & 0xFF) - 126;
  float m = U2F((u & 0x007FFFFFu) | 0x3F000000u);  // [0.5, 1)
  if (m < 0.707106781186547524f) {
    e -= 1;
    m = m + m - 1.0f;
  } else {
    m = m - 1.0f;
  }
  const float z = m * m;
  float y = 7.0376836292e-2f;
  y = y * m - 1.1514610310e-1f;
  y = y * m + 1.1676998740e-1f;
  y = y * m - 1.2420140846e-1f;
  y = y * m + 1.4249322787e-1f;
  y = y * m - 1.6668057665e-1f;
  y = y * m + 2.0000714765e-1f;
  y = y * m - 2.4999993993e-1f;
  y = y * m + 3.3333331174e-1f;
  y = y * m;
  y = y * z;
  const float fe = float(e);
  y = y + fe * -2.12194440e-4f;
  y = y + -0.5f * z;
  float r = m + y;
  r = r + fe * 0.693359375f;
  return r;
}

float Tanh(float x) {
  if (IsNaN(x)) return x;
  const float z = Abs(x);
  if (z > 9.0f) return CopySign(1.0f, x);
  if (z >= 0.625f) {
    const float s = Exp(z + z);
    const float r = 1.0f - 2.0f / (s + 1.0f);
    return CopySign(r, x);
  }
  if (z == 0.0f) return x;
  const float w = x * x;
  float p = -5.70498872745e-3f;
  p = p * w + 2.06390887954e-2f;
  p = p * w - 5.37397155531e-2f;
  p = p * w + 1.33314422036e-1f;
  p = p * w - 3.33332819422e-1f;
  p = p * w;
  p = p * x;
  return p + x;
}

float Sigmoid(float x) {
  if (IsNaN(x)) return x;
  if (x >= 0.0f) return 1.0f / (1.0f + Exp(-x));
  const float e = Exp(x);  // exp(x) / (1 + exp(x)): no overflow, no lost tiny results
  return e / (1.0f + e);
}

float Erf(float x) {
  if (IsNaN(x)) return x;
  const float a = Abs(x);
  if (a <= 1.0f) {
    const float z = x * x;
    float p = 7.853861353153693e-5f;
    p = p * z - 8.010193625184903e-4f;
    p = p * z + 5.188327685732524e-3f;
    p = p * z - 2.685381193529856e-2f;
    p = p * z + 1.128358514861418e-1f;
    p = p * z - 3.761262582423300e-1f;
    p = p * z + 1.128379165726710e0f;
    return x * p;
  }
  if (a >= 4.0f) return CopySign(1.0f, x);
  // erfc(a) = exp(-a^2) / a * P(1/a^2).
  const float q = 1.0f / a;
  const float y = q * q;
  float p;
  if (a < 2.0f) {
    p = 2.326819970068386e-2f;
    p = p * y - 1.387039388740657e-1f;
    p = p * y + 3.687424674597105e-1f;
    p = p * y - 5.824733027278666e-1f;
    p = p * y + 6.210004621745983e-1f;
    p = p * y - 4.944515323274145e-1f;
    p = p * y + 3.404879937665872e-1f;
    p = p * y - 2.741127028184656e-1f;
    p = p * y + 5.638259427386472e-1f;
  } else {
    p = -1.047766399936249e1f;
    p = p * y + 1.297719955372516e1f;
    p = p * y - 7.495518717768503e0f;
    p = p * y + 2.921019019210786e0f;
    p = p * y - 1.015265279202700e0f;
    p = p * y + 4.218463358204948e-1f;
    p = p * y - 2.820767439740514e-1f;
    p = p * y + 5.641895067754075e-1f;
  }
  // exp(-a^2) with a^2 split so the argument is exact: a = hi + lo, hi with 12 bits.
  const float hi = U2F(F2U(a) & 0xFFFFF000u);
  const float lo = a - hi;
  const float e = Exp(-(hi * hi)) * Exp(-(lo * (a + hi)));
  const float erfc = e * q * p;
  return CopySign(1.0f - erfc, x);
}

float Sin(float x) {
  if (IsNaN(x) || Abs(x) == kInf) return kNaN;
  int oct;
  const float r = ReducePiO4(x, &oct);
  float y = (oct == 2 || oct == 6) ? CosPoly(r) : SinPoly(r);
  bool neg = x < 0.0f;
  if (oct >= 4) neg = !neg;
  return neg ? -y : y;
}

float Cos(float x) {
  if (IsNaN(x) || Abs(x) == kInf) return kNaN;
  int oct;
  const float r = ReducePiO4(x, &oct);
  float y = (oct == 2 || oct == 6) ? SinPoly(r) : CosPoly(r);
  const bool neg = oct == 2 || oct == 4;
  return neg ? -y : y;
}

float Tan(float x) {
  if (IsNaN(x) || Abs(x) == kInf) return kNaN;
  int oct;
  const float r = ReducePiO4(x, &oct);
  const float z = r * r;
  float p = 9.38540185543e-3f;
  p = p * z + 3.11992232697e-3f;
  p = p * z + 2.44301354525e-2f;
  p = p * z + 5.34112807005e-2f;
  p = p * z + 1.33387994085e-1f;
  p = p * z + 3.33331568548e-1f;
  p = p * z;
  p = p * r;
  float y = p + r;
  if (oct & 2) y = -1.0f / y;
  return x < 0.0f ? -y : y;
}

float Atan(float x) {
  if (IsNaN(x)) return x;
  float a = Abs(x);
  float y0 = 0.0f;
  if (a > 2.414213562373095f) {
    y0 = 1.5707963267948966f;
    a = -1.0f / a;
  } else if (a > 0.4142135623730950f) {
    y0 = 0.7853981633974483f;
    a = (a - 1.0f) / (a + 1.0f);
  }
  const float z = a * a;
  float p = 8.05374449538e-2f;
  p = p * z - 1.38776856032e-1f;
  p = p * z + 1.99777106478e-1f;
  p = p * z - 3.33329491539e-1f;
  p = p * z;
  p = p * a;
  const float r = y0 + (p + a);
  return CopySign(r, x);
}

float Asin(float x) {
  if (IsNaN(x)) return x;
  const float a = Abs(x);
  if (a > 1.0f) return kNaN;
  float z, v;
  const bool big = a > 0.5f;
  if (big) {
    z = 0.5f * (1.0f - a);
    v = __builtin_sqrtf(z);
  } else {
    v = a;
    z = a * a;
  }
  float p = 4.2163199048e-2f;
  p = p * z + 2.4181311049e-2f;
  p = p * z + 4.5470025998e-2f;
  p = p * z + 7.4953002686e-2f;
  p = p * z + 1.6666752422e-1f;
  p = p * z;
  p = p * v;
  float r = p + v;
  if (big) {
    r = r + r;
    r = 1.5707963267948966f - r;
  }
  return CopySign(r, x);
}

float Acos(float x) {
  if (IsNaN(x)) return x;
  if (Abs(x) > 1.0f) return kNaN;
  if (x < -0.5f) return 3.14159265358979f - 2.0f * Asin(__builtin_sqrtf(0.5f * (1.0f + x)));
  if (x > 0.5f) return 2.0f * Asin(__builtin_sqrtf(0.5f * (1.0f - x)));
  return 1.5707963267948966f - Asin(x);
}

float Sinh(float x) {
  if (IsNaN(x)) return x;
  const float a = Abs(x);
  if (a > 1.0f) {
    if (a > 88.0f) return CopySign(HalfExpLarge(a), x);
    const float e = Exp(a);
    return CopySign(0.5f * e - 0.5f / e, x);
  }
  const float z = x * x;
  float p = 2.03721912945e-4f;
  p = p * z + 8.33028376239e-3f;
  p = p * z + 1.66667160211e-1f;
  p = p * z;
  p = p * x;
  return p + x;
}

float Cosh(float x) {
  if (IsNaN(x)) return x;
  const float a = Abs(x);
  if (a > 88.0f) return HalfExpLarge(a);
  const float e = Exp(a);
  return 0.5f * e + 0.5f / e;
}

float Asinh(float x) {
  if (IsNaN(x)) return x;
  const float a = Abs(x);
  float r;
  if (a > 1.0e4f) {
    r = Log(a) + 0.693147180559945f;
  } else {
    const float a2 = a * a;  // asinh(a) = log1p(a + a^2 / (1 + sqrt(1 + a^2)))
    r = Log1p(a + a2 / (1.0f + __builtin_sqrtf(1.0f + a2)));
  }
  return CopySign(r, x);
}

float Acosh(float x) {
  if (IsNaN(x)) return x;
  if (x < 1.0f) return kNaN;
  if (x > 1.0e4f) return Log(x) + 0.693147180559945f;
  const float t = x - 1.0f;  // exact for x in [1, 2]
  return Log1p(t + __builtin_sqrtf(t + t + t * t));
}

float Atanh(float x) {
  if (IsNaN(x)) return x;
  const float a = Abs(x);
  if (a > 1.0f) return kNaN;
  if (a == 1.0f) return CopySign(kInf, x);
  return CopySign(0.5f * Log1p((a + a) / (1.0f - a)), x);
}

float Softplus(float x) {
  if (IsNaN(x)) return x;
  if (x > 20.0f) return x;
  return Log1p(Exp(x));
}

double ExpD(double x) {
  if (x != x) return x;
  if (x > 709.782712893384) return __builtin_huge_val();
  if (x < -745.1332191019412) return 0.0;
  double n = x * 1.4426950408889634;
  n = n < 0 ? -double(int64_t(-n + 0.5)) : double(int64_t(n + 0.5));
  const double r = (x - n * 6.93147180369123816490e-01) - n * 1.90821492927058770002e-10;
  // Taylor to r^13/13! (|r| <= 0.35: truncation below 1e-17).
  double p = 1.0 / 6227020800.0;
  const double c[] = {1.0 / 479001600.0,
                      1.0 / 39916800.0,
                      1.0 / 3628800.0,
                      1.0 / 362880.0,
                      1.0 / 40320.0,
                      1.0 / 5040.0,
                      1.0 / 720.0,
                      1.0 / 120.0,
                      1.0 / 24.0,
                      1.0 / 6.0,
                      0.5,
                      1.0,
                      1.0};
  for (double k : c) p = p * r + k;
  return ScaleBD(p, int(n));
}

double LogD(double x) {
  if (x != x) return x;
  if (x < 0.0) return __builtin_nan("");
  if (x == 0.0) return -__builtin_huge_val();
  if (x == __builtin_huge_val()) return x;
  int e = 0;
  if (x < 2.2250738585072014e-308) {
    x = x * 4503599627370496.0;
    e = -52;
  }
  const uint64_t u = D2U(x);
  e += int((u >> 52) & 0x7FF) - 1022;
  double m = U2D((u & 0x000FFFFFFFFFFFFFull) | 0x3FE0000000000000ull);  // [0.5, 1)
  if (m < 0.70710678118654752440) {
    e -= 1;
    m = m + m;
  }
  const double f = m - 1.0;
  const double s = f / (2.0 + f);
  const double z = s * s;
  // 2 atanh(s) = 2 (s + s^3/3 + ... + s^23/23)
  double p = 1.0 / 23.0;
  for (int k = 21; k >= 3; k -= 2) p = p * z + 1.0 / double(k);
  p = p * z;
  const double de = double(e);
  const double r = (2.0 * s + 2.0 * s * p) + de * 1.90821492927058770002e-10;
  return r + de * 6.93147180369123816490e-01;
}

namespace {
// y is an integer; returns 1 if odd, 0 if even, -1 if not an integer.
int IntegerParity(double y) {
  const double a = y < 0 ? -y : y;
  if (a >= 9007199254740992.0) return 0;  // every binary64 this large is even
  const int64_t i = int64_t(a);
  if (double(i) != a) return -1;
  return int(i & 1);
}
}  // namespace

double PowD(double x, double y) {
  const double inf = __builtin_huge_val();
  if (y == 0.0) return 1.0;
  if (x == 1.0) return 1.0;
  if (x != x || y != y) return __builtin_nan("");
  const int par = IntegerParity(y);
  const double ay = y < 0 ? -y : y;
  if (ay == inf) {
    const double ax = x < 0 ? -x : x;
    if (ax == 1.0) return 1.0;
    return (ax > 1.0) == (y > 0) ? inf : 0.0;
  }
  if (x == 0.0) {
    const bool neg = D2U(x) >> 63;
    if (y < 0) return (par == 1 && neg) ? -inf : inf;
    return (par == 1 && neg) ? -0.0 : 0.0;
  }
  if (x == inf) return y < 0 ? 0.0 : inf;
  if (x == -inf) {
    if (y < 0) return par == 1 ? -0.0 : 0.0;
    return par == 1 ? -inf : inf;
  }
  if (x < 0 && par < 0) return __builtin_nan("");
  const double ax = x < 0 ? -x : x;
  const double r = ExpD(y * LogD(ax));
  return (x < 0 && par == 1) ? -r : r;
}

namespace {
// sin(r), cos(r) for |r| <= pi/4 by Taylor series to degree 19 / 18 (truncation error
// below 1e-20).
double SinPolyD(double r) {
  const double z = r * r;
  const double c[] = {-1.0 / 121645100408832000.0,
                      1.0 / 355687428096000.0,
                      -1.0 / 1307674368000.0,
                      1.0 / 6227020800.0,
                      -1.0 / 39916800.0,
                      1.0 / 362880.0,
                      -1.0 / 5040.0,
                      1.0 / 120.0,
                      -1.0 / 6.0};
  double p = c[0];
  for (size_t k = 1; k < sizeof(c) / sizeof(c[0]); ++k) p = p * z + c[k];
  return r + (r * z) * p;
}
double CosPolyD(double r) {
  const double z = r * r;
  const double c[] = {-1.0 / 6402373705728000.0,
                      1.0 / 20922789888000.0,
                      -1.0 / 87178291200.0,
                      1.0 / 479001600.0,
                      -1.0 / 3628800.0,
                      1.0 / 40320.0,
                      -1.0 / 720.0,
                      1.0 / 24.0,
                      -0.5};
  double p = c[0];
  for (size_t k = 1; k < sizeof(c) / sizeof(c[0]); ++k) p = p * z + c[k];
  return 1.0 + z * p;
}
// x - q * pi/2 with pi/2 in four parts of 33 bits (exact products for |q| < 2^20); q is
// x * 2/pi rounded half away from zero by adding 1/2 in binary64 and truncating. Where
// |x * 2/pi| >= 2^62 it is x * 2/pi itself, a multiple of 2^10, so *q is 0 (mod 4).
double ReducePiO2D(double x, int64_t* q) {
  const double t = x * 0.63661977236758134308;  // 2/pi
  const double at = t < 0 ? -t : t;
  const bool big = at >= 4611686018427387904.0;  // 2^62: int64 conversion would overflow
  const double qd = big ? t : t < 0 ? -double(int64_t(-t + 0.5)) : double(int64_t(t + 0.5));
  *q = big ? 0 : int64_t(qd);
  return (((x - qd * 1.5707963267341256) - qd * 6.077100506303966e-11) - qd * 2.0222662487111665e-21) -
         qd * 8.4784276603689e-32;
}
}  // namespace

double SinD(double x) {
  if (x != x || x == __builtin_huge_val() || x == -__builtin_huge_val()) return __builtin_nan("");
  int64_t q;
  const double r = ReducePiO2D(x, &q);
  switch (q & 3) {
    case 0: return SinPolyD(r);
    case 1: return CosPolyD(r);
    case 2: return -SinPolyD(r);
    default: return -CosPolyD(r);
  }
}

double CosD(double x) {
  if (x != x || x == __builtin_huge_val() || x == -__builtin_huge_val()) return __builtin_nan("");
  int64_t q;
  const double r = ReducePiO2D(x, &q);
  switch (q & 3) {
    case 0: return CosPolyD(r);
    case 1: return -SinPolyD(r);
    case 2: return -CosPolyD(r);
    default: return SinPolyD(r);
  }
}

float Pow(float x, float y) {
  // In binary64, then one rounding to binary32.
  return float(PowD(double(x), double(y)));
}

}  // namespace math
}  // namespace onemodel::impl
