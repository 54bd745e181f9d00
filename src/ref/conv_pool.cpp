// Reference convolution and pooling. Each output element has one accumulator that
// starts at -0.0 and folds, in index order, input channel (outer) then kernel position
// (row-major); taps that fall in the padding contribute nothing; the bias is added
// after the full sum (exact-contract section 3). Pool windows fold in row-major order.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <optional>

#include "ref/blas.h"
#include "ref/math.h"
#include "ref/ops.h"
#include "passes/passes.h"
#include "ref/elementwise_kernels.h"
#include "ref/parallel.h"
#include "ref/util.h"

namespace onemodel::impl {
namespace ref {
namespace {

struct Geometry {
  int64_t dims = 0;  // spatial dimensions
  std::vector<int64_t> in, kernel, stride, dil, pad_b, pad_e, out;
};


// Resolves strides, dilations, pads (explicit or auto_pad) and output sizes.
Geometry MakeGeometry(const OpContext& ctx, const Shape& x, const std::vector<int64_t>& kernel, bool ceil_mode) {
  Geometry g;
  g.dims = int64_t(x.size()) - 2;
  if (g.dims < 1) throw ctx.Fail(ErrorCode::kShapeMismatch, "input must have rank >= 3");
  g.in.assign(x.begin() + 2, x.end());
  g.kernel = kernel;
  if (int64_t(g.kernel.size()) != g.dims) throw ctx.Fail(ErrorCode::kShapeMismatch, "kernel rank does not match the input");
  g.stride = ctx.attr_ints("strides", std::vector<int64_t>(size_t(g.dims), 1));
  g.dil = ctx.attr_ints("dilations", std::vector<int64_t>(size_t(g.dims), 1));
  std::vector<int64_t> pads = ctx.attr_ints("pads", std::vector<int64_t>(size_t(2 * g.dims), 0));
  if (int64_t(g.stride.size()) != g.dims || int64_t(g.dil.size()) != g.dims || int64_t(pads.size()) != 2 * g.dims) {
    throw ctx.Fail(ErrorCode::kInvalidModel, "strides, dilations or pads have the wrong length");
  }
  const std::string ap = ctx.attr_s("auto_pad", "NOTSET");
  g.pad_b.resize(size_t(g.dims));
  g.pad_e.resize(size_t(g.dims));
  g.out.resize(size_t(g.dims));
  for (int64_t d = 0; d < g.dims; ++d) {
    const size_t i = size_t(d);
    if (g.stride[i] <= 0 || g.dil[i] <= 0) throw ctx.Fail(ErrorCode::kInvalidModel, "strides and dilations must be positive");
    const int64_t ek = g.dil[i] * (g.kernel[i] - 1) + 1;
    if (ap == "SAME_UPPER" || ap == "SAME_LOWER") {
      g.out[i] = (g.in[i] + g.stride[i] - 1) / g.stride[i];
      const int64_t total = std::max<int64_t>(0, (g.out[i] - 1) * g.stride[i] + ek - g.in[i]);
      g.pad_b[i] = ap == "SAME_UPPER" ? total / 2 : total - total / 2;
      g.pad_e[i] = total - g.pad_b[i];
      continue;
    }
    if (ap == "VALID") { g.pad_b[i] = g.pad_e[i] = 0; }
    else { g.pad_b[i] = pads[i]; g.pad_e[i] = pads[i + size_t(g.dims)]; }
    const int64_t span = g.in[i] + g.pad_b[i] + g.pad_e[i] - ek;
    if (span < 0) throw ctx.Fail(ErrorCode::kShapeMismatch, "the kernel is larger than the padded input");
    g.out[i] = (ceil_mode ? (span + g.stride[i] - 1) / g.stride[i] : span / g.stride[i]) + 1;
    if (ceil_mode && (g.out[i] - 1) * g.stride[i] >= g.in[i] + g.pad_b[i]) --g.out[i];
  }
  return g;
}

// Visits every multi-index of `dims`.
template <class F> void ForEach(const std::vector<int64_t>& dims, F f) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  std::vector<int64_t> pos(dims.size(), 0);
  for (int64_t i = 0; i < n; ++i) {
    f(i, pos);
    for (size_t k = dims.size(); k-- > 0;) {
      if (++pos[k] < dims[k]) break;
      pos[k] = 0;
    }
  }
}
int64_t Prod(const std::vector<int64_t>& v) { int64_t p = 1; for (int64_t d : v) p *= d; return p; }

// The in-bounds taps of output position op: each tap's input offset within a channel
// and its kernel index, in kernel (row-major) order; padding taps are left out.
void ListTaps(const Geometry& g, const std::vector<int64_t>& op, const std::vector<int64_t>& in_st,
              std::vector<int64_t>* tap_off, std::vector<int64_t>* tap_k) {
  tap_off->clear();
  tap_k->clear();
  ForEach(g.kernel, [&](int64_t k, const std::vector<int64_t>& kp) {
    int64_t off = 0;
    for (int64_t d = 0; d < g.dims; ++d) {
      const size_t i = size_t(d);
      const int64_t p = op[i] * g.stride[i] - g.pad_b[i] + kp[i] * g.dil[i];
      if (p < 0 || p >= g.in[i]) return;
      off += p * in_st[i];
    }
    tap_off->push_back(off);
    tap_k->push_back(k);
  });
}

// A 1-D or 2-D geometry as planes (1-D as one row), with, per kernel column kw, the
// output columns [col_lo, col_hi) whose input column ow * SW + kw * DW - PW is inside.
struct Plane {
  int64_t IH, IW, OH, OW, KH, KW, SH, SW, DH, DW, PH, PW;
  std::vector<int64_t> col_lo, col_hi;
};
Plane MakePlane(const Geometry& g) {
  const bool two = g.dims == 2;
  const size_t c = two ? 1 : 0;
  Plane p{two ? g.in[0] : 1, g.in[c], two ? g.out[0] : 1, g.out[c], two ? g.kernel[0] : 1, g.kernel[c],
          two ? g.stride[0] : 1, g.stride[c], two ? g.dil[0] : 1, g.dil[c], two ? g.pad_b[0] : 0, g.pad_b[c], {}, {}};
  for (int64_t kw = 0; kw < p.KW; ++kw) {
    const int64_t shift = kw * p.DW - p.PW;
    int64_t lo = shift >= 0 ? 0 : (-shift + p.SW - 1) / p.SW;
    int64_t hi = p.IW - shift <= 0 ? 0 : (p.IW - shift + p.SW - 1) / p.SW;
    lo = std::min(lo, p.OW);
    hi = std::max(lo, std::min(hi, p.OW));
    p.col_lo.push_back(lo);
    p.col_hi.push_back(hi);
  }
  return p;
}

// The pooling planes' runs: for each kernel tap in row-major order, then each output row
// whose tap row is inside the input, step(output offset, input offset, n) over the n
// outputs of the row whose tap column is inside too (consecutive outputs, input
// columns SW apart).
template <class F>
void PlaneTapRuns(const Plane& pl, F step) {
  for (int64_t kh = 0; kh < pl.KH; ++kh)
    for (int64_t kw = 0; kw < pl.KW; ++kw) {
      const int64_t lo = pl.col_lo[size_t(kw)], hi = pl.col_hi[size_t(kw)], shift = kw * pl.DW - pl.PW;
      if (hi <= lo) continue;
      for (int64_t oh = 0; oh < pl.OH; ++oh) {
        const int64_t ih = oh * pl.SH - pl.PH + kh * pl.DH;
        if (ih >= 0 && ih < pl.IH) step(oh * pl.OW + lo, ih * pl.IW + shift + lo * pl.SW, hi - lo);
      }
    }
}

// Pooling by planes, per channel nc of NC: the outputs start at `init`, every tap run of
// the plane goes through step(acc + o, x + i, n) (PlaneTapRuns), then finish(acc). The
// results land in y, directly when it is float, else through a buffer and StoreF32.
template <class Step, class Finish>
void PoolPlanes(const OpContext& ctx, const Plane& pl, int64_t NC, int64_t in_sp, int64_t out_sp, const float* x, Tensor& y,
                float init, Step step, Finish finish) {
  std::vector<float> ybuf;
  float* yf = y.dtype() == DType::kFloat ? y.mutable_data<float>() : (ybuf.resize(size_t(NC * out_sp)), ybuf.data());
  ParallelFor(ctx, NC, 1, [&](int64_t b, int64_t e) {
    for (int64_t nc = b; nc < e; ++nc) {
      const float* xc = x + nc * in_sp;
      float* acc = yf + nc * out_sp;
      std::fill(acc, acc + out_sp, init);
      PlaneTapRuns(pl, [&](int64_t o, int64_t i, int64_t n) { step(acc + o, xc + i, n); });
      finish(acc);
    }
  });
  if (!ybuf.empty()) for (int64_t i = 0; i < NC * out_sp; ++i) StoreF32(y, i, ybuf[size_t(i)]);
}

// Adds one input channel's contribution to an output channel's plane of accumulators:
// kernel row, kernel column, then the output positions whose tap is inside the input.
// Each accumulator gets its terms in kernel order, a = a + x * w (never fused).
template <class T>
void AccumulatePlane(const Plane& pl, const T* x, const T* w, T* acc, const KernelTable* kernels = nullptr) {
  for (int64_t kh = 0; kh < pl.KH; ++kh)
    for (int64_t kw = 0; kw < pl.KW; ++kw) {
      const T wt = w[kh * pl.KW + kw];
      const int64_t lo = pl.col_lo[size_t(kw)], hi = pl.col_hi[size_t(kw)], shift = kw * pl.DW - pl.PW;
      for (int64_t oh = 0; oh < pl.OH; ++oh) {
        const int64_t ih = oh * pl.SH - pl.PH + kh * pl.DH;
        if (ih < 0 || ih >= pl.IH) continue;
        const T* xrow = x + ih * pl.IW + shift;
        T* arow = acc + oh * pl.OW;
        if constexpr (std::is_same_v<T, float>) {
          if (kernels && kernels->MulAddStridedF32) {  // the same loop, vectorised over ow
            if (hi > lo) kernels->MulAddStridedF32(arow + lo, xrow + lo * pl.SW, pl.SW, wt, hi - lo);
            continue;
          }
        }
        if (pl.SW == 1) {
          for (int64_t ow = lo; ow < hi; ++ow) arow[ow] = arow[ow] + xrow[ow] * wt;
        } else {
          for (int64_t ow = lo; ow < hi; ++ow) arow[ow] = arow[ow] + xrow[ow * pl.SW] * wt;
        }
      }
    }
}

// Whether a float 1-D/2-D convolution goes through im2col and the GEMM kernel: only
// with a vector kernel table (the oracle itself runs the plane loops), enough output
// channels per group to fill a register tile, and finite weights (see ConvGemm2D).
bool UseConvGemm(const OpContext& ctx, int64_t Kg, int64_t Mg, const F32View& w) {
  if (!ctx.kernels || !ctx.kernels->GemmF32 || ctx.kernels->GemmF32 == &ref::GemmF32) return false;
  if (Mg < 4 || Kg < 4) return false;
  // Finite: the exponent field is not all ones (a branch-free scan). For a constant
  // weight the answer is kept (a one-element tensor in the session's derived cache), so
  // the scan runs once, not on every run.
  auto scan = [&] {
    uint32_t bad = 0;
    for (size_t i = 0; i < w.size(); ++i) bad |= uint32_t((F2U(w[i]) & 0x7F800000u) == 0x7F800000u);
    return bad == 0;
  };
  const Tensor* known = ctx.ConstDerived(1, "finite", [&](const Tensor&) {
    Tensor t(DType::kBool, Shape{}, "finite flag");
    *t.mutable_data<bool>() = scan();
    return t;
  });
  return known ? *known->data<bool>() : scan();
}

// Whether a float 1-D/2-D convolution runs the direct kernel (ConvDirectF32): a
// vector kernel table, strides 1 or 2 along rows, enough output channels to fill its
// tiles, and few input channels per group (im2col would cost more than the product:
// a network's first layer on an image).
bool UseConvDirect(const OpContext& ctx, const Plane& pl, int64_t Cg, int64_t Mg) {
  if (!ctx.kernels || !ctx.kernels->ConvDirectF32 || ctx.kernels->ConvDirectF32 == &ref::ConvDirectF32) return false;
  // Measured on single layers: 3 channels, 3x3 stride 2 at 224x224 into 16: 0.19 ms
  // against 0.35 ms by im2col and GEMM; 7x7 into 64: even; 64 channels 3x3: 4.3 against
  // 3.3 ms (the GEMM's packed panels win once the fold is long).
  return (pl.SW == 1 || pl.SW == 2) && Mg >= 4 && Cg <= 4 && pl.OW >= 8;
}

// Convolution as GEMM: per image and group, Y[Mg x P] = W[Mg x Kg] * col[Kg x P] with
// col's row (c, kh, kw) in the reference's fold order, so each output folds channel
// then kernel position from -0.0 exactly as the plane loops do -- except that col holds
// +0.0 at padding taps where the reference skips the tap. With finite weights such a
// term is +-0, and adding a zero leaves any nonzero accumulator unchanged, so the two
// folds stay bitwise equal until both are zeros of possibly different sign; then they
// stay zeros or take the same next term. Hence the results differ at most in the sign
// of a zero result, and only at positions with a padding tap: those zeros are
// recomputed here by the reference fold. Columns go in blocks so col stays small.
// relu: a fused Relu follows (the bias first); it maps both zeros to +0, so then the
// fix-up is not needed: with a nonzero bias the zero's sign is lost in the sum anyway.
// wt: null, or the weight transposed ([Cg*KH*KW, M], from OpContext::ConstDerived), used
// when there is one output position: the product is then a row times wt's rows.
// bias (null: none) and act (a UnaryF32 op, -1: none): the epilogue. When no zero needs
// the fix-up (no padding tap anywhere, or a fused Relu), the GEMM kernel applies it to
// each finished tile (GemmBiasActF32) and this returns true; otherwise it returns false
// and the caller applies it after the fix-up.
bool ConvGemm2D(const OpContext& ctx, const Plane& pl, const float* x, const float* w, const float* wt, int64_t N,
                int64_t C, int64_t M, int64_t group, int64_t in_sp, float* y, bool relu, const float* bias, int32_t act) {
  const int64_t Cg = C / group, Mg = M / group, ksp = pl.KH * pl.KW, Kg = Cg * ksp, P = pl.OH * pl.OW;
  const bool direct = ksp == 1 && pl.SH == 1 && pl.SW == 1 && pl.PH == 0 && pl.PW == 0 && pl.IH == pl.OH && pl.IW == pl.OW;
  int64_t max_lo = 0, min_hi = pl.OW;
  for (int64_t kw = 0; kw < pl.KW; ++kw) {
    max_lo = std::max(max_lo, pl.col_lo[size_t(kw)]);
    min_hi = std::min(min_hi, pl.col_hi[size_t(kw)]);
  }
  auto has_pad = [&](int64_t p) {
    const int64_t oh = p / pl.OW, ow = p % pl.OW;
    const int64_t ih0 = oh * pl.SH - pl.PH, ih1 = ih0 + (pl.KH - 1) * pl.DH;
    return ih0 < 0 || ih1 >= pl.IH || ow < max_lo || ow >= min_hi;
  };
  // Whether any output has a padding tap (the first and last rows and columns decide).
  const bool any_pad = pl.OH > 0 && pl.OW > 0 && (-pl.PH < 0 || (pl.OH - 1) * pl.SH - pl.PH + (pl.KH - 1) * pl.DH >= pl.IH ||
                                                  max_lo > 0 || min_hi < pl.OW);
  const bool fuse = (bias || act >= 0) && (relu || !any_pad) && !(wt && P == 1);
  const float* epi_bias = fuse ? bias : nullptr;
  const int32_t epi_act = fuse ? act : -1;
  // Column blocks: col holds about 256k floats (1 MB, about a core's L2), at least 64
  // columns.
  int64_t pc = direct ? P : std::max<int64_t>(64, std::min<int64_t>(P, (int64_t(1) << 18) / std::max<int64_t>(Kg, 1)));
  // With several threads and enough columns, whole column blocks go to the threads: each
  // builds its own columns and runs the kernel on them (one handoff per image and group,
  // no B packed twice). Otherwise blocks run in turn with the GEMM itself split.
  const int threads = ctx.pool ? ctx.pool->threads() : 1;
  const bool by_blocks = threads > 1 && P >= 2 * 64 * threads;
  if (by_blocks) pc = std::min(pc, std::max<int64_t>(64, (P + 2 * threads - 1) / (2 * threads)));
  auto* kernel = ctx.kernels->GemmBiasActF32;
  // Writes the columns [p0, p0 + np) of image/group xg into cb (Kg rows of np).
  auto im2col = [&](const float* xg, int64_t p0, int64_t np, float* cb, int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const int64_t c = r / ksp, kh = (r % ksp) / pl.KW, kw = r % pl.KW;
      const float* xc = xg + c * in_sp;
      const int64_t shift = kw * pl.DW - pl.PW, lo = pl.col_lo[size_t(kw)], hi = pl.col_hi[size_t(kw)];
      float* dst = cb + r * np;
      int64_t oh = p0 / pl.OW, ow = p0 % pl.OW;
      for (int64_t i = 0; i < np;) {
        // The rest of output row oh inside this block.
        const int64_t run = std::min(np - i, pl.OW - ow);
        const int64_t ih = oh * pl.SH - pl.PH + kh * pl.DH;
        if (ih < 0 || ih >= pl.IH) {
          std::fill(dst + i, dst + i + run, 0.0f);
        } else {
          // Columns [ow, ow + run): zeros before lo and from hi, input between.
          const float* xrow = xc + ih * pl.IW + shift;
          const int64_t a = std::min(std::max(lo, ow), ow + run), b = std::max(a, std::min(hi, ow + run));
          float* d = dst + i - ow;  // d[o] is column o's slot
          std::fill(d + ow, d + a, 0.0f);
          if (pl.SW == 1) std::memcpy(d + a, xrow + a, size_t(b - a) * sizeof(float));
          else for (int64_t o = a; o < b; ++o) d[o] = xrow[o * pl.SW];
          std::fill(d + b, d + ow + run, 0.0f);
        }
        i += run;
        ow = 0;
        ++oh;
      }
    }
  };
  for (int64_t n = 0; n < N; ++n)
    for (int64_t grp = 0; grp < group; ++grp) {
      const float* xg = x + (n * C + grp * Cg) * in_sp;
      const float* wg = w + grp * Mg * Kg;
      float* yg = y + (n * M + grp * Mg) * P;
      if (by_blocks) {
        const int64_t blocks = (P + pc - 1) / pc;
        ParallelFor(ctx, blocks, 1, [&](int64_t b0, int64_t b1) {
          thread_local std::vector<float> cols;
          if (!direct && cols.size() < size_t(Kg * pc)) cols.resize(size_t(Kg * pc));
          for (int64_t blk = b0; blk < b1; ++blk) {
            const int64_t p0 = blk * pc, np = std::min(pc, P - p0);
            const float* gb = epi_bias ? epi_bias + grp * Mg : nullptr;
            if (direct) {
              kernel(Mg, np, Kg, wg, Kg, 1, xg + p0, in_sp, 1, yg + p0, P, gb, epi_act);
            } else {
              im2col(xg, p0, np, cols.data(), 0, Kg);
              kernel(Mg, np, Kg, wg, Kg, 1, cols.data(), np, 1, yg + p0, P, gb, epi_act);
            }
          }
        });
      } else {
        thread_local std::vector<float> col;
        if (!direct && col.size() < size_t(Kg * pc)) col.resize(size_t(Kg * pc));
        for (int64_t p0 = 0; p0 < P; p0 += pc) {
          const int64_t np = std::min(pc, P - p0);
          const float* B = xg + p0;
          int64_t b_rs = in_sp;
          if (!direct) {
            float* cb = col.data();
            ParallelFor(ctx, Kg, 8, [&](int64_t r0, int64_t r1) { im2col(xg, p0, np, cb, r0, r1); });
            B = cb;
            b_rs = np;
          }
          if (wt && np == 1) {
            // One position: C^T (1 x Mg) = col^T W^T, W^T's rows read in place.
            ParallelGemmF32(ctx, 1, Mg, Kg, B, 0, b_rs, wt + grp * Mg, M, 1, yg + p0, 1);
          } else {
            ParallelGemmF32(ctx, Mg, np, Kg, wg, Kg, 1, B, b_rs, 1, yg + p0, P, epi_bias ? epi_bias + grp * Mg : nullptr, epi_act);
          }
        }
      }
      // The zero results at padded positions, by the reference fold (output channels
      // over the threads).
      if (relu || !any_pad) continue;
      ParallelFor(ctx, Mg, 8, [&](int64_t m_begin, int64_t m_end) {
      for (int64_t p = 0; p < P; ++p) {
        if (!has_pad(p)) continue;
        const int64_t oh = p / pl.OW, ow = p % pl.OW;
        for (int64_t m = m_begin; m < m_end; ++m) {
          float& out = yg[m * P + p];
          if (out != 0.0f) continue;
          float acc = -0.0f;
          for (int64_t c = 0; c < Cg; ++c)
            for (int64_t kh = 0; kh < pl.KH; ++kh) {
              const int64_t ih = oh * pl.SH - pl.PH + kh * pl.DH;
              if (ih < 0 || ih >= pl.IH) continue;
              for (int64_t kw = 0; kw < pl.KW; ++kw) {
                const int64_t iw = ow * pl.SW - pl.PW + kw * pl.DW;
                if (iw < 0 || iw >= pl.IW) continue;
                acc = acc + xg[c * in_sp + ih * pl.IW + iw] * wg[m * Kg + c * ksp + kh * pl.KW + kw];
              }
            }
          out = acc;
        }
      }
      });
    }
  return fuse;
}


// Convolution as "taps" in any number of dimensions (3-D convolution, ConvTranspose by
// stride phases): output position o (a multi-index over out) reads, for tap t (a
// multi-index over the per-dimension offset lists b, row-major: the reference's kernel
// order), input coordinate i_d = a_d * o_d + b_d[t_d] of every channel; a coordinate
// outside the input is a padding tap, which the reference skips.
struct Taps {
  std::vector<int64_t> in, out, a;
  std::vector<std::vector<int64_t>> b;
};

// Y[Mg x P] = W[Mg x Kg] * col[Kg x P] for the Cg channels at x (in_sp apart), W row-major
// with column (c, t), col's row (c, t) in that order: each output folds channel then
// tap from -0.0, the reference's order, with +0.0 at padding taps where the reference
// skips them. As in ConvGemm2D (finite weights), that can change only the sign of a zero
// result at a position with a padding tap; those zeros are recomputed by the reference
// fold. No bias or activation (the caller's, after the full sum). Column blocks keep col
// near 1 MB; col rows and the GEMM go to the threads.
void TapGemm(const OpContext& ctx, const Taps& tg, const float* x, int64_t Cg, int64_t in_sp, const float* w, int64_t Mg,
             float* y) {
  const size_t D = tg.in.size();
  int64_t T = 1, P = 1;
  for (const auto& v : tg.b) T *= int64_t(v.size());
  for (int64_t n : tg.out) P *= n;
  const int64_t Kg = Cg * T;
  if (P == 0 || Mg == 0) return;
  if (Kg == 0) {  // no term at all: -0.0, as the reference's empty fold
    std::fill(y, y + Mg * P, -0.0f);
    return;
  }
  std::vector<int64_t> in_st(D, 1), bmin(D), bmax(D);
  for (size_t d = D - 1; d > 0; --d) in_st[d - 1] = in_st[d] * tg.in[d];
  for (size_t d = 0; d < D; ++d) {
    bmin[d] = *std::min_element(tg.b[d].begin(), tg.b[d].end());
    bmax[d] = *std::max_element(tg.b[d].begin(), tg.b[d].end());
  }
  const size_t L = D - 1;  // the last dimension runs along rows
  const int64_t nl = tg.out[L], al = tg.a[L], inl = tg.in[L];
  std::vector<int64_t> lo_l, hi_l;  // per last-dimension tap: outputs [lo, hi) inside the input
  for (int64_t bl : tg.b[L]) {
    int64_t lo = bl >= 0 ? 0 : (-bl + al - 1) / al;
    int64_t hi = inl - bl <= 0 ? 0 : (inl - bl + al - 1) / al;
    lo = std::min(lo, nl);
    lo_l.push_back(lo);
    hi_l.push_back(std::max(lo, std::min(hi, nl)));
  }
  // Writes rows [r0, r1) of the columns [p0, p0 + np) into cb (np apart).
  auto im2col = [&](int64_t p0, int64_t np, float* cb, int64_t r0, int64_t r1) {
    std::vector<int64_t> tix(D), lead(D);
    for (int64_t r = r0; r < r1; ++r) {
      int64_t t = r % T;
      for (size_t d = D; d-- > 0;) {
        const int64_t nt = int64_t(tg.b[d].size());
        tix[d] = t % nt;
        t /= nt;
      }
      const float* xc = x + (r / T) * in_sp;
      const int64_t bl = tg.b[L][size_t(tix[L])], lo = lo_l[size_t(tix[L])], hi = hi_l[size_t(tix[L])];
      float* dst = cb + r * np;
      int64_t ol = p0 % nl, rest = p0 / nl;
      for (size_t d = L; d-- > 0;) {
        lead[d] = rest % tg.out[d];
        rest /= tg.out[d];
      }
      for (int64_t i = 0; i < np;) {
        const int64_t run = std::min(np - i, nl - ol);
        int64_t off = 0;
        bool inside = true;
        for (size_t d = 0; d < L && inside; ++d) {
          const int64_t ic = tg.a[d] * lead[d] + tg.b[d][size_t(tix[d])];
          inside = ic >= 0 && ic < tg.in[d];
          off += ic * in_st[d];
        }
        if (!inside) {
          std::fill(dst + i, dst + i + run, 0.0f);
        } else {
          const float* xrow = xc + off + bl;
          const int64_t s = std::min(std::max(lo, ol), ol + run), e = std::max(s, std::min(hi, ol + run));
          float* dd = dst + i - ol;  // dd[o] is last-dimension output o's slot
          std::fill(dd + ol, dd + s, 0.0f);
          if (al == 1) std::memcpy(dd + s, xrow + s, size_t(e - s) * sizeof(float));
          else for (int64_t o = s; o < e; ++o) dd[o] = xrow[o * al];
          std::fill(dd + e, dd + ol + run, 0.0f);
        }
        i += run;
        ol = 0;
        for (size_t d = L; d-- > 0;) {
          if (++lead[d] < tg.out[d]) break;
          lead[d] = 0;
        }
      }
    }
  };
  const int64_t pc = std::max<int64_t>(64, std::min<int64_t>(P, (int64_t(1) << 18) / Kg));
  thread_local std::vector<float> col_tl;
  std::vector<float>& col = col_tl;  // the workers below use this thread's buffer
  if (col.size() < size_t(Kg * std::min(pc, P))) col.resize(size_t(Kg * std::min(pc, P)));
  for (int64_t p0 = 0; p0 < P; p0 += pc) {
    const int64_t np = std::min(pc, P - p0);
    float* cb = col.data();
    ParallelFor(ctx, Kg, 8, [&](int64_t r0, int64_t r1) { im2col(p0, np, cb, r0, r1); });
    ParallelGemmF32(ctx, Mg, np, Kg, w, Kg, 1, cb, np, 1, y + p0, P);
  }
  // Positions with a padding tap, per dimension.
  std::vector<std::vector<uint8_t>> partial(D);
  bool any = false;
  for (size_t d = 0; d < D; ++d) {
    for (int64_t o = 0; o < tg.out[d]; ++o) {
      const int64_t i0 = tg.a[d] * o + bmin[d], i1 = tg.a[d] * o + bmax[d];
      partial[d].push_back(uint8_t(i0 < 0 || i1 >= tg.in[d]));
      any |= partial[d].back() != 0;
    }
  }
  if (!any) return;
  // Zero results at those positions, by the reference fold (output channels over the
  // threads).
  ParallelFor(ctx, Mg, 8, [&](int64_t m0, int64_t m1) {
    std::vector<int64_t> pos(D), tix(D), tap_off, tap_t;
    for (int64_t p = 0; p < P; ++p) {
      int64_t rest = p;
      bool pad = false;
      for (size_t d = D; d-- > 0;) {
        pos[d] = rest % tg.out[d];
        rest /= tg.out[d];
        pad |= partial[d][size_t(pos[d])] != 0;
      }
      if (!pad) continue;
      bool zero = false;
      for (int64_t m = m0; m < m1 && !zero; ++m) zero = y[m * P + p] == 0.0f;
      if (!zero) continue;
      tap_off.clear();
      tap_t.clear();
      for (int64_t t = 0; t < T; ++t) {
        int64_t tt = t, off = 0;
        bool inside = true;
        for (size_t d = D; d-- > 0;) {
          const int64_t nt = int64_t(tg.b[d].size());
          const int64_t ic = tg.a[d] * pos[d] + tg.b[d][size_t(tt % nt)];
          tt /= nt;
          inside = inside && ic >= 0 && ic < tg.in[d];
          off += ic * in_st[d];
        }
        if (inside) {
          tap_off.push_back(off);
          tap_t.push_back(t);
        }
      }
      for (int64_t m = m0; m < m1; ++m) {
        float& out = y[m * P + p];
        if (out != 0.0f) continue;
        float acc = -0.0f;
        for (int64_t c = 0; c < Cg; ++c) {
          const float* xc = x + c * in_sp;
          const float* wc = w + m * Kg + c * T;
          for (size_t k = 0; k < tap_off.size(); ++k) acc = acc + xc[tap_off[k]] * wc[tap_t[k]];
        }
        out = acc;
      }
    }
  });
}

}  // namespace

