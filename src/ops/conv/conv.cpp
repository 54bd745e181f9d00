// Conv and DeformConv. Conv's definition is ref::ConvF32 (ref/conv.h): each output
// element has one accumulator that starts at -0.0 and folds, in index order, input
// channel (outer) then kernel position (row-major); taps in the padding contribute
// nothing; the bias is added after the full sum (exact-contract section 3).
//
// A Conv node's plan (ConvPlan, made once per input shapes) names the algorithm its runs
// execute: the reference in the oracle session (ISA ref), otherwise the vector algorithm
// its geometry suits. Every algorithm gives the reference's bits (tests/ops/conv/conv_test.cpp
// runs each against it).
// Reference src/ref/conv.cpp; kernels src/kernels/conv.cpp and gemm.cpp; tests
// tests/ops/conv/conv_test.cpp.
#include "ops/conv/conv.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "ops/conv/conv_common.h"
#include "ops/conv/conv_gemm.h"
#include "ops/conv/conv_int8.h"
#include "ops/conv/conv_winograd.h"
#include "ops/fused/fused.h"
#include "ops/ops.h"
#include "ref/conv.h"
#include "ref/elementwise.h"
#include "ref/math.h"
#include "ref/winograd.h"

namespace onemodel::impl {
namespace ops {

namespace {

// Automatic planning (ConvTable's rows in order): the direct kernel for strides 1 or 2
// along rows, enough output channels to fill its tiles, and few input channels per group
// (im2col would cost more than the product: a network's first layer on an image).
// Measured on single layers: 3 channels, 3x3 stride 2 at 224x224 into 16: 0.19 ms
// against 0.35 ms by im2col and GEMM; 7x7 into 64: even; 64 channels 3x3: 4.3 against
// 3.3 ms (the GEMM's packed panels win once the fold is long). Layers the transposed
// GEMM takes (group 1, 64+ output channels, more than one tap: RunIm2col) go to it:
// resnet50's 7x7 stride-2 first layer (3 into 64 channels at 224x224) 1.33 -> 1.13 ms in
// the model (Zen 5, AMD EPYC family 26, 1 thread). The GEMM algorithms want 4+ output
// channels per group and a fold of 4+ terms; without them (or with weights that are not
// all finite, the fall-back plan) the plane algorithms take 1-D/2-D layers and the
// reference the rest.
bool Planar(const ConvPlan& p) { return p.g.dims <= 2; }
bool GemmWorth(const ConvPlan& p) { return p.Mg >= 4 && p.Cg * p.k_sp >= 4; }
bool TapGemmChosen(const ConvPlan& p) { return p.g.dims > 2 && GemmWorth(p); }
bool DirectChosen(const ConvPlan& p) {
  const ConvPlane& pl = p.pl;
  return (pl.SW == 1 || pl.SW == 2) && p.Mg >= 4 && p.Cg <= 4 && pl.OW >= 8 &&
         !(p.group == 1 && p.Mg >= 64 && p.k_sp > 1);
}
bool DepthwiseFits(const ConvPlan& p) { return p.g.dims <= 2 && p.Cg == 1 && p.Mg == 1; }
bool PlaneFits(const ConvPlan& p) { return p.g.dims <= 2 && p.Cg == 1; }
// The GEMM rows need finite weights (conv_gemm.h), checked at run time.
bool NeedsFiniteWeights(size_t row) {
  return row == size_t(ConvAlgo::kTapGemm) || row == size_t(ConvAlgo::kIm2colGemm) ||
         row == size_t(ConvAlgo::kTapGemmFma) || row == size_t(ConvAlgo::kIm2colGemmFma) ||
         row == size_t(ConvAlgo::kWinogradF4);
}
// Winograd F(4x4, 3x3) fits 3x3, stride-1, dilation-1 2-D convolutions of one group (any
// pads: taps outside the input are zeros of the 6x6 patches). Chosen with 32+ input and
// 64+ output channels, 144+ output positions (a 12x12 plane: fewer leave the 36 GEMMs too
// short) and transformed weights of at most 4 MiB (4x the weights; larger ones stream
// from memory on every run and lose to the GEMM row), when the session keeps derived
// weights.
bool WinogradFits(const ConvPlan& p) {
  const ConvPlane& pl = p.pl;
  return p.g.dims == 2 && p.group == 1 && pl.KH == 3 && pl.KW == 3 && pl.SH == 1 && pl.SW == 1 && pl.DH == 1 &&
         pl.DW == 1;
}
// The transformed weights (36 C M floats) up to 4 MiB; up to 16 MiB on planes of at most
// kWinogradWholeImageTiles tiles, whose products each take all of an image's tiles.
bool WinogradChosen(const ConvPlan& p) {
  const int64_t tiles = ref::WinogradTileRows(p.pl) * ref::WinogradTileCols(p.pl), u_bytes = 36 * p.C * p.M * 4;
  return p.prepack && p.C >= 32 && p.M >= 64 && p.out_sp >= 144 &&
         u_bytes <= (tiles <= kWinogradWholeImageTiles ? int64_t(16) << 20 : int64_t(4) << 20);
}
// The fast rows' condition: the GEMM twins run on hardware FMA (elsewhere the exact rows
// are as fast and give the oracle's bits).
bool TapGemmFmaChosen(const ConvPlan& p) { return p.fma && TapGemmChosen(p); }
bool Im2colFmaChosen(const ConvPlan& p) { return p.fma && GemmWorth(p); }

// Chooses the plan's row, the one to fall back to when the weights are not all finite
// (an exact row that is not a GEMM; the reference when the row was forced or the session
// is the oracle), and the one the integer row gives way to (the row planned without it).
void ChooseAlgo(const OpContext& ctx, ConvPlan* p) {
  const size_t row = PlanIndex(ctx, ConvTable(), *p);
  constexpr size_t kIntRow = size_t(ConvAlgo::kQdqU8S8);
  size_t fallback = 0, instead = row;
  if (ctx.ForcedAlgorithm().empty() && ctx.VectorKernels()) {
    fallback = PlanIndex(
        ctx, ConvTable(), *p,
        [](size_t i) { return !NeedsFiniteWeights(i) && ConvTable().rows[i].exactness == Exactness::kExact; }, false);
    if (row == kIntRow)
      instead = PlanIndex(
          ctx, ConvTable(), *p, [](size_t i) { return i != kIntRow; }, false);
  } else if (row == kIntRow) {
    instead = 0;  // forced: the reference when the weights do not allow it
  }
  p->algo = ConvAlgo(row);
  p->fallback = ConvAlgo(fallback);
  p->instead = ConvAlgo(instead);
}

std::shared_ptr<ConvPlan> MakeConvPlan(const OpContext& ctx, const Tensor& x, const Tensor& w) {
  auto p = std::make_shared<ConvPlan>();
  p->Set(ctx, x, w);
  const int64_t group = p->group = ctx.attr_i("group", 1);
  if (w.rank() < 3)
    throw ctx.Fail(ErrorCode::kShapeMismatch, "weight must have rank >= 3, got " + ShapeToString(w.shape()));
  p->g = MakeGeometry(ctx, x.shape(), KernelShape(ctx, w), false);
  const ConvGeometry& g = p->g;
  const int64_t N = p->N = x.shape()[0], C = p->C = x.shape()[1], M = p->M = w.shape()[0];
  if (group <= 0 || C % group || M % group || w.shape()[1] != C / group) {
    throw ctx.Fail(ErrorCode::kShapeMismatch, "input channels " + std::to_string(C) + ", weight " +
                                                  ShapeToString(w.shape()) + " and group " + std::to_string(group) +
                                                  " do not agree");
  }
  if (w.rank() != x.rank())
    throw ctx.Fail(ErrorCode::kShapeMismatch,
                   "weight " + ShapeToString(w.shape()) + " and input " + ShapeToString(x.shape()) + " differ in rank");
  p->Cg = C / group;
  p->Mg = M / group;
  // What the passes fused into the node (graph/graph.h NodeFusion).
  p->act = ctx.node.fusion.act;
  p->qdq = ctx.node.fusion.qdq;
  p->qdq_params = ctx.node.fusion.qdq_params;
  p->in_grid = ctx.node.fusion.in_grid;
  p->grid = ctx.node.fusion.grid;
  p->native_dot = ctx.kernels != nullptr && ctx.kernels->native_dot_u8s8;
  p->fma = ctx.kernels != nullptr && ctx.kernels->fma_f32;
  p->prepack = ctx.prepack && ctx.VectorKernels();
  p->out_shape = Shape{N, M};
  p->out_shape.insert(p->out_shape.end(), g.out.begin(), g.out.end());
  p->in_sp = ProductOf(g.in);
  p->out_sp = ProductOf(g.out);
  p->k_sp = ProductOf(g.kernel);
  if (g.dims <= 2) p->pl = MakeConvPlane(g);
  // Taps: kernel position k of dimension d reads input k * dilation - pad + stride * o.
  p->tg = Taps{g.in, g.out, g.stride, {}};
  for (int64_t d = 0; d < g.dims; ++d) {
    const size_t i = size_t(d);
    std::vector<int64_t> b;
    for (int64_t k = 0; k < g.kernel[i]; ++k) b.push_back(k * g.dil[i] - g.pad_b[i]);
    p->tg.b.push_back(std::move(b));
  }
  ChooseAlgo(ctx, p.get());
  return p;
}

}  // namespace

// What one run works on: the plan, the inputs as floats, the bias, and the f32 results
// (y itself when the output is float, else a buffer).
struct ConvRun {
  const OpContext& ctx;
  const ConvPlan& p;
  const float* x;
  const float* w;
  const float* bias;  // null: none
  float* y;
  Activation kact;  // the activation a kernel may apply in its epilogue (float output only)
  bool qdq;         // the plan's fused quantisation applies (float output only)
  const Tensor& w_tensor;
  // A fused residual Add on float results (res.z: Z, the result's shape; null: none), and
  // whether the row applied it (after its epilogue) itself.
  ConvFinish res;
  mutable bool res_done = false;
};

namespace {

// The oracle's loops; they add the bias themselves.
bool RunReference(const ConvRun& r) {
  const ConvPlan& p = r.p;
  ref::ConvF32(p.g, p.N, p.C, p.M, p.group, r.x, r.w, r.bias, r.y);
  return false;
}

// kFma: the fast row, on the GEMM kernels' fused multiply-add twins.
template <bool kFma>
bool RunTapGemm(const ConvRun& r) {
  const ConvPlan& p = r.p;
  for (int64_t n = 0; n < p.N; ++n)
    for (int64_t grp = 0; grp < p.group; ++grp)
      TapGemm(r.ctx, p.tg, r.x + (n * p.C + grp * p.Cg) * p.in_sp, p.Cg, p.in_sp, r.w + grp * p.Mg * p.Cg * p.k_sp,
              p.Mg, r.y + (n * p.M + grp * p.Mg) * p.out_sp, kFma);
  return false;
}

// Fast mode's integer row (conv_int8.h): bias, activation and quantisation in its chunks.
bool RunQdqU8S8(const ConvRun& r) {
  RunConvInt8(r.ctx, r.p, r.x, r.bias, r.y);
  return true;
}

// Few input channels (a network's first layer): the direct kernel, output rows in blocks
// over the threads, the epilogue in its tiles.
bool RunDirect(const ConvRun& r) {
  const ConvPlan& p = r.p;
  const ConvPlane& pl = p.pl;
  const int threads = r.ctx.pool ? r.ctx.pool->threads() : 1;
  const int64_t rb = std::max<int64_t>(1, pl.OH / (4 * threads)), row_blocks = (pl.OH + rb - 1) / rb;
  ParallelFor(r.ctx, p.N * p.group * row_blocks, 1, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      const int64_t ng = i / row_blocks, n = ng / p.group, grp = ng % p.group, r0 = i % row_blocks * rb;
      r.ctx.kernels->ConvDirectF32(r.x + (n * p.C + grp * p.Cg) * p.in_sp, p.in_sp, r.w + grp * p.Mg * p.Cg * p.k_sp,
                                   r.y + (n * p.M + grp * p.Mg) * p.out_sp, p.Cg, p.Mg, pl, r0,
                                   std::min(pl.OH, r0 + rb), r.bias ? r.bias + grp * p.Mg : nullptr, r.kact);
    }
  });
  return true;
}

// Im2col and the GEMM kernel (ConvGemm2D); returns whether the epilogue was applied.
// kFma: the fast row, on the GEMM kernels' fused multiply-add twins.
template <bool kFma>
bool RunIm2col(const ConvRun& r) {
  const ConvPlan& p = r.p;
  const Tensor& w = r.w_tensor;
  const Tensor* wt = nullptr;
  if (p.out_sp == 1 && w.dtype() == DType::kFloat)
    wt = r.ctx.ConstDerived(1, "W^T",
                            [&](const Tensor& t) { return TransposedF32(t.data<float>(), p.M, p.Cg * p.k_sp); });
  // Y^T = col^T W^T with W^T packed once per session, col^T read from the input in place
  // (GemmPackedIndirectF32, no im2col copy): the tiles' rows are positions, their
  // columns channels. Taken for kernels wider than one tap (the copy it saves is the
  // kernel's size times the input) and for 1x1 kernels with few positions (a network's
  // late layers: the weights, the larger operand, stream once in the order the tiles
  // read them, and a 7x7 plane's 49 positions fill 49 of 54 tile rows instead of 49 of
  // 64 lanes). Measured on Zen 5 (AMD EPYC family 26), 1 thread, single resnet50 layers
  // against im2col and the row-major GEMM: 3x3 at 56x56 (64 channels) 1.065 -> 0.937
  // ms, 28x28 (128) 1.12 -> 0.923, 14x14 (256) 1.151 -> 0.936; a 1x1 kernel at 56x56
  // into 256 channels 0.431 -> 0.543 (the result's transpose costs more than it saves).
  constexpr int64_t kTransposedMaxPositions = 256;
  const bool transposed = p.k_sp > 1 || p.out_sp <= kTransposedMaxPositions;
  const Tensor* pwt = nullptr;
  if (p.group == 1 && p.out_sp > 1 && transposed && p.M >= 64 && w.dtype() == DType::kFloat)
    pwt = PackedConstB(r.ctx, 1, p.Cg * p.k_sp, p.M, 1, p.Cg * p.k_sp);
  const bool done =
      ConvGemm2D(r.ctx, p.pl, r.x, r.w, wt ? wt->data<float>() : nullptr, pwt ? pwt->data<float>() : nullptr, p.N, p.C,
                 p.M, p.group, p.in_sp, r.y, p.act == Activation::kRelu, r.bias, r.kact, r.res, kFma);
  r.res_done = done && r.res.z;
  return done;
}

// Depthwise, one output per input channel: lanes across channels, the epilogue in the
// kernel. The work is split into tasks of (image, band of output rows, block of 16 to 64
// channels, a multiple of every target's lanes), bands outermost: with T threads, planes
// of 8 x T rows or more take T bands (each thread then reads the rows the convolution
// before it wrote on the same thread, as the GEMM paths split positions, and no lanes go
// idle when the channels are few), smaller ones one band and at least two channel blocks
// per thread when the channels allow. A function of sizes and the thread count only; an
// output's fold does not depend on its task.
// Depthwise tasks finish their results (bias and activation in the kernel), so a fused
// quantisation runs on each task's rows while they are in cache.
bool RunDepthwise(const ConvRun& r) {
  const ConvPlan& p = r.p;
  const int threads = r.ctx.pool ? r.ctx.pool->threads() : 1;
  const int64_t OH = p.pl.OH, OW = p.pl.OW;
  const int64_t bands = std::clamp<int64_t>(OH / 8, 1, threads);
  const int64_t per_band = threads / bands;  // threads sharing a band's channels
  const int64_t bs = std::clamp<int64_t>((p.M / (2 * per_band) + 15) / 16 * 16, 16, 64);
  const int64_t blocks = (p.M + bs - 1) / bs;
  ParallelFor(r.ctx, p.N * bands * blocks, 1, [&](int64_t b, int64_t e) {
    for (int64_t t = b; t < e; ++t) {
      const int64_t n = t / (bands * blocks), band = t / blocks % bands, c0 = t % blocks * bs;
      const int64_t nc = std::min<int64_t>(bs, p.M - c0), oh0 = OH * band / bands, oh1 = OH * (band + 1) / bands;
      float* yb = r.y + (n * p.M + c0) * p.out_sp;
      r.ctx.kernels->DepthwiseConvF32(r.x + (n * p.C + c0) * p.in_sp, r.w + c0 * p.k_sp, yb, nc, p.pl, oh0, oh1,
                                      r.bias ? r.bias + c0 : nullptr, r.kact);
      if (r.qdq)
        for (int64_t c = 0; c < nc; ++c)
          RunQuantDequant(r.ctx, p.qdq_params, yb + c * p.out_sp + oh0 * OW, yb + c * p.out_sp + oh0 * OW,
                          (oh1 - oh0) * OW);
    }
  });
  return true;
}

// One input channel per output: a plane per output channel, each output folding its taps
// in kernel order in a register (ConvPlaneF32).
bool RunPlane(const ConvRun& r) {
  const ConvPlan& p = r.p;
  ParallelFor(r.ctx, p.N * p.M, 1, [&](int64_t b, int64_t e) {
    for (int64_t nm = b; nm < e; ++nm) {
      const int64_t n = nm / p.M, m = nm % p.M, grp = m / p.Mg;
      r.ctx.kernels->ConvPlaneF32(r.x + (n * p.C + grp) * p.in_sp, r.w + m * p.k_sp, r.y + nm * p.out_sp, p.pl);
    }
  });
  return false;
}

// The reference's plane loops (ref::ConvF32 for 1-D and 2-D) with the innermost loop, one
// term into a row of accumulators, on the MulAddStridedF32 kernel; output channels over
// the threads.
bool RunPlaneMulAdd(const ConvRun& r) {
  const ConvPlan& p = r.p;
  const ConvPlane& pl = p.pl;
  auto* muladd = r.ctx.kernels->MulAddStridedF32;
  ParallelFor(r.ctx, p.N * p.M, 1, [&](int64_t b, int64_t e) {
    for (int64_t nm = b; nm < e; ++nm) {
      const int64_t n = nm / p.M, m = nm % p.M, grp = m / p.Mg;
      float* acc = r.y + nm * p.out_sp;
      std::fill(acc, acc + p.out_sp, -0.0f);
      for (int64_t c = 0; c < p.Cg; ++c) {
        const float* xc = r.x + (n * p.C + grp * p.Cg + c) * p.in_sp;
        const float* wc = r.w + (m * p.Cg + c) * p.k_sp;
        for (int64_t kh = 0; kh < pl.KH; ++kh)
          for (int64_t kw = 0; kw < pl.KW; ++kw) {
            const int64_t lo = pl.col_lo[size_t(kw)], hi = pl.col_hi[size_t(kw)], shift = kw * pl.DW - pl.PW;
            if (hi <= lo) continue;
            for (int64_t oh = 0; oh < pl.OH; ++oh) {
              const int64_t ih = oh * pl.SH - pl.PH + kh * pl.DH;
              if (ih < 0 || ih >= pl.IH) continue;
              muladd(acc + oh * pl.OW + lo, xc + ih * pl.IW + shift + lo * pl.SW, pl.SW, wc[kh * pl.KW + kw], hi - lo);
            }
          }
      }
    }
  });
  return false;
}

// Fast mode's Winograd row (conv_winograd.h): bias and activation in its output transform;
// where it gives way (weights not constant, an input not finite), the GEMM row.
bool RunWinograd(const ConvRun& r) {
  if (WinogradF4Conv(r.ctx, r.p, r.w_tensor, r.x, r.bias, r.kact, r.y, r.p.fma)) return true;
  return r.p.fma ? RunIm2col<true>(r) : RunIm2col<false>(r);
}

constexpr const char* kConvOps[] = {"Conv", "com.microsoft.FusedConv"};
constexpr AlgorithmRow<ConvPlan, ConvRunFn> kConvRows[] = {
    {"reference", Exactness::kExact, "", nullptr, nullptr, RunReference},
    {"qdq-u8s8", Exactness::kFast, "GemmU8S8I32, DequantTransposeI32F32, QuantizeTransposeF32U8", ConvInt8Fits,
     ConvInt8Chosen, RunQdqU8S8},
    {"winograd-f4x4", Exactness::kFast,
     "WinogradF4InputF32, GemmPackBF32, GemmPackedFmaF32, GemmPackedF32, WinogradF4OutputF32", WinogradFits,
     WinogradChosen, RunWinograd},
    {"tap-gemm-fma", Exactness::kFast, "GemmFmaF32, GemmBiasActFmaF32", nullptr, TapGemmFmaChosen, RunTapGemm<true>},
    {"tap-gemm", Exactness::kExact, "GemmF32, GemmBiasActF32", nullptr, TapGemmChosen, RunTapGemm<false>},
    {"direct", Exactness::kExact, "ConvDirectF32", Planar, DirectChosen, RunDirect},
    {"im2col-gemm-fma", Exactness::kFast,
     "GemmFmaF32, GemmBiasActFmaF32, GemmPackBF32, GemmPackedFmaF32, GemmPackedIndirectFmaF32, Transpose32", Planar,
     Im2colFmaChosen, RunIm2col<true>},
    {"im2col-gemm", Exactness::kExact,
     "GemmF32, GemmBiasActF32, GemmPackBF32, GemmPackedF32, GemmPackedIndirectF32, Transpose32", Planar, GemmWorth,
     RunIm2col<false>},
    {"depthwise", Exactness::kExact, "DepthwiseConvF32", DepthwiseFits, nullptr, RunDepthwise},
    {"plane", Exactness::kExact, "ConvPlaneF32", PlaneFits, nullptr, RunPlane},
    {"plane-muladd", Exactness::kExact, "MulAddStridedF32", Planar, nullptr, RunPlaneMulAdd},
};
static_assert(std::string_view(kConvRows[size_t(ConvAlgo::kQdqU8S8)].name) == "qdq-u8s8" &&
              std::string_view(kConvRows[size_t(ConvAlgo::kWinogradF4)].name) == "winograd-f4x4" &&
              std::string_view(kConvRows[size_t(ConvAlgo::kTapGemmFma)].name) == "tap-gemm-fma" &&
              std::string_view(kConvRows[size_t(ConvAlgo::kIm2colGemmFma)].name) == "im2col-gemm-fma" &&
              std::string_view(kConvRows[size_t(ConvAlgo::kIm2colGemm)].name) == "im2col-gemm" &&
              std::string_view(kConvRows[size_t(ConvAlgo::kPlaneMulAdd)].name) == "plane-muladd");

// The bias after the full sum, then (float output) the activation, then a fused residual
// (res: its Z, z_first and post; null Z: none), in one pass: the planes over the threads,
// per image a run of planes to FinishRows (groups of planes that stay in L1 between the
// steps).
void BiasActivation(const ConvRun& r, const float* bias, bool act_here, const ConvFinish& res) {
  const ConvPlan& p = r.p;
  const int64_t sp = p.out_sp;
  ParallelFor(r.ctx, p.N * p.M, std::max<int64_t>(1, 16384 / std::max<int64_t>(sp, 1)), [&](int64_t b, int64_t e) {
    for (int64_t nm = b; nm < e;) {
      const int64_t n = nm / p.M, m0 = nm % p.M, m1 = std::min(p.M, m0 + (e - nm));
      ConvFinish f = res;
      f.bias = bias;
      f.act = act_here ? p.act : Activation::kNone;
      f.z = res.z ? res.z + n * p.M * sp : nullptr;
      FinishRows(r.ctx, f, r.y + n * p.M * sp, sp, m0, m1, 0, sp);
      nm += m1 - m0;
    }
  });
}

}  // namespace

