// The NEON backend (AArch64 Advanced SIMD; the neondot target adds the dot-product
// extension, used by DotI8x4Acc).
#pragma once

#include <arm_neon.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace onemodel::impl {
namespace ONEMODEL_NS {

struct VF32 {
  using Lane = float;
  static constexpr size_t kLanes = 4;
  float32x4_t r;
};
struct VI32 {
  using Lane = int32_t;
  static constexpr size_t kLanes = 4;
  int32x4_t r;
};
struct VU32 {
  using Lane = uint32_t;
  static constexpr size_t kLanes = 4;
  uint32x4_t r;
};
struct VI16 {
  using Lane = int16_t;
  static constexpr size_t kLanes = 8;
  int16x8_t r;
};
struct VU16 {
  using Lane = uint16_t;
  static constexpr size_t kLanes = 8;
  uint16x8_t r;
};
struct VI8 {
  using Lane = int8_t;
  static constexpr size_t kLanes = 16;
  int8x16_t r;
};
struct VU8 {
  using Lane = uint8_t;
  static constexpr size_t kLanes = 16;
  uint8x16_t r;
};
struct VF64 {
  using Lane = double;
  static constexpr size_t kLanes = 2;
  float64x2_t r;
};
struct VU64 {
  using Lane = uint64_t;
  static constexpr size_t kLanes = 2;
  uint64x2_t r;
};

namespace detail {
inline uint8x16_t vreinterpretq_u8(float32x4_t x) { return vreinterpretq_u8_f32(x); }
inline uint8x16_t vreinterpretq_u8(int32x4_t x) { return vreinterpretq_u8_s32(x); }
inline uint8x16_t vreinterpretq_u8(uint32x4_t x) { return vreinterpretq_u8_u32(x); }
inline uint8x16_t vreinterpretq_u8(int16x8_t x) { return vreinterpretq_u8_s16(x); }
inline uint8x16_t vreinterpretq_u8(uint16x8_t x) { return vreinterpretq_u8_u16(x); }
inline uint8x16_t vreinterpretq_u8(int8x16_t x) { return vreinterpretq_u8_s8(x); }
inline uint8x16_t vreinterpretq_u8(uint8x16_t x) { return x; }
inline uint8x16_t vreinterpretq_u8(float64x2_t x) { return vreinterpretq_u8_f64(x); }
inline uint8x16_t vreinterpretq_u8(uint64x2_t x) { return vreinterpretq_u8_u64(x); }
template <class V>
inline uint8x16_t B(V a) {
  return vreinterpretq_u8(a.r);
}
template <class V>
inline V FromB(uint8x16_t x) {
  if constexpr (std::is_same_v<V, VF32>)
    return V{vreinterpretq_f32_u8(x)};
  else if constexpr (std::is_same_v<V, VI32>)
    return V{vreinterpretq_s32_u8(x)};
  else if constexpr (std::is_same_v<V, VU32>)
    return V{vreinterpretq_u32_u8(x)};
  else if constexpr (std::is_same_v<V, VI16>)
    return V{vreinterpretq_s16_u8(x)};
  else if constexpr (std::is_same_v<V, VU16>)
    return V{vreinterpretq_u16_u8(x)};
  else if constexpr (std::is_same_v<V, VI8>)
    return V{vreinterpretq_s8_u8(x)};
  else if constexpr (std::is_same_v<V, VF64>)
    return V{vreinterpretq_f64_u8(x)};
  else if constexpr (std::is_same_v<V, VU64>)
    return V{vreinterpretq_u64_u8(x)};
  else
    return V{x};
}
}  // namespace detail

// Memory.
template <class V>
inline V Load(const typename V::Lane* p) {
  return detail::FromB<V>(vld1q_u8(reinterpret_cast<const uint8_t*>(p)));
}
template <class V>
inline void Store(V a, typename V::Lane* p) {
  vst1q_u8(reinterpret_cast<uint8_t*>(p), detail::B(a));
}

// Initialisation.
template <class V>
inline V Set(typename V::Lane x) {
  if constexpr (std::is_same_v<V, VF32>)
    return V{vdupq_n_f32(x)};
  else if constexpr (std::is_same_v<V, VI32>)
    return V{vdupq_n_s32(x)};
  else if constexpr (std::is_same_v<V, VU32>)
    return V{vdupq_n_u32(x)};
  else if constexpr (std::is_same_v<V, VI16>)
    return V{vdupq_n_s16(x)};
  else if constexpr (std::is_same_v<V, VU16>)
    return V{vdupq_n_u16(x)};
  else if constexpr (std::is_same_v<V, VI8>)
    return V{vdupq_n_s8(x)};
  else if constexpr (std::is_same_v<V, VF64>)
    return V{vdupq_n_f64(x)};
  else if constexpr (std::is_same_v<V, VU64>)
    return V{vdupq_n_u64(x)};
  else
    return V{vdupq_n_u8(x)};
}
template <class V>
inline V Zero() {
  return detail::FromB<V>(vdupq_n_u8(0));
}
template <class VTo, class VFrom>
inline VTo BitCast(VFrom a) {
  return detail::FromB<VTo>(detail::B(a));
}

// Bitwise.
template <class V>
inline V And(V a, V b) {
  return detail::FromB<V>(vandq_u8(detail::B(a), detail::B(b)));
}
template <class V>
inline V Or(V a, V b) {
  return detail::FromB<V>(vorrq_u8(detail::B(a), detail::B(b)));
}
template <class V>
inline V Xor(V a, V b) {
  return detail::FromB<V>(veorq_u8(detail::B(a), detail::B(b)));
}
template <class V>
inline V AndNot(V a, V b) {
  return detail::FromB<V>(vbicq_u8(detail::B(b), detail::B(a)));
}
template <class V>
inline V IfThenElse(V m, V y, V n) {
  return detail::FromB<V>(vbslq_u8(detail::B(m), detail::B(y), detail::B(n)));
}

// Comparisons (NEON compares give unsigned masks; reinterpret to the lane type).
inline VF32 Eq(VF32 a, VF32 b) { return {vreinterpretq_f32_u32(vceqq_f32(a.r, b.r))}; }
inline VF32 Ne(VF32 a, VF32 b) { return {vreinterpretq_f32_u32(vmvnq_u32(vceqq_f32(a.r, b.r)))}; }
inline VF32 Lt(VF32 a, VF32 b) { return {vreinterpretq_f32_u32(vcltq_f32(a.r, b.r))}; }
inline VF32 Le(VF32 a, VF32 b) { return {vreinterpretq_f32_u32(vcleq_f32(a.r, b.r))}; }
inline VF32 Gt(VF32 a, VF32 b) { return {vreinterpretq_f32_u32(vcgtq_f32(a.r, b.r))}; }
inline bool AllTrue(VF32 m) { return vminvq_u32(vreinterpretq_u32_f32(m.r)) == 0xFFFFFFFFu; }
inline VF32 EvenLanes(VF32 a, VF32 b) { return {vuzp1q_f32(a.r, b.r)}; }
inline VF32 Ge(VF32 a, VF32 b) { return {vreinterpretq_f32_u32(vcgeq_f32(a.r, b.r))}; }
inline VI32 Eq(VI32 a, VI32 b) { return {vreinterpretq_s32_u32(vceqq_s32(a.r, b.r))}; }
inline VU32 Eq(VU32 a, VU32 b) { return {vceqq_u32(a.r, b.r)}; }
inline VI16 Eq(VI16 a, VI16 b) { return {vreinterpretq_s16_u16(vceqq_s16(a.r, b.r))}; }
inline VU16 Eq(VU16 a, VU16 b) { return {vceqq_u16(a.r, b.r)}; }
inline VI8 Eq(VI8 a, VI8 b) { return {vreinterpretq_s8_u8(vceqq_s8(a.r, b.r))}; }
inline VU8 Eq(VU8 a, VU8 b) { return {vceqq_u8(a.r, b.r)}; }
inline VI32 Gt(VI32 a, VI32 b) { return {vreinterpretq_s32_u32(vcgtq_s32(a.r, b.r))}; }
inline VU32 Gt(VU32 a, VU32 b) { return {vcgtq_u32(a.r, b.r)}; }
inline VI16 Gt(VI16 a, VI16 b) { return {vreinterpretq_s16_u16(vcgtq_s16(a.r, b.r))}; }
inline VU16 Gt(VU16 a, VU16 b) { return {vcgtq_u16(a.r, b.r)}; }
inline VI8 Gt(VI8 a, VI8 b) { return {vreinterpretq_s8_u8(vcgtq_s8(a.r, b.r))}; }
inline VU8 Gt(VU8 a, VU8 b) { return {vcgtq_u8(a.r, b.r)}; }
template <class V>
inline V Lt(V a, V b) {
  return Gt(b, a);
}

// Arithmetic.
#define OM_NEON_ALL(name, op)                                        \
  inline VF32 name(VF32 a, VF32 b) { return {op##q_f32(a.r, b.r)}; } \
  inline VI32 name(VI32 a, VI32 b) { return {op##q_s32(a.r, b.r)}; } \
  inline VU32 name(VU32 a, VU32 b) { return {op##q_u32(a.r, b.r)}; } \
  inline VI16 name(VI16 a, VI16 b) { return {op##q_s16(a.r, b.r)}; } \
  inline VU16 name(VU16 a, VU16 b) { return {op##q_u16(a.r, b.r)}; }
OM_NEON_ALL(Add, vadd)
OM_NEON_ALL(Sub, vsub)
OM_NEON_ALL(Mul, vmul)
#undef OM_NEON_ALL
inline VI8 Add(VI8 a, VI8 b) { return {vaddq_s8(a.r, b.r)}; }
inline VU8 Add(VU8 a, VU8 b) { return {vaddq_u8(a.r, b.r)}; }
inline VI8 Sub(VI8 a, VI8 b) { return {vsubq_s8(a.r, b.r)}; }
inline VU8 Sub(VU8 a, VU8 b) { return {vsubq_u8(a.r, b.r)}; }
inline VF32 Div(VF32 a, VF32 b) { return {vdivq_f32(a.r, b.r)}; }
inline VF32 Sqrt(VF32 a) { return {vsqrtq_f32(a.r)}; }
inline VF32 Neg(VF32 a) { return {vnegq_f32(a.r)}; }
inline VF32 Abs(VF32 a) { return {vabsq_f32(a.r)}; }
inline VI16 AddSat(VI16 a, VI16 b) { return {vqaddq_s16(a.r, b.r)}; }
inline VU16 AddSat(VU16 a, VU16 b) { return {vqaddq_u16(a.r, b.r)}; }
inline VI8 AddSat(VI8 a, VI8 b) { return {vqaddq_s8(a.r, b.r)}; }
inline VU8 AddSat(VU8 a, VU8 b) { return {vqaddq_u8(a.r, b.r)}; }
inline VI16 SubSat(VI16 a, VI16 b) { return {vqsubq_s16(a.r, b.r)}; }
inline VU16 SubSat(VU16 a, VU16 b) { return {vqsubq_u16(a.r, b.r)}; }
inline VI8 SubSat(VI8 a, VI8 b) { return {vqsubq_s8(a.r, b.r)}; }
inline VU8 SubSat(VU8 a, VU8 b) { return {vqsubq_u8(a.r, b.r)}; }
#define OM_NEON_INT(name, op)                                        \
  inline VI32 name(VI32 a, VI32 b) { return {op##q_s32(a.r, b.r)}; } \
  inline VU32 name(VU32 a, VU32 b) { return {op##q_u32(a.r, b.r)}; } \
  inline VI16 name(VI16 a, VI16 b) { return {op##q_s16(a.r, b.r)}; } \
  inline VU16 name(VU16 a, VU16 b) { return {op##q_u16(a.r, b.r)}; } \
  inline VI8 name(VI8 a, VI8 b) { return {op##q_s8(a.r, b.r)}; }     \
  inline VU8 name(VU8 a, VU8 b) { return {op##q_u8(a.r, b.r)}; }
OM_NEON_INT(Min, vmin)
OM_NEON_INT(Max, vmax)
#undef OM_NEON_INT
// N.B. AArch64 FMIN/FMAX already are IEEE 754-2019 minimum/maximum (NaN propagates,
// -0 < +0); FMINNM/FMAXNM (vminnmq) would be minNum and must not be used here.
inline VF32 MinIeee(VF32 a, VF32 b) { return {vminq_f32(a.r, b.r)}; }
inline VF32 MaxIeee(VF32 a, VF32 b) { return {vmaxq_f32(a.r, b.r)}; }
// By compares and selects (FMAX/FMIN would order -0 < +0 and propagate NaN); the
// ordered mask (v == v) then clears the NaN lanes to +0.
inline VF32 ClampZeroNaN(VF32 v, VF32 lo, VF32 hi) {
  const float32x4_t t = vbslq_f32(vcltq_f32(v.r, lo.r), lo.r, v.r);
  const float32x4_t u = vbslq_f32(vcgtq_f32(t, hi.r), hi.r, t);
  return {vreinterpretq_f32_u32(vandq_u32(vreinterpretq_u32_f32(u), vceqq_f32(v.r, v.r)))};
}
template <int k>
inline VI32 ShiftLeft(VI32 a) {
  static_assert(k >= 0 && k < 32, "");
  return {vshlq_n_s32(a.r, k)};
}
template <int k>
inline VU32 ShiftLeft(VU32 a) {
  static_assert(k >= 0 && k < 32, "");
  return {vshlq_n_u32(a.r, k)};
}
template <int k>
inline VI16 ShiftLeft(VI16 a) {
  static_assert(k >= 0 && k < 16, "");
  return {vshlq_n_s16(a.r, k)};
}
template <int k>
inline VU16 ShiftLeft(VU16 a) {
  static_assert(k >= 0 && k < 16, "");
  return {vshlq_n_u16(a.r, k)};
}
// N.B. vshrq_n takes counts 1..bits; a count of 0 is the identity.
template <int k>
inline VI32 ShiftRight(VI32 a) {
  static_assert(k >= 0 && k < 32, "");
  if constexpr (k == 0)
    return a;
  else
    return {vshrq_n_s32(a.r, k)};
}
template <int k>
inline VU32 ShiftRight(VU32 a) {
  static_assert(k >= 0 && k < 32, "");
  if constexpr (k == 0)
    return a;
  else
    return {vshrq_n_u32(a.r, k)};
}
template <int k>
inline VI16 ShiftRight(VI16 a) {
  static_assert(k >= 0 && k < 16, "");
  if constexpr (k == 0)
    return a;
  else
    return {vshrq_n_s16(a.r, k)};
}
template <int k>
inline VU16 ShiftRight(VU16 a) {
  static_assert(k >= 0 && k < 16, "");
  if constexpr (k == 0)
    return a;
  else
    return {vshrq_n_u16(a.r, k)};
}

// Rounding and conversions (AArch64 FRINTN/FRINTZ/FRINTM/FRINTP name their rounding).
inline VF32 RoundEven(VF32 a) { return {vrndnq_f32(a.r)}; }
inline VF32 Trunc(VF32 a) { return {vrndq_f32(a.r)}; }
inline VF32 Floor(VF32 a) { return {vrndmq_f32(a.r)}; }
inline VF32 Ceil(VF32 a) { return {vrndpq_f32(a.r)}; }
// N.B. SCVTF rounds by FPCR, which the session keeps at round-to-nearest-even.
inline VF32 CvtI32ToF32(VI32 a) { return {vcvtq_f32_s32(a.r)}; }
// N.B. FCVTZS/FCVTNS already saturate and map NaN to 0.
inline VI32 CvtTruncSatF32ToI32(VF32 a) { return {vcvtq_s32_f32(a.r)}; }
inline VI32 CvtRoundEvenSatF32ToI32(VF32 a) { return {vcvtnq_s32_f32(a.r)}; }

// Widening.
inline VI16 WidenLo(VI8 a) { return {vmovl_s8(vget_low_s8(a.r))}; }
inline VI16 WidenHi(VI8 a) { return {vmovl_high_s8(a.r)}; }
inline VU16 WidenLo(VU8 a) { return {vmovl_u8(vget_low_u8(a.r))}; }
inline VU16 WidenHi(VU8 a) { return {vmovl_high_u8(a.r)}; }
inline VI32 WidenLo(VI16 a) { return {vmovl_s16(vget_low_s16(a.r))}; }
inline VI32 WidenHi(VI16 a) { return {vmovl_high_s16(a.r)}; }
inline VU32 WidenLo(VU16 a) { return {vmovl_u16(vget_low_u16(a.r))}; }
inline VU32 WidenHi(VU16 a) { return {vmovl_high_u16(a.r)}; }

// Narrowing. N.B. NEON has both policies: vmovn truncates, vqmovn saturates within the
// signedness, vqmovun saturates signed to unsigned.
inline VI16 NarrowSatI32ToI16(VI32 a, VI32 b) { return {vcombine_s16(vqmovn_s32(a.r), vqmovn_s32(b.r))}; }
inline VI16 NarrowTruncI32ToI16(VI32 a, VI32 b) { return {vcombine_s16(vmovn_s32(a.r), vmovn_s32(b.r))}; }
inline VU16 NarrowSatI32ToU16(VI32 a, VI32 b) { return {vcombine_u16(vqmovun_s32(a.r), vqmovun_s32(b.r))}; }
inline VU16 NarrowTruncI32ToU16(VI32 a, VI32 b) {
  return {vcombine_u16(vmovn_u32(vreinterpretq_u32_s32(a.r)), vmovn_u32(vreinterpretq_u32_s32(b.r)))};
}
inline VU16 NarrowSatU32ToU16(VU32 a, VU32 b) { return {vcombine_u16(vqmovn_u32(a.r), vqmovn_u32(b.r))}; }
inline VU16 NarrowTruncU32ToU16(VU32 a, VU32 b) { return {vcombine_u16(vmovn_u32(a.r), vmovn_u32(b.r))}; }
inline VI8 NarrowSatI16ToI8(VI16 a, VI16 b) { return {vcombine_s8(vqmovn_s16(a.r), vqmovn_s16(b.r))}; }
inline VI8 NarrowTruncI16ToI8(VI16 a, VI16 b) { return {vcombine_s8(vmovn_s16(a.r), vmovn_s16(b.r))}; }
inline VU8 NarrowSatI16ToU8(VI16 a, VI16 b) { return {vcombine_u8(vqmovun_s16(a.r), vqmovun_s16(b.r))}; }
inline VU8 NarrowTruncI16ToU8(VI16 a, VI16 b) {
  return {vcombine_u8(vmovn_u16(vreinterpretq_u16_s16(a.r)), vmovn_u16(vreinterpretq_u16_s16(b.r)))};
}
inline VU8 NarrowSatU16ToU8(VU16 a, VU16 b) { return {vcombine_u8(vqmovn_u16(a.r), vqmovn_u16(b.r))}; }
inline VU8 NarrowTruncU16ToU8(VU16 a, VU16 b) { return {vcombine_u8(vmovn_u16(a.r), vmovn_u16(b.r))}; }

// Integer products.
inline VI32 MulAddPairsI16(VI16 a, VI16 b) {
  const int32x4_t lo = vmull_s16(vget_low_s16(a.r), vget_low_s16(b.r));
  const int32x4_t hi = vmull_high_s16(a.r, b.r);
  return {vpaddq_s32(lo, hi)};  // wraps, as defined
}
inline VI32 DotI8x4Acc(VI32 acc, VI8 a, VI8 b) {
#if defined(ONEMODEL_TARGET_NEONDOT)
  return {vdotq_s32(acc.r, a.r, b.r)};
#else
  const int16x8_t lo = vmull_s8(vget_low_s8(a.r), vget_low_s8(b.r));  // exact in i16
  const int16x8_t hi = vmull_high_s8(a.r, b.r);
  return {vaddq_s32(acc.r, vpaddq_s32(vpaddlq_s16(lo), vpaddlq_s16(hi)))};
#endif
}

// Horizontal: (a0 + a2) + (a1 + a3).
// Data movement: 4x4 by two transposes of pairs and recombined halves.
inline void TransposeSquare(VF32* v) {
  const float32x4x2_t p = vtrnq_f32(v[0].r, v[1].r), q = vtrnq_f32(v[2].r, v[3].r);
  v[0].r = vcombine_f32(vget_low_f32(p.val[0]), vget_low_f32(q.val[0]));
  v[1].r = vcombine_f32(vget_low_f32(p.val[1]), vget_low_f32(q.val[1]));
  v[2].r = vcombine_f32(vget_high_f32(p.val[0]), vget_high_f32(q.val[0]));
  v[3].r = vcombine_f32(vget_high_f32(p.val[1]), vget_high_f32(q.val[1]));
}

inline float ReduceSumTree(VF32 a) {
  const float32x2_t s = vadd_f32(vget_low_f32(a.r), vget_high_f32(a.r));
  return vget_lane_f32(s, 0) + vget_lane_f32(s, 1);
}

// Binary64 lanes (VF64, VU64): the ops that the binary64 steps of the functions need.
inline VF64 Eq(VF64 a, VF64 b) { return {vreinterpretq_f64_u64(vceqq_f64(a.r, b.r))}; }
inline VF64 Ne(VF64 a, VF64 b) {
  return {vreinterpretq_f64_u32(vmvnq_u32(vreinterpretq_u32_u64(vceqq_f64(a.r, b.r))))};
}
inline VF64 Lt(VF64 a, VF64 b) { return {vreinterpretq_f64_u64(vcltq_f64(a.r, b.r))}; }
inline VF64 Le(VF64 a, VF64 b) { return {vreinterpretq_f64_u64(vcleq_f64(a.r, b.r))}; }
inline VF64 Gt(VF64 a, VF64 b) { return {vreinterpretq_f64_u64(vcgtq_f64(a.r, b.r))}; }
inline VF64 Ge(VF64 a, VF64 b) { return {vreinterpretq_f64_u64(vcgeq_f64(a.r, b.r))}; }
inline VF64 Add(VF64 a, VF64 b) { return {vaddq_f64(a.r, b.r)}; }
inline VF64 Sub(VF64 a, VF64 b) { return {vsubq_f64(a.r, b.r)}; }
inline VF64 Mul(VF64 a, VF64 b) { return {vmulq_f64(a.r, b.r)}; }
inline VF64 Div(VF64 a, VF64 b) { return {vdivq_f64(a.r, b.r)}; }
inline VF64 Neg(VF64 a) { return {vnegq_f64(a.r)}; }
inline VF64 Abs(VF64 a) { return {vabsq_f64(a.r)}; }
inline VU64 Add(VU64 a, VU64 b) { return {vaddq_u64(a.r, b.r)}; }
inline VU64 Sub(VU64 a, VU64 b) { return {vsubq_u64(a.r, b.r)}; }
template <int k>
inline VU64 ShiftLeft(VU64 a) {
  static_assert(k >= 0 && k < 64, "");
  return {vshlq_n_u64(a.r, k)};
}
template <int k>
inline VU64 ShiftRight(VU64 a) {
  static_assert(k >= 0 && k < 64, "");
  if constexpr (k == 0)
    return a;
  else
    return {vshrq_n_u64(a.r, k)};
}
inline VF64 Trunc(VF64 a) { return {vrndq_f64(a.r)}; }
inline VF64 Floor(VF64 a) { return {vrndmq_f64(a.r)}; }
inline VF64 WidenLo(VF32 a) { return {vcvt_f64_f32(vget_low_f32(a.r))}; }
inline VF64 WidenHi(VF32 a) { return {vcvt_high_f64_f32(a.r)}; }
// N.B. FCVTN rounds by FPCR (round to nearest even in a session).
inline VF32 NarrowRoundF64ToF32(VF64 a, VF64 b) { return {vcvt_high_f32_f64(vcvt_f32_f64(a.r), b.r)}; }

}  // namespace ONEMODEL_NS
}  // namespace onemodel::impl