namespace {
// The inputs a convolution's prepared state was made for: the input and weight shapes
// and whether there is a bias.
struct ConvInputs : NodeState {
  Shape x_shape, w_shape;
  bool has_bias = false;
  void Set(const OpContext& ctx, const Tensor& x, const Tensor& w) {
    x_shape = x.shape();
    w_shape = w.shape();
    has_bias = ctx.has_input(2);
  }
  bool Fits(const OpContext& ctx, const Tensor& x, const Tensor& w) const {
    return x_shape == x.shape() && w_shape == w.shape() && has_bias == ctx.has_input(2);
  }
};

// The node's prepared state P (a ConvInputs), made by make() when absent or made for
// other inputs.
template <class P, class Make>
std::shared_ptr<const P> PreparedConv(const OpContext& ctx, const Tensor& x, const Tensor& w, Make make) {
  return ctx.Prepared<P>([&](const P& p) { return p.Fits(ctx, x, w); }, make);
}

// A convolution's bias (input 2) as floats, read in place when float (null: none);
// kShapeMismatch unless it has one value per output channel.
const float* ConvBias(const OpContext& ctx, int64_t M, std::optional<F32View>* view) {
  if (!ctx.has_input(2)) return nullptr;
  view->emplace(ctx, ctx.in(2));
  if (int64_t((*view)->size()) != M)
    throw ctx.Fail(ErrorCode::kShapeMismatch, "bias has " + std::to_string((*view)->size()) + " elements for " +
                                                  std::to_string(M) + " output channels");
  return (*view)->data();
}

// What Conv derives from its attributes and its input and weight shapes, kept per node
// (OpContext::Prepared) and remade when a shape changes.
struct ConvPrep : ConvInputs {
  int64_t group = 1, N = 0, C = 0, M = 0, Cg = 0, Mg = 0, in_sp = 0, out_sp = 0, k_sp = 0;
  Geometry g;
  Plane pl{};  // 1-D and 2-D
  Taps tg;     // 3-D and more
  std::vector<int64_t> in_st;
  Shape out_shape;
  bool relu = false;
  int32_t act_op = -1;  // UnaryF32's op, -1: none
};

std::shared_ptr<ConvPrep> MakeConvPrep(const OpContext& ctx, const Tensor& x, const Tensor& w) {
  auto p = std::make_shared<ConvPrep>();
  p->Set(ctx, x, w);
  const int64_t group = p->group = ctx.attr_i("group", 1);
  if (w.rank() < 3) throw ctx.Fail(ErrorCode::kShapeMismatch, "weight must have rank >= 3, got " + ShapeToString(w.shape()));
  std::vector<int64_t> kernel = ctx.attr_ints("kernel_shape", std::vector<int64_t>(w.shape().begin() + 2, w.shape().end()));
  p->g = MakeGeometry(ctx, x.shape(), kernel, false);
  const Geometry& g = p->g;
  const int64_t N = p->N = x.shape()[0], C = p->C = x.shape()[1], M = p->M = w.shape()[0];
  if (group <= 0 || C % group || M % group || w.shape()[1] != C / group) {
    throw ctx.Fail(ErrorCode::kShapeMismatch, "input channels " + std::to_string(C) + ", weight " +
                                                  ShapeToString(w.shape()) + " and group " + std::to_string(group) + " do not agree");
  }
  if (w.rank() != x.rank()) throw ctx.Fail(ErrorCode::kShapeMismatch, "weight " + ShapeToString(w.shape()) + " and input " +
                                                                          ShapeToString(x.shape()) + " differ in rank");
  p->Cg = C / group;
  p->Mg = M / group;
  const std::string act = ctx.attr_s(kFusedActivationAttr, "");
  if (!act.empty() && act != "Relu" && act != "HardSwish")
    throw ctx.Fail(ErrorCode::kInvalidModel, "unknown fused activation '" + act + "'");
  p->relu = act == "Relu";
  p->act_op = act.empty() ? -1 : p->relu ? kUnReluF32 : kUnHardSwishF32;
  p->out_shape = Shape{N, M};
  p->out_shape.insert(p->out_shape.end(), g.out.begin(), g.out.end());
  p->in_sp = Prod(g.in);
  p->out_sp = Prod(g.out);
  p->k_sp = Prod(g.kernel);
  p->in_st.assign(size_t(g.dims), 1);
  for (int64_t d = g.dims - 1; d > 0; --d) p->in_st[size_t(d - 1)] = p->in_st[size_t(d)] * g.in[size_t(d)];
  if (g.dims <= 2) {
    p->pl = MakePlane(g);
  } else {
    // Taps: kernel position k of dimension d reads input k * dilation - pad + stride * o.
    p->tg = Taps{g.in, g.out, g.stride, {}};
    for (int64_t d = 0; d < g.dims; ++d) {
      const size_t i = size_t(d);
      std::vector<int64_t> b;
      for (int64_t k = 0; k < g.kernel[i]; ++k) b.push_back(k * g.dil[i] - g.pad_b[i]);
      p->tg.b.push_back(std::move(b));
    }
  }
  return p;
}
}  // namespace

