// Per-target dense linear algebra kernels (contracts in ref/gemm.h), written once on
// the vector vocabulary. Vector lanes and register tiles split *outputs*: each C
// element keeps one accumulator that folds its K products in k order from -0.0, as
// acc = acc + (a * b) with the product rounded first; K blocks carry the accumulator
// through C. So every target, tile shape and thread split gives the reference's bits.
// The same code with kFma = true is fast mode's twin (GemmFmaF32 and the others, ref/gemm.h):
// each step one fused multiply-add, the fold order unchanged, so every target with a
// hardware FMA (ONEMODEL_TARGET_HAS_FMA, simd/simd.h) gives ref::GemmFmaF32's bits; targets without one forward
// the twins to the reference loops.
#include <algorithm>
#include <cstring>
#include <utility>
#include <vector>

#include "core/bits.h"
#include "core/cache_info.h"
#include "kernels/fma_v.h"
#include "kernels/kernels.h"
#include "ref/conv.h"
#include "ref/gemm.h"
#include "simd/simd.h"
#include "kernels/transpose.h"
#include "kernels/activation_v.h"
#include "core/per_thread.h"
#include "core/scratch.h"

namespace onemodel::impl {
namespace ONEMODEL_NS {
namespace {

constexpr size_t kN = Lanes<VF32>();

#if defined(_MSC_VER) && !defined(__clang__)
#define ONEMODEL_NOINLINE __declspec(noinline)
#else
#define ONEMODEL_NOINLINE __attribute__((noinline))
#endif

// The fast twins' step: one fused multiply-add (a single rounding). Not in the vector
// vocabulary (simd/simd.h has no FMA, exact-contract section 2): only the kFma instances
// below, reached only from fast rows, use it.
// acc + a * b: exact (the product rounded, then the sum) or fused.
template <bool kFma>
inline VF32 Step(VF32 acc, VF32 a, VF32 b) {
  if constexpr (kFma) {
#if defined(ONEMODEL_TARGET_HAS_FMA)
    return FmaMulAdd(a, b, acc);
#else
    static_assert(!kFma, "no FMA on this target: the twins forward to the reference");
#endif
  } else {
    return Add(acc, Mul(a, b));
  }
}
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
// NV: vectors per row; a last panel of at most kN columns takes the 1-vector tile. MR:
// the rows the tile computes (kMR, or fewer for a last partial row tile: mr <= MR).
// last: this K block ends the fold; then the epilogue (GemmBiasActF32) applies before the
// store: + bias[r] (bias: this tile's first row's, or null) or + cbias[col] (cbias: this
// tile's first column's, or null), then activation `act`. pf, pfn: pfn cache lines from
// pf to prefetch into L2, spread evenly over the k steps (memory hints only).
template <bool kFma, size_t MR, size_t NV, bool kPrefetch, class ASrc>
inline void Tile(int64_t kc, const ASrc& a, const float* Bp, int64_t bks, float* C, int64_t ldc, size_t mr, size_t nr,
                 bool first, bool last = false, const float* bias = nullptr, Activation act = Activation::kNone,
                 const float* cbias = nullptr, const char* pf = nullptr, int64_t pfn = 0) {
  // Plain arrays with fully unrolled constant-trip loops: the compilers keep every
  // accumulator in a register (lambdas over the array made GCC store them each step).
  static_assert(MR >= 1 && MR <= kMR, "a tile has 1 to kMR rows");
  VF32 acc[MR * NV];
#pragma GCC unroll 32
  for (size_t i = 0; i < MR * NV; ++i) {
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
    for (size_t r = 0; r < MR; ++r) {
      const VF32 av = Set<VF32>(a.At(ak, r));
#pragma GCC unroll 4
      for (size_t v = 0; v < NV; ++v) acc[r * NV + v] = Step<kFma>(acc[r * NV + v], av, bv[v]);
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
  for (size_t r = 0; r < MR; ++r) {
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

// A last row tile of fewer than kMR rows, out of line: inlined beside the full tiles,
// these instances made GCC compile TiledGemm's full tiles 4-8% slower (Zen 5).
template <bool kFma, size_t MR, size_t NV, class ASrc>
ONEMODEL_NOINLINE void PartialTile(int64_t kc, const ASrc& a, const float* Bp, int64_t bks, float* C, int64_t ldc,
                                   size_t mr, size_t nr, bool first, bool last, const float* bias, Activation act,
                                   const float* cbias) {
  Tile<kFma, MR, NV, false>(kc, a, Bp, bks, C, ldc, mr, nr, first, last, bias, act, cbias);
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
  auto& apack = ONEMODEL_PER_THREAD(ScratchVector<float>);
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
template <bool kFma, class MakeA>
void TiledGemm(int64_t M, int64_t K, MakeA make_a, const float* B, int64_t b_rs, int64_t b_cs, const float* packed,
               int64_t Ntot, int64_t n_begin, int64_t n_end, float* C, int64_t ldc, const float* row_bias,
               Activation act, const float* col_bias = nullptr) {
  // Scratch grows once per thread, then is reused (no allocation in steady state).
  const Blocks& blk = GemmBlocks();
  const int64_t kKC = blk.kc, kMC = blk.mc, kNC = blk.nc;
  auto& bpack = ONEMODEL_PER_THREAD(ScratchVector<float>);
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
          // 3x3 layers at 7x7 10.3 -> 8.8 ms. The full row tiles share the lines (a last
          // partial one prefetches only when it is the block's only tile).
          const int64_t next = packed ? (bp - packed) + kc * int64_t(kNR) : 0;  // in floats
          const int64_t sharers = tiles[nt - 1].mr == int64_t(kMR) || nt == 1 ? nt : nt - 1;
          const int64_t lines = packed ? std::min(kc * int64_t(kNR), packed_floats - next) * int64_t(sizeof(float)) / 64
                                       : 0,
                        per = (lines + sharers - 1) / sharers;
          for (int64_t i = 0; i < nt; ++i) {
            const TileA& t = tiles[i];
            const int64_t pfn = std::max<int64_t>(0, std::min(lines, (i + 1) * per) - i * per);
            const char* pf = pfn ? reinterpret_cast<const char*>(packed + next) + i * per * 64 : nullptr;
            float* c = C + t.m0 * ldc + (lo - n_begin) + j;
            const bool last = k0 + kc == K;
            const float* bias = row_bias ? row_bias + t.m0 : nullptr;
            const float* cbias = col_bias ? col_bias + lo + j : nullptr;
            // A last panel of fewer columns takes the tile of as many vectors as it needs,
            // a last row tile of fewer rows one of 1, 2 or 4 rows when they suffice (the
            // rows past mr of a kMR tile cost as much as the others: resnet50's 49
            // positions are 8 tiles of 6 and one of 1). Tile shapes never change bits.
            const int64_t nv = (nr + int64_t(kN) - 1) / int64_t(kN);
            auto tile = [&](auto mr_c, auto nv_c, auto pf_c) {
              // A 1 x 1-vector tile runs as 2 rows: its one-accumulator instance made
              // mingw-w64's GCC 12 fail (an internal compiler error in SRA at -O1).
              constexpr size_t kVecs = decltype(nv_c)::value,
                               kRows = decltype(mr_c)::value == 1 && kVecs == 1 ? 2 : decltype(mr_c)::value;
              if constexpr (kRows == kMR)
                Tile<kFma, kRows, kVecs, decltype(pf_c)::value>(kc, t.a, bp, bks, c, ldc, size_t(t.mr), size_t(nr),
                                                                k0 == 0, last, bias, act, cbias, pf, pfn);
              else
                PartialTile<kFma, kRows, kVecs>(kc, t.a, bp, bks, c, ldc, size_t(t.mr), size_t(nr), k0 == 0, last, bias,
                                                act, cbias);
            };
            auto by_width = [&](auto mr_c, auto pf_c) {
              if (nv >= int64_t(kNV))
                tile(mr_c, std::integral_constant<size_t, kNV>{}, pf_c);
              else if (nv == 1)
                tile(mr_c, std::integral_constant<size_t, 1>{}, pf_c);
              else if (kNV > 2 && nv == 3)
                tile(mr_c, std::integral_constant<size_t, (kNV > 2 ? 3 : 1)>{}, pf_c);
              else
                tile(mr_c, std::integral_constant<size_t, 2>{}, pf_c);
            };
            using Full = std::integral_constant<size_t, kMR>;
            if (pfn || t.mr == int64_t(kMR) || (kMR <= 4 && t.mr > 2))
              pfn ? by_width(Full{}, std::true_type{}) : by_width(Full{}, std::false_type{});
            else if (t.mr == 1)
              by_width(std::integral_constant<size_t, 1>{}, std::false_type{});
            else if (t.mr == 2)
              by_width(std::integral_constant<size_t, 2>{}, std::false_type{});
            else if (t.mr <= 4)
              by_width(std::integral_constant<size_t, (kMR > 4 ? 4 : kMR)>{}, std::false_type{});
            else
              by_width(Full{}, std::false_type{});
          }
        }
      }
    }
  }
}

template <bool kFma>
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
            s = Step<kFma>(s, a0, Load<VF32>(b0 + n));
            s = Step<kFma>(s, a1, Load<VF32>(b1 + n));
            s = Step<kFma>(s, a2, Load<VF32>(b2 + n));
            s = Step<kFma>(s, a3, Load<VF32>(b3 + n));
            Store(s, c + n);
          }
          if (tail) {
            VF32 s = LoadN<VF32>(c + wv, tail, -0.0f);
            s = Step<kFma>(s, a0, LoadN<VF32>(b0 + wv, tail, 0.0f));
            s = Step<kFma>(s, a1, LoadN<VF32>(b1 + wv, tail, 0.0f));
            s = Step<kFma>(s, a2, LoadN<VF32>(b2 + wv, tail, 0.0f));
            s = Step<kFma>(s, a3, LoadN<VF32>(b3 + wv, tail, 0.0f));
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
            Store(Step<kFma>(Load<VF32>(c + n), a0, Load<VF32>(b0 + n)), c + n);
          if (tail)
            StoreN(Step<kFma>(LoadN<VF32>(c + wv, tail, -0.0f), a0, LoadN<VF32>(b0 + wv, tail, 0.0f)), c + wv, tail);
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
            for (size_t i = 0; i < 4; ++i) v[i] = Step<kFma>(v[i], av, Load<VF32>(b + i * kN));
          }
          for (size_t i = 0; i < 4; ++i) Store(v[i], acc[m] + i * kN);
        }
      }
      for (int64_t m = 0; m < M; ++m) std::memcpy(C + m * ldc + n0, acc[m], size_t(w) * sizeof(float));
    }
    RowEpilogue(M, N, C, ldc, row_bias, act);
    return;
  }
  TiledGemm<kFma>(M, K, StridedMaker(A, a_rs, a_cs), B, b_rs, b_cs, nullptr, N, 0, N, C, ldc, row_bias, act);
}

