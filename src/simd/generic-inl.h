// Ops written once on top of each backend's primitives (included last by simd.h).
#pragma once

#include <type_traits>

namespace onemodel::impl {
namespace ONEMODEL_NS {

// Returns the lane count of V on this target.
template <class V>
constexpr size_t Lanes() {
  return V::kLanes;
}

// Returns p[0..n) then `fill` in the remaining lanes; reads only p[0..n).
template <class V>
inline V LoadN(const typename V::Lane* p, size_t n, typename V::Lane fill) {
#if defined(ONEMODEL_SIMD_MASKED_F32)
  if constexpr (std::is_same_v<V, VF32>) return MaskedLoadF32(p, n, fill);
#endif
  typename V::Lane buf[V::kLanes];
  for (size_t i = 0; i < V::kLanes; ++i) buf[i] = i < n ? p[i] : fill;
  return Load<V>(buf);
}

// Writes lanes [0, n) of a to p; touches nothing past p[n-1].
template <class V>
inline void StoreN(V a, typename V::Lane* p, size_t n) {
#if defined(ONEMODEL_SIMD_MASKED_F32)
  if constexpr (std::is_same_v<V, VF32>) {
    MaskedStoreF32(a, p, n);
    return;
  }
#endif
  typename V::Lane buf[V::kLanes];
  Store(a, buf);
  for (size_t i = 0; i < n && i < V::kLanes; ++i) p[i] = buf[i];
}

#if defined(ONEMODEL_SIMD_NATIVE_DOT_U8S8)
inline constexpr bool kNativeDotU8S8 = true;
#else
inline constexpr bool kNativeDotU8S8 = false;
// a read as int8 after flipping its top bit is a - 128, so sum a*b is the signed dot
// product of (a ^ 0x80) and b plus 128 * sum b (both exact, int32 sums wrapping).
inline VI32 DotU8S8x4Acc(VI32 acc, VU8 a, VI8 b) {
  const VI8 centred = BitCast<VI8>(Xor(a, Set<VU8>(uint8_t(0x80))));
  const VI32 bsum = DotI8x4Acc(Zero<VI32>(), Set<VI8>(int8_t(1)), b);
  return Add(DotI8x4Acc(acc, centred, b), ShiftLeft<7>(bsum));
}
#endif

}  // namespace ONEMODEL_NS
}  // namespace onemodel::impl
