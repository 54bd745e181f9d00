// Shape and data-movement operators: no arithmetic, so any element type. Transpose and
// Gather plan with their family tables (ops/tensor/shape_ops.h); their definitions are
// ref::Transpose (ref/transpose.h) and ref::Gather (ref/data_movement.h).
#include <algorithm>
#include <limits>

#include <cstring>

#include "core/index.h"
#include "ops/ops.h"
#include "ops/tensor/shape_ops.h"
#include "ops/parallel.h"
#include "ops/util.h"
#include "ref/data_movement.h"
#include "ref/transpose.h"

namespace onemodel::impl {
namespace ops {
namespace {

// A tensor with the same elements and a new shape: a view of x's buffer when the run
// made it and nothing else shares it (no copy; a later write to either copies first,
// as every shared buffer's does), else a copy (a feed, an initializer: a view would
// hand the caller's or the model's bytes out as an output).
Tensor Reshaped(const OpContext& ctx, const Tensor& x, const Shape& shape) {
  if (CheckedNumElements(shape, DTypeStorageSize(x.dtype()), "output") != x.numel()) {
    throw ctx.Fail(ErrorCode::kShapeMismatch,
                   "cannot reshape " + ShapeToString(x.shape()) + " to " + ShapeToString(shape));
  }
  if (x.dtype() != DType::kString && x.SoleOwner()) return Tensor::Borrow(x.dtype(), shape, x.owner(), x.raw());
  Tensor out = ctx.NewTensor(x.dtype(), shape, true, "output");
  if (x.dtype() == DType::kString)
    out.mutable_strings() = x.strings();
  else if (x.nbytes())
    std::memcpy(out.mutable_data<uint8_t>(), x.raw(), x.nbytes());
  return out;
}

// Axes from the attribute (opset < since) or the optional second input.
Shape AxesArg(const OpContext& ctx, int64_t since) {
  if (ctx.opset < since) return ctx.attr_dims("axes");
  if (ctx.has_input(1)) return ReadInts(ctx, ctx.in(1));
  return {};
}

}  // namespace

void Constant(OpContext& ctx) {
  if (const Attribute* a = ctx.node.attr("value")) {
    ctx.set_out(0, a->t);
    return;
  }
  if (const Attribute* a = ctx.node.attr("value_float")) {
    Tensor& t = ctx.out(0, DType::kFloat, {});
    t.mutable_data<float>()[0] = a->f;
    return;
  }
  if (const Attribute* a = ctx.node.attr("value_floats")) {
    Tensor& t = ctx.out(0, DType::kFloat, {int64_t(a->floats.size())});
    std::copy(a->floats.begin(), a->floats.end(), t.mutable_data<float>());
    return;
  }
  if (const Attribute* a = ctx.node.attr("value_int")) {
    Tensor& t = ctx.out(0, DType::kInt64, {});
    t.mutable_data<int64_t>()[0] = a->i;
    return;
  }
  if (const Attribute* a = ctx.node.attr("value_ints")) {
    Tensor& t = ctx.out(0, DType::kInt64, {int64_t(a->ints.size())});
    std::copy(a->ints.begin(), a->ints.end(), t.mutable_data<int64_t>());
    return;
  }
  if (const Attribute* a = ctx.node.attr("value_string")) {
    Tensor& t = ctx.out(0, DType::kString, {});
    t.mutable_strings()[0] = a->s;
    return;
  }
  if (const Attribute* a = ctx.node.attr("value_strings")) {
    Tensor& t = ctx.out(0, DType::kString, {int64_t(a->strings.size())});
    t.mutable_strings() = a->strings;
    return;
  }
  throw ctx.Fail(ErrorCode::kUnsupportedOp, "Constant needs a value attribute (sparse values are not supported)");
}

void ShapeOp(OpContext& ctx) {
  const Tensor& x = ctx.in(0);
  const int64_t r = x.rank();
  int64_t start = ctx.attr_i("start", 0), end = ctx.attr_i("end", r);
  if (start < 0) start += r;
  if (end < 0) end += r;
  start = std::clamp<int64_t>(start, 0, r);
  end = std::clamp<int64_t>(end, 0, r);
  const int64_t n = std::max<int64_t>(0, end - start);
  Tensor& out = ctx.out(0, DType::kInt64, {n});
  for (int64_t i = 0; i < n; ++i) out.mutable_data<int64_t>()[i] = x.shape()[size_t(start + i)];
}

void Size(OpContext& ctx) {
  Tensor& out = ctx.out(0, DType::kInt64, {});
  out.mutable_data<int64_t>()[0] = ctx.in(0).numel();
}

void Reshape(OpContext& ctx) {
  const Tensor& x = ctx.in(0);
  const Shape req = ctx.opset < 5 ? Shape(ctx.attr_ints("shape")) : ReadInts(ctx, ctx.in(1));
  const bool allowzero = ctx.attr_i("allowzero", 0) != 0;
  Shape shape(req.size());
  int64_t known = 1, infer = -1;
  for (size_t i = 0; i < req.size(); ++i) {
    int64_t d = req[i];
    if (d == 0 && !allowzero) {
      if (i >= x.shape().size())
        throw ctx.Fail(ErrorCode::kShapeMismatch, "0 in shape copies a dimension the input lacks");
      d = x.shape()[i];
    }
    if (d == -1) {
      if (infer >= 0) throw ctx.Fail(ErrorCode::kShapeMismatch, "more than one -1 in the requested shape");
      infer = int64_t(i);
      continue;
    }
    if (d < 0)
      throw ctx.Fail(ErrorCode::kShapeMismatch, "negative dimension " + std::to_string(d) + " in the requested shape");
    shape[i] = d;
    if (d != 0 && known > std::numeric_limits<int64_t>::max() / d)
      throw ctx.Fail(ErrorCode::kOutOfRange, "the requested shape's element count overflows 64 bits");
    known *= d;
  }
  if (infer >= 0) {
    if (known == 0 || x.numel() % known != 0) {
      throw ctx.Fail(ErrorCode::kShapeMismatch, "cannot infer -1 reshaping " + ShapeToString(x.shape()));
    }
    shape[size_t(infer)] = x.numel() / known;
  }
  ctx.set_out(0, Reshaped(ctx, x, shape));
}

void Flatten(OpContext& ctx) {
  const Tensor& x = ctx.in(0);
  const int64_t axis = NormAxis(ctx, ctx.attr_i("axis", 1), x.rank(), true);
  int64_t a = 1, b = 1;
  for (int64_t i = 0; i < x.rank(); ++i) (i < axis ? a : b) *= x.shape()[size_t(i)];
  ctx.set_out(0, Reshaped(ctx, x, {a, b}));
}

void Squeeze(OpContext& ctx) {
  const Tensor& x = ctx.in(0);
  Shape axes = AxesArg(ctx, 13);
  Shape drop(static_cast<size_t>(x.rank()), 0);  // flags (inline: no heap)
  if (axes.empty()) {
    for (int64_t i = 0; i < x.rank(); ++i) drop[size_t(i)] = x.shape()[size_t(i)] == 1;
  } else {
    for (int64_t a : axes) {
      const int64_t k = NormAxis(ctx, a, x.rank());
      if (x.shape()[size_t(k)] != 1)
        throw ctx.Fail(ErrorCode::kShapeMismatch,
                       "cannot squeeze axis " + std::to_string(a) + " of size " + std::to_string(x.shape()[size_t(k)]));
      drop[size_t(k)] = true;
    }
  }
  Shape s;
  for (int64_t i = 0; i < x.rank(); ++i)
    if (!drop[size_t(i)]) s.push_back(x.shape()[size_t(i)]);
  ctx.set_out(0, Reshaped(ctx, x, s));
}

void Unsqueeze(OpContext& ctx) {
  const Tensor& x = ctx.in(0);
  Shape axes = AxesArg(ctx, 13);
  const int64_t r = x.rank() + int64_t(axes.size());
  Shape ins(size_t(r), 0);  // flags (inline: no heap)
  for (int64_t a : axes) {
    const int64_t k = NormAxis(ctx, a, r);
    if (ins[size_t(k)]) throw ctx.Fail(ErrorCode::kInvalidArgument, "repeated axis " + std::to_string(a));
    ins[size_t(k)] = true;
  }
  Shape s;
  size_t j = 0;
  for (int64_t i = 0; i < r; ++i) s.push_back(ins[size_t(i)] ? 1 : x.shape()[j++]);
  ctx.set_out(0, Reshaped(ctx, x, s));
}

namespace {
// Copies output rows of `inner` elements (storage size es) from src: row r's element j
// comes from element row_offset(r) + j * step of src. Rows go over the threads; the
// bytes are moved as they are (any element type but string).
template <class RowOffset>
void CopyRows(const OpContext& ctx, const void* src_v, void* dst_v, size_t es, int64_t rows, int64_t inner,
              int64_t step, RowOffset row_offset) {
  const uint8_t* src = static_cast<const uint8_t*>(src_v);
  uint8_t* dst = static_cast<uint8_t*>(dst_v);
  ParallelFor(ctx, rows, std::max<int64_t>(1, 16384 / std::max<int64_t>(inner, 1)), [&](int64_t b, int64_t e) {
    for (int64_t row = b; row < e; ++row) {
      const int64_t off = row_offset(row);
      uint8_t* d = dst + size_t(row * inner) * es;
      if (step == 1) {  // a contiguous run of the input (Transpose keeping the last axis)
        std::memcpy(d, src + size_t(off) * es, size_t(inner) * es);
        continue;
      }
      auto copy = [&]<class E>() {
        const E* sp = reinterpret_cast<const E*>(src) + off;
        E* dp = reinterpret_cast<E*>(d);
        for (int64_t j = 0; j < inner; ++j) std::memcpy(dp + j, sp + j * step, sizeof(E));
      };
      if (es == 4)
        copy.template operator()<uint32_t>();
      else if (es == 2)
        copy.template operator()<uint16_t>();
      else if (es == 8)
        copy.template operator()<uint64_t>();
      else if (es == 1)
        copy.template operator()<uint8_t>();
      else
        for (int64_t j = 0; j < inner; ++j) std::memcpy(d + size_t(j) * es, src + size_t(off + j * step) * es, es);
    }
  });
}
}  // namespace

namespace {

// The output's last axis is not the input's: 2-D blocks (the input's last axis against
// the output's) through the tiled kernel, one block per index of the other axes, in
// chunks of 64 input columns over the threads. Bits are moved, not computed.
void TransposeBlocks32(const OpContext& ctx, const TransposeParams& p) {
  const Shape& s = *p.s;
  const Shape& perm = *p.perm;
  const Shape& in_st = *p.in_st;
  const int64_t r = p.r, lp = p.lp;
  const auto out_st = RowMajorStrides<Shape>(s);
  const int64_t rows = s[size_t(r - 1)], cols = s[size_t(lp)];
  const int64_t ss = in_st[size_t(perm[size_t(r - 1)])], ds = out_st[size_t(lp)];
  const int64_t blocks = p.out->numel() / (rows * cols), chunk = 64, chunks = (cols + chunk - 1) / chunk;
  const uint32_t* src = static_cast<const uint32_t*>(p.x->raw());
  uint32_t* dst = p.out->mutable_data<uint32_t>();
  ParallelFor(ctx, blocks * chunks, 1, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      const int64_t blk = i / chunks, c0 = i % chunks * chunk;
      int64_t so = 0, doff = 0, rest = blk;
      for (int64_t k = r - 2; k >= 0; --k) {
        if (k == lp) continue;
        const int64_t ix = rest % s[size_t(k)];
        rest /= s[size_t(k)];
        so += ix * in_st[size_t(perm[size_t(k)])];
        doff += ix * out_st[size_t(k)];
      }
      ctx.kernels->Transpose32(src + so + c0, ss, dst + doff + c0 * ds, ds, rows, std::min(chunk, cols - c0));
    }
  });
}

// The definition (ref::Transpose): rows of the output's last axis, strings element by
// element, in turn.
void TransposeReference(const OpContext&, const TransposeParams& p) { ref::Transpose(*p.perm, *p.x, *p.out); }

// Rows of the output's last axis over the threads, each read with the input's stride for
// it; elements are copied as bytes of their storage size (not strings).
void TransposeRows(const OpContext& ctx, const TransposeParams& p) {
  const Tensor& x = *p.x;
  Tensor& out = *p.out;
  const Shape& s = *p.s;
  const Shape& perm = *p.perm;
  const Shape& in_st = *p.in_st;
  const int64_t r = p.r;
  const int64_t inner = s[size_t(r - 1)];
  CopyRows(ctx, x.raw(), out.mutable_data<uint8_t>(), DTypeStorageSize(x.dtype()), out.numel() / inner, inner,
           in_st[size_t(perm[size_t(r - 1)])], [&](int64_t row) {
             int64_t off = 0;
             for (int64_t i = r - 2; i >= 0; --i) {
               off += (row % s[size_t(i)]) * in_st[size_t(perm[size_t(i)])];
               row /= s[size_t(i)];
             }
             return off;
           });
}

bool Blocks32Fits(const TransposeParams& p) {
  return p.x->dtype() != DType::kString && DTypeStorageSize(p.x->dtype()) == 4 && p.lp < p.r - 1 && p.out->numel();
}
bool TransposeRowsFit(const TransposeParams& p) { return p.x->dtype() != DType::kString && p.r >= 1 && p.out->numel(); }

constexpr const char* kTransposeOps[] = {"Transpose"};
constexpr AlgorithmRow<TransposeParams, TransposeRun> kTransposeRows[] = {
    {"reference", Exactness::kExact, "", nullptr, nullptr, TransposeReference},
    {"blocks32", Exactness::kExact, "Transpose32", Blocks32Fits, nullptr, TransposeBlocks32},
    {"rows", Exactness::kExact, "", TransposeRowsFit, nullptr, TransposeRows},
};

// The definition (ref::Gather): element by element.
void GatherReference(const OpContext&, const GatherParams& p) { ref::Gather(p.ref, *p.x, *p.out); }

// Whole slices: each gathered index copies `inner` elements as bytes, the copies over the
// threads.
void GatherSlices(const OpContext& ctx, const GatherParams& p) {
  const ref::GatherParams& g = p.ref;
  const size_t bytes = size_t(g.inner) * DTypeStorageSize(p.x->dtype());
  const uint8_t* src = static_cast<const uint8_t*>(p.x->raw());
  uint8_t* dst = p.out->mutable_data<uint8_t>();
  const int64_t n = g.n, dim = g.dim;
  if (bytes == 0 || n == 0) return;
  ParallelFor(ctx, g.outer * n, std::max<int64_t>(1, int64_t(65536 / bytes)), [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i)
      std::memcpy(dst + size_t(i) * bytes, src + size_t((i / n) * dim + g.rows[size_t(i % n)]) * bytes, bytes);
  });
}

