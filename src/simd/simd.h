// The portable vector vocabulary: the only header kernels include for vectors.
//
// Kernels are compiled once per target, with exactly one ONEMODEL_TARGET_<X> macro
// defined and ONEMODEL_NS set to the target's namespace (scalar, sse41, avx2, avx512,
// neon, neondot, wasm128; avxvnni and avx512vnni define their base target's macro too). Every op below exists on every
// target with the same result bits (floating-point NaNs excepted: a NaN result is some NaN, its sign and payload
// unspecified, exact-contract section 5). The vocabulary is defined on 128-bit lane
// groups; AVX2 and AVX-512 implement the same ops on 256/512-bit registers, so lane
// order is always plain index order across the whole vector.
//
// Types (one struct per lane type; V::Lane is the lane type, V::kLanes the lane count):
//   VF32 VI32 VU32 VI16 VU16 VI8 VU8
//   VF64 VU64   binary64 and 64-bit lanes, VF32::kLanes / 2 of them, for the binary64
//               steps of the project's functions (Pow's exp/log, the trigonometric
//               argument reduction). Only the ops marked f64/u64 below exist for them.
//
// There is no FMA, no fast reciprocal and no approximate op in this vocabulary: every
// float op is a correctly rounded IEEE-754 binary32 op (round to nearest even; the
// session guarantees the rounding mode and that FTZ/DAZ are off). Fast mode's GEMM twins
// take their fused multiply-add from the target's own intrinsics (kernels/gemm.cpp Step).
//
// Memory
//   Load<V>(p)            Returns lanes p[0..kLanes) (unaligned).
//   LoadN<V>(p, n, fill)  Returns p[0..n) then `fill` in lanes n..kLanes; reads only n.
//   Store(v, p)           Writes all lanes to p (unaligned).
//   StoreN(v, p, n)       Writes lanes [0, n) to p; touches nothing else.
// Initialisation and lanes
//   Set<V>(x)             Returns x in every lane.        Zero<V>(): all bits zero.
//   BitCast<VTo>(v)       Returns the same bits reinterpreted (same total width).
// Bitwise (every type)
//   And Or Xor            Returns the bitwise op.        AndNot(a, b): returns ~a & b.
//   IfThenElse(m, y, n)   Returns y where m's lane is all ones, n where it is all zeros
//                         (m must come from a comparison: each lane all 0 or all 1).
// Comparisons (return masks of the same type: all ones = true)
//   f32, f64: Eq Lt Le Gt Ge   ordered: false when either operand is NaN.
//        Ne                    unordered: true when either operand is NaN.
//   int: Eq Gt Lt         signed or unsigned by the lane type.
//   AllTrue(m)            f32: true when every lane of the mask m is true (for a branch
//                         that skips work no lane needs; never for a lane's value).
// Arithmetic
//   Add Sub               every type (u64 too); integers wrap (two's complement).
//   Mul                   f32, f64; i32 u32 i16 u16 keep the low bits (wrap).
//   Div Sqrt Neg Abs      f32 (Neg/Abs flip/clear the sign bit, NaNs included);
//                         f64: Div Neg Abs.
//   AddSat SubSat         i8 u8 i16 u16: saturate to the lane type's range.
//   Min Max               integer types, exact.
//   MinIeee MaxIeee       f32, IEEE 754-2019 minimum/maximum: NaN if either operand is
//                         NaN; -0 < +0.
//   ClampZeroNaN(v, lo, hi)  f32: lo where v < lo, hi where v > hi, +0 where v is NaN,
//                         else v itself (a zero keeps its sign). lo <= hi, neither NaN.
//   ShiftLeft<k>          i16 u16 i32 u32 u64, 0 <= k < lane bits (checked at compile time).
//   ShiftRight<k>         arithmetic for signed lanes, logical for unsigned ones.
// Rounding (f32 -> f32, integral results keep the sign of the input: -0.3 -> -0)
//   RoundEven Trunc Floor Ceil    NaN stays NaN, +-inf stay. f64: Trunc Floor.
// Conversions (the policy is in the name)
//   CvtI32ToF32(v)               Returns round-to-nearest-even of each lane.
//   CvtTruncSatF32ToI32(v)       Truncates toward zero; NaN -> 0; saturates to int32.
//   CvtRoundEvenSatF32ToI32(v)   Rounds half to even; NaN -> 0; saturates to int32.
// Widening (exact; Lo takes lanes [0, kLanes/2), Hi the rest)
//   WidenLo WidenHi       VI8->VI16, VU8->VU16, VI16->VI32, VU16->VU32, VF32->VF64.
// Narrowing (two sources, result lanes a[0..n) then b[0..n))
//   NarrowSat<From>To<To>(a, b)   clamps each lane to the destination range.
//   NarrowTrunc<From>To<To>(a, b) keeps the low bits of each lane.
//   pairs: I32ToI16 I32ToU16 U32ToU16 I16ToI8 I16ToU8 U16ToU8.
//   NarrowRoundF64ToF32(a, b)     rounds each lane to nearest even (overflow -> inf,
//                                 subnormal results kept).
// Integer products (wrap in int32)
//   MulAddPairsI16(a, b)  Returns r[j] = a[2j]*b[2j] + a[2j+1]*b[2j+1] as i32.
//   DotI8x4Acc(acc, a, b) Returns acc[j] + sum_{k<4} a[4j+k]*b[4j+k].
//   DotU8S8x4Acc(acc, a, b)  The same with a unsigned (VU8) and b signed (VI8). One
//                         instruction (vpdpbusd, never its saturating vpdpbusds) where
//                         kNativeDotU8S8 is true, a composition of the ops above elsewhere.
// Data movement
//   EvenLanes(a, b)       f32: lanes 0, 2, 4, ... of a, then those of b (the even-indexed
//                         elements of a then b: a stride-2 load from two vectors).
//   TransposeSquare(v)    f32, v an array of kLanes vectors, the rows of a square:
//                         afterwards v[q]'s lane j is the old v[j]'s lane q (bits kept).
// Horizontal
//   ReduceSumTree(v)      f32: the fixed pairwise tree over this vector's lanes:
//                         lane j += lane j+n/2, then j+n/4, ... down to lane 0.
//
// N.B. policies that differ between instruction sets (minps on NaN, cvttps on overflow,
// packs vs movn, blendv's sign-bit test) are hidden behind these names; each backend
// documents its fix-ups where it relies on an ISA-specific behaviour.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#if defined(ONEMODEL_TARGET_SCALAR)
#include "simd/scalar-inl.h"
#elif defined(ONEMODEL_TARGET_SSE41)
#include "simd/sse41-inl.h"
#elif defined(ONEMODEL_TARGET_AVX2)
#include "simd/avx2-inl.h"
#elif defined(ONEMODEL_TARGET_AVX512)
#include "simd/avx512-inl.h"
#elif defined(ONEMODEL_TARGET_NEON) || defined(ONEMODEL_TARGET_NEONDOT)
#include "simd/neon-inl.h"
#elif defined(ONEMODEL_TARGET_WASM128)
#include "simd/wasm128-inl.h"
#else
#error "simd.h: compile with exactly one ONEMODEL_TARGET_<X> defined"
#endif

// ONEMODEL_TARGET_HAS_FMA: the target's CPU has a fused multiply-add (x86 from avx2 up,
// built with -mfma; every arm64; wasm128 built with -mrelaxed-simd, the simd-relaxed
// flavour, whose f32x4.relaxed_madd fuses only where the engine's CPU has an FMA: its
// KernelTable::fma_f32 is a run-time probe, kernels/target.cpp). The vector vocabulary has
// none (exact-contract section 2): only fast mode's twins (kernels/fma_v.h) use it.
#if defined(ONEMODEL_TARGET_AVX512) || defined(ONEMODEL_TARGET_AVX2) || defined(ONEMODEL_TARGET_NEON) || \
    defined(ONEMODEL_TARGET_NEONDOT) || (defined(ONEMODEL_TARGET_WASM128) && defined(__wasm_relaxed_simd__))
#define ONEMODEL_TARGET_HAS_FMA 1
#endif

#include "simd/generic-inl.h"
