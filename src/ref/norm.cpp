// The reference normalisations (see norm.h): plain loops in program order.
#include "ref/norm.h"

#include "ref/reduce.h"

namespace onemodel::impl {
namespace ref {
namespace {

float InvStd(float var, float eps) { return 1.0f / __builtin_sqrtf(var + eps); }

}  // namespace

void LayerNormF32(const LayerNormParams& p, const float* x, const float* scale, const int64_t* scale_index,
                  const float* bias, const int64_t* bias_index, float* y, float* mean_out, float* inv_out) {
  const int64_t n = p.n;
  for (int64_t o = 0; o < p.outer; ++o) {
    const float* row = x + o * n;
    float mean = 0.0f, inv;
    if (p.rms) {
      const float ms = SumCanonicalBy<float>(n, [&](int64_t i) { return row[i] * row[i]; }) / float(n);
      inv = InvStd(ms, p.eps);
    } else {
      mean = SumCanonicalBy<float>(n, [&](int64_t i) { return row[i]; }) / float(n);
      const float var = SumCanonicalBy<float>(n,
                                              [&](int64_t i) {
                                                const float d = row[i] - mean;
                                                return d * d;
                                              }) /
                        float(n);
      inv = InvStd(var, p.eps);
    }
    for (int64_t i = 0; i < n; ++i) {
      float v = p.rms ? row[i] * inv : (row[i] - mean) * inv;
      v = v * scale[size_t(scale_index[i])];
      if (bias) v = v + bias[size_t(bias_index[i])];
      y[o * n + i] = v;
    }
    if (mean_out) mean_out[o] = mean;
    if (inv_out) inv_out[o] = inv;
  }
}

void GroupNormF32(const GroupNormParams& p, const float* x, const float* scale, const float* bias, float* y) {
  const int64_t C = p.C, inner = p.inner, cg = C / p.groups, n = cg * inner;
  for (int64_t bn = 0; bn < p.N; ++bn)
    for (int64_t g = 0; g < p.groups; ++g) {
      const float* row = x + (bn * C + g * cg) * inner;
      const float mean = SumCanonicalBy<float>(n, [&](int64_t i) { return row[i]; }) / float(n);
      const float var = SumCanonicalBy<float>(n,
                                              [&](int64_t i) {
                                                const float d = row[i] - mean;
                                                return d * d;
                                              }) /
                        float(n);
      const float inv = InvStd(var, p.eps);
      for (int64_t i = 0; i < n; ++i) {
        const int64_t c = g * cg + i / inner;
        const size_t pi = size_t(p.per_channel ? c : g);
        float v = (row[i] - mean) * inv;
        v = v * scale[pi];
        v = v + bias[pi];
        y[(bn * C + g * cg) * inner + i] = v;
      }
    }
}

void BatchNormF32(const PlaneNormParams& p, const float* x, const float* mean, const float* var, const float* scale,
                  const float* bias, float* y) {
  const int64_t C = p.C, inner = p.inner;
  for (int64_t n = 0; n < p.N; ++n)
    for (int64_t c = 0; c < C; ++c) {
      const float inv = InvStd(var[size_t(c)], p.eps);
      for (int64_t i = 0; i < inner; ++i) {
        const int64_t off = (n * C + c) * inner + i;
        float v = (x[off] - mean[size_t(c)]) * inv;
        v = v * scale[size_t(c)];
        v = v + bias[size_t(c)];
        y[off] = v;
      }
    }
}

}  // namespace ref
}  // namespace onemodel::impl
