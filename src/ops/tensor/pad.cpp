// Pad (ONNX Operators.md: constant, edge, wrap and reflect modes, opsets 2 to 24) and its
// family table (ops/tensor/pad.h), and CenterCropPad. Data movement: every bit kept. The
// definition of Pad's bits is ref::Pad (ref/data_movement.h), the reference row.
#include <algorithm>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "core/compute.h"
#include "core/index.h"
#include "ops/ops.h"
#include "ops/parallel.h"
#include "ops/tensor/pad.h"
#include "ops/util.h"
#include "ref/data_movement.h"

namespace onemodel::impl {
namespace ops {
namespace {
// Pad's constant_value input (opset 11 on; empty when absent), of the input's type.
Tensor PadConstant(const OpContext& ctx, const Tensor& x) {
  if (ctx.opset < 11 || !ctx.has_input(2) || !ctx.in(2).numel()) return Tensor();
  ctx.RequireInputType(ctx.in(2), x.dtype(), "constant_value");
  return ctx.in(2);
}

// The mode attribute, checked here: the reference takes a known mode.
ref::PadMode PadModeOf(const OpContext& ctx, const std::string& mode) {
  if (mode == "constant") return ref::PadMode::kConstant;
  if (mode == "edge") return ref::PadMode::kEdge;
  if (mode == "wrap") return ref::PadMode::kWrap;
  if (mode == "reflect") return ref::PadMode::kReflect;
  throw ctx.Fail(ErrorCode::kInvalidModel, "unknown pad mode '" + mode + "'");
}

// The rows' source map of one axis of size d: the input index each output index o reads
// (padded position o - lo), or -1 for the constant; the definition's (ref/data_movement.h).
std::vector<int64_t> RowSources(ref::PadMode mode, int64_t lo, int64_t n, int64_t d) {
  std::vector<int64_t> src(size_t(n), -1);
  for (int64_t o = 0; o < n; ++o) {
    int64_t p = o - lo;
    if (p >= 0 && p < d) {
      src[size_t(o)] = p;
    } else if (mode == ref::PadMode::kConstant || d == 0) {
      continue;
    } else if (mode == ref::PadMode::kEdge) {
      src[size_t(o)] = p < 0 ? 0 : d - 1;
    } else if (mode == ref::PadMode::kWrap) {
      src[size_t(o)] = ((p % d) + d) % d;
    } else if (d == 1) {
      src[size_t(o)] = 0;
    } else {
      const int64_t period = 2 * (d - 1);
      p = ((p % period) + period) % period;
      src[size_t(o)] = p >= d ? period - p : p;
    }
  }
  return src;
}

// The constant (input 2, or attribute `value` before opset 11) written into every element
// first: input 2's element as bytes repeated, or the attribute's value converted once.
void RowsFill(const PadParams& p) {
  const Tensor& x = *p.x;
  Tensor& out = *p.out;
  if (p.ref.mode != ref::PadMode::kConstant) return;
  if (!p.cval->empty()) {
    const size_t es = DTypeStorageSize(x.dtype());
    uint8_t* o = out.mutable_data<uint8_t>();
    std::memcpy(o, p.cval->raw(), es);
    for (int64_t i = 1; i < out.numel(); ++i) std::memcpy(o + size_t(i) * es, o, es);
  } else if (p.ref.value_attr) {
    const float v = p.ref.value;
    DispatchNumeric(x.dtype(), [&]<class T>() {
      for (int64_t i = 0; i < out.numel(); ++i) out.mutable_data<T>()[i] = Narrow<T>(typename Compute<T>::type(v));
    });
  }
}

// Per axis, the input index each output index reads (-1: the constant), as the reference;
// then rows of the last axis: a row whose other indices read the constant stays as
// filled, else its inner part is one copy and its padded ends element by element.
void PadRows(const OpContext& ctx, const PadParams& p) {
  RowsFill(p);
  const Tensor& x = *p.x;
  Tensor& out = *p.out;
  const Shape& s = p.ref.s;
  const std::vector<int64_t>& lo = p.ref.lo;
  const int64_t r = x.rank();
  const auto st = RowMajorStrides(x.shape());
  std::vector<std::vector<int64_t>> src(static_cast<size_t>(r));
  for (int64_t k = 0; k < r; ++k)
    src[size_t(k)] = RowSources(p.ref.mode, lo[size_t(k)], s[size_t(k)], x.shape()[size_t(k)]);
  const size_t es = DTypeStorageSize(x.dtype());
  const int64_t inner = s[size_t(r - 1)], d_last = x.shape()[size_t(r - 1)];
  const int64_t j0 = std::clamp<int64_t>(lo[size_t(r - 1)], 0, inner),
                j1 = std::clamp<int64_t>(lo[size_t(r - 1)] + d_last, j0, inner);
  const uint8_t* xp = static_cast<const uint8_t*>(x.raw());
  uint8_t* op = out.mutable_data<uint8_t>();
  const auto& last = src[size_t(r - 1)];
  ParallelFor(ctx, out.numel() / inner, std::max<int64_t>(1, 16384 / inner), [&](int64_t b, int64_t e) {
    for (int64_t row = b; row < e; ++row) {
      int64_t off = 0, rest = row;
      bool constant = false;
      for (int64_t k = r - 2; k >= 0 && !constant; --k) {
        const int64_t q = src[size_t(k)][size_t(rest % s[size_t(k)])];
        rest /= s[size_t(k)];
        constant = q < 0;
        off += q * st[size_t(k)];
      }
      if (constant) continue;
      uint8_t* orow = op + size_t(row * inner) * es;
      const uint8_t* xrow = xp + size_t(off) * es;
      if (j1 > j0)
        std::memcpy(orow + size_t(j0) * es, xrow + size_t(j0 - lo[size_t(r - 1)]) * es, size_t(j1 - j0) * es);
      for (int64_t j = 0; j < inner; ++j) {
        if (j == j0) j = j1;
        if (j >= inner) break;
        if (last[size_t(j)] >= 0) std::memcpy(orow + size_t(j) * es, xrow + size_t(last[size_t(j)]) * es, es);
      }
    }
  });
}

// The definition (ref::Pad): element by element in output order.
void PadReference(const OpContext&, const PadParams& p) { ref::Pad(p.ref, *p.x, *p.cval, *p.out); }

bool PadRowsFit(const PadParams& p) { return p.x->dtype() != DType::kString && p.x->rank() >= 1 && p.out->numel(); }

constexpr const char* kPadOps[] = {"Pad"};
constexpr AlgorithmRow<PadParams, PadRun> kPadRows[] = {
    {"reference", Exactness::kExact, "", nullptr, nullptr, PadReference},
    {"rows", Exactness::kExact, "", PadRowsFit, nullptr, PadRows},
};

}  // namespace

const FamilyTable<PadParams, PadRun>& PadTable() {
  static constexpr FamilyTable<PadParams, PadRun> kTable{"pad", kPadOps, kPadRows};
  return kTable;
}

void Pad(OpContext& ctx) {
  const Tensor& x = ctx.in(0);
  const int64_t r = x.rank();
  const std::string mode = ctx.attr_s("mode", "constant");
  const Shape pads = ctx.opset < 11 ? Shape(ctx.attr_ints("pads")) : ReadInts(ctx, ctx.in(1));
  std::vector<int64_t> axes;
  if (ctx.opset >= 18 && ctx.has_input(3)) axes = ReadInts(ctx, ctx.in(3));
  if (axes.empty())
    for (int64_t k = 0; k < r; ++k) axes.push_back(k);
  if (pads.size() != 2 * axes.size()) throw ctx.Fail(ErrorCode::kInvalidModel, "pads has the wrong length");
  std::vector<int64_t> lo(size_t(r), 0), hi(size_t(r), 0);
  for (size_t i = 0; i < axes.size(); ++i) {
    const int64_t a = NormAxis(ctx, axes[i], r);
    lo[size_t(a)] = pads[i];
    hi[size_t(a)] = pads[i + axes.size()];
  }
  Shape s = x.shape();
  for (int64_t k = 0; k < r; ++k) {
    if (__builtin_add_overflow(s[size_t(k)], lo[size_t(k)], &s[size_t(k)]) ||
        __builtin_add_overflow(s[size_t(k)], hi[size_t(k)], &s[size_t(k)]))
      throw ctx.Fail(ErrorCode::kOutOfRange, "a padded size overflows 64 bits");
    if (s[size_t(k)] < 0) throw ctx.Fail(ErrorCode::kShapeMismatch, "negative padded size");
  }
  Tensor& out = ctx.out(0, x.dtype(), s);
  const Tensor cval = PadConstant(ctx, x);
  ref::PadParams rp{PadModeOf(ctx, mode), std::move(lo), std::move(s), ctx.opset < 11 && ctx.has_attr("value"),
                    ctx.attr_f("value", 0.0f)};
  const PadParams p{&x, &out, &cval, std::move(rp)};
  PlanRow(ctx, PadTable(), p).run(ctx, p);
}

// CenterCropPad: each axis (all, or `axes`) cropped or padded with zeros to the wanted
// size, centred (an odd difference puts the extra element at the end).
void CenterCropPad(OpContext& ctx) {
  const Tensor& x = ctx.in(0);
  const auto want = ReadInts(ctx, ctx.in(1));
  std::vector<int64_t> axes = ctx.attr_ints("axes");
  if (axes.empty())
    for (int64_t k = 0; k < x.rank(); ++k) axes.push_back(k);
  if (axes.size() != want.size()) throw ctx.Fail(ErrorCode::kShapeMismatch, "shape must have one value per axis");
  Shape s = x.shape();
  std::vector<int64_t> off(static_cast<size_t>(x.rank()), 0);  // out index + off = in index
  for (size_t i = 0; i < axes.size(); ++i) {
    const int64_t a = NormAxis(ctx, axes[i], x.rank());
    const int64_t in = x.shape()[size_t(a)], o = want[i];
    s[size_t(a)] = o;
    off[size_t(a)] = in >= o ? (in - o) / 2 : -((o - in) / 2);
  }
  Tensor& y = ctx.out(0, x.dtype(), s);
  std::vector<int64_t> st(static_cast<size_t>(x.rank()), 1);
  for (int64_t k = x.rank() - 1; k > 0; --k) st[size_t(k - 1)] = st[size_t(k)] * x.shape()[size_t(k)];
  std::vector<int64_t> pos(static_cast<size_t>(x.rank()), 0);
  for (int64_t o = 0; o < y.numel(); ++o) {
    int64_t src = 0;
    bool inside = true;
    for (int64_t k = 0; k < x.rank(); ++k) {
      const int64_t p = pos[size_t(k)] + off[size_t(k)];
      if (p < 0 || p >= x.shape()[size_t(k)]) {
        inside = false;
        break;
      }
      src += p * st[size_t(k)];
    }
    if (inside) CopyElement(x, src, y, o);
    for (int64_t k = x.rank() - 1; k >= 0; --k) {
      if (++pos[size_t(k)] < s[size_t(k)]) break;
      pos[size_t(k)] = 0;
    }
  }
}

}  // namespace ops
}  // namespace onemodel::impl
