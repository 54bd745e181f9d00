// Per-target convolution kernels (contracts in ref/conv.h), written once on the vector
// vocabulary.
#include <algorithm>
#include <cstring>
#include <utility>
#include <vector>

#include "kernels/kernels.h"
#include "ref/conv.h"
#include "ref/gemm.h"
#include "simd/simd.h"
#include "kernels/transpose.h"
#include "kernels/activation_v.h"
#include "core/per_thread.h"
#include "core/scratch.h"

namespace onemodel::impl {
namespace ONEMODEL_NS {
namespace {
constexpr int64_t kL = int64_t(Lanes<VF32>());
constexpr size_t kVN = Lanes<VF32>();

// ConvDirectF32's register tile: kDR output channels by NV vectors of output columns.
// 32-register targets take 8 channels (16 accumulators), others 4. Measured on Zen 5
// (AMD EPYC family 26), resnet50's 7x7 stride-2 first layer (3 -> 64 channels at
// 224x224) alone, 1 thread: 4 channels 2.5 ms, 8 channels 2.0 ms, and 1.6 ms with the
// border columns' channels in vector lanes (BorderColumn).
#if defined(ONEMODEL_TARGET_AVX512) || defined(ONEMODEL_TARGET_NEON) || defined(ONEMODEL_TARGET_NEONDOT)
constexpr size_t kDR = 8;
#else
constexpr size_t kDR = 4;
#endif

// Columns [ow, ow + n) of one output row for kDR output channels (n > (NV - 1) * lanes;
// the last vector masked when shorter): each output folds the nt taps in order from
// -0.0 -- tap j's input for column o is pp[j][o], its weight for channel r is
// wt[wo[j] + r] -- then takes the epilogue and is stored at y0 + r * ysp + column
// (rows r < mr only).
template <size_t NV, bool kMasked, bool kContig>
inline void DirectTile(const float* const* pp, const int64_t* wo, int64_t nt, const float* wt, int64_t ow, int64_t n,
                       float* y0, int64_t ysp, size_t mr, const float* bias, Activation act) {
  const size_t last = kMasked ? size_t(n) - (NV - 1) * kVN : kVN;
  VF32 acc[kDR * NV];
  for (size_t i = 0; i < kDR * NV; ++i) acc[i] = Set<VF32>(-0.0f);
  for (int64_t j = 0; j < nt; ++j) {
    const float* p = pp[j] + ow;
    VF32 xv[NV];
    for (size_t v = 0; v < NV; ++v)
      xv[v] = (!kMasked || v + 1 < NV) ? Load<VF32>(p + v * kVN) : LoadN<VF32>(p + v * kVN, last, 0.0f);
    const float* a = wt + (kContig ? j * int64_t(kDR) : wo[j]);
    for (size_t r = 0; r < kDR; ++r) {
      const VF32 av = Set<VF32>(a[r]);
      for (size_t v = 0; v < NV; ++v) acc[r * NV + v] = Add(acc[r * NV + v], Mul(xv[v], av));
    }
  }
  const VF32 zero = Set<VF32>(0.0f);
  for (size_t r = 0; r < mr; ++r) {
    const VF32 bv = bias ? Set<VF32>(bias[r]) : zero;
    for (size_t v = 0; v < NV; ++v) {
      VF32 o = acc[r * NV + v];
      if (bias) o = Add(o, bv);
      o = ActivationV(act, o);
      float* dst = y0 + int64_t(r) * ysp + ow + int64_t(v * kVN);
      if (!kMasked || v + 1 < NV)
        Store(o, dst);
      else
        StoreN(o, dst, last);
    }
  }
}

// ConvDirectF32's weights as [channel tile][k][kDR] (channels past Mg are zeros), in this
// thread's buffer.
const float* PackDirectWeights(const float* w, int64_t Mg, int64_t Kg, int64_t tiles) {
  auto& wpk = ONEMODEL_PER_THREAD(ScratchVector<float>);
  if (wpk.size() < size_t(tiles * Kg * int64_t(kDR))) wpk.resize(size_t(tiles * Kg * int64_t(kDR)));
  for (int64_t t = 0; t < tiles; ++t)
    for (int64_t k = 0; k < Kg; ++k)
      for (int64_t r = 0; r < int64_t(kDR); ++r) {
        const int64_t m = t * int64_t(kDR) + r;
        wpk[size_t((t * Kg + k) * int64_t(kDR) + r)] = m < Mg ? w[m * Kg + k] : 0.0f;
      }
  return wpk.data();
}

// Input rows [ih_lo, ih_hi) of each of Cg channels split into their even and odd columns,
// in this thread's buffer: row (c, ih) at ((c * rows + ih - ih_lo) * 2) * half, its odd
// half `half` = ceil(IW / 2) floats further.
const float* SplitEvenOdd(const float* x, int64_t in_sp, int64_t Cg, int64_t IW, int64_t ih_lo, int64_t ih_hi) {
  const int64_t half = (IW + 1) / 2, rows = std::max<int64_t>(0, ih_hi - ih_lo);
  auto& split = ONEMODEL_PER_THREAD(ScratchVector<float>);
  if (split.size() < size_t(Cg * rows * 2 * half)) split.resize(size_t(Cg * rows * 2 * half));
  for (int64_t c = 0; c < Cg; ++c)
    for (int64_t ih = ih_lo; ih < ih_hi; ++ih) {
      const float* src = x + c * in_sp + ih * IW;
      float* e = split.data() + ((c * rows + (ih - ih_lo)) * 2) * half;
      float* o = e + half;
      for (int64_t j = 0; 2 * j < IW; ++j) e[j] = src[2 * j];
      for (int64_t j = 0; 2 * j + 1 < IW; ++j) o[j] = src[2 * j + 1];
    }
  return split.data();
}

// One border column of ConvDirectF32 for a tile's kDR channels (in the lanes of two
// vectors, each lane its channel's own fold): the taps j whose input column cols[j] + t
// lies inside [0, IW), in order, from -0.0; then the epilogue (bias: the mr channels'
// own, or null). lanes receives 2 * kVN values.
void BorderColumn(const float* const* rows, const int64_t* cols, const int64_t* wo, int64_t nt, const float* wt,
                  int64_t t, int64_t IW, size_t mr, const float* bias, Activation act, float* lanes) {
  static_assert(kDR <= 2 * kVN, "two vectors hold a tile's channels");
  constexpr bool kTwo = kDR > kVN;
  constexpr size_t kLast = kTwo ? kDR - kVN : kDR;
  VF32 acc0 = Set<VF32>(-0.0f), acc1 = acc0;
  for (int64_t j = 0; j < nt; ++j) {
    const int64_t c = cols[j] + t;
    if (c < 0 || c >= IW) continue;
    const VF32 xin = Set<VF32>(rows[j][c]);
    const float* a = wt + wo[j];
    if (kTwo) {
      acc0 = Add(acc0, Mul(xin, Load<VF32>(a)));
      acc1 = Add(acc1, Mul(xin, LoadN<VF32>(a + kVN, kLast, 0.0f)));
    } else {
      acc0 = Add(acc0, Mul(xin, LoadN<VF32>(a, kLast, 0.0f)));
    }
  }
  // The epilogue on the lanes: + bias (channels past mr add 0: unused), then act.
  if (bias) {
    acc0 = Add(acc0, LoadN<VF32>(bias, std::min(mr, kVN), 0.0f));
    if (kTwo && mr > kVN) acc1 = Add(acc1, LoadN<VF32>(bias + kVN, mr - kVN, 0.0f));
  }
  Store(ActivationV(act, acc0), lanes);
  Store(ActivationV(act, acc1), lanes + kVN);
}

}  // namespace

// Direct convolution: per output row, the valid taps (channel, kernel row, kernel
// column: the reference's fold order, rows in the padding left out) become a list of
// input pointers, one per tap, such that the tap's input for output column ow is
// p[ow] (stride 1: the input row; stride 2: the even or odd half of it, split once);
// register tiles of kDR output channels by two vectors of columns fold the list from
// -0.0. Columns whose taps reach into the padding (the borders) take the reference's
// own fold. No zero is ever added for a padding tap, so no signed-zero fix-up is needed,
// and no im2col matrix is built. The weights are laid out once per call as
// [channel tile][k][kDR] (data movement).
void ConvDirectF32(const float* x, int64_t in_sp, const float* w, float* y, int64_t Cg, int64_t Mg,
                   const Conv2DGeometry& g, int64_t oh_begin, int64_t oh_end, const float* bias, Activation act) {
  // The AVX-512 targets' 512-bit version runs where the GEMM's 512-bit tiles do: on AMD
  // Zen 4 (AVX-512 on 256-bit pipes) the AVX2 kernel's 256-bit tiles measured faster (a
  // 3-channel 3x3 stride-2 layer at 224x224: 0.19 ms against 0.21 ms; 7x7: 3.6 against
  // 4.3 ms), so MakeDispatch gives such cores AVX2's entry (runtime/dispatch.h).
  const int64_t IH = g.IH, IW = g.IW, OH = g.OH, OW = g.OW, KH = g.KH, KW = g.KW, SH = g.SH, SW = g.SW, DH = g.DH,
                DW = g.DW, PH = g.PH, PW = g.PW;
  if (SW != 1 && SW != 2) {
    ref::ConvDirectF32(x, in_sp, w, y, Cg, Mg, g, oh_begin, oh_end, bias, act);
    return;
  }
  if (Mg <= 0 || OW <= 0 || oh_end <= oh_begin) return;
  const int64_t ksp = KH * KW, Kg = Cg * ksp, tiles = (Mg + int64_t(kDR) - 1) / int64_t(kDR);
  const float* wpk = PackDirectWeights(w, Mg, Kg, tiles);
  // Output columns [lo, hi) have every kernel column inside the input.
  int64_t lo = 0, hi = OW;
  for (int64_t kw = 0; kw < KW; ++kw) {
    const int64_t t = kw * DW - PW;  // iw = ow * SW + t
    lo = std::max(lo, t >= 0 ? int64_t(0) : (-t + SW - 1) / SW);
    hi = std::min(hi, IW - t <= 0 ? int64_t(0) : (IW - t + SW - 1) / SW);
  }
  lo = std::min(lo, OW);
  hi = std::max(hi, lo);
  // Stride 2: the input rows these outputs read, split into even and odd columns.
  const int64_t ih_lo = std::max<int64_t>(0, oh_begin * SH - PH);
  const int64_t ih_hi = std::min<int64_t>(IH, (oh_end - 1) * SH - PH + (KH - 1) * DH + 1);
  const int64_t half = (IW + 1) / 2, rows = std::max<int64_t>(0, ih_hi - ih_lo);
  const float* split = SW == 2 ? SplitEvenOdd(x, in_sp, Cg, IW, ih_lo, ih_hi) : nullptr;
  auto& ptr = ONEMODEL_PER_THREAD(std::vector<const float*>);
  auto& wo = ONEMODEL_PER_THREAD(std::vector<int64_t>);
  auto& ptr_row = ONEMODEL_PER_THREAD(std::vector<const float*>);  // the tap's input row, for borders
  auto& ptr_col = ONEMODEL_PER_THREAD(std::vector<int64_t>);       // its column offset t: column o reads o * SW + t
  if (ptr.size() < size_t(Kg)) {
    ptr.resize(size_t(Kg));
    wo.resize(size_t(Kg));
    ptr_row.resize(size_t(Kg));
    ptr_col.resize(size_t(Kg));
  }
  const int64_t out_sp = OH * OW;
  for (int64_t oh = oh_begin; oh < oh_end; ++oh) {
    int64_t nt = 0;
    for (int64_t c = 0; c < Cg; ++c)
      for (int64_t kh = 0; kh < KH; ++kh) {
        const int64_t ih = oh * SH - PH + kh * DH;
        if (ih < 0 || ih >= IH) continue;
        for (int64_t kw = 0; kw < KW; ++kw) {
          const int64_t t = kw * DW - PW;
          if (SW == 1) {
            ptr[size_t(nt)] = x + c * in_sp + ih * IW + t;
          } else {
            // Column 2*ow + t: even t = 2q is the even half at ow + q, odd t = 2q + 1 the
            // odd half at ow + q (q rounded down).
            const int64_t q = (t >= 0 ? t : t - 1) / 2;
            ptr[size_t(nt)] = split + ((c * rows + (ih - ih_lo)) * 2 + (t & 1)) * half + q;
          }
          wo[size_t(nt)] = (c * ksp + kh * KW + kw) * int64_t(kDR);
          ptr_row[size_t(nt)] = x + c * in_sp + ih * IW;
          ptr_col[size_t(nt)] = t;
          ++nt;
        }
      }
    for (int64_t t = 0; t < tiles; ++t) {
      const int64_t m0 = t * int64_t(kDR);
      const size_t mr = size_t(std::min<int64_t>(int64_t(kDR), Mg - m0));
      const float* wt = wpk + t * Kg * int64_t(kDR);
      float* y0 = y + m0 * out_sp + oh * OW;
      const float* b0 = bias ? bias + m0 : nullptr;
      int64_t ow = lo;
      // Rows with every tap inside the input read the weights in order (no index list).
      const bool contig = nt == Kg;
      auto tile = [&](auto nv, auto masked, int64_t at, int64_t n) {
        if (contig)
          DirectTile<decltype(nv)::value, decltype(masked)::value, true>(ptr.data(), wo.data(), nt, wt, at, n, y0,
                                                                         out_sp, mr, b0, act);
        else
          DirectTile<decltype(nv)::value, decltype(masked)::value, false>(ptr.data(), wo.data(), nt, wt, at, n, y0,
                                                                          out_sp, mr, b0, act);
      };
      using Two = std::integral_constant<size_t, 2>;
      using One = std::integral_constant<size_t, 1>;
      using Full = std::false_type;
      using Part = std::true_type;
      for (; ow + 2 * kL <= hi; ow += 2 * kL) tile(Two{}, Full{}, ow, 2 * kL);
      // The last columns: a whole tile ending at hi when the row has one (it recomputes
      // some columns of the previous tile, with the same fold: the same bits), else
      // masked vectors.
      if (ow < hi && hi - lo >= 2 * kL)
        tile(Two{}, Full{}, hi - 2 * kL, 2 * kL);
      else if (hi - ow > kL)
        tile(Two{}, Part{}, ow, hi - ow);
      else if (hi > ow)
        tile(One{}, Part{}, ow, hi - ow);
      // Border columns: the taps inside the input, in the same order, the tile's kDR
      // channels in the lanes (each lane still its own channel's fold).
      auto border = [&](int64_t o) {
        alignas(64) float lanes[2 * kVN];
        BorderColumn(ptr_row.data(), ptr_col.data(), wo.data(), nt, wt, o * SW, IW, mr, b0, act, lanes);
        for (size_t r = 0; r < mr; ++r) y0[int64_t(r) * out_sp + o] = lanes[r];
      };
      for (int64_t o = 0; o < lo; ++o) border(o);
      for (int64_t o = hi; o < OW; ++o) border(o);
    }
  }
}

namespace {
// P interior positions of one output row of DepthwiseConvF32 from column ow (every
// kernel column inside the input), lanes across channels: each folds its taps in kernel
// order from -0.0 as acc + x * w, P independent chains (eight keep both add pipes busy;
// four are bound by the add latency); then fin and the store into the interleaved row.
template <int P, class Fin>
inline void DwInterior(const float* xt, const float* wt, int64_t rb, int64_t ow, const Conv2DGeometry& g, int64_t kh_lo,
                       int64_t kh_hi, float* yrow, const Fin& fin) {
  VF32 a[P];
#pragma GCC unroll 8
  for (int i = 0; i < P; ++i) a[i] = Set<VF32>(-0.0f);
  const int64_t step = g.SW * kL;
  for (int64_t kh = kh_lo; kh < kh_hi; ++kh) {
    const float* xr = xt + ((rb + kh * g.DH) * g.IW + ow * g.SW - g.PW) * kL;
    const float* wr = wt + kh * g.KW * kL;
    for (int64_t kw = 0; kw < g.KW; ++kw) {
      const VF32 wv = Load<VF32>(wr + kw * kL);
      const float* xp = xr + kw * g.DW * kL;
#pragma GCC unroll 8
      for (int i = 0; i < P; ++i) a[i] = Add(a[i], Mul(Load<VF32>(xp + i * step), wv));
    }
  }
#pragma GCC unroll 8
  for (int i = 0; i < P; ++i) Store(fin(a[i]), yrow + (ow + i) * kL);
}
}  // namespace

// Depthwise planes with lanes across channels: per block of kL channels the planes are
// interleaved ([position][lane], a transpose), each output position folds its valid
// taps -- a rectangle of kernel rows and columns, in kernel order, padding taps skipped
// -- from -0.0 as acc + x * w, exactly the reference's fold per channel, and the block
// is transposed back. No zero padding is added, so no signed-zero fix-up is needed.
// Four neighbouring positions run as four independent accumulators. Output rows go in
// strips whose interleaved input rows take about 48 KiB (cache-resident). Lanes past the
// last channel compute unused values. The epilogue (bias, activation) applies to each
// finished accumulator before it is stored. Only output rows [oh_begin, oh_end) are
// computed (a thread's band; an output's fold does not depend on which strip or band
// holds it).
void DepthwiseConvF32(const float* x, const float* w, float* y, int64_t channels, const Conv2DGeometry& g,
                      int64_t oh_begin, int64_t oh_end, const float* bias, Activation act) {
  const int64_t IH = g.IH, IW = g.IW, OH = g.OH, OW = g.OW, KH = g.KH, KW = g.KW, SH = g.SH, SW = g.SW, DH = g.DH,
                DW = g.DW, PH = g.PH, PW = g.PW;
  const int64_t in_sp = IH * IW, out_sp = OH * OW, taps = KH * KW;
  oh_begin = std::max<int64_t>(oh_begin, 0);
  oh_end = std::min(oh_end, OH);
  if (channels <= 0 || out_sp <= 0 || oh_begin >= oh_end) return;
  const int64_t span = (KH - 1) * DH + 1;  // input rows under one output row
  const int64_t budget = std::max<int64_t>(span, (int64_t(48) << 10) / int64_t(sizeof(float) * size_t(IW * kL)));
  const int64_t strip = std::min(oh_end - oh_begin, std::max<int64_t>(1, (budget - span) / SH + 1));
  const int64_t strip_in = std::min(IH, (strip - 1) * SH + span);
  auto& buf = ONEMODEL_PER_THREAD(ScratchVector<float>);
  auto& kw_range = ONEMODEL_PER_THREAD(std::vector<int64_t>);
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
    if (lo == 0 && hi == KW) {
      c_lo = std::min(c_lo, ow);
      c_hi = std::max(c_hi, ow + 1);
    }
  }
  const VF32 neg0 = Set<VF32>(-0.0f);
  for (int64_t c0 = 0; c0 < channels; c0 += kL) {
    const int64_t nc = std::min(kL, channels - c0);
    for (int64_t t = 0; t < taps; ++t)
      for (int64_t j = 0; j < nc; ++j) wt[t * kL + j] = w[(c0 + j) * taps + t];
    alignas(64) float bl[kL] = {};
    if (bias)
      for (int64_t j = 0; j < nc; ++j) bl[j] = bias[c0 + j];
    const VF32 bv = Load<VF32>(bl);
    const bool epi = bias || act != Activation::kNone;
    auto fin = [&](VF32 a) { return epi ? ActivationV(act, bias ? Add(a, bv) : a) : a; };
    for (int64_t oh0 = oh_begin; oh0 < oh_end; oh0 += strip) {
      const int64_t oh1 = std::min(oh_end, oh0 + strip);
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
          if (ow >= c_lo && ow + 8 <= c_hi) {
            DwInterior<8>(xt, wt, rb, ow, g, kh_lo, kh_hi, yrow, fin);
            ow += 8;
          } else if (ow >= c_lo && ow + 4 <= c_hi) {
            DwInterior<4>(xt, wt, rb, ow, g, kh_lo, kh_hi, yrow, fin);
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
}  // namespace onemodel::impl