void Conv(OpContext& ctx) {
  const Tensor& x = ctx.in(0);
  const Tensor& w = ctx.in(1);
  const auto prep = PreparedConv<ConvPrep>(ctx, x, w, [&] { return MakeConvPrep(ctx, x, w); });
  const ConvPrep& P = *prep;
  const Geometry& g = P.g;
  const int64_t group = P.group, N = P.N, C = P.C, M = P.M, Cg = P.Cg, Mg = P.Mg;
  const F32View xv(ctx, x), wv(ctx, w);
  const bool relu = P.relu;
  const int32_t act_op = P.act_op;
  std::optional<F32View> bias_view;
  const float* bias = ConvBias(ctx, M, &bias_view);
  Tensor& y = ctx.out_uninit(0, x.dtype(), P.out_shape);  // every element is written
  // Stores result i: a float output takes the activation in f32 (the fused node would
  // see that very float); another type first rounds the sum to its element type, as the
  // Conv node's output would be, then the activation, then rounds again.
  auto store_act = [&](int64_t i, float v) {
    StoreF32(y, i, v);
    if (act_op < 0) return;
    float r = float(ElementAsDouble(y, i));
    ref::UnaryF32(act_op, 0.0f, 0.0f, &r, &r, 1);
    StoreF32(y, i, r);
  };
  const int64_t in_sp = P.in_sp, out_sp = P.out_sp, k_sp = P.k_sp;
  const std::vector<int64_t>& in_st = P.in_st;
  // 3-D and more through the taps engine when the GEMM conditions hold (else the
  // general loops at the end).
  const bool nd_gemm = g.dims > 2 && UseConvGemm(ctx, Cg * k_sp, Mg, wv);
  if (g.dims <= 2 || nd_gemm) {
    // Results in f32: straight into y when it is float, else a buffer then StoreF32.
    std::vector<float> ybuf;
    float* yf = nullptr;
    if (y.dtype() == DType::kFloat) {
      yf = y.mutable_data<float>();
    } else {
      ybuf.resize(size_t(N * M * out_sp));
      yf = ybuf.data();
    }
    bool epilogue_done = false;  // bias and activation applied by the GEMM kernel
    if (nd_gemm) {
      const Taps& tg = P.tg;
      for (int64_t n = 0; n < N; ++n)
        for (int64_t grp = 0; grp < group; ++grp)
          TapGemm(ctx, tg, xv.data() + (n * C + grp * Cg) * in_sp, Cg, in_sp, wv.data() + grp * Mg * Cg * k_sp, Mg,
                  yf + (n * M + grp * Mg) * out_sp);
    } else if (const Plane& pl = P.pl; UseConvDirect(ctx, pl, Cg, Mg)) {
      // Few input channels (a network's first layer): the direct kernel, output rows in
      // blocks over the threads, the epilogue in its tiles (the activation only for a
      // float output, as below).
      const float* bp = bias;
      const int32_t kact = y.dtype() == DType::kFloat ? act_op : -1;
      epilogue_done = true;
      const int64_t geo[12] = {pl.IH, pl.IW, pl.OH, pl.OW, pl.KH, pl.KW, pl.SH, pl.SW, pl.DH, pl.DW, pl.PH, pl.PW};
      const int threads = ctx.pool ? ctx.pool->threads() : 1;
      const int64_t rb = std::max<int64_t>(1, pl.OH / (4 * threads)), row_blocks = (pl.OH + rb - 1) / rb;
      ParallelFor(ctx, N * group * row_blocks, 1, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) {
          const int64_t ng = i / row_blocks, n = ng / group, grp = ng % group, r0 = i % row_blocks * rb;
          ctx.kernels->ConvDirectF32(xv.data() + (n * C + grp * Cg) * in_sp, in_sp, wv.data() + grp * Mg * Cg * k_sp,
                                     yf + (n * M + grp * Mg) * out_sp, Cg, Mg, geo, r0, std::min(pl.OH, r0 + rb),
                                     bp ? bp + grp * Mg : nullptr, kact);
        }
      });
    } else if (UseConvGemm(ctx, Cg * k_sp, Mg, wv)) {
      const Tensor* wt = nullptr;
      if (out_sp == 1 && w.dtype() == DType::kFloat)
        wt = ctx.ConstDerived(1, "W^T", [&](const Tensor& t) { return TransposedF32(t.data<float>(), M, Cg * k_sp); });
      // The epilogue in the GEMM when it can: the activation only for a float output
      // (another type rounds before its activation, store_act).
      epilogue_done = ConvGemm2D(ctx, pl, xv.data(), wv.data(), wt ? wt->data<float>() : nullptr, N, C, M, group, in_sp, yf,
                                 relu, bias, y.dtype() == DType::kFloat ? act_op : -1);
    } else if (Cg == 1 && Mg == 1 && ctx.kernels && ctx.kernels->DepthwiseConvF32 &&
               ctx.kernels->DepthwiseConvF32 != &ref::DepthwiseConvF32) {
      // Depthwise, one output per input channel: lanes across channels (blocks of
      // channels over the threads), the epilogue in the kernel (the activation only for
      // a float output, as above).
      const float* bp = bias;
      const int32_t kact = y.dtype() == DType::kFloat ? act_op : -1;
      epilogue_done = true;
      const int64_t geo[12] = {pl.IH, pl.IW, pl.OH, pl.OW, pl.KH, pl.KW, pl.SH, pl.SW, pl.DH, pl.DW, pl.PH, pl.PW};
      // Blocks of 16 to 64 channels (a multiple of every target's lanes), at least two
      // per thread when the channels allow.
      const int threads = ctx.pool ? ctx.pool->threads() : 1;
      const int64_t bs = std::clamp<int64_t>((M / (2 * threads) + 15) / 16 * 16, 16, 64);
      const int64_t blocks = (M + bs - 1) / bs;
      ParallelFor(ctx, N * blocks, 1, [&](int64_t b, int64_t e) {
        for (int64_t nb = b; nb < e; ++nb) {
          const int64_t n = nb / blocks, c0 = nb % blocks * bs, nc = std::min<int64_t>(bs, M - c0);
          ctx.kernels->DepthwiseConvF32(xv.data() + (n * C + c0) * in_sp, wv.data() + c0 * k_sp,
                                        yf + (n * M + c0) * out_sp, nc, geo, bp ? bp + c0 : nullptr, kact);
        }
      });
    } else if (Cg == 1 && ctx.kernels && ctx.kernels->ConvPlaneF32 && ctx.kernels->ConvPlaneF32 != &ref::ConvPlaneF32) {
      // One input channel per output (depthwise): a plane per output channel, each
      // output folding its taps in kernel order in a register (ConvPlaneF32).
      const int64_t geo[12] = {pl.IH, pl.IW, pl.OH, pl.OW, pl.KH, pl.KW, pl.SH, pl.SW, pl.DH, pl.DW, pl.PH, pl.PW};
      ParallelFor(ctx, N * M, 1, [&](int64_t b, int64_t e) {
        for (int64_t nm = b; nm < e; ++nm) {
          const int64_t n = nm / M, m = nm % M, grp = m / Mg;
          ctx.kernels->ConvPlaneF32(xv.data() + (n * C + grp) * in_sp, wv.data() + m * k_sp, yf + nm * out_sp, geo);
        }
      });
    } else {
      // 1-D and 2-D (1-D as one row): one plane of accumulators per output channel;
      // the loops run channel, kernel row, kernel column, then over the output
      // positions whose tap is inside the input. Each output still folds channel
      // (outer) then kernel position (row-major) from -0.0, skipping padding taps: the
      // same sums as the general path below, with the innermost loop along a row.
      ParallelFor(ctx, N * M, 1, [&](int64_t b, int64_t e) {
        for (int64_t nm = b; nm < e; ++nm) {
          const int64_t n = nm / M, m = nm % M, grp = m / Mg;
          float* acc = yf + nm * out_sp;
          std::fill(acc, acc + out_sp, -0.0f);
          for (int64_t c = 0; c < Cg; ++c) {
            const float* xc = xv.data() + (n * C + grp * Cg + c) * in_sp;
            const float* wc = wv.data() + (m * Cg + c) * k_sp;
            AccumulatePlane<float>(pl, xc, wc, acc, ctx.kernels);
          }
        }
      });
    }
    // The bias after the full sum, then a fused activation (passes.h), in one pass.
    const bool act_here = act_op >= 0 && y.dtype() == DType::kFloat;
    if (!epilogue_done && (bias != nullptr || act_here)) {
      ParallelFor(ctx, N * M, std::max<int64_t>(1, 16384 / std::max<int64_t>(out_sp, 1)), [&](int64_t b, int64_t e) {
        for (int64_t nm = b; nm < e; ++nm) {
          float* o = yf + nm * out_sp;
          if (bias != nullptr) {
            const float bv = bias[size_t(nm % M)];
            for (int64_t i = 0; i < out_sp; ++i) o[i] = o[i] + bv;
          }
          if (act_here) {
            if (ctx.kernels && ctx.kernels->UnaryF32) ctx.kernels->UnaryF32(act_op, 0.0f, 0.0f, o, o, out_sp);
            else ref::UnaryF32(act_op, 0.0f, 0.0f, o, o, out_sp);
          }
        }
      });
    }
    if (yf != nullptr && y.dtype() != DType::kFloat) {
      for (int64_t i = 0; i < N * M * out_sp; ++i) store_act(i, ybuf[size_t(i)]);
    }
    return;
  }
  // The taps of one output position (input offset within a channel, kernel index) are
  // listed once and shared by every output channel; each output still folds channel
  // (outer) then kernel position (row-major), skipping padding taps, as above.
  std::vector<int64_t> tap_off, tap_k;
  tap_off.reserve(size_t(k_sp));
  tap_k.reserve(size_t(k_sp));
  const float* xd = xv.data();
  const float* wd = wv.data();
  for (int64_t n = 0; n < N; ++n)
    ForEach(g.out, [&](int64_t o, const std::vector<int64_t>& op) {
      ListTaps(g, op, in_st, &tap_off, &tap_k);
      const size_t taps = tap_off.size();
      for (int64_t m = 0; m < M; ++m) {
        const int64_t grp = m / Mg;
        float acc = -0.0f;
        for (int64_t c = 0; c < Cg; ++c) {
          const float* xc = xd + (n * C + grp * Cg + c) * in_sp;
          const float* wc = wd + (m * Cg + c) * k_sp;
          for (size_t t = 0; t < taps; ++t) acc = acc + xc[tap_off[t]] * wc[tap_k[t]];
        }
        if (bias != nullptr) acc = acc + bias[size_t(m)];
        store_act((n * M + m) * out_sp + o, acc);
      }
    });
}

