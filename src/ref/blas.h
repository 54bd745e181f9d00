// Reference (oracle) kernels of the dispatch table's dense linear algebra. They define
// the bits; the per-target kernels in src/kernels/ equal them bit for bit.
#pragma once

#include <cstddef>
#include <cstdint>

namespace onemodel::impl {
namespace ref {

// C[m * ldc + n] = the fold over k = 0, 1, ..., K-1 of A(m, k) * B(k, n), for m < M and
// n < N, where A(m, k) = A[m * a_rs + k * a_cs] and B(k, n) = B[k * b_rs + n * b_cs].
// Each element has one accumulator that starts at -0.0 and adds each rounded product
// in k order: acc = acc + (a * b), never fused (exact-contract section 3). Writes C
// (no read of its old contents). M, N or K may be 0 (K = 0 writes -0.0).
void GemmF32(int64_t M, int64_t N, int64_t K, const float* A, int64_t a_rs, int64_t a_cs, const float* B,
             int64_t b_rs, int64_t b_cs, float* C, int64_t ldc);

// GemmF32, then on each finished row m (the full sums): c = c + row_bias[m] when
// row_bias is not null, then the activation `act` (a UnaryF32 op without parameters:
// kUnReluF32 or kUnHardSwishF32; -1: none) -- the bias after the full sum and the
// activation after the bias, as the unfused nodes compute them (exact-contract
// section 7). Vector kernels apply it to a register tile before it is stored.
void GemmBiasActF32(int64_t M, int64_t N, int64_t K, const float* A, int64_t a_rs, int64_t a_cs, const float* B,
                    int64_t b_rs, int64_t b_cs, float* C, int64_t ldc, const float* row_bias, int32_t act);

// The reference epilogue on n finished sums: c = c + *bias (bias not null), then the
// activation act (-1: none). GemmBiasActF32 and DepthwiseConvF32 apply it per row/plane.
void EpilogueF32(float* c, int64_t n, const float* bias, int32_t act);

// A constant B (K x N, B(k, n) = B[k * b_rs + n * b_cs]) laid out once for repeated
// products: `packed` holds at most K * roundup(N, 64) floats, in a layout of the kernel
// table's own (the reference's: row-major K x N). Layout only, no arithmetic.
void GemmPackBF32(int64_t K, int64_t N, const float* B, int64_t b_rs, int64_t b_cs, float* packed);
inline int64_t GemmPackedFloats(int64_t K, int64_t N) { return K * ((N + 63) / 64 * 64); }

// GemmBiasActF32 for columns [n_begin, n_end) of A times the B that GemmPackBF32 packed
// (N its columns; n_begin a multiple of 64): C (pointing at column n_begin) receives
// those columns; each output folds k in order from -0.0, then the epilogue.
void GemmPackedF32(int64_t M, int64_t N, int64_t K, const float* A, int64_t a_rs, int64_t a_cs, const float* packed,
                   int64_t n_begin, int64_t n_end, float* C, int64_t ldc, const float* row_bias, int32_t act);

// Integer products with exact int32 sums (the integer operators' arithmetic, wrapping
// modulo 2^32, so the order of the terms cannot matter): C[m * ldc + n] = the sum over
// k < 2 * K2 of A(m, k) * B(k, n), where A(m, k) = A[m * lda + k] (2 * K2 values per row)
// and B is stored in pairs of k: B(k, n) = Bp[(k / 2) * ldb + 2 * n + k % 2] (ldb >= 2N).
// Operands are int16 (8-bit values minus their zero points); an odd K is padded with a
// zero column of A and a zero row of B. Writes C (no read of its old contents).
void GemmI16PairsI32(int64_t M, int64_t N, int64_t K2, const int16_t* A, int64_t lda, const int16_t* Bp, int64_t ldb,
                     int32_t* C, int64_t ldc);

// Linear quantisation to an 8-bit type (QuantizeLinear, DynamicQuantizeLinear): for
// i < n, y[i] = the low byte of clamp(round_half_even(x[i] / scale) + zp, lo, hi), the
// quotient rounded once in f32 and a NaN quotient taken as 0 (so it gives zp); lo, hi:
// 0, 255 (uint8) or -128, 127 (int8); zp inside [lo, hi].
void QuantizeF32(const float* x, int64_t n, float scale, int32_t zp, int32_t lo, int32_t hi, uint8_t* y);

// A 2-D transpose of 32-bit elements (data movement, no arithmetic: every bit kept):
// dst[q * ds + j] = src[j * ss + q] for j < rows, q < cols (the Transpose operator).
void Transpose32(const uint32_t* src, int64_t ss, uint32_t* dst, int64_t ds, int64_t rows, int64_t cols);

// acc[i] = acc[i] + x[i * stride] * w for i < n: one term of a fold into a row of
// independent accumulators (the convolution planes), the product rounded, then added.
void MulAddStridedF32(float* acc, const float* x, int64_t stride, float w, int64_t n);

// acc[i] = MaxStep(acc[i], x[i * stride]) for i < n, where MaxStep(a, v) is v when v is
// NaN and a is not, else a when either is NaN, else (v > a ? v : a): the max pool's
// fold, in which the first NaN sticks and of equal values (+0 and -0) the first stays.
void MaxStepStridedF32(float* acc, const float* x, int64_t stride, int64_t n);

// One output plane of a single-input-channel convolution (depthwise): g holds IH, IW,
// OH, OW, KH, KW, SH, SW, DH, DW, PH, PW. y[oh][ow] = the fold from -0.0, over kernel
// row then column, of x[ih][iw] * w[kh][kw] for the taps inside the input (padding taps
// are skipped), ih = oh*SH - PH + kh*DH, iw = ow*SW - PW + kw*DW. No bias.
void ConvPlaneF32(const float* x, const float* w, float* y, const int64_t* g);

// `channels` independent ConvPlaneF32 planes: plane c reads x + c*IH*IW and
// w + c*KH*KW and writes y + c*OH*OW (a depthwise convolution with one output per input
// channel); then, as GemmBiasActF32's epilogue, each result of plane c takes + bias[c]
// (bias not null) and the activation act (-1: none). The vector kernels run lanes
// across channels.
void DepthwiseConvF32(const float* x, const float* w, float* y, int64_t channels, const int64_t* g, const float* bias,
                      int32_t act);

// Output rows [oh_begin, oh_end) of a convolution of Cg input planes into Mg output
// planes (one group, one image): x holds the Cg planes (IH x IW, plane stride in_sp),
// w the Mg x (Cg * KH * KW) weights, y the Mg planes (OH x OW, contiguous); g as
// ConvPlaneF32's. Output (m, oh, ow) folds from -0.0, channel (outer), kernel row, kernel
// column, the products x * w of the taps inside the input (padding taps are skipped),
// then takes the epilogue: + bias[m] (bias not null), then the activation act (-1: none).
// The reference Conv's fold exactly, with no zero padding, so no signed-zero fix-up.
void ConvDirectF32(const float* x, int64_t in_sp, const float* w, float* y, int64_t Cg, int64_t Mg, const int64_t* g,
                   int64_t oh_begin, int64_t oh_end, const float* bias, int32_t act);

// One output of ConvDirectF32 before its epilogue, for weights wm (output channel m's
// row); inline: the vector kernels use it for border outputs.
inline float ConvDirectOutputF32(const float* x, int64_t in_sp, const float* wm, int64_t Cg, const int64_t* g,
                                 int64_t oh, int64_t ow) {
  const int64_t IH = g[0], IW = g[1], KH = g[4], KW = g[5], SH = g[6], SW = g[7], DH = g[8], DW = g[9], PH = g[10],
                PW = g[11];
  float acc = -0.0f;
  for (int64_t c = 0; c < Cg; ++c) {
    const float* xc = x + c * in_sp;
    const float* wc = wm + c * KH * KW;
    for (int64_t kh = 0; kh < KH; ++kh) {
      const int64_t ih = oh * SH - PH + kh * DH;
      if (ih < 0 || ih >= IH) continue;
      for (int64_t kw = 0; kw < KW; ++kw) {
        const int64_t iw = ow * SW - PW + kw * DW;
        if (iw < 0 || iw >= IW) continue;
        const float p = xc[ih * IW + iw] * wc[kh * KW + kw];
        acc = acc + p;
      }
    }
  }
  return acc;
}

// One output of ConvPlaneF32 (inline: the vector kernels use it for border outputs):
// ConvDirectOutputF32 with one channel.
inline float ConvPlaneOutputF32(const float* x, const float* w, const int64_t* g, int64_t oh, int64_t ow) {
  return ConvDirectOutputF32(x, 0, w, 1, g, oh, ow);
}

}  // namespace ref
}  // namespace onemodel::impl
