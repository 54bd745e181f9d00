// The AVX2 backend: the same vocabulary on 256-bit registers (8 f32 lanes).
#pragma once

#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace onemodel::impl {
namespace ONEMODEL_NS {

struct VF32 {
  using Lane = float;
  static constexpr size_t kLanes = 8;
  __m256 r;
};
struct VI32 {
  using Lane = int32_t;
  static constexpr size_t kLanes = 8;
  __m256i r;
};
struct VU32 {
  using Lane = uint32_t;
  static constexpr size_t kLanes = 8;
  __m256i r;
};
struct VI16 {
  using Lane = int16_t;
  static constexpr size_t kLanes = 16;
  __m256i r;
};
struct VU16 {
  using Lane = uint16_t;
  static constexpr size_t kLanes = 16;
  __m256i r;
};
struct VI8 {
  using Lane = int8_t;
  static constexpr size_t kLanes = 32;
  __m256i r;
};
struct VU8 {
  using Lane = uint8_t;
  static constexpr size_t kLanes = 32;
  __m256i r;
};
struct VF64 {
  using Lane = double;
  static constexpr size_t kLanes = 4;
  __m256d r;
};
struct VU64 {
  using Lane = uint64_t;
  static constexpr size_t kLanes = 4;
  __m256i r;
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
inline __m256i I(V a) {
  if constexpr (std::is_same_v<V, VF64>)
    return _mm256_castpd_si256(a.r);
  else if constexpr (IsInt<V>::value)
    return a.r;
  else
    return _mm256_castps_si256(a.r);
}
template <class V>
inline V FromI(__m256i x) {
  if constexpr (std::is_same_v<V, VF64>)
    return V{_mm256_castsi256_pd(x)};
  else if constexpr (IsInt<V>::value)
    return V{x};
  else
    return V{_mm256_castsi256_ps(x)};
}
// Flips the sign bit of each lane so that unsigned order becomes signed order.
inline __m256i Flip8(__m256i x) { return _mm256_xor_si256(x, _mm256_set1_epi8(char(0x80))); }
inline __m256i Flip16(__m256i x) { return _mm256_xor_si256(x, _mm256_set1_epi16(short(0x8000))); }
inline __m256i Flip32(__m256i x) { return _mm256_xor_si256(x, _mm256_set1_epi32(int(0x80000000u))); }
}  // namespace detail

// Memory.
// N.B. vmaskmovps touches only the enabled lanes' memory (no fault past n): the f32
// LoadN/StoreN of generic-inl.h use it; masked-off lanes load 0, then take `fill`.
#define ONEMODEL_SIMD_MASKED_F32 1
inline __m256i FirstN(size_t n) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(int(n > 8 ? 8 : n)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}
template <class V>
inline V Load(const typename V::Lane* p) {
  if constexpr (std::is_same_v<V, VF64>)
    return V{_mm256_loadu_pd(p)};
  else if constexpr (detail::IsInt<V>::value)
    return V{_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p))};
  else
    return V{_mm256_loadu_ps(p)};
}
inline VF32 MaskedLoadF32(const float* p, size_t n, float fill) {
  const __m256i m = FirstN(n);
  return {_mm256_blendv_ps(_mm256_set1_ps(fill), _mm256_maskload_ps(p, m), _mm256_castsi256_ps(m))};
}
inline void MaskedStoreF32(VF32 a, float* p, size_t n) { _mm256_maskstore_ps(p, FirstN(n), a.r); }
inline void Store(VF32 a, float* p) { _mm256_storeu_ps(p, a.r); }
inline void Store(VF64 a, double* p) { _mm256_storeu_pd(p, a.r); }
template <class V>
inline void Store(V a, typename V::Lane* p) {
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), a.r);
}