bool SlicesFit(const GatherParams& p) { return p.x->dtype() != DType::kString; }

constexpr const char* kGatherOps[] = {"Gather"};
constexpr AlgorithmRow<GatherParams, GatherRun> kGatherRows[] = {
    {"reference", Exactness::kExact, "", nullptr, nullptr, GatherReference},
    {"slices", Exactness::kExact, "", SlicesFit, nullptr, GatherSlices},
};

}  // namespace

const FamilyTable<TransposeParams, TransposeRun>& TransposeTable() {
  static constexpr FamilyTable<TransposeParams, TransposeRun> kTable{"transpose", kTransposeOps, kTransposeRows};
  return kTable;
}
const FamilyTable<GatherParams, GatherRun>& GatherTable() {
  static constexpr FamilyTable<GatherParams, GatherRun> kTable{"gather", kGatherOps, kGatherRows};
  return kTable;
}

void Transpose(OpContext& ctx) {
  const Tensor& x = ctx.in(0);
  const int64_t r = x.rank();
  Shape perm = ctx.attr_dims("perm");
  if (perm.empty())
    for (int64_t i = r - 1; i >= 0; --i) perm.push_back(i);
  if (int64_t(perm.size()) != r) throw ctx.Fail(ErrorCode::kInvalidArgument, "perm has the wrong length");
  Shape seen(size_t(r), 0);
  Shape s(static_cast<size_t>(r));
  for (int64_t i = 0; i < r; ++i) {
    const int64_t p = NormAxis(ctx, perm[size_t(i)], r);
    if (seen[size_t(p)]) throw ctx.Fail(ErrorCode::kInvalidArgument, "perm repeats an axis");
    seen[size_t(p)] = true;
    perm[size_t(i)] = p;
    s[size_t(i)] = x.shape()[size_t(p)];
  }
  Tensor& out = ctx.out_uninit(0, x.dtype(), s);  // every element is written
  const auto in_st = RowMajorStrides<Shape>(x.shape());
  int64_t lp = 0;  // the output position of the input's last axis
  while (lp < r && perm[size_t(lp)] != r - 1) ++lp;
  const TransposeParams p{&x, &out, &s, &perm, &in_st, r, lp};
  PlanRow(ctx, TransposeTable(), p).run(ctx, p);
}

