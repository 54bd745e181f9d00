// Exact conversions between binary32 and the narrow float formats ONNX uses: float16,
// bfloat16, the float8 family, float4e2m1 and float8e8m0. Widening is exact; narrowing
// rounds once, to nearest even, with subnormals, and the overflow/NaN policy of the
// ONNX Cast operator (saturate attribute). Plain integer code: no libm, same bits on
// every target.
#pragma once

#include <cstdint>

#include "core/dtype.h"

namespace onemodel::impl {

// A narrow binary float format: sign, `ebits` exponent bits, `mbits` mantissa bits.
struct MiniFormat {
  enum class Special { kIeee, kE4M3FN, kFNUZ, kNone };
  int ebits, mbits, bias;
  Special special;  // kIeee: top exponent = inf/NaN; kE4M3FN: S.1111.111 is NaN, no
                    // inf; kFNUZ: 0x80 is the only NaN, no inf, no -0; kNone: no NaN/inf.
};

constexpr MiniFormat kFloat16{5, 10, 15, MiniFormat::Special::kIeee};
constexpr MiniFormat kBFloat16{8, 7, 127, MiniFormat::Special::kIeee};
constexpr MiniFormat kFloat8E4M3FN{4, 3, 7, MiniFormat::Special::kE4M3FN};
constexpr MiniFormat kFloat8E4M3FNUZ{4, 3, 8, MiniFormat::Special::kFNUZ};
constexpr MiniFormat kFloat8E5M2{5, 2, 15, MiniFormat::Special::kIeee};
constexpr MiniFormat kFloat8E5M2FNUZ{5, 2, 16, MiniFormat::Special::kFNUZ};
constexpr MiniFormat kFloat4E2M1{2, 1, 1, MiniFormat::Special::kNone};

// Returns the exact binary32 value of `code` (NaN codes give the canonical quiet NaN).
float MiniToF32(uint32_t code, const MiniFormat& f);

// Returns the code nearest to x (ties to even). With `saturate`, values beyond the
// largest finite (and infinities) give the largest finite of the same sign; without
// it they give inf where the format has one, else NaN. NaN gives the format's
// canonical NaN (kNone formats have none: NaN gives -0, as ONNX's reference does).
uint32_t F32ToMini(float x, const MiniFormat& f, bool saturate);

// The canonical NaN code of a format (the one golden hashes use).
uint32_t MiniCanonicalNaN(const MiniFormat& f);
bool MiniIsNaN(uint32_t code, const MiniFormat& f);

inline float HalfToF32(uint16_t h) { return MiniToF32(h, kFloat16); }
inline uint16_t F32ToHalf(float x) { return uint16_t(F32ToMini(x, kFloat16, false)); }
inline float BF16ToF32(uint16_t h) { return MiniToF32(h, kBFloat16); }
inline uint16_t F32ToBF16(float x) { return uint16_t(F32ToMini(x, kBFloat16, false)); }

// The format of a narrow float element type (float16, bfloat16, the float8 family but
// E8M0, float4e2m1), or null for other types.
const MiniFormat* MiniFormatOf(DType t);

// float8e8m0: an 8-bit power of two 2^(code-127); 0xFF is NaN. Rounding modes of
// ONNX Cast's round_mode attribute.
enum class E8M0Round { kUp, kDown, kNearest };
float E8M0ToF32(uint8_t code);
uint8_t F32ToE8M0(float x, bool saturate, E8M0Round mode);

}  // namespace onemodel::impl
