// Reference convolution and pooling kernels (see conv.h): plain loops in program order.
#include "ref/conv.h"

#include <algorithm>

#include "core/index.h"
#include "ref/gemm.h"

namespace onemodel::impl {
namespace ref {

void MulAddStridedF32(float* acc, const float* x, int64_t stride, float w, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const float p = x[i * stride] * w;
    acc[i] = acc[i] + p;
  }
}

void MaxStepStridedF32(float* acc, const float* x, int64_t stride, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const float v = x[i * stride], a = acc[i];
    if (v != v || a != a) {
      if (a == a) acc[i] = v;
    } else if (v > a)
      acc[i] = v;
  }
}

void ConvPlaneF32(const float* x, const float* w, float* y, const Conv2DGeometry& g) {
  const int64_t OH = g.OH, OW = g.OW;
  for (int64_t oh = 0; oh < OH; ++oh)
    for (int64_t ow = 0; ow < OW; ++ow) y[oh * OW + ow] = ConvPlaneOutputF32(x, w, g, oh, ow);
}

void DepthwiseConvF32(const float* x, const float* w, float* y, int64_t channels, const Conv2DGeometry& g,
                      int64_t oh_begin, int64_t oh_end, const float* bias, Activation act) {
  const int64_t in_sp = g.IH * g.IW, out_sp = g.OH * g.OW, k_sp = g.KH * g.KW, OW = g.OW;
  for (int64_t c = 0; c < channels; ++c)
    for (int64_t oh = oh_begin; oh < oh_end; ++oh) {
      float* yrow = y + c * out_sp + oh * OW;
      for (int64_t ow = 0; ow < OW; ++ow) yrow[ow] = ConvPlaneOutputF32(x + c * in_sp, w + c * k_sp, g, oh, ow);
      EpilogueF32(yrow, OW, bias ? bias + c : nullptr, act);
    }
}

void ConvDirectF32(const float* x, int64_t in_sp, const float* w, float* y, int64_t Cg, int64_t Mg,
                   const Conv2DGeometry& g, int64_t oh_begin, int64_t oh_end, const float* bias, Activation act) {
  const int64_t OH = g.OH, OW = g.OW, k_sp = g.KH * g.KW;
  for (int64_t m = 0; m < Mg; ++m)
    for (int64_t oh = oh_begin; oh < oh_end; ++oh) {
      float* yrow = y + (m * OH + oh) * OW;
      for (int64_t ow = 0; ow < OW; ++ow) yrow[ow] = ConvDirectOutputF32(x, in_sp, w + m * Cg * k_sp, Cg, g, oh, ow);
      EpilogueF32(yrow, OW, bias ? bias + m : nullptr, act);
    }
}

ConvPlane MakeConvPlane(const ConvGeometry& g) {
  const bool two = g.dims == 2;
  const size_t c = two ? 1 : 0;
  ConvPlane p{{two ? g.in[0] : 1, g.in[c], two ? g.out[0] : 1, g.out[c], two ? g.kernel[0] : 1, g.kernel[c],
               two ? g.stride[0] : 1, g.stride[c], two ? g.dil[0] : 1, g.dil[c], two ? g.pad_b[0] : 0, g.pad_b[c]},
              {},
              {}};
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

void ListTaps(const ConvGeometry& g, const std::vector<int64_t>& op, const std::vector<int64_t>& in_st,
              std::vector<int64_t>* tap_off, std::vector<int64_t>* tap_k) {
  tap_off->clear();
  tap_k->clear();
  ForEachIndex(g.kernel, [&](int64_t k, const std::vector<int64_t>& kp) {
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

void ConvF32(const ConvGeometry& g, int64_t N, int64_t C, int64_t M, int64_t group, const float* x, const float* w,
             const float* bias, float* y) {
  const int64_t Cg = C / group, Mg = M / group;
  const int64_t in_sp = ProductOf(g.in), out_sp = ProductOf(g.out), k_sp = ProductOf(g.kernel);
  if (g.dims <= 2) {
    // One plane of accumulators per output channel; the loops run channel, kernel row,
    // kernel column, then over the output positions whose tap is inside the input. Each
    // output still folds channel (outer) then kernel position (row-major) from -0.0,
    // skipping padding taps: the same sums as the general loops below.
    const ConvPlane pl = MakeConvPlane(g);
    for (int64_t nm = 0; nm < N * M; ++nm) {
      const int64_t n = nm / M, m = nm % M, grp = m / Mg;
      float* acc = y + nm * out_sp;
      std::fill(acc, acc + out_sp, -0.0f);
      for (int64_t c = 0; c < Cg; ++c)
        AccumulatePlane<float>(pl, x + (n * C + grp * Cg + c) * in_sp, w + (m * Cg + c) * k_sp, acc);
      if (bias)
        for (int64_t i = 0; i < out_sp; ++i) acc[i] = acc[i] + bias[m];
    }
    return;
  }
  // The taps of one output position are listed once and shared by every output channel.
  const std::vector<int64_t> in_st = RowMajorStrides(g.in);
  std::vector<int64_t> tap_off, tap_k;
  for (int64_t n = 0; n < N; ++n)
    ForEachIndex(g.out, [&](int64_t o, const std::vector<int64_t>& op) {
      ListTaps(g, op, in_st, &tap_off, &tap_k);
      for (int64_t m = 0; m < M; ++m) {
        const int64_t grp = m / Mg;
        float acc = -0.0f;
        for (int64_t c = 0; c < Cg; ++c) {
          const float* xc = x + (n * C + grp * Cg + c) * in_sp;
          const float* wc = w + (m * Cg + c) * k_sp;
          for (size_t t = 0; t < tap_off.size(); ++t) acc = acc + xc[tap_off[t]] * wc[tap_k[t]];
        }
        if (bias) acc = acc + bias[m];
        y[(n * M + m) * out_sp + o] = acc;
      }
    });
}

}  // namespace ref
}  // namespace onemodel::impl