void Concat(OpContext& ctx) {
  const Tensor& first = ctx.in(0);
  const int64_t axis = NormAxis(ctx, ctx.attr_i("axis", 0), first.rank());
  Shape s = first.shape();
  s[size_t(axis)] = 0;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    const Tensor& t = ctx.in(i);
    if (t.dtype() != first.dtype() || t.rank() != first.rank())
      throw ctx.Fail(ErrorCode::kShapeMismatch, "inputs differ in type or rank");
    for (int64_t k = 0; k < t.rank(); ++k) {
      if (k != axis && t.shape()[size_t(k)] != first.shape()[size_t(k)])
        throw ctx.Fail(ErrorCode::kShapeMismatch, "inputs differ off the concat axis");
    }
    s[size_t(axis)] += t.shape()[size_t(axis)];
  }
  Tensor& out = ctx.out_uninit(0, first.dtype(), s);  // every element is written
  int64_t outer = 1;
  for (int64_t k = 0; k < axis; ++k) outer *= s[size_t(k)];
  int64_t inner = 1;
  for (int64_t k = axis + 1; k < first.rank(); ++k) inner *= s[size_t(k)];
  int64_t o = 0;
  const bool bytes = first.dtype() != DType::kString;
  const size_t es = bytes ? DTypeStorageSize(first.dtype()) : 0;
  uint8_t* dst = bytes ? out.mutable_data<uint8_t>() : nullptr;
  for (int64_t b = 0; b < outer; ++b) {
    for (size_t i = 0; i < ctx.num_inputs(); ++i) {
      const Tensor& t = ctx.in(i);
      const int64_t chunk = t.shape()[size_t(axis)] * inner;
      if (bytes) {
        if (chunk)
          std::memcpy(dst + size_t(o) * es, static_cast<const uint8_t*>(t.raw()) + size_t(b * chunk) * es,
                      size_t(chunk) * es);
        o += chunk;
        continue;
      }
      for (int64_t j = 0; j < chunk; ++j) CopyElement(t, b * chunk + j, out, o++);
    }
  }
}