// Initialisation.
template <class V>
inline V Set(typename V::Lane x) {
  if constexpr (sizeof(x) == 1)
    return V{_mm256_set1_epi8(char(x))};
  else if constexpr (sizeof(x) == 2)
    return V{_mm256_set1_epi16(short(x))};
  else if constexpr (std::is_same_v<V, VF64>)
    return V{_mm256_set1_pd(x)};
  else if constexpr (sizeof(x) == 8)
    return V{_mm256_set1_epi64x(int64_t(x))};
  else if constexpr (detail::IsInt<V>::value)
    return V{_mm256_set1_epi32(int(x))};
  else
    return V{_mm256_set1_ps(x)};
}
template <class V>
inline V Zero() {
  return detail::FromI<V>(_mm256_setzero_si256());
}
template <class VTo, class VFrom>
inline VTo BitCast(VFrom a) {
  return detail::FromI<VTo>(detail::I(a));
}

// Bitwise.
template <class V>
inline V And(V a, V b) {
  return detail::FromI<V>(_mm256_and_si256(detail::I(a), detail::I(b)));
}
template <class V>
inline V Or(V a, V b) {
  return detail::FromI<V>(_mm256_or_si256(detail::I(a), detail::I(b)));
}
template <class V>
inline V Xor(V a, V b) {
  return detail::FromI<V>(_mm256_xor_si256(detail::I(a), detail::I(b)));
}
template <class V>
inline V AndNot(V a, V b) {
  return detail::FromI<V>(_mm256_andnot_si256(detail::I(a), detail::I(b)));
}
// N.B. blendv tests only the top bit of each byte: correct for all-0/all-1 masks.
template <class V>
inline V IfThenElse(V m, V y, V n) {
  return detail::FromI<V>(_mm256_blendv_epi8(detail::I(n), detail::I(y), detail::I(m)));
}

// Comparisons.
inline VF32 Eq(VF32 a, VF32 b) { return {_mm256_cmp_ps(a.r, b.r, _CMP_EQ_OQ)}; }
inline VF32 Ne(VF32 a, VF32 b) { return {_mm256_cmp_ps(a.r, b.r, _CMP_NEQ_UQ)}; }
inline VF32 Lt(VF32 a, VF32 b) { return {_mm256_cmp_ps(a.r, b.r, _CMP_LT_OQ)}; }
inline VF32 Le(VF32 a, VF32 b) { return {_mm256_cmp_ps(a.r, b.r, _CMP_LE_OQ)}; }
inline VF32 Gt(VF32 a, VF32 b) { return {_mm256_cmp_ps(a.r, b.r, _CMP_GT_OQ)}; }
inline bool AllTrue(VF32 m) { return _mm256_movemask_ps(m.r) == 0xFF; }
// Data movement: the even-indexed elements of a then b. shuffle_ps takes them per
// 128-bit half (a0 a2 b0 b2 | a4 a6 b4 b6); the 64-bit permute puts a's before b's.
inline VF32 EvenLanes(VF32 a, VF32 b) {
  const __m256 t = _mm256_shuffle_ps(a.r, b.r, _MM_SHUFFLE(2, 0, 2, 0));
  return {_mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(t), _MM_SHUFFLE(3, 1, 2, 0)))};
}
inline VF32 Ge(VF32 a, VF32 b) { return {_mm256_cmp_ps(a.r, b.r, _CMP_GE_OQ)}; }
inline VI32 Eq(VI32 a, VI32 b) { return {_mm256_cmpeq_epi32(a.r, b.r)}; }
inline VU32 Eq(VU32 a, VU32 b) { return {_mm256_cmpeq_epi32(a.r, b.r)}; }
inline VI16 Eq(VI16 a, VI16 b) { return {_mm256_cmpeq_epi16(a.r, b.r)}; }
inline VU16 Eq(VU16 a, VU16 b) { return {_mm256_cmpeq_epi16(a.r, b.r)}; }
inline VI8 Eq(VI8 a, VI8 b) { return {_mm256_cmpeq_epi8(a.r, b.r)}; }
inline VU8 Eq(VU8 a, VU8 b) { return {_mm256_cmpeq_epi8(a.r, b.r)}; }
inline VI32 Gt(VI32 a, VI32 b) { return {_mm256_cmpgt_epi32(a.r, b.r)}; }
inline VI16 Gt(VI16 a, VI16 b) { return {_mm256_cmpgt_epi16(a.r, b.r)}; }
inline VI8 Gt(VI8 a, VI8 b) { return {_mm256_cmpgt_epi8(a.r, b.r)}; }
inline VU32 Gt(VU32 a, VU32 b) { return {_mm256_cmpgt_epi32(detail::Flip32(a.r), detail::Flip32(b.r))}; }
inline VU16 Gt(VU16 a, VU16 b) { return {_mm256_cmpgt_epi16(detail::Flip16(a.r), detail::Flip16(b.r))}; }
inline VU8 Gt(VU8 a, VU8 b) { return {_mm256_cmpgt_epi8(detail::Flip8(a.r), detail::Flip8(b.r))}; }
template <class V>
inline V Lt(V a, V b) {
  return Gt(b, a);
}