namespace {
// What ConvTranspose derives from its attributes and its input and weight shapes, kept
// per node (OpContext::Prepared).
struct ConvTPrep : ConvInputs {
  int64_t group = 1, D = 0, N = 0, C = 0, M = 0, Mg = 0, Cg = 0, in_sp = 0, out_sp = 0, k_sp = 0;
  std::vector<int64_t> kernel, in, stride, dil, out, pb, pe, in_st, kst, ost;
  Shape out_shape;
  bool patch = false;  // the patch path's geometry (see ConvTranspose)
  // The stride phases' stride-1 convolutions (see ConvTranspose).
  struct Phase {
    std::vector<int64_t> r, j0;
    Taps tg;
    std::vector<int64_t> kt;  // tap t's kernel position
    int64_t T = 0, P = 0;
  };
  std::vector<Phase> phases;
};

std::shared_ptr<ConvTPrep> MakeConvTPrep(const OpContext& ctx, const Tensor& x, const Tensor& w) {
  auto pp = std::make_shared<ConvTPrep>();
  ConvTPrep& P = *pp;
  P.Set(ctx, x, w);
  const int64_t group = P.group = ctx.attr_i("group", 1);
  const int64_t D = P.D = x.rank() - 2;
  if (D < 1) throw ctx.Fail(ErrorCode::kShapeMismatch, "input must have rank >= 3");
  if (w.rank() != x.rank()) throw ctx.Fail(ErrorCode::kShapeMismatch, "weight " + ShapeToString(w.shape()) + " and input " +
                                                                          ShapeToString(x.shape()) + " differ in rank");
  const int64_t C = P.C = x.shape()[1];
  P.N = x.shape()[0];
  if (group <= 0 || C % group || w.shape()[0] != C) throw ctx.Fail(ErrorCode::kShapeMismatch, "weight and input channels disagree");
  P.Mg = w.shape()[1];
  P.M = P.Mg * group;
  P.Cg = C / group;
  std::vector<int64_t>& kernel = P.kernel;
  std::vector<int64_t>& in = P.in;
  std::vector<int64_t>& stride = P.stride;
  std::vector<int64_t>& dil = P.dil;
  kernel = ctx.attr_ints("kernel_shape", std::vector<int64_t>(w.shape().begin() + 2, w.shape().end()));
  in.assign(x.shape().begin() + 2, x.shape().end());
  stride = ctx.attr_ints("strides", std::vector<int64_t>(size_t(D), 1));
  dil = ctx.attr_ints("dilations", std::vector<int64_t>(size_t(D), 1));
  const auto opad = ctx.attr_ints("output_padding", std::vector<int64_t>(size_t(D), 0));
  const auto pads = ctx.attr_ints("pads", std::vector<int64_t>(size_t(2 * D), 0));
  if (int64_t(kernel.size()) != D || int64_t(stride.size()) != D || int64_t(dil.size()) != D || int64_t(opad.size()) != D ||
      int64_t(pads.size()) != 2 * D)
    throw ctx.Fail(ErrorCode::kInvalidModel, "kernel_shape, strides, dilations, output_padding or pads have the wrong length");
  for (int64_t d = 0; d < D; ++d)
    if (stride[size_t(d)] <= 0 || dil[size_t(d)] <= 0)
      throw ctx.Fail(ErrorCode::kInvalidModel, "strides and dilations must be positive");
  const auto out_shape_attr = ctx.attr_ints("output_shape");
  if (!out_shape_attr.empty() && int64_t(out_shape_attr.size()) < D)
    throw ctx.Fail(ErrorCode::kInvalidModel, "output_shape has fewer values than spatial dimensions");
  const std::string ap = ctx.attr_s("auto_pad", "NOTSET");
  std::vector<int64_t>& out = P.out;
  std::vector<int64_t>& pb = P.pb;
  std::vector<int64_t>& pe = P.pe;
  out.assign(static_cast<size_t>(D), 0);
  pb.assign(static_cast<size_t>(D), 0);
  pe.assign(static_cast<size_t>(D), 0);
  for (int64_t d = 0; d < D; ++d) {
    const size_t i = size_t(d);
    const int64_t ek = (kernel[i] - 1) * dil[i] + 1;
    const int64_t full = stride[i] * (in[i] - 1) + opad[i] + ek;
    if (!out_shape_attr.empty() && ap != "SAME_UPPER" && ap != "SAME_LOWER") {
      // As ONNX's reference: explicit pads (default 0) and the requested size.
      pb[i] = pads[i];
      pe[i] = pads[i + size_t(D)];
      out[i] = out_shape_attr[out_shape_attr.size() - size_t(D) + i];
    } else if (ap == "SAME_UPPER" || ap == "SAME_LOWER") {
      const int64_t want = !out_shape_attr.empty() ? out_shape_attr[out_shape_attr.size() - size_t(D) + i] : in[i] * stride[i];
      const int64_t total = full - want;
      if (ap == "SAME_UPPER") { pb[i] = total / 2; pe[i] = total - total / 2; }
      else { pb[i] = total - total / 2; pe[i] = total / 2; }
      out[i] = want;
    } else {
      if (ap == "VALID") { pb[i] = pe[i] = 0; } else { pb[i] = pads[i]; pe[i] = pads[i + size_t(D)]; }
      out[i] = full - pb[i] - pe[i];
    }
  }
  P.out_shape = Shape{P.N, P.M};
  P.out_shape.insert(P.out_shape.end(), out.begin(), out.end());
  P.in_sp = Prod(in);
  P.out_sp = Prod(out);
  P.k_sp = Prod(kernel);
  P.in_st.assign(size_t(D), 1);
  P.kst.assign(size_t(D), 1);
  P.ost.assign(size_t(D), 1);
  for (int64_t d = D - 1; d > 0; --d) {
    P.in_st[size_t(d - 1)] = P.in_st[size_t(d)] * in[size_t(d)];
    P.kst[size_t(d - 1)] = P.kst[size_t(d)] * kernel[size_t(d)];
    P.ost[size_t(d - 1)] = P.ost[size_t(d)] * out[size_t(d)];
  }
  P.patch = true;
  for (int64_t d = 0; d < D && P.patch; ++d) {
    const size_t i = size_t(d);
    P.patch = kernel[i] == stride[i] && dil[i] == 1 && pb[i] == 0 && out[i] == in[i] * stride[i];
  }
  // The stride phases: per dimension, the outputs o with o + pad = j * stride + r take
  // the kernel positions k with k * dilation = r (mod stride), each from input
  // j - (k * dilation - r) / stride.
  const size_t Du = size_t(D);
  auto floor_div = [](int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); };
  for (int64_t ph = 0, phases = Prod(stride); ph < phases; ++ph) {
    ConvTPrep::Phase f;
    f.r.assign(Du, 0);
    f.j0.assign(Du, 0);
    int64_t rest = ph;
    for (size_t d = Du; d-- > 0;) {
      f.r[d] = rest % stride[d];
      rest /= stride[d];
    }
    f.tg = Taps{in, {}, std::vector<int64_t>(Du, 1), {}};
    std::vector<std::vector<int64_t>> ks(Du);  // the phase's kernel positions per dimension
    bool none = false;
    for (size_t d = 0; d < Du; ++d) {
      f.j0[d] = floor_div(pb[d] - f.r[d] + stride[d] - 1, stride[d]);
      const int64_t n_d = floor_div(out[d] - 1 + pb[d] - f.r[d], stride[d]) - f.j0[d] + 1;
      none |= n_d <= 0;
      f.tg.out.push_back(std::max<int64_t>(n_d, 0));
      std::vector<int64_t> b;
      for (int64_t k = 0; k < kernel[d]; ++k) {
        if (k * dil[d] % stride[d] != f.r[d]) continue;
        ks[d].push_back(k);
        b.push_back(f.j0[d] - (k * dil[d] - f.r[d]) / stride[d]);
      }
      f.tg.b.push_back(std::move(b));
    }
    if (none) continue;  // no output in this phase
    f.T = 1;
    f.P = 1;
    for (size_t d = 0; d < Du; ++d) {
      f.T *= int64_t(ks[d].size());
      f.P *= f.tg.out[d];
    }
    f.kt.assign(static_cast<size_t>(f.T), 0);
    for (int64_t t = 0; t < f.T; ++t) {
      int64_t tt = t, k = 0;
      for (size_t d = Du; d-- > 0;) {
        const int64_t nt = int64_t(ks[d].size());
        k += ks[d][size_t(tt % nt)] * P.kst[d];
        tt /= nt;
      }
      f.kt[size_t(t)] = k;
    }
    P.phases.push_back(std::move(f));
  }
  return pp;
}
}  // namespace