void Expand(OpContext& ctx) {
  const Tensor& x = ctx.in(0);
  const Shape want = ReadInts(ctx, ctx.in(1));
  const Shape s = BroadcastShapes(ctx, {x.shape(), want});
  Tensor& out = ctx.out(0, x.dtype(), s);
  const auto idx = BroadcastIndex(x.shape(), s);
  for (size_t i = 0; i < idx.size(); ++i) CopyElement(x, idx[i], out, int64_t(i));
}

void ConstantOfShape(OpContext& ctx) {
  const Shape s = ReadInts(ctx, ctx.in(0));
  const Attribute* v = ctx.node.attr("value");
  if (!v) {
    ctx.out(0, DType::kFloat, s);
    return;
  }
  // ONNX: a one-element tensor (a mutated model's empty one would be read past its end).
  if (v->t.numel() != 1) {
    throw ctx.Fail(ErrorCode::kInvalidModel,
                   "the value attribute must hold one element, not " + std::to_string(v->t.numel()));
  }
  Tensor& out = ctx.out(0, v->t.dtype(), s);
  for (int64_t i = 0; i < out.numel(); ++i) CopyElement(v->t, 0, out, i);
}

void Gather(OpContext& ctx) {
  const Tensor& x = ctx.in(0);
  const Tensor& ind = ctx.in(1);
  const int64_t axis = NormAxis(ctx, ctx.attr_i("axis", 0), x.rank());
  // The indices read in place (int64 or int32).
  if (ind.dtype() != DType::kInt64 && ind.dtype() != DType::kInt32)
    throw ctx.Fail(ErrorCode::kTypeMismatch, "expected an int64 or int32 tensor, got " + DTypeName(ind.dtype()));
  const size_t n_idx = size_t(ind.numel());
  auto idx = [&](size_t k) -> int64_t {
    return ind.dtype() == DType::kInt64 ? ind.data<int64_t>()[k] : int64_t(ind.data<int32_t>()[k]);
  };
  const int64_t dim = x.shape()[size_t(axis)];
  Shape s(x.shape().begin(), x.shape().begin() + axis);
  s.insert(s.end(), ind.shape().begin(), ind.shape().end());
  s.insert(s.end(), x.shape().begin() + axis + 1, x.shape().end());
  int64_t outer = 1, inner = 1;
  for (int64_t k = 0; k < axis; ++k) outer *= x.shape()[size_t(k)];
  for (int64_t k = axis + 1; k < x.rank(); ++k) inner *= x.shape()[size_t(k)];
  // The indices, checked first.
  IndexTable rows(n_idx);
  for (size_t k = 0; k < n_idx; ++k) {
    const int64_t j = idx(k), jj = j < 0 ? j + dim : j;
    if (jj < 0 || jj >= dim)
      throw ctx.Fail(ErrorCode::kInvalidArgument,
                     "index " + std::to_string(j) + " is out of range for a dimension of " + std::to_string(dim));
    rows[k] = jj;
  }
  // Every element is written (strings: constructed first).
  Tensor& out = x.dtype() == DType::kString ? ctx.out(0, x.dtype(), s) : ctx.out_uninit(0, x.dtype(), s);
  const GatherParams p{&x, &out, {outer, inner, dim, rows.data(), int64_t(n_idx)}};
  PlanRow(ctx, GatherTable(), p).run(ctx, p);
}