// Arithmetic.
inline VF32 Add(VF32 a, VF32 b) { return {_mm256_add_ps(a.r, b.r)}; }
inline VI32 Add(VI32 a, VI32 b) { return {_mm256_add_epi32(a.r, b.r)}; }
inline VU32 Add(VU32 a, VU32 b) { return {_mm256_add_epi32(a.r, b.r)}; }
inline VI16 Add(VI16 a, VI16 b) { return {_mm256_add_epi16(a.r, b.r)}; }
inline VU16 Add(VU16 a, VU16 b) { return {_mm256_add_epi16(a.r, b.r)}; }
inline VI8 Add(VI8 a, VI8 b) { return {_mm256_add_epi8(a.r, b.r)}; }
inline VU8 Add(VU8 a, VU8 b) { return {_mm256_add_epi8(a.r, b.r)}; }
inline VF32 Sub(VF32 a, VF32 b) { return {_mm256_sub_ps(a.r, b.r)}; }
inline VI32 Sub(VI32 a, VI32 b) { return {_mm256_sub_epi32(a.r, b.r)}; }
inline VU32 Sub(VU32 a, VU32 b) { return {_mm256_sub_epi32(a.r, b.r)}; }
inline VI16 Sub(VI16 a, VI16 b) { return {_mm256_sub_epi16(a.r, b.r)}; }
inline VU16 Sub(VU16 a, VU16 b) { return {_mm256_sub_epi16(a.r, b.r)}; }
inline VI8 Sub(VI8 a, VI8 b) { return {_mm256_sub_epi8(a.r, b.r)}; }
inline VU8 Sub(VU8 a, VU8 b) { return {_mm256_sub_epi8(a.r, b.r)}; }
inline VF32 Mul(VF32 a, VF32 b) { return {_mm256_mul_ps(a.r, b.r)}; }
inline VI32 Mul(VI32 a, VI32 b) { return {_mm256_mullo_epi32(a.r, b.r)}; }
inline VU32 Mul(VU32 a, VU32 b) { return {_mm256_mullo_epi32(a.r, b.r)}; }
inline VI16 Mul(VI16 a, VI16 b) { return {_mm256_mullo_epi16(a.r, b.r)}; }
inline VU16 Mul(VU16 a, VU16 b) { return {_mm256_mullo_epi16(a.r, b.r)}; }
inline VF32 Div(VF32 a, VF32 b) { return {_mm256_div_ps(a.r, b.r)}; }
inline VF32 Sqrt(VF32 a) { return {_mm256_sqrt_ps(a.r)}; }
inline VF32 Neg(VF32 a) { return {_mm256_xor_ps(a.r, _mm256_set1_ps(-0.0f))}; }
inline VF32 Abs(VF32 a) { return {_mm256_andnot_ps(_mm256_set1_ps(-0.0f), a.r)}; }
inline VI16 AddSat(VI16 a, VI16 b) { return {_mm256_adds_epi16(a.r, b.r)}; }
inline VU16 AddSat(VU16 a, VU16 b) { return {_mm256_adds_epu16(a.r, b.r)}; }
inline VI8 AddSat(VI8 a, VI8 b) { return {_mm256_adds_epi8(a.r, b.r)}; }
inline VU8 AddSat(VU8 a, VU8 b) { return {_mm256_adds_epu8(a.r, b.r)}; }
inline VI16 SubSat(VI16 a, VI16 b) { return {_mm256_subs_epi16(a.r, b.r)}; }
inline VU16 SubSat(VU16 a, VU16 b) { return {_mm256_subs_epu16(a.r, b.r)}; }
inline VI8 SubSat(VI8 a, VI8 b) { return {_mm256_subs_epi8(a.r, b.r)}; }
inline VU8 SubSat(VU8 a, VU8 b) { return {_mm256_subs_epu8(a.r, b.r)}; }
inline VI32 Min(VI32 a, VI32 b) { return {_mm256_min_epi32(a.r, b.r)}; }
inline VU32 Min(VU32 a, VU32 b) { return {_mm256_min_epu32(a.r, b.r)}; }
inline VI16 Min(VI16 a, VI16 b) { return {_mm256_min_epi16(a.r, b.r)}; }
inline VU16 Min(VU16 a, VU16 b) { return {_mm256_min_epu16(a.r, b.r)}; }
inline VI8 Min(VI8 a, VI8 b) { return {_mm256_min_epi8(a.r, b.r)}; }
inline VU8 Min(VU8 a, VU8 b) { return {_mm256_min_epu8(a.r, b.r)}; }
inline VI32 Max(VI32 a, VI32 b) { return {_mm256_max_epi32(a.r, b.r)}; }
inline VU32 Max(VU32 a, VU32 b) { return {_mm256_max_epu32(a.r, b.r)}; }
inline VI16 Max(VI16 a, VI16 b) { return {_mm256_max_epi16(a.r, b.r)}; }
inline VU16 Max(VU16 a, VU16 b) { return {_mm256_max_epu16(a.r, b.r)}; }
inline VI8 Max(VI8 a, VI8 b) { return {_mm256_max_epi8(a.r, b.r)}; }
inline VU8 Max(VU8 a, VU8 b) { return {_mm256_max_epu8(a.r, b.r)}; }
// N.B. minps/maxps return the second operand when either is NaN and when both are
// zeros; evaluating both orders and combining fixes the zeros (OR prefers -0 for min,
// AND prefers +0 for max), and an unordered compare forces NaN.
inline VF32 MinIeee(VF32 a, VF32 b) {
  const __m256 m = _mm256_or_ps(_mm256_min_ps(a.r, b.r), _mm256_min_ps(b.r, a.r));
  return {_mm256_blendv_ps(m, _mm256_add_ps(a.r, b.r), _mm256_cmp_ps(a.r, b.r, _CMP_UNORD_Q))};
}
inline VF32 MaxIeee(VF32 a, VF32 b) {
  const __m256 m = _mm256_and_ps(_mm256_max_ps(a.r, b.r), _mm256_max_ps(b.r, a.r));
  return {_mm256_blendv_ps(m, _mm256_add_ps(a.r, b.r), _mm256_cmp_ps(a.r, b.r, _CMP_UNORD_Q))};
}
// maxps(lo, v) is lo only when lo > v (else v: NaN and an equal zero stay), minps(hi, t)
// hi only when hi < t; the ordered mask then clears the NaN lanes to +0.
inline VF32 ClampZeroNaN(VF32 v, VF32 lo, VF32 hi) {
  const __m256 t = _mm256_min_ps(hi.r, _mm256_max_ps(lo.r, v.r));
  return {_mm256_and_ps(t, _mm256_cmp_ps(v.r, v.r, _CMP_ORD_Q))};
}
template <int k, class V>
inline V ShiftLeft(V a) {
  static_assert(sizeof(typename V::Lane) >= 2 && k >= 0 && k < int(8 * sizeof(typename V::Lane)), "ShiftLeft");
  if constexpr (sizeof(typename V::Lane) == 8)
    return V{_mm256_slli_epi64(a.r, k)};
  else if constexpr (sizeof(typename V::Lane) == 2)
    return V{_mm256_slli_epi16(a.r, k)};
  else
    return V{_mm256_slli_epi32(a.r, k)};
}
template <int k, class V>
inline V ShiftRight(V a) {
  using L = typename V::Lane;
  static_assert(sizeof(L) >= 2 && k >= 0 && k < int(8 * sizeof(L)), "ShiftRight");
  static_assert(sizeof(L) < 8 || L(-1) > L(0), "ShiftRight: 64-bit lanes are unsigned");
  if constexpr (sizeof(L) == 8)
    return V{_mm256_srli_epi64(a.r, k)};
  else if constexpr (sizeof(L) == 2) {
    if constexpr (L(-1) < L(0))
      return V{_mm256_srai_epi16(a.r, k)};
    else
      return V{_mm256_srli_epi16(a.r, k)};
  } else {
    if constexpr (L(-1) < L(0))
      return V{_mm256_srai_epi32(a.r, k)};
    else
      return V{_mm256_srli_epi32(a.r, k)};
  }
}

