// The SSE4.1 backend (x86-64 baseline SSE2 plus SSSE3/SSE4.1): 128-bit registers.
#pragma once

#include <smmintrin.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace onemodel::impl {
namespace ONEMODEL_NS {

struct VF32 {
  using Lane = float;
  static constexpr size_t kLanes = 4;
  __m128 r;
};
struct VI32 {
  using Lane = int32_t;
  static constexpr size_t kLanes = 4;
  __m128i r;
};
struct VU32 {
  using Lane = uint32_t;
  static constexpr size_t kLanes = 4;
  __m128i r;
};
struct VI16 {
  using Lane = int16_t;
  static constexpr size_t kLanes = 8;
  __m128i r;
};
struct VU16 {
  using Lane = uint16_t;
  static constexpr size_t kLanes = 8;
  __m128i r;
};
struct VI8 {
  using Lane = int8_t;
  static constexpr size_t kLanes = 16;
  __m128i r;
};
struct VU8 {
  using Lane = uint8_t;
  static constexpr size_t kLanes = 16;
  __m128i r;
};
struct VF64 {
  using Lane = double;
  static constexpr size_t kLanes = 2;
  __m128d r;
};
struct VU64 {
  using Lane = uint64_t;
  static constexpr size_t kLanes = 2;
  __m128i r;
};

namespace detail {
template <class V>
struct IsInt {
  static constexpr bool value = true;
};
template <>
struct IsInt<VF32> {
  static constexpr bool value = false;
};
template <>
struct IsInt<VF64> {
  static constexpr bool value = false;
};
template <class V>
inline __m128i I(V a) {
  if constexpr (std::is_same_v<V, VF64>)
    return _mm_castpd_si128(a.r);
  else if constexpr (IsInt<V>::value)
    return a.r;
  else
    return _mm_castps_si128(a.r);
}
template <class V>
inline V FromI(__m128i x) {
  if constexpr (std::is_same_v<V, VF64>)
    return V{_mm_castsi128_pd(x)};
  else if constexpr (IsInt<V>::value)
    return V{x};
  else
    return V{_mm_castsi128_ps(x)};
}
// Flips the sign bit of each lane so that unsigned order becomes signed order.
inline __m128i Flip8(__m128i x) { return _mm_xor_si128(x, _mm_set1_epi8(char(0x80))); }
inline __m128i Flip16(__m128i x) { return _mm_xor_si128(x, _mm_set1_epi16(short(0x8000))); }
inline __m128i Flip32(__m128i x) { return _mm_xor_si128(x, _mm_set1_epi32(int(0x80000000u))); }
}  // namespace detail

// Memory.
template <class V>
inline V Load(const typename V::Lane* p) {
  if constexpr (std::is_same_v<V, VF64>)
    return V{_mm_loadu_pd(p)};
  else if constexpr (detail::IsInt<V>::value)
    return V{_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))};
  else
    return V{_mm_loadu_ps(p)};
}
inline void Store(VF32 a, float* p) { _mm_storeu_ps(p, a.r); }
inline void Store(VF64 a, double* p) { _mm_storeu_pd(p, a.r); }
template <class V>
inline void Store(V a, typename V::Lane* p) {
  _mm_storeu_si128(reinterpret_cast<__m128i*>(p), a.r);
}

// Initialisation.
template <class V>
inline V Set(typename V::Lane x) {
  if constexpr (sizeof(x) == 1)
    return V{_mm_set1_epi8(char(x))};
  else if constexpr (sizeof(x) == 2)
    return V{_mm_set1_epi16(short(x))};
  else if constexpr (std::is_same_v<V, VF64>)
    return V{_mm_set1_pd(x)};
  else if constexpr (sizeof(x) == 8)
    return V{_mm_set1_epi64x(int64_t(x))};
  else if constexpr (detail::IsInt<V>::value)
    return V{_mm_set1_epi32(int(x))};
  else
    return V{_mm_set1_ps(x)};
}
template <class V>
inline V Zero() {
  return detail::FromI<V>(_mm_setzero_si128());
}
template <class VTo, class VFrom>
inline VTo BitCast(VFrom a) {
  return detail::FromI<VTo>(detail::I(a));
}