void Slice(OpContext& ctx) {
  const Tensor& x = ctx.in(0);
  const int64_t r = x.rank();
  Shape starts, ends, axes, steps;  // inline: no heap for the usual few axes
  if (ctx.opset < 10) {
    starts = ctx.attr_dims("starts");
    ends = ctx.attr_dims("ends");
    axes = ctx.attr_dims("axes");
  } else {
    starts = ReadInts(ctx, ctx.in(1));
    ends = ReadInts(ctx, ctx.in(2));
    if (ctx.has_input(3)) axes = ReadInts(ctx, ctx.in(3));
    if (ctx.has_input(4)) steps = ReadInts(ctx, ctx.in(4));
  }
  if (axes.empty())
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(int64_t(i));
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size()) {
    throw ctx.Fail(ErrorCode::kInvalidArgument, "starts, ends, axes and steps differ in length");
  }
  Shape st(size_t(r), 0), stp(size_t(r), 1);
  Shape s = x.shape();
  for (size_t i = 0; i < axes.size(); ++i) {
    const int64_t a = NormAxis(ctx, axes[i], r);
    const int64_t d = x.shape()[size_t(a)];
    const int64_t step = steps[i];
    if (step == 0) throw ctx.Fail(ErrorCode::kInvalidArgument, "step 0");
    int64_t b = starts[i], e = ends[i];
    if (b < 0) b += d;
    if (e < 0) e += d;
    if (step > 0) {
      b = std::clamp<int64_t>(b, 0, d);
      e = std::clamp<int64_t>(e, 0, d);
      s[size_t(a)] = e > b ? (e - b + step - 1) / step : 0;
    } else {
      b = std::clamp<int64_t>(b, 0, d - 1);
      e = std::clamp<int64_t>(e, -1, d - 1);
      s[size_t(a)] = b > e ? (b - e + (-step) - 1) / (-step) : 0;
    }
    st[size_t(a)] = b;
    stp[size_t(a)] = step;
  }
  Tensor& out = ctx.out_uninit(0, x.dtype(), s);  // every element is written
  const auto in_st = RowMajorStrides<Shape>(x.shape());
  if (x.dtype() != DType::kString && r >= 1 && out.numel()) {
    // Rows of the output's last dimension, each read with its step; elements are
    // copied as bytes of their storage size.
    const int64_t inner = s[size_t(r - 1)];
    CopyRows(ctx, x.raw(), out.mutable_data<uint8_t>(), DTypeStorageSize(x.dtype()), out.numel() / inner, inner,
             stp[size_t(r - 1)] * in_st[size_t(r - 1)], [&](int64_t row) {
               int64_t off = st[size_t(r - 1)] * in_st[size_t(r - 1)];
               for (int64_t i = r - 2; i >= 0; --i) {
                 off += (st[size_t(i)] + (row % s[size_t(i)]) * stp[size_t(i)]) * in_st[size_t(i)];
                 row /= s[size_t(i)];
               }
               return off;
             });
    return;
  }
  std::vector<int64_t> pos(size_t(r), 0);
  for (int64_t o = 0; o < out.numel(); ++o) {
    int64_t src = 0;
    for (int64_t k = 0; k < r; ++k) src += (st[size_t(k)] + pos[size_t(k)] * stp[size_t(k)]) * in_st[size_t(k)];
    CopyElement(x, src, out, o);
    for (int64_t k = r - 1; k >= 0; --k) {
      if (++pos[size_t(k)] < s[size_t(k)]) break;
      pos[size_t(k)] = 0;
    }
  }
}