// Rounding and conversions.
inline VF32 RoundEven(VF32 a) { return {_mm256_round_ps(a.r, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)}; }
inline VF32 Trunc(VF32 a) { return {_mm256_round_ps(a.r, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC)}; }
inline VF32 Floor(VF32 a) { return {_mm256_round_ps(a.r, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC)}; }
inline VF32 Ceil(VF32 a) { return {_mm256_round_ps(a.r, _MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC)}; }
// N.B. cvtdq2ps rounds by MXCSR, which the session keeps at round-to-nearest-even.
inline VF32 CvtI32ToF32(VI32 a) { return {_mm256_cvtepi32_ps(a.r)}; }
// N.B. cvttps2dq returns 0x80000000 for NaN and for out-of-range lanes: flip it to
// INT32_MAX where the input is >= 2^31 and clear it where the input is NaN.
inline VI32 CvtTruncSatF32ToI32(VF32 a) {
  const __m256i t = _mm256_cvttps_epi32(a.r);
  const __m256i pos = _mm256_castps_si256(_mm256_cmp_ps(a.r, _mm256_set1_ps(2147483648.0f), _CMP_GE_OQ));
  const __m256i ord = _mm256_castps_si256(_mm256_cmp_ps(a.r, a.r, _CMP_ORD_Q));
  return {_mm256_and_si256(_mm256_xor_si256(t, pos), ord)};
}
inline VI32 CvtRoundEvenSatF32ToI32(VF32 a) { return CvtTruncSatF32ToI32(RoundEven(a)); }