// Bitwise.
template <class V>
inline V And(V a, V b) {
  return detail::FromI<V>(_mm_and_si128(detail::I(a), detail::I(b)));
}
template <class V>
inline V Or(V a, V b) {
  return detail::FromI<V>(_mm_or_si128(detail::I(a), detail::I(b)));
}
template <class V>
inline V Xor(V a, V b) {
  return detail::FromI<V>(_mm_xor_si128(detail::I(a), detail::I(b)));
}
template <class V>
inline V AndNot(V a, V b) {
  return detail::FromI<V>(_mm_andnot_si128(detail::I(a), detail::I(b)));
}
// N.B. blendv tests only the top bit of each byte: correct for all-0/all-1 masks.
template <class V>
inline V IfThenElse(V m, V y, V n) {
  return detail::FromI<V>(_mm_blendv_epi8(detail::I(n), detail::I(y), detail::I(m)));
}

// Comparisons.
inline VF32 Eq(VF32 a, VF32 b) { return {_mm_cmpeq_ps(a.r, b.r)}; }
inline VF32 Ne(VF32 a, VF32 b) { return {_mm_cmpneq_ps(a.r, b.r)}; }
inline VF32 Lt(VF32 a, VF32 b) { return {_mm_cmplt_ps(a.r, b.r)}; }
inline VF32 Le(VF32 a, VF32 b) { return {_mm_cmple_ps(a.r, b.r)}; }
inline VF32 Gt(VF32 a, VF32 b) { return {_mm_cmpgt_ps(a.r, b.r)}; }
inline bool AllTrue(VF32 m) { return _mm_movemask_ps(m.r) == 0xF; }
inline VF32 EvenLanes(VF32 a, VF32 b) { return {_mm_shuffle_ps(a.r, b.r, _MM_SHUFFLE(2, 0, 2, 0))}; }
inline VF32 Ge(VF32 a, VF32 b) { return {_mm_cmpge_ps(a.r, b.r)}; }
inline VI32 Eq(VI32 a, VI32 b) { return {_mm_cmpeq_epi32(a.r, b.r)}; }
inline VU32 Eq(VU32 a, VU32 b) { return {_mm_cmpeq_epi32(a.r, b.r)}; }
inline VI16 Eq(VI16 a, VI16 b) { return {_mm_cmpeq_epi16(a.r, b.r)}; }
inline VU16 Eq(VU16 a, VU16 b) { return {_mm_cmpeq_epi16(a.r, b.r)}; }
inline VI8 Eq(VI8 a, VI8 b) { return {_mm_cmpeq_epi8(a.r, b.r)}; }
inline VU8 Eq(VU8 a, VU8 b) { return {_mm_cmpeq_epi8(a.r, b.r)}; }
inline VI32 Gt(VI32 a, VI32 b) { return {_mm_cmpgt_epi32(a.r, b.r)}; }
inline VI16 Gt(VI16 a, VI16 b) { return {_mm_cmpgt_epi16(a.r, b.r)}; }
inline VI8 Gt(VI8 a, VI8 b) { return {_mm_cmpgt_epi8(a.r, b.r)}; }
inline VU32 Gt(VU32 a, VU32 b) { return {_mm_cmpgt_epi32(detail::Flip32(a.r), detail::Flip32(b.r))}; }
inline VU16 Gt(VU16 a, VU16 b) { return {_mm_cmpgt_epi16(detail::Flip16(a.r), detail::Flip16(b.r))}; }
inline VU8 Gt(VU8 a, VU8 b) { return {_mm_cmpgt_epi8(detail::Flip8(a.r), detail::Flip8(b.r))}; }
template <class V>
inline V Lt(V a, V b) {
  return Gt(b, a);
}

