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
// One tile: rows ar[0..kDotR) (all readable), NV vectors of columns of B from b (FULL:
// NV whole vectors; else wv[v] columns in vector v), K4 quads; stores rows < mr.
template <int64_t NV, bool FULL>
inline void DotTile(const uint8_t* const* ar, const int8_t* b, int64_t ldb, int64_t K4, const size_t* wv, int32_t* c,
                    int64_t ldc, int64_t mr) {
  VI32 acc[kDotR * NV];
#pragma GCC unroll 32
  for (int64_t i = 0; i < kDotR * NV; ++i) acc[i] = Zero<VI32>();
  for (int64_t q = 0; q < K4; ++q, b += ldb) {
    VI8 bv[NV];
#pragma GCC unroll 4
    for (int64_t v = 0; v < NV; ++v) {
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
      for (int64_t v = 0; v < NV; ++v) acc[r * NV + v] = DotU8S8x4Acc(acc[r * NV + v], av, bv[v]);
    }
  }
#pragma GCC unroll 8
  for (int64_t r = 0; r < kDotR; ++r) {
    if (r >= mr) break;
#pragma GCC unroll 4
    for (int64_t v = 0; v < NV; ++v) {
      if (FULL || wv[v] == size_t(kDotL))
        Store(acc[r * NV + v], c + r * ldc + v * kDotL);
      else if (wv[v])
        StoreN(acc[r * NV + v], c + r * ldc + v * kDotL, wv[v]);
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
      // Blocks of whole vectors load whole vectors (a multiple of the lanes: every
      // network's channel counts); others the columns they have.
      const int8_t* b = Bq + 4 * n0;
      if (w == kDotV * kDotL)
        DotTile<kDotV, true>(ar, b, ldb, K4, wv, c, ldc, mr);
      else if (kDotV > 2 && w == 2 * kDotL)
        DotTile<(kDotV > 2 ? 2 : 1), true>(ar, b, ldb, K4, wv, c, ldc, mr);
      else if (w == kDotL)
        DotTile<1, true>(ar, b, ldb, K4, wv, c, ldc, mr);
      else
        DotTile<kDotV, false>(ar, b, ldb, K4, wv, c, ldc, mr);
    }
  }
}

// Blocks of kL rows by kL columns (output channels): per-lane sub, scale and bias vectors,
// every step lane-wise and correctly rounded as in the reference (the quantisation is
// QuantDequantF32's formula, elementwise.cpp), then TransposeSquare (bits kept) and one
// store per output channel; partial blocks element by element (the reference's loop).
void DequantTransposeI32F32(int64_t rows, int64_t M, const int32_t* acc, int64_t lda, const int32_t* sub,
                            const float* scale, const float* bias, int32_t relu, const ref::QdqArgs* qdq, float* y,
                            int64_t ldy) {
  constexpr int64_t kL = int64_t(Lanes<VF32>());
  const int64_t rf = rows / kL * kL;
  VF32 qs = Zero<VF32>(), s2 = qs, dz = qs, flo = qs, fhi = qs;
  if (qdq != nullptr) {
    qs = Set<VF32>(qdq->scale);
    s2 = Set<VF32>(qdq->dq_scale);
    dz = Set<VF32>(float(qdq->zp - qdq->dq_zp));
    flo = Set<VF32>(float(qdq->lo - qdq->zp));
    fhi = Set<VF32>(float(qdq->hi - qdq->zp));
  }
  for (int64_t m0 = 0; m0 < M; m0 += kL) {
    // A last block of fewer channels loads only those (its other lanes are dropped).
    const size_t nm = size_t(std::min(kL, M - m0));
    const bool whole = nm == size_t(kL);
    const VI32 sv = whole ? Load<VI32>(sub + m0) : LoadN<VI32>(sub + m0, nm, 0);
    const VF32 cv = whole ? Load<VF32>(scale + m0) : LoadN<VF32>(scale + m0, nm, 0.0f);
    const VF32 bv = bias == nullptr ? Zero<VF32>() : whole ? Load<VF32>(bias + m0) : LoadN<VF32>(bias + m0, nm, 0.0f);
    for (int64_t r0 = 0; r0 < rf; r0 += kL) {
      VF32 v[kL];
#pragma GCC unroll 16
      for (int64_t j = 0; j < kL; ++j) {
        const int32_t* a = acc + (r0 + j) * lda + m0;
        VF32 t = Mul(CvtI32ToF32(Sub(whole ? Load<VI32>(a) : LoadN<VI32>(a, nm, 0), sv)), cv);
        if (bias != nullptr) t = Add(t, bv);
        if (relu) t = IfThenElse(Or(Gt(t, Zero<VF32>()), Ne(t, t)), t, Zero<VF32>());
        if (qdq != nullptr) t = Mul(Add(RoundEven(ClampZeroNaN(Div(t, qs), flo, fhi)), dz), s2);
        v[j] = t;
      }
      TransposeSquare(v);
      for (int64_t q = 0; q < int64_t(nm); ++q) Store(v[q], y + (m0 + q) * ldy + r0);
    }
  }
  // The rows past the last whole block.
  if (rf < rows)
    ref::DequantTransposeI32F32(rows - rf, M, acc + rf * lda, lda, sub, scale, bias, relu, qdq, y + rf, ldy);
}

