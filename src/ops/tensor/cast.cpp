// Reference Cast and CastLike. Every conversion rounds once (exact-contract section 2):
// narrow float targets go through binary32 with round-to-odd from wider sources, so
// the final round-to-nearest-even is the only rounding that shows. Float -> integer
// truncates toward zero, NaN -> 0, and saturates (section 5); integer -> integer wraps
// (two's complement), the 4- and 2-bit types included, as ONNX's reference does.
// Strings are not converted yet.
#include <cmath>
#include <limits>

#include "core/minifloat.h"
#include "ops/ops.h"
#include "ops/tensor/cast.h"
#include "ops/util.h"

namespace onemodel::impl {
namespace ops {
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
#define OM_INT_CASE(DT, T) \
  case DT: static_cast<T*>(p)[i] = s.is_float ? FloatToIntSat<T>(s.d) : IntWrap<T>(s); break;
      OM_INT_CASE(DType::kInt8, int8_t)
      OM_INT_CASE(DType::kInt16, int16_t)
      OM_INT_CASE(DType::kInt32, int32_t)
      OM_INT_CASE(DType::kInt64, int64_t)
      OM_INT_CASE(DType::kUInt8, uint8_t)
      OM_INT_CASE(DType::kUInt16, uint16_t)
      OM_INT_CASE(DType::kUInt32, uint32_t)
      OM_INT_CASE(DType::kUInt64, uint64_t)
#undef OM_INT_CASE
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

// The project's conversion routines, element by element.
void CastReference(OpContext& ctx, const CastParams& p) {
  Tensor& out = ctx.out(0, p.to, p.x->shape());
  for (int64_t i = 0; i < p.x->numel(); ++i) Write(Read(*p.x, i), out, i, p.saturate, p.mode);
}

// Integers of at most 32 bits to float: C++'s conversion rounds to nearest even once, as
// Write does from the magnitude (exact for 8 and 16 bits); other types take the
// reference's conversion.
void CastIntToFloat(OpContext& ctx, const CastParams& p) {
  const Tensor& x = *p.x;
  auto typed = [&](auto tag) {
    using T = decltype(tag);
    Tensor& out = ctx.out_uninit(0, p.to, x.shape());
    const T* in = x.data<T>();
    float* o = out.mutable_data<float>();
    for (int64_t i = 0; i < x.numel(); ++i) o[i] = float(in[i]);
  };
  switch (x.dtype()) {
    case DType::kInt32: typed(int32_t{}); return;
    case DType::kInt16: typed(int16_t{}); return;
    case DType::kUInt16: typed(uint16_t{}); return;
    case DType::kInt8: typed(int8_t{}); return;
    case DType::kUInt8: typed(uint8_t{}); return;
    default: CastReference(ctx, p);
  }
}

bool ToFloat(const CastParams& p) { return p.to == DType::kFloat; }

constexpr const char* kCastOps[] = {"Cast", "CastLike"};
constexpr AlgorithmRow<CastParams, CastRun> kCastRows[] = {
    {"reference", Exactness::kExact, "", nullptr, nullptr, CastReference},
    {"int-to-float", Exactness::kExact, "", ToFloat, nullptr, CastIntToFloat},
};

void CastTo(OpContext& ctx, DType to) {
  const Tensor& x = ctx.in(0);
  if (!IsKnownDType(int32_t(to)))
    throw ctx.Fail(ErrorCode::kInvalidModel, "unknown target type " + std::to_string(int(to)));
  if (x.dtype() == DType::kString || to == DType::kString) {
    if (x.dtype() == to) {
      ctx.set_out(0, x);
      return;
    }
    throw ctx.Fail(ErrorCode::kUnsupportedOp, "Cast from or to STRING is not implemented yet");
  }
  if (x.dtype() == DType::kComplex64 || x.dtype() == DType::kComplex128 || to == DType::kComplex64 ||
      to == DType::kComplex128) {
    throw ctx.Fail(ErrorCode::kUnsupportedOp, "Cast of complex numbers is not supported");
  }
  const bool saturate = ctx.attr_i("saturate", 1) != 0;
  const std::string rm = ctx.attr_s("round_mode", "up");
  const E8M0Round mode = rm == "down" ? E8M0Round::kDown : rm == "nearest" ? E8M0Round::kNearest : E8M0Round::kUp;
  const CastParams p{&x, to, saturate, mode};
  PlanRow(ctx, CastTable(), p).run(ctx, p);
}

}  // namespace

const FamilyTable<CastParams, CastRun>& CastTable() {
  static constexpr FamilyTable<CastParams, CastRun> kTable{"cast", kCastOps, kCastRows};
  return kTable;
}

void Cast(OpContext& ctx) { CastTo(ctx, DType(ctx.attr_i("to", 0))); }
void CastLike(OpContext& ctx) { CastTo(ctx, ctx.in(1).dtype()); }

// BitCast: the input's bytes read as `to` (same width; a bool byte normalised to 0 or 1).
void BitCast(OpContext& ctx) {
  const Tensor& x = ctx.in(0);
  const DType to = DType(ctx.attr_i("to", 0));
  if (!IsKnownDType(int32_t(to)) || to == DType::kString || x.dtype() == DType::kString) {
    throw ctx.Fail(ErrorCode::kTypeMismatch, "BitCast needs non-string types");
  }
  if (DTypeBits(to) != DTypeBits(x.dtype())) {
    throw ctx.Fail(ErrorCode::kTypeMismatch,
                   "BitCast needs types of the same width (" + DTypeName(x.dtype()) + " -> " + DTypeName(to) + ")");
  }
  Tensor& y = ctx.out(0, to, x.shape());
  if (x.nbytes()) std::memcpy(y.mutable_data<uint8_t>(), x.raw(), x.nbytes());
  if (to == DType::kBool)
    for (int64_t i = 0; i < y.numel(); ++i) y.mutable_data<uint8_t>()[i] = y.mutable_data<uint8_t>()[i] != 0;
}

}  // namespace ops
}  // namespace onemodel::impl
