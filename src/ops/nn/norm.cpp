// The normalisation operators. Means and variances are sums in the canonical order (L-lane
// when the innermost axis is normalised, else left to right), divided once by the count;
// then y = (x - mean) * (1 / sqrt(var + eps)) * scale + bias, each step rounded (no
// fusion). Narrow floats compute in f32. LayerNormalization, RMSNormalization,
// InstanceNormalization, GroupNormalization and BatchNormalization's normalising step are
// defined by ref/norm.h; LayerNormalization / RMSNormalization and ONNX Runtime's
// SimplifiedLayerNormalization, SkipLayerNormalization and SkipSimplifiedLayerNormalization
// (layer_norm), InstanceNormalization / BatchNormalization (plane_norm) plan with the
// tables below.
// Reference src/ref/norm.cpp; kernels src/kernels/target.cpp (SumF32) and elementwise.cpp
// (BinaryF32); tests tests/ops/nn/norm_test.cpp.
#include <cmath>
#include <optional>

#include "core/exact.h"
#include "ref/math.h"
#include "ref/elementwise.h"
#include "ops/ops.h"
#include "ops/nn/norm.h"
#include "ops/parallel.h"
#include "ref/norm.h"
#include "ref/reduce.h"
#include "ops/util.h"
#include "core/per_thread.h"
#include "core/scratch.h"

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

// The vector rows' 1 / sqrt(var + eps) (ref/norm.cpp has the reference's own).
float InvStd(float var, float eps) { return 1.0f / __builtin_sqrtf(var + eps); }

// --- layer_norm: LayerNormalization and RMSNormalization over [axis, rank). ---

bool LayerRowsFit(const ref::LayerNormParams& p) {
  return p.f32 && !p.stats && p.scale_size == p.n && (!p.has_bias || p.bias_size == p.n);
}

// The definition itself: ref::LayerNormF32 with scale and bias broadcast over the
// normalised axes.
void RunLayerReference(const OpContext&, const ref::LayerNormParams& p, const LayerNormData& d) {
  const auto is = BroadcastIndex(*d.scale_shape, *d.norm_shape);
  IndexTable ib;
  if (d.bias) ib = BroadcastIndex(*d.bias_shape, *d.norm_shape);
  const F32Out y(d.y), mean(d.mean), inv(d.inv_std);
  ref::LayerNormF32(p, d.x, d.scale, is.data(), d.bias, ib.data(), y.data(), mean.data(), inv.data());
  y.Store();
  mean.Store();
  inv.Store();
}

// Rows over the threads, each as ref::LayerNormF32's steps by the session's kernels: the
// canonical sums (SumF32), then each elementwise step as one BinaryF32 pass.
void RunLayerRows(const OpContext& ctx, const ref::LayerNormParams& p, const LayerNormData& d) {
  const KernelTable& k = *ctx.kernels;
  const int64_t n = p.n;
  const bool rms = p.rms;
  const float eps = p.eps;
  const float* bias = d.bias;
  float* py = d.y->mutable_data<float>();
  ParallelFor(ctx, p.outer, std::max<int64_t>(1, 4096 / std::max<int64_t>(n, 1)), [&](int64_t b, int64_t e) {
    auto& tmp = ONEMODEL_PER_THREAD(ScratchVector<float>);
    if (tmp.size() < size_t(n)) tmp.resize(size_t(n));
    for (int64_t o = b; o < e; ++o) {
      const float* row = d.x + o * n;
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
      k.BinaryF32(kBinMulF32, out, 1, d.scale, 1, out, n);
      if (bias) k.BinaryF32(kBinAddF32, out, 1, bias, 1, out, n);
    }
  });
}

constexpr const char* kLayerNormOps[] = {"LayerNormalization",
                                         "RMSNormalization",
                                         "SimplifiedLayerNormalization",
                                         "com.microsoft.SkipLayerNormalization",
                                         "com.microsoft.EmbedLayerNormalization",
                                         "com.microsoft.SkipSimplifiedLayerNormalization"};
constexpr AlgorithmRow<ref::LayerNormParams, LayerNormRun> kLayerNormRows[] = {
    {"reference", Exactness::kExact, "", nullptr, nullptr, RunLayerReference},
    {"rows", Exactness::kExact, "SumF32, BinaryF32", LayerRowsFit, nullptr, RunLayerRows},
};

// --- plane_norm: the N * C planes of InstanceNormalization and of BatchNormalization's
// normalising step. ---