const FamilyTable<ConvPlan, ConvRunFn>& ConvTable() {
  static constexpr FamilyTable<ConvPlan, ConvRunFn> kTable{"conv", kConvOps, kConvRows};
  return kTable;
}

void Conv(OpContext& ctx) {
  const Tensor& x = ctx.in(0);
  const Tensor& w = ctx.in(1);
  const auto plan = PreparedConv<ConvPlan>(ctx, x, w, [&] { return MakeConvPlan(ctx, x, w); });
  const ConvPlan& p = *plan;
  const F32View xv(ctx, x), wv(ctx, w);
  std::optional<F32View> bias_view;
  const float* bias = ConvBias(ctx, p.M, &bias_view);
  Tensor& y = ctx.out_uninit(0, x.dtype(), p.out_shape);  // every element is written
  const bool float_out = y.dtype() == DType::kFloat;
  // A fused residual Add (passes.h FuseConvResidual): in the finishing steps when Z is a
  // float tensor of the result's shape and the result is float, else by its nodes below.
  const Tensor* z = ctx.node.fusion.residual && ctx.has_input(3) ? &ctx.in(3) : nullptr;
  const bool z_fused = z && float_out && z->dtype() == DType::kFloat && z->shape() == p.out_shape;
  if (ctx.node.fusion.residual && (!z || p.qdq || !ctx.node.fusion.residual_body))
    throw ctx.Fail(ErrorCode::kInternal, "a fused residual Add without Z or its nodes, or after a fused quantisation");
  std::vector<float> ybuf;
  float* yf = float_out ? y.mutable_data<float>() : (ybuf.resize(size_t(p.N * p.M * p.out_sp)), ybuf.data());
  ConvFinish res;
  if (z_fused) {
    res.z = z->data<float>();
    res.z_first = ctx.node.fusion.z_first;
    res.post = ctx.node.fusion.post_act;
  }
  const ConvRun r{ctx, p,  xv.data(), wv.data(), bias, yf, float_out ? p.act : Activation::kNone, p.qdq && float_out,
                  w,   res};
  ConvAlgo algo = p.algo;
  if (algo == ConvAlgo::kQdqU8S8 && !(float_out && ConvInt8Ready(ctx, p, w))) algo = p.instead;
  if (NeedsFiniteWeights(size_t(algo)) && !FiniteWeights(ctx, wv)) algo = p.fallback;
  const bool epilogue_done = ConvTable().rows[size_t(algo)].run(r);  // bias and activation applied by the kernel
  const bool act_here = p.act != Activation::kNone && float_out;
  const bool bias_here = bias != nullptr && algo != ConvAlgo::kReference;  // the reference adds its bias
  if (!epilogue_done && (bias_here || act_here || res.z))
    BiasActivation(r, bias_here ? bias : nullptr, act_here, res);
  else if (res.z && !r.res_done)
    BiasActivation(r, nullptr, false, res);
  if (p.qdq && !((algo == ConvAlgo::kDepthwise || algo == ConvAlgo::kQdqU8S8) && float_out)) {
    // The fused QuantizeLinear -> DequantizeLinear on every finished result, in place
    // (the pass fuses it only where X, so the output, is float; depthwise blocks did it).
    if (!float_out) throw ctx.Fail(ErrorCode::kInternal, "a fused quantisation on a Conv output that is not float");
    RunQuantDequant(ctx, p.qdq_params, yf, yf, p.N * p.M * p.out_sp);
  }
  // Another type first rounds the sum to its element type, as the Conv node's output
  // would be, then takes the activation in f32, then rounds again.
  for (int64_t i = 0; !float_out && i < p.N * p.M * p.out_sp; ++i) {
    StoreF32(y, i, ybuf[size_t(i)]);
    if (p.act == Activation::kNone) continue;
    float v = float(ElementAsDouble(y, i));
    ref::UnaryF32(int32_t(p.act), 0.0f, 0.0f, &v, &v, 1);
    StoreF32(y, i, v);
  }
  if (z && !z_fused) {
    // The residual Add (and Relu) as the nodes they were, on the finished Conv result.
    Value conv = std::move(ctx.outputs[0]);
    std::vector<Value> out;
    RunSubgraphInto(ctx.executor, *ctx.node.fusion.residual_body, {&conv, ctx.inputs[3]}, *ctx.scope, &out);
    if (out.size() != 1) throw ctx.Fail(ErrorCode::kInternal, "the residual Add's nodes gave no single output");
    ctx.outputs[0] = std::move(out[0]);
  }
}

