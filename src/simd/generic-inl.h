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

}  // namespace ONEMODEL_NS
}  // namespace onemodel::impl
