// The per-target kernel of MatMulNBits' codes (contract and layout in ref/nbits.h): lanes
// across Y's columns (W's rows), each lane of each row of A one accumulator folding k in
// order from -0.0, as the reference: per k the codes of a vector of columns widen to u32
// lanes, convert exactly, minus the zero points, times the scales (one rounding: the
// weights' bits), times a[r][k], then added. No FMA: the vocabulary has none. Several
// vectors of columns (one row of A: decoding) or several rows of A (a prompt) run at
// once; their accumulators are independent chains, which changes no lane's order, and the
// rows share each dequantized weight vector. Codes of 4 bits or fewer come two to a byte
// (decoding reads every weight once per token: half the bytes of one code a byte), a
// group's 64 columns side by side (one sequential stream of codes).
#include <algorithm>

#include "kernels/kernels.h"
#include "ref/nbits.h"
#include "simd/simd.h"

namespace onemodel::impl {
namespace ONEMODEL_NS {

constexpr int64_t kL = int64_t(Lanes<VF32>()), kCols = ref::kNBitsCols, kGroupVecs = kCols / kL, kAhead = 16;
static_assert(kCols % 16 == 0 && 16 % kL == 0, "a group is whole vectors, 16 columns too");

// The bytes of columns [c * kL, c * kL + kL) at ck, one per u32 lane: the first L bytes of
// a 4L-byte load (the rest is the next codes or padding).
inline VU32 Bytes(const uint8_t* ck, int64_t c) { return WidenLo(WidenLo(Load<VU8>(ck + c * kL))); }

// The weights of codes q: (float(q) - zero point) * scale, one rounding.
inline VF32 Weight(VU32 q, VF32 zp, VF32 sc) { return Mul(Sub(CvtI32ToF32(BitCast<VI32>(q)), zp), sc); }

// kV vectors of columns from column c0 of group g, and kRows rows of A: kV * kRows
// independent chains (one chain would wait on the add's latency every k); each lane of
// each row still folds its k in order. kNib: codes two to a byte (k even in the low
// nibble), each byte read once for both of its k.
template <int64_t kV, int64_t kRows, bool kNib>
void NBitsTile(const float* a, int64_t lda, int64_t K, int64_t block, const uint8_t* codes, const float* params,
               int64_t g, int64_t c0, float* y, int64_t ldy) {
  const int64_t blocks = (K + block - 1) / block;
  const uint8_t* cg = codes + g * ref::NBitsGroupBytes(K, kNib ? 4 : 8) + c0;
  // Plain arrays with fully unrolled constant-trip loops: the accumulators stay in
  // registers (rolled loops over them made the compiler keep them in memory).
  VF32 acc[kRows][kV], sc[kV], zp[kV];
#pragma GCC unroll 16
  for (int64_t r = 0; r < kRows; ++r)
    for (int64_t c = 0; c < kV; ++c) acc[r][c] = Set<VF32>(-0.0f);
  const VU32 low = Set<VU32>(15u);
  for (int64_t b = 0; b < blocks; ++b) {
    const float* pr = params + (g * blocks + b) * 2 * kCols + c0;
#pragma GCC unroll 16
    for (int64_t c = 0; c < kV; ++c) {
      sc[c] = Load<VF32>(pr + c * kL);
      zp[c] = Load<VF32>(pr + kCols + c * kL);
    }
    const int64_t k1 = std::min(K, (b + 1) * block);
    int64_t k = b * block;
    if constexpr (kNib) {
      // Pairs (k, k + 1) from one byte each; block is even, so only K's end can leave one k.
      for (; k + 2 <= k1; k += 2) {
        const uint8_t* ck = cg + (k / 2) * kCols;
        // Decoding reads each code once: a hint kAhead pairs on (the hardware's prefetchers
        // alone left the loads waiting on memory; a hint past the end reads nothing).
        if constexpr (kRows == 1) __builtin_prefetch(ck + kAhead * kCols, 0, 0);
#pragma GCC unroll 16
        for (int64_t c = 0; c < kV; ++c) {
          const VU32 q = Bytes(ck, c);
          const VF32 w0 = Weight(And(q, low), zp[c], sc[c]);
#pragma GCC unroll 16
          for (int64_t r = 0; r < kRows; ++r) acc[r][c] = Add(acc[r][c], Mul(Set<VF32>(a[r * lda + k]), w0));
          const VF32 w1 = Weight(ShiftRight<4>(q), zp[c], sc[c]);
#pragma GCC unroll 16
          for (int64_t r = 0; r < kRows; ++r) acc[r][c] = Add(acc[r][c], Mul(Set<VF32>(a[r * lda + k + 1]), w1));
        }
      }
    }
    for (; k < k1; ++k) {
      const uint8_t* ck = cg + (kNib ? k / 2 : k) * kCols;
#pragma GCC unroll 16
      for (int64_t c = 0; c < kV; ++c) {
        const VU32 q = Bytes(ck, c);
        const VF32 wk = Weight(kNib ? And(q, low) : q, zp[c], sc[c]);
#pragma GCC unroll 16
        for (int64_t r = 0; r < kRows; ++r) acc[r][c] = Add(acc[r][c], Mul(Set<VF32>(a[r * lda + k]), wk));
      }
    }
  }
  for (int64_t r = 0; r < kRows; ++r)
    for (int64_t c = 0; c < kV; ++c) Store(acc[r][c], y + r * ldy + g * kCols + c0 + c * kL);
}

// Rows [r, rows) of group g's columns [c0, c0 + kV * kL), by tiles of kRows rows, then
// halves of it.
template <int64_t kV, int64_t kRows, bool kNib>
void NBitsRows(const float* a, int64_t lda, int64_t r, int64_t rows, int64_t K, int64_t block, const uint8_t* codes,
               const float* params, int64_t g, int64_t c0, float* y, int64_t ldy) {
  for (; r + kRows <= rows; r += kRows)
    NBitsTile<kV, kRows, kNib>(a + r * lda, lda, K, block, codes, params, g, c0, y + r * ldy, ldy);
  if constexpr (kRows > 1) NBitsRows<kV, kRows / 2, kNib>(a, lda, r, rows, K, block, codes, params, g, c0, y, ldy);
}

template <bool kNib>
void NBitsGemm(const float* a, int64_t lda, int64_t rows, int64_t K, int64_t block, const uint8_t* codes,
               const float* params, int64_t g0, int64_t g1, float* y, int64_t ldy) {
  // One row (decoding): kVD vectors at a time, 4 chains (a whole group where vectors hold
  // 16 floats: the codes one sequential stream; narrower vectors take the group in parts,
  // the later ones from cache). Several (a prompt): 16 columns at a time (kVP vectors), kR
  // rows, kR * kVP = 8 chains; the rows share each weight vector.
  constexpr int64_t kVD = kGroupVecs < 4 ? kGroupVecs : 4, kVP = 16 / kL;
  constexpr int64_t kR = kVP >= 8 ? 1 : 8 / kVP;
  static_assert(kGroupVecs % kVD == 0 && kGroupVecs % kVP == 0, "parts of a group");
  if (rows < 2) {
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t g = g0; g < g1; ++g)
        for (int64_t c0 = 0; c0 < kCols; c0 += kVD * kL)
          NBitsTile<kVD, 1, kNib>(a + r * lda, lda, K, block, codes, params, g, c0, y + r * ldy, ldy);
    return;
  }
  for (int64_t g = g0; g < g1; ++g)
    for (int64_t c0 = 0; c0 < kCols; c0 += kVP * kL)
      NBitsRows<kVP, kR, kNib>(a, lda, 0, rows, K, block, codes, params, g, c0, y, ldy);
}

void NBitsGemmF32(const float* a, int64_t lda, int64_t rows, int64_t K, int64_t block, const uint8_t* codes,
                  int64_t code_bits, const float* params, int64_t g0, int64_t g1, float* y, int64_t ldy) {
  if (code_bits == 4) return NBitsGemm<true>(a, lda, rows, K, block, codes, params, g0, g1, y, ldy);
  NBitsGemm<false>(a, lda, rows, K, block, codes, params, g0, g1, y, ldy);
}

}  // namespace ONEMODEL_NS
}  // namespace onemodel::impl
