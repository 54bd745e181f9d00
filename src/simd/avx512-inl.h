// The AVX-512 backend (F, BW, DQ, VL): the same vocabulary on 512-bit registers.
#pragma once

#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace onemodel::impl {
namespace ONEMODEL_NS {

struct VF32 {
  using Lane = float;
  static constexpr size_t kLanes = 16;
  __m512 r;
};
struct VI32 {
  using Lane = int32_t;
  static constexpr size_t kLanes = 16;
  __m512i r;
};
struct VU32 {
  using Lane = uint32_t;
  static constexpr size_t kLanes = 16;
  __m512i r;
};
struct VI16 {
  using Lane = int16_t;
  static constexpr size_t kLanes = 32;
  __m512i r;
};
struct VU16 {
  using Lane = uint16_t;
  static constexpr size_t kLanes = 32;
  __m512i r;
};
struct VI8 {
  using Lane = int8_t;
  static constexpr size_t kLanes = 64;
  __m512i r;
};
struct VU8 {
  using Lane = uint8_t;
  static constexpr size_t kLanes = 64;
  __m512i r;
};
struct VF64 {
  using Lane = double;
  static constexpr size_t kLanes = 8;
  __m512d r;
};
struct VU64 {
  using Lane = uint64_t;
  static constexpr size_t kLanes = 8;
  __m512i r;
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
inline __m512i I(V a) {
  if constexpr (std::is_same_v<V, VF64>)
    return _mm512_castpd_si512(a.r);
  else if constexpr (IsInt<V>::value)
    return a.r;
  else
    return _mm512_castps_si512(a.r);
}
template <class V>
inline V FromI(__m512i x) {
  if constexpr (std::is_same_v<V, VF64>)
    return V{_mm512_castsi512_pd(x)};
  else if constexpr (IsInt<V>::value)
    return V{x};
  else
    return V{_mm512_castsi512_ps(x)};
}
// N.B. AVX-512 compares give k-masks; the vocabulary's masks are vectors.
inline __m512i M32(__mmask16 k) { return _mm512_movm_epi32(k); }
inline __m512i M16(__mmask32 k) { return _mm512_movm_epi16(k); }
inline __m512i M8(__mmask64 k) { return _mm512_movm_epi8(k); }
inline __m512 MF(__mmask16 k) { return _mm512_castsi512_ps(_mm512_movm_epi32(k)); }
}  // namespace detail

// Memory.
// N.B. masked loads and stores touch only the enabled lanes' memory (no fault past n):
// the f32 LoadN/StoreN of generic-inl.h use them.
#define ONEMODEL_SIMD_MASKED_F32 1
inline __mmask16 FirstN(size_t n) { return __mmask16(n >= 16 ? 0xFFFFu : (1u << n) - 1u); }
template <class V>
inline V Load(const typename V::Lane* p) {
  if constexpr (std::is_same_v<V, VF64>)
    return V{_mm512_loadu_pd(p)};
  else if constexpr (detail::IsInt<V>::value)
    return V{_mm512_loadu_si512(p)};
  else
    return V{_mm512_loadu_ps(p)};
}
inline VF32 MaskedLoadF32(const float* p, size_t n, float fill) {
  return {_mm512_mask_loadu_ps(_mm512_set1_ps(fill), FirstN(n), p)};
}
inline void MaskedStoreF32(VF32 a, float* p, size_t n) { _mm512_mask_storeu_ps(p, FirstN(n), a.r); }
inline void Store(VF32 a, float* p) { _mm512_storeu_ps(p, a.r); }
inline void Store(VF64 a, double* p) { _mm512_storeu_pd(p, a.r); }
template <class V>
inline void Store(V a, typename V::Lane* p) {
  _mm512_storeu_si512(p, a.r);
}

// Initialisation.
template <class V>
inline V Set(typename V::Lane x) {
  if constexpr (sizeof(x) == 1)
    return V{_mm512_set1_epi8(char(x))};
  else if constexpr (sizeof(x) == 2)
    return V{_mm512_set1_epi16(short(x))};
  else if constexpr (std::is_same_v<V, VF64>)
    return V{_mm512_set1_pd(x)};
  else if constexpr (sizeof(x) == 8)
    return V{_mm512_set1_epi64(int64_t(x))};
  else if constexpr (detail::IsInt<V>::value)
    return V{_mm512_set1_epi32(int(x))};
  else
    return V{_mm512_set1_ps(x)};
}
template <class V>
inline V Zero() {
  return detail::FromI<V>(_mm512_setzero_si512());
}
template <class VTo, class VFrom>
inline VTo BitCast(VFrom a) {
  return detail::FromI<VTo>(detail::I(a));
}

// Bitwise.
template <class V>
inline V And(V a, V b) {
  return detail::FromI<V>(_mm512_and_si512(detail::I(a), detail::I(b)));
}
template <class V>
inline V Or(V a, V b) {
  return detail::FromI<V>(_mm512_or_si512(detail::I(a), detail::I(b)));
}
template <class V>
inline V Xor(V a, V b) {
  return detail::FromI<V>(_mm512_xor_si512(detail::I(a), detail::I(b)));
}
template <class V>
inline V AndNot(V a, V b) {
  return detail::FromI<V>(_mm512_andnot_si512(detail::I(a), detail::I(b)));
}
// Bit select (m ? y : n per bit): ternary-logic truth table 0xCA.
template <class V>
inline V IfThenElse(V m, V y, V n) {
  return detail::FromI<V>(_mm512_ternarylogic_epi32(detail::I(m), detail::I(y), detail::I(n), 0xCA));
}

// Comparisons.
inline VF32 Eq(VF32 a, VF32 b) { return {detail::MF(_mm512_cmp_ps_mask(a.r, b.r, _CMP_EQ_OQ))}; }
inline VF32 Ne(VF32 a, VF32 b) { return {detail::MF(_mm512_cmp_ps_mask(a.r, b.r, _CMP_NEQ_UQ))}; }
inline VF32 Lt(VF32 a, VF32 b) { return {detail::MF(_mm512_cmp_ps_mask(a.r, b.r, _CMP_LT_OQ))}; }
inline VF32 Le(VF32 a, VF32 b) { return {detail::MF(_mm512_cmp_ps_mask(a.r, b.r, _CMP_LE_OQ))}; }
inline VF32 Gt(VF32 a, VF32 b) { return {detail::MF(_mm512_cmp_ps_mask(a.r, b.r, _CMP_GT_OQ))}; }
inline bool AllTrue(VF32 m) { return _mm512_movepi32_mask(_mm512_castps_si512(m.r)) == 0xFFFF; }
// Data movement: the even-indexed elements of a then b (lanes 0, 2, ... of each).
inline VF32 EvenLanes(VF32 a, VF32 b) {
  const __m512i idx = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  return {_mm512_permutex2var_ps(a.r, idx, b.r)};
}
inline VF32 Ge(VF32 a, VF32 b) { return {detail::MF(_mm512_cmp_ps_mask(a.r, b.r, _CMP_GE_OQ))}; }
inline VI32 Eq(VI32 a, VI32 b) { return {detail::M32(_mm512_cmpeq_epi32_mask(a.r, b.r))}; }
inline VU32 Eq(VU32 a, VU32 b) { return {detail::M32(_mm512_cmpeq_epu32_mask(a.r, b.r))}; }
inline VI16 Eq(VI16 a, VI16 b) { return {detail::M16(_mm512_cmpeq_epi16_mask(a.r, b.r))}; }
inline VU16 Eq(VU16 a, VU16 b) { return {detail::M16(_mm512_cmpeq_epu16_mask(a.r, b.r))}; }
inline VI8 Eq(VI8 a, VI8 b) { return {detail::M8(_mm512_cmpeq_epi8_mask(a.r, b.r))}; }
inline VU8 Eq(VU8 a, VU8 b) { return {detail::M8(_mm512_cmpeq_epu8_mask(a.r, b.r))}; }
inline VI32 Gt(VI32 a, VI32 b) { return {detail::M32(_mm512_cmpgt_epi32_mask(a.r, b.r))}; }
inline VU32 Gt(VU32 a, VU32 b) { return {detail::M32(_mm512_cmpgt_epu32_mask(a.r, b.r))}; }
inline VI16 Gt(VI16 a, VI16 b) { return {detail::M16(_mm512_cmpgt_epi16_mask(a.r, b.r))}; }
inline VU16 Gt(VU16 a, VU16 b) { return {detail::M16(_mm512_cmpgt_epu16_mask(a.r, b.r))}; }
inline VI8 Gt(VI8 a, VI8 b) { return {detail::M8(_mm512_cmpgt_epi8_mask(a.r, b.r))}; }
inline VU8 Gt(VU8 a, VU8 b) { return {detail::M8(_mm512_cmpgt_epu8_mask(a.r, b.r))}; }
template <class V>
inline V Lt(V a, V b) {
  return Gt(b, a);
}

// Arithmetic.
inline VF32 Add(VF32 a, VF32 b) { return {_mm512_add_ps(a.r, b.r)}; }
inline VI32 Add(VI32 a, VI32 b) { return {_mm512_add_epi32(a.r, b.r)}; }
inline VU32 Add(VU32 a, VU32 b) { return {_mm512_add_epi32(a.r, b.r)}; }
inline VI16 Add(VI16 a, VI16 b) { return {_mm512_add_epi16(a.r, b.r)}; }
inline VU16 Add(VU16 a, VU16 b) { return {_mm512_add_epi16(a.r, b.r)}; }
inline VI8 Add(VI8 a, VI8 b) { return {_mm512_add_epi8(a.r, b.r)}; }
inline VU8 Add(VU8 a, VU8 b) { return {_mm512_add_epi8(a.r, b.r)}; }
inline VF32 Sub(VF32 a, VF32 b) { return {_mm512_sub_ps(a.r, b.r)}; }
inline VI32 Sub(VI32 a, VI32 b) { return {_mm512_sub_epi32(a.r, b.r)}; }
inline VU32 Sub(VU32 a, VU32 b) { return {_mm512_sub_epi32(a.r, b.r)}; }
inline VI16 Sub(VI16 a, VI16 b) { return {_mm512_sub_epi16(a.r, b.r)}; }
inline VU16 Sub(VU16 a, VU16 b) { return {_mm512_sub_epi16(a.r, b.r)}; }
inline VI8 Sub(VI8 a, VI8 b) { return {_mm512_sub_epi8(a.r, b.r)}; }
inline VU8 Sub(VU8 a, VU8 b) { return {_mm512_sub_epi8(a.r, b.r)}; }
inline VF32 Mul(VF32 a, VF32 b) { return {_mm512_mul_ps(a.r, b.r)}; }
inline VI32 Mul(VI32 a, VI32 b) { return {_mm512_mullo_epi32(a.r, b.r)}; }
inline VU32 Mul(VU32 a, VU32 b) { return {_mm512_mullo_epi32(a.r, b.r)}; }
inline VI16 Mul(VI16 a, VI16 b) { return {_mm512_mullo_epi16(a.r, b.r)}; }
inline VU16 Mul(VU16 a, VU16 b) { return {_mm512_mullo_epi16(a.r, b.r)}; }
inline VF32 Div(VF32 a, VF32 b) { return {_mm512_div_ps(a.r, b.r)}; }
inline VF32 Sqrt(VF32 a) { return {_mm512_sqrt_ps(a.r)}; }
inline VF32 Neg(VF32 a) {
  return detail::FromI<VF32>(_mm512_xor_si512(detail::I(a), _mm512_set1_epi32(int(0x80000000u))));
}
inline VF32 Abs(VF32 a) { return detail::FromI<VF32>(_mm512_and_si512(detail::I(a), _mm512_set1_epi32(0x7FFFFFFF))); }
inline VI16 AddSat(VI16 a, VI16 b) { return {_mm512_adds_epi16(a.r, b.r)}; }
inline VU16 AddSat(VU16 a, VU16 b) { return {_mm512_adds_epu16(a.r, b.r)}; }
inline VI8 AddSat(VI8 a, VI8 b) { return {_mm512_adds_epi8(a.r, b.r)}; }
inline VU8 AddSat(VU8 a, VU8 b) { return {_mm512_adds_epu8(a.r, b.r)}; }
inline VI16 SubSat(VI16 a, VI16 b) { return {_mm512_subs_epi16(a.r, b.r)}; }
inline VU16 SubSat(VU16 a, VU16 b) { return {_mm512_subs_epu16(a.r, b.r)}; }
inline VI8 SubSat(VI8 a, VI8 b) { return {_mm512_subs_epi8(a.r, b.r)}; }
inline VU8 SubSat(VU8 a, VU8 b) { return {_mm512_subs_epu8(a.r, b.r)}; }
inline VI32 Min(VI32 a, VI32 b) { return {_mm512_min_epi32(a.r, b.r)}; }
inline VU32 Min(VU32 a, VU32 b) { return {_mm512_min_epu32(a.r, b.r)}; }
inline VI16 Min(VI16 a, VI16 b) { return {_mm512_min_epi16(a.r, b.r)}; }
inline VU16 Min(VU16 a, VU16 b) { return {_mm512_min_epu16(a.r, b.r)}; }
inline VI8 Min(VI8 a, VI8 b) { return {_mm512_min_epi8(a.r, b.r)}; }
inline VU8 Min(VU8 a, VU8 b) { return {_mm512_min_epu8(a.r, b.r)}; }
inline VI32 Max(VI32 a, VI32 b) { return {_mm512_max_epi32(a.r, b.r)}; }
inline VU32 Max(VU32 a, VU32 b) { return {_mm512_max_epu32(a.r, b.r)}; }
inline VI16 Max(VI16 a, VI16 b) { return {_mm512_max_epi16(a.r, b.r)}; }
inline VU16 Max(VU16 a, VU16 b) { return {_mm512_max_epu16(a.r, b.r)}; }
inline VI8 Max(VI8 a, VI8 b) { return {_mm512_max_epi8(a.r, b.r)}; }
inline VU8 Max(VU8 a, VU8 b) { return {_mm512_max_epu8(a.r, b.r)}; }
// N.B. vminps/vmaxps return the second operand on NaN and on two zeros, as SSE does:
// both orders combined fix the zeros, and an unordered mask forces NaN.
inline VF32 MinIeee(VF32 a, VF32 b) {
  const __m512i m = _mm512_or_si512(detail::I(VF32{_mm512_min_ps(a.r, b.r)}), detail::I(VF32{_mm512_min_ps(b.r, a.r)}));
  const __mmask16 nan = _mm512_cmp_ps_mask(a.r, b.r, _CMP_UNORD_Q);
  return {_mm512_mask_add_ps(_mm512_castsi512_ps(m), nan, a.r, b.r)};
}
inline VF32 MaxIeee(VF32 a, VF32 b) {
  const __m512i m =
      _mm512_and_si512(detail::I(VF32{_mm512_max_ps(a.r, b.r)}), detail::I(VF32{_mm512_max_ps(b.r, a.r)}));
  const __mmask16 nan = _mm512_cmp_ps_mask(a.r, b.r, _CMP_UNORD_Q);
  return {_mm512_mask_add_ps(_mm512_castsi512_ps(m), nan, a.r, b.r)};
}
// vmaxps(lo, v) is lo only when lo > v (else v: NaN and an equal zero stay), vminps(hi,
// t) hi only when hi < t; the ordered mask then zeroes the NaN lanes.
inline VF32 ClampZeroNaN(VF32 v, VF32 lo, VF32 hi) {
  const __mmask16 ord = _mm512_cmp_ps_mask(v.r, v.r, _CMP_ORD_Q);
  return {_mm512_maskz_min_ps(ord, hi.r, _mm512_max_ps(lo.r, v.r))};
}
template <int k, class V>
inline V ShiftLeft(V a) {
  static_assert(sizeof(typename V::Lane) >= 2 && k >= 0 && k < int(8 * sizeof(typename V::Lane)), "ShiftLeft");
  if constexpr (sizeof(typename V::Lane) == 8)
    return V{_mm512_slli_epi64(a.r, k)};
  else if constexpr (sizeof(typename V::Lane) == 2)
    return V{_mm512_slli_epi16(a.r, k)};
  else
    return V{_mm512_slli_epi32(a.r, k)};
}
template <int k, class V>
inline V ShiftRight(V a) {
  using L = typename V::Lane;
  static_assert(sizeof(L) >= 2 && k >= 0 && k < int(8 * sizeof(L)), "ShiftRight");
  static_assert(sizeof(L) < 8 || L(-1) > L(0), "ShiftRight: 64-bit lanes are unsigned");
  if constexpr (sizeof(L) == 8)
    return V{_mm512_srli_epi64(a.r, k)};
  else if constexpr (sizeof(L) == 2) {
    if constexpr (L(-1) < L(0))
      return V{_mm512_srai_epi16(a.r, k)};
    else
      return V{_mm512_srli_epi16(a.r, k)};
  } else {
    if constexpr (L(-1) < L(0))
      return V{_mm512_srai_epi32(a.r, k)};
    else
      return V{_mm512_srli_epi32(a.r, k)};
  }
}

// Rounding and conversions.
inline VF32 RoundEven(VF32 a) { return {_mm512_roundscale_ps(a.r, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)}; }
inline VF32 Trunc(VF32 a) { return {_mm512_roundscale_ps(a.r, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC)}; }
inline VF32 Floor(VF32 a) { return {_mm512_roundscale_ps(a.r, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC)}; }
inline VF32 Ceil(VF32 a) { return {_mm512_roundscale_ps(a.r, _MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC)}; }
inline VF32 CvtI32ToF32(VI32 a) {
  return {_mm512_cvt_roundepi32_ps(a.r, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)};
}
// N.B. vcvttps2dq returns 0x80000000 for NaN and out-of-range lanes, as SSE does.
inline VI32 CvtTruncSatF32ToI32(VF32 a) {
  const __m512i t = _mm512_cvttps_epi32(a.r);
  const __mmask16 pos = _mm512_cmp_ps_mask(a.r, _mm512_set1_ps(2147483648.0f), _CMP_GE_OQ);
  const __mmask16 ord = _mm512_cmp_ps_mask(a.r, a.r, _CMP_ORD_Q);
  return {_mm512_maskz_mov_epi32(ord, _mm512_mask_mov_epi32(t, pos, _mm512_set1_epi32(0x7FFFFFFF)))};
}
inline VI32 CvtRoundEvenSatF32ToI32(VF32 a) { return CvtTruncSatF32ToI32(RoundEven(a)); }

// Widening: Lo is the low 256 bits, Hi the high 256 bits.
inline __m256i Lo256(__m512i x) { return _mm512_castsi512_si256(x); }
inline __m256i Hi256(__m512i x) { return _mm512_extracti64x4_epi64(x, 1); }
inline VI16 WidenLo(VI8 a) { return {_mm512_cvtepi8_epi16(Lo256(a.r))}; }
inline VI16 WidenHi(VI8 a) { return {_mm512_cvtepi8_epi16(Hi256(a.r))}; }
inline VU16 WidenLo(VU8 a) { return {_mm512_cvtepu8_epi16(Lo256(a.r))}; }
inline VU16 WidenHi(VU8 a) { return {_mm512_cvtepu8_epi16(Hi256(a.r))}; }
inline VI32 WidenLo(VI16 a) { return {_mm512_cvtepi16_epi32(Lo256(a.r))}; }
inline VI32 WidenHi(VI16 a) { return {_mm512_cvtepi16_epi32(Hi256(a.r))}; }
inline VU32 WidenLo(VU16 a) { return {_mm512_cvtepu16_epi32(Lo256(a.r))}; }
inline VU32 WidenHi(VU16 a) { return {_mm512_cvtepu16_epi32(Hi256(a.r))}; }

// Narrowing with the vpmov family, which names its policy: vpmov* truncates, vpmovs*
// saturates signed to signed, vpmovus* saturates unsigned to unsigned.
// N.B. vpmovus* reads its source as unsigned, so signed -> unsigned saturation clamps
// negative lanes to zero first.
inline __m512i Join(__m256i lo, __m256i hi) { return _mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1); }
inline VI16 NarrowSatI32ToI16(VI32 a, VI32 b) {
  return {Join(_mm512_cvtsepi32_epi16(a.r), _mm512_cvtsepi32_epi16(b.r))};
}
inline VI16 NarrowTruncI32ToI16(VI32 a, VI32 b) {
  return {Join(_mm512_cvtepi32_epi16(a.r), _mm512_cvtepi32_epi16(b.r))};
}
inline VU16 NarrowSatI32ToU16(VI32 a, VI32 b) {
  const __m512i z = _mm512_setzero_si512();
  return {Join(_mm512_cvtusepi32_epi16(_mm512_max_epi32(a.r, z)), _mm512_cvtusepi32_epi16(_mm512_max_epi32(b.r, z)))};
}
inline VU16 NarrowTruncI32ToU16(VI32 a, VI32 b) {
  return {Join(_mm512_cvtepi32_epi16(a.r), _mm512_cvtepi32_epi16(b.r))};
}
inline VU16 NarrowSatU32ToU16(VU32 a, VU32 b) {
  return {Join(_mm512_cvtusepi32_epi16(a.r), _mm512_cvtusepi32_epi16(b.r))};
}
inline VU16 NarrowTruncU32ToU16(VU32 a, VU32 b) {
  return {Join(_mm512_cvtepi32_epi16(a.r), _mm512_cvtepi32_epi16(b.r))};
}
inline VI8 NarrowSatI16ToI8(VI16 a, VI16 b) { return {Join(_mm512_cvtsepi16_epi8(a.r), _mm512_cvtsepi16_epi8(b.r))}; }
inline VI8 NarrowTruncI16ToI8(VI16 a, VI16 b) { return {Join(_mm512_cvtepi16_epi8(a.r), _mm512_cvtepi16_epi8(b.r))}; }
inline VU8 NarrowSatI16ToU8(VI16 a, VI16 b) {
  const __m512i z = _mm512_setzero_si512();
  return {Join(_mm512_cvtusepi16_epi8(_mm512_max_epi16(a.r, z)), _mm512_cvtusepi16_epi8(_mm512_max_epi16(b.r, z)))};
}
inline VU8 NarrowTruncI16ToU8(VI16 a, VI16 b) { return {Join(_mm512_cvtepi16_epi8(a.r), _mm512_cvtepi16_epi8(b.r))}; }
inline VU8 NarrowSatU16ToU8(VU16 a, VU16 b) { return {Join(_mm512_cvtusepi16_epi8(a.r), _mm512_cvtusepi16_epi8(b.r))}; }
inline VU8 NarrowTruncU16ToU8(VU16 a, VU16 b) { return {Join(_mm512_cvtepi16_epi8(a.r), _mm512_cvtepi16_epi8(b.r))}; }

