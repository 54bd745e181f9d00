// The project's own functions (ref/math.cpp) on vectors: each is the scalar reference's
// sequence of basic operations, operation for operation, with its branches computed for
// every lane and selected (exact-contract section 4). Compiled per target.
#pragma once

#include "simd/simd.h"

namespace onemodel::impl {
namespace ONEMODEL_NS {

inline VF32 CopySignV(VF32 mag, VF32 sign) { return Or(Abs(mag), And(sign, Set<VF32>(-0.0f))); }

// 2^e for integer lanes e in [-126, 127] (exact).
inline VF32 Pow2V(VI32 e) { return BitCast<VF32>(ShiftLeft<23>(Add(e, Set<VI32>(127)))); }

// math::Exp.
inline VF32 ExpV(VF32 x) {
  const VF32 n = RoundEven(Mul(x, Set<VF32>(1.44269504088896341f)));
  VF32 r = Sub(x, Mul(n, Set<VF32>(0.693359375f)));
  r = Sub(r, Mul(n, Set<VF32>(-2.12194440e-4f)));
  const VF32 z = Mul(r, r);
  VF32 p = Set<VF32>(1.9875691500e-4f);
  p = Add(Mul(p, r), Set<VF32>(1.3981999507e-3f));
  p = Add(Mul(p, r), Set<VF32>(8.3334519073e-3f));
  p = Add(Mul(p, r), Set<VF32>(4.1665795894e-2f));
  p = Add(Mul(p, r), Set<VF32>(1.6666665459e-1f));
  p = Add(Mul(p, r), Set<VF32>(5.0000001201e-1f));
  p = Add(Mul(p, z), r);
  p = Add(p, Set<VF32>(1.0f));
  // Every lane in [-87, 88] (no NaN): n in [-126, 127], where ScaleB is p * 2^n times 1
  // (exact), and no special applies: the one multiply is the general path's result.
  if (AllTrue(And(Ge(x, Set<VF32>(-87.0f)), Le(x, Set<VF32>(88.0f))))) return Mul(p, Pow2V(CvtRoundEvenSatF32ToI32(n)));
  // ScaleB(p, n): n > 127: p * 2^127 * 2^min(n - 127, 127); n < -126: p * 2^(n + 64) *
  // 2^-64; else p * 2^n (times 1, exactly). Lanes where x is NaN or out of range get
  // any scale: they are replaced below.
  const VI32 ni = CvtRoundEvenSatF32ToI32(n);
  const VI32 big = Gt(ni, Set<VI32>(127)), small = Lt(ni, Set<VI32>(-126));
  const VI32 e1 = IfThenElse(big, Set<VI32>(127), IfThenElse(small, Add(ni, Set<VI32>(64)), ni));
  const VI32 e2 =
      IfThenElse(big, Min(Sub(ni, Set<VI32>(127)), Set<VI32>(127)), IfThenElse(small, Set<VI32>(-64), Zero<VI32>()));
  const VI32 ok = And(Gt(ni, Set<VI32>(-200)), Lt(ni, Set<VI32>(200)));  // keeps the shifts in range
  VF32 y = Mul(Mul(p, Pow2V(IfThenElse(ok, e1, Zero<VI32>()))), Pow2V(IfThenElse(ok, e2, Zero<VI32>())));
  y = IfThenElse(Gt(x, Set<VF32>(88.72283935546875f)), Set<VF32>(__builtin_inff()), y);
  y = IfThenElse(Lt(x, Set<VF32>(-103.97208404541015625f)), Zero<VF32>(), y);
  return IfThenElse(Ne(x, x), x, y);
}

// math::Log: subnormals scaled by 2^23 first; the exponent and the mantissa in [0.5, 1)
// from the bits, moved to [sqrt(1/2), sqrt(2)) - 1; the polynomial; the exponent's two
// parts of ln 2 added last. Specials selected in the scalar function's order.
inline VF32 LogV(VF32 x0) {
  const VF32 one = Set<VF32>(1.0f);
  const VF32 sub = Lt(x0, Set<VF32>(1.17549435e-38f));
  const VF32 x = IfThenElse(sub, Mul(x0, Set<VF32>(8388608.0f)), x0);
  const VI32 u = BitCast<VI32>(x);
  VI32 e = Add(IfThenElse(BitCast<VI32>(sub), Set<VI32>(-23), Zero<VI32>()),
               Sub(And(ShiftRight<23>(u), Set<VI32>(0xFF)), Set<VI32>(126)));
  VF32 m = BitCast<VF32>(Or(And(u, Set<VI32>(0x007FFFFF)), Set<VI32>(0x3F000000)));
  const VF32 low = Lt(m, Set<VF32>(0.707106781186547524f));
  e = Sub(e, IfThenElse(BitCast<VI32>(low), Set<VI32>(1), Zero<VI32>()));
  m = IfThenElse(low, Sub(Add(m, m), one), Sub(m, one));
  const VF32 z = Mul(m, m);
  VF32 y = Set<VF32>(7.0376836292e-2f);
  y = Sub(Mul(y, m), Set<VF32>(1.1514610310e-1f));
  y = Add(Mul(y, m), Set<VF32>(1.1676998740e-1f));
  y = Sub(Mul(y, m), Set<VF32>(1.2420140846e-1f));
  y = Add(Mul(y, m), Set<VF32>(1.4249322787e-1f));
  y = Sub(Mul(y, m), Set<VF32>(1.6668057665e-1f));
  y = Add(Mul(y, m), Set<VF32>(2.0000714765e-1f));
  y = Sub(Mul(y, m), Set<VF32>(2.4999993993e-1f));
  y = Add(Mul(y, m), Set<VF32>(3.3333331174e-1f));
  y = Mul(y, m);
  y = Mul(y, z);
  const VF32 fe = CvtI32ToF32(e);
  y = Add(y, Mul(fe, Set<VF32>(-2.12194440e-4f)));
  y = Add(y, Mul(Set<VF32>(-0.5f), z));
  VF32 r = Add(m, y);
  r = Add(r, Mul(fe, Set<VF32>(0.693359375f)));
  const VF32 inf = Set<VF32>(__builtin_inff());
  r = IfThenElse(Eq(x0, inf), inf, r);
  r = IfThenElse(Eq(x0, Zero<VF32>()), Neg(inf), r);
  r = IfThenElse(Lt(x0, Zero<VF32>()), Set<VF32>(__builtin_nanf("")), r);
  return IfThenElse(Ne(x0, x0), x0, r);
}

// math::Log1p: NaN stays; u = 1 + x; u == 1: x; u == inf: Log(u); else
// Log(u) * (x / (u - 1)).
inline VF32 Log1pV(VF32 x) {
  const VF32 one = Set<VF32>(1.0f);
  const VF32 u = Add(one, x);
  const VF32 lu = LogV(u);
  VF32 r = Mul(lu, Div(x, Sub(u, one)));
  r = IfThenElse(Eq(u, Set<VF32>(__builtin_inff())), lu, r);
  r = IfThenElse(Eq(u, one), x, r);
  return IfThenElse(Ne(x, x), x, r);
}

// math::Tanh.
inline VF32 TanhV(VF32 x) {
  const VF32 z = Abs(x), one = Set<VF32>(1.0f);
  const VF32 s = ExpV(Add(z, z));
  const VF32 big = CopySignV(Sub(one, Div(Set<VF32>(2.0f), Add(s, one))), x);
  const VF32 w = Mul(x, x);
  VF32 p = Set<VF32>(-5.70498872745e-3f);
  p = Add(Mul(p, w), Set<VF32>(2.06390887954e-2f));
  p = Sub(Mul(p, w), Set<VF32>(5.37397155531e-2f));
  p = Add(Mul(p, w), Set<VF32>(1.33314422036e-1f));
  p = Sub(Mul(p, w), Set<VF32>(3.33332819422e-1f));
  p = Mul(p, w);
  p = Mul(p, x);
  VF32 r = Add(p, x);
  r = IfThenElse(Eq(z, Zero<VF32>()), x, r);
  r = IfThenElse(Ge(z, Set<VF32>(0.625f)), big, r);
  r = IfThenElse(Gt(z, Set<VF32>(9.0f)), CopySignV(one, x), r);
  return IfThenElse(Ne(x, x), x, r);
}

// math::Sigmoid: x >= 0: 1 / (1 + exp(-x)); else exp(x) / (1 + exp(x)).
inline VF32 SigmoidV(VF32 x) {
  const VF32 one = Set<VF32>(1.0f);
  const VF32 pos = Ge(x, Zero<VF32>());
  const VF32 e = ExpV(IfThenElse(pos, Neg(x), x));
  const VF32 r = IfThenElse(pos, Div(one, Add(one, e)), Div(e, Add(one, e)));
  return IfThenElse(Ne(x, x), x, r);
}

// exp(a) / 2 for large a (math::HalfExpLarge).
inline VF32 HalfExpLargeV(VF32 a) {
  return Mul(ExpV(Sub(a, Set<VF32>(0.693359375f))), Set<VF32>(1.00021219253540039f));
}

// math::Atan: the argument moved below tan(pi/8) (by -1/a or (a-1)/(a+1)), the
// polynomial, the offset added, the sign copied.
inline VF32 AtanV(VF32 x) {
  const VF32 one = Set<VF32>(1.0f), a0 = Abs(x);
  const VF32 big = Gt(a0, Set<VF32>(2.414213562373095f)), mid = Gt(a0, Set<VF32>(0.4142135623730950f));
  const VF32 y0 =
      IfThenElse(big, Set<VF32>(1.5707963267948966f), IfThenElse(mid, Set<VF32>(0.7853981633974483f), Zero<VF32>()));
  const VF32 a = IfThenElse(big, Div(Set<VF32>(-1.0f), a0), IfThenElse(mid, Div(Sub(a0, one), Add(a0, one)), a0));
  const VF32 z = Mul(a, a);
  VF32 p = Set<VF32>(8.05374449538e-2f);
  p = Sub(Mul(p, z), Set<VF32>(1.38776856032e-1f));
  p = Add(Mul(p, z), Set<VF32>(1.99777106478e-1f));
  p = Sub(Mul(p, z), Set<VF32>(3.33329491539e-1f));
  p = Mul(p, z);
  p = Mul(p, a);
  const VF32 r = CopySignV(Add(y0, Add(p, a)), x);
  return IfThenElse(Ne(x, x), x, r);
}

// math::Asin: above 0.5 through sqrt((1 - a) / 2) and pi/2 - 2 asin, the sign copied.
inline VF32 AsinV(VF32 x) {
  const VF32 one = Set<VF32>(1.0f), a = Abs(x);
  const VF32 big = Gt(a, Set<VF32>(0.5f));
  const VF32 zb = Mul(Set<VF32>(0.5f), Sub(one, a));
  const VF32 z = IfThenElse(big, zb, Mul(a, a)), v = IfThenElse(big, Sqrt(zb), a);
  VF32 p = Set<VF32>(4.2163199048e-2f);
  p = Add(Mul(p, z), Set<VF32>(2.4181311049e-2f));
  p = Add(Mul(p, z), Set<VF32>(4.5470025998e-2f));
  p = Add(Mul(p, z), Set<VF32>(7.4953002686e-2f));
  p = Add(Mul(p, z), Set<VF32>(1.6666752422e-1f));
  p = Mul(p, z);
  p = Mul(p, v);
  VF32 r = Add(p, v);
  const VF32 rr = Add(r, r);
  r = IfThenElse(big, Sub(Set<VF32>(1.5707963267948966f), rr), r);
  r = CopySignV(r, x);
  r = IfThenElse(Gt(a, one), Set<VF32>(__builtin_nanf("")), r);
  return IfThenElse(Ne(x, x), x, r);
}

// math::Acos: through Asin of sqrt((1 +- x) / 2) beyond +-0.5, else pi/2 - Asin(x).
inline VF32 AcosV(VF32 x) {
  const VF32 one = Set<VF32>(1.0f), half = Set<VF32>(0.5f), two = Set<VF32>(2.0f);
  const VF32 lo = Lt(x, Set<VF32>(-0.5f)), hi = Gt(x, half);
  const VF32 t = IfThenElse(lo, Sqrt(Mul(half, Add(one, x))), IfThenElse(hi, Sqrt(Mul(half, Sub(one, x))), x));
  const VF32 s = AsinV(t);
  VF32 r = IfThenElse(lo, Sub(Set<VF32>(3.14159265358979f), Mul(two, s)),
                      IfThenElse(hi, Mul(two, s), Sub(Set<VF32>(1.5707963267948966f), s)));
  r = IfThenElse(Gt(Abs(x), one), Set<VF32>(__builtin_nanf("")), r);
  return IfThenElse(Ne(x, x), x, r);
}

// math::Sinh: the odd polynomial up to 1, (e - 1/e) / 2 beyond, exp(a) / 2 past 88.
inline VF32 SinhV(VF32 x) {
  const VF32 half = Set<VF32>(0.5f), a = Abs(x);
  const VF32 e = ExpV(a);
  const VF32 mid = CopySignV(Sub(Mul(half, e), Div(half, e)), x);
  const VF32 large = CopySignV(HalfExpLargeV(a), x);
  const VF32 z = Mul(x, x);
  VF32 p = Set<VF32>(2.03721912945e-4f);
  p = Add(Mul(p, z), Set<VF32>(8.33028376239e-3f));
  p = Add(Mul(p, z), Set<VF32>(1.66667160211e-1f));
  p = Mul(p, z);
  p = Mul(p, x);
  VF32 r = Add(p, x);
  r = IfThenElse(Gt(a, Set<VF32>(1.0f)), mid, r);
  r = IfThenElse(Gt(a, Set<VF32>(88.0f)), large, r);
  return IfThenElse(Ne(x, x), x, r);
}

// math::Cosh: (e + 1/e) / 2, exp(a) / 2 past 88.
inline VF32 CoshV(VF32 x) {
  const VF32 half = Set<VF32>(0.5f), a = Abs(x);
  const VF32 e = ExpV(a);
  const VF32 r = IfThenElse(Gt(a, Set<VF32>(88.0f)), HalfExpLargeV(a), Add(Mul(half, e), Div(half, e)));
  return IfThenElse(Ne(x, x), x, r);
}

// math::Asinh: log1p(a + a^2 / (1 + sqrt(1 + a^2))), log(a) + ln 2 past 1e4, the sign
// copied.
inline VF32 AsinhV(VF32 x) {
  const VF32 one = Set<VF32>(1.0f), a = Abs(x);
  const VF32 a2 = Mul(a, a);
  const VF32 small = Log1pV(Add(a, Div(a2, Add(one, Sqrt(Add(one, a2))))));
  const VF32 r = IfThenElse(Gt(a, Set<VF32>(1.0e4f)), Add(LogV(a), Set<VF32>(0.693147180559945f)), small);
  return IfThenElse(Ne(x, x), x, CopySignV(r, x));
}

// math::Acosh: log1p(t + sqrt(2t + t^2)) with t = x - 1, log(x) + ln 2 past 1e4.
inline VF32 AcoshV(VF32 x) {
  const VF32 t = Sub(x, Set<VF32>(1.0f));
  VF32 r = Log1pV(Add(t, Sqrt(Add(Add(t, t), Mul(t, t)))));
  r = IfThenElse(Gt(x, Set<VF32>(1.0e4f)), Add(LogV(x), Set<VF32>(0.693147180559945f)), r);
  r = IfThenElse(Lt(x, Set<VF32>(1.0f)), Set<VF32>(__builtin_nanf("")), r);
  return IfThenElse(Ne(x, x), x, r);
}

// math::Atanh: log1p(2a / (1 - a)) / 2, +-inf at +-1, the sign copied.
inline VF32 AtanhV(VF32 x) {
  const VF32 one = Set<VF32>(1.0f), a = Abs(x);
  VF32 r = CopySignV(Mul(Set<VF32>(0.5f), Log1pV(Div(Add(a, a), Sub(one, a)))), x);
  r = IfThenElse(Eq(a, one), CopySignV(Set<VF32>(__builtin_inff()), x), r);
  r = IfThenElse(Gt(a, one), Set<VF32>(__builtin_nanf("")), r);
  return IfThenElse(Ne(x, x), x, r);
}

// math::Softplus: NaN stays; x > 20: x; else Log1p(Exp(x)).
inline VF32 SoftplusV(VF32 x) {
  const VF32 r = IfThenElse(Gt(x, Set<VF32>(20.0f)), x, Log1pV(ExpV(x)));
  return IfThenElse(Ne(x, x), x, r);
}

// math::Erf's polynomial of erfc for 1 < a < 2, in y = 1 / a^2.
inline VF32 ErfcPolyLowV(VF32 y) {
  VF32 pa = Set<VF32>(2.326819970068386e-2f);
  pa = Sub(Mul(pa, y), Set<VF32>(1.387039388740657e-1f));
  pa = Add(Mul(pa, y), Set<VF32>(3.687424674597105e-1f));
  pa = Sub(Mul(pa, y), Set<VF32>(5.824733027278666e-1f));
  pa = Add(Mul(pa, y), Set<VF32>(6.210004621745983e-1f));
  pa = Sub(Mul(pa, y), Set<VF32>(4.944515323274145e-1f));
  pa = Add(Mul(pa, y), Set<VF32>(3.404879937665872e-1f));
  pa = Sub(Mul(pa, y), Set<VF32>(2.741127028184656e-1f));
  return Add(Mul(pa, y), Set<VF32>(5.638259427386472e-1f));
}

// The same for 2 <= a < 4.
inline VF32 ErfcPolyHighV(VF32 y) {
  VF32 pb = Set<VF32>(-1.047766399936249e1f);
  pb = Add(Mul(pb, y), Set<VF32>(1.297719955372516e1f));
  pb = Sub(Mul(pb, y), Set<VF32>(7.495518717768503e0f));
  pb = Add(Mul(pb, y), Set<VF32>(2.921019019210786e0f));
  pb = Sub(Mul(pb, y), Set<VF32>(1.015265279202700e0f));
  pb = Add(Mul(pb, y), Set<VF32>(4.218463358204948e-1f));
  pb = Sub(Mul(pb, y), Set<VF32>(2.820767439740514e-1f));
  return Add(Mul(pb, y), Set<VF32>(5.641895067754075e-1f));
}

// math::Erf. Work no lane selects is skipped by whole vectors (AllTrue): the branches
// choose which lanes' values are computed, never how.
inline VF32 ErfV(VF32 x) {
  const VF32 a = Abs(x), one = Set<VF32>(1.0f);
  // |x| <= 1.
  const VF32 z = Mul(x, x);
  VF32 p1 = Set<VF32>(7.853861353153693e-5f);
  p1 = Sub(Mul(p1, z), Set<VF32>(8.010193625184903e-4f));
  p1 = Add(Mul(p1, z), Set<VF32>(5.188327685732524e-3f));
  p1 = Sub(Mul(p1, z), Set<VF32>(2.685381193529856e-2f));
  p1 = Add(Mul(p1, z), Set<VF32>(1.128358514861418e-1f));
  p1 = Sub(Mul(p1, z), Set<VF32>(3.761262582423300e-1f));
  p1 = Add(Mul(p1, z), Set<VF32>(1.128379165726710e0f));
  const VF32 r1 = Mul(x, p1);
  if (AllTrue(Le(a, one))) return r1;
  // 1 < |x| < 4: erfc(a) = exp(-a^2) / a * P(1/a^2).
  const VF32 q = Div(one, a);
  const VF32 y = Mul(q, q);
  const VF32 low = Lt(a, Set<VF32>(2.0f));
  VF32 p;
  if (AllTrue(low))
    p = ErfcPolyLowV(y);
  else if (AllTrue(Ge(a, Set<VF32>(2.0f))))
    p = ErfcPolyHighV(y);
  else
    p = IfThenElse(low, ErfcPolyLowV(y), ErfcPolyHighV(y));
  const VF32 hi = And(a, BitCast<VF32>(Set<VI32>(int32_t(0xFFFFF000u))));
  const VF32 lo = Sub(a, hi);
  const VF32 e = Mul(ExpV(Neg(Mul(hi, hi))), ExpV(Neg(Mul(lo, Add(a, hi)))));
  const VF32 erfc = Mul(Mul(e, q), p);
  VF32 r = CopySignV(Sub(one, erfc), x);
  r = IfThenElse(Ge(a, Set<VF32>(4.0f)), CopySignV(one, x), r);
  r = IfThenElse(Le(a, one), r1, r);
  return IfThenElse(Ne(x, x), x, r);
}

// ---- Binary64 steps (VF64 lanes, VF32::kLanes / 2 of them) --------------------------

// 2^k for integer-valued lanes k in [-1022, 1023] (exact): k + (2^52 + 1023) holds
// k + 1023 in its low mantissa bits; shifted up 52 they are the exponent field.
inline VF64 Pow2DV(VF64 k) {
  return BitCast<VF64>(ShiftLeft<52>(BitCast<VU64>(Add(k, Set<VF64>(4503599627370496.0 + 1023.0)))));
}

// math::ExpD: n = x / ln 2 rounded half away from zero (by + 1/2 and truncation, as the
// scalar's integer conversion), the two-part reduction, Taylor to r^13/13!, ScaleBD's
// three cases as two multiplies (the second by 1 where the scalar has one).
inline VF64 ExpDV(VF64 x) {
  const VF64 t = Mul(x, Set<VF64>(1.4426950408889634));
  const VF64 half = Set<VF64>(0.5);
  const VF64 n = IfThenElse(Lt(t, Set<VF64>(0.0)), Neg(Trunc(Add(Neg(t), half))), Trunc(Add(t, half)));
  const VF64 r =
      Sub(Sub(x, Mul(n, Set<VF64>(6.93147180369123816490e-01))), Mul(n, Set<VF64>(1.90821492927058770002e-10)));
  constexpr double c[] = {1.0 / 479001600.0,
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
  VF64 p = Set<VF64>(1.0 / 6227020800.0);
  for (double k : c) p = Add(Mul(p, r), Set<VF64>(k));
  // ScaleBD(p, n): n > 1023: p * 2^1023 * 2^min(n - 1023, 1023); n < -1022: p * 2^(n + 512)
  // * 2^-512; else p * 2^n * 1. Lanes outside the range below get any scale (replaced).
  const VF64 big = Gt(n, Set<VF64>(1023.0)), small = Lt(n, Set<VF64>(-1022.0));
  const VF64 zero = Set<VF64>(0.0);
  VF64 n1 = IfThenElse(big, Set<VF64>(1023.0), IfThenElse(small, Add(n, Set<VF64>(512.0)), n));
  VF64 n2 = IfThenElse(big, Sub(n, Set<VF64>(1023.0)), IfThenElse(small, Set<VF64>(-512.0), zero));
  const VF64 ok = And(Gt(n, Set<VF64>(-1100.0)), Lt(n, Set<VF64>(1100.0)));  // keeps the exponents in range
  n1 = IfThenElse(ok, n1, zero);
  n2 = IfThenElse(ok, n2, zero);
  VF64 y = Mul(Mul(p, Pow2DV(n1)), Pow2DV(n2));
  y = IfThenElse(Gt(x, Set<VF64>(709.782712893384)), Set<VF64>(__builtin_inf()), y);
  y = IfThenElse(Lt(x, Set<VF64>(-745.1332191019412)), zero, y);
  return IfThenElse(Ne(x, x), x, y);
}

// math::LogD: subnormals scaled by 2^52 first; the exponent and the mantissa in
// [0.5, 1) from the bits (the exponent field made a binary64 by the 2^52 trick), moved
// to [sqrt(1/2), sqrt(2)); 2 atanh(s) by its series to s^23/23; ln 2 in two parts.
inline VF64 LogDV(VF64 x0) {
  const VF64 two52 = Set<VF64>(4503599627370496.0);
  const VF64 sub = Lt(x0, Set<VF64>(2.2250738585072014e-308));
  const VF64 x = IfThenElse(sub, Mul(x0, two52), x0);
  const VU64 u = BitCast<VU64>(x);
  const VF64 field = Sub(BitCast<VF64>(Or(And(ShiftRight<52>(u), Set<VU64>(0x7FF)), BitCast<VU64>(two52))), two52);
  VF64 e = Add(IfThenElse(sub, Set<VF64>(-52.0), Set<VF64>(0.0)), Sub(field, Set<VF64>(1022.0)));
  VF64 m = BitCast<VF64>(Or(And(u, Set<VU64>(0x000FFFFFFFFFFFFFull)), Set<VU64>(0x3FE0000000000000ull)));
  const VF64 low = Lt(m, Set<VF64>(0.70710678118654752440));
  e = IfThenElse(low, Sub(e, Set<VF64>(1.0)), e);
  m = IfThenElse(low, Add(m, m), m);
  const VF64 f = Sub(m, Set<VF64>(1.0));
  const VF64 s = Div(f, Add(Set<VF64>(2.0), f));
  const VF64 z = Mul(s, s);
  VF64 p = Set<VF64>(1.0 / 23.0);
  for (int k = 21; k >= 3; k -= 2) p = Add(Mul(p, z), Set<VF64>(1.0 / double(k)));
  p = Mul(p, z);
  const VF64 s2 = Mul(Set<VF64>(2.0), s);
  const VF64 r = Add(Add(s2, Mul(s2, p)), Mul(e, Set<VF64>(1.90821492927058770002e-10)));
  VF64 y = Add(r, Mul(e, Set<VF64>(6.93147180369123816490e-01)));
  const VF64 inf = Set<VF64>(__builtin_inf());
  y = IfThenElse(Eq(x0, inf), x0, y);
  y = IfThenElse(Eq(x0, Set<VF64>(0.0)), Neg(inf), y);
  y = IfThenElse(Lt(x0, Set<VF64>(0.0)), Set<VF64>(__builtin_nan("")), y);
  return IfThenElse(Ne(x0, x0), x0, y);
}

// math::PowD: the general ExpD(y * LogD|x|) with the sign of an odd integer power of a
// negative base, then the scalar's special cases selected in reverse order of its
// checks (the first check that holds there is applied last here).
inline VF64 PowDV(VF64 x, VF64 y) {
  const VF64 zero = Set<VF64>(0.0), one = Set<VF64>(1.0), inf = Set<VF64>(__builtin_inf());
  const VF64 nan = Set<VF64>(__builtin_nan(""));
  const VF64 ax = Abs(x), ay = Abs(y);
  const VF64 r = ExpDV(Mul(y, LogDV(ax)));
  // IntegerParity(y): -1 not an integer, else 1 odd / 0 even (0 for |y| >= 2^53).
  const VF64 ti = Trunc(ay);
  const VF64 isint = Eq(ti, ay);
  const VF64 odd = And(isint, Eq(Sub(ti, Mul(Set<VF64>(2.0), Floor(Mul(ti, Set<VF64>(0.5))))), one));
  const VF64 xneg = Lt(x, zero), yneg = Lt(y, zero);
  VF64 res = IfThenElse(And(xneg, odd), Neg(r), r);
  res = IfThenElse(AndNot(isint, xneg), nan, res);  // x < 0, y not an integer
  const VF64 signed_inf = IfThenElse(odd, Neg(inf), inf), signed_zero = IfThenElse(odd, Set<VF64>(-0.0), zero);
  res = IfThenElse(Eq(x, Neg(inf)), IfThenElse(yneg, signed_zero, signed_inf), res);
  res = IfThenElse(Eq(x, inf), IfThenElse(yneg, zero, inf), res);
  const VF64 xsign = Lt(Or(one, And(x, Set<VF64>(-0.0))), zero);  // sign bit of x (for +-0)
  const VF64 odd_neg = And(odd, xsign);
  res =
      IfThenElse(Eq(x, zero),
                 IfThenElse(yneg, IfThenElse(odd_neg, Neg(inf), inf), IfThenElse(odd_neg, Set<VF64>(-0.0), zero)), res);
  res =
      IfThenElse(Eq(ay, inf), IfThenElse(Eq(ax, one), one, IfThenElse(Xor(Gt(ax, one), Gt(y, zero)), zero, inf)), res);
  res = IfThenElse(Or(Ne(x, x), Ne(y, y)), nan, res);
  res = IfThenElse(Eq(x, one), one, res);
  return IfThenElse(Eq(y, zero), one, res);
}

// math::Pow: PowD of the widened lanes, one rounding to binary32.
inline VF32 PowV(VF32 x, VF32 y) {
  return NarrowRoundF64ToF32(PowDV(WidenLo(x), WidenLo(y)), PowDV(WidenHi(x), WidenHi(y)));
}

// Lanes where d (a binary64) rounds to the same binary32 as any value within 2^-39 of
// it relatively: d in the normal binary32 range and its 29 bits below binary32
// precision more than 2^14 from the rounding midpoint 2^28 (2^14 binary64 ulps are at
// least 2^-39 of d). NaN lanes are not safe.
inline VF64 RoundsFarFromTieV(VF64 d) {
  const VF64 low = BitCast<VF64>(Or(And(BitCast<VU64>(d), Set<VU64>(0x1FFFFFFFull)), Set<VU64>(0x4330000000000000ull)));
  const VF64 dist = Abs(Sub(low, Set<VF64>(4503599627370496.0 + 268435456.0)));  // low 29 bits - 2^28, exact
  return And(And(Ge(d, Set<VF64>(1.1754943508222875e-38)), Le(d, Set<VF64>(1.7014118346046923e38))),
             Gt(dist, Set<VF64>(16384.0)));
}

// math::Pow(x, 2): x * x in binary64 is exact, and PowD(x, 2) = exp(2 log|x|) is within
// 2^-40 of it relatively, so both round to the same binary32 wherever x * x is not near
// a rounding boundary (RoundsFarFromTieV). A vector with any other lane (ties, zeros,
// subnormal or overflowing squares, specials) takes the general PowV. The equality is
// checked on all 2^32 inputs (tests/test_kernels.cpp, "[.exhaustive]").
inline VF32 PowSquareV(VF32 x) {
  const VF64 lo = WidenLo(x), hi = WidenHi(x);
  const VF64 dl = Mul(lo, lo), dh = Mul(hi, hi);
  constexpr size_t kH = VF64::kLanes;
  uint64_t safe[2 * kH];
  Store(BitCast<VU64>(RoundsFarFromTieV(dl)), safe);
  Store(BitCast<VU64>(RoundsFarFromTieV(dh)), safe + kH);
  for (size_t i = 0; i < 2 * kH; ++i)
    if (!safe[i]) return PowV(x, Set<VF32>(2.0f));
  return NarrowRoundF64ToF32(dl, dh);
}

// math.cpp's ReducePiO4 on the lanes of |x|: r (binary32) and the octant j mod 8 (an
// integer-valued binary32), both from binary64 steps: j = trunc(|x| 4/pi) rounded up to
// even (j + (j - 2 floor(j/2))), -2^63 from 2^63 on (the scalar's documented choice),
// j mod 8 = j - 8 floor(j/8), all exact.
inline void ReducePiO4V(VF32 x, VF32* r, VF32* oct) {
  const VF32 a = Abs(x);
  auto half = [](VF64 da, VF64* rd, VF64* od) {
    const VF64 t = Mul(da, Set<VF64>(1.2732395447351628));
    VF64 j = Trunc(t);
    j = Add(j, Sub(j, Mul(Set<VF64>(2.0), Floor(Mul(j, Set<VF64>(0.5))))));
    j = IfThenElse(Ge(t, Set<VF64>(9223372036854775808.0)), Set<VF64>(-9223372036854775808.0), j);
    *od = Sub(j, Mul(Set<VF64>(8.0), Floor(Mul(j, Set<VF64>(0.125)))));
    *rd = Sub(Sub(Sub(da, Mul(j, Set<VF64>(0.785398125648498535156))), Mul(j, Set<VF64>(3.77489470793079817668e-8))),
              Mul(j, Set<VF64>(2.69515142907905952645e-15)));
  };
  VF64 rl, ol, rh, oh;
  half(WidenLo(a), &rl, &ol);
  half(WidenHi(a), &rh, &oh);
  *r = NarrowRoundF64ToF32(rl, rh);
  *oct = NarrowRoundF64ToF32(ol, oh);
}
inline VF32 SinPolyV(VF32 x) {
  const VF32 z = Mul(x, x);
  const VF32 p =
      Sub(Mul(Add(Mul(Set<VF32>(-1.9515295891e-4f), z), Set<VF32>(8.3321608736e-3f)), z), Set<VF32>(1.6666654611e-1f));
  return Add(Mul(Mul(p, z), x), x);
}
inline VF32 CosPolyV(VF32 x) {
  const VF32 z = Mul(x, x);
  const VF32 p = Add(Mul(Sub(Mul(Set<VF32>(2.443315711809948e-5f), z), Set<VF32>(1.388731625493765e-3f)), z),
                     Set<VF32>(4.166664568298827e-2f));
  return Add(Sub(Mul(Mul(p, z), z), Mul(Set<VF32>(0.5f), z)), Set<VF32>(1.0f));
}
// NaN where x is NaN or infinite (the scalar's first check), else v.
inline VF32 TrigSpecialsV(VF32 x, VF32 v) {
  return IfThenElse(Or(Ne(x, x), Eq(Abs(x), Set<VF32>(__builtin_inff()))), Set<VF32>(__builtin_nanf("")), v);
}

// math::Sin, math::Cos, math::Tan.
inline VF32 SinV(VF32 x) {
  VF32 r, oct;
  ReducePiO4V(x, &r, &oct);
  const VF32 swap = Or(Eq(oct, Set<VF32>(2.0f)), Eq(oct, Set<VF32>(6.0f)));
  const VF32 y = IfThenElse(swap, CosPolyV(r), SinPolyV(r));
  const VF32 neg = Xor(Lt(x, Zero<VF32>()), Ge(oct, Set<VF32>(4.0f)));
  return TrigSpecialsV(x, IfThenElse(neg, Neg(y), y));
}
inline VF32 CosV(VF32 x) {
  VF32 r, oct;
  ReducePiO4V(x, &r, &oct);
  const VF32 swap = Or(Eq(oct, Set<VF32>(2.0f)), Eq(oct, Set<VF32>(6.0f)));
  const VF32 y = IfThenElse(swap, SinPolyV(r), CosPolyV(r));
  const VF32 neg = Or(Eq(oct, Set<VF32>(2.0f)), Eq(oct, Set<VF32>(4.0f)));
  return TrigSpecialsV(x, IfThenElse(neg, Neg(y), y));
}
inline VF32 TanV(VF32 x) {
  VF32 r, oct;
  ReducePiO4V(x, &r, &oct);
  const VF32 z = Mul(r, r);
  VF32 p = Set<VF32>(9.38540185543e-3f);
  p = Add(Mul(p, z), Set<VF32>(3.11992232697e-3f));
  p = Add(Mul(p, z), Set<VF32>(2.44301354525e-2f));
  p = Add(Mul(p, z), Set<VF32>(5.34112807005e-2f));
  p = Add(Mul(p, z), Set<VF32>(1.33387994085e-1f));
  p = Add(Mul(p, z), Set<VF32>(3.33331568548e-1f));
  p = Mul(p, z);
  p = Mul(p, r);
  VF32 y = Add(p, r);
  const VF32 swap = Or(Eq(oct, Set<VF32>(2.0f)), Eq(oct, Set<VF32>(6.0f)));
  y = IfThenElse(swap, Div(Set<VF32>(-1.0f), y), y);
  return TrigSpecialsV(x, IfThenElse(Lt(x, Zero<VF32>()), Neg(y), y));
}

}  // namespace ONEMODEL_NS
}  // namespace onemodel::impl
