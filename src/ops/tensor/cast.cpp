// Cast and CastLike (ONNX Operators.md) and their family table (ops/tensor/cast.h), and
// BitCast. The definition of Cast's bits is ref::Cast (ref/cast.h), the reference row;
// strings are not converted yet.
#include <cstring>
#include <string>
#include <utility>

#include "core/bits.h"
#include "core/minifloat.h"
#include "ops/ops.h"
#include "ops/parallel.h"
#include "ops/tensor/cast.h"
#include "ops/util.h"
#include "ref/cast.h"

namespace onemodel::impl {
namespace ops {
namespace {

// The project's conversion routines (ref::Cast), element by element.
void CastReference(OpContext& ctx, const CastParams& p) {
  Tensor& out = ctx.out(0, p.to, p.x->shape());
  ref::Cast(p.ref, *p.x, out);
}

// Integers of at most 32 bits to float: C++'s conversion rounds to nearest even once, as
// ref::Cast does from the magnitude (exact for 8 and 16 bits); other types take the
// reference row. Split over the threads in runs of 16K elements.
void CastIntToFloat(OpContext& ctx, const CastParams& p) {
  const Tensor& x = *p.x;
  const DType t = x.dtype();
  if (t != DType::kInt32 && t != DType::kInt16 && t != DType::kUInt16 && t != DType::kInt8 && t != DType::kUInt8) {
    CastReference(ctx, p);
    return;
  }
  float* o = ctx.out_uninit(0, p.to, x.shape()).mutable_data<float>();
  ParallelFor(ctx, x.numel(), 16384, [&](int64_t b, int64_t e) { ConvertToFloat(x, b, e - b, o + b); });
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
  const CastParams p{&x, to, {saturate, mode}};
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
  // Defined on the little-endian layout: complex64 <-> a 64-bit scalar reads the real part
  // as the low half. A big-endian host swaps the two halves (docs/exact-mode.md, "Byte order").
  if (!kLittleEndian && (x.dtype() == DType::kComplex64) != (to == DType::kComplex64)) {
    uint32_t* w = y.mutable_data<uint32_t>();
    for (int64_t i = 0; i < y.numel(); ++i) std::swap(w[2 * i], w[2 * i + 1]);
  }
  if (to == DType::kBool)
    for (int64_t i = 0; i < y.numel(); ++i) y.mutable_data<uint8_t>()[i] = y.mutable_data<uint8_t>()[i] != 0;
}

}  // namespace ops
}  // namespace onemodel::impl
