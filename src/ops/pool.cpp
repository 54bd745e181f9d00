// Pooling (MaxPool, AveragePool, LpPool and their global forms), MaxUnpool and Col2Im.
// Pool windows fold in row-major order (exact-contract section 3).
#include "ops/pool.h"

#include "ops/algorithm.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>

#include "ops/conv_common.h"
#include "ops/conv_gemm.h"
#include "ops/fused.h"
#include "ops/ops.h"
#include "ref/conv.h"
#include "ref/elementwise.h"
#include "ref/gemm.h"
#include "ref/math.h"
#include "ref/reduce.h"

namespace onemodel::impl {
namespace ops {

namespace {
enum class Pool { kMax, kAverage, kLp };

// What a pooling operator derives from its attributes and its input's shape, kept per
// node (OpContext::Prepared).
struct PoolPrep : NodeState {
  Shape x_shape;
  ConvGeometry g;
  ConvPlane pl{};  // 1-D and 2-D
  Shape out_shape;
  bool include_pad = false, col_major = false;
  float p = 2.0f;
  int64_t in_sp = 0, out_sp = 0;
  std::vector<int64_t> in_st, col_st;
  std::vector<float> count_h, count_w;  // 1-D/2-D average: taps counted per output row, column
  PoolAlgo algo = PoolAlgo::kReference;
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

// Whether algorithm a can run this node (its kind, whether it is global, its rank, whether
// it returns indices).
bool PoolAlgoFits(PoolAlgo a, Pool kind, bool global, const ConvGeometry& g, bool indices) {
  switch (a) {
    case PoolAlgo::kReference: return true;
    case PoolAlgo::kGlobalAverage: return global && kind == Pool::kAverage;
    case PoolAlgo::kMaxPlanes: return kind == Pool::kMax && !indices && PlanesFit(g);
    case PoolAlgo::kAveragePlanes: return kind == Pool::kAverage && PlanesFit(g);
  }
  return false;
}

// The plan's algorithm: forced by the session, else (vector sessions) the first that fits
// of kGlobalAverage, kMaxPlanes, kAveragePlanes, else the reference.
PoolAlgo ChooseAlgo(const OpContext& ctx, Pool kind, bool global, const ConvGeometry& g, bool indices) {
  auto fits = [&](PoolAlgo a) { return PoolAlgoFits(a, kind, global, g, indices); };
  PoolAlgo automatic = PoolAlgo::kReference;
  for (PoolAlgo a : {PoolAlgo::kGlobalAverage, PoolAlgo::kMaxPlanes, PoolAlgo::kAveragePlanes}) {
    if (fits(a)) {
      automatic = a;
      break;
    }
  }
  return ChooseAlgorithm(ctx, kAllPoolAlgos, PoolAlgoName, automatic, fits);
}

std::shared_ptr<PoolPrep> MakePoolPrep(const OpContext& ctx, const Tensor& x, Pool kind, bool global) {
  auto pp = std::make_shared<PoolPrep>();
  pp->x_shape = x.shape();
  std::vector<int64_t> kernel =
      global ? std::vector<int64_t>(x.shape().begin() + 2, x.shape().end()) : ctx.attr_ints("kernel_shape");
  if (kernel.empty()) throw ctx.Fail(ErrorCode::kInvalidModel, "kernel_shape is required");
  const bool ceil_mode = !global && ctx.attr_i("ceil_mode", 0) != 0;
  ConvGeometry& g = pp->g;
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
  const bool include_pad = pp->include_pad = ctx.attr_i("count_include_pad", 0) != 0;
  pp->p = float(ctx.attr_i("p", 2));
  pp->out_shape = Shape{x.shape()[0], x.shape()[1]};
  pp->out_shape.insert(pp->out_shape.end(), g.out.begin(), g.out.end());
  pp->col_major = ctx.attr_i("storage_order", 0) != 0;
  pp->in_sp = ProductOf(g.in);
  pp->out_sp = ProductOf(g.out);
  pp->in_st.assign(size_t(g.dims), 1);
  pp->col_st.assign(size_t(g.dims), 1);
  for (int64_t d = g.dims - 1; d > 0; --d) pp->in_st[size_t(d - 1)] = pp->in_st[size_t(d)] * g.in[size_t(d)];
  for (int64_t d = 1; d < g.dims; ++d) pp->col_st[size_t(d)] = pp->col_st[size_t(d - 1)] * g.in[size_t(d - 1)];
  if (PlanesFit(g)) {
    pp->pl = MakeConvPlane(g);
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
    pp->count_h = g.dims == 2 ? counts(0) : std::vector<float>{1.0f};
    pp->count_w = counts(g.dims - 1);
  }
  pp->algo = ChooseAlgo(ctx, kind, global, g, kind == Pool::kMax && ctx.wants_output(1));
  return pp;
}

}  // namespace

const char* PoolAlgoName(PoolAlgo a) {
  static constexpr const char* kNames[] = {"reference", "global-average", "max-planes", "average-planes"};
  return AlgorithmName(a, kNames);
}

namespace {

// Global average: per channel, acc = acc + x in index order from -0.0, then / count (as
// PoolOp's loops); eight channels at a time as independent chains, over the threads.
void GlobalAverage(const OpContext& ctx, const float* x, Tensor& y, int64_t NC, int64_t in_sp) {
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

void PoolOp(OpContext& ctx, Pool kind, bool global) {
  const Tensor& x = ctx.in(0);
  ctx.RequireRank(x, 3);
  const std::shared_ptr<const PoolPrep> prep = ctx.Prepared<PoolPrep>(
      [&](const PoolPrep& pp) { return pp.x_shape == x.shape(); }, [&] { return MakePoolPrep(ctx, x, kind, global); });
  const ConvGeometry& g = prep->g;
  const bool include_pad = prep->include_pad;
  const float p = prep->p;
  const int64_t N = x.shape()[0], C = x.shape()[1];
  const F32View xv(ctx, x, kind == Pool::kMax);
  const Shape& os = prep->out_shape;
  Tensor& y = ctx.out_uninit(0, x.dtype(), os);  // every element is written
  Tensor* idx = (kind == Pool::kMax && ctx.wants_output(1)) ? &ctx.out(1, DType::kInt64, os) : nullptr;
  const bool col_major = prep->col_major;
  const int64_t in_sp = prep->in_sp, out_sp = prep->out_sp;
  const std::vector<int64_t>& in_st = prep->in_st;
  const std::vector<int64_t>& col_st = prep->col_st;
  if (prep->algo == PoolAlgo::kGlobalAverage && in_sp > 0) {
    GlobalAverage(ctx, xv.data(), y, N * C, in_sp);
    return;
  }
  if (prep->algo == PoolAlgo::kMaxPlanes) {
    // 1-D/2-D max pool as planes: per channel, the kernel taps in row-major order, each
    // a MaxStep over the output positions whose tap is inside the input (as above,
    // padding taps are skipped), vectorised along output rows.
    const ConvPlane& pl = prep->pl;
    PoolPlanes(
        ctx, pl, N * C, in_sp, out_sp, xv.data(), y, -std::numeric_limits<float>::infinity(),
        [&](float* acc, const float* x, int64_t n) { ctx.kernels->MaxStepStridedF32(acc, x, pl.SW, n); },
        [](float*) {});
    return;
  }
  if (prep->algo == PoolAlgo::kAveragePlanes) {
    // 1-D/2-D average pool as planes, as the max pool above: per channel, the kernel
    // taps in row-major order, each added to the output positions whose tap is inside
    // the input as acc + x * 1 (x * 1 is x, NaNs included), then the division by the
    // count of the loops below, which is per dimension: taps inside the input, or inside
    // the padded extent with count_include_pad (PoolPrep).
    const ConvPlane& pl = prep->pl;
    const std::vector<float>& ch = prep->count_h;
    const std::vector<float>& cw = prep->count_w;
    PoolPlanes(
        ctx, pl, N * C, in_sp, out_sp, xv.data(), y, -0.0f,
        [&](float* acc, const float* x, int64_t n) { ctx.kernels->MulAddStridedF32(acc, x, pl.SW, 1.0f, n); },
        [&](float* acc) {
          for (int64_t oh = 0; oh < pl.OH; ++oh)
            for (int64_t ow = 0; ow < pl.OW; ++ow) {
              const float cnt = ch[size_t(oh)] * cw[size_t(ow)];  // a product of small integers: exact
              float& r = acc[oh * pl.OW + ow];
              r = cnt != 0.0f ? r / cnt : std::numeric_limits<float>::quiet_NaN();
            }
        });
    return;
  }
  for (int64_t nc = 0; nc < N * C; ++nc) {
    const float* xc = xv.data() + nc * in_sp;
    ForEachIndex(g.out, [&](int64_t o, const std::vector<int64_t>& op) {
      float acc = kind == Pool::kMax ? -std::numeric_limits<float>::infinity() : -0.0f;
      int64_t count = 0, best = -1, best_col = -1;
      ForEachIndex(g.kernel, [&](int64_t, const std::vector<int64_t>& kp) {
        int64_t off = 0, coff = 0;
        bool pad = false, beyond = false;
        for (int64_t d = 0; d < g.dims; ++d) {
          const size_t i = size_t(d);
          const int64_t q = op[i] * g.stride[i] - g.pad_b[i] + kp[i] * g.dil[i];
          if (q < 0 || q >= g.in[i]) {
            pad = true;
            if (q >= g.in[i] + g.pad_e[i] || q < -g.pad_b[i]) beyond = true;
          }
          off += q * in_st[i];
          coff += q * col_st[i];
        }
        if (pad) {
          if (kind == Pool::kAverage && include_pad && !beyond) ++count;
          return;
        }
        const float v = xc[off];
        ++count;
        if (kind == Pool::kMax) {
          if (v != v || acc != acc) {
            if (acc == acc) {
              acc = v;
              best = off;
              best_col = coff;
            }
          } else if (v > acc) {
            acc = v;
            best = off;
            best_col = coff;
          }
        } else if (kind == Pool::kAverage) {
          acc = acc + v;
        } else {
          const float a = v < 0 ? -v : v;
          acc = acc + (p == 2.0f ? a * a : p == 1.0f ? a : math::Pow(a, p));
        }
      });
      float r = acc;
      if (kind == Pool::kAverage) r = count ? acc / float(count) : std::numeric_limits<float>::quiet_NaN();
      if (kind == Pool::kLp) r = p == 2.0f ? __builtin_sqrtf(acc) : p == 1.0f ? acc : math::Pow(acc, 1.0f / p);
      StoreF32(y, nc * out_sp + o, r);
      if (idx) idx->mutable_data<int64_t>()[nc * out_sp + o] = nc * in_sp + (col_major ? best_col : best);
    });
  }
}
}  // namespace

void MaxPool(OpContext& ctx) { PoolOp(ctx, Pool::kMax, false); }
void AveragePool(OpContext& ctx) { PoolOp(ctx, Pool::kAverage, false); }
void LpPool(OpContext& ctx) { PoolOp(ctx, Pool::kLp, false); }
void GlobalMaxPool(OpContext& ctx) { PoolOp(ctx, Pool::kMax, true); }
void GlobalAveragePool(OpContext& ctx) { PoolOp(ctx, Pool::kAverage, true); }
void GlobalLpPool(OpContext& ctx) { PoolOp(ctx, Pool::kLp, true); }

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