// Widening: Lo is the low 128 bits (lanes [0, n/2)), Hi the high 128 bits.
inline __m128i Lo128(__m256i x) { return _mm256_castsi256_si128(x); }
inline __m128i Hi128(__m256i x) { return _mm256_extracti128_si256(x, 1); }
inline VI16 WidenLo(VI8 a) { return {_mm256_cvtepi8_epi16(Lo128(a.r))}; }
inline VI16 WidenHi(VI8 a) { return {_mm256_cvtepi8_epi16(Hi128(a.r))}; }
inline VU16 WidenLo(VU8 a) { return {_mm256_cvtepu8_epi16(Lo128(a.r))}; }
inline VU16 WidenHi(VU8 a) { return {_mm256_cvtepu8_epi16(Hi128(a.r))}; }
inline VI32 WidenLo(VI16 a) { return {_mm256_cvtepi16_epi32(Lo128(a.r))}; }
inline VI32 WidenHi(VI16 a) { return {_mm256_cvtepi16_epi32(Hi128(a.r))}; }
inline VU32 WidenLo(VU16 a) { return {_mm256_cvtepu16_epi32(Lo128(a.r))}; }
inline VU32 WidenHi(VU16 a) { return {_mm256_cvtepu16_epi32(Hi128(a.r))}; }