// Integer products. N.B. vpmaddwd wraps like pmaddwd.
inline VI32 MulAddPairsI16(VI16 a, VI16 b) { return {_mm512_madd_epi16(a.r, b.r)}; }
inline VI32 DotI8x4Acc(VI32 acc, VI8 a, VI8 b) {
  const __m512i lo = _mm512_madd_epi16(WidenLo(a).r, WidenLo(b).r);  // pair sums 0..15
  const __m512i hi = _mm512_madd_epi16(WidenHi(a).r, WidenHi(b).r);  // pair sums 16..31
  const __m512i even = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
  const __m512i odd = _mm512_set_epi32(31, 29, 27, 25, 23, 21, 19, 17, 15, 13, 11, 9, 7, 5, 3, 1);
  const __m512i s = _mm512_add_epi32(_mm512_permutex2var_epi32(lo, even, hi), _mm512_permutex2var_epi32(lo, odd, hi));
  return {_mm512_add_epi32(acc.r, s)};
}
#if defined(ONEMODEL_TARGET_AVX512VNNI)
// AVX512_VNNI's non-saturating u8 x s8 dot product (vpdpbusd): exact products, their
// four-term sum exact in int32, added to acc with wrap.
#define ONEMODEL_SIMD_NATIVE_DOT_U8S8 1
inline VI32 DotU8S8x4Acc(VI32 acc, VU8 a, VI8 b) { return {_mm512_dpbusd_epi32(acc.r, a.r, b.r)}; }
#endif