void Tile(OpContext& ctx) {
  const Tensor& x = ctx.in(0);
  const std::vector<int64_t> rep = ReadInts(ctx, ctx.in(1));
  if (int64_t(rep.size()) != x.rank())
    throw ctx.Fail(ErrorCode::kShapeMismatch, "repeats must have one entry per axis");
  Shape s = x.shape();
  for (size_t k = 0; k < s.size(); ++k) {
    if (rep[k] < 0) throw ctx.Fail(ErrorCode::kInvalidArgument, "negative repeat");
    if (__builtin_mul_overflow(s[k], rep[k], &s[k]))
      throw ctx.Fail(ErrorCode::kOutOfRange, "a repeated size overflows 64 bits");
  }
  Tensor& out = ctx.out(0, x.dtype(), s);
  const auto in_st = RowMajorStrides<Shape>(x.shape());
  const int64_t r = x.rank();
  std::vector<int64_t> pos(size_t(r), 0);
  for (int64_t o = 0; o < out.numel(); ++o) {
    int64_t src = 0;
    for (int64_t k = 0; k < r; ++k) src += (pos[size_t(k)] % x.shape()[size_t(k)]) * in_st[size_t(k)];
    CopyElement(x, src, out, o);
    for (int64_t k = r - 1; k >= 0; --k) {
      if (++pos[size_t(k)] < s[size_t(k)]) break;
      pos[size_t(k)] = 0;
    }
  }
}

