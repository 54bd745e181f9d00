// The reference MatMulNBits (ref/nbits.h): plain loops in program order, one weight at a
// time from its code, scale and zero point.
#include "ref/nbits.h"

namespace onemodel::impl {
namespace ref {

uint32_t NBitsCode(const NBitsParams& p, const uint8_t* B, int64_t n, int64_t k) {
  const int64_t per_byte = 8 / p.bits;
  const int64_t j = k % p.block_size;
  const uint8_t byte = B[n * p.blocks * p.blob + (k / p.block_size) * p.blob + j / per_byte];
  const uint32_t mask = (1u << p.bits) - 1u;
  return (uint32_t(byte) >> ((j % per_byte) * p.bits)) & mask;
}

float NBitsWeight(const NBitsParams& p, const uint8_t* B, const NBitsQuant& q, int64_t n, int64_t k) {
  const int64_t g = q.g_idx ? int64_t(q.g_idx[k]) : k / p.block_size;
  const float scale = q.scales[n * p.blocks + g];
  const int32_t code = int32_t(NBitsCode(p, B, n, k));
  if (q.zp_f32) return (float(code) - q.zp_f32[n * p.blocks + g]) * scale;
  int32_t zp = int32_t(1) << (p.bits - 1);
  if (q.zp_u8) {
    const int64_t per_byte = 8 / p.bits;
    const uint8_t byte = q.zp_u8[n * p.zp_row_bytes + g / per_byte];
    zp = int32_t((uint32_t(byte) >> ((g % per_byte) * p.bits)) & ((1u << p.bits) - 1u));
  }
  return float(code - zp) * scale;
}

void MatMulNBitsF32(const NBitsParams& p, const float* A, const uint8_t* B, const NBitsQuant& q, const float* bias,
                    float* Y) {
  for (int64_t m = 0; m < p.M; ++m)
    for (int64_t n = 0; n < p.N; ++n) {
      float acc = -0.0f;
      for (int64_t k = 0; k < p.K; ++k) acc = acc + A[m * p.K + k] * NBitsWeight(p, B, q, n, k);
      Y[m * p.N + n] = bias ? acc + bias[n] : acc;
    }
}

void NBitsGemmF32(const float* a, int64_t lda, int64_t rows, int64_t K, int64_t block, const uint8_t* codes,
                  int64_t code_bits, const float* params, int64_t g0, int64_t g1, float* y, int64_t ldy) {
  const int64_t blocks = (K + block - 1) / block;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t g = g0; g < g1; ++g)
      for (int64_t j = 0; j < kNBitsCols; ++j) {
        float acc = -0.0f;
        for (int64_t k = 0; k < K; ++k) {
          const float* pr = params + (g * blocks + k / block) * 2 * kNBitsCols;
          const float w = (float(NBitsLayoutCode(codes, code_bits, K, g, k, j)) - pr[kNBitsCols + j]) * pr[j];
          acc = acc + a[r * lda + k] * w;
        }
        y[r * ldy + g * kNBitsCols + j] = acc;
      }
}

}  // namespace ref
}  // namespace onemodel::impl
