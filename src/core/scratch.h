// Scratch vectors whose storage starts on a cache line (64 bytes), so that whole-vector
// loads and stores of up to 512 bits at multiples of their width never straddle two
// lines. std::vector's storage comes from malloc, 16-byte aligned: a kernel's scratch then
// fell on a line or off it by the process's heap state (Zen 5: mobilenet_v3_large's
// depthwise layers 1.3x slower in node's process than in the CLI's).
#pragma once
#include <cstddef>
#include <new>
#include <vector>

namespace onemodel::impl {

template <class T>
struct CacheLineAllocator {
  using value_type = T;
  static constexpr std::align_val_t kAlign{64};
  CacheLineAllocator() = default;
  template <class U>
  CacheLineAllocator(const CacheLineAllocator<U>&) noexcept {}
  T* allocate(size_t n) { return static_cast<T*>(::operator new(n * sizeof(T), kAlign)); }
  void deallocate(T* p, size_t) noexcept { ::operator delete(p, kAlign); }
  template <class U>
  bool operator==(const CacheLineAllocator<U>&) const noexcept {
    return true;
  }
  template <class U>
  bool operator!=(const CacheLineAllocator<U>&) const noexcept {
    return false;
  }
};

// A per-thread or per-call scratch buffer (grown with resize, reused).
template <class T>
using ScratchVector = std::vector<T, CacheLineAllocator<T>>;

}  // namespace onemodel::impl
