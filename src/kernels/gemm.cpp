// Per-target dense linear algebra kernels (contracts in ref/gemm.h), written once on
// the vector vocabulary. Vector lanes and register tiles split *outputs*: each C
// element keeps one accumulator that folds its K products in k order from -0.0, as
// acc = acc + (a * b) with the product rounded first; K blocks carry the accumulator
// through C. So every target, tile shape and thread split gives the reference's bits.
#include <algorithm>
#include <cstring>
#include <utility>
#include <vector>

#include "core/bits.h"
#include "core/cache_info.h"
#include "kernels/kernels.h"
#include "ref/conv.h"
#include "ref/gemm.h"
#include "simd/simd.h"
#include "kernels/transpose.h"
#include "kernels/activation_v.h"

namespace onemodel::impl {
namespace ONEMODEL_NS {
namespace {

constexpr size_t kN = Lanes<VF32>();
template <size_t... I, class F>
inline void Unroll(std::index_sequence<I...>, F&& f) {
  (f(std::integral_constant<size_t, I>{}), ...);
}
// Register tile: kMR rows of C by kNV vectors. AVX-512 takes 6 rows of four 16-lane
// vectors: 24 accumulators, four B vectors, a broadcast and a product in its 32
// registers, and one broadcast of A per four multiplies (measured on Zen 4 among 512-bit
// tiles, GEMM 1024^3: 12x2 34 ms, 8x2 30, 6x2 30, 5x4 27, 6x4 27, 4x4 26; broadcasts
// cost there); NEON (32 registers of 4 lanes) takes 8; AVX2 (16) takes 6: 12 accumulators,
// two B vectors, a broadcast and a product fill its registers exactly (measured against
// 4 rows: GEMM 1024^3 22.5 ms against 23.7, 3x3 convolution layers 3-8% faster); the other
// 16-register targets take 4.
#if defined(ONEMODEL_TARGET_AVX512)
constexpr size_t kMR = 6;
#elif defined(ONEMODEL_TARGET_NEON) || defined(ONEMODEL_TARGET_NEONDOT)
constexpr size_t kMR = 8;
#elif defined(ONEMODEL_TARGET_AVX2)
constexpr size_t kMR = 6;
#else
constexpr size_t kMR = 4;
#endif
#if defined(ONEMODEL_TARGET_AVX512)
constexpr size_t kNV = 4;
#else
constexpr size_t kNV = 2;
#endif
constexpr size_t kNR = kNV * kN;
// Cache blocks from the CPU's own cache sizes (core/cache_info.h), read once: a B panel
// (kc x kNR floats) takes at most 1.5 times the L1 data cache, 64 to 256 steps of k (the
// panel streams through L1 in k order; a longer fold per tile means fewer reloads of
// C: with AVX-512's 64-column panels on Zen 5's 48 KiB L1, kc 256 against 96 for half
// the L1 measured resnet50 55.1 -> 52.0 ms and GEMM 1024^3 10.4 -> 10.1 ms at 1 thread);
// a block of A (kc x mc) an eighth of L2, a block of B (kc x nc) half of L2. On a 32 KiB
// L1 and 1 MiB L2 with AVX2's 16-column panels: kc 256, mc 126, nc 512. nc is a multiple
// of 64 (GemmPackedF32's column ranges start at multiples of 64) and so of kNR.
struct Blocks {
  int64_t kc, mc, nc;
};
constexpr int64_t kKCMax = 256, kMCMax = 256, kNCMax = 2048;
static_assert(64 % kNR == 0, "a panel must divide 64 columns");
const Blocks& GemmBlocks() {
  static const Blocks b = [] {
    const CacheInfo& c = Caches();
    Blocks r;
    r.kc = std::clamp<int64_t>(c.l1d * 3 / 2 / int64_t(kNR * sizeof(float)) / 16 * 16, 64, kKCMax);
    const int64_t row = r.kc * int64_t(sizeof(float));
    r.mc = std::clamp<int64_t>(c.l2 / 8 / row, int64_t(kMR), kMCMax) / int64_t(kMR) * int64_t(kMR);
    r.nc = std::clamp<int64_t>(c.l2 / 2 / row / 64 * 64, 64, kNCMax);
    return r;
  }();
  return b;
}

// A register tile's rows of A over its K block, A(r, k) for r < kMR, k < kc: Step(k)
// positions at step k, At(step, r) reads row r there.
// StridedA: A(r, k) = p[r * rs + k * ks]: a packed block (rs 1, ks kMR) or A itself when
// its rows are contiguous along k (rs its row stride, ks 1; all kMR rows exist).
struct StridedA {
  const float* p;
  int64_t rs, ks;
  const float* Step(int64_t k) const { return p + k * ks; }
  float At(const float* s, size_t r) const { return s[int64_t(r) * rs]; }
};
// IndirectA: A(r, k) = rows[r][koff[k]] (GemmPackedIndirectF32: a convolution's
// positions read from its input in place, rows[r] a position's first tap and koff[k] the
// k-th term's offset from it). Rows past the tile's last are copies of it.
struct IndirectA {
  const float* rows[kMR];
  const int64_t* koff;
  int64_t Step(int64_t k) const { return koff[k]; }
  float At(int64_t o, size_t r) const { return rows[r][o]; }
};

// One kMR x kNR tile of C over a K block. Ap: kc x kMR (rows past mr are zeros), Bp:
// kc x kNR (columns past nr are zeros). first: the block starts the fold (-0.0),
// otherwise it continues the accumulators stored in C. Only rows < mr, columns < nr
// are read or written.
// A(r, k) comes from `a` (StridedA or IndirectA below), positioned at the K block.
// NV: vectors per row; a last panel of at most kN columns takes the 1-vector tile.
// last: this K block ends the fold; then the epilogue (GemmBiasActF32) applies before the
// store: + bias[r] (bias: this tile's first row's, or null) or + cbias[col] (cbias: this
// tile's first column's, or null), then activation `act`. pf, pfn: pfn cache lines from
// pf to prefetch into L2, spread evenly over the k steps (memory hints only).
template <size_t NV, bool kPrefetch, class ASrc>
inline void Tile(int64_t kc, const ASrc& a, const float* Bp, int64_t bks, float* C, int64_t ldc, size_t mr, size_t nr,
                 bool first, bool last = false, const float* bias = nullptr, Activation act = Activation::kNone,
                 const float* cbias = nullptr, const char* pf = nullptr, int64_t pfn = 0) {
  // Plain arrays with fully unrolled constant-trip loops: the compilers keep every
  // accumulator in a register (lambdas over the array made GCC store them each step).
  VF32 acc[kMR * NV];
#pragma GCC unroll 32
  for (size_t i = 0; i < kMR * NV; ++i) {
    const size_t r = i / NV, col = (i % NV) * kN;
    if (first || r >= mr || col >= nr)
      acc[i] = Set<VF32>(-0.0f);
    else if (nr - col >= kN)
      acc[i] = Load<VF32>(C + int64_t(r) * ldc + int64_t(col));
    else
      acc[i] = LoadN<VF32>(C + int64_t(r) * ldc + int64_t(col), nr - col, -0.0f);
  }
  // kPrefetch: one hint every `every` k steps while any is left (a separate instance, so
  // that the fold without hints has no test in its loop).
  const int64_t every = kPrefetch && pfn ? std::max<int64_t>(1, kc / pfn) : kc;
  int64_t next = 0;
  for (int64_t k = 0; k < kc; ++k) {
    if (kPrefetch && k == next) {
      __builtin_prefetch(pf, 0, 2);
      pf += 64;
      next = --pfn > 0 ? k + every : kc;
    }
    const float* b = Bp + k * bks;
    const auto ak = a.Step(k);
    VF32 bv[NV];
#pragma GCC unroll 4
    for (size_t v = 0; v < NV; ++v) bv[v] = Load<VF32>(b + v * kN);
#pragma GCC unroll 16
    for (size_t r = 0; r < kMR; ++r) {
      const VF32 av = Set<VF32>(a.At(ak, r));
#pragma GCC unroll 4
      for (size_t v = 0; v < NV; ++v) acc[r * NV + v] = Add(acc[r * NV + v], Mul(av, bv[v]));
    }
  }
  VF32 cb[NV];
#pragma GCC unroll 4
  for (size_t v = 0; v < NV; ++v) {
    const size_t col = v * kN;
    cb[v] = !last || !cbias || col >= nr ? Zero<VF32>()
            : nr - col >= kN             ? Load<VF32>(cbias + col)
                                         : LoadN<VF32>(cbias + col, nr - col, 0.0f);
  }
#pragma GCC unroll 16
  for (size_t r = 0; r < kMR; ++r) {
    if (r >= mr) break;
    if (last && (bias || cbias || act != Activation::kNone)) {
      const VF32 bb = Set<VF32>(bias ? bias[r] : 0.0f);
#pragma GCC unroll 4
      for (size_t v = 0; v < NV; ++v) {
        if (bias) acc[r * NV + v] = Add(acc[r * NV + v], bb);
        if (cbias) acc[r * NV + v] = Add(acc[r * NV + v], cb[v]);
        acc[r * NV + v] = ActivationV(act, acc[r * NV + v]);
      }
    }
#pragma GCC unroll 4
    for (size_t v = 0; v < NV; ++v) {
      const size_t col = v * kN;
      if (col >= nr) break;
      float* c = C + int64_t(r) * ldc + int64_t(col);
      if (nr - col >= kN)
        Store(acc[r * NV + v], c);
      else
        StoreN(acc[r * NV + v], c, nr - col);
    }
  }
}

// Packs B(k0 .. k0+kc, n0 .. n0+nc) as panels of kNR columns, each kc x kNR, zero-padded.
void PackB(const float* B, int64_t b_rs, int64_t b_cs, int64_t k0, int64_t kc, int64_t n0, int64_t nc, float* out) {
  for (int64_t j = 0; j < nc; j += int64_t(kNR)) {
    const int64_t w = std::min<int64_t>(int64_t(kNR), nc - j);
    float* panel = out + (j / int64_t(kNR)) * kc * int64_t(kNR);
    if (b_rs == 1 && b_cs != 1) {  // B transposed: read each column along k
      for (int64_t n = 0; n < int64_t(kNR); ++n) {
        if (n < w) {
          const float* src = B + k0 + (n0 + j + n) * b_cs;
          for (int64_t k = 0; k < kc; ++k) panel[k * int64_t(kNR) + n] = src[k];
        } else {
          for (int64_t k = 0; k < kc; ++k) panel[k * int64_t(kNR) + n] = 0.0f;
        }
      }
      continue;
    }
    if (b_cs == 1 && w == int64_t(kNR)) {  // whole rows of the panel by vectors
      for (int64_t k = 0; k < kc; ++k) {
        const float* src = B + (k0 + k) * b_rs + n0 + j;
        float* dst = panel + k * int64_t(kNR);
        for (size_t v = 0; v < kNV; ++v) Store(Load<VF32>(src + v * kN), dst + v * kN);
      }
      continue;
    }
    for (int64_t k = 0; k < kc; ++k) {
      float* dst = panel + k * int64_t(kNR);
      const float* src = B + (k0 + k) * b_rs + (n0 + j) * b_cs;
      if (b_cs == 1)
        std::memcpy(dst, src, size_t(w) * sizeof(float));
      else
        for (int64_t n = 0; n < w; ++n) dst[n] = src[n * b_cs];
      for (int64_t n = w; n < int64_t(kNR); ++n) dst[n] = 0.0f;
    }
  }
}

// Packs A(m0 .. m0+mr, k0 .. k0+kc) as kc x kMR, rows past mr zero.
void PackA(const float* A, int64_t a_rs, int64_t a_cs, int64_t m0, int64_t mr, int64_t k0, int64_t kc, float* out) {
  // Column-major A (the transposed convolution's col^T): per k, mr contiguous values,
  // instead of kMR strided streams (Zen 5, 1 thread: a 256-channel 3x3 layer at 14x14
  // 1.52 -> 1.29 ms, resnet50 52.7 -> 50.5 ms).
  if (a_rs == 1) {
    for (int64_t k = 0; k < kc; ++k) {
      const float* src = A + m0 + (k0 + k) * a_cs;
      float* dst = out + k * int64_t(kMR);
      for (int64_t r = 0; r < int64_t(kMR); ++r) dst[r] = r < mr ? src[r] : 0.0f;
    }
    return;
  }
  for (int64_t r = 0; r < int64_t(kMR); ++r) {
    if (r < mr) {
      const float* src = A + (m0 + r) * a_rs + k0 * a_cs;
      for (int64_t k = 0; k < kc; ++k) out[k * int64_t(kMR) + r] = src[k * a_cs];
    } else {
      for (int64_t k = 0; k < kc; ++k) out[k * int64_t(kMR) + r] = 0.0f;
    }
  }
}

// The A source of TiledGemm's tiles for a strided A (A(m, k) = A[m * a_rs + k * a_cs]).
// Row-major A is read in place (broadcasts from kMR row streams; packing it would cost as
// much as the tile when N is small); other layouts and the last partial tile are packed
// into this thread's scratch, one slot per tile of the row block.
inline auto StridedMaker(const float* A, int64_t a_rs, int64_t a_cs) {
  const int64_t kKC = GemmBlocks().kc, kMC = GemmBlocks().mc;
  thread_local std::vector<float> apack;
  if (apack.size() < size_t(kKC * kMC)) apack.resize(size_t(kKC * kMC));
  float* scratch = apack.data();
  return [=](int64_t m0, int64_t mr, int64_t k0, int64_t kc, int64_t slot) {
    if (a_cs == 1 && mr == int64_t(kMR)) return StridedA{A + m0 * a_rs + k0, a_rs, 1};
    float* dst = scratch + slot * kKC * int64_t(kMR);
    PackA(A, a_rs, a_cs, m0, mr, k0, kc, dst);
    return StridedA{dst, 1, int64_t(kMR)};
  };
}
}  // namespace

namespace {
// The epilogue on rows already holding their full sums (paths without register tiles).
void RowEpilogue(int64_t M, int64_t N, float* C, int64_t ldc, const float* bias, Activation act) {
  if (!bias && act == Activation::kNone) return;
  for (int64_t m = 0; m < M; ++m) {
    float* c = C + m * ldc;
    const VF32 bv = Set<VF32>(bias ? bias[m] : 0.0f);
    auto f = [&](VF32 v) { return ActivationV(act, bias ? Add(v, bv) : v); };
    int64_t n = 0;
    for (; n + int64_t(kN) <= N; n += int64_t(kN)) Store(f(Load<VF32>(c + n)), c + n);
    if (n < N) StoreN(f(LoadN<VF32>(c + n, size_t(N - n), 0.0f)), c + n, size_t(N - n));
  }
}

// The register-tiled product for columns [n_begin, n_end) of B, written to C's columns
// from 0 (C points at column n_begin). A row-major B's whole panels are read in place (a
// tile reads kNR contiguous floats of B per k either way, so the copy bought nothing: Zen
// 5, 1 thread, resnet50's 3x3 convolutions on im2col columns 1.68 -> 1.46 ms each,
// whisper_encoder's attention products 2300 -> 1946 ms in all); its last partial panel
// and other layouts are packed block by block on the fly; when `packed` is not null, B is
// read from GemmPackBF32's layout of the whole B (Ntot columns; n_begin a multiple of 64).
// Blocks of kNC columns and kKC steps of k; per block of kMC rows each B panel (kc x kNR,
// streaming through L1) meets every row tile in turn (A's block in L2).
// make_a(m0, mr, k0, kc, slot) gives the A source (StridedA, IndirectA) of the row tile
// from m0 (mr rows) over the K block from k0; slot: the tile's index in its row block
// (a strided A packs into apack's slot).
template <class MakeA>
void TiledGemm(int64_t M, int64_t K, MakeA make_a, const float* B, int64_t b_rs, int64_t b_cs, const float* packed,
               int64_t Ntot, int64_t n_begin, int64_t n_end, float* C, int64_t ldc, const float* row_bias,
               Activation act, const float* col_bias = nullptr) {
  // Scratch grows once per thread, then is reused (no allocation in steady state).
  const Blocks& blk = GemmBlocks();
  const int64_t kKC = blk.kc, kMC = blk.mc, kNC = blk.nc;
  thread_local std::vector<float> bpack;
  if (!packed && bpack.size() < size_t(kKC * kNC)) bpack.resize(size_t(kKC * kNC));
  const int64_t packed_floats = packed ? ref::GemmPackedFloats(K, Ntot) : 0;
  for (int64_t n0 = n_begin / kNC * kNC; n0 < n_end; n0 += kNC) {
    // This call's columns of the block [n0, n0 + kNC): [lo, hi).
    const int64_t lo = std::max(n0, n_begin), hi = std::min(n0 + kNC, n_end), nc = hi - lo;
    const int64_t ncp = (std::min(kNC, Ntot - n0) + int64_t(kNR) - 1) / int64_t(kNR) * int64_t(kNR);
    for (int64_t k0 = 0; k0 < K; k0 += kKC) {
      const int64_t kc = std::min(kKC, K - k0);
      const float* panels;
      // Row-major B's whole panels are read in place (rows b_rs apart: no copy of B);
      // the last partial panel and other layouts are packed.
      const int64_t whole = !packed && b_cs == 1 ? nc / int64_t(kNR) * int64_t(kNR) : 0;
      if (packed) {
        panels = packed + n0 * K + k0 * ncp + (lo - n0) / int64_t(kNR) * kc * int64_t(kNR);
      } else {
        if (whole < nc) PackB(B, b_rs, b_cs, k0, kc, lo + whole, nc - whole, bpack.data());
        panels = bpack.data();  // panel p holds the columns from lo + whole + p * kNR
      }
      for (int64_t mb = 0; mb < M; mb += kMC) {
        const int64_t mcnt = std::min(kMC, M - mb);
        struct TileA {
          decltype(make_a(0, 0, 0, 0, 0)) a;
          int64_t m0, mr;
        };
        TileA tiles[kMCMax / int64_t(kMR)];
        int64_t nt = 0;
        for (int64_t m0 = mb; m0 < mb + mcnt; m0 += int64_t(kMR), ++nt) {
          const int64_t mr = std::min<int64_t>(int64_t(kMR), M - m0);
          tiles[nt] = TileA{make_a(m0, mr, k0, kc, nt), m0, mr};
        }
        for (int64_t j = 0; j < nc; j += int64_t(kNR)) {
          const int64_t nr = std::min<int64_t>(int64_t(kNR), nc - j);
          const bool in_place = j < whole;
          const float* bp =
              in_place ? B + k0 * b_rs + lo + j : panels + ((j - whole) / int64_t(kNR)) * kc * int64_t(kNR);
          const int64_t bks = in_place ? b_rs : int64_t(kNR);
          // A packed B (a constant weight, usually from DRAM on its first use in a
          // run) is prefetched one panel ahead: the panel after this one (the next in
          // memory), its cache lines shared out over this panel's row tiles, each tile
          // spreading its share over its k steps (a burst of prefetches at a tile's start
          // filled the miss queues and was slower); none past the packed buffer's end.
          // Zen 5 (AMD EPYC family 26), 1
          // thread: resnet50 38.8 -> 37.3 ms, bert_base 109 -> 102 ms, eight 512-channel
          // 3x3 layers at 7x7 10.3 -> 8.8 ms.
          const int64_t next = packed ? (bp - packed) + kc * int64_t(kNR) : 0;  // in floats
          const int64_t lines = packed ? std::min(kc * int64_t(kNR), packed_floats - next) * int64_t(sizeof(float)) / 64
                                       : 0,
                        per = (lines + nt - 1) / nt;
          for (int64_t i = 0; i < nt; ++i) {
            const TileA& t = tiles[i];
            const int64_t pfn = std::max<int64_t>(0, std::min(lines, (i + 1) * per) - i * per);
            const char* pf = pfn ? reinterpret_cast<const char*>(packed + next) + i * per * 64 : nullptr;
            float* c = C + t.m0 * ldc + (lo - n_begin) + j;
            const bool last = k0 + kc == K;
            const float* bias = row_bias ? row_bias + t.m0 : nullptr;
            const float* cbias = col_bias ? col_bias + lo + j : nullptr;
            // A last panel of fewer columns takes the tile of as many vectors as it needs.
            const int64_t nv = (nr + int64_t(kN) - 1) / int64_t(kN);
            auto tile = [&](auto nv_c, auto pf_c) {
              Tile<decltype(nv_c)::value, decltype(pf_c)::value>(kc, t.a, bp, bks, c, ldc, size_t(t.mr), size_t(nr),
                                                                 k0 == 0, last, bias, act, cbias, pf, pfn);
            };
            auto by_width = [&](auto pf_c) {
              if (nv >= int64_t(kNV))
                tile(std::integral_constant<size_t, kNV>{}, pf_c);
              else if (nv == 1)
                tile(std::integral_constant<size_t, 1>{}, pf_c);
              else if (kNV > 2 && nv == 3)
                tile(std::integral_constant<size_t, (kNV > 2 ? 3 : 1)>{}, pf_c);
              else
                tile(std::integral_constant<size_t, 2>{}, pf_c);
            };
            if (pfn)
              by_width(std::true_type{});
            else
              by_width(std::false_type{});
          }
        }
      }
    }
  }
}

void GemmImpl(int64_t M, int64_t N, int64_t K, const float* A, int64_t a_rs, int64_t a_cs, const float* B, int64_t b_rs,
              int64_t b_cs, float* C, int64_t ldc, const float* row_bias, Activation act) {
  if (M <= 0 || N <= 0) return;
  if (K <= 0) {
    for (int64_t m = 0; m < M; ++m) std::fill(C + m * ldc, C + m * ldc + N, -0.0f);
    RowEpilogue(M, N, C, ldc, row_bias, act);
    return;
  }
  if (M < int64_t(kMR) && b_cs == 1) {
    // A few rows (matrix-vector products): B's rows are streamed in order, four at a
    // time, into rows of C that serve as the accumulators (chunks of kChunk columns,
    // which stay in L1 between the k steps): c = (((c + a0*b0) + a1*b1) + a2*b2) + a3*b3
    // is the reference's fold, k in order from -0.0. Reading B row by row keeps the
    // memory streams sequential, which matters when B comes from DRAM (classifiers).
    constexpr int64_t kChunk = 1024;
    for (int64_t n0 = 0; n0 < N; n0 += kChunk) {
      const int64_t w = std::min(kChunk, N - n0), wv = w / int64_t(kN) * int64_t(kN);
      const size_t tail = size_t(w - wv);
      for (int64_t m = 0; m < M; ++m) std::fill(C + m * ldc + n0, C + m * ldc + n0 + w, -0.0f);
      int64_t k = 0;
      for (; k + 4 <= K; k += 4) {
        const float* b0 = B + k * b_rs + n0;
        const float* b1 = b0 + b_rs;
        const float* b2 = b1 + b_rs;
        const float* b3 = b2 + b_rs;
        for (int64_t m = 0; m < M; ++m) {
          const float* a = A + m * a_rs + k * a_cs;
          const VF32 a0 = Set<VF32>(a[0]), a1 = Set<VF32>(a[a_cs]), a2 = Set<VF32>(a[2 * a_cs]),
                     a3 = Set<VF32>(a[3 * a_cs]);
          float* c = C + m * ldc + n0;
          for (int64_t n = 0; n < wv; n += int64_t(kN)) {
            VF32 s = Load<VF32>(c + n);
            s = Add(s, Mul(a0, Load<VF32>(b0 + n)));
            s = Add(s, Mul(a1, Load<VF32>(b1 + n)));
            s = Add(s, Mul(a2, Load<VF32>(b2 + n)));
            s = Add(s, Mul(a3, Load<VF32>(b3 + n)));
            Store(s, c + n);
          }
          if (tail) {
            VF32 s = LoadN<VF32>(c + wv, tail, -0.0f);
            s = Add(s, Mul(a0, LoadN<VF32>(b0 + wv, tail, 0.0f)));
            s = Add(s, Mul(a1, LoadN<VF32>(b1 + wv, tail, 0.0f)));
            s = Add(s, Mul(a2, LoadN<VF32>(b2 + wv, tail, 0.0f)));
            s = Add(s, Mul(a3, LoadN<VF32>(b3 + wv, tail, 0.0f)));
            StoreN(s, c + wv, tail);
          }
        }
      }
      for (; k < K; ++k) {
        const float* b0 = B + k * b_rs + n0;
        for (int64_t m = 0; m < M; ++m) {
          const VF32 a0 = Set<VF32>(A[m * a_rs + k * a_cs]);
          float* c = C + m * ldc + n0;
          for (int64_t n = 0; n < wv; n += int64_t(kN))
            Store(Add(Load<VF32>(c + n), Mul(a0, Load<VF32>(b0 + n))), c + n);
          if (tail)
            StoreN(Add(LoadN<VF32>(c + wv, tail, -0.0f), Mul(a0, LoadN<VF32>(b0 + wv, tail, 0.0f))), c + wv, tail);
        }
      }
      RowEpilogue(M, w, C + n0, ldc, row_bias, act);
    }
    return;
  }
  if (M < int64_t(kMR) && b_rs == 1) {
    // A few rows against a transposed B (each output's terms contiguous along k): per
    // block of kW outputs and kT steps of k, B's piece is transposed to [k][n] (data
    // movement only), then vector accumulators, one lane per output, fold k in order.
    constexpr int64_t kW = int64_t(4 * kN), kT = 64;
    alignas(64) float bt[kT * kW];
    alignas(64) float acc[kMR][kW];
    for (int64_t n0 = 0; n0 < N; n0 += kW) {
      const int64_t w = std::min(kW, N - n0);
      for (int64_t m = 0; m < M; ++m)
        for (int64_t j = 0; j < kW; ++j) acc[m][j] = -0.0f;
      for (int64_t k0 = 0; k0 < K; k0 += kT) {
        const int64_t kc = std::min(kT, K - k0);
        for (int64_t nb = 0; nb < kW; nb += int64_t(kN)) {
          if (nb >= w) {  // lanes past the last output: zeros (their results are dropped)
            for (int64_t k = 0; k < kc; ++k) Store(Set<VF32>(0.0f), bt + k * kW + nb);
            continue;
          }
          const int64_t rows = std::min<int64_t>(int64_t(kN), w - nb);
          for (int64_t kb = 0; kb < kc; kb += int64_t(kN)) {
            const int64_t cols = std::min<int64_t>(int64_t(kN), kc - kb);
            if (rows < int64_t(kN))
              for (int64_t k = kb; k < kb + cols; ++k) Store(Set<VF32>(0.0f), bt + k * kW + nb);
            TransposeTile<int64_t(kN)>(B + (n0 + nb) * b_cs + k0 + kb, b_cs, bt + kb * kW + nb, kW, rows, cols);
          }
        }
        for (int64_t m = 0; m < M; ++m) {
          VF32 v[4];
          for (size_t i = 0; i < 4; ++i) v[i] = Load<VF32>(acc[m] + i * kN);
          const float* a = A + m * a_rs + k0 * a_cs;
          for (int64_t k = 0; k < kc; ++k) {
            const VF32 av = Set<VF32>(a[k * a_cs]);
            const float* b = bt + k * kW;
            for (size_t i = 0; i < 4; ++i) v[i] = Add(v[i], Mul(av, Load<VF32>(b + i * kN)));
          }
          for (size_t i = 0; i < 4; ++i) Store(v[i], acc[m] + i * kN);
        }
      }
      for (int64_t m = 0; m < M; ++m) std::memcpy(C + m * ldc + n0, acc[m], size_t(w) * sizeof(float));
    }
    RowEpilogue(M, N, C, ldc, row_bias, act);
    return;
  }
  TiledGemm(M, K, StridedMaker(A, a_rs, a_cs), B, b_rs, b_cs, nullptr, N, 0, N, C, ldc, row_bias, act);
}
}  // namespace

void GemmF32(int64_t M, int64_t N, int64_t K, const float* A, int64_t a_rs, int64_t a_cs, const float* B, int64_t b_rs,
             int64_t b_cs, float* C, int64_t ldc) {
  GemmImpl(M, N, K, A, a_rs, a_cs, B, b_rs, b_cs, C, ldc, nullptr, Activation::kNone);
}

void GemmBiasActF32(int64_t M, int64_t N, int64_t K, const float* A, int64_t a_rs, int64_t a_cs, const float* B,
                    int64_t b_rs, int64_t b_cs, float* C, int64_t ldc, const float* row_bias, Activation act) {
  GemmImpl(M, N, K, A, a_rs, a_cs, B, b_rs, b_cs, C, ldc, row_bias, act);
}

void GemmPackBF32(int64_t K, int64_t N, const float* B, int64_t b_rs, int64_t b_cs, float* packed) {
  // Blocks of kNC columns, each K x (its width rounded up to kNR) floats, in k blocks of
  // kKC rows, each as PackB's panels: the layout TiledGemm reads.
  const int64_t kKC = GemmBlocks().kc, kNC = GemmBlocks().nc;
  for (int64_t n0 = 0; n0 < N; n0 += kNC) {
    const int64_t nc = std::min(kNC, N - n0);
    const int64_t ncp = (nc + int64_t(kNR) - 1) / int64_t(kNR) * int64_t(kNR);
    for (int64_t k0 = 0; k0 < K; k0 += kKC)
      PackB(B, b_rs, b_cs, k0, std::min(kKC, K - k0), n0, nc, packed + n0 * K + k0 * ncp);
  }
}

void GemmPackedF32(int64_t M, int64_t N, int64_t K, const float* A, int64_t a_rs, int64_t a_cs, const float* packed,
                   int64_t n_begin, int64_t n_end, float* C, int64_t ldc, const float* row_bias, Activation act) {
  if (M <= 0 || n_end <= n_begin) return;
  if (K <= 0) {
    for (int64_t m = 0; m < M; ++m) std::fill(C + m * ldc, C + m * ldc + (n_end - n_begin), -0.0f);
    RowEpilogue(M, n_end - n_begin, C, ldc, row_bias, act);
    return;
  }
  TiledGemm(M, K, StridedMaker(A, a_rs, a_cs), nullptr, 0, 0, packed, N, n_begin, n_end, C, ldc, row_bias, act);
}

void GemmPackedIndirectF32(int64_t M, int64_t N, int64_t K, const float* A, const int64_t* row_off,
                           const int64_t* k_off, const float* packed, int64_t n_begin, int64_t n_end, float* C,
                           int64_t ldc, const float* col_bias, Activation act) {
  if (M <= 0 || n_end <= n_begin) return;
  if (K <= 0) {
    for (int64_t m = 0; m < M; ++m) {
      float* c = C + m * ldc;
      for (int64_t n = n_begin; n < n_end; ++n) c[n - n_begin] = col_bias ? -0.0f + col_bias[n] : -0.0f;
      RowEpilogue(1, n_end - n_begin, c, ldc, nullptr, act);
    }
    return;
  }
  // No copy of A: each tile broadcasts from its rows' own places (rows past the last
  // repeat it; their results are not stored).
  auto make_a = [&](int64_t m0, int64_t mr, int64_t k0, int64_t, int64_t) {
    IndirectA a;
    for (size_t r = 0; r < kMR; ++r) a.rows[r] = A + row_off[m0 + std::min<int64_t>(int64_t(r), mr - 1)];
    a.koff = k_off + k0;
    return a;
  };
  TiledGemm(M, K, make_a, nullptr, 0, 0, packed, N, n_begin, n_end, C, ldc, nullptr, act, col_bias);
}

namespace {
// x[0], x[2], ..., x[2(t - 1)] in lanes [0, t) (0 < t <= kN; later lanes unspecified),
// reading only x[0 .. 2t - 2]: the stride-2 tail as two masked loads.
inline VF32 EvenLanesN(const float* x, size_t t) {
  const size_t m = 2 * t - 1;
  const VF32 a = m >= kN ? Load<VF32>(x) : LoadN<VF32>(x, m, 0.0f);
  const VF32 b = m > kN ? LoadN<VF32>(x + kN, m - kN, 0.0f) : Zero<VF32>();
  return EvenLanes(a, b);
}

// acc[i] = step(acc[i], x[i * stride]) for i < n, lane by lane (step: a lane-wise
// VF32 (acc, x) -> VF32), reading only the elements x[i * stride]. Stride 1: whole
// vectors, the tail masked. Stride 2: the even elements of two vectors while the odd
// element after the last one used is itself before an element the call reads
// (i + kN < n), then the rest (at most kN) by masked loads (EvenLanesN). Other strides
// gather into a buffer.
template <class Step>
inline void StridedSteps(float* acc, const float* x, int64_t stride, int64_t n, Step step) {
  int64_t i = 0;
  auto tail = [&](VF32 xv) {
    const size_t t = size_t(n - i);
    StoreN(step(LoadN<VF32>(acc + i, t, 0.0f), xv), acc + i, t);
  };
  if (stride == 1) {
    for (; i + int64_t(kN) <= n; i += int64_t(kN)) Store(step(Load<VF32>(acc + i), Load<VF32>(x + i)), acc + i);
    if (i < n) tail(LoadN<VF32>(x + i, size_t(n - i), 0.0f));
    return;
  }
  if (stride == 2) {
    for (; i + int64_t(kN) < n; i += int64_t(kN))
      Store(step(Load<VF32>(acc + i), EvenLanes(Load<VF32>(x + 2 * i), Load<VF32>(x + 2 * i + kN))), acc + i);
    if (i < n) tail(EvenLanesN(x + 2 * i, size_t(n - i)));
    return;
  }
  alignas(64) float buf[kN];
  for (; i < n; i += int64_t(kN)) {
    const size_t t = size_t(std::min<int64_t>(int64_t(kN), n - i));
    for (size_t j = 0; j < t; ++j) buf[j] = x[(i + int64_t(j)) * stride];
    if (t == kN)
      Store(step(Load<VF32>(acc + i), Load<VF32>(buf)), acc + i);
    else
      tail(LoadN<VF32>(buf, t, 0.0f));
  }
}

// MaxStep on lanes: v where v is NaN and a is not; a where a is NaN; else v > a ? v : a.
inline VF32 MaxStep(VF32 a, VF32 v) {
  const VF32 a_nan = Ne(a, a), v_nan = Ne(v, v);
  const VF32 take = Or(AndNot(a_nan, v_nan), Gt(v, a));  // Gt is false on NaNs
  return IfThenElse(take, v, a);
}
}  // namespace

void MulAddStridedF32(float* acc, const float* x, int64_t stride, float w, int64_t n) {
  const VF32 wv = Set<VF32>(w);
  StridedSteps(acc, x, stride, n, [wv](VF32 a, VF32 v) { return Add(a, Mul(v, wv)); });
}

void MaxStepStridedF32(float* acc, const float* x, int64_t stride, int64_t n) {
  StridedSteps(acc, x, stride, n, MaxStep);
}

// Outputs [ow, ow + n) of one plane row, NV vectors (n > (NV - 1) * kN; the last one
// masked when n < NV * kN): each lane folds the nt taps (tap j's input for column o at
// pp[j][o], weight wp[j]) in order from -0.0; NV independent chains.
template <size_t NV>
inline void PlaneRun(const float* const* pp, const VF32* wp, int64_t nt, int64_t ow, int64_t n, float* yrow) {
  const size_t last = size_t(n) - (NV - 1) * kN;  // lanes of the last vector, 1..kN
  VF32 acc[NV];
  for (size_t v = 0; v < NV; ++v) acc[v] = Set<VF32>(-0.0f);
  for (int64_t j = 0; j < nt; ++j) {
    const float* p = pp[j] + ow;
    const VF32 w = wp[j];
    Unroll(std::make_index_sequence<NV>{}, [&](auto v) {
      const VF32 x = (v + 1 < NV || last == kN) ? Load<VF32>(p + v * kN) : LoadN<VF32>(p + v * kN, last, 0.0f);
      acc[v] = Add(acc[v], Mul(x, w));
    });
  }
  Unroll(std::make_index_sequence<NV>{}, [&](auto v) {
    if (v + 1 < NV || last == kN)
      Store(acc[v], yrow + ow + int64_t(v * kN));
    else
      StoreN(acc[v], yrow + ow + int64_t(v * kN), last);
  });
}

void ConvPlaneF32(const float* x, const float* w, float* y, const Conv2DGeometry& g) {
  const int64_t IH = g.IH, IW = g.IW, OH = g.OH, OW = g.OW, KH = g.KH, KW = g.KW, SH = g.SH, SW = g.SW, DH = g.DH,
                DW = g.DW, PH = g.PH, PW = g.PW;
  if ((PH > 0 || PW > 0) && OH > 0 && OW > 0 && OW <= int64_t(4 * kN)) {
    // Padded narrow planes (wide ones lose little to their borders): copy the plane
    // into a zero-bordered one and run it unpadded, so every row goes by vectors. As in the GEMM convolution
    // (ops/conv/conv_gemm.cpp, ConvGemm2D), a +0.0 padding term with a finite weight is +-0 and leaves a nonzero
    // accumulator unchanged, so results differ from the reference at most in the sign of a zero at positions with a
    // padding tap: those are recomputed below. Non-finite weights (0 * inf) take the unpadded path.
    bool finite = true;
    for (int64_t t = 0; t < KH * KW; ++t) finite &= (F2U(w[t]) & 0x7F800000u) != 0x7F800000u;
    if (finite) {
      const int64_t PIH = std::max(IH + PH, (OH - 1) * SH + (KH - 1) * DH + 1);
      const int64_t PIW = std::max(IW + PW, (OW - 1) * SW + (KW - 1) * DW + 1);
      thread_local std::vector<float> padded;
      if (padded.size() < size_t(PIH * PIW)) padded.resize(size_t(PIH * PIW));
      std::fill(padded.begin(), padded.begin() + PIH * PIW, 0.0f);
      for (int64_t ih = 0; ih < IH; ++ih)
        std::memcpy(padded.data() + (ih + PH) * PIW + PW, x + ih * IW, size_t(IW) * sizeof(float));
      const Conv2DGeometry g2{PIH, PIW, OH, OW, KH, KW, SH, SW, DH, DW, 0, 0};
      ConvPlaneF32(padded.data(), w, y, g2);
      // Columns [clo, chi) have no padding tap in any row.
      int64_t clo = 0, chi = 0;
      while (clo < OW && clo * SW - PW < 0) ++clo;
      chi = clo;
      while (chi < OW && chi * SW - PW + (KW - 1) * DW < IW) ++chi;
      for (int64_t oh = 0; oh < OH; ++oh) {
        const int64_t ih0 = oh * SH - PH;
        const bool row_pad = ih0 < 0 || ih0 + (KH - 1) * DH >= IH;
        for (int64_t ow = 0; ow < OW; ++ow) {
          if (!row_pad && ow == clo && chi > clo) ow = chi;  // skip the interior
          if (ow >= OW) break;
          if (y[oh * OW + ow] != 0.0f) continue;
          y[oh * OW + ow] = ref::ConvPlaneOutputF32(x, w, g, oh, ow);
        }
      }
      return;
    }
  }
  // Output columns [lo, hi) have every kernel column inside the input: they go by
  // vectors; the others (and the last partial vector) by the reference's loop.
  int64_t lo = 0, hi = OW;
  for (int64_t kw = 0; kw < KW; ++kw) {
    const int64_t t = kw * DW - PW;  // iw = ow * SW + t
    const int64_t first = t >= 0 ? 0 : (-t + SW - 1) / SW;
    const int64_t end = IW - t <= 0 ? 0 : (IW - t + SW - 1) / SW;
    lo = std::max(lo, first);
    hi = std::min(hi, end);
  }
  lo = std::min(lo, OW);
  hi = std::max(hi, lo);
  auto scalar = [&](int64_t oh, int64_t ow) { y[oh * OW + ow] = ref::ConvPlaneOutputF32(x, w, g, oh, ow); };
  // Stride 2: the input's even and odd columns, split once, so each tap reads contiguously.
  thread_local std::vector<float> split;
  const int64_t half = (IW + 1) / 2;
  if (SW == 2) {
    if (split.size() < size_t(2 * IH * half)) split.resize(size_t(2 * IH * half));
    for (int64_t ih = 0; ih < IH; ++ih) {
      float* e = split.data() + ih * half;
      float* o = split.data() + (IH + ih) * half;
      for (int64_t j = 0; 2 * j < IW; ++j) e[j] = x[ih * IW + 2 * j];
      for (int64_t j = 0; 2 * j + 1 < IW; ++j) o[j] = x[ih * IW + 2 * j + 1];
    }
  }
  // Per output row: the valid taps in kernel order, each as a pointer p such that the
  // tap's input for output column ow is p[ow] (stride 1: the input row; stride 2: a half
  // of it), with its weight. Other strides gather.
  const int64_t taps = KH * KW;
  thread_local std::vector<const float*> ptr;
  thread_local std::vector<VF32> wts;
  if (ptr.size() < size_t(taps)) {
    ptr.resize(size_t(taps));
    wts.resize(size_t(taps));
  }
  for (int64_t oh = 0; oh < OH; ++oh) {
    for (int64_t ow = 0; ow < lo; ++ow) scalar(oh, ow);
    if (SW == 1 || SW == 2) {
      int64_t nt = 0;
      for (int64_t kh = 0; kh < KH; ++kh) {
        const int64_t ih = oh * SH - PH + kh * DH;
        if (ih < 0 || ih >= IH) continue;
        for (int64_t kw = 0; kw < KW; ++kw) {
          const int64_t t = kw * DW - PW;
          if (SW == 1) {
            ptr[size_t(nt)] = x + ih * IW + t;
          } else {
            // Column 2*ow + t: even t = 2q is the even half at ow + q, odd t = 2q + 1 the
            // odd half at ow + q (q rounded down).
            const int64_t q = (t >= 0 ? t : t - 1) / 2;
            ptr[size_t(nt)] = split.data() + ((t & 1) ? IH + ih : ih) * half + q;
          }
          wts[size_t(nt)] = Set<VF32>(w[kh * KW + kw]);
          ++nt;
        }
      }
      const float* const* pp = ptr.data();
      const VF32* wp = wts.data();
      float* yrow = y + oh * OW;
      int64_t ow = lo;
      // Four vectors at a time: four independent accumulator chains hide the add latency.
      for (; ow + int64_t(4 * kN) <= hi; ow += int64_t(4 * kN)) PlaneRun<4>(pp, wp, nt, ow, int64_t(4 * kN), yrow);
      // The rest (under 4 * kN columns): one chain per vector, the last one masked.
      switch ((hi - ow + int64_t(kN) - 1) / int64_t(kN)) {
        case 1: PlaneRun<1>(pp, wp, nt, ow, hi - ow, yrow); break;
        case 2: PlaneRun<2>(pp, wp, nt, ow, hi - ow, yrow); break;
        case 3: PlaneRun<3>(pp, wp, nt, ow, hi - ow, yrow); break;
        case 4: PlaneRun<4>(pp, wp, nt, ow, hi - ow, yrow); break;  // the fourth masked
        default: break;                                             // none left
      }
    } else {
      for (int64_t ow = lo; ow < hi; ++ow) scalar(oh, ow);
    }
    for (int64_t ow = hi; ow < OW; ++ow) scalar(oh, ow);
  }
}

}  // namespace ONEMODEL_NS
}  // namespace onemodel::impl