void ConvTranspose(OpContext& ctx) {
  const Tensor& x = ctx.in(0);
  const Tensor& w = ctx.in(1);
  const auto prep = PreparedConv<ConvTPrep>(ctx, x, w, [&] { return MakeConvTPrep(ctx, x, w); });
  const ConvTPrep& P = *prep;
  const int64_t group = P.group, D = P.D, N = P.N, C = P.C, M = P.M, Mg = P.Mg, Cg = P.Cg;
  const std::vector<int64_t>& kernel = P.kernel;
  const std::vector<int64_t>& in = P.in;
  const std::vector<int64_t>& stride = P.stride;
  const std::vector<int64_t>& dil = P.dil;
  const std::vector<int64_t>& out = P.out;
  const std::vector<int64_t>& pb = P.pb;
  const F32View xv(ctx, x), wv(ctx, w);
  std::optional<F32View> bias_view;
  const float* bias = ConvBias(ctx, M, &bias_view);
  Tensor& y = ctx.out_uninit(0, x.dtype(), P.out_shape);  // every element is written
  const int64_t in_sp = P.in_sp, out_sp = P.out_sp, k_sp = P.k_sp;
  const std::vector<int64_t>& in_st = P.in_st;
  // Patch deconvolution (kernel == stride, no padding or dilation, out = in * stride):
  // every output takes exactly one kernel position, from every input channel, so for
  // each kernel position the outputs are a 1x1 convolution: a GEMM whose K is the input
  // channels in order, the reference's fold. Vector kernel tables only.
  const bool patch = P.patch && ctx.kernels && ctx.kernels->GemmF32 && ctx.kernels->GemmF32 != &ref::GemmF32;
  const std::vector<int64_t>& kst = P.kst;
  const std::vector<int64_t>& ost = P.ost;
  // The products before they are scattered: the calling thread's buffer, reused (by
  // reference, so that the workers below read this thread's, not their own).
  thread_local std::vector<float> tmp_tl;
  std::vector<float>& tmp = tmp_tl;
  if (patch) {
    if (tmp.size() < size_t(Mg * in_sp)) tmp.resize(size_t(Mg * in_sp));
    for (int64_t n = 0; n < N; ++n)
      for (int64_t grp = 0; grp < group; ++grp)
        for (int64_t k = 0; k < k_sp; ++k) {
          // A(m, c) = w[c][m][k]; B = the group's input channels; C = tmp[m][p].
          const float* A = wv.data() + (grp * Cg * Mg) * k_sp + k;
          ParallelGemmF32(ctx, Mg, in_sp, Cg, A, k_sp, Mg * k_sp, xv.data() + (n * C + grp * Cg) * in_sp, in_sp, 1,
                          tmp.data(), in_sp);
          // Input position p lands on output p * stride + k (per dimension).
          if (D == 2 && y.dtype() == DType::kFloat) {
            const int64_t kh = k / kernel[1], kw = k % kernel[1], OW = out[1];
            float* py = y.mutable_data<float>();
            ParallelFor(ctx, Mg, 1, [&](int64_t b, int64_t e) {
              for (int64_t ml = b; ml < e; ++ml) {
                const int64_t m = grp * Mg + ml;
                const float bv = bias ? bias[size_t(m)] : 0.0f;
                const float* src = tmp.data() + ml * in_sp;
                float* dst = py + (n * M + m) * out_sp;
                for (int64_t ih = 0; ih < in[0]; ++ih) {
                  float* drow = dst + (ih * stride[0] + kh) * OW + kw;
                  const float* srow = src + ih * in[1];
                  if (!bias) for (int64_t iw = 0; iw < in[1]; ++iw) drow[iw * stride[1]] = srow[iw];
                  else for (int64_t iw = 0; iw < in[1]; ++iw) drow[iw * stride[1]] = srow[iw] + bv;
                }
              }
            });
            continue;
          }
          for (int64_t p = 0; p < in_sp; ++p) {
            int64_t o = 0, rest = p, kr = k;
            for (int64_t d = 0; d < D; ++d) {
              const size_t i = size_t(d);
              const int64_t pi = rest / in_st[i], ki = kr / kst[i];
              rest %= in_st[i];
              kr %= kst[i];
              o += (pi * stride[i] + ki) * ost[i];
            }
            for (int64_t ml = 0; ml < Mg; ++ml) {
              const int64_t m = grp * Mg + ml;
              float r = tmp[size_t(ml * in_sp + p)];
              if (bias) r = r + bias[size_t(m)];
              StoreF32(y, (n * M + m) * out_sp + o, r);
            }
          }
        }
    return;
  }
  // Any other geometry, by stride phases: per dimension, the outputs o with
  // o + pad = j * stride + r (r in [0, stride)) take exactly the kernel positions k with
  // k * dilation = r (mod stride), each from input j - (k * dilation - r) / stride. Per
  // phase that is a stride-1 convolution over j with those taps, in the reference's
  // row-major kernel order (TapGemm; its zero fix-up covers taps past the input's
  // edges); the bias after the full sum. Vector kernel tables, finite weights, at least
  // 4 outputs per group (UseConvGemm).
  if (UseConvGemm(ctx, Cg * k_sp, Mg, wv)) {
    const size_t Du = size_t(D);
    float* yd = y.dtype() == DType::kFloat ? y.mutable_data<float>() : nullptr;
    thread_local std::vector<float> wp_own;
    for (size_t ph = 0; ph < P.phases.size(); ++ph) {
      const ConvTPrep::Phase& f = P.phases[ph];
      const std::vector<int64_t>& r = f.r;
      const std::vector<int64_t>& j0 = f.j0;
      const Taps& tg = f.tg;
      const std::vector<int64_t>& kt = f.kt;
      const int64_t T = f.T, P = f.P;
      // The phase's weights as every group's rows: row ml, column (c, t) is
      // w[grp * Cg + c][ml][kt[t]]; made once per session for a constant weight.
      auto permute = [&](float* wp) {
        for (int64_t grp = 0; grp < group; ++grp)
          for (int64_t ml = 0; ml < Mg; ++ml)
            for (int64_t c = 0; c < Cg; ++c)
              for (int64_t t = 0; t < T; ++t)
                wp[((grp * Mg + ml) * Cg + c) * T + t] = wv.data()[((grp * Cg + c) * Mg + ml) * k_sp + kt[size_t(t)]];
      };
      char key[32];
      std::snprintf(key, sizeof key, "phase %zu", ph);
      const Tensor* wp_const = ctx.ConstDerived(1, key, [&](const Tensor&) {
        Tensor t = Tensor::Uninitialized(DType::kFloat, Shape{std::max<int64_t>(group * Mg * Cg * T, 1)}, "phase weights");
        permute(t.mutable_data<float>());
        return t;
      });
      const float* wp_all = wp_const ? wp_const->data<float>() : nullptr;
      if (!wp_all) {
        if (wp_own.size() < size_t(group * Mg * Cg * T)) wp_own.resize(size_t(group * Mg * Cg * T));
        permute(wp_own.data());
        wp_all = wp_own.data();
      }
      if (tmp.size() < size_t(Mg * P)) tmp.resize(size_t(Mg * P));
      for (int64_t grp = 0; grp < group; ++grp) {
        const float* wp = wp_all + grp * Mg * Cg * T;
        for (int64_t n = 0; n < N; ++n) {
          TapGemm(ctx, tg, xv.data() + (n * C + grp * Cg) * in_sp, Cg, in_sp, wp, Mg, tmp.data());
          ParallelFor(ctx, Mg, 1, [&](int64_t b0, int64_t b1) {
            for (int64_t ml = b0; ml < b1; ++ml) {
              const int64_t m = grp * Mg + ml;
              const float* src = tmp.data() + ml * P;
              const int64_t base = (n * M + m) * out_sp;
              // Rows of the last dimension: output (j + j0) * stride + r - pad.
              const size_t L = Du - 1;
              const int64_t nl = tg.out[L], sl = stride[L], ol0 = j0[L] * sl + r[L] - pb[L];
              for (int64_t p0 = 0; p0 < P; p0 += nl) {
                int64_t q = p0 / nl, o = ol0;
                for (size_t d = L; d-- > 0;) {
                  o += ((q % tg.out[d] + j0[d]) * stride[d] + r[d] - pb[d]) * ost[d];
                  q /= tg.out[d];
                }
                const float* sr = src + p0;
                if (yd && !bias) {
                  for (int64_t j = 0; j < nl; ++j) yd[base + o + j * sl] = sr[j];
                } else if (yd) {
                  const float bv = bias[size_t(m)];
                  for (int64_t j = 0; j < nl; ++j) yd[base + o + j * sl] = sr[j] + bv;
                } else {
                  for (int64_t j = 0; j < nl; ++j) StoreF32(y, base + o + j * sl, !bias ? sr[j] : sr[j] + bias[size_t(m)]);
                }
              }
            }
          });
        }
      }
    }
    return;
  }
  for (int64_t n = 0; n < N; ++n)
    for (int64_t m = 0; m < M; ++m) {
      const int64_t grp = m / Mg, ml = m % Mg;
      ForEach(out, [&](int64_t o, const std::vector<int64_t>& op) {
        float acc = -0.0f;
        for (int64_t c = 0; c < Cg; ++c) {
          const int64_t ci = grp * Cg + c;
          const float* xc = xv.data() + (n * C + ci) * in_sp;
          const float* wc = wv.data() + (ci * Mg + ml) * k_sp;
          ForEach(kernel, [&](int64_t k, const std::vector<int64_t>& kp) {
            int64_t off = 0;
            for (int64_t d = 0; d < D; ++d) {
              const size_t i = size_t(d);
              const int64_t t = op[i] + pb[i] - kp[i] * dil[i];
              if (t < 0 || t % stride[i]) return;
              const int64_t p = t / stride[i];
              if (p >= in[i]) return;
              off += p * in_st[i];
            }
            acc = acc + xc[off] * wc[k];
          });
        }
        if (bias) acc = acc + bias[size_t(m)];
        StoreF32(y, (n * M + m) * out_sp + o, acc);
      });
    }
}