// Arithmetic.
inline VF32 Add(VF32 a, VF32 b) { return {_mm_add_ps(a.r, b.r)}; }
inline VI32 Add(VI32 a, VI32 b) { return {_mm_add_epi32(a.r, b.r)}; }
inline VU32 Add(VU32 a, VU32 b) { return {_mm_add_epi32(a.r, b.r)}; }
inline VI16 Add(VI16 a, VI16 b) { return {_mm_add_epi16(a.r, b.r)}; }
inline VU16 Add(VU16 a, VU16 b) { return {_mm_add_epi16(a.r, b.r)}; }
inline VI8 Add(VI8 a, VI8 b) { return {_mm_add_epi8(a.r, b.r)}; }
inline VU8 Add(VU8 a, VU8 b) { return {_mm_add_epi8(a.r, b.r)}; }
inline VF32 Sub(VF32 a, VF32 b) { return {_mm_sub_ps(a.r, b.r)}; }
inline VI32 Sub(VI32 a, VI32 b) { return {_mm_sub_epi32(a.r, b.r)}; }
inline VU32 Sub(VU32 a, VU32 b) { return {_mm_sub_epi32(a.r, b.r)}; }
inline VI16 Sub(VI16 a, VI16 b) { return {_mm_sub_epi16(a.r, b.r)}; }
inline VU16 Sub(VU16 a, VU16 b) { return {_mm_sub_epi16(a.r, b.r)}; }
inline VI8 Sub(VI8 a, VI8 b) { return {_mm_sub_epi8(a.r, b.r)}; }
inline VU8 Sub(VU8 a, VU8 b) { return {_mm_sub_epi8(a.r, b.r)}; }
inline VF32 Mul(VF32 a, VF32 b) { return {_mm_mul_ps(a.r, b.r)}; }
inline VI32 Mul(VI32 a, VI32 b) { return {_mm_mullo_epi32(a.r, b.r)}; }
inline VU32 Mul(VU32 a, VU32 b) { return {_mm_mullo_epi32(a.r, b.r)}; }
inline VI16 Mul(VI16 a, VI16 b) { return {_mm_mullo_epi16(a.r, b.r)}; }
inline VU16 Mul(VU16 a, VU16 b) { return {_mm_mullo_epi16(a.r, b.r)}; }
inline VF32 Div(VF32 a, VF32 b) { return {_mm_div_ps(a.r, b.r)}; }
inline VF32 Sqrt(VF32 a) { return {_mm_sqrt_ps(a.r)}; }
inline VF32 Neg(VF32 a) { return {_mm_xor_ps(a.r, _mm_set1_ps(-0.0f))}; }
inline VF32 Abs(VF32 a) { return {_mm_andnot_ps(_mm_set1_ps(-0.0f), a.r)}; }
inline VI16 AddSat(VI16 a, VI16 b) { return {_mm_adds_epi16(a.r, b.r)}; }
inline VU16 AddSat(VU16 a, VU16 b) { return {_mm_adds_epu16(a.r, b.r)}; }
inline VI8 AddSat(VI8 a, VI8 b) { return {_mm_adds_epi8(a.r, b.r)}; }
inline VU8 AddSat(VU8 a, VU8 b) { return {_mm_adds_epu8(a.r, b.r)}; }
inline VI16 SubSat(VI16 a, VI16 b) { return {_mm_subs_epi16(a.r, b.r)}; }
inline VU16 SubSat(VU16 a, VU16 b) { return {_mm_subs_epu16(a.r, b.r)}; }
inline VI8 SubSat(VI8 a, VI8 b) { return {_mm_subs_epi8(a.r, b.r)}; }
inline VU8 SubSat(VU8 a, VU8 b) { return {_mm_subs_epu8(a.r, b.r)}; }
inline VI32 Min(VI32 a, VI32 b) { return {_mm_min_epi32(a.r, b.r)}; }
inline VU32 Min(VU32 a, VU32 b) { return {_mm_min_epu32(a.r, b.r)}; }
inline VI16 Min(VI16 a, VI16 b) { return {_mm_min_epi16(a.r, b.r)}; }
inline VU16 Min(VU16 a, VU16 b) { return {_mm_min_epu16(a.r, b.r)}; }
inline VI8 Min(VI8 a, VI8 b) { return {_mm_min_epi8(a.r, b.r)}; }
inline VU8 Min(VU8 a, VU8 b) { return {_mm_min_epu8(a.r, b.r)}; }
inline VI32 Max(VI32 a, VI32 b) { return {_mm_max_epi32(a.r, b.r)}; }
inline VU32 Max(VU32 a, VU32 b) { return {_mm_max_epu32(a.r, b.r)}; }
inline VI16 Max(VI16 a, VI16 b) { return {_mm_max_epi16(a.r, b.r)}; }
inline VU16 Max(VU16 a, VU16 b) { return {_mm_max_epu16(a.r, b.r)}; }
inline VI8 Max(VI8 a, VI8 b) { return {_mm_max_epi8(a.r, b.r)}; }
inline VU8 Max(VU8 a, VU8 b) { return {_mm_max_epu8(a.r, b.r)}; }
// N.B. minps/maxps return the second operand when either is NaN and when both are
// zeros; evaluating both orders and combining fixes the zeros (OR prefers -0 for min,
// AND prefers +0 for max), and an unordered compare forces NaN.
inline VF32 MinIeee(VF32 a, VF32 b) {
  const __m128 m = _mm_or_ps(_mm_min_ps(a.r, b.r), _mm_min_ps(b.r, a.r));
  return {_mm_blendv_ps(m, _mm_add_ps(a.r, b.r), _mm_cmpunord_ps(a.r, b.r))};
}
inline VF32 MaxIeee(VF32 a, VF32 b) {
  const __m128 m = _mm_and_ps(_mm_max_ps(a.r, b.r), _mm_max_ps(b.r, a.r));
  return {_mm_blendv_ps(m, _mm_add_ps(a.r, b.r), _mm_cmpunord_ps(a.r, b.r))};
}
// maxps(lo, v) is lo only when lo > v (else v: NaN and an equal zero stay), minps(hi, t)
// hi only when hi < t; the ordered mask then clears the NaN lanes to +0.
inline VF32 ClampZeroNaN(VF32 v, VF32 lo, VF32 hi) {
  const __m128 t = _mm_min_ps(hi.r, _mm_max_ps(lo.r, v.r));
  return {_mm_and_ps(t, _mm_cmpord_ps(v.r, v.r))};
}
template <int k, class V>
inline V ShiftLeft(V a) {
  static_assert(sizeof(typename V::Lane) >= 2 && k >= 0 && k < int(8 * sizeof(typename V::Lane)), "ShiftLeft");
  if constexpr (sizeof(typename V::Lane) == 8)
    return V{_mm_slli_epi64(a.r, k)};
  else if constexpr (sizeof(typename V::Lane) == 2)
    return V{_mm_slli_epi16(a.r, k)};
  else
    return V{_mm_slli_epi32(a.r, k)};
}
template <int k, class V>
inline V ShiftRight(V a) {
  using L = typename V::Lane;
  static_assert(sizeof(L) >= 2 && k >= 0 && k < int(8 * sizeof(L)), "ShiftRight");
  static_assert(sizeof(L) < 8 || L(-1) > L(0), "ShiftRight: 64-bit lanes are unsigned");
  if constexpr (sizeof(L) == 8)
    return V{_mm_srli_epi64(a.r, k)};
  else if constexpr (sizeof(L) == 2) {
    if constexpr (L(-1) < L(0))
      return V{_mm_srai_epi16(a.r, k)};
    else
      return V{_mm_srli_epi16(a.r, k)};
  } else {
    if constexpr (L(-1) < L(0))
      return V{_mm_srai_epi32(a.r, k)};
    else
      return V{_mm_srli_epi32(a.r, k)};
  }
}