// Narrowing. N.B. packs/packus saturate (packus from signed sources); the truncating
// forms first mask to the low bits, which packus then passes through unchanged.
// N.B. AVX2 packs work within each 128-bit half, giving a0 b0 a1 b1 by quarters;
// Fix() puts the quarters back into the order a0 a1 b0 b1.
inline __m256i Fix(__m256i x) { return _mm256_permute4x64_epi64(x, 0xD8); }
inline VI16 NarrowSatI32ToI16(VI32 a, VI32 b) { return {Fix(_mm256_packs_epi32(a.r, b.r))}; }
inline VU16 NarrowSatI32ToU16(VI32 a, VI32 b) { return {Fix(_mm256_packus_epi32(a.r, b.r))}; }
inline VU16 NarrowSatU32ToU16(VU32 a, VU32 b) {
  const __m256i m = _mm256_set1_epi32(0xFFFF);
  return {Fix(_mm256_packus_epi32(_mm256_min_epu32(a.r, m), _mm256_min_epu32(b.r, m)))};
}
inline VU16 NarrowTruncU32ToU16(VU32 a, VU32 b) {
  const __m256i m = _mm256_set1_epi32(0xFFFF);
  return {Fix(_mm256_packus_epi32(_mm256_and_si256(a.r, m), _mm256_and_si256(b.r, m)))};
}
inline VU16 NarrowTruncI32ToU16(VI32 a, VI32 b) { return NarrowTruncU32ToU16(VU32{a.r}, VU32{b.r}); }
inline VI16 NarrowTruncI32ToI16(VI32 a, VI32 b) { return {NarrowTruncU32ToU16(VU32{a.r}, VU32{b.r}).r}; }
inline VI8 NarrowSatI16ToI8(VI16 a, VI16 b) { return {Fix(_mm256_packs_epi16(a.r, b.r))}; }
inline VU8 NarrowSatI16ToU8(VI16 a, VI16 b) { return {Fix(_mm256_packus_epi16(a.r, b.r))}; }
inline VU8 NarrowSatU16ToU8(VU16 a, VU16 b) {
  const __m256i m = _mm256_set1_epi16(0xFF);
  return {Fix(_mm256_packus_epi16(_mm256_min_epu16(a.r, m), _mm256_min_epu16(b.r, m)))};
}
inline VU8 NarrowTruncU16ToU8(VU16 a, VU16 b) {
  const __m256i m = _mm256_set1_epi16(0xFF);
  return {Fix(_mm256_packus_epi16(_mm256_and_si256(a.r, m), _mm256_and_si256(b.r, m)))};
}
inline VU8 NarrowTruncI16ToU8(VI16 a, VI16 b) { return NarrowTruncU16ToU8(VU16{a.r}, VU16{b.r}); }
inline VI8 NarrowTruncI16ToI8(VI16 a, VI16 b) { return {NarrowTruncU16ToU8(VU16{a.r}, VU16{b.r}).r}; }

// Integer products. N.B. pmaddwd wraps (0x8000^2 * 2 -> 0x80000000), as defined.
inline VI32 MulAddPairsI16(VI16 a, VI16 b) { return {_mm256_madd_epi16(a.r, b.r)}; }
inline VI32 DotI8x4Acc(VI32 acc, VI8 a, VI8 b) {
  const __m256i lo = _mm256_madd_epi16(WidenLo(a).r, WidenLo(b).r);
  const __m256i hi = _mm256_madd_epi16(WidenHi(a).r, WidenHi(b).r);
  return {_mm256_add_epi32(acc.r, Fix(_mm256_hadd_epi32(lo, hi)))};
}
#if defined(ONEMODEL_TARGET_AVXVNNI)
// AVX-VNNI's non-saturating u8 x s8 dot product (vpdpbusd, VEX form): exact products,
// their four-term sum exact in int32, added to acc with wrap.
#define ONEMODEL_SIMD_NATIVE_DOT_U8S8 1
inline VI32 DotU8S8x4Acc(VI32 acc, VU8 a, VI8 b) { return {_mm256_dpbusd_avx_epi32(acc.r, a.r, b.r)}; }
#endif