// Blocks of kL rows (input channels) by kL columns (positions): the floats transposed
// (TransposeSquare, bits kept), each position's kL values quantised with QuantizeF32's
// formula (elementwise.cpp) and narrowed four positions at a time; each position's kL
// bytes stored at its row of y. Partial blocks element by element (the reference).
void QuantizeTransposeF32U8(const float* x, int64_t ss, int64_t rows, int64_t cols, float scale, int32_t zp, int32_t lo,
                            int32_t hi, uint8_t* y, int64_t ds) {
  constexpr int64_t kL = int64_t(Lanes<VF32>());
  const int64_t cf = cols / kL * kL;
  const VF32 s = Set<VF32>(scale);
  const VI32 z = Set<VI32>(zp), ilo = Set<VI32>(lo - zp), ihi = Set<VI32>(hi - zp);
  auto one = [&](VF32 v) { return Add(Min(Max(CvtRoundEvenSatF32ToI32(Div(v, s)), ilo), ihi), z); };
  for (int64_t j0 = 0; j0 < rows; j0 += kL) {
    // A last block of fewer rows: zeros in the others, only its bytes stored.
    const int64_t nr = std::min(kL, rows - j0);
    for (int64_t q0 = 0; q0 < cf; q0 += kL) {
      VF32 v[kL];
#pragma GCC unroll 16
      for (int64_t j = 0; j < kL; ++j) v[j] = j < nr ? Load<VF32>(x + (j0 + j) * ss + q0) : Zero<VF32>();
      TransposeSquare(v);
      for (int64_t q = 0; q < kL; q += 4) {
        const VI16 h0 = NarrowSatI32ToI16(one(v[q]), one(v[q + 1]));
        const VI16 h1 = NarrowSatI32ToI16(one(v[q + 2]), one(v[q + 3]));
        uint8_t b[4 * kL];
        if (lo < 0)
          Store(BitCast<VU8>(NarrowSatI16ToI8(h0, h1)), b);
        else
          Store(NarrowSatI16ToU8(h0, h1), b);
        if (nr == kL) {  // a constant size: one store per position
          for (int64_t k = 0; k < 4; ++k) std::memcpy(y + (q0 + q + k) * ds + j0, b + k * kL, size_t(kL));
        } else {
          for (int64_t k = 0; k < 4; ++k) std::memcpy(y + (q0 + q + k) * ds + j0, b + k * kL, size_t(nr));
        }
      }
    }
  }
  // The columns past the last whole block.
  if (cf < cols) ref::QuantizeTransposeF32U8(x + cf, ss, rows, cols - cf, scale, zp, lo, hi, y + cf * ds, ds);
}

}  // namespace ONEMODEL_NS
}  // namespace onemodel::impl
