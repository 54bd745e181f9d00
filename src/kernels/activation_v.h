// Vector forms of the activations UnaryF32 applies (ref/elementwise.h), shared
// by UnaryF32 and the GEMM epilogue. Include after simd/simd.h (inside no namespace).
#pragma once

#include "ref/elementwise.h"

namespace onemodel::impl {
namespace ONEMODEL_NS {

// y clamped to [0, 1]; a NaN y stays (both compares are false).
inline VF32 Clamp01V(VF32 y) {
  const VF32 zero = Zero<VF32>(), one = Set<VF32>(1.0f);
  return IfThenElse(Lt(y, zero), zero, IfThenElse(Gt(y, one), one, y));
}
// NaN stays, positive stays, else +0 (the reference: v != v ? v : v > 0 ? v : 0).
inline VF32 ReluV(VF32 v) {
  const VF32 zero = Zero<VF32>();
  return IfThenElse(Ne(v, v), v, IfThenElse(Gt(v, zero), v, zero));
}
// v * clamp01(v / 6 + 1/2), the division by six as a product by the float 1/6.
inline VF32 HardSwishV(VF32 v) { return Mul(v, Clamp01V(Add(Mul(Set<VF32>(1.0f / 6.0f), v), Set<VF32>(0.5f)))); }

// A kernel's activation (Activation) on v.
inline VF32 ActivationV(Activation act, VF32 v) {
  if (act == Activation::kRelu) return ReluV(v);
  if (act == Activation::kHardSwish) return HardSwishV(v);
  return v;
}

}  // namespace ONEMODEL_NS
}  // namespace onemodel::impl
