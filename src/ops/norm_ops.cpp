// Reference normalisation operators. Means and variances are sums in the canonical
// order (L-lane when the innermost axis is normalised, else left to right), divided
// once by the count; then y = (x - mean) * (1 / sqrt(var + eps)) * scale + bias, each
// step rounded (no fusion). Narrow floats compute in f32.
#include <cmath>
#include <optional>

#include "core/exact.h"
#include "ref/math.h"
#include "ref/elementwise.h"
#include "ops/ops.h"
#include "ops/algorithm.h"
#include "ops/norms.h"
#include "ops/parallel.h"
#include "ref/reduce.h"
#include "ops/util.h"

namespace onemodel::impl {
namespace ops {
namespace {

// Sum of f(i), i in [0, n): canonical L lanes when `lanes`, else left to right.
template <class F>
float Sum(int64_t n, bool lanes, F f) {
  if (!lanes) {
    float acc = -0.0f;
    for (int64_t i = 0; i < n; ++i) acc += f(i);
    return acc;
  }
  return ref::SumCanonicalBy<float>(n, f);
}

float InvStd(float var, float eps) { return 1.0f / __builtin_sqrtf(var + eps); }

// LayerNormalization and RMSNormalization: normalise over [axis, rank).
void LastAxesNorm(OpContext& ctx, bool rms) {
  const Tensor& x = ctx.in(0);
  const int64_t axis = NormAxis(ctx, ctx.attr_i("axis", -1), x.rank());
  const float eps = ctx.attr_f("epsilon", rms ? 1e-5f : 1e-5f);
  int64_t outer = 1, n = 1;
  for (int64_t k = 0; k < axis; ++k) outer *= x.shape()[size_t(k)];
  for (int64_t k = axis; k < x.rank(); ++k) n *= x.shape()[size_t(k)];
  // Float tensors are read in place (F32View), others converted once.
  const F32View xv(ctx, x);
  const Tensor& sc = ctx.in(1);
  const F32View scale(ctx, sc);
  const Shape norm_shape(x.shape().begin() + axis, x.shape().end());
  std::optional<F32View> bias_view;
  if (!rms && ctx.has_input(2)) bias_view.emplace(ctx, ctx.in(2));
  const float* bias = bias_view ? bias_view->data() : nullptr;
  if (!Broadcasts(sc.shape(), norm_shape) || (bias && !Broadcasts(ctx.in(2).shape(), norm_shape)))
    throw ctx.Fail(ErrorCode::kShapeMismatch, "scale and bias must broadcast to the normalised axes' shape");
  Tensor& y = ctx.out_uninit(0, x.dtype(), x.shape());  // every element is written
  Shape stat_shape(x.shape().begin(), x.shape().begin() + axis);
  for (int64_t k = axis; k < x.rank(); ++k) stat_shape.push_back(1);
  const DType stat_type = DType(ctx.attr_i("stash_type", 1)) == DType::kFloat ? DType::kFloat : x.dtype();
  Tensor* mean_t = (!rms && ctx.wants_output(1)) ? &ctx.out(1, stat_type, stat_shape) : nullptr;
  Tensor* inv_t = (!rms && ctx.wants_output(2)) ? &ctx.out(2, stat_type, stat_shape) : nullptr;
  if (UseAlgorithm(
          ctx, kAllLayerNormAlgos, LayerNormAlgoName, LayerNormAlgo::kRows,
          x.dtype() == DType::kFloat && !mean_t && !inv_t && sc.numel() == n && (!bias || ctx.in(2).numel() == n))) {
    // Rows over the threads, each as the steps below by the session's kernels: the
    // canonical sums (SumF32), then each elementwise step as one BinaryF32 pass.
    const KernelTable& k = *ctx.kernels;
    float* py = y.mutable_data<float>();
    ParallelFor(ctx, outer, std::max<int64_t>(1, 4096 / std::max<int64_t>(n, 1)), [&](int64_t b, int64_t e) {
      thread_local std::vector<float> tmp;
      if (tmp.size() < size_t(n)) tmp.resize(size_t(n));
      for (int64_t o = b; o < e; ++o) {
        const float* row = xv.data() + o * n;
        float* out = py + o * n;
        float inv;
        if (rms) {
          k.BinaryF32(kBinMulF32, row, 1, row, 1, tmp.data(), n);
          const float ms = k.SumF32(tmp.data(), size_t(n)) / float(n);
          inv = InvStd(ms, eps);
          k.BinaryF32(kBinMulF32, row, 1, &inv, 0, out, n);
        } else {
          const float mean = k.SumF32(row, size_t(n)) / float(n);
          k.BinaryF32(kBinSubF32, row, 1, &mean, 0, out, n);       // d
          k.BinaryF32(kBinMulF32, out, 1, out, 1, tmp.data(), n);  // d * d
          const float var = k.SumF32(tmp.data(), size_t(n)) / float(n);
          inv = InvStd(var, eps);
          k.BinaryF32(kBinMulF32, out, 1, &inv, 0, out, n);  // d * inv
        }
        k.BinaryF32(kBinMulF32, out, 1, scale.data(), 1, out, n);
        if (bias) k.BinaryF32(kBinAddF32, out, 1, bias, 1, out, n);
      }
    });
    return;
  }
  // Scale and bias broadcast over the normalised axes.
  const auto is = BroadcastIndex(sc.shape(), norm_shape);
  IndexTable ib;
  if (bias) ib = BroadcastIndex(ctx.in(2).shape(), norm_shape);
  for (int64_t o = 0; o < outer; ++o) {
    const float* row = xv.data() + o * n;
    float mean = 0.0f, inv;
    if (rms) {
      const float ms = Sum(n, true, [&](int64_t i) { return row[i] * row[i]; }) / float(n);
      inv = InvStd(ms, eps);
    } else {
      mean = Sum(n, true, [&](int64_t i) { return row[i]; }) / float(n);
      const float var = Sum(n, true,
                            [&](int64_t i) {
                              const float d = row[i] - mean;
                              return d * d;
                            }) /
                        float(n);
      inv = InvStd(var, eps);
    }
    for (int64_t i = 0; i < n; ++i) {
      float v = rms ? row[i] * inv : (row[i] - mean) * inv;
      v = v * scale[size_t(is[size_t(i)])];
      if (bias) v = v + bias[size_t(ib[size_t(i)])];
      StoreF32(y, o * n + i, v);
    }
    if (mean_t) StoreF32(*mean_t, o, mean);
    if (inv_t) StoreF32(*inv_t, o, inv);
  }
}

}  // namespace

void LayerNormalization(OpContext& ctx) { LastAxesNorm(ctx, false); }
void RMSNormalization(OpContext& ctx) { LastAxesNorm(ctx, true); }

// Training mode (as ONNX's reference): the batch's per-channel mean and population
// variance (left-to-right sums over batch then positions, divided once) normalise x;
// the running statistics update as stat * momentum + batch_stat * (1 - momentum).
void BatchNormalization(OpContext& ctx) {
  const Tensor& x = ctx.in(0);
  const float eps = ctx.attr_f("epsilon", 1e-5f);
  const bool training = ctx.attr_i("training_mode", 0) != 0;
  // Float tensors are read in place (F32View), others converted once.
  const F32View xv(ctx, x), sc(ctx, ctx.in(1)), b(ctx, ctx.in(2)), mean_in(ctx, ctx.in(3)), var_in(ctx, ctx.in(4));
  ctx.RequireRank(x, 1);
  const int64_t N = x.shape()[0], C = x.rank() > 1 ? x.shape()[1] : 1;
  for (const F32View* v : {&sc, &b, &mean_in, &var_in}) {
    if (int64_t(v->size()) != C)
      throw ctx.Fail(ErrorCode::kShapeMismatch, "scale, B, mean and var must have one value per channel (" +
                                                    std::to_string(C) + "), got " + std::to_string(v->size()));
  }
  const float* mean = mean_in.data();
  const float* var = var_in.data();
  int64_t inner = 1;
  for (int64_t k = 2; k < x.rank(); ++k) inner *= x.shape()[size_t(k)];
  std::vector<float> bm, bv;  // training: the batch's statistics
  if (training) {
    const float momentum = ctx.attr_f("momentum", 0.9f);
    bm.resize(static_cast<size_t>(C));
    bv.resize(static_cast<size_t>(C));
    const float cnt = float(N * inner);
    for (int64_t c = 0; c < C; ++c) {
      float s = -0.0f;
      for (int64_t n = 0; n < N; ++n)
        for (int64_t i = 0; i < inner; ++i) s = s + xv[size_t((n * C + c) * inner + i)];
      const float m = s / cnt;
      float q = -0.0f;
      for (int64_t n = 0; n < N; ++n)
        for (int64_t i = 0; i < inner; ++i) {
          const float d = xv[size_t((n * C + c) * inner + i)] - m;
          q = q + d * d;
        }
      bm[size_t(c)] = m;
      bv[size_t(c)] = q / cnt;
    }
    if (ctx.wants_output(1)) {
      Tensor& t = ctx.out(1, ctx.in(3).dtype(), ctx.in(3).shape());
      for (int64_t c = 0; c < C; ++c) StoreF32(t, c, mean[size_t(c)] * momentum + bm[size_t(c)] * (1.0f - momentum));
    }
    if (ctx.wants_output(2)) {
      Tensor& t = ctx.out(2, ctx.in(4).dtype(), ctx.in(4).shape());
      for (int64_t c = 0; c < C; ++c) StoreF32(t, c, var[size_t(c)] * momentum + bv[size_t(c)] * (1.0f - momentum));
    }
    mean = bm.data();
    var = bv.data();
  }
  Tensor& y = ctx.out_uninit(0, x.dtype(), x.shape());  // every element is written
  if (UseAlgorithm(ctx, kAllInstanceNormAlgos, InstanceNormAlgoName, InstanceNormAlgo::kPlanes,
                   x.dtype() == DType::kFloat)) {
    // Planes over the threads, each step of the loop below as one BinaryF32 pass.
    const KernelTable& k = *ctx.kernels;
    float* py = y.mutable_data<float>();
    ParallelFor(ctx, N * C, std::max<int64_t>(1, 16384 / std::max<int64_t>(inner, 1)), [&](int64_t b0, int64_t e0) {
      for (int64_t nc = b0; nc < e0; ++nc) {
        const int64_t c = nc % C;
        const float inv = InvStd(var[size_t(c)], eps);
        float* out = py + nc * inner;
        k.BinaryF32(kBinSubF32, xv.data() + nc * inner, 1, &mean[size_t(c)], 0, out, inner);
        k.BinaryF32(kBinMulF32, out, 1, &inv, 0, out, inner);
        k.BinaryF32(kBinMulF32, out, 1, sc.data() + c, 0, out, inner);
        k.BinaryF32(kBinAddF32, out, 1, b.data() + c, 0, out, inner);
      }
    });
    return;
  }
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c) {
      const float inv = InvStd(var[size_t(c)], eps);
      for (int64_t i = 0; i < inner; ++i) {
        const int64_t off = (n * C + c) * inner + i;
        float v = (xv[size_t(off)] - mean[size_t(c)]) * inv;
        v = v * sc[size_t(c)];
        v = v + b[size_t(c)];
        StoreF32(y, off, v);
      }
    }
}

// Per (n, group) statistics over the group's channels and all spatial positions.
void GroupStats(OpContext& ctx, int64_t groups, bool per_channel_affine, bool instance) {
  const Tensor& x = ctx.in(0);
  const float eps = ctx.attr_f("epsilon", 1e-5f);
  ctx.RequireRank(x, 2);
  const auto xv = ToF32(ctx, x), sc = ToF32(ctx, ctx.in(1)), b = ToF32(ctx, ctx.in(2));
  const int64_t N = x.shape()[0], C = x.shape()[1];
  int64_t inner = 1;
  for (int64_t k = 2; k < x.rank(); ++k) inner *= x.shape()[size_t(k)];
  if (groups <= 0 || C % groups) throw ctx.Fail(ErrorCode::kInvalidModel, "channels must divide into num_groups");
  const int64_t per = per_channel_affine || instance ? C : groups;
  if (int64_t(sc.size()) != per || int64_t(b.size()) != per) {
    throw ctx.Fail(ErrorCode::kShapeMismatch, "scale and bias must hold " + std::to_string(per) + " values");
  }
  const int64_t cg = C / groups, n = cg * inner;
  Tensor& y = ctx.out(0, x.dtype(), x.shape());
  for (int64_t bn = 0; bn < N; ++bn)
    for (int64_t g = 0; g < groups; ++g) {
      const float* row = xv.data() + (bn * C + g * cg) * inner;
      const float mean = Sum(n, true, [&](int64_t i) { return row[i]; }) / float(n);
      const float var = Sum(n, true,
                            [&](int64_t i) {
                              const float d = row[i] - mean;
                              return d * d;
                            }) /
                        float(n);
      const float inv = InvStd(var, eps);
      for (int64_t i = 0; i < n; ++i) {
        const int64_t c = g * cg + i / inner;
        const size_t pi = size_t(per_channel_affine || instance ? c : g);
        float v = (row[i] - mean) * inv;
        v = v * sc[pi];
        v = v + b[pi];
        StoreF32(y, (bn * C + g * cg) * inner + i, v);
      }
    }
}

void InstanceNormalization(OpContext& ctx) {
  ctx.RequireRank(ctx.in(0), 2);
  GroupStats(ctx, ctx.in(0).shape()[1], true, true);
}
void GroupNormalization(OpContext& ctx) { GroupStats(ctx, ctx.attr_i("num_groups", 0), ctx.opset >= 21, false); }

void LpNormalization(OpContext& ctx) {
  const Tensor& x = ctx.in(0);
  const int64_t axis = NormAxis(ctx, ctx.attr_i("axis", -1), x.rank());
  const int64_t p = ctx.attr_i("p", 2);
  if (p != 1 && p != 2) throw ctx.Fail(ErrorCode::kInvalidModel, "p must be 1 or 2");
  const auto xv = ToF32(ctx, x);
  const int64_t dim = x.shape()[size_t(axis)];
  int64_t outer = 1, inner = 1;
  for (int64_t k = 0; k < axis; ++k) outer *= x.shape()[size_t(k)];
  for (int64_t k = axis + 1; k < x.rank(); ++k) inner *= x.shape()[size_t(k)];
  Tensor& y = ctx.out(0, x.dtype(), x.shape());
  const bool lanes = axis == x.rank() - 1;
  for (int64_t b = 0; b < outer; ++b)
    for (int64_t j = 0; j < inner; ++j) {
      auto at = [&](int64_t i) { return xv[size_t((b * dim + i) * inner + j)]; };
      float norm = Sum(dim, lanes, [&](int64_t i) {
        const float v = at(i);
        return p == 1 ? (v < 0 ? -v : v) : v * v;
      });
      if (p == 2) norm = __builtin_sqrtf(norm);
      for (int64_t i = 0; i < dim; ++i) StoreF32(y, (b * dim + i) * inner + j, norm == 0.0f ? 0.0f : at(i) / norm);
    }
}

void MeanVarianceNormalization(OpContext& ctx) {
  const Tensor& x = ctx.in(0);
  std::vector<int64_t> axes = ctx.attr_ints("axes", {0, 2, 3});
  ctx.RequireRank(x, 1);
  const auto xv = ToF32(ctx, x);
  std::vector<bool> red(size_t(x.rank()), false);
  for (int64_t a : axes) red[size_t(NormAxis(ctx, a, x.rank()))] = true;
  // Group elements by their non-reduced coordinates.
  Shape key_shape;
  for (int64_t k = 0; k < x.rank(); ++k) key_shape.push_back(red[size_t(k)] ? 1 : x.shape()[size_t(k)]);
  const auto key = BroadcastIndex(key_shape, x.shape());
  int64_t groups = 1;
  for (int64_t d : key_shape) groups *= d;
  std::vector<std::vector<int64_t>> members(static_cast<size_t>(groups));
  for (size_t i = 0; i < key.size(); ++i) members[size_t(key[i])].push_back(int64_t(i));
  Tensor& y = ctx.out(0, x.dtype(), x.shape());
  const bool lanes = red.back();
  for (const auto& m : members) {
    const int64_t n = int64_t(m.size());
    const float mean = Sum(n, lanes, [&](int64_t i) { return xv[size_t(m[size_t(i)])]; }) / float(n);
    const float var = Sum(n, lanes,
                          [&](int64_t i) {
                            const float d = xv[size_t(m[size_t(i)])] - mean;
                            return d * d;
                          }) /
                      float(n);
    const float sd = __builtin_sqrtf(var);
    for (int64_t i : m) StoreF32(y, i, (xv[size_t(i)] - mean) / (sd + 1e-9f));
  }
}

// LRN over channels: y = x / (bias + alpha / size * sum of squares)^beta.
void LRN(OpContext& ctx) {
  const Tensor& x = ctx.in(0);
  const float alpha = ctx.attr_f("alpha", 1e-4f), beta = ctx.attr_f("beta", 0.75f), bias = ctx.attr_f("bias", 1.0f);
  const int64_t size = ctx.attr_i("size", 1);
  const auto xv = ToF32(ctx, x);
  const int64_t N = x.shape()[0], C = x.shape()[1];
  int64_t inner = 1;
  for (int64_t k = 2; k < x.rank(); ++k) inner *= x.shape()[size_t(k)];
  Tensor& y = ctx.out(0, x.dtype(), x.shape());
  const int64_t lo = (size - 1) / 2, hi = size - 1 - lo;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t i = 0; i < inner; ++i) {
        float s = -0.0f;
        for (int64_t cc = std::max<int64_t>(0, c - lo); cc <= std::min<int64_t>(C - 1, c + hi); ++cc) {
          const float v = xv[size_t((n * C + cc) * inner + i)];
          s = s + v * v;
        }
        const float d = math::Pow(bias + (alpha / float(size)) * s, beta);
        StoreF32(y, (n * C + c) * inner + i, xv[size_t((n * C + c) * inner + i)] / d);
      }
}

}  // namespace ops
}  // namespace onemodel::impl
