// The reference pooling operators (see pool.h): plain loops in program order.
#include "ref/pool.h"

#include <limits>

#include "core/index.h"
#include "ref/math.h"

namespace onemodel::impl {
namespace ref {

void PoolF32(const PoolParams& p, int64_t NC, const float* x, float* y, int64_t* idx) {
  const ConvGeometry& g = p.g;
  const PoolKind kind = p.kind;
  const bool include_pad = p.include_pad, col_major = p.col_major;
  const float pw = p.p;
  const int64_t in_sp = p.in_sp, out_sp = p.out_sp;
  const std::vector<int64_t>& in_st = p.in_st;
  const std::vector<int64_t>& col_st = p.col_st;
  for (int64_t nc = 0; nc < NC; ++nc) {
    const float* xc = x + nc * in_sp;
    ForEachIndex(g.out, [&](int64_t o, const std::vector<int64_t>& op) {
      float acc = kind == PoolKind::kMax ? -std::numeric_limits<float>::infinity() : -0.0f;
      int64_t count = 0, best = -1, best_col = -1;
      ForEachIndex(g.kernel, [&](int64_t, const std::vector<int64_t>& kp) {
        int64_t off = 0, coff = 0;
        bool pad = false, beyond = false;
        for (int64_t d = 0; d < g.dims; ++d) {
          const size_t i = size_t(d);
          const int64_t q = op[i] * g.stride[i] - g.pad_b[i] + kp[i] * g.dil[i];
          if (q < 0 || q >= g.in[i]) {
            pad = true;
            if (q >= g.in[i] + g.pad_e[i] || q < -g.pad_b[i]) beyond = true;
          }
          off += q * in_st[i];
          coff += q * col_st[i];
        }
        if (pad) {
          if (kind == PoolKind::kAverage && include_pad && !beyond) ++count;
          return;
        }
        const float v = xc[off];
        ++count;
        if (kind == PoolKind::kMax) {
          if (v != v || acc != acc) {
            if (acc == acc) {
              acc = v;
              best = off;
              best_col = coff;
            }
          } else if (v > acc) {
            acc = v;
            best = off;
            best_col = coff;
          }
        } else if (kind == PoolKind::kAverage) {
          acc = acc + v;
        } else {
          const float a = v < 0 ? -v : v;
          acc = acc + (pw == 2.0f ? a * a : pw == 1.0f ? a : math::Pow(a, pw));
        }
      });
      float r = acc;
      if (kind == PoolKind::kAverage) r = count ? acc / float(count) : std::numeric_limits<float>::quiet_NaN();
      if (kind == PoolKind::kLp) r = pw == 2.0f ? __builtin_sqrtf(acc) : pw == 1.0f ? acc : math::Pow(acc, 1.0f / pw);
      y[nc * out_sp + o] = r;
      if (idx) idx[nc * out_sp + o] = nc * in_sp + (col_major ? best_col : best);
    });
  }
}

}  // namespace ref
}  // namespace onemodel::impl
