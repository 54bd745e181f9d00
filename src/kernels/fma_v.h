// The target's fused multiply-add on vectors, for fast mode's twins only (the vector
// vocabulary, simd/simd.h, has none: exact-contract section 2). Defined where the target
// has one (ONEMODEL_TARGET_HAS_FMA); tools/check_fma.sh checks that only the twins use it.
#pragma once

#include "simd/simd.h"

namespace onemodel::impl {
namespace ONEMODEL_NS {

#if defined(ONEMODEL_TARGET_HAS_FMA)
// a * b + c with one rounding.
inline VF32 FmaMulAdd(VF32 a, VF32 b, VF32 c) {
#if defined(ONEMODEL_TARGET_AVX512)
  return {_mm512_fmadd_ps(a.r, b.r, c.r)};
#elif defined(ONEMODEL_TARGET_AVX2)
  return {_mm256_fmadd_ps(a.r, b.r, c.r)};
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
#else
  return {vfmsq_f32(c.r, a.r, b.r)};
#endif
}
#endif

}  // namespace ONEMODEL_NS
}  // namespace onemodel::impl