// Horizontal: lanes j += j+8, then j += j+4, then the 4-lane tree.
// Data movement: 16x16 by unpacks and shuffles within 128-bit lanes, then two rounds of
// 128-bit lane shuffles.
inline void TransposeSquare(VF32* v) {
  __m512 t[16], u[16];
  for (int i = 0; i < 8; ++i) {
    t[2 * i] = _mm512_unpacklo_ps(v[2 * i].r, v[2 * i + 1].r);
    t[2 * i + 1] = _mm512_unpackhi_ps(v[2 * i].r, v[2 * i + 1].r);
  }
  for (int i = 0; i < 4; ++i) {
    u[4 * i] = _mm512_shuffle_ps(t[4 * i], t[4 * i + 2], 0x44);
    u[4 * i + 1] = _mm512_shuffle_ps(t[4 * i], t[4 * i + 2], 0xEE);
    u[4 * i + 2] = _mm512_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0x44);
    u[4 * i + 3] = _mm512_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0xEE);
  }
  // u[4i + k] holds, in its 128-bit lane L, column 4L + k of rows 4i .. 4i + 3.
  for (int k = 0; k < 4; ++k) {
    const __m512 x0 = _mm512_shuffle_f32x4(u[k], u[4 + k], 0x88), x1 = _mm512_shuffle_f32x4(u[k], u[4 + k], 0xDD);
    const __m512 y0 = _mm512_shuffle_f32x4(u[8 + k], u[12 + k], 0x88),
                 y1 = _mm512_shuffle_f32x4(u[8 + k], u[12 + k], 0xDD);
    v[k].r = _mm512_shuffle_f32x4(x0, y0, 0x88);
    v[8 + k].r = _mm512_shuffle_f32x4(x0, y0, 0xDD);
    v[4 + k].r = _mm512_shuffle_f32x4(x1, y1, 0x88);
    v[12 + k].r = _mm512_shuffle_f32x4(x1, y1, 0xDD);
  }
}

