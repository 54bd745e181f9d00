// The scalar backend: 128-bit vectors emulated with plain arrays and plain C++. It is
// the bitwise yardstick every other backend is tested against, and the "scalar" target.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "core/bits.h"

namespace onemodel::impl {
namespace ONEMODEL_NS {

template <typename T, size_t N>
struct Vec {
  using Lane = T;
  static constexpr size_t kLanes = N;
  T v[N];
};
using VF32 = Vec<float, 4>;
using VI32 = Vec<int32_t, 4>;
using VU32 = Vec<uint32_t, 4>;
using VI16 = Vec<int16_t, 8>;
using VU16 = Vec<uint16_t, 8>;
using VI8 = Vec<int8_t, 16>;
using VU8 = Vec<uint8_t, 16>;
using VF64 = Vec<double, 2>;
using VU64 = Vec<uint64_t, 2>;

namespace detail {
template <typename T>
using Unsigned = std::make_unsigned_t<T>;
using ::onemodel::impl::F2U;
using ::onemodel::impl::U2F;
inline bool IsNaN(float f) { return (F2U(f) & 0x7FFFFFFFu) > 0x7F800000u; }
template <typename T>
struct BitsOf {
  using type = Unsigned<T>;
};
template <>
struct BitsOf<float> {
  using type = uint32_t;
};
template <>
struct BitsOf<double> {
  using type = uint64_t;
};
template <typename T>
inline typename BitsOf<T>::type Bits(T t) {
  typename BitsOf<T>::type u;
  std::memcpy(&u, &t, sizeof t);
  return u;
}
template <typename T>
inline T FromBits(typename BitsOf<T>::type u) {
  T t;
  std::memcpy(&t, &u, sizeof t);
  return t;
}
template <typename T>
inline T AllOnes() {
  T t;
  std::memset(&t, 0xFF, sizeof t);
  return t;
}
template <typename T>
inline T Mask(bool b) {
  return b ? AllOnes<T>() : T(0);
}
// f32 rounding without libm: exact bit manipulation and one exact add.
inline float CopySign(float mag, float sgn) { return U2F((F2U(mag) & 0x7FFFFFFFu) | (F2U(sgn) & 0x80000000u)); }
inline float RoundEven(float x) {
  const uint32_t e = (F2U(x) >> 23) & 0xFF;
  if (e >= 150) return x;                 // |x| >= 2^23, inf or NaN: integral
  if (e < 126) return CopySign(0.0f, x);  // |x| < 0.5
  const float big = 8388608.0f;           // 2^23: a + big rounds a to an integer
  const float a = U2F(F2U(x) & 0x7FFFFFFFu);
  return CopySign((a + big) - big, x);
}
inline float Trunc(float x) {
  const uint32_t u = F2U(x);
  const int e = int((u >> 23) & 0xFF) - 127;
  if (e >= 23) return x;
  if (e < 0) return U2F(u & 0x80000000u);
  return U2F(u & ~((1u << (23 - e)) - 1u));
}
inline float Floor(float x) {
  const float t = Trunc(x);
  return x < t ? t - 1.0f : t;
}
inline double TruncD(double x) {
  const uint64_t u = Bits(x);
  const int e = int((u >> 52) & 0x7FF) - 1023;
  if (e >= 52) return x;
  if (e < 0) return FromBits<double>(u & 0x8000000000000000ull);
  return FromBits<double>(u & ~((uint64_t(1) << (52 - e)) - 1u));
}
inline double FloorD(double x) {
  const double t = TruncD(x);
  return x < t ? t - 1.0 : t;
}
inline float Ceil(float x) {
  const float t = Trunc(x);
  return x > t ? t + 1.0f : t;
}
inline int32_t TruncSat(float x) {
  if (IsNaN(x)) return 0;
  if (x >= 2147483648.0f) return std::numeric_limits<int32_t>::max();
  if (x < -2147483648.0f) return std::numeric_limits<int32_t>::min();
  return int32_t(x);
}
template <typename To, typename From>
inline To Sat(From x) {
  if (x < From(std::numeric_limits<To>::min())) return std::numeric_limits<To>::min();
  if (x > From(std::numeric_limits<To>::max())) return std::numeric_limits<To>::max();
  return To(x);
}
template <typename To, typename From>
inline To TruncBits(From x) {
  return FromBits<To>(typename BitsOf<To>::type(Bits(x)));
}
}  // namespace detail

template <class V>
inline V Load(const typename V::Lane* p) {
  V r;
  std::memcpy(r.v, p, sizeof r.v);
  return r;
}
template <class V>
inline void Store(V a, typename V::Lane* p) {
  std::memcpy(p, a.v, sizeof a.v);
}
template <class V>
inline V Set(typename V::Lane x) {
  V r;
  for (size_t i = 0; i < V::kLanes; ++i) r.v[i] = x;
  return r;
}
template <class V>
inline V Zero() {
  V r;
  std::memset(r.v, 0, sizeof r.v);
  return r;
}
template <class VTo, class VFrom>
inline VTo BitCast(VFrom a) {
  static_assert(sizeof(VTo) == sizeof(VFrom), "BitCast: widths differ");
  VTo r;
  std::memcpy(r.v, a.v, sizeof r.v);
  return r;
}

#define OM_SC_LANES(V, expr)               \
  V r;                                     \
  for (size_t i = 0; i < V::kLanes; ++i) { \
    r.v[i] = (expr);                       \
  }                                        \
  return r
template <typename T, size_t N>
inline Vec<T, N> And(Vec<T, N> a, Vec<T, N> b) {
  using U = typename detail::BitsOf<T>::type;
  using VV = Vec<T, N>;
  OM_SC_LANES(VV, detail::FromBits<T>(U(detail::Bits(a.v[i]) & detail::Bits(b.v[i]))));
}
template <typename T, size_t N>
inline Vec<T, N> Or(Vec<T, N> a, Vec<T, N> b) {
  using U = typename detail::BitsOf<T>::type;
  using VV = Vec<T, N>;
  OM_SC_LANES(VV, detail::FromBits<T>(U(detail::Bits(a.v[i]) | detail::Bits(b.v[i]))));
}
template <typename T, size_t N>
inline Vec<T, N> Xor(Vec<T, N> a, Vec<T, N> b) {
  using U = typename detail::BitsOf<T>::type;
  using VV = Vec<T, N>;
  OM_SC_LANES(VV, detail::FromBits<T>(U(detail::Bits(a.v[i]) ^ detail::Bits(b.v[i]))));
}
template <typename T, size_t N>
inline Vec<T, N> AndNot(Vec<T, N> a, Vec<T, N> b) {
  using U = typename detail::BitsOf<T>::type;
  using VV = Vec<T, N>;
  OM_SC_LANES(VV, detail::FromBits<T>(U(~detail::Bits(a.v[i]) & detail::Bits(b.v[i]))));
}
template <typename T, size_t N>
inline Vec<T, N> IfThenElse(Vec<T, N> m, Vec<T, N> y, Vec<T, N> n) {
  using VV = Vec<T, N>;
  OM_SC_LANES(VV, detail::Bits(m.v[i]) ? y.v[i] : n.v[i]);
}

// Comparisons.
template <typename T, size_t N>
inline Vec<T, N> Eq(Vec<T, N> a, Vec<T, N> b) {
  using VV = Vec<T, N>;
  OM_SC_LANES(VV, detail::Mask<T>(a.v[i] == b.v[i]));
}
template <typename T, size_t N>
inline Vec<T, N> EvenLanes(Vec<T, N> a, Vec<T, N> b) {
  Vec<T, N> r;
  for (size_t i = 0; i < N / 2; ++i) {
    r.v[i] = a.v[2 * i];
    r.v[N / 2 + i] = b.v[2 * i];
  }
  return r;
}
template <typename T, size_t N>
inline bool AllTrue(Vec<T, N> m) {
  for (size_t i = 0; i < N; ++i)
    if (!detail::Bits(m.v[i])) return false;
  return true;
}
template <typename T, size_t N>
inline Vec<T, N> Gt(Vec<T, N> a, Vec<T, N> b) {
  using VV = Vec<T, N>;
  OM_SC_LANES(VV, detail::Mask<T>(a.v[i] > b.v[i]));
}
template <typename T, size_t N>
inline Vec<T, N> Lt(Vec<T, N> a, Vec<T, N> b) {
  using VV = Vec<T, N>;
  OM_SC_LANES(VV, detail::Mask<T>(a.v[i] < b.v[i]));
}
inline VF32 Ne(VF32 a, VF32 b) { OM_SC_LANES(VF32, detail::Mask<float>(!(a.v[i] == b.v[i]))); }
inline VF32 Le(VF32 a, VF32 b) { OM_SC_LANES(VF32, detail::Mask<float>(a.v[i] <= b.v[i])); }
inline VF32 Ge(VF32 a, VF32 b) { OM_SC_LANES(VF32, detail::Mask<float>(a.v[i] >= b.v[i])); }

// Arithmetic. Integer lanes compute in the unsigned type so that wrap is defined.
template <typename T, size_t N>
inline Vec<T, N> Add(Vec<T, N> a, Vec<T, N> b) {
  using VV = Vec<T, N>;
  if constexpr (std::is_floating_point_v<T>) {
    OM_SC_LANES(VV, a.v[i] + b.v[i]);
  } else {
    using U = detail::Unsigned<T>;
    OM_SC_LANES(VV, T(U(U(a.v[i]) + U(b.v[i]))));
  }
}
template <typename T, size_t N>
inline Vec<T, N> Sub(Vec<T, N> a, Vec<T, N> b) {
  using VV = Vec<T, N>;
  if constexpr (std::is_floating_point_v<T>) {
    OM_SC_LANES(VV, a.v[i] - b.v[i]);
  } else {
    using U = detail::Unsigned<T>;
    OM_SC_LANES(VV, T(U(U(a.v[i]) - U(b.v[i]))));
  }
}
template <typename T, size_t N>
inline Vec<T, N> Mul(Vec<T, N> a, Vec<T, N> b) {
  static_assert(sizeof(T) >= 2, "Mul: no 8-bit multiply in the vocabulary");
  using VV = Vec<T, N>;
  if constexpr (std::is_floating_point_v<T>) {
    OM_SC_LANES(VV, a.v[i] * b.v[i]);
  } else {
    OM_SC_LANES(VV, T(uint32_t(uint32_t(a.v[i]) * uint32_t(b.v[i]))));
  }
}
inline VF32 Div(VF32 a, VF32 b) { OM_SC_LANES(VF32, a.v[i] / b.v[i]); }
inline VF32 Sqrt(VF32 a) { OM_SC_LANES(VF32, __builtin_sqrtf(a.v[i])); }
inline VF32 Neg(VF32 a) { OM_SC_LANES(VF32, detail::U2F(detail::F2U(a.v[i]) ^ 0x80000000u)); }
inline VF32 Abs(VF32 a) { OM_SC_LANES(VF32, detail::U2F(detail::F2U(a.v[i]) & 0x7FFFFFFFu)); }
template <typename T, size_t N>
inline Vec<T, N> AddSat(Vec<T, N> a, Vec<T, N> b) {
  static_assert(sizeof(T) <= 2, "AddSat: 8- and 16-bit lanes only");
  using VV = Vec<T, N>;
  OM_SC_LANES(VV, detail::Sat<T>(int32_t(a.v[i]) + int32_t(b.v[i])));
}
template <typename T, size_t N>
inline Vec<T, N> SubSat(Vec<T, N> a, Vec<T, N> b) {
  static_assert(sizeof(T) <= 2, "SubSat: 8- and 16-bit lanes only");
  using VV = Vec<T, N>;
  OM_SC_LANES(VV, detail::Sat<T>(int32_t(a.v[i]) - int32_t(b.v[i])));
}
template <typename T, size_t N>
inline Vec<T, N> Min(Vec<T, N> a, Vec<T, N> b) {
  static_assert(std::is_integral_v<T>, "Min: integers; use MinIeee for f32");
  using VV = Vec<T, N>;
  OM_SC_LANES(VV, a.v[i] < b.v[i] ? a.v[i] : b.v[i]);
}
template <typename T, size_t N>
inline Vec<T, N> Max(Vec<T, N> a, Vec<T, N> b) {
  static_assert(std::is_integral_v<T>, "Max: integers; use MaxIeee for f32");
  using VV = Vec<T, N>;
  OM_SC_LANES(VV, a.v[i] > b.v[i] ? a.v[i] : b.v[i]);
}
inline float MinIeee1(float a, float b) {
  if (detail::IsNaN(a) || detail::IsNaN(b)) return a + b;
  if (a == b) return detail::U2F(detail::F2U(a) | detail::F2U(b));  // -0 wins
  return a < b ? a : b;
}
inline float MaxIeee1(float a, float b) {
  if (detail::IsNaN(a) || detail::IsNaN(b)) return a + b;
  if (a == b) return detail::U2F(detail::F2U(a) & detail::F2U(b));  // +0 wins
  return a > b ? a : b;
}
inline VF32 MinIeee(VF32 a, VF32 b) { OM_SC_LANES(VF32, MinIeee1(a.v[i], b.v[i])); }
inline VF32 MaxIeee(VF32 a, VF32 b) { OM_SC_LANES(VF32, MaxIeee1(a.v[i], b.v[i])); }
inline float ClampZeroNaN1(float v, float lo, float hi) {
  if (detail::IsNaN(v)) return 0.0f;
  return v < lo ? lo : v > hi ? hi : v;
}
inline VF32 ClampZeroNaN(VF32 v, VF32 lo, VF32 hi) { OM_SC_LANES(VF32, ClampZeroNaN1(v.v[i], lo.v[i], hi.v[i])); }
template <int k, typename T, size_t N>
inline Vec<T, N> ShiftLeft(Vec<T, N> a) {
  static_assert(sizeof(T) >= 2 && k >= 0 && k < int(8 * sizeof(T)), "ShiftLeft: bad count/lane");
  using U = detail::Unsigned<T>;
  using VV = Vec<T, N>;
  OM_SC_LANES(VV, T(U(U(a.v[i]) << k)));
}
template <int k, typename T, size_t N>
inline Vec<T, N> ShiftRight(Vec<T, N> a) {
  static_assert(sizeof(T) >= 2 && k >= 0 && k < int(8 * sizeof(T)), "ShiftRight: bad count/lane");
  using VV = Vec<T, N>;
  if constexpr (std::is_signed_v<T>) {  // arithmetic, written without relying on >> of negatives
    OM_SC_LANES(VV, a.v[i] < 0 ? T(~(detail::Unsigned<T>(~a.v[i]) >> k)) : T(a.v[i] >> k));
  } else {
    OM_SC_LANES(VV, T(a.v[i] >> k));
  }
}

// Rounding and conversions.
inline VF32 RoundEven(VF32 a) { OM_SC_LANES(VF32, detail::RoundEven(a.v[i])); }
inline VF32 Trunc(VF32 a) { OM_SC_LANES(VF32, detail::Trunc(a.v[i])); }
inline VF32 Floor(VF32 a) { OM_SC_LANES(VF32, detail::Floor(a.v[i])); }
inline VF32 Ceil(VF32 a) { OM_SC_LANES(VF32, detail::Ceil(a.v[i])); }
inline VF32 CvtI32ToF32(VI32 a) { OM_SC_LANES(VF32, float(a.v[i])); }
inline VI32 CvtTruncSatF32ToI32(VF32 a) { OM_SC_LANES(VI32, detail::TruncSat(a.v[i])); }
inline VI32 CvtRoundEvenSatF32ToI32(VF32 a) { OM_SC_LANES(VI32, detail::TruncSat(detail::RoundEven(a.v[i]))); }

// Widening.
template <typename W, typename T, size_t N>
inline Vec<W, N / 2> WidenHalf(Vec<T, N> a, size_t off) {
  using VV = Vec<W, N / 2>;
  OM_SC_LANES(VV, W(a.v[off + i]));
}
inline VI16 WidenLo(VI8 a) { return WidenHalf<int16_t>(a, 0); }
inline VI16 WidenHi(VI8 a) { return WidenHalf<int16_t>(a, 8); }
inline VU16 WidenLo(VU8 a) { return WidenHalf<uint16_t>(a, 0); }
inline VU16 WidenHi(VU8 a) { return WidenHalf<uint16_t>(a, 8); }
inline VI32 WidenLo(VI16 a) { return WidenHalf<int32_t>(a, 0); }
inline VI32 WidenHi(VI16 a) { return WidenHalf<int32_t>(a, 4); }
inline VU32 WidenLo(VU16 a) { return WidenHalf<uint32_t>(a, 0); }
inline VU32 WidenHi(VU16 a) { return WidenHalf<uint32_t>(a, 4); }

// Narrowing.
template <typename To, bool kSat, typename T, size_t N>
inline Vec<To, 2 * N> NarrowImpl(Vec<T, N> a, Vec<T, N> b) {
  Vec<To, 2 * N> r;
  for (size_t i = 0; i < N; ++i) {
    r.v[i] = kSat ? detail::Sat<To>(a.v[i]) : detail::TruncBits<To>(a.v[i]);
    r.v[N + i] = kSat ? detail::Sat<To>(b.v[i]) : detail::TruncBits<To>(b.v[i]);
  }
  return r;
}
inline VI16 NarrowSatI32ToI16(VI32 a, VI32 b) { return NarrowImpl<int16_t, true>(a, b); }
inline VI16 NarrowTruncI32ToI16(VI32 a, VI32 b) { return NarrowImpl<int16_t, false>(a, b); }
inline VU16 NarrowSatI32ToU16(VI32 a, VI32 b) { return NarrowImpl<uint16_t, true>(a, b); }
inline VU16 NarrowTruncI32ToU16(VI32 a, VI32 b) { return NarrowImpl<uint16_t, false>(a, b); }
inline VU16 NarrowSatU32ToU16(VU32 a, VU32 b) { return NarrowImpl<uint16_t, true>(a, b); }
inline VU16 NarrowTruncU32ToU16(VU32 a, VU32 b) { return NarrowImpl<uint16_t, false>(a, b); }
inline VI8 NarrowSatI16ToI8(VI16 a, VI16 b) { return NarrowImpl<int8_t, true>(a, b); }
inline VI8 NarrowTruncI16ToI8(VI16 a, VI16 b) { return NarrowImpl<int8_t, false>(a, b); }
inline VU8 NarrowSatI16ToU8(VI16 a, VI16 b) { return NarrowImpl<uint8_t, true>(a, b); }
inline VU8 NarrowTruncI16ToU8(VI16 a, VI16 b) { return NarrowImpl<uint8_t, false>(a, b); }
inline VU8 NarrowSatU16ToU8(VU16 a, VU16 b) { return NarrowImpl<uint8_t, true>(a, b); }
inline VU8 NarrowTruncU16ToU8(VU16 a, VU16 b) { return NarrowImpl<uint8_t, false>(a, b); }

// Integer products.
inline VI32 MulAddPairsI16(VI16 a, VI16 b) {
  OM_SC_LANES(VI32,
              int32_t(uint32_t(int32_t(a.v[2 * i]) * b.v[2 * i]) + uint32_t(int32_t(a.v[2 * i + 1]) * b.v[2 * i + 1])));
}
inline VI32 DotI8x4Acc(VI32 acc, VI8 a, VI8 b) {
  VI32 r;
  for (size_t j = 0; j < 4; ++j) {
    uint32_t s = uint32_t(acc.v[j]);
    for (size_t k = 0; k < 4; ++k) s += uint32_t(int32_t(a.v[4 * j + k]) * b.v[4 * j + k]);
    r.v[j] = int32_t(s);
  }
  return r;
}

// Data movement.
inline void TransposeSquare(VF32* v) {
  for (size_t q = 0; q < 4; ++q)
    for (size_t j = q + 1; j < 4; ++j) {
      const float t = v[q].v[j];
      v[q].v[j] = v[j].v[q];
      v[j].v[q] = t;
    }
}

inline float ReduceSumTree(VF32 a) { return (a.v[0] + a.v[2]) + (a.v[1] + a.v[3]); }

// Binary64 lanes (VF64, VU64): the ops that the binary64 steps of the functions need
// (the templates above give the rest: Load, Store, Set, BitCast, bitwise, Eq Lt Gt,
// Add Sub Mul, shifts).
inline VF64 Ne(VF64 a, VF64 b) { OM_SC_LANES(VF64, detail::Mask<double>(!(a.v[i] == b.v[i]))); }
inline VF64 Le(VF64 a, VF64 b) { OM_SC_LANES(VF64, detail::Mask<double>(a.v[i] <= b.v[i])); }
inline VF64 Ge(VF64 a, VF64 b) { OM_SC_LANES(VF64, detail::Mask<double>(a.v[i] >= b.v[i])); }
inline VF64 Div(VF64 a, VF64 b) { OM_SC_LANES(VF64, a.v[i] / b.v[i]); }
inline VF64 Neg(VF64 a) { OM_SC_LANES(VF64, detail::FromBits<double>(detail::Bits(a.v[i]) ^ 0x8000000000000000ull)); }
inline VF64 Abs(VF64 a) { OM_SC_LANES(VF64, detail::FromBits<double>(detail::Bits(a.v[i]) & 0x7FFFFFFFFFFFFFFFull)); }
inline VF64 Trunc(VF64 a) { OM_SC_LANES(VF64, detail::TruncD(a.v[i])); }
inline VF64 Floor(VF64 a) { OM_SC_LANES(VF64, detail::FloorD(a.v[i])); }
inline VF64 WidenLo(VF32 a) { return WidenHalf<double>(a, 0); }
inline VF64 WidenHi(VF32 a) { return WidenHalf<double>(a, 2); }
inline VF32 NarrowRoundF64ToF32(VF64 a, VF64 b) {
  return VF32{{float(a.v[0]), float(a.v[1]), float(b.v[0]), float(b.v[1])}};
}

#undef OM_SC_LANES

}  // namespace ONEMODEL_NS
}  // namespace onemodel::impl
