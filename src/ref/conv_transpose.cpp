// The reference ConvTranspose (ref/conv_transpose.h).
#include "ref/conv_transpose.h"

#include "core/index.h"

namespace onemodel::impl {
namespace ref {

void ConvTransposeF32(const ConvTransposeGeometry& g, const float* x, const float* w, const float* bias, float* y) {
  for (int64_t n = 0; n < g.N; ++n)
    for (int64_t m = 0; m < g.M; ++m) {
      const int64_t grp = m / g.Mg, ml = m % g.Mg;
      ForEachIndex(g.out, [&](int64_t o, const std::vector<int64_t>& op) {
        float acc = -0.0f;
        for (int64_t c = 0; c < g.Cg; ++c) {
          const int64_t ci = grp * g.Cg + c;
          const float* xc = x + (n * g.C + ci) * g.in_sp;
          const float* wc = w + (ci * g.Mg + ml) * g.k_sp;
          ForEachIndex(g.kernel, [&](int64_t k, const std::vector<int64_t>& kp) {
            int64_t off = 0;
            for (int64_t d = 0; d < g.D; ++d) {
              const size_t i = size_t(d);
              const int64_t t = op[i] + g.pb[i] - kp[i] * g.dil[i];
              if (t < 0 || t % g.stride[i]) return;
              const int64_t p = t / g.stride[i];
              if (p >= g.in[i]) return;
              off += p * g.in_st[i];
            }
            acc = acc + xc[off] * wc[k];
          });
        }
        if (bias) acc = acc + bias[size_t(m)];
        y[(n * g.M + m) * g.out_sp + o] = acc;
      });
    }
}

}  // namespace ref
}  // namespace onemodel::impl
