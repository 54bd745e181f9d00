// Reference (oracle) GEMM kernels of the dispatch table: they define the bits; the
// per-target kernels in src/kernels/gemm.cpp equal them bit for bit.
#pragma once

#include <cstddef>
#include <cstdint>
#include <algorithm>
#include <type_traits>
#include <vector>

#include "core/compute.h"
#include "ref/elementwise.h"

namespace onemodel::impl {
namespace ref {

// C[m * ldc + n] = the fold over k = 0, 1, ..., K-1 of A(m, k) * B(k, n), for m < M and
// n < N, where A(m, k) = A[m * a_rs + k * a_cs] and B(k, n) = B[k * b_rs + n * b_cs].
// Each element has one accumulator that starts at -0.0 and adds each rounded product
// in k order: acc = acc + (a * b), never fused (exact-contract section 3). Writes C
// (no read of its old contents). M, N or K may be 0 (K = 0 writes -0.0).
void GemmF32(int64_t M, int64_t N, int64_t K, const float* A, int64_t a_rs, int64_t a_cs, const float* B, int64_t b_rs,
             int64_t b_cs, float* C, int64_t ldc);

// GemmF32, then on each finished row m (the full sums): c = c + row_bias[m] when
// row_bias is not null, then the activation `act` (a UnaryF32 op without parameters:
// Activation::kRelu or kHardSwish) -- the bias after the full sum and the
// activation after the bias, as the unfused nodes compute them (exact-contract
// section 7). Vector kernels apply it to a register tile before it is stored.
void GemmBiasActF32(int64_t M, int64_t N, int64_t K, const float* A, int64_t a_rs, int64_t a_cs, const float* B,
                    int64_t b_rs, int64_t b_cs, float* C, int64_t ldc, const float* row_bias, Activation act);

// The reference epilogue on n finished sums: c = c + *bias (bias not null), then the
// activation act. GemmBiasActF32 and DepthwiseConvF32 apply it per row/plane.
void EpilogueF32(float* c, int64_t n, const float* bias, Activation act);

// A constant B (K x N, B(k, n) = B[k * b_rs + n * b_cs]) laid out once for repeated
// products: `packed` holds at most K * roundup(N, 64) floats, in a layout of the kernel
// table's own (the reference's: row-major K x N). Layout only, no arithmetic.
void GemmPackBF32(int64_t K, int64_t N, const float* B, int64_t b_rs, int64_t b_cs, float* packed);
inline int64_t GemmPackedFloats(int64_t K, int64_t N) { return K * ((N + 63) / 64 * 64); }

// GemmBiasActF32 for columns [n_begin, n_end) of A times the B that GemmPackBF32 packed
// (N its columns; n_begin a multiple of 64): C (pointing at column n_begin) receives
// those columns; each output folds k in order from -0.0, then the epilogue.
void GemmPackedF32(int64_t M, int64_t N, int64_t K, const float* A, int64_t a_rs, int64_t a_cs, const float* packed,
                   int64_t n_begin, int64_t n_end, float* C, int64_t ldc, const float* row_bias, Activation act);

// GemmPackedF32's product with A read through offsets: A(m, k) = A[row_off[m] +
// k_off[k]] (a convolution's input in place: row_off[m] the m-th output position's first
// tap, k_off[k] the k-th term's distance from it; im2col without the copy). Each output
// folds k in order from -0.0, then the epilogue per column: + col_bias[n] (col_bias: N
// values, or null), then the activation act.
void GemmPackedIndirectF32(int64_t M, int64_t N, int64_t K, const float* A, const int64_t* row_off,
                           const int64_t* k_off, const float* packed, int64_t n_begin, int64_t n_end, float* C,
                           int64_t ldc, const float* col_bias, Activation act);

// a * b + c with a single rounding to float (IEEE 754 fusedMultiplyAdd), without the C
// library's fmaf: mingw-w64's is not correctly rounded. The product is exact in double
// (24 + 24 bits), the sum is rounded to odd in double (its error by TwoSum; an inexact sum
// with an even last bit moves one ulp toward the exact value), and a value rounded to odd
// with 53 >= 24 + 2 bits rounds to float as the exact value would, subnormal results
// included (Boldo and Melquiond, "When double rounding is odd"). NaN and infinity as
// fmaf gives them. Needs round-to-nearest (exact sections run under FpEnvGuard).
float FusedMulAddF32(float a, float b, float c);

// Fast mode's twins of the four GEMM kernels above (the fast rows "gemm-fma",
// "im2col-gemm-fma", "tap-gemm-fma"; exact sessions never call them): the same
// contracts, except that each step of the fold is one fused multiply-add, acc =
// fma(a, b, acc) (a single rounding), still k in order from -0.0; the bias and the
// activation as above. The packed B is GemmPackBF32's. Every target with a hardware
// FMA gives these bits; the others run these loops (KernelTable::fma_f32 false).
void GemmFmaF32(int64_t M, int64_t N, int64_t K, const float* A, int64_t a_rs, int64_t a_cs, const float* B,
                int64_t b_rs, int64_t b_cs, float* C, int64_t ldc);
void GemmBiasActFmaF32(int64_t M, int64_t N, int64_t K, const float* A, int64_t a_rs, int64_t a_cs, const float* B,
                       int64_t b_rs, int64_t b_cs, float* C, int64_t ldc, const float* row_bias, Activation act);
void GemmPackedFmaF32(int64_t M, int64_t N, int64_t K, const float* A, int64_t a_rs, int64_t a_cs, const float* packed,
                      int64_t n_begin, int64_t n_end, float* C, int64_t ldc, const float* row_bias, Activation act);
void GemmPackedIndirectFmaF32(int64_t M, int64_t N, int64_t K, const float* A, const int64_t* row_off,
                              const int64_t* k_off, const float* packed, int64_t n_begin, int64_t n_end, float* C,
                              int64_t ldc, const float* col_bias, Activation act);

// Integer products with exact int32 sums (the integer operators' arithmetic, wrapping
// modulo 2^32, so the order of the terms cannot matter): C[m * ldc + n] = the sum over
// k < 2 * K2 of A(m, k) * B(k, n), where A(m, k) = A[m * lda + k] (2 * K2 values per row)
// and B is stored in pairs of k: B(k, n) = Bp[(k / 2) * ldb + 2 * n + k % 2] (ldb >= 2N).
// Operands are int16 (8-bit values minus their zero points); an odd K is padded with a
// zero column of A and a zero row of B. Writes C (no read of its old contents).
void GemmI16PairsI32(int64_t M, int64_t N, int64_t K2, const int16_t* A, int64_t lda, const int16_t* Bp, int64_t ldb,
                     int32_t* C, int64_t ldc);

// Raw 8-bit products with exact int32 sums (wrapping modulo 2^32): C[m * ldc + n] = the
// sum over k < 4 * K4 of A(m, k) * B(k, n), A unsigned and B signed, where A(m, k) =
// A[m * lda + k] (4 * K4 values per row) and B is stored in quads of k: B(k, n) =
// Bq[(k / 4) * ldb + 4 * n + k % 4] (ldb >= 4N). The operators reduce any zero points
// and signedness to this form (ops/quant/quant.cpp); a K that is not a multiple of 4 is
// padded with zero columns of A. Writes C (no read of its old contents).
void GemmU8S8I32(int64_t M, int64_t N, int64_t K4, const uint8_t* A, int64_t lda, const int8_t* Bq, int64_t ldb,
                 int32_t* C, int64_t ldc);

// The zero points' terms of GemmU8S8I32's raw sums, and optionally their conversion to
// float, in place: for each of `rows` rows (row r at c + r * ldc) and w columns j, v =
// c + row_term[r] * zb[j] - zc[j] modulo 2^32 (zb null: zb0 for every column); then, with
// mult, the float float(int32(v)) * mult[j] (+ bias[j] when bias is not null: each step
// one correctly rounded binary32 op, C++'s conversion rounding to nearest even), its bits
// stored in v's place; else v. (ops/quant/quant.cpp: IntMatMulDot's blocks, and
// onemodel.DynamicQuantMatMul's Cast, Mul and Add.)
void FinishDotSumsI32(uint32_t* c, int64_t ldc, int64_t rows, int64_t w, const uint32_t* row_term, const uint32_t* zb,
                      uint32_t zb0, const uint32_t* zc, const float* mult, const float* bias);

// A quantisation then dequantisation of each result (ref::QuantDequantF32's parameters).
struct QdqArgs {
  float scale = 0;
  int32_t zp = 0, lo = 0, hi = 0;
  float dq_scale = 0;
  int32_t dq_zp = 0;
};

// The epilogue of fast mode's integer convolution (ops/conv/conv_int8.cpp): `rows` rows of
// M int32 sums (row r at acc + r * lda) become floats stored transposed, y[m * ldy + r] =
// v with v = float(acc - sub[m]) * scale[m] (+ bias[m] when bias is not null), each step
// one correctly rounded binary32 op (the int32 difference wraps); then with relu v where
// v > 0 or v is NaN, else +0; then with qdq, QuantDequantF32 of v.
void DequantTransposeI32F32(int64_t rows, int64_t M, const int32_t* acc, int64_t lda, const int32_t* sub,
                            const float* scale, const float* bias, int32_t relu, const QdqArgs* qdq, float* y,
                            int64_t ldy);

// Quantisation with a transpose (the integer convolution's NHWC input bytes):
// y[q * ds + j] = the byte QuantizeF32 makes of x[j * ss + q], for j < rows, q < cols.
void QuantizeTransposeF32U8(const float* x, int64_t ss, int64_t rows, int64_t cols, float scale, int32_t zp, int32_t lo,
                            int32_t hi, uint8_t* y, int64_t ds);

// --- The operators' definitions (ONNX Operators.md MatMul and Gemm, exact-contract
// section 3), for every numeric element type T: each output has one accumulator that
// starts at -0.0 (integers: 0) and adds each rounded product in k order (never fused;
// integers wrap modulo 2^bits); narrow floats compute in f32 (Compute<T>) and round once.

// One accumulator step: acc + a * b, the product rounded first (integers wrapping).
template <class C>
C MulAddStep(C acc, C a, C b) {
  if constexpr (std::is_floating_point_v<C>) {
    const C p = a * b;
    return acc + p;
  } else {
    using U = std::make_unsigned_t<C>;
    return C(U(U(acc) + U(U(a) * U(b))));
  }
}
template <class C>
C FoldStart() {
  if constexpr (std::is_floating_point_v<C>)
    return C(-0.0);
  else
    return C(0);
}

// MatMul: out[b] (M x N, row-major, b < batches) = the product of A's batch ia[b] (M x K)
// and B's batch ib[b] (K x N), the batches broadcast by the caller into ia and ib. A row
// of accumulators at a time (each output still folds k in order; the n loop walks B's
// rows contiguously).
template <class T>
void MatMul(int64_t batches, const int64_t* ia, const int64_t* ib, int64_t M, int64_t N, int64_t K, const T* pa,
            const T* pb, T* po) {
  using C = typename Compute<T>::type;
  std::vector<C> acc(static_cast<size_t>(N));
  for (int64_t bi = 0; bi < batches; ++bi) {
    const T* A = pa + ia[bi] * M * K;
    const T* B = pb + ib[bi] * K * N;
    T* O = po + bi * M * N;
    for (int64_t m = 0; m < M; ++m) {
      std::fill(acc.begin(), acc.end(), FoldStart<C>());
      for (int64_t k = 0; k < K; ++k) {
        const C x = Widen(A[m * K + k]);
        const T* brow = B + k * N;
        for (int64_t n = 0; n < N; ++n) acc[size_t(n)] = MulAddStep<C>(acc[size_t(n)], x, Widen(brow[n]));
      }
      for (int64_t n = 0; n < N; ++n) O[m * N + n] = Narrow<T>(acc[size_t(n)]);
    }
  }
}

// Gemm's parameters: Y (M x N) = alpha * (A' B') + beta * C, A' = A (M x K) or, ta, A^T
// stored K x M; B' = B (K x N) or, tb, B^T stored N x K; C (has_c) read at m * c_sm +
// n * c_sn (its broadcast to M x N).
struct GemmParams {
  int64_t M = 0, N = 0, K = 0, c_sm = 0, c_sn = 0;
  bool ta = false, tb = false, has_c = false;
  float alpha = 1.0f, beta = 1.0f;
};

// Gemm: the full sum first, then alpha * sum, then + beta * C (floats: each step rounded;
// integers: alpha and beta as integers, wrapping). A row of accumulators at a time, as
// MatMul.
template <class T>
void Gemm(const GemmParams& p, const T* pa, const T* pb, const T* pc, T* po) {
  using C = typename Compute<T>::type;
  using U = std::make_unsigned_t<std::conditional_t<std::is_floating_point_v<C>, int32_t, C>>;
  std::vector<C> acc(static_cast<size_t>(p.N));
  for (int64_t m = 0; m < p.M; ++m) {
    std::fill(acc.begin(), acc.end(), FoldStart<C>());
    for (int64_t k = 0; k < p.K; ++k) {
      const C x = Widen(p.ta ? pa[k * p.M + m] : pa[m * p.K + k]);
      for (int64_t n = 0; n < p.N; ++n) {
        const C y = Widen(p.tb ? pb[n * p.K + k] : pb[k * p.N + n]);
        acc[size_t(n)] = MulAddStep<C>(acc[size_t(n)], x, y);
      }
    }
    for (int64_t n = 0; n < p.N; ++n) {
      C r;
      if constexpr (std::is_floating_point_v<C>)
        r = C(p.alpha) * acc[size_t(n)];
      else
        r = C(U(C(p.alpha)) * U(acc[size_t(n)]));
      if (p.has_c) {
        const C cv = Widen(pc[m * p.c_sm + n * p.c_sn]);
        if constexpr (std::is_floating_point_v<C>)
          r = r + C(p.beta) * cv;
        else
          r = C(U(r) + U(C(p.beta)) * U(cv));
      }
      po[m * p.N + n] = Narrow<T>(r);
    }
  }
}

}  // namespace ref
}  // namespace onemodel::impl
