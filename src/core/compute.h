// The element types' C++ storage and compute types, shared by the oracle's typed loops
// (src/ref) and the operators (src/ops): Half and BF16 storage, dispatch on an element
// type, and the compute type (narrow floats compute in f32, exact-contract section 2)
// with the conversions to it (Widen, exact) and back (Narrow, rounding once).
#pragma once

#include <cstdint>
#include <type_traits>

#include "core/dtype.h"
#include "core/minifloat.h"

namespace onemodel::impl {

struct Half {
  uint16_t bits;
};  // float16 storage
struct BF16 {
  uint16_t bits;
};  // bfloat16 storage

// Calls f.template operator()<T>() with T the C++ storage type of dt, among the
// numeric types (float, double, the integers, bool as uint8_t-like bool, Half, BF16).
// Returns false for other types.
template <class F>
bool DispatchNumeric(DType dt, F&& f) {
  switch (dt) {
    case DType::kFloat: f.template operator()<float>(); return true;
    case DType::kDouble: f.template operator()<double>(); return true;
    case DType::kInt8: f.template operator()<int8_t>(); return true;
    case DType::kInt16: f.template operator()<int16_t>(); return true;
    case DType::kInt32: f.template operator()<int32_t>(); return true;
    case DType::kInt64: f.template operator()<int64_t>(); return true;
    case DType::kUInt8: f.template operator()<uint8_t>(); return true;
    case DType::kUInt16: f.template operator()<uint16_t>(); return true;
    case DType::kUInt32: f.template operator()<uint32_t>(); return true;
    case DType::kUInt64: f.template operator()<uint64_t>(); return true;
    case DType::kBool: f.template operator()<bool>(); return true;
    case DType::kFloat16: f.template operator()<Half>(); return true;
    case DType::kBFloat16: f.template operator()<BF16>(); return true;
    default: return false;
  }
}

// Compute type: narrow floats compute in f32 (exact-contract section 2).
template <class T>
struct Compute {
  using type = T;
};
template <>
struct Compute<Half> {
  using type = float;
};
template <>
struct Compute<BF16> {
  using type = float;
};
template <class T>
inline typename Compute<T>::type Widen(T v) {
  return v;
}
inline float Widen(Half h) { return HalfToF32(h.bits); }
inline float Widen(BF16 h) { return BF16ToF32(h.bits); }
template <class T>
inline T Narrow(typename Compute<T>::type v) {
  return T(v);
}
template <>
inline Half Narrow<Half>(float v) {
  return Half{F32ToHalf(v)};
}
template <>
inline BF16 Narrow<BF16>(float v) {
  return BF16{F32ToBF16(v)};
}
template <class T>
constexpr bool kIsFloat = std::is_floating_point_v<typename Compute<T>::type>;

}  // namespace onemodel::impl