// Horizontal: lanes j += j+4 (the two 128-bit halves), then the 4-lane tree.
// Data movement: 8x8 by unpacks and shuffles within 128-bit halves, then half swaps.
inline void TransposeSquare(VF32* v) {
  __m256 t[8], s[8];
  for (int i = 0; i < 4; ++i) {
    t[2 * i] = _mm256_unpacklo_ps(v[2 * i].r, v[2 * i + 1].r);
    t[2 * i + 1] = _mm256_unpackhi_ps(v[2 * i].r, v[2 * i + 1].r);
  }
  for (int i = 0; i < 2; ++i) {
    s[4 * i] = _mm256_shuffle_ps(t[4 * i], t[4 * i + 2], 0x44);
    s[4 * i + 1] = _mm256_shuffle_ps(t[4 * i], t[4 * i + 2], 0xEE);
    s[4 * i + 2] = _mm256_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0x44);
    s[4 * i + 3] = _mm256_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0xEE);
  }
  for (int k = 0; k < 4; ++k) {
    v[k].r = _mm256_permute2f128_ps(s[k], s[4 + k], 0x20);
    v[4 + k].r = _mm256_permute2f128_ps(s[k], s[4 + k], 0x31);
  }
}

inline float ReduceSumTree(VF32 a) {
  const __m128 q = _mm_add_ps(_mm256_castps256_ps128(a.r), _mm256_extractf128_ps(a.r, 1));
  const __m128 s = _mm_add_ps(q, _mm_movehl_ps(q, q));
  return _mm_cvtss_f32(_mm_add_ss(s, _mm_shuffle_ps(s, s, 1)));
}

// Binary64 lanes (VF64, VU64): the ops that the binary64 steps of the functions need.
inline VF64 Eq(VF64 a, VF64 b) { return {_mm256_cmp_pd(a.r, b.r, _CMP_EQ_OQ)}; }
inline VF64 Ne(VF64 a, VF64 b) { return {_mm256_cmp_pd(a.r, b.r, _CMP_NEQ_UQ)}; }
inline VF64 Lt(VF64 a, VF64 b) { return {_mm256_cmp_pd(a.r, b.r, _CMP_LT_OQ)}; }
inline VF64 Le(VF64 a, VF64 b) { return {_mm256_cmp_pd(a.r, b.r, _CMP_LE_OQ)}; }
inline VF64 Gt(VF64 a, VF64 b) { return {_mm256_cmp_pd(a.r, b.r, _CMP_GT_OQ)}; }
inline VF64 Ge(VF64 a, VF64 b) { return {_mm256_cmp_pd(a.r, b.r, _CMP_GE_OQ)}; }
inline VF64 Add(VF64 a, VF64 b) { return {_mm256_add_pd(a.r, b.r)}; }
inline VF64 Sub(VF64 a, VF64 b) { return {_mm256_sub_pd(a.r, b.r)}; }
inline VF64 Mul(VF64 a, VF64 b) { return {_mm256_mul_pd(a.r, b.r)}; }
inline VF64 Div(VF64 a, VF64 b) { return {_mm256_div_pd(a.r, b.r)}; }
inline VF64 Neg(VF64 a) { return {_mm256_xor_pd(a.r, _mm256_set1_pd(-0.0))}; }
inline VF64 Abs(VF64 a) { return {_mm256_andnot_pd(_mm256_set1_pd(-0.0), a.r)}; }
inline VU64 Add(VU64 a, VU64 b) { return {_mm256_add_epi64(a.r, b.r)}; }
inline VU64 Sub(VU64 a, VU64 b) { return {_mm256_sub_epi64(a.r, b.r)}; }
inline VF64 Trunc(VF64 a) { return {_mm256_round_pd(a.r, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC)}; }
inline VF64 Floor(VF64 a) { return {_mm256_round_pd(a.r, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC)}; }
inline VF64 WidenLo(VF32 a) { return {_mm256_cvtps_pd(_mm256_castps256_ps128(a.r))}; }
inline VF64 WidenHi(VF32 a) { return {_mm256_cvtps_pd(_mm256_extractf128_ps(a.r, 1))}; }
// N.B. vcvtpd2ps rounds by MXCSR (round to nearest even in a session).
inline VF32 NarrowRoundF64ToF32(VF64 a, VF64 b) {
  return {_mm256_set_m128(_mm256_cvtpd_ps(b.r), _mm256_cvtpd_ps(a.r))};
}

}  // namespace ONEMODEL_NS
}  // namespace onemodel::impl