namespace {
// Integer convolution: int32 sums (wrapping) of (x - x_zp) * (w - w_zp), channel outer,
// kernel position inner; padding taps contribute nothing. w_zp may be per output channel.
// IntConv's 1-D/2-D path on the integer GEMM kernel (GemmI16PairsI32): per image and
// group, Y[Mg x P] = W[Mg x Kg] * col[Kg x P] on the operands minus their zero points as
// int16 (exact), col built block by block in the kernel's pairs of k with 0 at padding
// taps (a skipped tap adds nothing: the same integer sum). The weights are laid out once
// per session when they and their zero point are constants (w_in, wzp_in: their input
// indices). int32 sums modulo 2^32 do not depend on the order of the terms.
void IntConvGemm(OpContext& ctx, const Plane& pl, const Tensor& x, const Tensor& w, int64_t xz, const Tensor* wzp,
                 int64_t N, int64_t C, int64_t M, int64_t group, size_t w_in, size_t wzp_in, int32_t* acc_out) {
  const int64_t Cg = C / group, Mg = M / group, ksp = pl.KH * pl.KW, Kg = Cg * ksp, K2 = (Kg + 1) / 2, lda = 2 * K2;
  const int64_t in_sp = pl.IH * pl.IW, P = pl.OH * pl.OW;
  auto get = [](const Tensor& t, int64_t i) -> int32_t {
    return t.dtype() == DType::kInt8 ? int32_t(t.data<int8_t>()[i]) : int32_t(t.data<uint8_t>()[i]);
  };
  auto make_a = [&](const Tensor& wt) {
    Tensor t(DType::kInt16, Shape{M, lda}, "integer convolution weights");
    int16_t* a = t.mutable_data<int16_t>();
    for (int64_t m = 0; m < M; ++m) {
      const int32_t wz = wzp && wzp->numel() ? get(*wzp, wzp->numel() > 1 ? m : 0) : 0;
      for (int64_t k = 0; k < Kg; ++k) a[m * lda + k] = int16_t(get(wt, m * Kg + k) - wz);
    }
    return t;
  };
  const Tensor* wa = nullptr;
  if (!wzp || ctx.IsConstInput(wzp_in)) wa = ctx.ConstDerived(w_in, "W int16", make_a);
  Tensor local;
  if (!wa) {
    local = make_a(w);
    wa = &local;
  }
  // Reused per calling thread (no allocation per run); the workers below reach it
  // through this reference, not their own thread_local.
  thread_local std::vector<int16_t> xc_buf;
  std::vector<int16_t>& xc = xc_buf;
  if (xc.size() < size_t(x.numel())) xc.resize(size_t(x.numel()));
  ParallelFor(ctx, x.numel(), 65536, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) xc[size_t(i)] = int16_t(get(x, i) - int32_t(xz));
  });
  // Column blocks of about 1 MiB of int16 pairs, at least 64 columns.
  const int64_t pc = std::max<int64_t>(64, std::min<int64_t>(P, (int64_t(1) << 19) / std::max<int64_t>(lda, 1)));
  const int64_t blocks = (P + pc - 1) / pc;
  auto* kernel = ctx.kernels->GemmI16PairsI32;
  ParallelFor(ctx, N * group * blocks, 1, [&](int64_t b, int64_t e) {
    thread_local std::vector<int16_t> col;
    if (col.size() < size_t(lda * pc)) col.resize(size_t(lda * pc));
    for (int64_t t = b; t < e; ++t) {
      const int64_t ng = t / blocks, n = ng / group, grp = ng % group, p0 = t % blocks * pc, np = std::min(pc, P - p0);
      const int16_t* xg = xc.data() + (n * C + grp * Cg) * in_sp;
      int16_t* cb = col.data();
      std::fill(cb, cb + lda * np, int16_t(0));
      for (int64_t r = 0; r < Kg; ++r) {
        const int64_t c = r / ksp, kh = (r % ksp) / pl.KW, kw = r % pl.KW;
        const int16_t* xch = xg + c * in_sp;
        int16_t* dst = cb + (r / 2) * 2 * np + (r % 2);
        int64_t oh = p0 / pl.OW, ow = p0 % pl.OW;
        for (int64_t i = 0; i < np;) {
          const int64_t run = std::min(np - i, pl.OW - ow);  // the rest of output row oh
          const int64_t ih = oh * pl.SH - pl.PH + kh * pl.DH;
          if (ih >= 0 && ih < pl.IH) {
            const int16_t* xrow = xch + ih * pl.IW;
            for (int64_t j = 0; j < run; ++j) {
              const int64_t iw = (ow + j) * pl.SW - pl.PW + kw * pl.DW;
              if (iw >= 0 && iw < pl.IW) dst[2 * (i + j)] = xrow[iw];
            }
          }
          i += run;
          ow = 0;
          ++oh;
        }
      }
      kernel(Mg, np, K2, wa->data<int16_t>() + grp * Mg * lda, lda, cb, 2 * np, acc_out + (n * M + grp * Mg) * P + p0, P);
    }
  });
}

