// The reference com.microsoft attention core (see ms_attention.h): plain loops in program
// order.
#include "ref/ms_attention.h"

#include <limits>
#include <vector>

#include "ref/math.h"
#include "ref/reduce.h"

namespace onemodel::impl {
namespace ref {

void MsAttentionF32(const MsAttentionParams& p, const float* q, const float* k, const float* v, float* y, float* qk) {
  const int64_t B = p.B, N = p.N, S = p.S, H = p.H, Nkv = p.Nkv, T = p.T, Hv = p.Hv, group = N / Nkv;
  std::vector<float> x(static_cast<size_t>(T)), e(static_cast<size_t>(T));
  for (int64_t b = 0; b < B; ++b)
    for (int64_t n = 0; n < N; ++n) {
      const int64_t kvh = n / group;
      const float* kb = k + (b * Nkv + kvh) * T * H;
      const float* vb = v + (b * Nkv + kvh) * T * Hv;
      const int64_t len = p.KvLen(b);
      for (int64_t s = 0; s < S; ++s) {
        const float* qs = q + ((b * N + n) * S + s) * H;
        int64_t lo = 0, hi = 0;
        p.Window(b, s, lo, hi);
        for (int64_t t = lo; t < hi; ++t) {
          float acc = -0.0f;
          for (int64_t d = 0; d < H; ++d) acc = acc + qs[d] * kb[t * H + d];
          float xt = acc * p.scale;
          if (p.softcap > 0.0f) xt = math::Tanh(xt / p.softcap) * p.softcap;
          x[size_t(t)] = p.AddTerms(xt, b, n, s, t);
        }
        float m = -std::numeric_limits<float>::infinity();
        for (int64_t t = lo; t < hi; ++t) m = x[size_t(t)] > m ? x[size_t(t)] : m;
        const float sink = p.smooth ? (p.sink ? p.sink[n] : 0.0f) : 0.0f;
        if (p.smooth) m = sink > m ? sink : m;
        for (int64_t t = lo; t < hi; ++t) e[size_t(t)] = math::Exp(x[size_t(t)] - m);
        float total = SumCanonicalBy<float>(hi - lo, [&](int64_t i) { return e[size_t(lo + i)]; });
        if (p.smooth) total = total + math::Exp(sink - m);
        for (int64_t t = 0; t < len; ++t) e[size_t(t)] = t >= lo && t < hi ? e[size_t(t)] / total : 0.0f;
        if (qk) {
          float* row = qk + ((b * N + n) * S + s) * p.qk_t;
          for (int64_t t = 0; t < p.qk_t; ++t)
            row[t] = t >= lo && t < hi ? (p.qk_mode == 1 ? x[size_t(t)] : e[size_t(t)]) : 0.0f;
        }
        float* ys = y + (b * S + s) * N * Hv + n * Hv;
        for (int64_t d = 0; d < Hv; ++d) {
          float o = -0.0f;
          for (int64_t t = 0; t < len; ++t) o = o + e[size_t(t)] * vb[t * Hv + d];
          ys[d] = o;
        }
      }
    }
}

void ProjectF32(int64_t M, int64_t Din, int64_t C, const float* x, const float* w, const float* bias, float* out) {
  for (int64_t m = 0; m < M; ++m)
    for (int64_t c = 0; c < C; ++c) {
      float acc = -0.0f;
      for (int64_t i = 0; i < Din; ++i) acc = acc + x[m * Din + i] * w[i * C + c];
      out[m * C + c] = bias ? acc + bias[c] : acc;
    }
}

}  // namespace ref
}  // namespace onemodel::impl