inline float ReduceSumTree(VF32 a) {
  const __m256 h =
      _mm256_add_ps(_mm512_castps512_ps256(a.r), _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(a.r), 1)));
  const __m128 q = _mm_add_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
  const __m128 s = _mm_add_ps(q, _mm_movehl_ps(q, q));
  return _mm_cvtss_f32(_mm_add_ss(s, _mm_shuffle_ps(s, s, 1)));
}

// Binary64 lanes (VF64, VU64): the ops that the binary64 steps of the functions need.
namespace detail {
inline __m512d MD(__mmask8 k) { return _mm512_castsi512_pd(_mm512_movm_epi64(k)); }
}  // namespace detail
inline VF64 Eq(VF64 a, VF64 b) { return {detail::MD(_mm512_cmp_pd_mask(a.r, b.r, _CMP_EQ_OQ))}; }
inline VF64 Ne(VF64 a, VF64 b) { return {detail::MD(_mm512_cmp_pd_mask(a.r, b.r, _CMP_NEQ_UQ))}; }
inline VF64 Lt(VF64 a, VF64 b) { return {detail::MD(_mm512_cmp_pd_mask(a.r, b.r, _CMP_LT_OQ))}; }
inline VF64 Le(VF64 a, VF64 b) { return {detail::MD(_mm512_cmp_pd_mask(a.r, b.r, _CMP_LE_OQ))}; }
inline VF64 Gt(VF64 a, VF64 b) { return {detail::MD(_mm512_cmp_pd_mask(a.r, b.r, _CMP_GT_OQ))}; }
inline VF64 Ge(VF64 a, VF64 b) { return {detail::MD(_mm512_cmp_pd_mask(a.r, b.r, _CMP_GE_OQ))}; }
inline VF64 Add(VF64 a, VF64 b) { return {_mm512_add_pd(a.r, b.r)}; }
inline VF64 Sub(VF64 a, VF64 b) { return {_mm512_sub_pd(a.r, b.r)}; }
inline VF64 Mul(VF64 a, VF64 b) { return {_mm512_mul_pd(a.r, b.r)}; }
inline VF64 Div(VF64 a, VF64 b) { return {_mm512_div_pd(a.r, b.r)}; }
inline VF64 Neg(VF64 a) {
  return detail::FromI<VF64>(_mm512_xor_si512(detail::I(a), _mm512_set1_epi64(int64_t(0x8000000000000000ull))));
}
inline VF64 Abs(VF64 a) {
  return detail::FromI<VF64>(_mm512_and_si512(detail::I(a), _mm512_set1_epi64(0x7FFFFFFFFFFFFFFFll)));
}
inline VU64 Add(VU64 a, VU64 b) { return {_mm512_add_epi64(a.r, b.r)}; }
inline VU64 Sub(VU64 a, VU64 b) { return {_mm512_sub_epi64(a.r, b.r)}; }
inline VF64 Trunc(VF64 a) { return {_mm512_roundscale_pd(a.r, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC)}; }
inline VF64 Floor(VF64 a) { return {_mm512_roundscale_pd(a.r, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC)}; }
inline VF64 WidenLo(VF32 a) { return {_mm512_cvtps_pd(_mm512_castps512_ps256(a.r))}; }
inline VF64 WidenHi(VF32 a) {
  return {_mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(a.r), 1)))};
}
// N.B. vcvtpd2ps without a rounding override rounds by MXCSR (nearest even in a session).
inline VF32 NarrowRoundF64ToF32(VF64 a, VF64 b) {
  const __m512d lo = _mm512_castpd256_pd512(_mm256_castps_pd(_mm512_cvtpd_ps(a.r)));
  return {_mm512_castpd_ps(_mm512_insertf64x4(lo, _mm256_castps_pd(_mm512_cvtpd_ps(b.r)), 1))};
}

}  // namespace ONEMODEL_NS
}  // namespace onemodel::impl