// The int32 sums into *acc_out (resized; a caller's reused buffer).
void IntConv(OpContext& ctx, const Tensor& x, const Tensor& w, const Tensor* xzp, const Tensor* wzp, Shape* out_shape,
             size_t w_in, size_t wzp_in, std::vector<int32_t>* acc) {
  const int64_t group = ctx.attr_i("group", 1);
  std::vector<int64_t> kernel = ctx.attr_ints("kernel_shape", Shape(w.shape().begin() + 2, w.shape().end()));
  const Geometry g = MakeGeometry(ctx, x.shape(), kernel, false);
  const int64_t N = x.shape()[0], C = x.shape()[1], M = w.shape()[0];
  if (group <= 0 || C % group || M % group || w.shape()[1] != C / group) throw ctx.Fail(ErrorCode::kShapeMismatch, "input, weight and group do not agree");
  const int64_t Cg = C / group, Mg = M / group;
  auto get = [](const Tensor& t, int64_t i) -> int64_t {
    return t.dtype() == DType::kInt8 ? int64_t(t.data<int8_t>()[i]) : int64_t(t.data<uint8_t>()[i]);
  };
  const int64_t xz = xzp && xzp->numel() ? get(*xzp, 0) : 0;
  *out_shape = Shape{N, M};
  out_shape->insert(out_shape->end(), g.out.begin(), g.out.end());
  const int64_t in_sp = Prod(g.in), out_sp = Prod(g.out), k_sp = Prod(g.kernel);
  std::vector<int64_t> in_st(size_t(g.dims), 1);
  for (int64_t d = g.dims - 1; d > 0; --d) in_st[size_t(d - 1)] = in_st[size_t(d)] * g.in[size_t(d)];
  acc->assign(static_cast<size_t>(N * M * out_sp), 0);
  std::vector<int32_t>& acc_out = *acc;
  const bool is8 = (x.dtype() == DType::kInt8 || x.dtype() == DType::kUInt8) &&
                   (w.dtype() == DType::kInt8 || w.dtype() == DType::kUInt8);
  if (g.dims <= 2 && is8 && ctx.VectorKernels() && ctx.kernels->GemmI16PairsI32 && (!wzp || wzp->numel() <= 1 || wzp->numel() == M)) {
    IntConvGemm(ctx, MakePlane(g), x, w, xz, wzp, N, C, M, group, w_in, wzp_in, acc_out.data());
    return;
  }
  // Operands minus their zero points, read once; padding taps are skipped (as padding
  // with the zero point). Sums modulo 2^32 do not depend on the order of the terms.
  std::vector<uint32_t> xc(static_cast<size_t>(x.numel())), wc(static_cast<size_t>(w.numel()));
  for (int64_t i = 0; i < x.numel(); ++i) xc[size_t(i)] = uint32_t(get(x, i) - xz);
  for (int64_t i = 0; i < w.numel(); ++i) {
    const int64_t m = i / (Cg * k_sp);
    const int64_t wz = wzp && wzp->numel() ? get(*wzp, wzp->numel() > 1 ? m : 0) : 0;
    wc[size_t(i)] = uint32_t(get(w, i) - wz);
  }
  if (g.dims <= 2) {  // as Conv's 1-D/2-D path: a plane of accumulators per output channel
    const Plane pl = MakePlane(g);
    std::vector<uint32_t> plane(static_cast<size_t>(pl.OH * pl.OW));
    for (int64_t n = 0; n < N; ++n)
      for (int64_t m = 0; m < M; ++m) {
        const int64_t grp = m / Mg;
        std::fill(plane.begin(), plane.end(), 0u);
        for (int64_t c = 0; c < Cg; ++c) {
          const uint32_t* xp = xc.data() + (n * C + grp * Cg + c) * in_sp;
          const uint32_t* wp = wc.data() + (m * Cg + c) * k_sp;
          AccumulatePlane<uint32_t>(pl, xp, wp, plane.data());
        }
        for (int64_t o = 0; o < pl.OH * pl.OW; ++o) acc_out[size_t((n * M + m) * out_sp + o)] = int32_t(plane[size_t(o)]);
      }
    return;
  }
  std::vector<int64_t> tap_off, tap_k;
  for (int64_t n = 0; n < N; ++n)
    ForEach(g.out, [&](int64_t o, const std::vector<int64_t>& op) {
      ListTaps(g, op, in_st, &tap_off, &tap_k);
      for (int64_t m = 0; m < M; ++m) {
        const int64_t grp = m / Mg;
        uint32_t acc = 0;
        for (int64_t c = 0; c < Cg; ++c) {
          const uint32_t* xp = xc.data() + (n * C + grp * Cg + c) * in_sp;
          const uint32_t* wp = wc.data() + (m * Cg + c) * k_sp;
          for (size_t t = 0; t < tap_off.size(); ++t) acc += xp[tap_off[t]] * wp[tap_k[t]];
        }
        acc_out[size_t((n * M + m) * out_sp + o)] = int32_t(acc);
      }
    });
}
}  // namespace

void ConvInteger(OpContext& ctx) {
  Shape s;
  thread_local std::vector<int32_t> acc;  // reused: no allocation per run
  IntConv(ctx, ctx.in(0), ctx.in(1), ctx.has_input(2) ? &ctx.in(2) : nullptr, ctx.has_input(3) ? &ctx.in(3) : nullptr, &s, 1, 3,
          &acc);
  Tensor& y = ctx.out(0, DType::kInt32, s);
  std::copy(acc.begin(), acc.end(), y.mutable_data<int32_t>());
}

// y = saturate(round_half_even((acc + bias) * m) + y_zp), m = x_scale * w_scale / y_scale
// in f32, the product in binary64 (as QLinearMatMul).
void QLinearConv(OpContext& ctx) {
  const Tensor& x = ctx.in(0);
  const Tensor& w = ctx.in(3);
  Shape s;
  thread_local std::vector<int32_t> acc;  // reused: no allocation per run
  IntConv(ctx, x, w, &ctx.in(2), &ctx.in(5), &s, 3, 5, &acc);
  const float xs = ctx.in(1).data<float>()[0], ys = ctx.in(6).data<float>()[0];
  const Tensor& wsc = ctx.in(4);
  const Tensor& yzp = ctx.in(7);
  const int64_t yz = yzp.dtype() == DType::kInt8 ? int64_t(yzp.data<int8_t>()[0]) : int64_t(yzp.data<uint8_t>()[0]);
  const int64_t M = s[1];
  int64_t sp = 1;
  for (size_t k = 2; k < s.size(); ++k) sp *= s[k];
  Tensor& y = ctx.out(0, yzp.dtype(), s);
  const double lo = yzp.dtype() == DType::kInt8 ? -128 : 0, hi = yzp.dtype() == DType::kInt8 ? 127 : 255;
  for (size_t i = 0; i < acc.size(); ++i) {
    const int64_t m = (int64_t(i) / sp) % M;
    const float wsv = wsc.data<float>()[wsc.numel() > 1 ? m : 0];
    const float mult = float(xs * wsv) / ys;
    int64_t a = acc[i];
    if (ctx.has_input(8)) a = int64_t(int32_t(uint32_t(a) + uint32_t(ctx.in(8).data<int32_t>()[m])));
    double v = math::RoundEvenD(double(a) * double(mult)) + double(yz);
    v = v < lo ? lo : v > hi ? hi : v;
    if (yzp.dtype() == DType::kInt8) y.mutable_data<int8_t>()[i] = int8_t(v);
    else y.mutable_data<uint8_t>()[i] = uint8_t(v);
  }
}

