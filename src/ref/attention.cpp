// The reference Attention (see attention.h): plain loops in program order.
#include "ref/attention.h"

#include <vector>

#include "ref/math.h"
#include "ref/reduce.h"

namespace onemodel::impl {
namespace ref {

// Per score, the fold over d from -0.0 of the scaled factors, the softcap and the bias, a
// softmax with the reference's guards for fully masked rows (the canonical sum), then the
// fold over j from -0.0 with V.
void AttentionF32(const AttentionParams& p, const float* q, const float* k, const float* v, float* y, float* qk) {
  const int64_t B = p.B, Hq = p.Hq, Sq = p.Sq, Dq = p.Dq, Hk = p.Hk, Skv = p.Skv, Dv = p.Dv, mode = p.mode;
  const float sq = p.sq, softcap = p.softcap;
  const bool has_softcap = p.has_softcap;
  const float ninf = -std::numeric_limits<float>::infinity();
  auto Q = [&](int64_t b, int64_t h, int64_t i, int64_t d) { return q[((b * Hq + h) * Sq + i) * Dq + d]; };
  auto K = [&](int64_t b, int64_t h, int64_t j, int64_t d) { return k[((b * Hk + h) * Skv + j) * Dq + d]; };
  auto V = [&](int64_t b, int64_t h, int64_t j, int64_t d) { return v[((b * Hk + h) * Skv + j) * Dv + d]; };
  std::vector<float> row(static_cast<size_t>(Skv)), e(static_cast<size_t>(Skv));
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < Hq; ++h) {
      const int64_t hk = h / (Hq / Hk);
      for (int64_t i = 0; i < Sq; ++i) {
        float bias_max = ninf;
        for (int64_t j = 0; j < Skv; ++j) {
          float acc = -0.0f;
          for (int64_t d = 0; d < Dq; ++d) acc = acc + (Q(b, h, i, d) * sq) * (K(b, hk, j, d) * sq);
          if (has_softcap && softcap > 0.0f) acc = math::Tanh(acc / softcap) * softcap;
          const float bias = p.BiasAt(b, h, i, j);
          bias_max = bias > bias_max || bias_max != bias_max ? bias : bias_max;
          const float with_bias = acc + bias;
          row[size_t(j)] = with_bias;
          if (qk && mode <= 1) qk[((b * Hq + h) * Sq + i) * Skv + j] = acc;
          if (qk && mode == 2) qk[((b * Hq + h) * Sq + i) * Skv + j] = with_bias;
        }
        // Softmax with the reference's guards for fully masked rows.
        float m = ninf;
        for (int64_t j = 0; j < Skv; ++j) m = row[size_t(j)] > m ? row[size_t(j)] : m;
        const float safe = m == ninf ? 0.0f : m;
        for (int64_t j = 0; j < Skv; ++j) e[size_t(j)] = math::Exp(row[size_t(j)] - safe);
        const float total = SumCanonicalBy<float>(Skv, [&](int64_t j) { return e[size_t(j)]; });
        const float s = total == 0.0f ? 1.0f : total;
        const bool all_masked = bias_max == ninf;
        for (int64_t j = 0; j < Skv; ++j) {
          e[size_t(j)] = all_masked ? 0.0f : e[size_t(j)] / s;
          if (qk && mode == 3) qk[((b * Hq + h) * Sq + i) * Skv + j] = e[size_t(j)];
        }
        for (int64_t d = 0; d < Dv; ++d) {
          float o = -0.0f;
          for (int64_t j = 0; j < Skv; ++j) o = o + e[size_t(j)] * V(b, hk, j, d);
          y[p.OutOffset(b, h, i, d)] = o;
        }
      }
    }
}

}  // namespace ref
}  // namespace onemodel::impl
