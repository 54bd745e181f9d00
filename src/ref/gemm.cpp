// Reference GEMM kernels (see gemm.h): plain loops in program order.
#include "ref/gemm.h"

#include <cmath>
#include <cstring>

#include "ref/elementwise.h"

namespace onemodel::impl {
namespace ref {

float FusedMulAddF32(float a, float b, float c) {
  const double p = double(a) * double(b);  // exact: 48 significant bits at most
  const double s = p + double(c);
  if (!std::isfinite(s)) return float(s);
  const double v = s - p;  // TwoSum: s + err is p + c exactly
  const double err = (p - (s - v)) + (double(c) - v);
  if (err == 0) return float(s);
  uint64_t bits;
  std::memcpy(&bits, &s, sizeof bits);
  if ((bits & 1) == 0) {
    // One ulp toward the exact value: up in magnitude when the error has s's sign.
    bits = ((err > 0) == (s > 0)) ? bits + 1 : bits - 1;
  }
  double odd;
  std::memcpy(&odd, &bits, sizeof odd);
  return float(odd);
}

namespace {
// One product step of a fold: the exact one (the product rounded, then the sum) or, for
// the fast rows' twins, one fused multiply-add (a single rounding).
template <bool kFma>
inline float FoldStep(float acc, float a, float b) {
  if constexpr (kFma) {
    return FusedMulAddF32(a, b, acc);
  } else {
    const float p = a * b;
    return acc + p;
  }
}

template <bool kFma>
void GemmFold(int64_t M, int64_t N, int64_t K, const float* A, int64_t a_rs, int64_t a_cs, const float* B, int64_t b_rs,
              int64_t b_cs, float* C, int64_t ldc) {
  // C's row m holds the row's accumulators: each starts at -0.0 and takes its K
  // products in k order; the n loop only walks B's row k.
  for (int64_t m = 0; m < M; ++m) {
    float* c = C + m * ldc;
    for (int64_t n = 0; n < N; ++n) c[n] = -0.0f;
    for (int64_t k = 0; k < K; ++k) {
      const float a = A[m * a_rs + k * a_cs];
      const float* b = B + k * b_rs;
      for (int64_t n = 0; n < N; ++n) c[n] = FoldStep<kFma>(c[n], a, b[n * b_cs]);
    }
  }
}

template <bool kFma>
void GemmBiasActFold(int64_t M, int64_t N, int64_t K, const float* A, int64_t a_rs, int64_t a_cs, const float* B,
                     int64_t b_rs, int64_t b_cs, float* C, int64_t ldc, const float* row_bias, Activation act) {
  GemmFold<kFma>(M, N, K, A, a_rs, a_cs, B, b_rs, b_cs, C, ldc);
  for (int64_t m = 0; m < M; ++m) EpilogueF32(C + m * ldc, N, row_bias ? row_bias + m : nullptr, act);
}

template <bool kFma>
void GemmPackedIndirectFold(int64_t M, int64_t N, int64_t K, const float* A, const int64_t* row_off,
                            const int64_t* k_off, const float* packed, int64_t n_begin, int64_t n_end, float* C,
                            int64_t ldc, const float* col_bias, Activation act) {
  for (int64_t m = 0; m < M; ++m) {
    float* c = C + m * ldc;
    for (int64_t n = n_begin; n < n_end; ++n) {
      float acc = -0.0f;
      for (int64_t k = 0; k < K; ++k) acc = FoldStep<kFma>(acc, A[row_off[m] + k_off[k]], packed[k * N + n]);
      if (col_bias) acc = acc + col_bias[n];
      c[n - n_begin] = acc;
    }
    EpilogueF32(c, n_end - n_begin, nullptr, act);
  }
}
}  // namespace

void GemmF32(int64_t M, int64_t N, int64_t K, const float* A, int64_t a_rs, int64_t a_cs, const float* B, int64_t b_rs,
             int64_t b_cs, float* C, int64_t ldc) {
  GemmFold<false>(M, N, K, A, a_rs, a_cs, B, b_rs, b_cs, C, ldc);
}

void GemmBiasActF32(int64_t M, int64_t N, int64_t K, const float* A, int64_t a_rs, int64_t a_cs, const float* B,
                    int64_t b_rs, int64_t b_cs, float* C, int64_t ldc, const float* row_bias, Activation act) {
  GemmBiasActFold<false>(M, N, K, A, a_rs, a_cs, B, b_rs, b_cs, C, ldc, row_bias, act);
}

void EpilogueF32(float* c, int64_t n, const float* bias, Activation act) {
  if (bias) {
    const float b = *bias;
    for (int64_t i = 0; i < n; ++i) c[i] = c[i] + b;
  }
  if (act != Activation::kNone) UnaryF32(int32_t(act), 0.0f, 0.0f, c, c, n);
}

void GemmPackBF32(int64_t K, int64_t N, const float* B, int64_t b_rs, int64_t b_cs, float* packed) {
  for (int64_t k = 0; k < K; ++k)
    for (int64_t n = 0; n < N; ++n) packed[k * N + n] = B[k * b_rs + n * b_cs];
}

void GemmPackedF32(int64_t M, int64_t N, int64_t K, const float* A, int64_t a_rs, int64_t a_cs, const float* packed,
                   int64_t n_begin, int64_t n_end, float* C, int64_t ldc, const float* row_bias, Activation act) {
  GemmBiasActFold<false>(M, n_end - n_begin, K, A, a_rs, a_cs, packed + n_begin, N, 1, C, ldc, row_bias, act);
}

void GemmPackedIndirectF32(int64_t M, int64_t N, int64_t K, const float* A, const int64_t* row_off,
                           const int64_t* k_off, const float* packed, int64_t n_begin, int64_t n_end, float* C,
                           int64_t ldc, const float* col_bias, Activation act) {
  GemmPackedIndirectFold<false>(M, N, K, A, row_off, k_off, packed, n_begin, n_end, C, ldc, col_bias, act);
}

// The fast rows' twins: the same folds with fused steps.
void GemmFmaF32(int64_t M, int64_t N, int64_t K, const float* A, int64_t a_rs, int64_t a_cs, const float* B,
                int64_t b_rs, int64_t b_cs, float* C, int64_t ldc) {
  GemmFold<true>(M, N, K, A, a_rs, a_cs, B, b_rs, b_cs, C, ldc);
}

void GemmBiasActFmaF32(int64_t M, int64_t N, int64_t K, const float* A, int64_t a_rs, int64_t a_cs, const float* B,
                       int64_t b_rs, int64_t b_cs, float* C, int64_t ldc, const float* row_bias, Activation act) {
  GemmBiasActFold<true>(M, N, K, A, a_rs, a_cs, B, b_rs, b_cs, C, ldc, row_bias, act);
}

void GemmPackedFmaF32(int64_t M, int64_t N, int64_t K, const float* A, int64_t a_rs, int64_t a_cs, const float* packed,
                      int64_t n_begin, int64_t n_end, float* C, int64_t ldc, const float* row_bias, Activation act) {
  GemmBiasActFold<true>(M, n_end - n_begin, K, A, a_rs, a_cs, packed + n_begin, N, 1, C, ldc, row_bias, act);
}

void GemmPackedIndirectFmaF32(int64_t M, int64_t N, int64_t K, const float* A, const int64_t* row_off,
                              const int64_t* k_off, const float* packed, int64_t n_begin, int64_t n_end, float* C,
                              int64_t ldc, const float* col_bias, Activation act) {
  GemmPackedIndirectFold<true>(M, N, K, A, row_off, k_off, packed, n_begin, n_end, C, ldc, col_bias, act);
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

void FinishDotSumsI32(uint32_t* c, int64_t ldc, int64_t rows, int64_t w, const uint32_t* row_term, const uint32_t* zb,
                      uint32_t zb0, const uint32_t* zc, const float* mult, const float* bias) {
  for (int64_t r = 0; r < rows; ++r) {
    uint32_t* cr = c + r * ldc;
    for (int64_t j = 0; j < w; ++j) {
      const uint32_t v = cr[j] + row_term[r] * (zb ? zb[j] : zb0) - zc[j];
      if (!mult) {
        cr[j] = v;
        continue;
      }
      float y = float(int32_t(v)) * mult[j];
      if (bias) y = y + bias[j];
      std::memcpy(&cr[j], &y, sizeof y);
    }
  }
}

void GemmU8S8I32(int64_t M, int64_t N, int64_t K4, const uint8_t* A, int64_t lda, const int8_t* Bq, int64_t ldb,
                 int32_t* C, int64_t ldc) {
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) {
      uint32_t acc = 0;  // unsigned: wrapping is defined
      for (int64_t k = 0; k < 4 * K4; ++k)
        acc += uint32_t(int32_t(A[m * lda + k]) * int32_t(Bq[(k / 4) * ldb + 4 * n + k % 4]));
      C[m * ldc + n] = int32_t(acc);
    }
}

void DequantTransposeI32F32(int64_t rows, int64_t M, const int32_t* acc, int64_t lda, const int32_t* sub,
                            const float* scale, const float* bias, int32_t relu, const QdqArgs* qdq, float* y,
                            int64_t ldy) {
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t m = 0; m < M; ++m) {
      float v = float(int32_t(uint32_t(acc[r * lda + m]) - uint32_t(sub[m]))) * scale[m];
      if (bias != nullptr) v = v + bias[m];
      if (relu && !(v > 0.0f) && v == v) v = 0.0f;
      if (qdq != nullptr) QuantDequantF32(&v, 1, qdq->scale, qdq->zp, qdq->lo, qdq->hi, qdq->dq_scale, qdq->dq_zp, &v);
      y[m * ldy + r] = v;
    }
}

void QuantizeTransposeF32U8(const float* x, int64_t ss, int64_t rows, int64_t cols, float scale, int32_t zp, int32_t lo,
                            int32_t hi, uint8_t* y, int64_t ds) {
  for (int64_t j = 0; j < rows; ++j)
    for (int64_t q = 0; q < cols; ++q) QuantizeF32(x + j * ss + q, 1, scale, zp, lo, hi, y + q * ds + j);
}

}  // namespace ref
}  // namespace onemodel::impl