template <bool kFma>
void GemmPackedImpl(int64_t M, int64_t N, int64_t K, const float* A, int64_t a_rs, int64_t a_cs, const float* packed,
                    int64_t n_begin, int64_t n_end, float* C, int64_t ldc, const float* row_bias, Activation act) {
  if (M <= 0 || n_end <= n_begin) return;
  if (K <= 0) {
    for (int64_t m = 0; m < M; ++m) std::fill(C + m * ldc, C + m * ldc + (n_end - n_begin), -0.0f);
    RowEpilogue(M, n_end - n_begin, C, ldc, row_bias, act);
    return;
  }
  TiledGemm<kFma>(M, K, StridedMaker(A, a_rs, a_cs), nullptr, 0, 0, packed, N, n_begin, n_end, C, ldc, row_bias, act);
}

template <bool kFma>
void GemmPackedIndirectImpl(int64_t M, int64_t N, int64_t K, const float* A, const int64_t* row_off,
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
  TiledGemm<kFma>(M, K, make_a, nullptr, 0, 0, packed, N, n_begin, n_end, C, ldc, nullptr, act, col_bias);
}
}  // namespace

void GemmF32(int64_t M, int64_t N, int64_t K, const float* A, int64_t a_rs, int64_t a_cs, const float* B, int64_t b_rs,
             int64_t b_cs, float* C, int64_t ldc) {
  GemmImpl<false>(M, N, K, A, a_rs, a_cs, B, b_rs, b_cs, C, ldc, nullptr, Activation::kNone);
}