// DeformConv (2-D), following ONNX's reference in f32: each tap samples X bilinearly at
// its offset position (zeros outside), times the weight, times the mask; per output,
// the bias first, then for each input channel the sum of its taps (row-major) added.
void DeformConv(OpContext& ctx) {
  const Tensor& x = ctx.in(0);
  const Tensor& w = ctx.in(1);
  const Tensor& off = ctx.in(2);
  if (x.rank() != 4) throw ctx.Fail(ErrorCode::kUnsupportedOp, "only 2-D DeformConv is supported");
  if (w.rank() != 4 || off.rank() != 4) throw ctx.Fail(ErrorCode::kShapeMismatch, "W and offset must be 4-D");
  const int64_t N = x.shape()[0], IC = x.shape()[1], IH = x.shape()[2], IW = x.shape()[3], OC = w.shape()[0];
  const int64_t group = ctx.attr_i("group", 1), og = ctx.attr_i("offset_group", 1);
  const auto kernel = ctx.attr_ints("kernel_shape", Shape(w.shape().begin() + 2, w.shape().end()));
  const auto st = ctx.attr_ints("strides", {1, 1}), dil = ctx.attr_ints("dilations", {1, 1});
  const auto pads = ctx.attr_ints("pads", {0, 0, 0, 0});
  if (kernel.size() != 2 || st.size() != 2 || dil.size() != 2 || pads.size() != 4)
    throw ctx.Fail(ErrorCode::kInvalidArgument, "kernel_shape, strides, dilations and pads must fit 2-D");
  const int64_t KH = kernel[0], KW = kernel[1], OH = off.shape()[2], OW = off.shape()[3];
  if (group <= 0 || og <= 0 || IC != w.shape()[1] * group || OC % group || IC % og)
    throw ctx.Fail(ErrorCode::kShapeMismatch, "channels, group and offset_group disagree");
  if (KH != w.shape()[2] || KW != w.shape()[3] || off.shape()[0] != N || off.shape()[1] != og * KH * KW * 2)
    throw ctx.Fail(ErrorCode::kShapeMismatch, "offset must be [N, offset_group * kH * kW * 2, oH, oW] for W's kernel");
  const int64_t icg = w.shape()[1], ocg = OC / group, icog = IC / og;
  const auto xv = ToF32(ctx, x), wv = ToF32(ctx, w), ov = ToF32(ctx, off);
  std::vector<float> bias, mask;
  if (ctx.has_input(3)) bias = ToF32(ctx, ctx.in(3));
  if (ctx.has_input(4)) mask = ToF32(ctx, ctx.in(4));
  if (!bias.empty() && int64_t(bias.size()) != OC)
    throw ctx.Fail(ErrorCode::kShapeMismatch, "B must hold one value per output channel");
  if (!mask.empty() && int64_t(mask.size()) != N * og * KH * KW * OH * OW)
    throw ctx.Fail(ErrorCode::kShapeMismatch, "mask must be [N, offset_group * kH * kW, oH, oW]");
  Tensor& y = ctx.out(0, x.dtype(), {N, OC, OH, OW});
  auto pix = [&](const float* img, int64_t r, int64_t c) {
    return (r < 0 || r >= IH || c < 0 || c >= IW) ? 0.0f : img[r * IW + c];
  };
  for (int64_t b = 0; b < N; ++b)
    for (int64_t oc = 0; oc < OC; ++oc)
      for (int64_t i = 0; i < OH; ++i)
        for (int64_t j = 0; j < OW; ++j) {
          float acc = bias.empty() ? 0.0f : bias[size_t(oc)];
          for (int64_t ic = 0; ic < IC; ++ic) {
            if (ic / icg != oc / ocg) continue;
            const int64_t g = ic / icog;
            const float* img = xv.data() + (b * IC + ic) * IH * IW;
            float s = -0.0f;
            for (int64_t kh = 0; kh < KH; ++kh)
              for (int64_t kw = 0; kw < KW; ++kw) {
                const int64_t k = kh * KW + kw;
                const float dy = ov[size_t((((b * og + g) * KH * KW + k) * 2 + 0) * OH * OW + i * OW + j)];
                const float dx = ov[size_t((((b * og + g) * KH * KW + k) * 2 + 1) * OH * OW + i * OW + j)];
                const float yy = float(-pads[0] + st[0] * i + kh * dil[0]) + dy;
                const float xx = float(-pads[1] + st[1] * j + kw * dil[1]) + dx;
                const float fy = math::Floor(yy), fx = math::Floor(xx);
                const int64_t y0 = int64_t(fy), x0 = int64_t(fx);
                const float ty = yy - fy, tx = xx - fx;
                const float top = (1 - tx) * pix(img, y0, x0) + tx * pix(img, y0, x0 + 1);
                const float bot = (1 - tx) * pix(img, y0 + 1, x0) + tx * pix(img, y0 + 1, x0 + 1);
                const float v = (1 - ty) * top + ty * bot;
                float t = v * wv[size_t((oc * icg + ic % icg) * KH * KW + k)];
                if (!mask.empty()) t = t * mask[size_t(((b * og + g) * KH * KW + k) * OH * OW + i * OW + j)];
                s = s + t;
              }
            acc = acc + s;
          }
          StoreF32(y, ((b * OC + oc) * OH + i) * OW + j, acc);
        }
}