bool PlanesFit(const ref::PlaneNormParams& p) { return p.f32; }

// The definition itself: ref::BatchNormF32 with the channels' statistics, or
// ref::GroupNormF32 with a group per channel (InstanceNormalization).
void RunPlanesReference(const OpContext&, const ref::PlaneNormParams& p, const PlaneNormData& d) {
  const F32Out y(d.y);
  if (p.channel_stats) {
    ref::BatchNormF32(p, d.x, d.mean, d.var, d.scale, d.bias, y.data());
  } else {
    const ref::GroupNormParams g{
        .N = p.N, .C = p.C, .inner = p.inner, .groups = p.C, .eps = p.eps, .per_channel = true};
    ref::GroupNormF32(g, d.x, d.scale, d.bias, y.data());
  }
  y.Store();
}

// Planes over the threads, each step of the reference's loops as one BinaryF32 pass; an
// InstanceNormalization plane's own mean and variance first, as LayerNormalization's rows
// (canonical sums by SumF32, the differences and squares by BinaryF32).
void RunPlanes(const OpContext& ctx, const ref::PlaneNormParams& p, const PlaneNormData& d) {
  const KernelTable& k = *ctx.kernels;
  const int64_t C = p.C, inner = p.inner;
  float* py = d.y->mutable_data<float>();
  ParallelFor(ctx, p.N * C, std::max<int64_t>(1, 16384 / std::max<int64_t>(inner, 1)), [&](int64_t b0, int64_t e0) {
    auto& tmp = ONEMODEL_PER_THREAD(ScratchVector<float>);
    if (!p.channel_stats && tmp.size() < size_t(inner)) tmp.resize(size_t(inner));
    for (int64_t nc = b0; nc < e0; ++nc) {
      const int64_t c = nc % C;
      const float* xp = d.x + nc * inner;
      float* out = py + nc * inner;
      float mean, inv;
      if (p.channel_stats) {
        mean = d.mean[size_t(c)];
        inv = InvStd(d.var[size_t(c)], p.eps);
        k.BinaryF32(kBinSubF32, xp, 1, &mean, 0, out, inner);
      } else {
        mean = k.SumF32(xp, size_t(inner)) / float(inner);
        k.BinaryF32(kBinSubF32, xp, 1, &mean, 0, out, inner);        // d
        k.BinaryF32(kBinMulF32, out, 1, out, 1, tmp.data(), inner);  // d * d
        const float var = k.SumF32(tmp.data(), size_t(inner)) / float(inner);
        inv = InvStd(var, p.eps);
      }
      k.BinaryF32(kBinMulF32, out, 1, &inv, 0, out, inner);
      k.BinaryF32(kBinMulF32, out, 1, d.scale + c, 0, out, inner);
      k.BinaryF32(kBinAddF32, out, 1, d.bias + c, 0, out, inner);
    }
  });
}

constexpr const char* kInstanceNormOps[] = {"InstanceNormalization", "BatchNormalization"};
constexpr AlgorithmRow<ref::PlaneNormParams, PlaneNormRun> kInstanceNormRows[] = {
    {"reference", Exactness::kExact, "", nullptr, nullptr, RunPlanesReference},
    {"planes", Exactness::kExact, "SumF32, BinaryF32", PlanesFit, nullptr, RunPlanes},
};

}  // namespace

const FamilyTable<ref::LayerNormParams, LayerNormRun>& LayerNormTable() {
  static constexpr FamilyTable<ref::LayerNormParams, LayerNormRun> kTable{"layer_norm", kLayerNormOps, kLayerNormRows};
  return kTable;
}

const FamilyTable<ref::PlaneNormParams, PlaneNormRun>& InstanceNormTable() {
  static constexpr FamilyTable<ref::PlaneNormParams, PlaneNormRun> kTable{"plane_norm", kInstanceNormOps,
                                                                          kInstanceNormRows};
  return kTable;
}