void GemmBiasActF32(int64_t M, int64_t N, int64_t K, const float* A, int64_t a_rs, int64_t a_cs, const float* B,
                    int64_t b_rs, int64_t b_cs, float* C, int64_t ldc, const float* row_bias, Activation act) {
  GemmImpl<false>(M, N, K, A, a_rs, a_cs, B, b_rs, b_cs, C, ldc, row_bias, act);
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
  GemmPackedImpl<false>(M, N, K, A, a_rs, a_cs, packed, n_begin, n_end, C, ldc, row_bias, act);
}

void GemmPackedIndirectF32(int64_t M, int64_t N, int64_t K, const float* A, const int64_t* row_off,
                           const int64_t* k_off, const float* packed, int64_t n_begin, int64_t n_end, float* C,
                           int64_t ldc, const float* col_bias, Activation act) {
  GemmPackedIndirectImpl<false>(M, N, K, A, row_off, k_off, packed, n_begin, n_end, C, ldc, col_bias, act);
}

// Fast mode's twins (ref/gemm.h): the kFma instances, or the reference loops where the
// target has no FMA (FillKernelTable then lists the reference's own entries).
#if defined(ONEMODEL_TARGET_HAS_FMA)
void GemmFmaF32(int64_t M, int64_t N, int64_t K, const float* A, int64_t a_rs, int64_t a_cs, const float* B,
                int64_t b_rs, int64_t b_cs, float* C, int64_t ldc) {
  GemmImpl<true>(M, N, K, A, a_rs, a_cs, B, b_rs, b_cs, C, ldc, nullptr, Activation::kNone);
}

