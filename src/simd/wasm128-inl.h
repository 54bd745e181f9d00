// The wasm SIMD128 backend (Emscripten, -msimd128; no relaxed SIMD in exact mode).
#pragma once

#include <wasm_simd128.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace onemodel::impl {
namespace ONEMODEL_NS {

struct VF32 {
  using Lane = float;
  static constexpr size_t kLanes = 4;
  v128_t r;
};
struct VI32 {
  using Lane = int32_t;
  static constexpr size_t kLanes = 4;
  v128_t r;
};
struct VU32 {
  using Lane = uint32_t;
  static constexpr size_t kLanes = 4;
  v128_t r;
};
struct VI16 {
  using Lane = int16_t;
  static constexpr size_t kLanes = 8;
  v128_t r;
};
struct VU16 {
  using Lane = uint16_t;
  static constexpr size_t kLanes = 8;
  v128_t r;
};
struct VI8 {
  using Lane = int8_t;
  static constexpr size_t kLanes = 16;
  v128_t r;
};
struct VU8 {
  using Lane = uint8_t;
  static constexpr size_t kLanes = 16;
  v128_t r;
};
struct VF64 {
  using Lane = double;
  static constexpr size_t kLanes = 2;
  v128_t r;
};
struct VU64 {
  using Lane = uint64_t;
  static constexpr size_t kLanes = 2;
  v128_t r;
};

// Memory.
template <class V>
inline V Load(const typename V::Lane* p) {
  return V{wasm_v128_load(p)};
}
template <class V>
inline void Store(V a, typename V::Lane* p) {
  wasm_v128_store(p, a.r);
}
// N.B. f32 LoadN/StoreN (generic-inl.h) by lane loads and stores: only lanes below n
// touch memory.
#define ONEMODEL_SIMD_MASKED_F32 1
inline VF32 MaskedLoadF32(const float* p, size_t n, float fill) {
  if (n >= 4) return {wasm_v128_load(p)};
  v128_t v = wasm_f32x4_splat(fill);
  if (n >= 1) v = wasm_v128_load32_lane(p, v, 0);
  if (n >= 2) v = wasm_v128_load32_lane(p + 1, v, 1);
  if (n >= 3) v = wasm_v128_load32_lane(p + 2, v, 2);
  return {v};
}
inline void MaskedStoreF32(VF32 a, float* p, size_t n) {
  if (n >= 4) {
    wasm_v128_store(p, a.r);
    return;
  }
  if (n >= 1) wasm_v128_store32_lane(p, a.r, 0);
  if (n >= 2) wasm_v128_store32_lane(p + 1, a.r, 1);
  if (n >= 3) wasm_v128_store32_lane(p + 2, a.r, 2);
}

// Initialisation.
template <class V>
inline V Set(typename V::Lane x) {
  if constexpr (sizeof(x) == 1)
    return V{wasm_i8x16_splat(int8_t(x))};
  else if constexpr (sizeof(x) == 2)
    return V{wasm_i16x8_splat(int16_t(x))};
  else if constexpr (std::is_same_v<typename V::Lane, float>)
    return V{wasm_f32x4_splat(x)};
  else if constexpr (std::is_same_v<typename V::Lane, double>)
    return V{wasm_f64x2_splat(x)};
  else if constexpr (sizeof(x) == 8)
    return V{wasm_i64x2_splat(int64_t(x))};
  else
    return V{wasm_i32x4_splat(int32_t(x))};
}
template <class V>
inline V Zero() {
  return V{wasm_i32x4_const_splat(0)};
}
template <class VTo, class VFrom>
inline VTo BitCast(VFrom a) {
  return VTo{a.r};
}

// Bitwise.
template <class V>
inline V And(V a, V b) {
  return V{wasm_v128_and(a.r, b.r)};
}
template <class V>
inline V Or(V a, V b) {
  return V{wasm_v128_or(a.r, b.r)};
}
template <class V>
inline V Xor(V a, V b) {
  return V{wasm_v128_xor(a.r, b.r)};
}
template <class V>
inline V AndNot(V a, V b) {
  return V{wasm_v128_andnot(b.r, a.r)};
}  // b & ~a
template <class V>
inline V IfThenElse(V m, V y, V n) {
  return V{wasm_v128_bitselect(y.r, n.r, m.r)};
}

// Comparisons.
inline VF32 Eq(VF32 a, VF32 b) { return {wasm_f32x4_eq(a.r, b.r)}; }
inline VF32 Ne(VF32 a, VF32 b) { return {wasm_f32x4_ne(a.r, b.r)}; }
inline VF32 Lt(VF32 a, VF32 b) { return {wasm_f32x4_lt(a.r, b.r)}; }
inline VF32 Le(VF32 a, VF32 b) { return {wasm_f32x4_le(a.r, b.r)}; }
inline VF32 Gt(VF32 a, VF32 b) { return {wasm_f32x4_gt(a.r, b.r)}; }
inline bool AllTrue(VF32 m) { return wasm_i32x4_all_true(m.r); }
inline VF32 EvenLanes(VF32 a, VF32 b) { return {wasm_i32x4_shuffle(a.r, b.r, 0, 2, 4, 6)}; }
inline VF32 Ge(VF32 a, VF32 b) { return {wasm_f32x4_ge(a.r, b.r)}; }
inline VI32 Eq(VI32 a, VI32 b) { return {wasm_i32x4_eq(a.r, b.r)}; }
inline VU32 Eq(VU32 a, VU32 b) { return {wasm_i32x4_eq(a.r, b.r)}; }
inline VI16 Eq(VI16 a, VI16 b) { return {wasm_i16x8_eq(a.r, b.r)}; }
inline VU16 Eq(VU16 a, VU16 b) { return {wasm_i16x8_eq(a.r, b.r)}; }
inline VI8 Eq(VI8 a, VI8 b) { return {wasm_i8x16_eq(a.r, b.r)}; }
inline VU8 Eq(VU8 a, VU8 b) { return {wasm_i8x16_eq(a.r, b.r)}; }
inline VI32 Gt(VI32 a, VI32 b) { return {wasm_i32x4_gt(a.r, b.r)}; }
inline VU32 Gt(VU32 a, VU32 b) { return {wasm_u32x4_gt(a.r, b.r)}; }
inline VI16 Gt(VI16 a, VI16 b) { return {wasm_i16x8_gt(a.r, b.r)}; }
inline VU16 Gt(VU16 a, VU16 b) { return {wasm_u16x8_gt(a.r, b.r)}; }
inline VI8 Gt(VI8 a, VI8 b) { return {wasm_i8x16_gt(a.r, b.r)}; }
inline VU8 Gt(VU8 a, VU8 b) { return {wasm_u8x16_gt(a.r, b.r)}; }
template <class V>
inline V Lt(V a, V b) {
  return Gt(b, a);
}

// Arithmetic.
inline VF32 Add(VF32 a, VF32 b) { return {wasm_f32x4_add(a.r, b.r)}; }
inline VI32 Add(VI32 a, VI32 b) { return {wasm_i32x4_add(a.r, b.r)}; }
inline VU32 Add(VU32 a, VU32 b) { return {wasm_i32x4_add(a.r, b.r)}; }
inline VI16 Add(VI16 a, VI16 b) { return {wasm_i16x8_add(a.r, b.r)}; }
inline VU16 Add(VU16 a, VU16 b) { return {wasm_i16x8_add(a.r, b.r)}; }
inline VI8 Add(VI8 a, VI8 b) { return {wasm_i8x16_add(a.r, b.r)}; }
inline VU8 Add(VU8 a, VU8 b) { return {wasm_i8x16_add(a.r, b.r)}; }
inline VF32 Sub(VF32 a, VF32 b) { return {wasm_f32x4_sub(a.r, b.r)}; }
inline VI32 Sub(VI32 a, VI32 b) { return {wasm_i32x4_sub(a.r, b.r)}; }
inline VU32 Sub(VU32 a, VU32 b) { return {wasm_i32x4_sub(a.r, b.r)}; }
inline VI16 Sub(VI16 a, VI16 b) { return {wasm_i16x8_sub(a.r, b.r)}; }
inline VU16 Sub(VU16 a, VU16 b) { return {wasm_i16x8_sub(a.r, b.r)}; }
inline VI8 Sub(VI8 a, VI8 b) { return {wasm_i8x16_sub(a.r, b.r)}; }
inline VU8 Sub(VU8 a, VU8 b) { return {wasm_i8x16_sub(a.r, b.r)}; }
inline VF32 Mul(VF32 a, VF32 b) { return {wasm_f32x4_mul(a.r, b.r)}; }
inline VI32 Mul(VI32 a, VI32 b) { return {wasm_i32x4_mul(a.r, b.r)}; }
inline VU32 Mul(VU32 a, VU32 b) { return {wasm_i32x4_mul(a.r, b.r)}; }
inline VI16 Mul(VI16 a, VI16 b) { return {wasm_i16x8_mul(a.r, b.r)}; }
inline VU16 Mul(VU16 a, VU16 b) { return {wasm_i16x8_mul(a.r, b.r)}; }
inline VF32 Div(VF32 a, VF32 b) { return {wasm_f32x4_div(a.r, b.r)}; }
inline VF32 Sqrt(VF32 a) { return {wasm_f32x4_sqrt(a.r)}; }
inline VF32 Neg(VF32 a) { return {wasm_f32x4_neg(a.r)}; }
inline VF32 Abs(VF32 a) { return {wasm_f32x4_abs(a.r)}; }
inline VI16 AddSat(VI16 a, VI16 b) { return {wasm_i16x8_add_sat(a.r, b.r)}; }
inline VU16 AddSat(VU16 a, VU16 b) { return {wasm_u16x8_add_sat(a.r, b.r)}; }
inline VI8 AddSat(VI8 a, VI8 b) { return {wasm_i8x16_add_sat(a.r, b.r)}; }
inline VU8 AddSat(VU8 a, VU8 b) { return {wasm_u8x16_add_sat(a.r, b.r)}; }
inline VI16 SubSat(VI16 a, VI16 b) { return {wasm_i16x8_sub_sat(a.r, b.r)}; }
inline VU16 SubSat(VU16 a, VU16 b) { return {wasm_u16x8_sub_sat(a.r, b.r)}; }
inline VI8 SubSat(VI8 a, VI8 b) { return {wasm_i8x16_sub_sat(a.r, b.r)}; }
inline VU8 SubSat(VU8 a, VU8 b) { return {wasm_u8x16_sub_sat(a.r, b.r)}; }
inline VI32 Min(VI32 a, VI32 b) { return {wasm_i32x4_min(a.r, b.r)}; }
inline VU32 Min(VU32 a, VU32 b) { return {wasm_u32x4_min(a.r, b.r)}; }
inline VI16 Min(VI16 a, VI16 b) { return {wasm_i16x8_min(a.r, b.r)}; }
inline VU16 Min(VU16 a, VU16 b) { return {wasm_u16x8_min(a.r, b.r)}; }
inline VI8 Min(VI8 a, VI8 b) { return {wasm_i8x16_min(a.r, b.r)}; }
inline VU8 Min(VU8 a, VU8 b) { return {wasm_u8x16_min(a.r, b.r)}; }
inline VI32 Max(VI32 a, VI32 b) { return {wasm_i32x4_max(a.r, b.r)}; }
inline VU32 Max(VU32 a, VU32 b) { return {wasm_u32x4_max(a.r, b.r)}; }
inline VI16 Max(VI16 a, VI16 b) { return {wasm_i16x8_max(a.r, b.r)}; }
inline VU16 Max(VU16 a, VU16 b) { return {wasm_u16x8_max(a.r, b.r)}; }
inline VI8 Max(VI8 a, VI8 b) { return {wasm_i8x16_max(a.r, b.r)}; }
inline VU8 Max(VU8 a, VU8 b) { return {wasm_u8x16_max(a.r, b.r)}; }
// N.B. wasm f32x4.min/max are specified as IEEE 754-2019 minimum/maximum (NaN
// propagates, -0 < +0) on every engine; pmin/pmax would be the x86-style ones.
inline VF32 MinIeee(VF32 a, VF32 b) { return {wasm_f32x4_min(a.r, b.r)}; }
inline VF32 MaxIeee(VF32 a, VF32 b) { return {wasm_f32x4_max(a.r, b.r)}; }
// pmax(v, lo) = v < lo ? lo : v and pmin(t, hi) = hi < t ? hi : t (NaN and an equal zero
// stay); the ordered mask (v == v) then clears the NaN lanes to +0.
inline VF32 ClampZeroNaN(VF32 v, VF32 lo, VF32 hi) {
  const v128_t t = wasm_f32x4_pmin(wasm_f32x4_pmax(v.r, lo.r), hi.r);
  return {wasm_v128_and(t, wasm_f32x4_eq(v.r, v.r))};
}
// N.B. wasm shifts take the count modulo the lane width; the vocabulary only allows
// constant counts below the lane width, so no target sees a large count.
template <int k, class V>
inline V ShiftLeft(V a) {
  static_assert(sizeof(typename V::Lane) >= 2 && k >= 0 && k < int(8 * sizeof(typename V::Lane)), "ShiftLeft");
  if constexpr (sizeof(typename V::Lane) == 8)
    return V{wasm_i64x2_shl(a.r, k)};
  else if constexpr (sizeof(typename V::Lane) == 2)
    return V{wasm_i16x8_shl(a.r, k)};
  else
    return V{wasm_i32x4_shl(a.r, k)};
}
template <int k, class V>
inline V ShiftRight(V a) {
  using L = typename V::Lane;
  static_assert(sizeof(L) >= 2 && k >= 0 && k < int(8 * sizeof(L)), "ShiftRight");
  static_assert(sizeof(L) < 8 || L(-1) > L(0), "ShiftRight: 64-bit lanes are unsigned");
  if constexpr (sizeof(L) == 8)
    return V{wasm_u64x2_shr(a.r, k)};
  else if constexpr (sizeof(L) == 2) {
    if constexpr (L(-1) < L(0))
      return V{wasm_i16x8_shr(a.r, k)};
    else
      return V{wasm_u16x8_shr(a.r, k)};
  } else {
    if constexpr (L(-1) < L(0))
      return V{wasm_i32x4_shr(a.r, k)};
    else
      return V{wasm_u32x4_shr(a.r, k)};
  }
}

// Rounding and conversions.
inline VF32 RoundEven(VF32 a) { return {wasm_f32x4_nearest(a.r)}; }
inline VF32 Trunc(VF32 a) { return {wasm_f32x4_trunc(a.r)}; }
inline VF32 Floor(VF32 a) { return {wasm_f32x4_floor(a.r)}; }
inline VF32 Ceil(VF32 a) { return {wasm_f32x4_ceil(a.r)}; }
inline VF32 CvtI32ToF32(VI32 a) { return {wasm_f32x4_convert_i32x4(a.r)}; }
// N.B. i32x4.trunc_sat_f32x4_s saturates and maps NaN to 0 by specification.
inline VI32 CvtTruncSatF32ToI32(VF32 a) { return {wasm_i32x4_trunc_sat_f32x4(a.r)}; }
inline VI32 CvtRoundEvenSatF32ToI32(VF32 a) { return {wasm_i32x4_trunc_sat_f32x4(wasm_f32x4_nearest(a.r))}; }

// Widening.
inline VI16 WidenLo(VI8 a) { return {wasm_i16x8_extend_low_i8x16(a.r)}; }
inline VI16 WidenHi(VI8 a) { return {wasm_i16x8_extend_high_i8x16(a.r)}; }
inline VU16 WidenLo(VU8 a) { return {wasm_u16x8_extend_low_u8x16(a.r)}; }
inline VU16 WidenHi(VU8 a) { return {wasm_u16x8_extend_high_u8x16(a.r)}; }
inline VI32 WidenLo(VI16 a) { return {wasm_i32x4_extend_low_i16x8(a.r)}; }
inline VI32 WidenHi(VI16 a) { return {wasm_i32x4_extend_high_i16x8(a.r)}; }
inline VU32 WidenLo(VU16 a) { return {wasm_u32x4_extend_low_u16x8(a.r)}; }
inline VU32 WidenHi(VU16 a) { return {wasm_u32x4_extend_high_u16x8(a.r)}; }

// Narrowing. N.B. wasm's narrow instructions saturate (the u-forms from signed
// sources); truncation is a byte shuffle keeping the low bytes.
inline v128_t LowHalves16(v128_t a, v128_t b) {
  return wasm_i8x16_shuffle(a, b, 0, 1, 4, 5, 8, 9, 12, 13, 16, 17, 20, 21, 24, 25, 28, 29);
}
inline v128_t LowBytes8(v128_t a, v128_t b) {
  return wasm_i8x16_shuffle(a, b, 0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
}
inline VI16 NarrowSatI32ToI16(VI32 a, VI32 b) { return {wasm_i16x8_narrow_i32x4(a.r, b.r)}; }
inline VI16 NarrowTruncI32ToI16(VI32 a, VI32 b) { return {LowHalves16(a.r, b.r)}; }
inline VU16 NarrowSatI32ToU16(VI32 a, VI32 b) { return {wasm_u16x8_narrow_i32x4(a.r, b.r)}; }
inline VU16 NarrowTruncI32ToU16(VI32 a, VI32 b) { return {LowHalves16(a.r, b.r)}; }
inline VU16 NarrowSatU32ToU16(VU32 a, VU32 b) {
  const v128_t m = wasm_i32x4_splat(0xFFFF);
  return {wasm_u16x8_narrow_i32x4(wasm_u32x4_min(a.r, m), wasm_u32x4_min(b.r, m))};
}
inline VU16 NarrowTruncU32ToU16(VU32 a, VU32 b) { return {LowHalves16(a.r, b.r)}; }
inline VI8 NarrowSatI16ToI8(VI16 a, VI16 b) { return {wasm_i8x16_narrow_i16x8(a.r, b.r)}; }
inline VI8 NarrowTruncI16ToI8(VI16 a, VI16 b) { return {LowBytes8(a.r, b.r)}; }
inline VU8 NarrowSatI16ToU8(VI16 a, VI16 b) { return {wasm_u8x16_narrow_i16x8(a.r, b.r)}; }
inline VU8 NarrowTruncI16ToU8(VI16 a, VI16 b) { return {LowBytes8(a.r, b.r)}; }
inline VU8 NarrowSatU16ToU8(VU16 a, VU16 b) {
  const v128_t m = wasm_i16x8_splat(0xFF);
  return {wasm_u8x16_narrow_i16x8(wasm_u16x8_min(a.r, m), wasm_u16x8_min(b.r, m))};
}
inline VU8 NarrowTruncU16ToU8(VU16 a, VU16 b) { return {LowBytes8(a.r, b.r)}; }

// Integer products. N.B. i32x4.dot_i16x8_s wraps, as defined.
inline VI32 MulAddPairsI16(VI16 a, VI16 b) { return {wasm_i32x4_dot_i16x8(a.r, b.r)}; }
inline VI32 DotI8x4Acc(VI32 acc, VI8 a, VI8 b) {
  const v128_t lo = wasm_i32x4_dot_i16x8(WidenLo(a).r, WidenLo(b).r);  // pair sums 0..3
  const v128_t hi = wasm_i32x4_dot_i16x8(WidenHi(a).r, WidenHi(b).r);  // pair sums 4..7
  const v128_t s = wasm_i32x4_add(wasm_i32x4_shuffle(lo, hi, 0, 2, 4, 6), wasm_i32x4_shuffle(lo, hi, 1, 3, 5, 7));
  return {wasm_i32x4_add(acc.r, s)};
}

// Horizontal: (a0 + a2) + (a1 + a3).
// Data movement: 4x4 by two rounds of lane shuffles.
inline void TransposeSquare(VF32* v) {
  const v128_t t0 = wasm_i32x4_shuffle(v[0].r, v[1].r, 0, 4, 1, 5), t1 = wasm_i32x4_shuffle(v[0].r, v[1].r, 2, 6, 3, 7);
  const v128_t t2 = wasm_i32x4_shuffle(v[2].r, v[3].r, 0, 4, 1, 5), t3 = wasm_i32x4_shuffle(v[2].r, v[3].r, 2, 6, 3, 7);
  v[0].r = wasm_i32x4_shuffle(t0, t2, 0, 1, 4, 5);
  v[1].r = wasm_i32x4_shuffle(t0, t2, 2, 3, 6, 7);
  v[2].r = wasm_i32x4_shuffle(t1, t3, 0, 1, 4, 5);
  v[3].r = wasm_i32x4_shuffle(t1, t3, 2, 3, 6, 7);
}

inline float ReduceSumTree(VF32 a) {
  const v128_t s = wasm_f32x4_add(a.r, wasm_i32x4_shuffle(a.r, a.r, 2, 3, 2, 3));
  return wasm_f32x4_extract_lane(s, 0) + wasm_f32x4_extract_lane(s, 1);
}

// Binary64 lanes (VF64, VU64): the ops that the binary64 steps of the functions need.
inline VF64 Eq(VF64 a, VF64 b) { return {wasm_f64x2_eq(a.r, b.r)}; }
inline VF64 Ne(VF64 a, VF64 b) { return {wasm_f64x2_ne(a.r, b.r)}; }
inline VF64 Lt(VF64 a, VF64 b) { return {wasm_f64x2_lt(a.r, b.r)}; }
inline VF64 Le(VF64 a, VF64 b) { return {wasm_f64x2_le(a.r, b.r)}; }
inline VF64 Gt(VF64 a, VF64 b) { return {wasm_f64x2_gt(a.r, b.r)}; }
inline VF64 Ge(VF64 a, VF64 b) { return {wasm_f64x2_ge(a.r, b.r)}; }
inline VF64 Add(VF64 a, VF64 b) { return {wasm_f64x2_add(a.r, b.r)}; }
inline VF64 Sub(VF64 a, VF64 b) { return {wasm_f64x2_sub(a.r, b.r)}; }
inline VF64 Mul(VF64 a, VF64 b) { return {wasm_f64x2_mul(a.r, b.r)}; }
inline VF64 Div(VF64 a, VF64 b) { return {wasm_f64x2_div(a.r, b.r)}; }
inline VF64 Neg(VF64 a) { return {wasm_f64x2_neg(a.r)}; }
inline VF64 Abs(VF64 a) { return {wasm_f64x2_abs(a.r)}; }
inline VU64 Add(VU64 a, VU64 b) { return {wasm_i64x2_add(a.r, b.r)}; }
inline VU64 Sub(VU64 a, VU64 b) { return {wasm_i64x2_sub(a.r, b.r)}; }
inline VF64 Trunc(VF64 a) { return {wasm_f64x2_trunc(a.r)}; }
inline VF64 Floor(VF64 a) { return {wasm_f64x2_floor(a.r)}; }
inline VF64 WidenLo(VF32 a) { return {wasm_f64x2_promote_low_f32x4(a.r)}; }
inline VF64 WidenHi(VF32 a) { return {wasm_f64x2_promote_low_f32x4(wasm_i32x4_shuffle(a.r, a.r, 2, 3, 2, 3))}; }
// f32x4.demote_f64x2_zero rounds to nearest even (wasm has no other rounding mode).
inline VF32 NarrowRoundF64ToF32(VF64 a, VF64 b) {
  return {wasm_i32x4_shuffle(wasm_f32x4_demote_f64x2_zero(a.r), wasm_f32x4_demote_f64x2_zero(b.r), 0, 1, 4, 5)};
}

}  // namespace ONEMODEL_NS
}  // namespace onemodel::impl
