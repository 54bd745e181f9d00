// Reference (oracle) convolution and pooling kernels of the dispatch table: they define
// the bits; the per-target kernels in src/kernels/conv.cpp equal them bit for bit.
#pragma once

#include <cstddef>
#include <algorithm>
#include <cstdint>
#include <vector>

#include "ref/elementwise.h"

namespace onemodel::impl {

// The geometry of one 1-D or 2-D convolution or pooling plane (1-D as one row of
// height 1): input IH x IW, output OH x OW, kernel KH x KW, strides SH, SW, dilations
// DH, DW and the leading pads PH, PW. Output (oh, ow)'s tap (kh, kw) reads input
// (oh*SH - PH + kh*DH, ow*SW - PW + kw*DW); a tap outside the input is a padding tap.
struct Conv2DGeometry {
  int64_t IH = 1, IW = 1, OH = 1, OW = 1, KH = 1, KW = 1, SH = 1, SW = 1, DH = 1, DW = 1, PH = 0, PW = 0;
};

namespace ref {

// acc[i] = acc[i] + x[i * stride] * w for i < n: one term of a fold into a row of
// independent accumulators (the convolution planes), the product rounded, then added.
void MulAddStridedF32(float* acc, const float* x, int64_t stride, float w, int64_t n);

// acc[i] = MaxStep(acc[i], x[i * stride]) for i < n, where MaxStep(a, v) is v when v is
// NaN and a is not, else a when either is NaN, else (v > a ? v : a): the max pool's
// fold, in which the first NaN sticks and of equal values (+0 and -0) the first stays.
void MaxStepStridedF32(float* acc, const float* x, int64_t stride, int64_t n);

// One output plane of a single-input-channel convolution (depthwise): g holds IH, IW,
// OH, OW, KH, KW, SH, SW, DH, DW, PH, PW. y[oh][ow] = the fold from -0.0, over kernel
// row then column, of x[ih][iw] * w[kh][kw] for the taps inside the input (padding taps
// are skipped), ih = oh*SH - PH + kh*DH, iw = ow*SW - PW + kw*DW. No bias.
void ConvPlaneF32(const float* x, const float* w, float* y, const Conv2DGeometry& g);

// Output rows [oh_begin, oh_end) of `channels` independent ConvPlaneF32 planes: plane c
// reads x + c*IH*IW and w + c*KH*KW and writes rows of y + c*OH*OW (a depthwise
// convolution with one output per input channel; rows outside the range are not
// touched); then, as GemmBiasActF32's epilogue, each result of plane c takes + bias[c]
// (bias not null) and the activation act. The vector kernels run lanes across channels.
void DepthwiseConvF32(const float* x, const float* w, float* y, int64_t channels, const Conv2DGeometry& g,
                      int64_t oh_begin, int64_t oh_end, const float* bias, Activation act);

// Output rows [oh_begin, oh_end) of a convolution of Cg input planes into Mg output
// planes (one group, one image): x holds the Cg planes (IH x IW, plane stride in_sp),
// w the Mg x (Cg * KH * KW) weights, y the Mg planes (OH x OW, contiguous); g as
// ConvPlaneF32's. Output (m, oh, ow) folds from -0.0, channel (outer), kernel row, kernel
// column, the products x * w of the taps inside the input (padding taps are skipped),
// then takes the epilogue: + bias[m] (bias not null), then the activation act.
// The reference Conv's fold exactly, with no zero padding, so no signed-zero fix-up.
void ConvDirectF32(const float* x, int64_t in_sp, const float* w, float* y, int64_t Cg, int64_t Mg,
                   const Conv2DGeometry& g, int64_t oh_begin, int64_t oh_end, const float* bias, Activation act);

// One output of ConvDirectF32 before its epilogue, for weights wm (output channel m's
// row); inline: the vector kernels use it for border outputs.
inline float ConvDirectOutputF32(const float* x, int64_t in_sp, const float* wm, int64_t Cg, const Conv2DGeometry& g,
                                 int64_t oh, int64_t ow) {
  const int64_t IH = g.IH, IW = g.IW, KH = g.KH, KW = g.KW, SH = g.SH, SW = g.SW, DH = g.DH, DW = g.DW, PH = g.PH,
                PW = g.PW;
  float acc = -0.0f;
  for (int64_t c = 0; c < Cg; ++c) {
    const float* xc = x + c * in_sp;
    const float* wc = wm + c * KH * KW;
    for (int64_t kh = 0; kh < KH; ++kh) {
      const int64_t ih = oh * SH - PH + kh * DH;
      if (ih < 0 || ih >= IH) continue;
      for (int64_t kw = 0; kw < KW; ++kw) {
        const int64_t iw = ow * SW - PW + kw * DW;
        if (iw < 0 || iw >= IW) continue;
        const float p = xc[ih * IW + iw] * wc[kh * KW + kw];
        acc = acc + p;
      }
    }
  }
  return acc;
}

// One output of ConvPlaneF32 (inline: the vector kernels use it for border outputs):
// ConvDirectOutputF32 with one channel.
inline float ConvPlaneOutputF32(const float* x, const float* w, const Conv2DGeometry& g, int64_t oh, int64_t ow) {
  return ConvDirectOutputF32(x, 0, w, 1, g, oh, ow);
}

// The geometry of a convolution or pooling window over dims >= 1 spatial dimensions:
// input, kernel and output sizes, strides, dilations and the pads before and after.
struct ConvGeometry {
  int64_t dims = 0;
  std::vector<int64_t> in, kernel, stride, dil, pad_b, pad_e, out;
};

// A 1-D or 2-D geometry as planes (1-D as one row), with, per kernel column kw, the
// output columns [col_lo, col_hi) whose input column ow * SW + kw * DW - PW is inside.
struct ConvPlane : Conv2DGeometry {
  std::vector<int64_t> col_lo, col_hi;
};
ConvPlane MakeConvPlane(const ConvGeometry& g);

// The in-bounds taps of output position op: each tap's input offset within a channel
// (in_st: the input's row-major strides) and its kernel index, in kernel (row-major)
// order; padding taps are left out.
void ListTaps(const ConvGeometry& g, const std::vector<int64_t>& op, const std::vector<int64_t>& in_st,
              std::vector<int64_t>* tap_off, std::vector<int64_t>* tap_k);

// A plane's tap runs: for each kernel tap in row-major order, then each output row
// whose tap row is inside the input, step(output offset, input offset, n) over the n
// outputs of the row whose tap column is inside too (consecutive outputs, input
// columns SW apart). The pooling planes and AccumulatePlane walk these.
template <class F>
void PlaneTapRuns(const ConvPlane& pl, F step) {
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

// Adds one input channel's contribution to an output channel's plane of accumulators:
// kernel row, kernel column, then the output positions whose tap is inside the input.
// Each accumulator gets its terms in kernel order, a = a + x * w (never fused).
template <class T>
void AccumulatePlane(const ConvPlane& pl, const T* x, const T* w, T* acc) {
  for (int64_t kh = 0; kh < pl.KH; ++kh)
    for (int64_t kw = 0; kw < pl.KW; ++kw) {
      const T wt = w[kh * pl.KW + kw];
      const int64_t lo = pl.col_lo[size_t(kw)], hi = pl.col_hi[size_t(kw)], shift = kw * pl.DW - pl.PW;
      for (int64_t oh = 0; oh < pl.OH; ++oh) {
        const int64_t ih = oh * pl.SH - pl.PH + kh * pl.DH;
        if (ih < 0 || ih >= pl.IH) continue;
        const T* xrow = x + ih * pl.IW + shift;
        T* arow = acc + oh * pl.OW;
        for (int64_t ow = lo; ow < hi; ++ow) arow[ow] = arow[ow] + xrow[ow * pl.SW] * wt;
      }
    }
}

// The convolution's definition (the Conv operator's reference, exact-contract section
// 3): N images of C channels into M output channels in `group` groups; output (n, m, o)
// folds from -0.0 over the input channels of m's group (outer) and the kernel positions
// (row-major), a = a + x * w, skipping padding taps; then + bias[m] (bias not null).
// x: N x C x in, w: M x (C / group) x kernel, y: N x M x out, all contiguous.
void ConvF32(const ConvGeometry& g, int64_t N, int64_t C, int64_t M, int64_t group, const float* x, const float* w,
             const float* bias, float* y);

}  // namespace ref
}  // namespace onemodel::impl