// Rounding and conversions.
inline VF32 RoundEven(VF32 a) { return {_mm_round_ps(a.r, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)}; }
inline VF32 Trunc(VF32 a) { return {_mm_round_ps(a.r, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC)}; }
inline VF32 Floor(VF32 a) { return {_mm_round_ps(a.r, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC)}; }
inline VF32 Ceil(VF32 a) { return {_mm_round_ps(a.r, _MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC)}; }
// N.B. cvtdq2ps rounds by MXCSR, which the session keeps at round-to-nearest-even.
inline VF32 CvtI32ToF32(VI32 a) { return {_mm_cvtepi32_ps(a.r)}; }
// N.B. cvttps2dq returns 0x80000000 for NaN and for out-of-range lanes: flip it to
// INT32_MAX where the input is >= 2^31 and clear it where the input is NaN.
inline VI32 CvtTruncSatF32ToI32(VF32 a) {
  const __m128i t = _mm_cvttps_epi32(a.r);
  const __m128i pos = _mm_castps_si128(_mm_cmpge_ps(a.r, _mm_set1_ps(2147483648.0f)));
  const __m128i ord = _mm_castps_si128(_mm_cmpord_ps(a.r, a.r));
  return {_mm_and_si128(_mm_xor_si128(t, pos), ord)};
}
inline VI32 CvtRoundEvenSatF32ToI32(VF32 a) { return CvtTruncSatF32ToI32(RoundEven(a)); }

