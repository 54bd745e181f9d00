// Pooling (MaxPool, AveragePool, LpPool and their global forms), MaxUnpool and Col2Im.
// Pool windows fold in row-major order (exact-contract section 3); their definition is
// ref/pool.h, the rows of PoolTable (ops/conv/pool.h) compute it.
#include "ops/conv/pool.h"

#include <algorithm>
#include <limits>
#include <memory>
#include <vector>

#include "ops/conv/conv_common.h"
#include "ops/ops.h"
#include "ref/conv.h"
#include "ref/reduce.h"

namespace onemodel::impl {
namespace ops {

namespace {

using ref::PoolKind;

// The definition: ref::PoolF32 over the node's N * C planes, f32 results stored into y
// (directly when it is float, else through a buffer and StoreF32).
void RunReference(const OpContext&, const PoolPlan& plan, const float* x, Tensor& y, Tensor* idx) {
  const int64_t NC = y.shape()[0] * y.shape()[1];
  std::vector<float> ybuf;
  float* yf = y.dtype() == DType::kFloat ? y.mutable_data<float>() : (ybuf.resize(size_t(y.numel())), ybuf.data());
  ref::PoolF32(plan.ref, NC, x, yf, idx ? idx->mutable_data<int64_t>() : nullptr);
  if (y.dtype() != DType::kFloat)
    for (int64_t i = 0; i < y.numel(); ++i) StoreF32(y, i, ybuf[size_t(i)]);
}

// Global average: per channel, acc = acc + x in index order from -0.0, then / count (as
// ref::PoolF32); eight channels at a time as independent chains, over the threads. An
// empty window (a spatial size 0) runs the reference.
void RunGlobalAverage(const OpContext& ctx, const PoolPlan& plan, const float* x, Tensor& y, Tensor* idx) {
  const int64_t in_sp = plan.ref.in_sp;
  if (in_sp == 0) return RunReference(ctx, plan, x, y, idx);
  const int64_t NC = y.shape()[0] * y.shape()[1];
  std::vector<float> ybuf;  // a float output takes the results directly
  float* yf = y.dtype() == DType::kFloat ? y.mutable_data<float>() : (ybuf.resize(size_t(NC)), ybuf.data());
  const float cnt = float(in_sp);
  // Each plane's sum in order from -0.0 (SumPlanesF32: lanes across planes), then / cnt;
  // blocks of 64 planes over the threads.
  auto* sum = ctx.VectorKernels() ? ctx.kernels->SumPlanesF32 : &ref::SumPlanesF32;
  ParallelFor(ctx, (NC + 63) / 64, 1, [&](int64_t b, int64_t e) {
    const int64_t c0 = b * 64, c1 = std::min(NC, e * 64);
    sum(x + c0 * in_sp, c1 - c0, in_sp, yf + c0);
    for (int64_t c = c0; c < c1; ++c) yf[c] = yf[c] / cnt;
  });
  if (y.dtype() != DType::kFloat)
    for (int64_t i = 0; i < NC; ++i) StoreF32(y, i, ybuf[size_t(i)]);
}

// 1-D/2-D max pool as planes: per channel, the kernel taps in row-major order, each a
// MaxStep over the output positions whose tap is inside the input (as the reference,
// padding taps are skipped), vectorised along output rows.
void RunMaxPlanes(const OpContext& ctx, const PoolPlan& plan, const float* x, Tensor& y, Tensor*) {
  const ConvPlane& pl = plan.pl;
  const int64_t NC = y.shape()[0] * y.shape()[1];
  PoolPlanes(
      ctx, pl, NC, plan.ref.in_sp, plan.ref.out_sp, x, y, -std::numeric_limits<float>::infinity(),
      [&](float* acc, const float* xt, int64_t n) { ctx.kernels->MaxStepStridedF32(acc, xt, pl.SW, n); },
      [](float*) {});
}

// 1-D/2-D average pool as planes, as the max pool above: per channel, the kernel taps in
// row-major order, each added to the output positions whose tap is inside the input as
// acc + x * 1 (x * 1 is x, NaNs included), then the division by the reference's count,
// which is per dimension: taps inside the input, or inside the padded extent with
// count_include_pad (MakePoolPrep).
void RunAveragePlanes(const OpContext& ctx, const PoolPlan& plan, const float* x, Tensor& y, Tensor*) {
  const ConvPlane& pl = plan.pl;
  const int64_t NC = y.shape()[0] * y.shape()[1];
  const std::vector<float>& ch = plan.count_h;
  const std::vector<float>& cw = plan.count_w;
  PoolPlanes(
      ctx, pl, NC, plan.ref.in_sp, plan.ref.out_sp, x, y, -0.0f,
      [&](float* acc, const float* xt, int64_t n) { ctx.kernels->MulAddStridedF32(acc, xt, pl.SW, 1.0f, n); },
      [&](float* acc) {
        for (int64_t oh = 0; oh < pl.OH; ++oh)
          for (int64_t ow = 0; ow < pl.OW; ++ow) {
            const float cnt = ch[size_t(oh)] * cw[size_t(ow)];  // a product of small integers: exact
            float& r = acc[oh * pl.OW + ow];
            r = cnt != 0.0f ? r / cnt : std::numeric_limits<float>::quiet_NaN();
          }
      });
}

bool GlobalAverageFits(const PoolPlan& p) { return p.ref.global && p.ref.kind == PoolKind::kAverage; }
bool MaxPlanesFits(const PoolPlan& p) { return p.ref.kind == PoolKind::kMax && !p.indices && p.planes; }
bool AveragePlanesFits(const PoolPlan& p) { return p.ref.kind == PoolKind::kAverage && p.planes; }

// Automatic planning takes the first that fits of global-average, max-planes and
// average-planes (table order), else the reference.
constexpr const char* kPoolOps[] = {"MaxPool",       "AveragePool",       "LpPool",
                                    "GlobalMaxPool", "GlobalAveragePool", "GlobalLpPool"};
constexpr AlgorithmRow<PoolPlan, PoolRun> kPoolRows[] = {
    {"reference", Exactness::kExact, "", nullptr, nullptr, RunReference},
    {"global-average", Exactness::kExact, "SumPlanesF32", GlobalAverageFits, nullptr, RunGlobalAverage},
    {"max-planes", Exactness::kExact, "MaxStepStridedF32", MaxPlanesFits, nullptr, RunMaxPlanes},
    {"average-planes", Exactness::kExact, "MulAddStridedF32", AveragePlanesFits, nullptr, RunAveragePlanes},
};

}  // namespace

const FamilyTable<PoolPlan, PoolRun>& PoolTable() {
  static constexpr FamilyTable<PoolPlan, PoolRun> kTable{"pool", kPoolOps, kPoolRows};
  return kTable;
}

namespace {

// What a pooling operator derives from its attributes and its input's shape, kept per
// node (OpContext::Prepared): the plan and its row of PoolTable.
struct PoolPrep : NodeState {
  Shape x_shape;
  Shape out_shape;
  PoolPlan plan;
  size_t row = 0;
};

// The planes' walk visits every kernel tap and keeps a table per kernel column, so it
// takes windows of at most 4096 x 4096 (a real model's are a few taps; larger windows run
// the reference loops, which a run's time limit stops).
bool PlanesFit(const ConvGeometry& g) {
  constexpr int64_t kMaxPlaneKernel = 4096;
  if (g.dims > 2) return false;
  for (int64_t k : g.kernel)
    if (k > kMaxPlaneKernel) return false;
  return true;
}

// The number of taps k in [0, K) whose position base + k * dil lies in [lo, hi): the
// average's divisor along one dimension (all values below 2^31: MakeGeometry).
int64_t CountTaps(int64_t base, int64_t dil, int64_t K, int64_t lo, int64_t hi) {
  auto ceil_div = [](int64_t a, int64_t b) { return a >= 0 ? (a + b - 1) / b : -((-a) / b); };
  auto floor_div = [](int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); };
  const int64_t k0 = std::max<int64_t>(0, ceil_div(lo - base, dil));
  const int64_t k1 = std::min<int64_t>(K - 1, floor_div(hi - 1 - base, dil));
  return std::max<int64_t>(0, k1 - k0 + 1);
}

std::shared_ptr<PoolPrep> MakePoolPrep(const OpContext& ctx, const Tensor& x, PoolKind kind, bool global) {
  auto pp = std::make_shared<PoolPrep>();
  pp->x_shape = x.shape();
  ref::PoolParams& rp = pp->plan.ref;
  rp.kind = kind;
  rp.global = global;
  std::vector<int64_t> kernel =
      global ? std::vector<int64_t>(x.shape().begin() + 2, x.shape().end()) : ctx.attr_ints("kernel_shape");
  if (kernel.empty()) throw ctx.Fail(ErrorCode::kInvalidModel, "kernel_shape is required");
  const bool ceil_mode = !global && ctx.attr_i("ceil_mode", 0) != 0;
  ConvGeometry& g = rp.g;
  if (global) {
    g.dims = x.rank() - 2;
    g.in.assign(x.shape().begin() + 2, x.shape().end());
    g.kernel = kernel;
    g.stride.assign(size_t(g.dims), 1);
    g.dil.assign(size_t(g.dims), 1);
    g.pad_b.assign(size_t(g.dims), 0);
    g.pad_e.assign(size_t(g.dims), 0);
    g.out.assign(size_t(g.dims), 1);
  } else {
    g = MakeGeometry(ctx, x.shape(), kernel, ceil_mode);
  }
  const bool include_pad = rp.include_pad = ctx.attr_i("count_include_pad", 0) != 0;
  rp.p = float(ctx.attr_i("p", 2));
  pp->out_shape = Shape{x.shape()[0], x.shape()[1]};
  pp->out_shape.insert(pp->out_shape.end(), g.out.begin(), g.out.end());
  rp.col_major = ctx.attr_i("storage_order", 0) != 0;
  rp.in_sp = ProductOf(g.in);
  rp.out_sp = ProductOf(g.out);
  rp.in_st.assign(size_t(g.dims), 1);
  rp.col_st.assign(size_t(g.dims), 1);
  for (int64_t d = g.dims - 1; d > 0; --d) rp.in_st[size_t(d - 1)] = rp.in_st[size_t(d)] * g.in[size_t(d)];
  for (int64_t d = 1; d < g.dims; ++d) rp.col_st[size_t(d)] = rp.col_st[size_t(d - 1)] * g.in[size_t(d - 1)];
  PoolPlan& plan = pp->plan;
  plan.planes = PlanesFit(g);
  if (plan.planes) {
    plan.pl = MakeConvPlane(g);
    // The average's divisors, per dimension: taps inside the input, or inside the
    // padded extent with count_include_pad (which holds the input).
    auto counts = [&](int64_t d) {
      const size_t i = size_t(d);
      std::vector<float> c(size_t(g.out[i]));
      const int64_t lo = include_pad ? -g.pad_b[i] : 0, hi = include_pad ? g.in[i] + g.pad_e[i] : g.in[i];
      for (int64_t o = 0; o < g.out[i]; ++o)
        c[size_t(o)] = float(CountTaps(o * g.stride[i] - g.pad_b[i], g.dil[i], g.kernel[i], lo, hi));
      return c;
    };
    plan.count_h = g.dims == 2 ? counts(0) : std::vector<float>{1.0f};
    plan.count_w = counts(g.dims - 1);
  }
  plan.indices = kind == PoolKind::kMax && ctx.wants_output(1);
  pp->row = PlanIndex(ctx, PoolTable(), plan);
  return pp;
}

void PoolOp(OpContext& ctx, PoolKind kind, bool global) {
  const Tensor& x = ctx.in(0);
  ctx.RequireRank(x, 3);
  const std::shared_ptr<const PoolPrep> prep = ctx.Prepared<PoolPrep>(
      [&](const PoolPrep& pp) { return pp.x_shape == x.shape(); }, [&] { return MakePoolPrep(ctx, x, kind, global); });
  const F32View xv(ctx, x, kind == PoolKind::kMax);
  const Shape& os = prep->out_shape;
  Tensor& y = ctx.out_uninit(0, x.dtype(), os);  // every element is written
  Tensor* idx = (kind == PoolKind::kMax && ctx.wants_output(1)) ? &ctx.out(1, DType::kInt64, os) : nullptr;
  PoolTable().rows[prep->row].run(ctx, prep->plan, xv.data(), y, idx);
}

}  // namespace

void MaxPool(OpContext& ctx) { PoolOp(ctx, PoolKind::kMax, false); }
void AveragePool(OpContext& ctx) { PoolOp(ctx, PoolKind::kAverage, false); }
void LpPool(OpContext& ctx) { PoolOp(ctx, PoolKind::kLp, false); }
void GlobalMaxPool(OpContext& ctx) { PoolOp(ctx, PoolKind::kMax, true); }
void GlobalAveragePool(OpContext& ctx) { PoolOp(ctx, PoolKind::kAverage, true); }
void GlobalLpPool(OpContext& ctx) { PoolOp(ctx, PoolKind::kLp, true); }

// Col2Im: sums columns back into an image. Pixels start at +0.0 and receive their
// contributions in the order (channel, kernel position, column); taps outside the
// image are dropped.
void Col2Im(OpContext& ctx) {
  const Tensor& x = ctx.in(0);
  const auto image = ReadInts(ctx, ctx.in(1)), block = ReadInts(ctx, ctx.in(2));
  const int64_t D = int64_t(image.size());
  if (x.rank() != 3 || int64_t(block.size()) != D)
    throw ctx.Fail(ErrorCode::kShapeMismatch, "input must be [N, C*prod(block), L]");
  const auto strides = ctx.attr_ints("strides", std::vector<int64_t>(size_t(D), 1));
  const auto dil = ctx.attr_ints("dilations", std::vector<int64_t>(size_t(D), 1));
  const auto pads = ctx.attr_ints("pads", std::vector<int64_t>(size_t(2 * D), 0));
  if (int64_t(strides.size()) != D || int64_t(dil.size()) != D || int64_t(pads.size()) != 2 * D)
    throw ctx.Fail(ErrorCode::kInvalidModel, "strides and dilations need one value per image dimension, pads two");
  const int64_t kMax = int64_t(1) << 31;  // as convolution geometry: no sum or product of two overflows
  for (int64_t d = 0; d < D; ++d) {
    const size_t i = size_t(d);
    if (image[i] < 0 || image[i] >= kMax || block[i] < 1 || block[i] >= kMax)
      throw ctx.Fail(ErrorCode::kInvalidArgument, "image sizes must be in [0, 2^31), block sizes in [1, 2^31)");
    if (strides[i] < 1 || strides[i] >= kMax || dil[i] < 1 || dil[i] >= kMax || pads[i] < 0 || pads[i] >= kMax ||
        pads[i + size_t(D)] < 0 || pads[i + size_t(D)] >= kMax)
      throw ctx.Fail(ErrorCode::kInvalidModel, "strides and dilations must be in [1, 2^31), pads in [0, 2^31)");
  }
  const int64_t K = ProductOf(block), N = x.shape()[0], L = x.shape()[2];
  if (x.shape()[1] % K) throw ctx.Fail(ErrorCode::kShapeMismatch, "input must be [N, C*prod(block), L]");
  const int64_t C = x.shape()[1] / K;
  std::vector<int64_t> cols(static_cast<size_t>(D));
  for (int64_t d = 0; d < D; ++d) {
    const size_t i = size_t(d);
    cols[i] = (image[i] + pads[i] + pads[i + size_t(D)] - (dil[i] * (block[i] - 1) + 1)) / strides[i] + 1;
    if (cols[i] < 1) throw ctx.Fail(ErrorCode::kShapeMismatch, "the block is larger than the padded image");
  }
  if (ProductOf(cols) != L)
    throw ctx.Fail(ErrorCode::kShapeMismatch, "the number of columns does not match the image and block");
  const auto xv = ToF32(ctx, x);
  Shape os{N, C};
  os.insert(os.end(), image.begin(), image.end());
  std::vector<float> acc(size_t(CheckedNumElements(os, sizeof(float), "Col2Im's image")), 0.0f);
  const int64_t img = ProductOf(image);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c)
      ForEachIndex(block, [&](int64_t k, const std::vector<int64_t>& kp) {
        ForEachIndex(cols, [&](int64_t l, const std::vector<int64_t>& lp) {
          int64_t off = 0;
          for (int64_t d = 0; d < D; ++d) {
            const size_t i = size_t(d);
            const int64_t p = lp[i] * strides[i] - pads[i] + kp[i] * dil[i];
            if (p < 0 || p >= image[i]) return;
            off = off * image[i] + p;
          }
          float& dst = acc[size_t((n * C + c) * img + off)];
          dst = dst + xv[size_t(((n * C + c) * K + k) * L + l)];
        });
      });
  Tensor& y = ctx.out(0, x.dtype(), os);
  for (size_t i = 0; i < acc.size(); ++i) StoreF32(y, int64_t(i), acc[i]);
}