namespace {

// LayerNormalization and RMSNormalization: normalise over [axis, rank).
// The layer_norm table's plan and run over x (f32 values, p.outer rows of p.n) with scale
// and bias (null: none) broadcast over the normalised axes' shape; y of x's shape, mean and
// inv_std (null: not wanted) of the statistics' shape.
void RunLayerNorm(OpContext& ctx, ref::LayerNormParams p, const float* x, const Tensor& sc, const Tensor* bias_t,
                  const Shape& norm_shape, Tensor& y, Tensor* mean_t, Tensor* inv_t) {
  // Float tensors are read in place (F32View), others converted once.
  const F32View scale(ctx, sc);
  std::optional<F32View> bias_view;
  if (bias_t) bias_view.emplace(ctx, *bias_t);
  const float* bias = bias_view ? bias_view->data() : nullptr;
  if (!Broadcasts(sc.shape(), norm_shape) || (bias && !Broadcasts(bias_t->shape(), norm_shape)))
    throw ctx.Fail(ErrorCode::kShapeMismatch, "scale and bias must broadcast to the normalised axes' shape");
  p.has_bias = bias != nullptr;
  p.f32 = y.dtype() == DType::kFloat;
  p.stats = mean_t || inv_t;
  p.scale_size = sc.numel();
  p.bias_size = bias ? bias_t->numel() : 0;
  const LayerNormData d{.x = x,
                        .scale = scale.data(),
                        .bias = bias,
                        .scale_shape = &sc.shape(),
                        .bias_shape = bias ? &bias_t->shape() : nullptr,
                        .norm_shape = &norm_shape,
                        .y = &y,
                        .mean = mean_t,
                        .inv_std = inv_t};
  PlanRow(ctx, LayerNormTable(), p).run(ctx, p, d);
}

// LayerNormalization, RMSNormalization and SimplifiedLayerNormalization (ONNX Runtime's
// RMS form in the default domain: output 1 is inv_std_var, of X's type) over [axis, rank).
void LastAxesNorm(OpContext& ctx, bool rms, bool simplified = false) {
  const Tensor& x = ctx.in(0);
  const int64_t axis = NormAxis(ctx, ctx.attr_i("axis", -1), x.rank());
  ref::LayerNormParams p;
  p.eps = ctx.attr_f("epsilon", 1e-5f);
  p.rms = rms;
  p.outer = 1, p.n = 1;
  for (int64_t k = 0; k < axis; ++k) p.outer *= x.shape()[size_t(k)];
  for (int64_t k = axis; k < x.rank(); ++k) p.n *= x.shape()[size_t(k)];
  const F32View xv(ctx, x);
  const Shape norm_shape(x.shape().begin() + axis, x.shape().end());
  Tensor& y = ctx.out_uninit(0, x.dtype(), x.shape());  // every element is written
  Shape stat_shape(x.shape().begin(), x.shape().begin() + axis);
  for (int64_t k = axis; k < x.rank(); ++k) stat_shape.push_back(1);
  const DType stat_type =
      !simplified && DType(ctx.attr_i("stash_type", 1)) == DType::kFloat ? DType::kFloat : x.dtype();
  Tensor* mean_t = (!rms && ctx.wants_output(1)) ? &ctx.out(1, stat_type, stat_shape) : nullptr;
  const size_t inv_out = simplified ? 1 : 2;
  Tensor* inv_t =
      ((!rms || simplified) && ctx.wants_output(inv_out)) ? &ctx.out(inv_out, stat_type, stat_shape) : nullptr;
  const Tensor* bias_t = !rms && ctx.has_input(2) ? &ctx.in(2) : nullptr;
  RunLayerNorm(ctx, p, xv.data(), ctx.in(1), bias_t, norm_shape, y, mean_t, inv_t);
}

// ONNX Runtime's SkipLayerNormalization (rms false: input, skip, gamma, beta?, bias?) and
// SkipSimplifiedLayerNormalization (rms true: input, skip, gamma, bias?), com.microsoft:
// input [B, S, H] or [T, H]; skip of input's shape or broadcast to it ([1, S, H], [S, H]);
// gamma, beta and bias 1-D of H. v = (input + skip) + bias (f32, each sum rounded once) is
// output 3 (input_skip_bias_sum, rounded once to the input's type); y is LayerNormalization
// (RMSNormalization) of v over the last axis with gamma and beta, epsilon 1e-12 by default;
// outputs 1 and 2 are its float mean (0 for the RMS form) and inv_std_var, shaped [..., 1].
void SkipNorm(OpContext& ctx, bool rms) {
  const Tensor& x = ctx.in(0);
  const Tensor& skip = ctx.in(1);
  const Tensor& gamma = ctx.in(2);
  const size_t bias_in = rms ? 3 : 4;
  const Tensor* beta = !rms && ctx.has_input(3) ? &ctx.in(3) : nullptr;
  const Tensor* bias = ctx.has_input(bias_in) ? &ctx.in(bias_in) : nullptr;
  if (x.rank() != 2 && x.rank() != 3)
    throw ctx.Fail(ErrorCode::kShapeMismatch, "input must be 2-D or 3-D, got " + ShapeToString(x.shape()));
  const int64_t H = x.shape()[size_t(x.rank() - 1)];
  // skip: input's last two dimensions, and a batch of input's or of 1 (then repeated).
  const int64_t sr = skip.rank(), xr = x.rank();
  const bool skip_ok = (sr == 2 || sr == 3) && sr <= xr && skip.shape()[size_t(sr - 1)] == H &&
                       skip.shape()[size_t(sr - 2)] == x.shape()[size_t(xr - 2)] &&
                       (sr == 2 || skip.shape()[0] == 1 || skip.shape()[0] == x.shape()[0]);
  if (!skip_ok)
    throw ctx.Fail(ErrorCode::kShapeMismatch, "skip " + ShapeToString(skip.shape()) + " must be input's shape " +
                                                  ShapeToString(x.shape()) + " or broadcast to it");
  for (const Tensor* t : {&gamma, beta, bias}) {
    if (t && (t->rank() != 1 || t->shape()[0] != H))
      throw ctx.Fail(ErrorCode::kShapeMismatch, "gamma, beta and bias must be 1-D of the hidden size " +
                                                    std::to_string(H) + ", got " + ShapeToString(t->shape()));
    if (t && t->dtype() != x.dtype())
      throw ctx.Fail(ErrorCode::kTypeMismatch,
                     "input is " + DTypeName(x.dtype()) + ", another input is " + DTypeName(t->dtype()));
  }
  if (skip.dtype() != x.dtype())
    throw ctx.Fail(ErrorCode::kTypeMismatch,
                   "skip is " + DTypeName(skip.dtype()) + ", input is " + DTypeName(x.dtype()));
  // v in f32, element by element (each sum one rounding; a skip with fewer rows repeats).
  const F32View xv(ctx, x), sv(ctx, skip);
  std::optional<F32View> bv;
  if (bias) bv.emplace(ctx, *bias);
  const int64_t n = x.numel(), skip_n = skip.numel();
  Tensor v = ctx.NewTensor(DType::kFloat, x.shape(), false, "skip sum");
  float* pv = v.mutable_data<float>();
  ParallelFor(ctx, n, 16384, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      const float sum = xv[size_t(i)] + sv[size_t(i % skip_n)];
      pv[i] = bv ? sum + (*bv)[size_t(i % H)] : sum;
    }
  });
  if (ctx.wants_output(3)) {
    Tensor& sum = ctx.out_uninit(3, x.dtype(), x.shape());
    for (int64_t i = 0; i < n; ++i) StoreF32(sum, i, pv[i]);
  }
  ref::LayerNormParams p;
  p.eps = ctx.attr_f("epsilon", 1e-12f);
  if (!(p.eps >= 0.0f)) throw ctx.Fail(ErrorCode::kInvalidModel, "epsilon must be 0 or more");
  p.rms = rms;
  p.n = H;
  p.outer = H ? x.numel() / H : 0;
  const Shape norm_shape{H};
  Tensor& y = ctx.out_uninit(0, x.dtype(), x.shape());
  Shape stat_shape = x.shape();
  stat_shape.back() = 1;
  Tensor* mean_t = ctx.wants_output(1) ? &ctx.out(1, DType::kFloat, stat_shape) : nullptr;
  Tensor* inv_t = ctx.wants_output(2) ? &ctx.out(2, DType::kFloat, stat_shape) : nullptr;
  RunLayerNorm(ctx, p, pv, gamma, beta, norm_shape, y, mean_t, inv_t);
}

}  // namespace

