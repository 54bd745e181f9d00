// Storage that starts on a cache line (64 bytes), so that whole-vector loads and stores
// of up to 512 bits at multiples of their width never straddle two lines: kernel scratch
// (ScratchVector) and tensor buffers (core/tensor.cpp). malloc's storage is 16-byte
// aligned: a kernel's scratch then fell on a line or off it by the process's heap state
// (Zen 5: mobilenet_v3_large's depthwise layers 1.3x slower in node's process than in the
// CLI's), and glibc hands out large blocks 16 bytes past a page. The storage is plain
// operator new's, with the original pointer kept just before the aligned address (the
// windows row's heap crash once blamed on the aligned operator new was MinGW's
// thread_local destructors running on freed TLS: core/per_thread.h).
#pragma once
#include <cstddef>
#include <cstdint>
#include <new>
#include <vector>

namespace onemodel::impl {

constexpr size_t kCacheLine = 64;
// bytes of storage on a cache line, or null (nothrow) when the system has none.
inline void* CacheLineAlloc(size_t bytes, const std::nothrow_t&) noexcept {
  if (bytes > size_t(-1) - kCacheLine - sizeof(void*)) return nullptr;
  void* raw = ::operator new(bytes + kCacheLine + sizeof(void*), std::nothrow);
  if (!raw) return nullptr;
  const uintptr_t a = (reinterpret_cast<uintptr_t>(raw) + sizeof(void*) + kCacheLine - 1) & ~uintptr_t(kCacheLine - 1);
  reinterpret_cast<void**>(a)[-1] = raw;
  return reinterpret_cast<void*>(a);
}
inline void* CacheLineAlloc(size_t bytes) {
  void* p = CacheLineAlloc(bytes, std::nothrow);
  if (!p) throw std::bad_alloc();
  return p;
}
inline void CacheLineFree(void* p) noexcept {
  if (p) ::operator delete(reinterpret_cast<void**>(p)[-1]);
}

template <class T>
struct CacheLineAllocator {
  using value_type = T;
  CacheLineAllocator() = default;
  template <class U>
  CacheLineAllocator(const CacheLineAllocator<U>&) noexcept {}
  T* allocate(size_t n) {
    if (n > (size_t(-1) - 2 * kCacheLine) / sizeof(T)) throw std::bad_alloc();
    return static_cast<T*>(CacheLineAlloc(n * sizeof(T)));
  }
  void deallocate(T* p, size_t) noexcept { CacheLineFree(p); }
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
