// Per-target elementwise kernels (contracts in ref/elementwise.h, ref/softmax.h and
// ref/transpose.h), written once on the vector vocabulary: one correctly rounded
// operation per lane, as the reference.
#include <algorithm>

#include "kernels/kernels.h"
#include "ref/elementwise.h"
#include "ref/softmax.h"
#include "ref/elementwise.h"
#include "ref/transpose.h"
#include "core/exact.h"
#include "kernels/math_v.h"
#include "simd/simd.h"
#include "kernels/activation_v.h"
#include "kernels/transpose.h"

namespace onemodel::impl {
namespace ONEMODEL_NS {
namespace {

constexpr size_t kN = Lanes<VF32>();

template <class F>
void Runs(F f, const float* a, int64_t sa, const float* b, int64_t sb, float* out, int64_t n) {
  int64_t i = 0;
  // Lanes past n are filled with 1.0 (never stored).
  if (sa && sb) {
    for (; i + int64_t(kN) <= n; i += int64_t(kN)) Store(f(Load<VF32>(a + i), Load<VF32>(b + i)), out + i);
    if (i < n)
      StoreN(f(LoadN<VF32>(a + i, size_t(n - i), 1.0f), LoadN<VF32>(b + i, size_t(n - i), 1.0f)), out + i,
             size_t(n - i));
  } else if (sa) {
    const VF32 bv = Set<VF32>(*b);
    for (; i + int64_t(kN) <= n; i += int64_t(kN)) Store(f(Load<VF32>(a + i), bv), out + i);
    if (i < n) StoreN(f(LoadN<VF32>(a + i, size_t(n - i), 1.0f), bv), out + i, size_t(n - i));
  } else if (sb) {
    const VF32 av = Set<VF32>(*a);
    for (; i + int64_t(kN) <= n; i += int64_t(kN)) Store(f(av, Load<VF32>(b + i)), out + i);
    if (i < n) StoreN(f(av, LoadN<VF32>(b + i, size_t(n - i), 1.0f)), out + i, size_t(n - i));
  } else {
    const VF32 r = f(Set<VF32>(*a), Set<VF32>(*b));
    for (; i + int64_t(kN) <= n; i += int64_t(kN)) Store(r, out + i);
    if (i < n) StoreN(r, out + i, size_t(n - i));
  }
}

}  // namespace

void BinaryF32(int32_t op, const float* a, int64_t sa, const float* b, int64_t sb, float* out, int64_t n) {
  switch (op) {
    case kBinAddF32: Runs([](VF32 x, VF32 y) { return Add(x, y); }, a, sa, b, sb, out, n); break;
    case kBinSubF32: Runs([](VF32 x, VF32 y) { return Sub(x, y); }, a, sa, b, sb, out, n); break;
    case kBinMulF32: Runs([](VF32 x, VF32 y) { return Mul(x, y); }, a, sa, b, sb, out, n); break;
    case kBinDivF32: Runs([](VF32 x, VF32 y) { return Div(x, y); }, a, sa, b, sb, out, n); break;
    case kBinMaxF32: Runs([](VF32 x, VF32 y) { return MaxIeee(x, y); }, a, sa, b, sb, out, n); break;
    case kBinMinF32: Runs([](VF32 x, VF32 y) { return MinIeee(x, y); }, a, sa, b, sb, out, n); break;
    case kBinPowF32:
      if (sb == 0 && *b == 2.0f)
        Runs([](VF32 x, VF32) { return PowSquareV(x); }, a, sa, b, sb, out, n);
      else
        Runs([](VF32 x, VF32 y) { return PowV(x, y); }, a, sa, b, sb, out, n);
      break;
    default: break;
  }
}

void UnaryF32(int32_t op, float p0, float p1, const float* x, float* out, int64_t n) {
  const VF32 a = Set<VF32>(p0), b = Set<VF32>(p1);
  auto run = [&](auto f) {
    int64_t i = 0;
    for (; i + int64_t(kN) <= n; i += int64_t(kN)) Store(f(Load<VF32>(x + i)), out + i);
    if (i < n) StoreN(f(LoadN<VF32>(x + i, size_t(n - i), 0.0f)), out + i, size_t(n - i));
  };
  switch (op) {
    case kUnReluF32: run([&](VF32 v) { return ReluV(v); }); break;
    case kUnClipF32:
      run([&](VF32 v) {
        const VF32 r = IfThenElse(Lt(v, a), a, v);
        return IfThenElse(Gt(r, b), b, r);
      });
      break;
    case kUnHardSigmoidF32: run([&](VF32 v) { return Clamp01V(Add(Mul(a, v), b)); }); break;
    case kUnHardSwishF32: run([&](VF32 v) { return HardSwishV(v); }); break;
    // The reference's expressions (ref/elementwise.h), their selections per lane.
    case kUnEluF32:
      run([&](VF32 v) { return IfThenElse(Lt(v, Zero<VF32>()), Mul(a, Sub(ExpV(v), Set<VF32>(1.0f))), v); });
      break;
    case kUnSeluF32:
      run([&](VF32 v) { return IfThenElse(Le(v, Zero<VF32>()), Mul(b, Sub(Mul(a, ExpV(v)), a)), Mul(b, v)); });
      break;
    case kUnCeluF32:
      run([&](VF32 v) {
        const VF32 zero = Zero<VF32>(), m = Mul(a, Sub(ExpV(Div(v, a)), Set<VF32>(1.0f)));
        return Add(IfThenElse(Gt(v, zero), v, zero), IfThenElse(Lt(m, zero), m, zero));
      });
      break;
    case kUnLeakyReluF32: run([&](VF32 v) { return IfThenElse(Lt(v, Zero<VF32>()), Mul(a, v), v); }); break;
    case kUnThresholdedReluF32: run([&](VF32 v) { return IfThenElse(Gt(v, a), v, Zero<VF32>()); }); break;
    case kUnSoftsignF32:
      run([&](VF32 v) { return Div(v, Add(Set<VF32>(1.0f), IfThenElse(Lt(v, Zero<VF32>()), Neg(v), v))); });
      break;
    case kUnSoftplusF32: run([&](VF32 v) { return SoftplusV(v); }); break;
    case kUnMishF32: run([&](VF32 v) { return Mul(v, TanhV(SoftplusV(v))); }); break;
    case kUnSwishF32: run([&](VF32 v) { return Mul(v, SigmoidV(Mul(a, v))); }); break;
    case kUnGeluErfF32:
      run([&](VF32 v) {
        return Mul(Mul(Set<VF32>(0.5f), v), Add(Set<VF32>(1.0f), ErfV(Mul(v, Set<VF32>(0.7071067811865476f)))));
      });
      break;
    case kUnGeluTanhF32:
      run([&](VF32 v) {
        const VF32 inner = Mul(Set<VF32>(0.7978845608028654f), Add(v, Mul(Set<VF32>(0.044715f), Mul(Mul(v, v), v))));
        return Mul(Mul(Set<VF32>(0.5f), v), Add(Set<VF32>(1.0f), TanhV(inner)));
      });
      break;
    default: break;
  }
}

void MathF32(int32_t op, const float* x, float* out, int64_t n) {
  auto run = [&](auto f) {
    int64_t i = 0;
    for (; i + int64_t(kN) <= n; i += int64_t(kN)) Store(f(Load<VF32>(x + i)), out + i);
    if (i < n) StoreN(f(LoadN<VF32>(x + i, size_t(n - i), 0.0f)), out + i, size_t(n - i));
  };
  switch (op) {
    case kMathExpF32: run([](VF32 v) { return ExpV(v); }); break;
    case kMathTanhF32: run([](VF32 v) { return TanhV(v); }); break;
    case kMathSigmoidF32: run([](VF32 v) { return SigmoidV(v); }); break;
    case kMathErfF32: run([](VF32 v) { return ErfV(v); }); break;
    case kMathLogF32: run([](VF32 v) { return LogV(v); }); break;
    case kMathAtanF32: run([](VF32 v) { return AtanV(v); }); break;
    case kMathAsinF32: run([](VF32 v) { return AsinV(v); }); break;
    case kMathAcosF32: run([](VF32 v) { return AcosV(v); }); break;
    case kMathSinhF32: run([](VF32 v) { return SinhV(v); }); break;
    case kMathCoshF32: run([](VF32 v) { return CoshV(v); }); break;
    case kMathAsinhF32: run([](VF32 v) { return AsinhV(v); }); break;
    case kMathAcoshF32: run([](VF32 v) { return AcoshV(v); }); break;
    case kMathAtanhF32: run([](VF32 v) { return AtanhV(v); }); break;
    case kMathSinF32: run([](VF32 v) { return SinV(v); }); break;
    case kMathCosF32: run([](VF32 v) { return CosV(v); }); break;
    case kMathTanF32: run([](VF32 v) { return TanV(v); }); break;
    default: break;
  }
}

void MathF64(int32_t op, const double* x, double* out, int64_t n) {
  constexpr size_t kN64 = Lanes<VF64>();
  auto run = [&](auto f) {
    int64_t i = 0;
    for (; i + int64_t(kN64) <= n; i += int64_t(kN64)) Store(f(Load<VF64>(x + i)), out + i);
    if (i < n) StoreN(f(LoadN<VF64>(x + i, size_t(n - i), 0.0)), out + i, size_t(n - i));
  };
  if (op == kMathLogF64)
    run([](VF64 v) { return LogDV(v); });
  else
    run([](VF64 v) { return ExpDV(v); });
}

// The zero points' terms of raw 8-bit sums, then their float (ref::FinishDotSumsI32):
// integer lanes wrap as the reference's uint32 arithmetic, CvtI32ToF32 rounds to nearest
// even as C++'s conversion does, then the product and the sum, one rounding each.
void FinishDotSumsI32(uint32_t* c, int64_t ldc, int64_t rows, int64_t w, const uint32_t* row_term, const uint32_t* zb,
                      uint32_t zb0, const uint32_t* zc, const float* mult, const float* bias) {
  constexpr size_t kNU = Lanes<VU32>();
  const VU32 zb0v = Set<VU32>(zb0);
  for (int64_t r = 0; r < rows; ++r) {
    uint32_t* cr = c + r * ldc;
    const VU32 t = Set<VU32>(row_term[r]);
    // k lanes from column j; kFull: all of them (plain loads and stores).
    auto one = [&]<bool kFull>(int64_t j, size_t k) {
      auto load = [&]<class V>(const typename V::Lane* p, typename V::Lane fill) {
        return kFull ? Load<V>(p) : LoadN<V>(p, k, fill);
      };
      const VU32 z = zb ? load.template operator()<VU32>(zb + j, 0u) : zb0v;
      const VU32 v =
          Sub(Add(load.template operator()<VU32>(cr + j, 0u), Mul(t, z)), load.template operator()<VU32>(zc + j, 0u));
      VU32 out = v;
      if (mult) {
        VF32 y = Mul(CvtI32ToF32(BitCast<VI32>(v)), load.template operator()<VF32>(mult + j, 0.0f));
        if (bias) y = Add(y, load.template operator()<VF32>(bias + j, 0.0f));
        out = BitCast<VU32>(y);
      }
      if constexpr (kFull)
        Store(out, cr + j);
      else
        StoreN(out, cr + j, k);
    };
    int64_t j = 0;
    for (; j + int64_t(kNU) <= w; j += int64_t(kNU)) one.template operator()<true>(j, kNU);
    if (j < w) one.template operator()<false>(j, size_t(w - j));
  }
}

// Quantisation to 8 bits: per lane q = x / scale (rounded once), converted to int32
// rounding half to even (a NaN taken as 0, beyond int32 saturated), clamped to
// [lo - zp, hi - zp], + zp, then narrowed with saturation (the values are already in
// range, so it only packs): the reference's formula lane by lane (its float clamp of the
// rounded quotient gives the same integer; measured on Zen 5 at AVX-512: 0.23 -> 0.10 ns
// per element against the clamp in float lanes with IEEE minimum/maximum). Four vectors
// make one vector of bytes, the tail takes the reference's loop.
void QuantizeF32(const float* x, int64_t n, float scale, int32_t zp, int32_t lo, int32_t hi, uint8_t* y) {
  // The clamp in integer lanes after the conversion, which rounds half to even and takes
  // NaN to 0 (saturating beyond int32, so infinities and huge quotients clamp too).
  const VF32 s = Set<VF32>(scale);
  const VI32 z = Set<VI32>(zp), ilo = Set<VI32>(lo - zp), ihi = Set<VI32>(hi - zp);
  auto one = [&](const float* p) { return Add(Min(Max(CvtRoundEvenSatF32ToI32(Div(Load<VF32>(p), s)), ilo), ihi), z); };
  int64_t i = 0;
  for (; i + 4 * int64_t(kN) <= n; i += 4 * int64_t(kN)) {
    const VI16 h0 = NarrowSatI32ToI16(one(x + i), one(x + i + kN));
    const VI16 h1 = NarrowSatI32ToI16(one(x + i + 2 * kN), one(x + i + 3 * kN));
    if (lo < 0)
      Store(BitCast<VU8>(NarrowSatI16ToI8(h0, h1)), y + i);
    else
      Store(NarrowSatI16ToU8(h0, h1), y + i);
  }
  if (i < n) ref::QuantizeF32(x + i, n - i, scale, zp, lo, hi, y + i);
}

// Quantisation then dequantisation, in float lanes, without integer conversions: the
// quotient q = x / scale (rounded once) clamped to [lo - zp, hi - zp] with NaN taken as 0
// (ClampZeroNaN), then rounded half to even, is the reference's clamped rounded quotient
// r (the bounds are integers, so clamping before the rounding gives the same value;
// infinities clamp); r + (zp - dq_zp) = q_byte - dq_zp is an integer below 2^9 in
// magnitude, exact, and a zero sum is +0 as the reference's float(q - dq_zp) is (-0 + +0
// and z + -z are +0); the product by dq_scale is the reference's one rounding. Measured
// on Zen 5 at AVX-512 (a loop over L1-resident data): 0.082 -> 0.055 ns per element
// against the integer clamp after CvtRoundEvenSatF32ToI32, whose saturation and NaN
// fix-ups cost five of its twelve instructions.
void QuantDequantF32(const float* x, int64_t n, float scale, int32_t zp, int32_t lo, int32_t hi, float dq_scale,
                     int32_t dq_zp, float* y) {
  const VF32 s = Set<VF32>(scale), s2 = Set<VF32>(dq_scale), dz = Set<VF32>(float(zp - dq_zp));
  const VF32 flo = Set<VF32>(float(lo - zp)), fhi = Set<VF32>(float(hi - zp));
  auto one = [&](VF32 v) { return Mul(Add(RoundEven(ClampZeroNaN(Div(v, s), flo, fhi)), dz), s2); };
  int64_t i = 0;
  for (; i + 2 * int64_t(kN) <= n; i += 2 * int64_t(kN)) {
    Store(one(Load<VF32>(x + i)), y + i);
    Store(one(Load<VF32>(x + i + kN)), y + i + kN);
  }
  for (; i + int64_t(kN) <= n; i += int64_t(kN)) Store(one(Load<VF32>(x + i)), y + i);
  if (i < n) StoreN(one(LoadN<VF32>(x + i, size_t(n - i), 0.0f)), y + i, size_t(n - i));
}

// The range: per lane the reference's fold from +0 (Lt/Gt are false on NaNs), four
// vectors at a time, then the lanes folded the same way from +0. The fold's result does
// not depend on the order (ref/elementwise.h), so the lanes give the reference's bits.
void RangeF32(const float* x, int64_t n, float* lo, float* hi) {
  VF32 mn[4], mx[4];
  for (int j = 0; j < 4; ++j) mn[j] = mx[j] = Zero<VF32>();
  int64_t i = 0;
  for (; i + 4 * int64_t(kN) <= n; i += 4 * int64_t(kN)) {
#pragma GCC unroll 4
    for (int j = 0; j < 4; ++j) {
      const VF32 v = Load<VF32>(x + i + j * int64_t(kN));
      mn[j] = IfThenElse(Lt(v, mn[j]), v, mn[j]);
      mx[j] = IfThenElse(Gt(v, mx[j]), v, mx[j]);
    }
  }
  alignas(64) float lanes[2][4 * kN];
  for (int j = 0; j < 4; ++j) {
    Store(mn[j], lanes[0] + j * kN);
    Store(mx[j], lanes[1] + j * kN);
  }
  float a = 0.0f, b = 0.0f;
  ref::RangeF32(x + i, n - i, &a, &b);
  for (size_t j = 0; j < 4 * kN; ++j) {
    a = lanes[0][j] < a ? lanes[0][j] : a;
    b = lanes[1][j] > b ? lanes[1][j] : b;
  }
  *lo = a;
  *hi = b;
}

// The transpose in lanes x lanes tiles through the vocabulary's TransposeSquare, the
// tiles in blocks of 4 x 4 of them (reads and writes stay within a few cache lines per
// row); partial tiles element by element. Floats are moved as bits (loads, shuffles and
// stores change none, NaN payloads included).
void Transpose32(const uint32_t* src, int64_t ss, uint32_t* dst, int64_t ds, int64_t rows, int64_t cols) {
  constexpr int64_t kL = int64_t(kN), kB = 4 * kL;
  const float* s = reinterpret_cast<const float*>(src);
  float* d = reinterpret_cast<float*>(dst);
  for (int64_t j0 = 0; j0 < rows; j0 += kB)
    for (int64_t q0 = 0; q0 < cols; q0 += kB)
      for (int64_t j = j0; j < std::min(rows, j0 + kB); j += kL)
        for (int64_t q = q0; q < std::min(cols, q0 + kB); q += kL) {
          const int64_t nr = std::min(kL, rows - j), nc = std::min(kL, cols - q);
          if (nr == kL && nc == kL) {
            TransposeTile<kL>(s + j * ss + q, ss, d + q * ds + j, ds, kL, kL);
          } else {
            ref::Transpose32(src + j * ss + q, ss, dst + q * ds + j, ds, nr, nc);
          }
        }
}

}  // namespace ONEMODEL_NS
}  // namespace onemodel::impl