// ONNX Runtime's EmbedLayerNormalization (com.microsoft): (input_ids, segment_ids?,
// word_embedding, position_embedding, segment_embedding?, gamma, beta, mask?,
// position_ids?) -> (output, mask_index, embedding_sum?). Per token (b, s) of the int32
// ids [B, S]: v = (word[input_ids] + position[position_ids or s]) + segment[segment_ids]
// (f32, each sum rounded once; output 2 rounded once to the embeddings' type), then
// LayerNormalization of v over the hidden axis with gamma and beta (epsilon 1e-12 by
// default). mask_index [B] (int32) is the sum of the mask's row (0 without a mask). An id
// outside its table is kOutOfRange.
void EmbedLayerNormalization(OpContext& ctx) {
  const Tensor& ids = ctx.in(0);
  const Tensor& word = ctx.in(2);
  const Tensor& pos = ctx.in(3);
  const Tensor* seg = ctx.has_input(4) ? &ctx.in(4) : nullptr;
  const Tensor* seg_ids = ctx.has_input(1) ? &ctx.in(1) : nullptr;
  const Tensor* mask = ctx.has_input(7) ? &ctx.in(7) : nullptr;
  const Tensor* pos_ids = ctx.has_input(8) ? &ctx.in(8) : nullptr;
  if (ids.rank() != 2) throw ctx.Fail(ErrorCode::kShapeMismatch, "input_ids must be [batch, sequence]");
  const int64_t B = ids.shape()[0], S = ids.shape()[1];
  if (word.rank() != 2 || pos.rank() != 2 || (seg && seg->rank() != 2))
    throw ctx.Fail(ErrorCode::kShapeMismatch, "the embeddings must be 2-D");
  const int64_t H = word.shape()[1];
  if (pos.shape()[1] != H || (seg && seg->shape()[1] != H))
    throw ctx.Fail(ErrorCode::kShapeMismatch, "the embeddings must share the hidden size");
  for (const Tensor* t : {&ids, seg_ids, mask, pos_ids}) {
    if (!t) continue;
    if (t->dtype() != DType::kInt32) throw ctx.Fail(ErrorCode::kTypeMismatch, "ids and the mask must be int32");
    const bool ok =
        t->shape() == ids.shape() || (t == pos_ids && t->rank() == 2 && t->shape()[0] == 1 && t->shape()[1] == S);
    if (!ok) throw ctx.Fail(ErrorCode::kShapeMismatch, "ids, the mask and position_ids must be [batch, sequence]");
  }
  if (seg && !seg_ids) throw ctx.Fail(ErrorCode::kMissingInput, "segment_embedding needs segment_ids");
  const F32View wv(ctx, word), pv(ctx, pos);
  std::optional<F32View> sv;
  if (seg) sv.emplace(ctx, *seg);
  auto row = [&](const Tensor& table, int64_t id, const char* what) {
    if (id < 0 || id >= table.shape()[0])
      throw ctx.Fail(ErrorCode::kOutOfRange, std::string(what) + " " + std::to_string(id) + " is outside its " +
                                                 std::to_string(table.shape()[0]) + " rows");
    return id * H;
  };
  Tensor v = ctx.NewTensor(DType::kFloat, {B, S, H}, false, "embedding sum");
  float* pvv = v.mutable_data<float>();
  for (int64_t b = 0; b < B; ++b)
    for (int64_t s = 0; s < S; ++s) {
      const int64_t t = b * S + s;
      const int64_t wi = row(word, ids.data<int32_t>()[t], "input id");
      const int64_t p = pos_ids ? pos_ids->data<int32_t>()[pos_ids->shape()[0] == 1 ? s : t] : s;
      const int64_t pi = row(pos, p, "position");
      const int64_t si = seg ? row(*seg, seg_ids->data<int32_t>()[t], "segment id") : 0;
      for (int64_t h = 0; h < H; ++h) {
        const float sum = wv[size_t(wi + h)] + pv[size_t(pi + h)];
        pvv[t * H + h] = seg ? sum + (*sv)[size_t(si + h)] : sum;
      }
    }
  if (ctx.wants_output(1)) {
    Tensor& mi = ctx.out(1, DType::kInt32, {B});
    for (int64_t b = 0; b < B && mask; ++b) {
      int32_t sum = 0;
      for (int64_t s = 0; s < S; ++s) sum = int32_t(uint32_t(sum) + uint32_t(mask->data<int32_t>()[b * S + s]));
      mi.mutable_data<int32_t>()[b] = sum;
    }
  }
  if (ctx.wants_output(2)) {
    Tensor& es = ctx.out_uninit(2, word.dtype(), {B, S, H});
    for (int64_t i = 0; i < B * S * H; ++i) StoreF32(es, i, pvv[i]);
  }
  const Tensor& gamma = ctx.in(5);
  const Tensor& beta = ctx.in(6);
  if (gamma.numel() != H || beta.numel() != H)
    throw ctx.Fail(ErrorCode::kShapeMismatch, "gamma and beta must hold the hidden size's values");
  ref::LayerNormParams p;
  p.eps = ctx.attr_f("epsilon", 1e-12f);
  if (!(p.eps >= 0.0f)) throw ctx.Fail(ErrorCode::kInvalidModel, "epsilon must be 0 or more");
  p.n = H;
  p.outer = B * S;
  Tensor& y = ctx.out_uninit(0, word.dtype(), {B, S, H});
  RunLayerNorm(ctx, p, pvv, gamma, &beta, Shape{H}, y, nullptr, nullptr);
}

