// Reference Winograd F(4x4, 3x3) transforms (see winograd.h): plain loops in the order the
// header defines.
#include "ref/winograd.h"

#include <algorithm>
#include <cmath>

#include "ref/gemm.h"

namespace onemodel::impl {
namespace ref {
namespace {

// The 1-D input step on d[0], d[k], ..., d[5k].
inline void InStep(const float* d, int64_t k, float* s, int64_t sk) {
  const float d0 = d[0], d1 = d[k], d2 = d[2 * k], d3 = d[3 * k], d4 = d[4 * k], d5 = d[5 * k];
  const float a = d4 - d2, b = d3 - d1;
  s[0] = (4.0f * d0 - 5.0f * d2) + d4;
  s[sk] = (d3 + d4) - 4.0f * (d1 + d2);
  s[2 * sk] = (d4 - d3) + 4.0f * (d1 - d2);
  s[3 * sk] = a + 2.0f * b;
  s[4 * sk] = a - 2.0f * b;
  s[5 * sk] = (4.0f * d1 - 5.0f * d3) + d5;
}

// The 1-D output step on m[0], m[k], ..., m[5k] into o[0], o[ok], ..., o[3 ok].
inline void OutStep(const float* m, int64_t k, float* o, int64_t ok) {
  const float s12 = m[k] + m[2 * k], s34 = m[3 * k] + m[4 * k], t12 = m[k] - m[2 * k], t34 = m[3 * k] - m[4 * k];
  o[0] = (m[0] + s12) + s34;
  o[ok] = t12 + 2.0f * t34;
  o[2 * ok] = s12 + 4.0f * s34;
  o[3 * ok] = (t12 + 8.0f * t34) + m[5 * k];
}

}  // namespace

bool WinogradF4InputF32(const float* x, int64_t in_sp, const Conv2DGeometry& g, int64_t ty0, int64_t ty1, int64_t c0,
                        int64_t c1, float* v, int64_t v_ld, int64_t v_mat) {
  const int64_t TW = WinogradTileCols(g);
  bool finite = true;
  for (int64_t ty = ty0; ty < ty1; ++ty)
    for (int64_t tx = 0; tx < TW; ++tx)
      for (int64_t c = c0; c < c1; ++c) {
        float d[36], w[36], s[36];
        for (int64_t a = 0; a < 6; ++a)
          for (int64_t b = 0; b < 6; ++b) {
            const int64_t ih = 4 * ty - g.PH + a, iw = 4 * tx - g.PW + b;
            const bool in = ih >= 0 && ih < g.IH && iw >= 0 && iw < g.IW;
            d[a * 6 + b] = in ? x[c * in_sp + ih * g.IW + iw] : 0.0f;
            finite = finite && std::isfinite(d[a * 6 + b]);
          }
        for (int64_t a = 0; a < 6; ++a) InStep(d + a * 6, 1, w + a * 6, 1);  // along each row
        for (int64_t j = 0; j < 6; ++j) InStep(w + j, 6, s + j, 6);          // then each column
        const int64_t t = (ty - ty0) * TW + tx;
        for (int64_t xi = 0; xi < 36; ++xi) v[xi * v_mat + t * v_ld + c] = s[xi];
      }
  return finite;
}

void WinogradF4OutputF32(const float* m, int64_t m_ld, int64_t m_mat, const Conv2DGeometry& g, int64_t ty0, int64_t ty1,
                         int64_t m0, int64_t m1, const float* bias, Activation act, float* y, int64_t out_sp) {
  const int64_t TW = WinogradTileCols(g);
  for (int64_t ty = ty0; ty < ty1; ++ty)
    for (int64_t tx = 0; tx < TW; ++tx)
      for (int64_t oc = m0; oc < m1; ++oc) {
        const int64_t t = (ty - ty0) * TW + tx;
        float mm[36], r[24], o[16];
        for (int64_t xi = 0; xi < 36; ++xi) mm[xi] = m[xi * m_mat + t * m_ld + oc];
        for (int64_t a = 0; a < 6; ++a) OutStep(mm + a * 6, 1, r + a * 4, 1);  // along each row: 6 x 4
        for (int64_t j = 0; j < 4; ++j) OutStep(r + j, 4, o + j, 4);           // then each column: 4 x 4
        for (int64_t i = 0; i < 4; ++i)
          for (int64_t j = 0; j < 4; ++j) {
            const int64_t oh = 4 * ty + i, ow = 4 * tx + j;
            if (oh >= g.OH || ow >= g.OW) continue;
            float val = o[i * 4 + j];
            EpilogueF32(&val, 1, bias ? bias + oc : nullptr, act);
            y[oc * out_sp + oh * g.OW + ow] = val;
          }
      }
}

void WinogradF4Weights(const float* w, int64_t M, int64_t C, int64_t i, float* u) {
  static const double kG[6][3] = {{1.0 / 4, 0, 0},
                                  {-1.0 / 6, -1.0 / 6, -1.0 / 6},
                                  {-1.0 / 6, 1.0 / 6, -1.0 / 6},
                                  {1.0 / 24, 1.0 / 12, 1.0 / 6},
                                  {1.0 / 24, -1.0 / 12, 1.0 / 6},
                                  {0, 0, 1}};
  // Output channels innermost: each of the six matrices is written in order (rows of M).
  for (int64_t c = 0; c < C; ++c)
    for (int64_t mo = 0; mo < M; ++mo) {
      const float* g = w + (mo * C + c) * 9;
      double gg[3];  // row i of G g
      for (int64_t b = 0; b < 3; ++b)
        gg[b] = kG[i][0] * double(g[b]) + kG[i][1] * double(g[3 + b]) + kG[i][2] * double(g[6 + b]);
      for (int64_t j = 0; j < 6; ++j) {
        const double val = gg[0] * kG[j][0] + gg[1] * kG[j][1] + gg[2] * kG[j][2];
        u[j * C * M + c * M + mo] = float(val);
      }
    }
}

}  // namespace ref
}  // namespace onemodel::impl
