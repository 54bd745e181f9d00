// The reductions, arg-reductions and the losses (order: ops/math/reduce_layout.h).
//
// Order (exact-contract section 3): the elements an output reduces, taken in row-major
// order, are summed with the canonical L-lane split when the innermost axis is among
// the reduced axes (they then form contiguous runs), and folded left to right
// otherwise. Sums start at -0.0. Max/min are order-free (IEEE 754-2019 rules).
// Products fold left to right from 1. Narrow floats compute in f32 and round once.
#include <cmath>
#include <limits>

#include "core/exact.h"
#include "core/index.h"
#include "ref/math.h"
#include "ops/ops.h"
#include "ops/math/reduce_layout.h"
#include "ops/parallel.h"
#include "ref/reduce.h"
#include "ops/util.h"

namespace onemodel::impl {
namespace ops {

ReduceLayout MakeReduceLayout(const OpContext& ctx, const Shape& in, const Shape& axes, bool keepdims, bool noop) {
  const int64_t r = int64_t(in.size());
  Shape red(size_t(r), 0);
  if (axes.empty() && !noop) {
    for (int64_t k = 0; k < r; ++k) red[size_t(k)] = 1;
  } else {
    for (int64_t a : axes) red[size_t(NormAxis(ctx, a, r))] = 1;
  }
  ReduceLayout p;
  Shape stride(size_t(r), 1);
  for (int64_t k = r - 1; k > 0; --k) stride[size_t(k - 1)] = stride[size_t(k)] * in[size_t(k)];
  Shape kept, reduced_dims;
  Shape kept_stride, red_stride;
  for (int64_t k = 0; k < r; ++k) {
    if (red[size_t(k)]) {
      reduced_dims.push_back(in[size_t(k)]);
      red_stride.push_back(stride[size_t(k)]);
      if (keepdims) p.out_shape.push_back(1);
    } else {
      kept.push_back(in[size_t(k)]);
      kept_stride.push_back(stride[size_t(k)]);
      p.out_shape.push_back(in[size_t(k)]);
    }
  }
  p.lanes = r > 0 && red[size_t(r - 1)];
  // Each multi-index's offset, in row-major order (the position held inline: a steady
  // run takes nothing from the heap for it).
  auto enumerate = [](const Shape& dims, const Shape& st) {
    IndexTable v(static_cast<size_t>(ProductOf(dims)));
    Shape pos(dims.size(), 0);
    for (size_t i = 0; i < v.size(); ++i) {
      int64_t off = 0;
      for (size_t k = 0; k < dims.size(); ++k) off += pos[k] * st[k];
      v[i] = off;
      for (size_t k = dims.size(); k-- > 0;) {
        if (++pos[k] < dims[k]) break;
        pos[k] = 0;
      }
    }
    return v;
  };
  p.base = enumerate(kept, kept_stride);
  p.offsets = enumerate(reduced_dims, red_stride);
  p.outputs = int64_t(p.base.size());
  p.per_output = int64_t(p.offsets.size());
  return p;
}

namespace {

enum class Red { kSum, kMean, kMax, kMin, kProd, kL1, kL2, kSumSquare, kLogSum, kLogSumExp };

// One output's reduction of the n elements at(0..n) (row: the first, for a contiguous
// float sum, which goes to the session's sum kernel: the same canonical order).
template <class T, class C, class At>
C ReduceOne(const OpContext& ctx, Red kind, int64_t n, bool lanes, bool contiguous, const T* row, At at) {
  C r{};
  switch (kind) {
    case Red::kSum:
      if constexpr (std::is_same_v<T, float>) {
        // A contiguous run in the canonical order: the session's sum kernel.
        if (contiguous) {
          r = ctx.kernels->SumF32(row, size_t(n));
          break;
        }
      }
      r = SumOrdered<C>(n, lanes, at);
      break;
    case Red::kMean: {
      const C s = SumOrdered<C>(n, lanes, at);
      if constexpr (std::is_floating_point_v<C>)
        r = s / C(n);
      else
        r = n ? C(s / C(n)) : C(0);
      break;
    }
    case Red::kSumSquare:
      r = SumOrdered<C>(n, lanes, [&](int64_t i) {
        const C v = at(i);
        if constexpr (std::is_integral_v<C>) {
          using U = std::make_unsigned_t<C>;  // wrapping, as the sums (reduce_layout.h)
          return C(U(U(v) * U(v)));
        } else {
          return C(v * v);
        }
      });
      break;
    case Red::kL1:
      r = SumOrdered<C>(n, lanes, [&](int64_t i) {
        const C v = at(i);
        if constexpr (std::is_integral_v<C>) {
          using U = std::make_unsigned_t<C>;
          return v < C(0) ? C(U(0) - U(v)) : v;
        } else {
          return v < C(0) ? C(-v) : v;
        }
      });
      break;
    case Red::kL2:
      if constexpr (std::is_floating_point_v<C>) {
        r = SqrtC(SumOrdered<C>(n, lanes, [&](int64_t i) {
          const C v = at(i);
          return v * v;
        }));
      } else {
        throw ctx.Fail(ErrorCode::kUnsupportedOp, "integer ReduceL2 is not supported");
      }
      break;
    case Red::kLogSum:
      if constexpr (std::is_floating_point_v<C>)
        r = LogC(SumOrdered<C>(n, lanes, at));
      else
        throw ctx.Fail(ErrorCode::kTypeMismatch, "input must be floating point");
      break;
    case Red::kLogSumExp:
      if constexpr (std::is_floating_point_v<C>) {
        C m = -std::numeric_limits<C>::infinity();
        for (int64_t i = 0; i < n; ++i) m = MaxOf(m, at(i));
        if (n == 0 || m == -std::numeric_limits<C>::infinity() || m == std::numeric_limits<C>::infinity()) {
          r = LogC(SumOrdered<C>(n, lanes, [&](int64_t i) { return ExpC(at(i)); }));
        } else {
          r = LogC(SumOrdered<C>(n, lanes, [&](int64_t i) { return ExpC(C(at(i) - m)); })) + m;
        }
      } else {
        throw ctx.Fail(ErrorCode::kTypeMismatch, "input must be floating point");
      }
      break;
    case Red::kMax:
    case Red::kMin: {
      C acc;
      if constexpr (std::is_floating_point_v<C>)
        acc = kind == Red::kMax ? -std::numeric_limits<C>::infinity() : std::numeric_limits<C>::infinity();
      else
        acc = kind == Red::kMax ? std::numeric_limits<C>::lowest() : std::numeric_limits<C>::max();
      for (int64_t i = 0; i < n; ++i) acc = kind == Red::kMax ? MaxOf(acc, at(i)) : MinOf(acc, at(i));
      r = acc;
      break;
    }
    case Red::kProd: {
      if constexpr (std::is_floating_point_v<C>) {
        C acc = C(1);
        for (int64_t i = 0; i < n; ++i) acc = acc * at(i);
        r = acc;
      } else {
        using U = std::make_unsigned_t<C>;
        U acc = 1;
        for (int64_t i = 0; i < n; ++i) acc = U(acc * U(at(i)));
        r = C(acc);
      }
      break;
    }
  }
  return r;
}

void Reduce(OpContext& ctx, Red kind, int64_t axes_input_since) {
  const Tensor& x = ctx.in(0);
  Shape axes;
  bool axes_given_empty = false;
  if (ctx.opset >= axes_input_since) {
    if (ctx.has_input(1)) {
      axes = ReadInts(ctx, ctx.in(1));
      axes_given_empty = axes.empty();
    }
  } else {
    axes = ctx.attr_dims("axes");
  }
  (void)axes_given_empty;
  const bool keepdims = ctx.attr_i("keepdims", 1) != 0;
  const bool noop = ctx.attr_i("noop_with_empty_axes", 0) != 0;
  const ReduceLayout p = MakeReduceLayout(ctx, x.shape(), axes, keepdims, noop);
  Tensor& out = ctx.out(0, x.dtype(), p.out_shape);
  if (x.dtype() == DType::kBool && (kind == Red::kMax || kind == Red::kMin)) {  // any / all
    for (int64_t o = 0; o < p.outputs; ++o) {
      bool acc = kind == Red::kMin;
      for (int64_t i = 0; i < p.per_output; ++i) {
        const bool v = x.data<uint8_t>()[p.base[size_t(o)] + p.offsets[size_t(i)]] != 0;
        acc = kind == Red::kMax ? (acc || v) : (acc && v);
      }
      out.mutable_data<uint8_t>()[o] = acc;
    }
    return;
  }
  const bool ok = DispatchNumeric(x.dtype(), [&]<class T>() {
    using C = typename Compute<T>::type;
    if constexpr (std::is_same_v<T, bool>) {
      throw ctx.Fail(ErrorCode::kTypeMismatch, "bool input is not supported");
    } else {
      const T* px = x.data<T>();
      T* po = out.mutable_data<T>();
      const int64_t n = p.per_output;
      // Only a float sum can go to the sum kernel; only then check the run is contiguous.
      bool contiguous = kind == Red::kSum && std::is_same_v<T, float> && p.lanes && ctx.kernels;
      for (int64_t i = 0; contiguous && i < n; ++i) contiguous = p.offsets[size_t(i)] == i;
      for (int64_t o = 0; o < p.outputs; ++o) {
        const T* row = px + p.base[size_t(o)];
        auto at = [&](int64_t i) -> C { return Widen(row[p.offsets[size_t(i)]]); };
        po[o] = Narrow<T>(ReduceOne<T, C>(ctx, kind, n, p.lanes, contiguous, row, at));
      }
    }
  });
  if (!ok) throw ctx.Fail(ErrorCode::kTypeMismatch, "element type " + DTypeName(x.dtype()) + " is not supported");
}

void ArgReduce(OpContext& ctx, bool is_max) {
  const Tensor& x = ctx.in(0);
  const int64_t axis = NormAxis(ctx, ctx.attr_i("axis", 0), x.rank());
  const bool keepdims = ctx.attr_i("keepdims", 1) != 0;
  const bool last = ctx.attr_i("select_last_index", 0) != 0;
  const ReduceLayout p = MakeReduceLayout(ctx, x.shape(), Shape{axis}, keepdims, false);
  if (p.per_output == 0 && p.outputs > 0)
    throw ctx.Fail(ErrorCode::kInvalidArgument, "the axis is empty: no index to pick");
  Tensor& out = ctx.out(0, DType::kInt64, p.out_shape);
  const bool ok = DispatchNumeric(x.dtype(), [&]<class T>() {
    const T* px = x.data<T>();
    for (int64_t o = 0; o < p.outputs; ++o) {
      const T* row = px + p.base[size_t(o)];
      int64_t best = 0;
      auto v0 = Widen(row[p.offsets[0]]);
      for (int64_t i = 1; i < p.per_output; ++i) {
        const auto v = Widen(row[p.offsets[size_t(i)]]);
        bool take;
        // NaN counts as the extreme (numpy's argmax/argmin): the first NaN wins.
        if (v0 != v0)
          take = last && v != v;
        else if (v != v)
          take = true;
        else
          take = is_max ? (last ? v >= v0 : v > v0) : (last ? v <= v0 : v < v0);
        if (take) {
          best = i;
          v0 = v;
        }
      }
      out.mutable_data<int64_t>()[o] = best;
    }
  });
  if (!ok) throw ctx.Fail(ErrorCode::kTypeMismatch, "element type " + DTypeName(x.dtype()) + " is not supported");
}

// Negative log-likelihood of log-probabilities lp [N, C, d...] (as f32 values) at
// targets [N, d...]; writes the loss tensor (reduction none) or its sum / weighted mean.
// Sums over all loss elements use the canonical order over the flattened losses.
void NllFrom(OpContext& ctx, const std::vector<float>& lp, const Shape& in_shape, const Tensor& target,
             const Tensor* weight, size_t out_index, DType out_type) {
  const std::string red = ctx.attr_s("reduction", "mean");
  const bool has_ignore = ctx.has_attr("ignore_index");
  const int64_t ignore = ctx.attr_i("ignore_index", 0);
  if (in_shape.size() < 2) throw ctx.Fail(ErrorCode::kShapeMismatch, "the input must be [N, C, ...]");
  const int64_t N = in_shape[0], C = in_shape[1];
  int64_t D = 1;
  for (size_t k = 2; k < in_shape.size(); ++k) D *= in_shape[k];
  const auto tv = ReadInts(ctx, target);
  if (int64_t(tv.size()) != N * D)
    throw ctx.Fail(ErrorCode::kShapeMismatch, "the target must be [N, ...] of the input");
  if (weight && weight->numel() != C)
    throw ctx.Fail(ErrorCode::kShapeMismatch, "the weight must hold one value per class");
  std::vector<float> w;
  if (weight) {
    w.resize(static_cast<size_t>(weight->numel()));
    DispatchNumeric(weight->dtype(), [&]<class T>() {
      for (int64_t i = 0; i < weight->numel(); ++i) w[size_t(i)] = float(Widen(weight->data<T>()[i]));
    });
  }
  std::vector<float> loss(static_cast<size_t>(N * D)), wt(static_cast<size_t>(N * D));
  for (int64_t n = 0; n < N; ++n)
    for (int64_t d = 0; d < D; ++d) {
      const int64_t t = tv[size_t(n * D + d)];
      const size_t i = size_t(n * D + d);
      if (has_ignore && t == ignore) {
        loss[i] = 0.0f;
        wt[i] = 0.0f;
        continue;
      }
      if (t < 0 || t >= C)
        throw ctx.Fail(ErrorCode::kInvalidArgument, "target " + std::to_string(t) + " is out of range");
      const float wi = weight ? w[size_t(t)] : 1.0f;
      const float v = -lp[size_t((n * C + t) * D + d)];
      loss[i] = weight ? wi * v : v;
      wt[i] = wi;
    }
  auto store = [](Tensor& o, int64_t i, float v) { StoreF32(o, i, v); };
  if (red == "none") {
    Tensor& o = ctx.out(out_index, out_type, target.shape());
    for (size_t i = 0; i < loss.size(); ++i) store(o, int64_t(i), loss[i]);
    return;
  }
  const int64_t m = int64_t(loss.size());
  const float sum = SumOrdered<float>(m, true, [&](int64_t i) { return loss[size_t(i)]; });
  Tensor& o = ctx.out(out_index, out_type, {});
  if (red == "sum") {
    store(o, 0, sum);
    return;
  }
  if (red != "mean") throw ctx.Fail(ErrorCode::kInvalidModel, "reduction must be none, sum or mean");
  if (weight || has_ignore) {
    const float ws = SumOrdered<float>(m, true, [&](int64_t i) { return wt[size_t(i)]; });
    store(o, 0, sum / ws);
  } else {
    store(o, 0, sum / float(m));
  }
}

}  // namespace

void NegativeLogLikelihoodLoss(OpContext& ctx) {
  const Tensor& x = ctx.in(0);
  if (x.dtype() == DType::kDouble) throw ctx.Fail(ErrorCode::kUnsupportedOp, "double inputs are not supported yet");
  NllFrom(ctx, ToF32(ctx, x), x.shape(), ctx.in(1), ctx.has_input(2) ? &ctx.in(2) : nullptr, 0, x.dtype());
}

// log_prob = LogSoftmax over axis 1 (the softmax family's order), then the NLL.
void SoftmaxCrossEntropyLoss(OpContext& ctx) {
  const Tensor& x = ctx.in(0);
  if (x.dtype() == DType::kDouble) throw ctx.Fail(ErrorCode::kUnsupportedOp, "double inputs are not supported yet");
  const std::vector<float> xv = ToF32(ctx, x);
  const ReduceLayout p = MakeReduceLayout(ctx, x.shape(), {1}, true, false);
  std::vector<float> lp(xv.size());
  std::vector<float> e(static_cast<size_t>(p.per_output));
  for (int64_t o = 0; o < p.outputs; ++o) {
    const int64_t b = p.base[size_t(o)];
    auto at = [&](int64_t i) { return xv[size_t(b + p.offsets[size_t(i)])]; };
    float m = -std::numeric_limits<float>::infinity();
    for (int64_t i = 0; i < p.per_output; ++i) m = MaxOf(m, at(i));
    for (int64_t i = 0; i < p.per_output; ++i) e[size_t(i)] = math::Exp(at(i) - m);
    const float ls = math::Log(SumOrdered<float>(p.per_output, p.lanes, [&](int64_t i) { return e[size_t(i)]; }));
    for (int64_t i = 0; i < p.per_output; ++i) lp[size_t(b + p.offsets[size_t(i)])] = (at(i) - m) - ls;
  }
  NllFrom(ctx, lp, x.shape(), ctx.in(1), ctx.has_input(2) ? &ctx.in(2) : nullptr, 0, x.dtype());
  if (ctx.wants_output(1)) {
    Tensor& o = ctx.out(1, x.dtype(), x.shape());
    for (size_t i = 0; i < lp.size(); ++i) StoreF32(o, int64_t(i), lp[i]);
  }
}

void ReduceSum(OpContext& ctx) { Reduce(ctx, Red::kSum, 13); }
void ReduceMean(OpContext& ctx) { Reduce(ctx, Red::kMean, 18); }
void ReduceMax(OpContext& ctx) { Reduce(ctx, Red::kMax, 18); }
void ReduceMin(OpContext& ctx) { Reduce(ctx, Red::kMin, 18); }
void ReduceProd(OpContext& ctx) { Reduce(ctx, Red::kProd, 18); }
void ReduceL1(OpContext& ctx) { Reduce(ctx, Red::kL1, 18); }
void ReduceL2(OpContext& ctx) { Reduce(ctx, Red::kL2, 18); }
void ReduceSumSquare(OpContext& ctx) { Reduce(ctx, Red::kSumSquare, 18); }
void ReduceLogSum(OpContext& ctx) { Reduce(ctx, Red::kLogSum, 18); }
void ReduceLogSumExp(OpContext& ctx) { Reduce(ctx, Red::kLogSumExp, 18); }
void ArgMax(OpContext& ctx) { ArgReduce(ctx, true); }
void ArgMin(OpContext& ctx) { ArgReduce(ctx, false); }

}  // namespace ops
}  // namespace onemodel::impl
