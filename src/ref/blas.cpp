// Reference dense linear algebra kernels (see blas.h): plain loops in program order.
#include "ref/blas.h"

#include "ref/elementwise_kernels.h"
#include "ref/math.h"

namespace onemodel::impl {
namespace ref {

void GemmF32(int64_t M, int64_t N, int64_t K, const float* A, int64_t a_rs, int64_t a_cs, const float* B,
             int64_t b_rs, int64_t b_cs, float* C, int64_t ldc) {
  // C's row m holds the row's accumulators: each starts at -0.0 and takes its K
  // products in k order; the n loop only walks B's row k.
  for (int64_t m = 0; m < M; ++m) {
    float* c = C + m * ldc;
    for (int64_t n = 0; n < N; ++n) c[n] = -0.0f;
    for (int64_t k = 0; k < K; ++k) {
      const float a = A[m * a_rs + k * a_cs];
      const float* b = B + k * b_rs;
      for (int64_t n = 0; n < N; ++n) {
        const float p = a * b[n * b_cs];
        c[n] = c[n] + p;
      }
    }
  }
}

void GemmBiasActF32(int64_t M, int64_t N, int64_t K, const float* A, int64_t a_rs, int64_t a_cs, const float* B,
                    int64_t b_rs, int64_t b_cs, float* C, int64_t ldc, const float* row_bias, int32_t act) {
  GemmF32(M, N, K, A, a_rs, a_cs, B, b_rs, b_cs, C, ldc);
  for (int64_t m = 0; m < M; ++m) EpilogueF32(C + m * ldc, N, row_bias ? row_bias + m : nullptr, act);
}

void EpilogueF32(float* c, int64_t n, const float* bias, int32_t act) {
  if (bias) {
    const float b = *bias;
    for (int64_t i = 0; i < n; ++i) c[i] = c[i] + b;
  }
  if (act >= 0) UnaryF32(act, 0.0f, 0.0f, c, c, n);
}

void GemmPackBF32(int64_t K, int64_t N, const float* B, int64_t b_rs, int64_t b_cs, float* packed) {
  for (int64_t k = 0; k < K; ++k)
    for (int64_t n = 0; n < N; ++n) packed[k * N + n] = B[k * b_rs + n * b_cs];
}

void GemmPackedF32(int64_t M, int64_t N, int64_t K, const float* A, int64_t a_rs, int64_t a_cs, const float* packed,
                   int64_t n_begin, int64_t n_end, float* C, int64_t ldc, const float* row_bias, int32_t act) {
  GemmBiasActF32(M, n_end - n_begin, K, A, a_rs, a_cs, packed + n_begin, N, 1, C, ldc, row_bias, act);
}

void GemmI16PairsI32(int64_t M, int64_t N, int64_t K2, const int16_t* A, int64_t lda, const int16_t* Bp, int64_t ldb,
                     int32_t* C, int64_t ldc) {
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) {
      uint32_t acc = 0;  // unsigned: wrapping is defined
      for (int64_t k = 0; k < 2 * K2; ++k)
        acc += uint32_t(int32_t(A[m * lda + k]) * int32_t(Bp[(k / 2) * ldb + 2 * n + k % 2]));
      C[m * ldc + n] = int32_t(acc);
    }
}

void QuantizeF32(const float* x, int64_t n, float scale, int32_t zp, int32_t lo, int32_t hi, uint8_t* y) {
  for (int64_t i = 0; i < n; ++i) {
    const float q = x[i] / scale;
    const float r = math::RoundEven(q);
    // In binary64: an integral value plus a small integer is exact; inf clamps.
    double v = r != r ? double(zp) : double(r) + double(zp);
    v = v < double(lo) ? double(lo) : v > double(hi) ? double(hi) : v;
    y[i] = uint8_t(int32_t(v));
  }
}

void Transpose32(const uint32_t* src, int64_t ss, uint32_t* dst, int64_t ds, int64_t rows, int64_t cols) {
  for (int64_t q = 0; q < cols; ++q)
    for (int64_t j = 0; j < rows; ++j) dst[q * ds + j] = src[j * ss + q];
}

void MulAddStridedF32(float* acc, const float* x, int64_t stride, float w, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const float p = x[i * stride] * w;
    acc[i] = acc[i] + p;
  }
}

void MaxStepStridedF32(float* acc, const float* x, int64_t stride, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const float v = x[i * stride], a = acc[i];
    if (v != v || a != a) { if (a == a) acc[i] = v; }
    else if (v > a) acc[i] = v;
  }
}

void ConvPlaneF32(const float* x, const float* w, float* y, const int64_t* g) {
  const int64_t OH = g[2], OW = g[3];
  for (int64_t oh = 0; oh < OH; ++oh)
    for (int64_t ow = 0; ow < OW; ++ow) y[oh * OW + ow] = ConvPlaneOutputF32(x, w, g, oh, ow);
}

void DepthwiseConvF32(const float* x, const float* w, float* y, int64_t channels, const int64_t* g, const float* bias,
                      int32_t act) {
  const int64_t in_sp = g[0] * g[1], out_sp = g[2] * g[3], k_sp = g[4] * g[5];
  for (int64_t c = 0; c < channels; ++c) {
    float* yc = y + c * out_sp;
    ConvPlaneF32(x + c * in_sp, w + c * k_sp, yc, g);
    EpilogueF32(yc, out_sp, bias ? bias + c : nullptr, act);
  }
}

void ConvDirectF32(const float* x, int64_t in_sp, const float* w, float* y, int64_t Cg, int64_t Mg, const int64_t* g,
                   int64_t oh_begin, int64_t oh_end, const float* bias, int32_t act) {
  const int64_t OH = g[2], OW = g[3], k_sp = g[4] * g[5];
  for (int64_t m = 0; m < Mg; ++m)
    for (int64_t oh = oh_begin; oh < oh_end; ++oh) {
      float* yrow = y + (m * OH + oh) * OW;
      for (int64_t ow = 0; ow < OW; ++ow) yrow[ow] = ConvDirectOutputF32(x, in_sp, w + m * Cg * k_sp, Cg, g, oh, ow);
      EpilogueF32(yrow, OW, bias ? bias + m : nullptr, act);
    }
}

}  // namespace ref
}  // namespace onemodel::impl
