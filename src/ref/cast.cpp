// The reference Cast (see cast.h): Read gives a source element exactly, Write converts it
// once to the target's element.
#include "ref/cast.h"

#include <cmath>
#include <limits>

#include "core/bits.h"
#include "core/minifloat.h"

namespace onemodel::impl {
namespace ref {
namespace {

struct Scalar {
  bool is_float = false;
  bool f32_exact = false;  // the value is exactly a binary32
  double d = 0;
  bool neg = false;  // integers: sign and magnitude
  uint64_t mag = 0;
};

Scalar Read(const Tensor& t, int64_t i) {
  Scalar s;
  const void* p = t.raw();
  auto I = [&](int64_t v) {
    s.neg = v < 0;
    s.mag = v < 0 ? uint64_t(0) - uint64_t(v) : uint64_t(v);
  };
  switch (t.dtype()) {
    case DType::kFloat:
      s.is_float = s.f32_exact = true;
      s.d = static_cast<const float*>(p)[i];
      break;
    case DType::kDouble:
      s.is_float = true;
      s.d = static_cast<const double*>(p)[i];
      break;
    case DType::kFloat8E8M0:
      s.is_float = s.f32_exact = true;
      s.d = E8M0ToF32(static_cast<const uint8_t*>(p)[i]);
      break;
    case DType::kInt8:
    case DType::kInt4:
    case DType::kInt2: I(static_cast<const int8_t*>(p)[i]); break;
    case DType::kInt16: I(static_cast<const int16_t*>(p)[i]); break;
    case DType::kInt32: I(static_cast<const int32_t*>(p)[i]); break;
    case DType::kInt64: I(static_cast<const int64_t*>(p)[i]); break;
    case DType::kUInt8:
    case DType::kUInt4:
    case DType::kUInt2: s.mag = static_cast<const uint8_t*>(p)[i]; break;
    case DType::kBool: s.mag = static_cast<const uint8_t*>(p)[i] ? 1 : 0; break;
    case DType::kUInt16: s.mag = static_cast<const uint16_t*>(p)[i]; break;
    case DType::kUInt32: s.mag = static_cast<const uint32_t*>(p)[i]; break;
    case DType::kUInt64: s.mag = static_cast<const uint64_t*>(p)[i]; break;
    default: {
      const MiniFormat* f = MiniFormatOf(t.dtype());
      const uint32_t code =
          DTypeStorageSize(t.dtype()) == 2 ? static_cast<const uint16_t*>(p)[i] : static_cast<const uint8_t*>(p)[i];
      s.is_float = s.f32_exact = true;
      s.d = MiniToF32(code, *f);
    }
  }
  return s;
}

// binary64 -> binary32 rounding to odd: truncate, then set the last bit if inexact.
float DoubleToFloatOdd(double d) {
  if (d != d) return std::numeric_limits<float>::quiet_NaN();
  float f = float(d);  // nearest even
  if (double(f) == d) return f;
  if (std::isinf(f)) {
    return d > 0 ? std::numeric_limits<float>::max() : -std::numeric_limits<float>::max();
  }
  if ((d > 0 && double(f) > d) || (d < 0 && double(f) < d)) f = std::nextafter(f, 0.0f);  // toward zero
  uint32_t u = F2U(f);
  u |= 1u;
  return U2F(u);
}

// An integer (sign, magnitude) -> binary32 rounding to odd.
float IntToFloatOdd(bool neg, uint64_t mag) {
  int bits = 0;
  for (uint64_t m = mag; m; m >>= 1) ++bits;
  float f;
  if (bits <= 24) {
    f = float(mag);
  } else {
    const int shift = bits - 24;
    uint64_t top = mag >> shift;
    if (mag & ((uint64_t(1) << shift) - 1)) top |= 1;   // sticky: round to odd
    f = float(top) * U2F(uint32_t(127 + shift) << 23);  // exact scaling by 2^shift
  }
  return neg ? -f : f;
}

float ToFloatOnce(const Scalar& s) {
  if (s.is_float) return s.f32_exact ? float(s.d) : DoubleToFloatOdd(s.d);
  return IntToFloatOdd(s.neg, s.mag);
}

template <class T>
T IntWrap(const Scalar& s) {
  const uint64_t v = s.neg ? uint64_t(0) - s.mag : s.mag;
  return T(v);
}

void Write(const Scalar& s, Tensor& out, int64_t i, bool saturate, E8M0Round mode) {
  void* p = out.mutable_data<uint8_t>();
  switch (out.dtype()) {
    case DType::kFloat:
      static_cast<float*>(p)[i] = s.is_float ? float(s.d) : (s.neg ? -float(s.mag) : float(s.mag));
      break;
    case DType::kDouble:
      static_cast<double*>(p)[i] = s.is_float ? s.d : (s.neg ? -double(s.mag) : double(s.mag));
      break;
    case DType::kBool: static_cast<uint8_t*>(p)[i] = s.is_float ? (s.d != 0) : (s.mag != 0); break;
#define OM_REF_INT_CASE(DT, T) \
  case DT: static_cast<T*>(p)[i] = s.is_float ? FloatToIntSat<T>(s.d) : IntWrap<T>(s); break;
      OM_REF_INT_CASE(DType::kInt8, int8_t)
      OM_REF_INT_CASE(DType::kInt16, int16_t)
      OM_REF_INT_CASE(DType::kInt32, int32_t)
      OM_REF_INT_CASE(DType::kInt64, int64_t)
      OM_REF_INT_CASE(DType::kUInt8, uint8_t)
      OM_REF_INT_CASE(DType::kUInt16, uint16_t)
      OM_REF_INT_CASE(DType::kUInt32, uint32_t)
      OM_REF_INT_CASE(DType::kUInt64, uint64_t)
#undef OM_REF_INT_CASE
    case DType::kInt4:
    case DType::kUInt4:
    case DType::kInt2:
    case DType::kUInt2: {
      // Like ONNX's reference: to int64 (floats truncate), then keep the low bits;
      // signed types sign-extend into their byte.
      const int bits = DTypeBits(out.dtype());
      const uint64_t v = s.is_float ? uint64_t(FloatToIntSat<int64_t>(s.d)) : IntWrap<uint64_t>(s);
      uint8_t b = uint8_t(v & ((1u << bits) - 1));
      if ((out.dtype() == DType::kInt4 || out.dtype() == DType::kInt2) && (b >> (bits - 1))) b |= uint8_t(0xFF << bits);
      static_cast<uint8_t*>(p)[i] = b;
      break;
    }
    case DType::kFloat8E8M0: static_cast<uint8_t*>(p)[i] = F32ToE8M0(ToFloatOnce(s), saturate, mode); break;
    default: {
      const MiniFormat* f = MiniFormatOf(out.dtype());
      const bool sat = (out.dtype() == DType::kFloat16 || out.dtype() == DType::kBFloat16) ? false : saturate;
      const uint32_t code = F32ToMini(ToFloatOnce(s), *f, sat);
      if (DTypeStorageSize(out.dtype()) == 2)
        static_cast<uint16_t*>(p)[i] = uint16_t(code);
      else
        static_cast<uint8_t*>(p)[i] = uint8_t(code);
    }
  }
}

}  // namespace

void Cast(const CastParams& p, const Tensor& x, Tensor& out) {
  for (int64_t i = 0; i < x.numel(); ++i) Write(Read(x, i), out, i, p.saturate, p.round);
}

}  // namespace ref
}  // namespace onemodel::impl