// Widening.
inline VI16 WidenLo(VI8 a) { return {_mm_cvtepi8_epi16(a.r)}; }
inline VI16 WidenHi(VI8 a) { return {_mm_cvtepi8_epi16(_mm_srli_si128(a.r, 8))}; }
inline VU16 WidenLo(VU8 a) { return {_mm_cvtepu8_epi16(a.r)}; }
inline VU16 WidenHi(VU8 a) { return {_mm_cvtepu8_epi16(_mm_srli_si128(a.r, 8))}; }
inline VI32 WidenLo(VI16 a) { return {_mm_cvtepi16_epi32(a.r)}; }
inline VI32 WidenHi(VI16 a) { return {_mm_cvtepi16_epi32(_mm_srli_si128(a.r, 8))}; }
inline VU32 WidenLo(VU16 a) { return {_mm_cvtepu16_epi32(a.r)}; }
inline VU32 WidenHi(VU16 a) { return {_mm_cvtepu16_epi32(_mm_srli_si128(a.r, 8))}; }

// Narrowing. N.B. packs/packus saturate (packus from signed sources); the truncating
// forms first mask to the low bits, which packus then passes through unchanged.
inline VI16 NarrowSatI32ToI16(VI32 a, VI32 b) { return {_mm_packs_epi32(a.r, b.r)}; }
inline VU16 NarrowSatI32ToU16(VI32 a, VI32 b) { return {_mm_packus_epi32(a.r, b.r)}; }
inline VU16 NarrowSatU32ToU16(VU32 a, VU32 b) {
  const __m128i m = _mm_set1_epi32(0xFFFF);
  return {_mm_packus_epi32(_mm_min_epu32(a.r, m), _mm_min_epu32(b.r, m))};
}
inline VU16 NarrowTruncU32ToU16(VU32 a, VU32 b) {
  const __m128i m = _mm_set1_epi32(0xFFFF);
  return {_mm_packus_epi32(_mm_and_si128(a.r, m), _mm_and_si128(b.r, m))};
}
inline VU16 NarrowTruncI32ToU16(VI32 a, VI32 b) { return NarrowTruncU32ToU16(VU32{a.r}, VU32{b.r}); }
inline VI16 NarrowTruncI32ToI16(VI32 a, VI32 b) { return {NarrowTruncU32ToU16(VU32{a.r}, VU32{b.r}).r}; }
inline VI8 NarrowSatI16ToI8(VI16 a, VI16 b) { return {_mm_packs_epi16(a.r, b.r)}; }
inline VU8 NarrowSatI16ToU8(VI16 a, VI16 b) { return {_mm_packus_epi16(a.r, b.r)}; }
inline VU8 NarrowSatU16ToU8(VU16 a, VU16 b) {
  const __m128i m = _mm_set1_epi16(0xFF);
  return {_mm_packus_epi16(_mm_min_epu16(a.r, m), _mm_min_epu16(b.r, m))};
}
inline VU8 NarrowTruncU16ToU8(VU16 a, VU16 b) {
  const __m128i m = _mm_set1_epi16(0xFF);
  return {_mm_packus_epi16(_mm_and_si128(a.r, m), _mm_and_si128(b.r, m))};
}
inline VU8 NarrowTruncI16ToU8(VI16 a, VI16 b) { return NarrowTruncU16ToU8(VU16{a.r}, VU16{b.r}); }
inline VI8 NarrowTruncI16ToI8(VI16 a, VI16 b) { return {NarrowTruncU16ToU8(VU16{a.r}, VU16{b.r}).r}; }

