// Per-target integer GEMM kernels (contracts in ref/gemm.h). Integer sums are exact
// modulo 2^32 in any order, so lanes, tiles and the grouping of the terms (pairs, quads)
// cannot change a bit of the reference's result.
#include <algorithm>
#include <cstring>

#include "kernels/kernels.h"
#include "ref/gemm.h"
#include "simd/simd.h"

namespace onemodel::impl {
namespace ONEMODEL_NS {

// Integer products: lanes across output columns, each lane an int32 accumulator; per
// pair of k, MulAddPairsI16 multiplies a broadcast pair of A by the column pairs of B
// and adds the two products (exact: 8-bit operands minus zero points are at most 255 in
// magnitude), then Add accumulates. int32 sums wrap modulo 2^32 like the reference's, so
// the grouping of the terms cannot change a bit. Tiles of 4 rows by 2 vectors; per block
// of columns every row tile runs (the block of B stays in L1).
void GemmI16PairsI32(int64_t M, int64_t N, int64_t K2, const int16_t* A, int64_t lda, const int16_t* Bp, int64_t ldb,
                     int32_t* C, int64_t ldc) {
  constexpr int64_t L = int64_t(Lanes<VI32>()), R = 4;
  for (int64_t n0 = 0; n0 < N; n0 += 2 * L) {
    const int64_t w = std::min<int64_t>(2 * L, N - n0);
    const size_t w0 = size_t(std::min<int64_t>(w, L)), w1 = size_t(std::max<int64_t>(0, w - L));
    for (int64_t m0 = 0; m0 < M; m0 += R) {
      const int64_t mr = std::min<int64_t>(R, M - m0);
      // Rows past the last read the last row again; their results are dropped.
      const int16_t* ar[R];
      for (int64_t r = 0; r < R; ++r) ar[r] = A + (m0 + std::min<int64_t>(r, mr - 1)) * lda;
      VI32 acc[R * 2];
      for (int64_t i = 0; i < R * 2; ++i) acc[i] = Zero<VI32>();
      // One pair of k: a broadcast pair of each row's A times the two vectors of B pairs.
      auto step = [&](int64_t kp, VI16 b0, VI16 b1) {
#pragma GCC unroll 4
        for (int64_t r = 0; r < R; ++r) {
          int32_t pair;
          std::memcpy(&pair, ar[r] + 2 * kp, sizeof pair);
          const VI16 av = BitCast<VI16>(Set<VI32>(pair));
          acc[2 * r] = Add(acc[2 * r], MulAddPairsI16(av, b0));
          acc[2 * r + 1] = Add(acc[2 * r + 1], MulAddPairsI16(av, b1));
        }
      };
      const int16_t* b = Bp + 2 * n0;
      if (w == 2 * L) {
        for (int64_t kp = 0; kp < K2; ++kp, b += ldb) step(kp, Load<VI16>(b), Load<VI16>(b + 2 * L));
      } else {
        for (int64_t kp = 0; kp < K2; ++kp, b += ldb)
          step(kp, LoadN<VI16>(b, 2 * w0, 0), w1 ? LoadN<VI16>(b + 2 * L, 2 * w1, 0) : Zero<VI16>());
      }
      for (int64_t r = 0; r < mr; ++r) {
        int32_t* c = C + (m0 + r) * ldc + n0;
        if (w == 2 * L) {
          Store(acc[2 * r], c);
          Store(acc[2 * r + 1], c + L);
        } else {
          StoreN(acc[2 * r], c, w0);
          if (w1) StoreN(acc[2 * r + 1], c + L, w1);
        }
      }
    }
  }
}

// Raw u8 x s8 products: lanes across output columns, each lane an int32 accumulator;
// per quad of k, DotU8S8x4Acc multiplies a broadcast quad of A by the column quads of B
// and adds the four products (one vpdpbusd on the VNNI targets). Tiles of kDotR rows by
// kDotV vectors (32-register targets: 8 x 3, 24 accumulators; others 4 x 2); per block of
// columns every row tile runs (the block of B stays in L1/L2).
#if defined(ONEMODEL_TARGET_AVX512)
constexpr int64_t kDotR = 8, kDotV = 3;
#else
constexpr int64_t kDotR = 4, kDotV = 2;
#endif
constexpr int64_t kDotL = int64_t(Lanes<VI32>());

namespace {
// One tile: rows ar[0..kDotR) (all readable), columns of B from b (FULL: kDotV whole
// vectors; else wv[v] columns in vector v), K4 quads; stores rows < mr.
template <bool FULL>
inline void DotTile(const uint8_t* const* ar, const int8_t* b, int64_t ldb, int64_t K4, const size_t* wv, int32_t* c,
                    int64_t ldc, int64_t mr) {
  VI32 acc[kDotR * kDotV];
#pragma GCC unroll 32
  for (int64_t i = 0; i < kDotR * kDotV; ++i) acc[i] = Zero<VI32>();
  for (int64_t q = 0; q < K4; ++q, b += ldb) {
    VI8 bv[kDotV];
#pragma GCC unroll 4
    for (int64_t v = 0; v < kDotV; ++v) {
      if (FULL)
        bv[v] = Load<VI8>(b + v * 4 * kDotL);
      else
        bv[v] = wv[v] ? LoadN<VI8>(b + v * 4 * kDotL, 4 * wv[v], 0) : Zero<VI8>();
    }
#pragma GCC unroll 8
    for (int64_t r = 0; r < kDotR; ++r) {
      int32_t quad;
      std::memcpy(&quad, ar[r] + 4 * q, sizeof quad);
      const VU8 av = BitCast<VU8>(Set<VI32>(quad));
#pragma GCC unroll 4
      for (int64_t v = 0; v < kDotV; ++v) acc[r * kDotV + v] = DotU8S8x4Acc(acc[r * kDotV + v], av, bv[v]);
    }
  }
#pragma GCC unroll 8
  for (int64_t r = 0; r < kDotR; ++r) {
    if (r >= mr) break;
#pragma GCC unroll 4
    for (int64_t v = 0; v < kDotV; ++v) {
      if (FULL || wv[v] == size_t(kDotL))
        Store(acc[r * kDotV + v], c + r * ldc + v * kDotL);
      else if (wv[v])
        StoreN(acc[r * kDotV + v], c + r * ldc + v * kDotL, wv[v]);
    }
  }
}
}  // namespace

void GemmU8S8I32(int64_t M, int64_t N, int64_t K4, const uint8_t* A, int64_t lda, const int8_t* Bq, int64_t ldb,
                 int32_t* C, int64_t ldc) {
  for (int64_t n0 = 0; n0 < N; n0 += kDotV * kDotL) {
    const int64_t w = std::min<int64_t>(kDotV * kDotL, N - n0);
    size_t wv[kDotV];  // columns in each vector of this block
    for (int64_t v = 0; v < kDotV; ++v) wv[v] = size_t(std::clamp<int64_t>(w - v * kDotL, 0, kDotL));
    for (int64_t m0 = 0; m0 < M; m0 += kDotR) {
      const int64_t mr = std::min<int64_t>(kDotR, M - m0);
      // Rows past the last read the last row again; their results are dropped.
      const uint8_t* ar[kDotR];
      for (int64_t r = 0; r < kDotR; ++r) ar[r] = A + (m0 + std::min<int64_t>(r, mr - 1)) * lda;
      int32_t* c = C + m0 * ldc + n0;
      if (w == kDotV * kDotL)
        DotTile<true>(ar, Bq + 4 * n0, ldb, K4, wv, c, ldc, mr);
      else
        DotTile<false>(ar, Bq + 4 * n0, ldb, K4, wv, c, ldc, mr);
    }
  }
}

}  // namespace ONEMODEL_NS
}  // namespace onemodel::impl