void GemmBiasActFmaF32(int64_t M, int64_t N, int64_t K, const float* A, int64_t a_rs, int64_t a_cs, const float* B,
                       int64_t b_rs, int64_t b_cs, float* C, int64_t ldc, const float* row_bias, Activation act) {
  GemmImpl<true>(M, N, K, A, a_rs, a_cs, B, b_rs, b_cs, C, ldc, row_bias, act);
}

void GemmPackedFmaF32(int64_t M, int64_t N, int64_t K, const float* A, int64_t a_rs, int64_t a_cs, const float* packed,
                      int64_t n_begin, int64_t n_end, float* C, int64_t ldc, const float* row_bias, Activation act) {
  GemmPackedImpl<true>(M, N, K, A, a_rs, a_cs, packed, n_begin, n_end, C, ldc, row_bias, act);
}

void GemmPackedIndirectFmaF32(int64_t M, int64_t N, int64_t K, const float* A, const int64_t* row_off,
                              const int64_t* k_off, const float* packed, int64_t n_begin, int64_t n_end, float* C,
                              int64_t ldc, const float* col_bias, Activation act) {
  GemmPackedIndirectImpl<true>(M, N, K, A, row_off, k_off, packed, n_begin, n_end, C, ldc, col_bias, act);
}
#else
namespace {
// Columns [n_begin, n_end) of the B that GemmPackBF32 packed (K x N), row-major into *out
// (K x (n_end - n_begin)): the inverse of its layout (blocks of kNC columns, each in k
// blocks of kKC rows of kNR-column panels).
void UnpackColumns(int64_t K, int64_t N, const float* packed, int64_t n_begin, int64_t n_end, std::vector<float>* out) {
  const int64_t kKC = GemmBlocks().kc, kNC = GemmBlocks().nc, w = n_end - n_begin;
  out->assign(size_t(std::max<int64_t>(K * w, 1)), 0.0f);
  for (int64_t n = n_begin; n < n_end; ++n) {
    const int64_t n0 = n / kNC * kNC;
    const int64_t ncp = (std::min(kNC, N - n0) + int64_t(kNR) - 1) / int64_t(kNR) * int64_t(kNR);
    const int64_t panel = (n - n0) / int64_t(kNR), lane = (n - n0) % int64_t(kNR);
    for (int64_t k = 0; k < K; ++k) {
      const int64_t k0 = k / kKC * kKC, kc = std::min(kKC, K - k0);
      (*out)[size_t(k * w + (n - n_begin))] =
          packed[n0 * K + k0 * ncp + panel * kc * int64_t(kNR) + (k - k0) * int64_t(kNR) + lane];
    }
  }
}
}  // namespace

void GemmFmaF32(int64_t M, int64_t N, int64_t K, const float* A, int64_t a_rs, int64_t a_cs, const float* B,
                int64_t b_rs, int64_t b_cs, float* C, int64_t ldc) {
  ref::GemmFmaF32(M, N, K, A, a_rs, a_cs, B, b_rs, b_cs, C, ldc);
}

void GemmBiasActFmaF32(int64_t M, int64_t N, int64_t K, const float* A, int64_t a_rs, int64_t a_cs, const float* B,
                       int64_t b_rs, int64_t b_cs, float* C, int64_t ldc, const float* row_bias, Activation act) {
  ref::GemmBiasActFmaF32(M, N, K, A, a_rs, a_cs, B, b_rs, b_cs, C, ldc, row_bias, act);
}

// The reference's packed layout is row-major K x N, this target's panels are not: unpack
// the needed columns first. Never on a hot path (KernelTable::fma_f32 is false here, so
// only a forced row comes here); the session's packed weights are this target's layout.
void GemmPackedFmaF32(int64_t M, int64_t N, int64_t K, const float* A, int64_t a_rs, int64_t a_cs, const float* packed,
                      int64_t n_begin, int64_t n_end, float* C, int64_t ldc, const float* row_bias, Activation act) {
  std::vector<float> b;
  UnpackColumns(K, N, packed, n_begin, n_end, &b);
  ref::GemmBiasActFmaF32(M, n_end - n_begin, K, A, a_rs, a_cs, b.data(), n_end - n_begin, 1, C, ldc, row_bias, act);
}

void GemmPackedIndirectFmaF32(int64_t M, int64_t N, int64_t K, const float* A, const int64_t* row_off,
                              const int64_t* k_off, const float* packed, int64_t n_begin, int64_t n_end, float* C,
                              int64_t ldc, const float* col_bias, Activation act) {
  std::vector<float> b;
  UnpackColumns(K, N, packed, n_begin, n_end, &b);
  const int64_t w = n_end - n_begin;
  ref::GemmPackedIndirectFmaF32(M, w, K, A, row_off, k_off, b.data(), 0, w, C, ldc,
                                col_bias ? col_bias + n_begin : nullptr, act);
}
#endif

}  // namespace ONEMODEL_NS
}  // namespace onemodel::impl
