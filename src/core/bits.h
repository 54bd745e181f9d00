// Bit-level views of floats (std::bit_cast where the standard library has it, else the
// compiler builtin it is made of: Emscripten's libc++ lacks it), shared by every layer.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>

namespace onemodel::impl {

template <class To, class From>
constexpr To BitCast(const From& v) {
  static_assert(sizeof(To) == sizeof(From), "BitCast between types of one size");
#if defined(__cpp_lib_bit_cast)
  return std::bit_cast<To>(v);
#else
  return __builtin_bit_cast(To, v);
#endif
}

constexpr uint32_t F2U(float f) { return BitCast<uint32_t>(f); }
constexpr float U2F(uint32_t u) { return BitCast<float>(u); }
constexpr uint64_t D2U(double d) { return BitCast<uint64_t>(d); }
constexpr double U2D(uint64_t u) { return BitCast<double>(u); }
constexpr bool IsNaNf(float f) { return (F2U(f) & 0x7FFFFFFFu) > 0x7F800000u; }
constexpr bool IsNaNd(double d) { return d != d; }

// Byte order. Tensors in memory are in the host's order; ONNX raw_data and external data,
// .npy files and the golden hash are little-endian, so a big-endian host (s390x) swaps at
// those edges and nowhere else (docs/exact-mode.md, "Byte order").
inline constexpr bool kLittleEndian = __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__;

// Reverses the bytes of each of `count` elements of `unit` bytes (1, 2, 4 or 8) in place.
inline void SwapBytesInPlace(void* p, size_t count, size_t unit) {
  auto* b = static_cast<unsigned char*>(p);
  if (unit < 2) return;
  for (size_t i = 0; i < count; ++i, b += unit) {
    for (size_t lo = 0, hi = unit - 1; lo < hi; ++lo, --hi) {
      const unsigned char t = b[lo];
      b[lo] = b[hi];
      b[hi] = t;
    }
  }
}

// Little-endian storage to the host's order and back (the same swap; nothing on a
// little-endian host).
inline void LittleEndianToHost(void* p, size_t count, size_t unit) {
  if constexpr (!kLittleEndian) SwapBytesInPlace(p, count, unit);
}

}  // namespace onemodel::impl
