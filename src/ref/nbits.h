// The reference (oracle) of ONNX Runtime's MatMulNBits (com.microsoft; ContribOperators.md
// in its docs), the definition of its bits in exact mode: Y = A W^T (+ bias)
// with W [N, K] dequantized from blocks of `bits`-bit codes, each output one accumulator
// from -0.0 folding its K products in index order (exact-contract section 3), then the bias
// added once. A weight is w(n, k) = float(q - zp) * scale for integer zero points (the
// difference is exact; one rounding), (float(q) - zp) * scale for float ones. ONNX Runtime's
// accuracy_level (4: A quantized to int8 at run time) is a speed hint, not a definition:
// exact mode ignores it. Narrow floats widen exactly and the result rounds once (the
// operator, ops/quant/nbits.cpp, does both). Vector rows: ops/quant/nbits.cpp.
#pragma once

#include <cstdint>

namespace onemodel::impl {
namespace ref {

// A MatMulNBits node, validated: A as [M, K], B [N, blocks, blob] codes with
// blocks = ceil(K / block_size) and blob = block_size * bits / 8 bytes per block.
struct NBitsParams {
  int64_t M = 0, N = 0, K = 0;
  int64_t bits = 4;          // 2, 4 or 8
  int64_t block_size = 0;    // a power of 2, 16 or more
  int64_t blocks = 0;        // ceil(K / block_size)
  int64_t blob = 0;          // bytes per block of one row: block_size * bits / 8
  int64_t zp_row_bytes = 0;  // bytes per row of packed uint8 zero points: ceil(blocks * bits / 8)
};

// The code of weight (n, k): in byte n * blocks * blob + (k / block_size) * blob +
// (k % block_size) * bits / 8, the bits starting at bit ((k % block_size) % (8 / bits)) *
// bits (the lowest bits first: element 0 of a 4-bit pair is the low nibble).
uint32_t NBitsCode(const NBitsParams& p, const uint8_t* B, int64_t n, int64_t k);

// The zero points: packed uint8 (zp_u8: row n's block g at byte n * zp_row_bytes +
// g / (8 / bits), bits ((g % (8 / bits)) * bits), lowest first), float values (zp_f32,
// [N, blocks]), or none (zp_u8 and zp_f32 null: 2^(bits - 1)). g_idx (null: k /
// block_size) gives the block of scale and zero point each k reads.
struct NBitsQuant {
  const float* scales = nullptr;  // [N, blocks]
  const uint8_t* zp_u8 = nullptr;
  const float* zp_f32 = nullptr;
  const int32_t* g_idx = nullptr;  // [K], each in [0, blocks)
};

// Weight (n, k) as defined above.
float NBitsWeight(const NBitsParams& p, const uint8_t* B, const NBitsQuant& q, int64_t n, int64_t k);

// Y[m, n] = (sum over k ascending of A[m, k] * w(n, k), from -0.0) + bias[n] (bias null:
// none). A [M, K] and Y [M, N] row-major.
void MatMulNBitsF32(const NBitsParams& p, const float* A, const uint8_t* B, const NBitsQuant& q, const float* bias,
                    float* Y);

// The layout of the kernel NBitsGemmF32 (MatMulNBits' "gemv" row, packed once per
// session): W's rows n (Y's columns) in groups of kNBitsCols, in two parts, each read as
// one sequential stream (what the hardware's prefetchers follow best). The codes: of 2 or
// 4 bits (code_bits 4) two to a byte, with Kp = ceil(K / 2) pairs, byte (g * Kp + k / 2) *
// kNBitsCols + j holds the code of row kNBitsCols * g + j at k in its bits (k % 2) * 4
// (even k low); of 8 bits (code_bits 8) one to a byte, byte (g * K + k) * kNBitsCols + j.
// Codes past N, and at k = K when K is odd, are 0; the codes have kNBitsPad more bytes at
// their end (vector kernels load up to 48 bytes past the 16 they use). The parameters:
// params[(g * blocks + b) * 2 * kNBitsCols + j] is row kNBitsCols * g + j's scale in block
// b, params[... + kNBitsCols + j] its zero point as a float (an integer zero point
// converted exactly); 0 past N.
constexpr int64_t kNBitsCols = 64, kNBitsPad = 64;

// The bytes of one group's codes in that layout.
inline int64_t NBitsGroupBytes(int64_t K, int64_t code_bits) { return (code_bits == 4 ? (K + 1) / 2 : K) * kNBitsCols; }

// Code j of group g at k in that layout.
inline uint32_t NBitsLayoutCode(const uint8_t* codes, int64_t code_bits, int64_t K, int64_t g, int64_t k, int64_t j) {
  if (code_bits == 8) return codes[g * NBitsGroupBytes(K, 8) + k * kNBitsCols + j];
  return (uint32_t(codes[g * NBitsGroupBytes(K, 4) + (k / 2) * kNBitsCols + j]) >> ((k % 2) * 4)) & 15u;
}

// y[r * ldy + kNBitsCols * g + j] for the rows r < rows of A (row r at a + r * lda, K
// floats), the groups g in [g0, g1) and j < kNBitsCols: the fold over k ascending from
// -0.0 of a[r][k] * ((float(code) - zero point) * scale), blocks of `block` k (a power of
// 2, 16 or more: a pair of codes never straddles two blocks) sharing a scale:
// MatMulNBitsF32's sums (without g_idx; float(code) - zero point is exact, so equal to
// float(q - zp)).
void NBitsGemmF32(const float* a, int64_t lda, int64_t rows, int64_t K, int64_t block, const uint8_t* codes,
                  int64_t code_bits, const float* params, int64_t g0, int64_t g1, float* y, int64_t ldy);

}  // namespace ref
}  // namespace onemodel::impl