namespace {
enum class Pool { kMax, kAverage, kLp };

// What a pooling operator derives from its attributes and its input's shape, kept per
// node (OpContext::Prepared).
struct PoolPrep : NodeState {
  Shape x_shape;
  Geometry g;
  Plane pl{};  // 1-D and 2-D
  Shape out_shape;
  bool include_pad = false, col_major = false;
  float p = 2.0f;
  int64_t in_sp = 0, out_sp = 0;
  std::vector<int64_t> in_st, col_st;
  std::vector<float> count_h, count_w;  // 1-D/2-D average: taps counted per output row, column
};

std::shared_ptr<PoolPrep> MakePoolPrep(const OpContext& ctx, const Tensor& x, bool global) {
  auto pp = std::make_shared<PoolPrep>();
  pp->x_shape = x.shape();
  std::vector<int64_t> kernel = global ? std::vector<int64_t>(x.shape().begin() + 2, x.shape().end()) : ctx.attr_ints("kernel_shape");
  if (kernel.empty()) throw ctx.Fail(ErrorCode::kInvalidModel, "kernel_shape is required");
  const bool ceil_mode = !global && ctx.attr_i("ceil_mode", 0) != 0;
  Geometry& g = pp->g;
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
  pp->in_sp = Prod(g.in);
  pp->out_sp = Prod(g.out);
  pp->in_st.assign(size_t(g.dims), 1);
  pp->col_st.assign(size_t(g.dims), 1);
  for (int64_t d = g.dims - 1; d > 0; --d) pp->in_st[size_t(d - 1)] = pp->in_st[size_t(d)] * g.in[size_t(d)];
  for (int64_t d = 1; d < g.dims; ++d) pp->col_st[size_t(d)] = pp->col_st[size_t(d - 1)] * g.in[size_t(d - 1)];
  if (g.dims <= 2) {
    pp->pl = MakePlane(g);
    // The average's divisors, per dimension: taps inside the input, or inside the
    // padded extent with count_include_pad.
    auto counts = [&](int64_t d) {
      std::vector<float> c(size_t(g.out[size_t(d)]));
      for (int64_t o = 0; o < g.out[size_t(d)]; ++o) {
        int64_t n = 0;
        for (int64_t k = 0; k < g.kernel[size_t(d)]; ++k) {
          const int64_t q = o * g.stride[size_t(d)] - g.pad_b[size_t(d)] + k * g.dil[size_t(d)];
          n += (q >= 0 && q < g.in[size_t(d)]) || (include_pad && q >= -g.pad_b[size_t(d)] && q < g.in[size_t(d)] + g.pad_e[size_t(d)]);
        }
        c[size_t(o)] = float(n);
      }
      return c;
    };
    pp->count_h = g.dims == 2 ? counts(0) : std::vector<float>{1.0f};
    pp->count_w = counts(g.dims - 1);
  }
  return pp;
}

void PoolOp(OpContext& ctx, Pool kind, bool global) {
  const Tensor& x = ctx.in(0);
  if (x.rank() < 3) throw ctx.Fail(ErrorCode::kShapeMismatch, "input must have rank >= 3");
  const std::shared_ptr<const PoolPrep> prep = ctx.Prepared<PoolPrep>(
      [&](const PoolPrep& pp) { return pp.x_shape == x.shape(); }, [&] { return MakePoolPrep(ctx, x, global); });
  const Geometry& g = prep->g;
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
  if (global && kind == Pool::kAverage && in_sp > 0) {
    // Global average: per channel, acc = acc + x in index order from -0.0, then / count
    // (as below); eight channels at a time as independent chains, over the threads.
    std::vector<float> ybuf;  // a float output takes the results directly
    float* yf = y.dtype() == DType::kFloat ? y.mutable_data<float>() : (ybuf.resize(size_t(N * C)), ybuf.data());
    const float cnt = float(in_sp);
    ParallelFor(ctx, (N * C + 7) / 8, 4, [&](int64_t b, int64_t e) {
      for (int64_t blk = b; blk < e; ++blk) {
        const int64_t c0 = blk * 8, nch = std::min<int64_t>(8, N * C - c0);
        float acc[8];
        const float* rows[8];
        for (int64_t j = 0; j < 8; ++j) { acc[j] = -0.0f; rows[j] = xv.data() + (c0 + std::min(j, nch - 1)) * in_sp; }
        for (int64_t i = 0; i < in_sp; ++i)
          for (int64_t j = 0; j < 8; ++j) acc[j] = acc[j] + rows[j][i];
        for (int64_t j = 0; j < nch; ++j) yf[c0 + j] = acc[j] / cnt;
      }
    });
    if (y.dtype() != DType::kFloat)
      for (int64_t i = 0; i < N * C; ++i) StoreF32(y, i, ybuf[size_t(i)]);
    return;
  }
  if (kind == Pool::kMax && !idx && g.dims <= 2 && ctx.kernels && ctx.kernels->MaxStepStridedF32) {
    // 1-D/2-D max pool as planes: per channel, the kernel taps in row-major order, each
    // a MaxStep over the output positions whose tap is inside the input (as above,
    // padding taps are skipped), vectorised along output rows.
    const Plane& pl = prep->pl;
    PoolPlanes(ctx, pl, N * C, in_sp, out_sp, xv.data(), y, -std::numeric_limits<float>::infinity(),
               [&](float* acc, const float* x, int64_t n) { ctx.kernels->MaxStepStridedF32(acc, x, pl.SW, n); },
               [](float*) {});
    return;
  }
  if (kind == Pool::kAverage && g.dims <= 2 && ctx.VectorKernels() && ctx.kernels->MulAddStridedF32) {
    // 1-D/2-D average pool as planes, as the max pool above: per channel, the kernel
    // taps in row-major order, each added to the output positions whose tap is inside
    // the input as acc + x * 1 (x * 1 is x, NaNs included), then the division by the
    // count of the loops below, which is per dimension: taps inside the input, or inside
    // the padded extent with count_include_pad (PoolPrep).
    const Plane& pl = prep->pl;
    const std::vector<float>& ch = prep->count_h;
    const std::vector<float>& cw = prep->count_w;
    PoolPlanes(ctx, pl, N * C, in_sp, out_sp, xv.data(), y, -0.0f,
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
    ForEach(g.out, [&](int64_t o, const std::vector<int64_t>& op) {
      float acc = kind == Pool::kMax ? -std::numeric_limits<float>::infinity() : -0.0f;
      int64_t count = 0, best = -1, best_col = -1;
      ForEach(g.kernel, [&](int64_t, const std::vector<int64_t>& kp) {
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
          if (v != v || acc != acc) { if (acc == acc) { acc = v; best = off; best_col = coff; } }
          else if (v > acc) { acc = v; best = off; best_col = coff; }
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
  if (x.rank() != 3 || int64_t(block.size()) != D) throw ctx.Fail(ErrorCode::kShapeMismatch, "input must be [N, C*prod(block), L]");
  const auto strides = ctx.attr_ints("strides", std::vector<int64_t>(size_t(D), 1));
  const auto dil = ctx.attr_ints("dilations", std::vector<int64_t>(size_t(D), 1));
  const auto pads = ctx.attr_ints("pads", std::vector<int64_t>(size_t(2 * D), 0));
  const int64_t K = Prod(block), N = x.shape()[0], C = x.shape()[1] / K, L = x.shape()[2];
  std::vector<int64_t> cols(static_cast<size_t>(D));
  for (int64_t d = 0; d < D; ++d) {
    const size_t i = size_t(d);
    cols[i] = (image[i] + pads[i] + pads[i + size_t(D)] - (dil[i] * (block[i] - 1) + 1)) / strides[i] + 1;
  }
  if (Prod(cols) != L) throw ctx.Fail(ErrorCode::kShapeMismatch, "the number of columns does not match the image and block");
  const auto xv = ToF32(ctx, x);
  Shape os{N, C};
  os.insert(os.end(), image.begin(), image.end());
  std::vector<float> acc(static_cast<size_t>(N * C * Prod(image)), 0.0f);
  const int64_t img = Prod(image);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c)
      ForEach(block, [&](int64_t k, const std::vector<int64_t>& kp) {
        ForEach(cols, [&](int64_t l, const std::vector<int64_t>& lp) {
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


// DeformConv (2-D), following ONNX's reference in f32: each tap samples X bilinearly at
// its offset position (zeros outside), times the weight, times the mask; per output,
// the bias first, then for each input channel the sum of its taps (row-major) added.
void DeformConv(OpContext& ctx) {
  const Tensor& x = ctx.in(0);
  const Tensor& w = ctx.in(1);
  const Tensor& off = ctx.in(2);
  if (x.rank() != 4) throw ctx.Fail(ErrorCode::kUnsupportedOp, "only 2-D DeformConv is supported");
  const int64_t N = x.shape()[0], IC = x.shape()[1], IH = x.shape()[2], IW = x.shape()[3], OC = w.shape()[0];
  const int64_t group = ctx.attr_i("group", 1), og = ctx.attr_i("offset_group", 1);
  const auto kernel = ctx.attr_ints("kernel_shape", Shape(w.shape().begin() + 2, w.shape().end()));
  const auto st = ctx.attr_ints("strides", {1, 1}), dil = ctx.attr_ints("dilations", {1, 1});
  const auto pads = ctx.attr_ints("pads", {0, 0, 0, 0});
  const int64_t KH = kernel[0], KW = kernel[1], OH = off.shape()[2], OW = off.shape()[3];
  if (IC != w.shape()[1] * group || OC % group || IC % og) throw ctx.Fail(ErrorCode::kShapeMismatch, "channels, group and offset_group disagree");
  const int64_t icg = w.shape()[1], ocg = OC / group, icog = IC / og;
  const auto xv = ToF32(ctx, x), wv = ToF32(ctx, w), ov = ToF32(ctx, off);
  std::vector<float> bias, mask;
  if (ctx.has_input(3)) bias = ToF32(ctx, ctx.in(3));
  if (ctx.has_input(4)) mask = ToF32(ctx, ctx.in(4));
  Tensor& y = ctx.out(0, x.dtype(), {N, OC, OH, OW});
  auto pix = [&](const float* img, int64_t r, int64_t c) { return (r < 0 || r >= IH || c < 0 || c >= IW) ? 0.0f : img[r * IW + c]; };
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

}  // namespace ref
}  // namespace onemodel::impl