// Range: element i is start + i * delta, computed in the input type as ONNX's
// reference does (one multiply and one add per element, not a running sum).
void Range(OpContext& ctx) {
  const Tensor& ts = ctx.in(0);
  const DType dt = ts.dtype();
  for (size_t k = 0; k < 3; ++k) {
    if (ctx.in(k).dtype() != dt || ctx.in(k).numel() != 1)
      throw ctx.Fail(ErrorCode::kShapeMismatch, "start, limit and delta must be scalars of one element type");
  }
  const bool ok = DispatchNumeric(dt, [&]<class T>() {
    if constexpr (std::is_same_v<T, bool>) {
      throw ctx.Fail(ErrorCode::kTypeMismatch, "unsupported element type");
    } else {
      using C = typename Compute<T>::type;
      const C start = Widen(ts.data<T>()[0]), limit = Widen(ctx.in(1).template data<T>()[0]),
              delta = Widen(ctx.in(2).template data<T>()[0]);
      if (delta == C(0)) throw ctx.Fail(ErrorCode::kInvalidArgument, "delta is 0");
      int64_t cnt = 0;
      if constexpr (std::is_floating_point_v<C>) {
        const double n = (double(limit) - double(start)) / double(delta);
        if (n > 0) {
          if (n > 1e15) throw ctx.Fail(ErrorCode::kOutOfRange, "the range is too long");
          cnt = int64_t(n);
          if (double(cnt) < n) ++cnt;
        }
      } else {
        const int64_t num = int64_t(limit) - int64_t(start), den = int64_t(delta);
        int64_t q = num / den;
        if (q * den != num && ((num < 0) == (den < 0))) ++q;
        cnt = std::max<int64_t>(0, q);
      }
      Tensor& out = ctx.out(0, dt, {cnt});
      for (int64_t i = 0; i < cnt; ++i) {
        if constexpr (std::is_floating_point_v<C>)
          out.mutable_data<T>()[i] = Narrow<T>(start + C(i) * delta);
        else
          out.mutable_data<T>()[i] = T(int64_t(start) + i * int64_t(delta));
      }
    }
  });
  if (!ok) throw ctx.Fail(ErrorCode::kTypeMismatch, "unsupported element type");
}

}  // namespace ops
}  // namespace onemodel::impl