// ONNX Runtime's FusedConv (com.microsoft): (X, W, B?, Z?) -> Y = activation(Conv(X, W, B)
// + Z), each step as its ONNX node computes it: the Conv node's result (this table's
// planned row), then + Z (Y's shape, each sum rounded once), then the activation named by
// `activation` (Relu, Tanh, Sigmoid, LeakyRelu (alpha), Clip (min, max), HardSigmoid
// (alpha, beta): activation_params in that order; "" or absent: none), narrow floats
// rounding after each step.
void FusedConv(OpContext& ctx) {
  const std::string act = ctx.attr_s("activation", "");
  const std::vector<float> ap = ctx.attr_floats("activation_params");
  auto param = [&](size_t i, float dflt) { return i < ap.size() ? ap[i] : dflt; };
  int32_t unary = -1, math = -1;
  float p0 = 0.0f, p1 = 0.0f;
  if (act == "Relu") {
    unary = kUnReluF32;
  } else if (act == "LeakyRelu") {
    unary = kUnLeakyReluF32, p0 = param(0, 0.01f);
  } else if (act == "Clip") {
    unary = kUnClipF32, p0 = param(0, -std::numeric_limits<float>::infinity()),
    p1 = param(1, std::numeric_limits<float>::infinity());
  } else if (act == "HardSigmoid") {
    unary = kUnHardSigmoidF32, p0 = param(0, 0.2f), p1 = param(1, 0.5f);
  } else if (act == "Tanh") {
    math = kMathTanhF32;
  } else if (act == "Sigmoid") {
    math = kMathSigmoidF32;
  } else if (!act.empty()) {
    throw ctx.Fail(ErrorCode::kUnsupportedOp, "FusedConv activation '" + act + "' is not supported");
  }
  Conv(ctx);
  Tensor& y = ctx.outputs[0].tensor;
  const int64_t n = y.numel();
  std::vector<float> v = ToF32(ctx, y);
  if (ctx.has_input(3)) {
    const Tensor& z = ctx.in(3);
    if (z.shape() != y.shape() || z.dtype() != y.dtype())
      throw ctx.Fail(ErrorCode::kShapeMismatch, "Z must have Y's shape " + ShapeToString(y.shape()) + " and type");
    const F32View zv(ctx, z);
    for (int64_t i = 0; i < n; ++i) v[size_t(i)] = v[size_t(i)] + zv[size_t(i)];
    if (y.dtype() != DType::kFloat && (unary >= 0 || math >= 0))  // the sum rounds as an Add node's output
      for (int64_t i = 0; i < n; ++i) {
        StoreF32(y, i, v[size_t(i)]);
        v[size_t(i)] = float(ElementAsDouble(y, i));
      }
  }
  if (unary >= 0) ctx.kernels->UnaryF32(unary, p0, p1, v.data(), v.data(), n);
  if (math >= 0) ctx.kernels->MathF32(math, v.data(), v.data(), n);
  for (int64_t i = 0; i < n; ++i) StoreF32(y, i, v[size_t(i)]);
}

}  // namespace ops
}  // namespace onemodel::impl
