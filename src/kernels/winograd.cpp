// Per-target Winograd F(4x4, 3x3) transforms (contracts and operation order in
// ref/winograd.h), written once on the vector vocabulary: lanes are channels. Input
// rows are interleaved channel-minor (as DepthwiseConvF32 does), each lane then repeats the
// reference's steps, and the results are de-interleaved into the output planes: the
// reference's bits on every target.
#include <algorithm>
#include <cstring>
#include <vector>

#include "kernels/kernels.h"
#include "ref/winograd.h"
#include "simd/simd.h"
#include "kernels/transpose.h"
#include "kernels/activation_v.h"
#include "core/per_thread.h"
#include "core/scratch.h"

namespace onemodel::impl {
namespace ONEMODEL_NS {
namespace {
constexpr int64_t kL = int64_t(Lanes<VF32>());

// ref/winograd.cpp's InStep on vectors.
inline void InStepV(const VF32* d, int64_t k, VF32* s, int64_t sk) {
  const VF32 two = Set<VF32>(2.0f), four = Set<VF32>(4.0f), five = Set<VF32>(5.0f);
  const VF32 d0 = d[0], d1 = d[k], d2 = d[2 * k], d3 = d[3 * k], d4 = d[4 * k], d5 = d[5 * k];
  const VF32 a = Sub(d4, d2), b = Sub(d3, d1);
  s[0] = Add(Sub(Mul(four, d0), Mul(five, d2)), d4);
  s[sk] = Sub(Add(d3, d4), Mul(four, Add(d1, d2)));
  s[2 * sk] = Add(Sub(d4, d3), Mul(four, Sub(d1, d2)));
  s[3 * sk] = Add(a, Mul(two, b));
  s[4 * sk] = Sub(a, Mul(two, b));
  s[5 * sk] = Add(Sub(Mul(four, d1), Mul(five, d3)), d5);
}

// ref/winograd.cpp's OutStep on vectors.
inline void OutStepV(const VF32* m, int64_t k, VF32* o, int64_t ok) {
  const VF32 two = Set<VF32>(2.0f), four = Set<VF32>(4.0f), eight = Set<VF32>(8.0f);
  const VF32 s12 = Add(m[k], m[2 * k]), s34 = Add(m[3 * k], m[4 * k]), t12 = Sub(m[k], m[2 * k]),
             t34 = Sub(m[3 * k], m[4 * k]);
  o[0] = Add(Add(m[0], s12), s34);
  o[ok] = Add(t12, Mul(two, t34));
  o[2 * ok] = Add(s12, Mul(four, s34));
  o[3 * ok] = Add(Add(t12, Mul(eight, t34)), m[5 * k]);
}
}  // namespace

bool WinogradF4InputF32(const float* x, int64_t in_sp, const Conv2DGeometry& g, int64_t ty0, int64_t ty1, int64_t c0,
                        int64_t c1, float* v, int64_t v_ld, int64_t v_mat) {
  const int64_t TW = ref::WinogradTileCols(g), XW = 4 * TW + 2;
  auto& buf = ONEMODEL_PER_THREAD(ScratchVector<float>);
  if (buf.size() < size_t(6 * XW * kL)) buf.resize(size_t(6 * XW * kL));
  float* xt = buf.data();
  const VF32 zero = Zero<VF32>();
  VF32 ok = Eq(zero, zero);
  // Input columns [0, iw_end) land in xt's columns [PW, PW + iw_end); the rest are zeros.
  const int64_t iw_end = std::clamp<int64_t>(XW - g.PW, 0, g.IW), col_lo = std::min(XW, g.PW), col_hi = g.PW + iw_end;
  for (int64_t c = c0; c < c1; c += kL) {
    const int64_t nc = std::min(kL, c1 - c);
    for (int64_t ty = ty0; ty < ty1; ++ty) {
      for (int64_t a = 0; a < 6; ++a) {
        float* row = xt + a * XW * kL;
        const int64_t ih = 4 * ty - g.PH + a;
        if (ih < 0 || ih >= g.IH || nc < kL) {
          std::fill(row, row + XW * kL, 0.0f);
          if (ih < 0 || ih >= g.IH) continue;
        } else {
          std::fill(row, row + col_lo * kL, 0.0f);
          std::fill(row + col_hi * kL, row + XW * kL, 0.0f);
        }
        for (int64_t p = 0; p < iw_end; p += kL)
          TransposeTile<kL>(x + c * in_sp + ih * g.IW + p, in_sp, row + (g.PW + p) * kL, kL, nc,
                            std::min(kL, iw_end - p));
        for (int64_t q = col_lo; q < col_hi; ++q) {
          const VF32 e = Load<VF32>(row + q * kL);
          ok = And(ok, Eq(Sub(e, e), zero));  // inf - inf and NaN - NaN are NaN
        }
      }
      for (int64_t tx = 0; tx < TW; ++tx) {
        VF32 d[36], w[36], s[36];
        for (int64_t a = 0; a < 6; ++a)
          for (int64_t b = 0; b < 6; ++b) d[a * 6 + b] = Load<VF32>(xt + (a * XW + 4 * tx + b) * kL);
        for (int64_t a = 0; a < 6; ++a) InStepV(d + a * 6, 1, w + a * 6, 1);
        for (int64_t j = 0; j < 6; ++j) InStepV(w + j, 6, s + j, 6);
        float* dst = v + ((ty - ty0) * TW + tx) * v_ld + c;
        if (nc == kL)
          for (int64_t xi = 0; xi < 36; ++xi) Store(s[xi], dst + xi * v_mat);
        else
          for (int64_t xi = 0; xi < 36; ++xi) StoreN(s[xi], dst + xi * v_mat, size_t(nc));
      }
    }
  }
  return AllTrue(ok);
}

void WinogradF4OutputF32(const float* m, int64_t m_ld, int64_t m_mat, const Conv2DGeometry& g, int64_t ty0, int64_t ty1,
                         int64_t m0, int64_t m1, const float* bias, Activation act, float* y, int64_t out_sp) {
  const int64_t TW = ref::WinogradTileCols(g), YW = 4 * TW;
  auto& buf = ONEMODEL_PER_THREAD(ScratchVector<float>);
  if (buf.size() < size_t(4 * YW * kL)) buf.resize(size_t(4 * YW * kL));
  float* yt = buf.data();
  for (int64_t oc = m0; oc < m1; oc += kL) {
    const int64_t nm = std::min(kL, m1 - oc);
    const VF32 bv = bias ? LoadN<VF32>(bias + oc, size_t(nm), 0.0f) : Zero<VF32>();
    for (int64_t ty = ty0; ty < ty1; ++ty) {
      for (int64_t tx = 0; tx < TW; ++tx) {
        const float* src = m + ((ty - ty0) * TW + tx) * m_ld + oc;
        VF32 mm[36], r[24], o[16];
        for (int64_t xi = 0; xi < 36; ++xi)
          mm[xi] = nm == kL ? Load<VF32>(src + xi * m_mat) : LoadN<VF32>(src + xi * m_mat, size_t(nm), 0.0f);
        for (int64_t a = 0; a < 6; ++a) OutStepV(mm + a * 6, 1, r + a * 4, 1);
        for (int64_t j = 0; j < 4; ++j) OutStepV(r + j, 4, o + j, 4);
        for (int64_t i = 0; i < 4; ++i)
          for (int64_t j = 0; j < 4; ++j) {
            VF32 e = o[i * 4 + j];
            if (bias) e = Add(e, bv);
            Store(ActivationV(act, e), yt + (i * YW + 4 * tx + j) * kL);
          }
      }
      for (int64_t i = 0; i < 4 && 4 * ty + i < g.OH; ++i)
        for (int64_t p = 0; p < g.OW; p += kL)
          TransposeTile<kL>(yt + (i * YW + p) * kL, kL, y + oc * out_sp + (4 * ty + i) * g.OW + p, out_sp,
                            std::min(kL, g.OW - p), nm);
    }
  }
}

}  // namespace ONEMODEL_NS
}  // namespace onemodel::impl
