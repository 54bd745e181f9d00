// Narrow float conversions (see minifloat.h). Integer arithmetic only.
#include "core/minifloat.h"

#include <cstring>

#include "core/bits.h"

namespace onemodel::impl {
namespace {

constexpr uint32_t Bits(float f) { return F2U(f); }
constexpr float FromBits(uint32_t u) { return U2F(u); }

uint32_t MaxFiniteMag(const MiniFormat& f) {
  const uint32_t emax = (1u << f.ebits) - 1, mmax = (1u << f.mbits) - 1;
  switch (f.special) {
    case MiniFormat::Special::kIeee: return ((emax - 1) << f.mbits) | mmax;
    case MiniFormat::Special::kE4M3FN: return (emax << f.mbits) | (mmax - 1);
    default: return (emax << f.mbits) | mmax;
  }
}
uint32_t SignBit(const MiniFormat& f) { return 1u << (f.ebits + f.mbits); }

}  // namespace

uint32_t MiniCanonicalNaN(const MiniFormat& f) {
  const uint32_t emax = (1u << f.ebits) - 1;
  switch (f.special) {
    case MiniFormat::Special::kIeee: return (emax << f.mbits) | (1u << (f.mbits - 1));
    case MiniFormat::Special::kE4M3FN: return (emax << f.mbits) | ((1u << f.mbits) - 1);
    case MiniFormat::Special::kFNUZ: return SignBit(f);
    case MiniFormat::Special::kNone: return SignBit(f);  // -0, as ONNX's reference (ml_dtypes) gives
  }
  return 0;
}

bool MiniIsNaN(uint32_t code, const MiniFormat& f) {
  const uint32_t mag = code & (SignBit(f) - 1);
  const uint32_t emax = (1u << f.ebits) - 1;
  switch (f.special) {
    case MiniFormat::Special::kIeee: return (mag >> f.mbits) == emax && (mag & ((1u << f.mbits) - 1)) != 0;
    case MiniFormat::Special::kE4M3FN: return mag == ((emax << f.mbits) | ((1u << f.mbits) - 1));
    case MiniFormat::Special::kFNUZ: return code == SignBit(f);
    case MiniFormat::Special::kNone: return false;
  }
  return false;
}

float MiniToF32(uint32_t code, const MiniFormat& f) {
  if (MiniIsNaN(code, f)) return FromBits(0x7FC00000u);
  if (f.ebits == 8 && f.bias == 127) return FromBits(code << (23 - f.mbits));  // bfloat16: a prefix of binary32
  const uint32_t sign = (code & SignBit(f)) ? 0x80000000u : 0u;
  const uint32_t mag = code & (SignBit(f) - 1);
  const uint32_t e = mag >> f.mbits, m = mag & ((1u << f.mbits) - 1);
  const uint32_t emax = (1u << f.ebits) - 1;
  if (f.special == MiniFormat::Special::kIeee && e == emax) return FromBits(sign | 0x7F800000u);
  if (e == 0) {
    if (m == 0) return FromBits(sign);
    // Subnormal: m * 2^(1 - bias - mbits); normalise into binary32 (always normal there).
    int exp = 1 - f.bias - f.mbits;
    uint32_t mm = m;
    while (!(mm & 0x800000u)) {
      mm <<= 1;
      --exp;
    }
    // value = mm * 2^exp with mm in [2^23, 2^24): binary32 exponent is exp + 23.
    return FromBits(sign | (uint32_t(exp + 23 + 127) << 23) | (mm & 0x7FFFFFu));
  }
  const int exp = int(e) - f.bias;
  return FromBits(sign | (uint32_t(exp + 127) << 23) | (m << (23 - f.mbits)));
}

uint32_t F32ToMini(float x, const MiniFormat& f, bool saturate) {
  const uint32_t u = Bits(x);
  const bool neg = (u >> 31) != 0;
  const uint32_t fe = (u >> 23) & 0xFF, fm = u & 0x7FFFFFu;
  const uint32_t signbit = neg ? SignBit(f) : 0u;
  const uint32_t maxmag = MaxFiniteMag(f);
  auto overflow = [&]() -> uint32_t {
    if (saturate || f.special == MiniFormat::Special::kNone) return signbit | maxmag;
    if (f.special == MiniFormat::Special::kIeee) return signbit | (((1u << f.ebits) - 1) << f.mbits);
    return MiniCanonicalNaN(f);
  };
  if (fe == 0xFF) {
    if (fm != 0) return MiniCanonicalNaN(f);  // NaN
    return overflow();                        // +-inf
  }
  if (fe == 0 && fm == 0) {
    return f.special == MiniFormat::Special::kFNUZ ? 0u : signbit;
  }
  uint32_t sig;
  int e;
  if (fe == 0) {
    sig = fm;
    e = -126;
  } else {
    sig = fm | 0x800000u;
    e = int(fe) - 127;
  }
  const int emin = 1 - f.bias;
  int shift;
  if (e >= emin)
    shift = 23 - f.mbits;
  else
    shift = 23 - f.mbits + (emin - e);
  uint64_t q;
  if (shift >= 26) {
    q = 0;
  } else {
    q = sig >> shift;
    const uint32_t rem = sig & ((1u << shift) - 1u);
    const uint32_t half = 1u << (shift - 1);
    if (rem > half || (rem == half && (q & 1))) ++q;
  }
  int64_t code = e >= emin ? int64_t(e + f.bias - 1) * (int64_t(1) << f.mbits) + int64_t(q) : int64_t(q);
  if (code > int64_t(maxmag)) return overflow();
  if (code == 0 && f.special == MiniFormat::Special::kFNUZ) return 0u;
  return signbit | uint32_t(code);
}

const MiniFormat* MiniFormatOf(DType t) {
  switch (t) {
    case DType::kFloat16: return &kFloat16;
    case DType::kBFloat16: return &kBFloat16;
    case DType::kFloat8E4M3FN: return &kFloat8E4M3FN;
    case DType::kFloat8E4M3FNUZ: return &kFloat8E4M3FNUZ;
    case DType::kFloat8E5M2: return &kFloat8E5M2;
    case DType::kFloat8E5M2FNUZ: return &kFloat8E5M2FNUZ;
    case DType::kFloat4E2M1: return &kFloat4E2M1;
    default: return nullptr;
  }
}

float E8M0ToF32(uint8_t code) {
  if (code == 0xFF) return FromBits(0x7FC00000u);
  if (code == 0) return FromBits(0x00400000u);  // 2^-127, a binary32 subnormal
  return FromBits(uint32_t(code) << 23);
}

uint8_t F32ToE8M0(float x, bool saturate, E8M0Round mode) {
  // Follows onnx.numpy_helper.to_float8e8m0: the binary32 exponent field, adjusted
  // by the rounding mode on the discarded mantissa bits.
  const uint32_t u = Bits(x);
  uint32_t e = (u >> 23) & 0xFF;
  if (e == 0xFF) return 0xFF;
  const uint32_t m = u & 0x7FFFFFu;
  bool up = false;
  if (mode == E8M0Round::kUp) {
    up = m != 0;
  } else if (mode == E8M0Round::kNearest) {
    const bool g = (m & 0x400000u) != 0, r = (m & 0x200000u) != 0, s = (m & 0x1FFFFFu) != 0;
    up = g && (r || s || e > 0);
  }
  if (up) {
    if (e == 0xFE) {
      if (!saturate) return 0xFF;
    } else {
      ++e;
    }
  }
  return uint8_t(e);
}

}  // namespace onemodel::impl