void SimplifiedLayerNormalization(OpContext& ctx) { LastAxesNorm(ctx, true, true); }
void SkipLayerNormalization(OpContext& ctx) { SkipNorm(ctx, false); }
void SkipSimplifiedLayerNormalization(OpContext& ctx) { SkipNorm(ctx, true); }
void LayerNormalization(OpContext& ctx) { LastAxesNorm(ctx, false); }
void RMSNormalization(OpContext& ctx) { LastAxesNorm(ctx, true); }

// Training mode (as ONNX's reference): the batch's per-channel mean and population
// variance (left-to-right sums over batch then positions, divided once) normalise x;
// the running statistics update as stat * momentum + batch_stat * (1 - momentum). The
// normalising step plans with the plane_norm table (ref::BatchNormF32 or its planes).
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
  const ref::PlaneNormParams p{
      .N = N, .C = C, .inner = inner, .eps = eps, .channel_stats = true, .f32 = x.dtype() == DType::kFloat};
  PlanRow(ctx, InstanceNormTable(), p).run(ctx, p, {xv.data(), sc.data(), b.data(), mean, var, &y});
}

namespace {

// GroupNormalization's and InstanceNormalization's geometry, checked: x [N, C, ...] (rank
// 2 or more, checked by the caller) in `groups` groups, scale and bias of one value per
// channel (per_channel) or per group.
ref::GroupNormParams GroupGeometry(const OpContext& ctx, int64_t groups, bool per_channel, size_t scale_n,
                                   size_t bias_n) {
  const Tensor& x = ctx.in(0);
  ref::GroupNormParams g;
  g.N = x.shape()[0];
  g.C = x.shape()[1];
  g.inner = 1;
  for (int64_t k = 2; k < x.rank(); ++k) g.inner *= x.shape()[size_t(k)];
  g.groups = groups;
  g.eps = ctx.attr_f("epsilon", 1e-5f);
  g.per_channel = per_channel;
  if (groups <= 0 || g.C % groups) throw ctx.Fail(ErrorCode::kInvalidModel, "channels must divide into num_groups");
  const int64_t per = per_channel ? g.C : groups;
  if (int64_t(scale_n) != per || int64_t(bias_n) != per) {
    throw ctx.Fail(ErrorCode::kShapeMismatch, "scale and bias must hold " + std::to_string(per) + " values");
  }
  return g;
}

}  // namespace

