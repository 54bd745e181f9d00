// Per-target convolution kernels (contracts in ref/blas.h), written once on the vector
// vocabulary.
#include <algorithm>
#include <cstring>
#include <vector>

#include "kernels/kernels.h"
#include "ref/blas.h"
#include "simd/simd.h"
#include "kernels/transpose.h"
#include "kernels/activation_v.h"

namespace onemodel {
namespace ONEMODEL_NS {
namespace {
constexpr int64_t kL = int64_t(Lanes<VF32>());

}  // namespace

// Depthwise planes with lanes across channels: per block of kL channels the planes are
// interleaved ([position][lane], a transpose), each output position folds its valid
// taps -- a rectangle of kernel rows and columns, in kernel order, padding taps skipped
// -- from -0.0 as acc + x * w, exactly the reference's fold per channel, and the block
// is transposed back. No zero padding is added, so no signed-zero fix-up is needed.
// Four neighbouring positions run as four independent accumulators. Output rows go in
// strips whose interleaved input rows take about 48 KiB (cache-resident). Lanes past the
// last channel compute unused values. The epilogue (bias, activation) applies to each
// finished accumulator before it is stored.
void DepthwiseConvF32(const float* x, const float* w, float* y, int64_t channels, const int64_t* g, const float* bias,
                      int32_t act) {
  const int64_t IH = g[0], IW = g[1], OH = g[2], OW = g[3], KH = g[4], KW = g[5], SH = g[6], SW = g[7], DH = g[8],
                DW = g[9], PH = g[10], PW = g[11];
  const int64_t in_sp = IH * IW, out_sp = OH * OW, taps = KH * KW;
  if (channels <= 0 || out_sp <= 0) return;
  const int64_t span = (KH - 1) * DH + 1;  // input rows under one output row
  const int64_t budget = std::max<int64_t>(span, (int64_t(48) << 10) / int64_t(sizeof(float) * size_t(IW * kL)));
  const int64_t strip = std::min(OH, std::max<int64_t>(1, (budget - span) / SH + 1));
  const int64_t strip_in = std::min(IH, (strip - 1) * SH + span);
  thread_local std::vector<float> buf;
  thread_local std::vector<int64_t> kw_range;
  const size_t need = size_t((strip_in * IW + strip * OW + taps) * kL);
  if (buf.size() < need) buf.resize(need);
  float* xt = buf.data();
  float* yt = xt + strip_in * IW * kL;
  float* wt = yt + strip * OW * kL;
  // Valid kernel columns [lo, hi) per output column; columns [c_lo, c_hi) have them all.
  if (kw_range.size() < size_t(2 * OW)) kw_range.resize(size_t(2 * OW));
  int64_t c_lo = OW, c_hi = 0;
  for (int64_t ow = 0; ow < OW; ++ow) {
    const int64_t base = ow * SW - PW;
    int64_t lo = 0, hi = KW;
    while (lo < KW && base + lo * DW < 0) ++lo;
    while (hi > lo && base + (hi - 1) * DW >= IW) --hi;
    kw_range[size_t(2 * ow)] = lo;
    kw_range[size_t(2 * ow + 1)] = hi;
    if (lo == 0 && hi == KW) { c_lo = std::min(c_lo, ow); c_hi = std::max(c_hi, ow + 1); }
  }
  const VF32 neg0 = Set<VF32>(-0.0f);
  for (int64_t c0 = 0; c0 < channels; c0 += kL) {
    const int64_t nc = std::min(kL, channels - c0);
    for (int64_t t = 0; t < taps; ++t)
      for (int64_t j = 0; j < nc; ++j) wt[t * kL + j] = w[(c0 + j) * taps + t];
    alignas(64) float bl[kL] = {};
    if (bias) for (int64_t j = 0; j < nc; ++j) bl[j] = bias[c0 + j];
    const VF32 bv = Load<VF32>(bl);
    const bool epi = bias || act >= 0;
    auto fin = [&](VF32 a) { return epi ? ActivationV(act, bias ? Add(a, bv) : a) : a; };
    for (int64_t oh0 = 0; oh0 < OH; oh0 += strip) {
    const int64_t oh1 = std::min(OH, oh0 + strip);
    // Input rows [r0, r1) of this strip, interleaved into xt (row r at xt row r - r0).
    const int64_t r0 = std::max<int64_t>(0, oh0 * SH - PH), r1 = std::min(IH, (oh1 - 1) * SH - PH + span);
    for (int64_t p = r0 * IW; p < r1 * IW; p += kL)
      TransposeTile<kL>(x + c0 * in_sp + p, in_sp, xt + (p - r0 * IW) * kL, kL, nc, std::min(kL, r1 * IW - p));
    for (int64_t oh = oh0; oh < oh1; ++oh) {
      const int64_t ih0 = oh * SH - PH;
      int64_t kh_lo = 0, kh_hi = KH;
      while (kh_lo < KH && ih0 + kh_lo * DH < 0) ++kh_lo;
      while (kh_hi > kh_lo && ih0 + (kh_hi - 1) * DH >= IH) --kh_hi;
      float* yrow = yt + (oh - oh0) * OW * kL;
      const int64_t rb = ih0 - r0;  // xt row of kernel row 0
      for (int64_t ow = 0; ow < OW;) {
        if (ow >= c_lo && ow + 4 <= c_hi) {
          VF32 a0 = neg0, a1 = neg0, a2 = neg0, a3 = neg0;
          const int64_t step = SW * kL;
          for (int64_t kh = kh_lo; kh < kh_hi; ++kh) {
            const float* xr = xt + ((rb + kh * DH) * IW + ow * SW - PW) * kL;
            const float* wr = wt + kh * KW * kL;
            for (int64_t kw = 0; kw < KW; ++kw) {
              const VF32 wv = Load<VF32>(wr + kw * kL);
              const float* xp = xr + kw * DW * kL;
              a0 = Add(a0, Mul(Load<VF32>(xp), wv));
              a1 = Add(a1, Mul(Load<VF32>(xp + step), wv));
              a2 = Add(a2, Mul(Load<VF32>(xp + 2 * step), wv));
              a3 = Add(a3, Mul(Load<VF32>(xp + 3 * step), wv));
            }
          }
          Store(fin(a0), yrow + ow * kL);
          Store(fin(a1), yrow + (ow + 1) * kL);
          Store(fin(a2), yrow + (ow + 2) * kL);
          Store(fin(a3), yrow + (ow + 3) * kL);
          ow += 4;
        } else if (ow + 4 <= OW) {
          // Four positions with their own valid kernel columns (the borders): each
          // accumulator takes only its taps, in kernel order.
          const int64_t* r = kw_range.data() + 2 * ow;
          VF32 a[4] = {neg0, neg0, neg0, neg0};
          for (int64_t kh = kh_lo; kh < kh_hi; ++kh) {
            const int64_t base = (rb + kh * DH) * IW + ow * SW - PW;
            const float* wr = wt + kh * KW * kL;
            for (int64_t kw = 0; kw < KW; ++kw) {
              const VF32 wv = Load<VF32>(wr + kw * kL);
              for (int64_t i = 0; i < 4; ++i)
                if (kw >= r[2 * i] && kw < r[2 * i + 1])
                  a[i] = Add(a[i], Mul(Load<VF32>(xt + (base + i * SW + kw * DW) * kL), wv));
            }
          }
          for (int64_t i = 0; i < 4; ++i) Store(fin(a[i]), yrow + (ow + i) * kL);
          ow += 4;
        } else {
          const int64_t kw_lo = kw_range[size_t(2 * ow)], kw_hi = kw_range[size_t(2 * ow + 1)];
          VF32 a = neg0;
          for (int64_t kh = kh_lo; kh < kh_hi; ++kh) {
            const int64_t base = (rb + kh * DH) * IW + ow * SW - PW;  // + kw * DW >= 0 for kw >= kw_lo
            const float* wr = wt + kh * KW * kL;
            for (int64_t kw = kw_lo; kw < kw_hi; ++kw)
              a = Add(a, Mul(Load<VF32>(xt + (base + kw * DW) * kL), Load<VF32>(wr + kw * kL)));
          }
          Store(fin(a), yrow + ow * kL);
          ++ow;
        }
      }
    }
    for (int64_t p = oh0 * OW; p < oh1 * OW; p += kL)
      TransposeTile<kL>(yt + (p - oh0 * OW) * kL, kL, y + c0 * out_sp + p, out_sp, std::min(kL, oh1 * OW - p), nc);
    }
  }
}

}  // namespace ONEMODEL_NS
}  // namespace onemodel
