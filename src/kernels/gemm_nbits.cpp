// The per-target kernel of MatMulNBits' codes (contract and layout in ref/nbits.h): lanes
// across Y's columns (W's rows), each lane of each row of A one accumulator folding k in
// order from -0.0, as the reference: per k the codes of kNBitsCols columns widen to u32
// lanes, convert exactly, minus the zero points, times the scales (one rounding: the
// weights' bits), times a[r][k], then added. No FMA: the vocabulary has none. Several
// groups (one row of A: decoding) or several rows of A (a prompt) run at once; their
// accumulators are independent chains, which changes no lane's order, and the rows share
// each dequantized weight vector.
#include <algorithm>

#include "kernels/kernels.h"
#include "ref/nbits.h"
#include "simd/simd.h"

namespace onemodel::impl {
namespace ONEMODEL_NS {

constexpr int64_t kL = int64_t(Lanes<VF32>()), kC = ref::kNBitsCols / kL, kP = 2 * ref::kNBitsCols;
static_assert(ref::kNBitsCols % kL == 0, "a group is whole vectors");

// The weights of a group's kNBitsCols columns at k: kC vectors.
inline VF32 Weight(const uint8_t* ck, int64_t c, VF32 zp, VF32 sc) {
  // The first L bytes of a 4L-byte load (the rest is padding or the next codes).
  const VU32 q = WidenLo(WidenLo(Load<VU8>(ck + c * kL)));
  return Mul(Sub(CvtI32ToF32(BitCast<VI32>(q)), zp), sc);
}

// kGroups groups of columns and kRows rows of A at a time: kGroups * kRows * kC
// independent chains (one chain would wait on the add's latency every k); each lane of
// each row still folds its k in order.
template <int64_t kGroups, int64_t kRows>
void NBitsTile(const float* a, int64_t lda, int64_t K, int64_t block, const uint8_t* codes, const float* params,
               int64_t g, float* y, int64_t ldy) {
  const int64_t blocks = (K + block - 1) / block;
  // Plain arrays with fully unrolled constant-trip loops: the accumulators stay in
  // registers (rolled loops over them made the compiler keep them in memory).
  VF32 acc[kRows][kGroups][kC], sc[kGroups][kC], zp[kGroups][kC];
#pragma GCC unroll 16
  for (int64_t r = 0; r < kRows; ++r)
    for (int64_t j = 0; j < kGroups; ++j)
      for (int64_t c = 0; c < kC; ++c) acc[r][j][c] = Set<VF32>(-0.0f);
  for (int64_t b = 0; b < blocks; ++b) {
    for (int64_t j = 0; j < kGroups; ++j) {
      const float* pr = params + ((g + j) * blocks + b) * kP;
      for (int64_t c = 0; c < kC; ++c) {
        sc[j][c] = Load<VF32>(pr + c * kL);
        zp[j][c] = Load<VF32>(pr + ref::kNBitsCols + c * kL);
      }
    }
    const int64_t k1 = std::min(K, (b + 1) * block);
    for (int64_t k = b * block; k < k1; ++k) {
#pragma GCC unroll 4
      for (int64_t j = 0; j < kGroups; ++j) {
        const uint8_t* ck = codes + ((g + j) * K + k) * ref::kNBitsCols;
#pragma GCC unroll 4
        for (int64_t c = 0; c < kC; ++c) {
          const VF32 w = Weight(ck, c, zp[j][c], sc[j][c]);
#pragma GCC unroll 16
          for (int64_t r = 0; r < kRows; ++r) acc[r][j][c] = Add(acc[r][j][c], Mul(Set<VF32>(a[r * lda + k]), w));
        }
      }
    }
  }
  for (int64_t r = 0; r < kRows; ++r)
    for (int64_t j = 0; j < kGroups; ++j)
      for (int64_t c = 0; c < kC; ++c) Store(acc[r][j][c], y + r * ldy + (g + j) * ref::kNBitsCols + c * kL);
}

// Rows [r, rows) of group g, by tiles of kRows rows, then halves of it.
template <int64_t kRows>
void NBitsRows(const float* a, int64_t lda, int64_t r, int64_t rows, int64_t K, int64_t block, const uint8_t* codes,
               const float* params, int64_t g, float* y, int64_t ldy) {
  for (; r + kRows <= rows; r += kRows)
    NBitsTile<1, kRows>(a + r * lda, lda, K, block, codes, params, g, y + r * ldy, ldy);
  if constexpr (kRows > 1) NBitsRows<kRows / 2>(a, lda, r, rows, K, block, codes, params, g, y, ldy);
}

void NBitsGemmF32(const float* a, int64_t lda, int64_t rows, int64_t K, int64_t block, const uint8_t* codes,
                  const float* params, int64_t g0, int64_t g1, float* y, int64_t ldy) {
  // One row (decoding): kG groups at once, kG * kC = 4 chains on every width. Several
  // (a prompt): per group (its codes stay in L1), kR rows at once, kR * kC = 8 chains.
  constexpr int64_t kG = kC >= 4 ? 1 : 4 / kC, kR = kC >= 8 ? 1 : 8 / kC;
  if (rows < 2) {
    for (int64_t r = 0; r < rows; ++r) {
      int64_t g = g0;
      for (; g + kG <= g1; g += kG) NBitsTile<kG, 1>(a + r * lda, lda, K, block, codes, params, g, y + r * ldy, ldy);
      for (; g < g1; ++g) NBitsTile<1, 1>(a + r * lda, lda, K, block, codes, params, g, y + r * ldy, ldy);
    }
    return;
  }
  for (int64_t g = g0; g < g1; ++g) NBitsRows<kR>(a, lda, 0, rows, K, block, codes, params, g, y, ldy);
}

}  // namespace ONEMODEL_NS
}  // namespace onemodel::impl
