// Bit-level views of floats (std::bit_cast where the standard library has it, else the
// compiler builtin it is made of: Emscripten's libc++ lacks it), shared by every layer.
#pragma once

#include <bit>
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

}  // namespace onemodel::impl
