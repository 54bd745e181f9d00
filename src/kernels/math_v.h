// The project's own functions (ref/math.cpp) on vectors: each is the scalar reference's
// sequence of basic operations, operation for operation, with its branches computed for
// every lane and selected (exact-contract section 4). Compiled per target.
#pragma once

#include "simd/simd.h"

namespace onemodel {
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
  // ScaleB(p, n): n > 127: p * 2^127 * 2^min(n - 127, 127); n < -126: p * 2^(n + 64) *
  // 2^-64; else p * 2^n (times 1, exactly). Lanes where x is NaN or out of range get
  // any scale: they are replaced below.
  const VI32 ni = CvtRoundEvenSatF32ToI32(n);
  const VI32 big = Gt(ni, Set<VI32>(127)), small = Lt(ni, Set<VI32>(-126));
  const VI32 e1 = IfThenElse(big, Set<VI32>(127), IfThenElse(small, Add(ni, Set<VI32>(64)), ni));
  const VI32 e2 = IfThenElse(big, Min(Sub(ni, Set<VI32>(127)), Set<VI32>(127)), IfThenElse(small, Set<VI32>(-64), Zero<VI32>()));
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
inline VF32 HalfExpLargeV(VF32 a) { return Mul(ExpV(Sub(a, Set<VF32>(0.693359375f))), Set<VF32>(1.00021219253540039f)); }

// math::Atan: the argument moved below tan(pi/8) (by -1/a or (a-1)/(a+1)), the
// polynomial, the offset added, the sign copied.
inline VF32 AtanV(VF32 x) {
  const VF32 one = Set<VF32>(1.0f), a0 = Abs(x);
  const VF32 big = Gt(a0, Set<VF32>(2.414213562373095f)), mid = Gt(a0, Set<VF32>(0.4142135623730950f));
  const VF32 y0 = IfThenElse(big, Set<VF32>(1.5707963267948966f), IfThenElse(mid, Set<VF32>(0.7853981633974483f), Zero<VF32>()));
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

// math::Erf.
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
  // 1 < |x| < 4: erfc(a) = exp(-a^2) / a * P(1/a^2).
  const VF32 q = Div(one, a);
  const VF32 y = Mul(q, q);
  VF32 pa = Set<VF32>(2.326819970068386e-2f);
  pa = Sub(Mul(pa, y), Set<VF32>(1.387039388740657e-1f));
  pa = Add(Mul(pa, y), Set<VF32>(3.687424674597105e-1f));
  pa = Sub(Mul(pa, y), Set<VF32>(5.824733027278666e-1f));
  pa = Add(Mul(pa, y), Set<VF32>(6.210004621745983e-1f));
  pa = Sub(Mul(pa, y), Set<VF32>(4.944515323274145e-1f));
  pa = Add(Mul(pa, y), Set<VF32>(3.404879937665872e-1f));
  pa = Sub(Mul(pa, y), Set<VF32>(2.741127028184656e-1f));
  pa = Add(Mul(pa, y), Set<VF32>(5.638259427386472e-1f));
  VF32 pb = Set<VF32>(-1.047766399936249e1f);
  pb = Add(Mul(pb, y), Set<VF32>(1.297719955372516e1f));
  pb = Sub(Mul(pb, y), Set<VF32>(7.495518717768503e0f));
  pb = Add(Mul(pb, y), Set<VF32>(2.921019019210786e0f));
  pb = Sub(Mul(pb, y), Set<VF32>(1.015265279202700e0f));
  pb = Add(Mul(pb, y), Set<VF32>(4.218463358204948e-1f));
  pb = Sub(Mul(pb, y), Set<VF32>(2.820767439740514e-1f));
  pb = Add(Mul(pb, y), Set<VF32>(5.641895067754075e-1f));
  const VF32 p = IfThenElse(Lt(a, Set<VF32>(2.0f)), pa, pb);
  const VF32 hi = And(a, BitCast<VF32>(Set<VI32>(int32_t(0xFFFFF000u))));
  const VF32 lo = Sub(a, hi);
  const VF32 e = Mul(ExpV(Neg(Mul(hi, hi))), ExpV(Neg(Mul(lo, Add(a, hi)))));
  const VF32 erfc = Mul(Mul(e, q), p);
  VF32 r = CopySignV(Sub(one, erfc), x);
  r = IfThenElse(Ge(a, Set<VF32>(4.0f)), CopySignV(one, x), r);
  r = IfThenElse(Le(a, one), r1, r);
  return IfThenElse(Ne(x, x), x, r);
}

}  // namespace ONEMODEL_NS
}  // namespace onemodel
