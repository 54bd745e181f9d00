// The target's fused multiply-add on vectors, for fast mode's twins only (the vector
// vocabulary, simd/simd.h, has none: exact-contract section 2). Defined where the target
// has one (ONEMODEL_TARGET_HAS_FMA); tools/check_fma.sh checks that only the twins use it
// (native libraries; on wasm tools/lib/wasm_relaxed.mjs refuses any other relaxed opcode).
#pragma once

#include "simd/simd.h"

namespace onemodel::impl {
namespace ONEMODEL_NS {

#if defined(ONEMODEL_TARGET_HAS_FMA)
#if defined(ONEMODEL_TARGET_WASM128)
typedef float F32x4 __attribute__((vector_size(16)));
#if __has_builtin(__builtin_wasm_relaxed_madd_f32x4)
#define ONEMODEL_WASM_MADD __builtin_wasm_relaxed_madd_f32x4
#define ONEMODEL_WASM_NMADD __builtin_wasm_relaxed_nmadd_f32x4
#else
#define ONEMODEL_WASM_MADD __builtin_wasm_fma_f32x4
#define ONEMODEL_WASM_NMADD __builtin_wasm_fms_f32x4
#endif
#endif

// a * b + c with one rounding.
inline VF32 FmaMulAdd(VF32 a, VF32 b, VF32 c) {
#if defined(ONEMODEL_TARGET_AVX512)
  return {_mm512_fmadd_ps(a.r, b.r, c.r)};
#elif defined(ONEMODEL_TARGET_AVX2)
  return {_mm256_fmadd_ps(a.r, b.r, c.r)};
#elif defined(ONEMODEL_TARGET_WASM128)
  // f32x4.relaxed_madd (clang 14 spells it fma and emits the proposal's provisional
  // opcode: tools/lib/wasm_relaxed.mjs rewrites it after the link).
  return {v128_t(ONEMODEL_WASM_MADD(F32x4(a.r), F32x4(b.r), F32x4(c.r)))};
#else
  return {vfmaq_f32(c.r, a.r, b.r)};
#endif
}

// c - a * b with one rounding.
inline VF32 FmaNegMulAdd(VF32 a, VF32 b, VF32 c) {
#if defined(ONEMODEL_TARGET_AVX512)
  return {_mm512_fnmadd_ps(a.r, b.r, c.r)};
#elif defined(ONEMODEL_TARGET_AVX2)
  return {_mm256_fnmadd_ps(a.r, b.r, c.r)};
#elif defined(ONEMODEL_TARGET_WASM128)
  return {v128_t(ONEMODEL_WASM_NMADD(F32x4(a.r), F32x4(b.r), F32x4(c.r)))};
#else
  return {vfmsq_f32(c.r, a.r, b.r)};
#endif
}
#endif

}  // namespace ONEMODEL_NS
}  // namespace onemodel::impl