// MaxUnpool: zeros, with X scattered to the positions I, which are flat indices into
// the default unpooled shape; a larger output_shape keeps their coordinates.
void MaxUnpool(OpContext& ctx) {
  const Tensor& x = ctx.in(0);
  const auto idx = ReadInts(ctx, ctx.in(1));
  const int64_t D = x.rank() - 2;
  Shape dflt = x.shape();
  const auto kernel = ctx.attr_ints("kernel_shape");
  const auto strides = ctx.attr_ints("strides", std::vector<int64_t>(size_t(D), 1));
  const auto pads = ctx.attr_ints("pads", std::vector<int64_t>(size_t(2 * D), 0));
  if (int64_t(kernel.size()) != D) throw ctx.Fail(ErrorCode::kInvalidModel, "kernel_shape is required");
  for (int64_t d = 0; d < D; ++d) {
    const size_t i = size_t(d);
    dflt[i + 2] = (x.shape()[i + 2] - 1) * strides[i] + kernel[i] - pads[i] - pads[i + size_t(D)];
  }
  const Shape os = ctx.has_input(2) && ctx.in(2).numel() ? Shape(ReadInts(ctx, ctx.in(2))) : dflt;
  if (os.size() != dflt.size()) throw ctx.Fail(ErrorCode::kShapeMismatch, "output_shape has the wrong rank");
  Tensor& y = ctx.out(0, x.dtype(), os);
  for (int64_t i = 0; i < x.numel(); ++i) {
    int64_t rem = idx[size_t(i)], off = 0, mul = 1;
    if (rem < 0) throw ctx.Fail(ErrorCode::kInvalidArgument, "index out of range");
    for (size_t k = dflt.size(); k-- > 0;) {
      const int64_t p = rem % dflt[k];
      rem /= dflt[k];
      if (p >= os[k]) throw ctx.Fail(ErrorCode::kInvalidArgument, "index out of range for output_shape");
      off += p * mul;
      mul *= os[k];
    }
    if (rem != 0) throw ctx.Fail(ErrorCode::kInvalidArgument, "index out of range");
    CopyElement(x, i, y, off);
  }
}

}  // namespace ops
}  // namespace onemodel::impl
