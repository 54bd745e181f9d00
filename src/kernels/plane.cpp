// Per-target plane kernels (contracts in ref/conv.h and ref/elementwise.h), written once
// on the vector vocabulary: strided multiply-add and max steps (plane convolutions,
// pooling) and the one-channel plane convolution. Each lane folds its terms in the
// reference's order, so every target gives the reference's bits.
#include <algorithm>
#include <cstring>
#include <utility>
#include <vector>

#include "kernels/kernels.h"
#include "ref/conv.h"
#include "simd/simd.h"
#include "core/per_thread.h"
#include "core/scratch.h"

namespace onemodel::impl {
namespace ONEMODEL_NS {
namespace {
constexpr size_t kN = Lanes<VF32>();
template <size_t... I, class F>
inline void Unroll(std::index_sequence<I...>, F&& f) {
  (f(std::integral_constant<size_t, I>{}), ...);
}
}  // namespace

namespace {
// x[0], x[2], ..., x[2(t - 1)] in lanes [0, t) (0 < t <= kN; later lanes unspecified),
// reading only x[0 .. 2t - 2]: the stride-2 tail as two masked loads.
inline VF32 EvenLanesN(const float* x, size_t t) {
  const size_t m = 2 * t - 1;
  const VF32 a = m >= kN ? Load<VF32>(x) : LoadN<VF32>(x, m, 0.0f);
  const VF32 b = m > kN ? LoadN<VF32>(x + kN, m - kN, 0.0f) : Zero<VF32>();
  return EvenLanes(a, b);
}

// acc[i] = step(acc[i], x[i * stride]) for i < n, lane by lane (step: a lane-wise
// VF32 (acc, x) -> VF32), reading only the elements x[i * stride]. Stride 1: whole
// vectors, the tail masked. Stride 2: the even elements of two vectors while the odd
// element after the last one used is itself before an element the call reads
// (i + kN < n), then the rest (at most kN) by masked loads (EvenLanesN). Other strides
// gather into a buffer.
template <class Step>
inline void StridedSteps(float* acc, const float* x, int64_t stride, int64_t n, Step step) {
  int64_t i = 0;
  auto tail = [&](VF32 xv) {
    const size_t t = size_t(n - i);
    StoreN(step(LoadN<VF32>(acc + i, t, 0.0f), xv), acc + i, t);
  };
  if (stride == 1) {
    for (; i + int64_t(kN) <= n; i += int64_t(kN)) Store(step(Load<VF32>(acc + i), Load<VF32>(x + i)), acc + i);
    if (i < n) tail(LoadN<VF32>(x + i, size_t(n - i), 0.0f));
    return;
  }
  if (stride == 2) {
    for (; i + int64_t(kN) < n; i += int64_t(kN))
      Store(step(Load<VF32>(acc + i), EvenLanes(Load<VF32>(x + 2 * i), Load<VF32>(x + 2 * i + kN))), acc + i);
    if (i < n) tail(EvenLanesN(x + 2 * i, size_t(n - i)));
    return;
  }
  alignas(64) float buf[kN];
  for (; i < n; i += int64_t(kN)) {
    const size_t t = size_t(std::min<int64_t>(int64_t(kN), n - i));
    for (size_t j = 0; j < t; ++j) buf[j] = x[(i + int64_t(j)) * stride];
    if (t == kN)
      Store(step(Load<VF32>(acc + i), Load<VF32>(buf)), acc + i);
    else
      tail(LoadN<VF32>(buf, t, 0.0f));
  }
}

// MaxStep on lanes: v where v is NaN and a is not; a where a is NaN; else v > a ? v : a.
inline VF32 MaxStep(VF32 a, VF32 v) {
  const VF32 a_nan = Ne(a, a), v_nan = Ne(v, v);
  const VF32 take = Or(AndNot(a_nan, v_nan), Gt(v, a));  // Gt is false on NaNs
  return IfThenElse(take, v, a);
}
}  // namespace

void MulAddStridedF32(float* acc, const float* x, int64_t stride, float w, int64_t n) {
  const VF32 wv = Set<VF32>(w);
  StridedSteps(acc, x, stride, n, [wv](VF32 a, VF32 v) { return Add(a, Mul(v, wv)); });
}

void MaxStepStridedF32(float* acc, const float* x, int64_t stride, int64_t n) {
  StridedSteps(acc, x, stride, n, MaxStep);
}

// Outputs [ow, ow + n) of one plane row, NV vectors (n > (NV - 1) * kN; the last one
// masked when n < NV * kN): each lane folds the nt taps (tap j's input for column o at
// pp[j][o], weight wp[j]) in order from -0.0; NV independent chains.
template <size_t NV>
inline void PlaneRun(const float* const* pp, const VF32* wp, int64_t nt, int64_t ow, int64_t n, float* yrow) {
  const size_t last = size_t(n) - (NV - 1) * kN;  // lanes of the last vector, 1..kN
  VF32 acc[NV];
  for (size_t v = 0; v < NV; ++v) acc[v] = Set<VF32>(-0.0f);
  for (int64_t j = 0; j < nt; ++j) {
    const float* p = pp[j] + ow;
    const VF32 w = wp[j];
    Unroll(std::make_index_sequence<NV>{}, [&](auto v) {
      const VF32 x = (v + 1 < NV || last == kN) ? Load<VF32>(p + v * kN) : LoadN<VF32>(p + v * kN, last, 0.0f);
      acc[v] = Add(acc[v], Mul(x, w));
    });
  }
  Unroll(std::make_index_sequence<NV>{}, [&](auto v) {
    if (v + 1 < NV || last == kN)
      Store(acc[v], yrow + ow + int64_t(v * kN));
    else
      StoreN(acc[v], yrow + ow + int64_t(v * kN), last);
  });
}

void ConvPlaneF32(const float* x, const float* w, float* y, const Conv2DGeometry& g) {
  const int64_t IH = g.IH, IW = g.IW, OH = g.OH, OW = g.OW, KH = g.KH, KW = g.KW, SH = g.SH, SW = g.SW, DH = g.DH,
                DW = g.DW, PH = g.PH, PW = g.PW;
  if ((PH > 0 || PW > 0) && OH > 0 && OW > 0 && OW <= int64_t(4 * kN)) {
    // Padded narrow planes (wide ones lose little to their borders): copy the plane
    // into a zero-bordered one and run it unpadded, so every row goes by vectors. As in the GEMM convolution
    // (ops/conv/conv_gemm.cpp, ConvGemm2D), a +0.0 padding term with a finite weight is +-0 and leaves a nonzero
    // accumulator unchanged, so results differ from the reference at most in the sign of a zero at positions with a
    // padding tap: those are recomputed below. Non-finite weights (0 * inf) take the unpadded path.
    bool finite = true;
    for (int64_t t = 0; t < KH * KW; ++t) finite &= (F2U(w[t]) & 0x7F800000u) != 0x7F800000u;
    if (finite) {
      const int64_t PIH = std::max(IH + PH, (OH - 1) * SH + (KH - 1) * DH + 1);
      const int64_t PIW = std::max(IW + PW, (OW - 1) * SW + (KW - 1) * DW + 1);
      auto& padded = ONEMODEL_PER_THREAD(ScratchVector<float>);
      if (padded.size() < size_t(PIH * PIW)) padded.resize(size_t(PIH * PIW));
      std::fill(padded.begin(), padded.begin() + PIH * PIW, 0.0f);
      for (int64_t ih = 0; ih < IH; ++ih)
        std::memcpy(padded.data() + (ih + PH) * PIW + PW, x + ih * IW, size_t(IW) * sizeof(float));
      const Conv2DGeometry g2{PIH, PIW, OH, OW, KH, KW, SH, SW, DH, DW, 0, 0};
      ConvPlaneF32(padded.data(), w, y, g2);
      // Columns [clo, chi) have no padding tap in any row.
      int64_t clo = 0, chi = 0;
      while (clo < OW && clo * SW - PW < 0) ++clo;
      chi = clo;
      while (chi < OW && chi * SW - PW + (KW - 1) * DW < IW) ++chi;
      for (int64_t oh = 0; oh < OH; ++oh) {
        const int64_t ih0 = oh * SH - PH;
        const bool row_pad = ih0 < 0 || ih0 + (KH - 1) * DH >= IH;
        for (int64_t ow = 0; ow < OW; ++ow) {
          if (!row_pad && ow == clo && chi > clo) ow = chi;  // skip the interior
          if (ow >= OW) break;
          if (y[oh * OW + ow] != 0.0f) continue;
          y[oh * OW + ow] = ref::ConvPlaneOutputF32(x, w, g, oh, ow);
        }
      }
      return;
    }
  }
  // Output columns [lo, hi) have every kernel column inside the input: they go by
  // vectors; the others (and the last partial vector) by the reference's loop.
  int64_t lo = 0, hi = OW;
  for (int64_t kw = 0; kw < KW; ++kw) {
    const int64_t t = kw * DW - PW;  // iw = ow * SW + t
    const int64_t first = t >= 0 ? 0 : (-t + SW - 1) / SW;
    const int64_t end = IW - t <= 0 ? 0 : (IW - t + SW - 1) / SW;
    lo = std::max(lo, first);
    hi = std::min(hi, end);
  }
  lo = std::min(lo, OW);
  hi = std::max(hi, lo);
  auto scalar = [&](int64_t oh, int64_t ow) { y[oh * OW + ow] = ref::ConvPlaneOutputF32(x, w, g, oh, ow); };
  // Stride 2: the input's even and odd columns, split once, so each tap reads contiguously.
  auto& split = ONEMODEL_PER_THREAD(ScratchVector<float>);
  const int64_t half = (IW + 1) / 2;
  if (SW == 2) {
    if (split.size() < size_t(2 * IH * half)) split.resize(size_t(2 * IH * half));
    for (int64_t ih = 0; ih < IH; ++ih) {
      float* e = split.data() + ih * half;
      float* o = split.data() + (IH + ih) * half;
      for (int64_t j = 0; 2 * j < IW; ++j) e[j] = x[ih * IW + 2 * j];
      for (int64_t j = 0; 2 * j + 1 < IW; ++j) o[j] = x[ih * IW + 2 * j + 1];
    }
  }
  // Per output row: the valid taps in kernel order, each as a pointer p such that the
  // tap's input for output column ow is p[ow] (stride 1: the input row; stride 2: a half
  // of it), with its weight. Other strides gather.
  const int64_t taps = KH * KW;
  auto& ptr = ONEMODEL_PER_THREAD(std::vector<const float*>);
  auto& wts = ONEMODEL_PER_THREAD(std::vector<VF32>);
  if (ptr.size() < size_t(taps)) {
    ptr.resize(size_t(taps));
    wts.resize(size_t(taps));
  }
  for (int64_t oh = 0; oh < OH; ++oh) {
    for (int64_t ow = 0; ow < lo; ++ow) scalar(oh, ow);
    if (SW == 1 || SW == 2) {
      int64_t nt = 0;
      for (int64_t kh = 0; kh < KH; ++kh) {
        const int64_t ih = oh * SH - PH + kh * DH;
        if (ih < 0 || ih >= IH) continue;
        for (int64_t kw = 0; kw < KW; ++kw) {
          const int64_t t = kw * DW - PW;
          if (SW == 1) {
            ptr[size_t(nt)] = x + ih * IW + t;
          } else {
            // Column 2*ow + t: even t = 2q is the even half at ow + q, odd t = 2q + 1 the
            // odd half at ow + q (q rounded down).
            const int64_t q = (t >= 0 ? t : t - 1) / 2;
            ptr[size_t(nt)] = split.data() + ((t & 1) ? IH + ih : ih) * half + q;
          }
          wts[size_t(nt)] = Set<VF32>(w[kh * KW + kw]);
          ++nt;
        }
      }
      const float* const* pp = ptr.data();
      const VF32* wp = wts.data();
      float* yrow = y + oh * OW;
      int64_t ow = lo;
      // Four vectors at a time: four independent accumulator chains hide the add latency.
      for (; ow + int64_t(4 * kN) <= hi; ow += int64_t(4 * kN)) PlaneRun<4>(pp, wp, nt, ow, int64_t(4 * kN), yrow);
      // The rest (under 4 * kN columns): one chain per vector, the last one masked.
      switch ((hi - ow + int64_t(kN) - 1) / int64_t(kN)) {
        case 1: PlaneRun<1>(pp, wp, nt, ow, hi - ow, yrow); break;
        case 2: PlaneRun<2>(pp, wp, nt, ow, hi - ow, yrow); break;
        case 3: PlaneRun<3>(pp, wp, nt, ow, hi - ow, yrow); break;
        case 4: PlaneRun<4>(pp, wp, nt, ow, hi - ow, yrow); break;  // the fourth masked
        default: break;                                             // none left
      }
    } else {
      for (int64_t ow = lo; ow < hi; ++ow) scalar(oh, ow);
    }
    for (int64_t ow = hi; ow < OW; ++ow) scalar(oh, ow);
  }
}

}  // namespace ONEMODEL_NS
}  // namespace onemodel::impl
