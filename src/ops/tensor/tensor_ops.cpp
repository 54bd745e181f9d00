// Reference indexing, scatter/gather, Unique, TensorScatter and other tensor operators.
// Data movement only, except CumSum/CumProd (a running fold along the axis, in index order), Mean
// (inputs folded left to right, then one division) and Shrink.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>

#include "core/random.h"
#include "core/index.h"
#include "ops/ops.h"
#include "ops/parallel.h"
#include "ops/util.h"

namespace onemodel::impl {
namespace ops {
namespace {

int64_t FixIndex(const OpContext& ctx, int64_t j, int64_t dim) {
  const int64_t jj = j < 0 ? j + dim : j;
  if (jj < 0 || jj >= dim) {
    throw ctx.Fail(ErrorCode::kInvalidArgument,
                   "index " + std::to_string(j) + " is out of range for a dimension of " + std::to_string(dim));
  }
  return jj;
}

// out[i] = reduce(out[i], upd) for ScatterElements/ScatterND reductions.
void ApplyReduction(const OpContext& ctx, const std::string& red, const Tensor& upd, int64_t ui, Tensor& out,
                    int64_t oi) {
  if (red == "none") {
    CopyElement(upd, ui, out, oi);
    return;
  }
  const bool ok = DispatchNumeric(out.dtype(), [&]<class T>() {
    if constexpr (std::is_same_v<T, bool>) {
      throw ctx.Fail(ErrorCode::kTypeMismatch, "bool reduction is not supported");
    } else {
      using C = typename Compute<T>::type;
      const C a = Widen(out.data<T>()[oi]), b = Widen(upd.data<T>()[ui]);
      C r;
      if (red == "add")
        r = C(a + b);
      else if (red == "mul")
        r = C(a * b);
      else if (red == "max")
        r = (a != a || b != b) ? C(a + b) : (a > b ? a : b);
      else if (red == "min")
        r = (a != a || b != b) ? C(a + b) : (a < b ? a : b);
      else
        throw ctx.Fail(ErrorCode::kInvalidModel, "unknown reduction '" + red + "'");
      out.mutable_data<T>()[oi] = Narrow<T>(r);
    }
  });
  if (!ok) throw ctx.Fail(ErrorCode::kTypeMismatch, "unsupported element type");
}

Tensor CopyOf(const Tensor& x) {
  Tensor t(x.dtype(), x.shape());
  if (x.dtype() == DType::kString)
    t.mutable_strings() = x.strings();
  else if (x.nbytes())
    std::memcpy(t.mutable_data<uint8_t>(), x.raw(), x.nbytes());
  return t;
}

}  // namespace

void Split(OpContext& ctx) {
  const Tensor& x = ctx.in(0);
  const int64_t axis = NormAxis(ctx, ctx.attr_i("axis", 0), x.rank());
  const int64_t dim = x.shape()[size_t(axis)];
  const size_t nout = ctx.node.outputs.size();
  std::vector<int64_t> sizes;
  if (ctx.opset >= 13 && ctx.has_input(1))
    sizes = ReadInts(ctx, ctx.in(1));
  else if (ctx.opset < 13)
    sizes = ctx.attr_ints("split");
  if (sizes.empty()) {
    const int64_t n = ctx.has_attr("num_outputs") ? ctx.attr_i("num_outputs", 1) : int64_t(nout);
    const int64_t chunk = (dim + n - 1) / n;
    for (int64_t i = 0; i < n; ++i) sizes.push_back(std::max<int64_t>(0, std::min(chunk, dim - i * chunk)));
  }
  if (sizes.size() != nout) throw ctx.Fail(ErrorCode::kInvalidModel, "split sizes do not match the number of outputs");
  if (std::accumulate(sizes.begin(), sizes.end(), int64_t(0)) != dim)
    throw ctx.Fail(ErrorCode::kShapeMismatch, "split sizes do not add up to the axis");
  int64_t outer = 1, inner = 1;
  for (int64_t k = 0; k < axis; ++k) outer *= x.shape()[size_t(k)];
  for (int64_t k = axis + 1; k < x.rank(); ++k) inner *= x.shape()[size_t(k)];
  int64_t start = 0;
  for (size_t o = 0; o < nout; ++o) {
    Shape s = x.shape();
    s[size_t(axis)] = sizes[o];
    Tensor& out = ctx.out(o, x.dtype(), s);
    int64_t w = 0;
    for (int64_t b = 0; b < outer; ++b)
      for (int64_t j = 0; j < sizes[o] * inner; ++j) CopyElement(x, (b * dim + start) * inner + j, out, w++);
    start += sizes[o];
  }
}

void GatherElements(OpContext& ctx) {
  const Tensor& x = ctx.in(0);
  const Tensor& ind = ctx.in(1);
  const int64_t axis = NormAxis(ctx, ctx.attr_i("axis", 0), x.rank());
  const auto idx = ReadInts(ctx, ind);
  if (ind.rank() != x.rank()) throw ctx.Fail(ErrorCode::kShapeMismatch, "indices must have the data's rank");
  for (int64_t k = 0; k < x.rank(); ++k) {
    if (k != axis && ind.shape()[size_t(k)] > x.shape()[size_t(k)])
      throw ctx.Fail(ErrorCode::kShapeMismatch, "indices may not be larger than the data off the axis");
  }
  Tensor& out = ctx.out(0, x.dtype(), ind.shape());
  const auto st = RowMajorStrides(x.shape());
  ForEachIndex(ind.shape(), [&](int64_t i, const std::vector<int64_t>& pos) {
    int64_t src = 0;
    for (size_t k = 0; k < pos.size(); ++k) {
      const int64_t p = int64_t(k) == axis ? FixIndex(ctx, idx[size_t(i)], x.shape()[k]) : pos[k];
      src += p * st[k];
    }
    CopyElement(x, src, out, i);
  });
}

void ScatterElements(OpContext& ctx) {
  const Tensor& x = ctx.in(0);
  const Tensor& ind = ctx.in(1);
  const Tensor& upd = ctx.in(2);
  const int64_t axis = NormAxis(ctx, ctx.attr_i("axis", 0), x.rank());
  const std::string red = ctx.attr_s("reduction", "none");
  const auto idx = ReadInts(ctx, ind);
  if (ind.rank() != x.rank() || upd.shape() != ind.shape() || upd.dtype() != x.dtype())
    throw ctx.Fail(ErrorCode::kShapeMismatch,
                   "indices must have the data's rank, updates the indices' shape and the data's type");
  for (int64_t k = 0; k < x.rank(); ++k) {
    if (k != axis && ind.shape()[size_t(k)] > x.shape()[size_t(k)])
      throw ctx.Fail(ErrorCode::kShapeMismatch, "indices may not be larger than the data off the axis");
  }
  Tensor out = CopyOf(x);
  const auto st = RowMajorStrides(x.shape());
  ForEachIndex(ind.shape(), [&](int64_t i, const std::vector<int64_t>& pos) {
    int64_t dst = 0;
    for (size_t k = 0; k < pos.size(); ++k) {
      const int64_t p = int64_t(k) == axis ? FixIndex(ctx, idx[size_t(i)], x.shape()[k]) : pos[k];
      dst += p * st[k];
    }
    ApplyReduction(ctx, red, upd, i, out, dst);
  });
  ctx.set_out(0, out);
}

void Scatter(OpContext& ctx) { ScatterElements(ctx); }

void ScatterND(OpContext& ctx) {
  const Tensor& x = ctx.in(0);
  const Tensor& ind = ctx.in(1);
  const Tensor& upd = ctx.in(2);
  const std::string red = ctx.attr_s("reduction", "none");
  const auto idx = ReadInts(ctx, ind);
  const int64_t q = ind.rank(), k = ind.shape().back();
  Tensor out = CopyOf(x);
  const auto st = RowMajorStrides(x.shape());
  int64_t slice = 1;
  for (int64_t d = k; d < x.rank(); ++d) slice *= x.shape()[size_t(d)];
  const int64_t nidx = k ? int64_t(idx.size()) / k : 0;
  (void)q;
  for (int64_t i = 0; i < nidx; ++i) {
    int64_t base = 0;
    for (int64_t d = 0; d < k; ++d) base += FixIndex(ctx, idx[size_t(i * k + d)], x.shape()[size_t(d)]) * st[size_t(d)];
    for (int64_t j = 0; j < slice; ++j) ApplyReduction(ctx, red, upd, i * slice + j, out, base + j);
  }
  ctx.set_out(0, out);
}

void GatherND(OpContext& ctx) {
  const Tensor& x = ctx.in(0);
  const Tensor& ind = ctx.in(1);
  const int64_t b = ctx.attr_i("batch_dims", 0);
  const auto idx = ReadInts(ctx, ind);
  const int64_t k = ind.shape().back();
  Shape s(ind.shape().begin(), ind.shape().end() - 1);
  for (int64_t d = b + k; d < x.rank(); ++d) s.push_back(x.shape()[size_t(d)]);
  Tensor& out = ctx.out(0, x.dtype(), s);
  const auto st = RowMajorStrides(x.shape());
  int64_t batch = 1;
  for (int64_t d = 0; d < b; ++d) batch *= x.shape()[size_t(d)];
  int64_t slice = 1;
  for (int64_t d = b + k; d < x.rank(); ++d) slice *= x.shape()[size_t(d)];
  const int64_t nidx = int64_t(idx.size()) / std::max<int64_t>(k, 1);
  const int64_t per_batch = nidx / std::max<int64_t>(batch, 1);
  int64_t w = 0;
  for (int64_t i = 0; i < nidx; ++i) {
    const int64_t bi = per_batch ? i / per_batch : 0;
    int64_t base = b ? bi * st[size_t(b - 1)] : 0;
    for (int64_t d = 0; d < k; ++d)
      base += FixIndex(ctx, idx[size_t(i * k + d)], x.shape()[size_t(b + d)]) * st[size_t(b + d)];
    for (int64_t j = 0; j < slice; ++j) CopyElement(x, base + j, out, w++);
  }
}

void Trilu(OpContext& ctx) {
  const Tensor& x = ctx.in(0);
  const bool upper = ctx.attr_i("upper", 1) != 0;
  const int64_t k = ctx.has_input(1) ? ReadInts(ctx, ctx.in(1))[0] : 0;
  ctx.RequireRank(x, 2);
  Tensor out(x.dtype(), x.shape());
  const int64_t R = x.shape()[size_t(x.rank() - 2)], C = x.shape().back();
  ForEachIndex(x.shape(), [&](int64_t i, const std::vector<int64_t>& pos) {
    const int64_t r = pos[pos.size() - 2], c = pos.back();
    const bool keep = upper ? (c - r >= k) : (c - r <= k);
    if (keep) CopyElement(x, i, out, i);
  });
  (void)R;
  (void)C;
  ctx.set_out(0, out);
}

namespace {
void Cumulative(OpContext& ctx, bool product) {
  const Tensor& x = ctx.in(0);
  const int64_t axis = NormAxis(ctx, ReadInts(ctx, ctx.in(1))[0], x.rank());
  const bool exclusive = ctx.attr_i("exclusive", 0) != 0, reverse = ctx.attr_i("reverse", 0) != 0;
  Tensor& out = ctx.out(0, x.dtype(), x.shape());
  const int64_t dim = x.shape()[size_t(axis)];
  int64_t outer = 1, inner = 1;
  for (int64_t k = 0; k < axis; ++k) outer *= x.shape()[size_t(k)];
  for (int64_t k = axis + 1; k < x.rank(); ++k) inner *= x.shape()[size_t(k)];
  const bool ok = DispatchNumeric(x.dtype(), [&]<class T>() {
    if constexpr (std::is_same_v<T, bool>) {
      throw ctx.Fail(ErrorCode::kTypeMismatch, "bool is not supported");
    } else {
      using C = typename Compute<T>::type;
      for (int64_t b = 0; b < outer; ++b) {
        for (int64_t j = 0; j < inner; ++j) {
          C acc = product ? C(1) : C(0);
          if constexpr (std::is_floating_point_v<C>)
            if (!product) acc = C(-0.0);
          for (int64_t t = 0; t < dim; ++t) {
            const int64_t i = reverse ? dim - 1 - t : t;
            const int64_t off = (b * dim + i) * inner + j;
            const C v = Widen(x.data<T>()[off]);
            if (exclusive) {
              out.mutable_data<T>()[off] = Narrow<T>(acc);
            }
            if constexpr (std::is_floating_point_v<C>)
              acc = product ? acc * v : acc + v;
            else {
              using U = std::make_unsigned_t<C>;
              acc = product ? C(U(acc) * U(v)) : C(U(acc) + U(v));
            }
            if (!exclusive) out.mutable_data<T>()[off] = Narrow<T>(acc);
          }
        }
      }
    }
  });
  if (!ok) throw ctx.Fail(ErrorCode::kTypeMismatch, "unsupported element type");
}
}  // namespace

void CumSum(OpContext& ctx) { Cumulative(ctx, false); }
void CumProd(OpContext& ctx) { Cumulative(ctx, true); }

void OneHot(OpContext& ctx) {
  const Tensor& ind = ctx.in(0);
  const Tensor& depth_t = ctx.in(1);
  const Tensor& values = ctx.in(2);
  if (depth_t.numel() != 1 || values.numel() != 2)
    throw ctx.Fail(ErrorCode::kShapeMismatch, "depth must hold one value and values two");
  double depth_d = 0;
  DispatchNumeric(depth_t.dtype(), [&]<class T>() { depth_d = double(Widen(depth_t.data<T>()[0])); });
  if (!(depth_d >= 1.0 && depth_d < 4294967296.0))
    throw ctx.Fail(ErrorCode::kInvalidArgument, "depth must be in [1, 2^32)");
  const int64_t depth = int64_t(depth_d);
  const int64_t axis = NormAxis(ctx, ctx.attr_i("axis", -1), ind.rank() + 1);  // an axis of the output
  Shape s = ind.shape();
  s.insert(s.begin() + axis, depth);
  Tensor& out = ctx.out(0, values.dtype(), s);
  std::vector<int64_t> iv(static_cast<size_t>(ind.numel()));
  DispatchNumeric(ind.dtype(), [&]<class T>() {
    for (int64_t i = 0; i < ind.numel(); ++i) iv[size_t(i)] = int64_t(double(Widen(ind.data<T>()[i])));
  });
  ForEachIndex(s, [&](int64_t o, const std::vector<int64_t>& pos) {
    int64_t src = 0, mul = 1;
    for (int64_t k = int64_t(s.size()) - 1; k >= 0; --k) {
      if (k == axis) continue;
      src += pos[size_t(k)] * mul;
      mul *= s[size_t(k)];
    }
    int64_t want = iv[size_t(src)];
    if (want < 0) want += depth;
    CopyElement(values, pos[size_t(axis)] == want ? 1 : 0, out, o);
  });
}

void EyeLike(OpContext& ctx) {
  const Tensor& x = ctx.in(0);
  const DType dt = ctx.has_attr("dtype") ? DType(ctx.attr_i("dtype", 1)) : x.dtype();
  const int64_t k = ctx.attr_i("k", 0);
  if (x.rank() != 2) throw ctx.Fail(ErrorCode::kShapeMismatch, "input must be 2-D");
  Tensor& out = ctx.out(0, dt, x.shape());
  const bool ok = DispatchNumeric(dt, [&]<class T>() {
    for (int64_t r = 0; r < x.shape()[0]; ++r) {
      const int64_t c = r + k;
      if (c >= 0 && c < x.shape()[1])
        out.mutable_data<T>()[r * x.shape()[1] + c] = Narrow<T>(typename Compute<T>::type(1));
    }
  });
  if (!ok) throw ctx.Fail(ErrorCode::kTypeMismatch, "unsupported element type");
}

void Compress(OpContext& ctx) {
  const Tensor& x = ctx.in(0);
  const Tensor& cond = ctx.in(1);
  std::vector<int64_t> keep;
  for (int64_t i = 0; i < cond.numel(); ++i)
    if (cond.data<uint8_t>()[i]) keep.push_back(i);
  if (!ctx.has_attr("axis")) {
    std::vector<int64_t> k2;
    for (int64_t i : keep)
      if (i < x.numel()) k2.push_back(i);
    Tensor& out = ctx.out(0, x.dtype(), {int64_t(k2.size())});
    for (size_t i = 0; i < k2.size(); ++i) CopyElement(x, k2[i], out, int64_t(i));
    return;
  }
  const int64_t axis = NormAxis(ctx, ctx.attr_i("axis", 0), x.rank());
  const int64_t dim = x.shape()[size_t(axis)];
  std::vector<int64_t> k2;
  for (int64_t i : keep)
    if (i < dim) k2.push_back(i);
  Shape s = x.shape();
  s[size_t(axis)] = int64_t(k2.size());
  Tensor& out = ctx.out(0, x.dtype(), s);
  int64_t outer = 1, inner = 1;
  for (int64_t k = 0; k < axis; ++k) outer *= x.shape()[size_t(k)];
  for (int64_t k = axis + 1; k < x.rank(); ++k) inner *= x.shape()[size_t(k)];
  int64_t w = 0;
  for (int64_t b = 0; b < outer; ++b)
    for (int64_t i : k2)
      for (int64_t j = 0; j < inner; ++j) CopyElement(x, (b * dim + i) * inner + j, out, w++);
}

void NonZero(OpContext& ctx) {
  const Tensor& x = ctx.in(0);
  std::vector<std::vector<int64_t>> hits;
  std::vector<bool> nz(static_cast<size_t>(x.numel()));
  DispatchNumeric(x.dtype(), [&]<class T>() {
    for (int64_t i = 0; i < x.numel(); ++i) nz[size_t(i)] = Widen(x.data<T>()[i]) != decltype(Widen(x.data<T>()[i]))(0);
  });
  ForEachIndex(x.shape(), [&](int64_t i, const std::vector<int64_t>& pos) {
    if (nz[size_t(i)]) hits.push_back(pos);
  });
  const int64_t r = x.rank(), n = int64_t(hits.size());
  Tensor& out = ctx.out(0, DType::kInt64, {r, n});
  for (int64_t k = 0; k < r; ++k)
    for (int64_t i = 0; i < n; ++i) out.mutable_data<int64_t>()[k * n + i] = hits[size_t(i)][size_t(k)];
}

void TopK(OpContext& ctx) {
  const Tensor& x = ctx.in(0);
  const int64_t k = ctx.opset < 10 ? ctx.attr_i("k", 1) : ReadInts(ctx, ctx.in(1))[0];
  const int64_t axis = NormAxis(ctx, ctx.attr_i("axis", -1), x.rank());
  const bool largest = ctx.attr_i("largest", 1) != 0;
  const int64_t dim = x.shape()[size_t(axis)];
  if (k < 0 || k > dim) throw ctx.Fail(ErrorCode::kInvalidArgument, "k is out of range");
  Shape s = x.shape();
  s[size_t(axis)] = k;
  Tensor& vals = ctx.out(0, x.dtype(), s);
  Tensor& inds = ctx.out(1, DType::kInt64, s);
  int64_t outer = 1, inner = 1;
  for (int64_t q = 0; q < axis; ++q) outer *= x.shape()[size_t(q)];
  for (int64_t q = axis + 1; q < x.rank(); ++q) inner *= x.shape()[size_t(q)];
  const bool ok = DispatchNumeric(x.dtype(), [&]<class T>() {
    std::vector<int64_t> order(static_cast<size_t>(dim));
    for (int64_t b = 0; b < outer; ++b) {
      for (int64_t j = 0; j < inner; ++j) {
        auto v = [&](int64_t i) { return double(Widen(x.data<T>()[(b * dim + i) * inner + j])); };
        std::iota(order.begin(), order.end(), 0);
        // Ties keep the lower index first; NaN counts as the largest value.
        std::stable_sort(order.begin(), order.end(), [&](int64_t p, int64_t q) {
          const double a = v(p), c = v(q);
          if (largest) {
            if (a != a) return c == c;
            if (c != c) return false;
            return a > c;
          }
          if (c != c) return a == a;
          if (a != a) return false;
          return a < c;
        });
        for (int64_t i = 0; i < k; ++i) {
          const int64_t o = (b * k + i) * inner + j;
          vals.mutable_data<T>()[o] = x.data<T>()[(b * dim + order[size_t(i)]) * inner + j];
          inds.mutable_data<int64_t>()[o] = order[size_t(i)];
        }
      }
    }
  });
  if (!ok) throw ctx.Fail(ErrorCode::kTypeMismatch, "unsupported element type");
}

namespace {
void SpaceDepth(OpContext& ctx, bool to_depth) {
  const Tensor& x = ctx.in(0);
  const int64_t bs = ctx.attr_i("blocksize", 0);
  if (x.rank() != 4 || bs <= 0) throw ctx.Fail(ErrorCode::kShapeMismatch, "needs a 4-D input and blocksize > 0");
  const int64_t N = x.shape()[0], C = x.shape()[1], H = x.shape()[2], W = x.shape()[3];
  const bool crd = ctx.attr_s("mode", "DCR") == "CRD";
  Shape s = to_depth ? Shape{N, C * bs * bs, H / bs, W / bs} : Shape{N, C / (bs * bs), H * bs, W * bs};
  Tensor& out = ctx.out(0, x.dtype(), s);
  ForEachIndex(s, [&](int64_t o, const std::vector<int64_t>& p) {
    int64_t n = p[0], c, h, w;
    if (to_depth) {
      const int64_t oc = p[1], oh = p[2], ow = p[3];
      const int64_t blk = oc / C;
      c = oc % C;
      h = oh * bs + blk / bs;
      w = ow * bs + blk % bs;
    } else {
      const int64_t oc = p[1], oh = p[2], ow = p[3];
      const int64_t Co = C / (bs * bs), bh = oh % bs, bw = ow % bs;
      c = crd ? oc * bs * bs + bh * bs + bw : (bh * bs + bw) * Co + oc;
      h = oh / bs;
      w = ow / bs;
    }
    CopyElement(x, ((n * C + c) * H + h) * W + w, out, o);
  });
}
}  // namespace

void SpaceToDepth(OpContext& ctx) { SpaceDepth(ctx, true); }
void DepthToSpace(OpContext& ctx) { SpaceDepth(ctx, false); }

void ReverseSequence(OpContext& ctx) {
  const Tensor& x = ctx.in(0);
  const auto lens = ReadInts(ctx, ctx.in(1));
  const int64_t ba = ctx.attr_i("batch_axis", 1), ta = ctx.attr_i("time_axis", 0);
  if (x.rank() < 2 || (ba != 0 && ba != 1) || (ta != 0 && ta != 1) || ba == ta) {
    throw ctx.Fail(ErrorCode::kInvalidArgument,
                   "batch_axis and time_axis must be 0 and 1 (either way) of an input of rank >= 2");
  }
  if (int64_t(lens.size()) != x.shape()[size_t(ba)]) {
    throw ctx.Fail(ErrorCode::kShapeMismatch, "sequence_lens has " + std::to_string(lens.size()) +
                                                  " entries for a batch of " + std::to_string(x.shape()[size_t(ba)]));
  }
  for (int64_t l : lens) {
    if (l < 0 || l > x.shape()[size_t(ta)]) {
      throw ctx.Fail(ErrorCode::kInvalidArgument, "a sequence length " + std::to_string(l) + " is outside [0, " +
                                                      std::to_string(x.shape()[size_t(ta)]) + "]");
    }
  }
  Tensor out = CopyOf(x);
  const auto st = RowMajorStrides(x.shape());
  ForEachIndex(x.shape(), [&](int64_t i, const std::vector<int64_t>& pos) {
    const int64_t b = pos[size_t(ba)], t = pos[size_t(ta)];
    if (t < lens[size_t(b)]) {
      const int64_t src = i + (lens[size_t(b)] - 1 - 2 * t) * st[size_t(ta)];
      CopyElement(x, src, out, i);
    }
  });
  ctx.set_out(0, out);
}

void Mean(OpContext& ctx) {
  Tensor acc = ctx.in(0);
  // Folded left to right with Sum's broadcasting, then one division.
  for (size_t i = 1; i < ctx.num_inputs(); ++i) {
    OpContext sub(ctx.node, ctx.opset);
    Value a = Value::FromTensor(acc), b = *ctx.inputs[i];
    sub.inputs = {&a, &b};
    Add(sub);
    acc = sub.outputs[0].tensor;
  }
  Tensor out(acc.dtype(), acc.shape());
  const double n = double(ctx.num_inputs());
  const bool ok = DispatchNumeric(acc.dtype(), [&]<class T>() {
    using C = typename Compute<T>::type;
    for (int64_t i = 0; i < acc.numel(); ++i) out.mutable_data<T>()[i] = Narrow<T>(C(Widen(acc.data<T>()[i]) / C(n)));
  });
  if (!ok) throw ctx.Fail(ErrorCode::kTypeMismatch, "unsupported element type");
  ctx.set_out(0, out);
}

// Dropout. Inference: the identity with an all-true mask. Training mode: mask = u >=
// ratio with u from the seeded generator of the random operators (ops/math/random_ops.cpp,
// values differ from numpy's), y = x * mask / (1 - ratio); ratio 0 keeps everything.
void Dropout(OpContext& ctx) {
  const Tensor& x = ctx.in(0);
  const bool training = ctx.has_input(2) && ctx.in(2).numel() && ctx.in(2).data<uint8_t>()[0];
  float ratio = ctx.opset < 12 ? ctx.attr_f("ratio", 0.5f) : 0.5f;
  if (ctx.has_input(1) && ctx.in(1).numel()) ratio = float(ElementAsDouble(ctx.in(1), 0));
  if (!training || ratio == 0.0f) {
    ctx.set_out(0, CopyOf(x));
    if (ctx.wants_output(1)) {
      Tensor& m = ctx.out(1, DType::kBool, x.shape());
      for (int64_t i = 0; i < m.numel(); ++i) m.mutable_data<uint8_t>()[i] = 1;
    }
    return;
  }
  if (!(ratio > 0.0f && ratio < 1.0f)) throw ctx.Fail(ErrorCode::kInvalidArgument, "ratio must be in [0, 1)");
  uint64_t seed = 1469598103934665603ull;
  if (ctx.has_attr("seed"))
    seed ^= uint64_t(ctx.attr_i("seed", 0)) * 0x9E3779B97F4A7C15ull;
  else
    for (char c : ctx.node.outputs[0]) seed = (seed ^ uint8_t(c)) * 1099511628211ull;
  SplitMix64 rng(seed);
  Tensor& y = ctx.out(0, x.dtype(), x.shape());
  std::vector<uint8_t> keep(static_cast<size_t>(x.numel()));
  for (auto& k : keep) k = float(rng.NextU32() >> 8) * (1.0f / 16777216.0f) >= ratio;
  const float scale = 1.0f / (1.0f - ratio);
  const bool ok = DispatchNumeric(x.dtype(), [&]<class T>() {
    using C = typename Compute<T>::type;
    for (int64_t i = 0; i < x.numel(); ++i)
      y.mutable_data<T>()[i] = Narrow<T>(keep[size_t(i)] ? C(Widen(x.data<T>()[i]) * C(scale)) : C(0));
  });
  if (!ok) throw ctx.Fail(ErrorCode::kTypeMismatch, "unsupported element type");
  if (ctx.wants_output(1)) {
    Tensor& m = ctx.out(1, DType::kBool, x.shape());
    for (int64_t i = 0; i < m.numel(); ++i) m.mutable_data<uint8_t>()[i] = keep[size_t(i)];
  }
}

void Shrink(OpContext& ctx) {
  const float lambd = ctx.attr_f("lambd", 0.5f), bias = ctx.attr_f("bias", 0.0f);
  const Tensor& x = ctx.in(0);
  Tensor& out = ctx.out(0, x.dtype(), x.shape());
  const bool ok = DispatchNumeric(x.dtype(), [&]<class T>() {
    using C = typename Compute<T>::type;
    for (int64_t i = 0; i < x.numel(); ++i) {
      const C v = Widen(x.data<T>()[i]);
      C r = C(0);
      if (double(v) < -double(lambd))
        r = FromDouble<C>(double(v) + double(bias));
      else if (double(v) > double(lambd))
        r = FromDouble<C>(double(v) - double(bias));
      out.mutable_data<T>()[i] = Narrow<T>(r);
    }
  });
  if (!ok) throw ctx.Fail(ErrorCode::kTypeMismatch, "unsupported element type");
}

void Unique(OpContext& ctx) {
  const Tensor& x = ctx.in(0);
  const bool sorted = ctx.attr_i("sorted", 1) != 0;
  const bool has_axis = ctx.has_attr("axis");
  // Slices: the whole flattened tensor's elements, or the slices along `axis`.
  int64_t axis = 0, outer = 1, n = x.numel(), inner = 1;
  if (has_axis) {
    axis = NormAxis(ctx, ctx.attr_i("axis", 0), x.rank());
    n = x.shape()[size_t(axis)];
    for (int64_t k = 0; k < axis; ++k) outer *= x.shape()[size_t(k)];
    for (int64_t k = axis + 1; k < x.rank(); ++k) inner *= x.shape()[size_t(k)];
  }
  std::vector<std::vector<double>> key(static_cast<size_t>(n));
  std::vector<std::vector<std::string>> skey(static_cast<size_t>(n));
  const bool str = x.dtype() == DType::kString;
  for (int64_t i = 0; i < n; ++i)
    for (int64_t b = 0; b < outer; ++b)
      for (int64_t j = 0; j < inner; ++j) {
        const int64_t idx = has_axis ? (b * n + i) * inner + j : i;
        if (str)
          skey[size_t(i)].push_back(x.strings()[size_t(idx)]);
        else
          DispatchNumeric(x.dtype(), [&]<class T>() { key[size_t(i)].push_back(double(Widen(x.data<T>()[idx]))); });
      }
  auto less = [&](int64_t a, int64_t b) {
    return str ? skey[size_t(a)] < skey[size_t(b)] : key[size_t(a)] < key[size_t(b)];
  };
  auto same = [&](int64_t a, int64_t b) {
    return str ? skey[size_t(a)] == skey[size_t(b)] : key[size_t(a)] == key[size_t(b)];
  };
  std::vector<int64_t> first;  // first occurrence of each distinct slice
  std::vector<int64_t> inverse(static_cast<size_t>(n)), counts;
  for (int64_t i = 0; i < n; ++i) {
    int64_t u = -1;
    for (size_t k = 0; k < first.size(); ++k)
      if (same(first[k], i)) {
        u = int64_t(k);
        break;
      }
    if (u < 0) {
      u = int64_t(first.size());
      first.push_back(i);
      counts.push_back(0);
    }
    inverse[size_t(i)] = u;
    counts[size_t(u)]++;
  }
  std::vector<int64_t> order(first.size());
  for (size_t k = 0; k < order.size(); ++k) order[k] = int64_t(k);
  if (sorted)
    std::stable_sort(order.begin(), order.end(),
                     [&](int64_t a, int64_t b) { return less(first[size_t(a)], first[size_t(b)]); });
  std::vector<int64_t> rank(order.size());
  for (size_t k = 0; k < order.size(); ++k) rank[size_t(order[k])] = int64_t(k);
  const int64_t u = int64_t(order.size());
  Shape ys = has_axis ? x.shape() : Shape{u};
  if (has_axis) ys[size_t(axis)] = u;
  Tensor& y = ctx.out(0, x.dtype(), ys);
  for (int64_t k = 0; k < u; ++k) {
    const int64_t src_slice = first[size_t(order[size_t(k)])];
    for (int64_t b = 0; b < outer; ++b)
      for (int64_t j = 0; j < inner; ++j) {
        if (has_axis)
          CopyElement(x, (b * n + src_slice) * inner + j, y, (b * u + k) * inner + j);
        else
          CopyElement(x, src_slice, y, k);
      }
  }
  if (ctx.wants_output(1)) {
    Tensor& t = ctx.out(1, DType::kInt64, {u});
    for (int64_t k = 0; k < u; ++k) t.mutable_data<int64_t>()[k] = first[size_t(order[size_t(k)])];
  }
  if (ctx.wants_output(2)) {
    Tensor& t = ctx.out(2, DType::kInt64, {n});
    for (int64_t i = 0; i < n; ++i) t.mutable_data<int64_t>()[i] = rank[size_t(inverse[size_t(i)])];
  }
  if (ctx.wants_output(3)) {
    Tensor& t = ctx.out(3, DType::kInt64, {u});
    for (int64_t k = 0; k < u; ++k) t.mutable_data<int64_t>()[k] = counts[size_t(order[size_t(k)])];
  }
}

// TensorScatter: writes `update` into a copy of `past_cache` along `axis`, at per-batch
// offsets write_indices (0 by default), wrapping around in circular mode.
void TensorScatter(OpContext& ctx) {
  const Tensor& cache = ctx.in(0);
  const Tensor& upd = ctx.in(1);
  const std::string mode = ctx.attr_s("mode", "linear");
  if (mode != "linear" && mode != "circular")
    throw ctx.Fail(ErrorCode::kInvalidModel, "mode must be linear or circular");
  const int64_t r = cache.rank();
  const int64_t axis = NormAxis(ctx, ctx.attr_i("axis", -2), r);
  if (axis == 0) throw ctx.Fail(ErrorCode::kInvalidModel, "axis cannot be 0, the batch axis");
  if (upd.rank() != r) throw ctx.Fail(ErrorCode::kShapeMismatch, "update must have the cache's rank");
  if (upd.dtype() != cache.dtype())
    throw ctx.Fail(ErrorCode::kTypeMismatch, "update must have the cache's element type");
  for (int64_t k = 0; k < r; ++k) {
    if (k != axis && upd.shape()[size_t(k)] != cache.shape()[size_t(k)])
      throw ctx.Fail(ErrorCode::kShapeMismatch, "update and cache differ off the axis");
  }
  const int64_t B = cache.shape()[0];
  std::vector<int64_t> wi(static_cast<size_t>(B), 0);
  if (ctx.has_input(2)) wi = ReadInts(ctx, ctx.in(2));
  if (int64_t(wi.size()) != B) throw ctx.Fail(ErrorCode::kShapeMismatch, "write_indices must hold one index per batch");
  Tensor out(cache.dtype(), cache.shape());
  for (int64_t i = 0; i < cache.numel(); ++i) CopyElement(cache, i, out, i);
  const int64_t maxlen = cache.shape()[size_t(axis)], len = upd.shape()[size_t(axis)];
  int64_t outer = 1, inner = 1;
  for (int64_t k = 0; k < axis; ++k) outer *= cache.shape()[size_t(k)];
  for (int64_t k = axis + 1; k < r; ++k) inner *= cache.shape()[size_t(k)];
  const int64_t per_batch = outer / std::max<int64_t>(B, 1);
  for (int64_t o = 0; o < outer; ++o) {
    const int64_t b = per_batch ? o / per_batch : 0;
    for (int64_t s = 0; s < len; ++s) {
      int64_t pos = 0;
      if (__builtin_add_overflow(wi[size_t(b)], s, &pos))
        throw ctx.Fail(ErrorCode::kInvalidArgument, "write index out of range");
      if (mode == "circular" && maxlen > 0) pos = ((pos % maxlen) + maxlen) % maxlen;
      if (pos < 0 || pos >= maxlen) throw ctx.Fail(ErrorCode::kInvalidArgument, "write index out of range");
      for (int64_t j = 0; j < inner; ++j)
        CopyElement(upd, (o * len + s) * inner + j, out, (o * maxlen + pos) * inner + j);
    }
  }
  ctx.set_out(0, out);
}

}  // namespace ops
}  // namespace onemodel::impl