void InstanceNormalization(OpContext& ctx) {
  const Tensor& x = ctx.in(0);
  ctx.RequireRank(x, 2);
  const F32View xv(ctx, x), sc(ctx, ctx.in(1)), b(ctx, ctx.in(2));
  const ref::GroupNormParams g = GroupGeometry(ctx, x.shape()[1], true, sc.size(), b.size());
  Tensor& y = ctx.out(0, x.dtype(), x.shape());
  const ref::PlaneNormParams p{
      .N = g.N, .C = g.C, .inner = g.inner, .eps = g.eps, .channel_stats = false, .f32 = x.dtype() == DType::kFloat};
  PlanRow(ctx, InstanceNormTable(), p).run(ctx, p, {xv.data(), sc.data(), b.data(), nullptr, nullptr, &y});
}

// Per (n, group) statistics over the group's channels and all spatial positions
// (ref::GroupNormF32).
void GroupNormalization(OpContext& ctx) {
  const Tensor& x = ctx.in(0);
  ctx.RequireRank(x, 2);
  const F32View xv(ctx, x), sc(ctx, ctx.in(1)), b(ctx, ctx.in(2));
  const ref::GroupNormParams g = GroupGeometry(ctx, ctx.attr_i("num_groups", 0), ctx.opset >= 21, sc.size(), b.size());
  Tensor& y = ctx.out(0, x.dtype(), x.shape());
  const F32Out out(&y);
  ref::GroupNormF32(g, xv.data(), sc.data(), b.data(), out.data());
  out.Store();
}

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