// Integer products. N.B. pmaddwd wraps (0x8000^2 * 2 -> 0x80000000), as defined.
inline VI32 MulAddPairsI16(VI16 a, VI16 b) { return {_mm_madd_epi16(a.r, b.r)}; }
inline VI32 DotI8x4Acc(VI32 acc, VI8 a, VI8 b) {
  const __m128i lo = _mm_madd_epi16(WidenLo(a).r, WidenLo(b).r);
  const __m128i hi = _mm_madd_epi16(WidenHi(a).r, WidenHi(b).r);
  return {_mm_add_epi32(acc.r, _mm_hadd_epi32(lo, hi))};
}

// Horizontal: (a0 + a2) + (a1 + a3).
// Data movement: the classic 4x4 shuffle transpose.
inline void TransposeSquare(VF32* v) { _MM_TRANSPOSE4_PS(v[0].r, v[1].r, v[2].r, v[3].r); }

inline float ReduceSumTree(VF32 a) {
  const __m128 s = _mm_add_ps(a.r, _mm_movehl_ps(a.r, a.r));
  return _mm_cvtss_f32(_mm_add_ss(s, _mm_shuffle_ps(s, s, 1)));
}

// Binary64 lanes (VF64, VU64): the ops that the binary64 steps of the functions need.
inline VF64 Eq(VF64 a, VF64 b) { return {_mm_cmpeq_pd(a.r, b.r)}; }
inline VF64 Ne(VF64 a, VF64 b) { return {_mm_cmpneq_pd(a.r, b.r)}; }
inline VF64 Lt(VF64 a, VF64 b) { return {_mm_cmplt_pd(a.r, b.r)}; }
inline VF64 Le(VF64 a, VF64 b) { return {_mm_cmple_pd(a.r, b.r)}; }
inline VF64 Gt(VF64 a, VF64 b) { return {_mm_cmpgt_pd(a.r, b.r)}; }
inline VF64 Ge(VF64 a, VF64 b) { return {_mm_cmpge_pd(a.r, b.r)}; }
inline VF64 Add(VF64 a, VF64 b) { return {_mm_add_pd(a.r, b.r)}; }
inline VF64 Sub(VF64 a, VF64 b) { return {_mm_sub_pd(a.r, b.r)}; }
inline VF64 Mul(VF64 a, VF64 b) { return {_mm_mul_pd(a.r, b.r)}; }
inline VF64 Div(VF64 a, VF64 b) { return {_mm_div_pd(a.r, b.r)}; }
inline VF64 Neg(VF64 a) { return {_mm_xor_pd(a.r, _mm_set1_pd(-0.0))}; }
inline VF64 Abs(VF64 a) { return {_mm_andnot_pd(_mm_set1_pd(-0.0), a.r)}; }
inline VU64 Add(VU64 a, VU64 b) { return {_mm_add_epi64(a.r, b.r)}; }
inline VU64 Sub(VU64 a, VU64 b) { return {_mm_sub_epi64(a.r, b.r)}; }
inline VF64 Trunc(VF64 a) { return {_mm_round_pd(a.r, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC)}; }
inline VF64 Floor(VF64 a) { return {_mm_round_pd(a.r, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC)}; }
inline VF64 WidenLo(VF32 a) { return {_mm_cvtps_pd(a.r)}; }
inline VF64 WidenHi(VF32 a) { return {_mm_cvtps_pd(_mm_movehl_ps(a.r, a.r))}; }
// N.B. cvtpd2ps rounds by MXCSR (round to nearest even in a session).
inline VF32 NarrowRoundF64ToF32(VF64 a, VF64 b) { return {_mm_movelh_ps(_mm_cvtpd_ps(a.r), _mm_cvtpd_ps(b.r))}; }

}  // namespace ONEMODEL_NS
}  // namespace onemodel::impl
