// Convolution algorithms on the GEMM kernels (see conv_gemm.h).
#include "ops/conv/conv_gemm.h"
#include "core/per_thread.h"
#include "core/scratch.h"

#include <algorithm>
#include <cstring>

namespace onemodel::impl {
namespace ops {

namespace {
// One row of Im2Col (kernel row kh, column offset shift, valid output columns [lo, hi))
// for stride 1 and IW == OW: then position p reads input element p + off of the channel
// (off = (kh * DH - PH) * IW + shift), so the positions of every output row whose input
// row exists are one copy, then the columns outside [lo, hi) of each such row are set to
// zero (the copy's first and last elements may be skipped: they are such columns).
// Rows past the input are zeros. Fewer, longer copies than one per output row.
void Im2ColRowFlat(const ConvPlane& pl, const float* xc, int64_t kh, int64_t shift, int64_t lo, int64_t hi, int64_t p0,
                   int64_t np, float* dst) {
  const int64_t OW = pl.OW, off = (kh * pl.DH - pl.PH) * pl.IW + shift, plane = pl.IH * pl.IW;
  const int64_t oh0 = p0 / OW, oh1 = (p0 + np - 1) / OW;
  // Output rows [va, vb) have their input row (ih = oh - PH + kh * DH in [0, IH)).
  const int64_t va = std::clamp<int64_t>(pl.PH - kh * pl.DH, oh0, oh1 + 1),
                vb = std::clamp<int64_t>(pl.IH + pl.PH - kh * pl.DH, va, oh1 + 1);
  const int64_t pa = std::max(p0, va * OW), pb = std::min(p0 + np, vb * OW);  // positions with an input row
  if (pa >= pb) {
    std::fill(dst, dst + np, 0.0f);
    return;
  }
  std::fill(dst, dst + (pa - p0), 0.0f);
  std::fill(dst + (pb - p0), dst + np, 0.0f);
  const int64_t sa = std::max<int64_t>(pa + off, 0), sb = std::min<int64_t>(pb + off, plane);
  if (sb > sa) std::memcpy(dst + (sa - off - p0), xc + sa, size_t(sb - sa) * sizeof(float));
  for (int64_t oh = pa / OW; oh * OW < pb; ++oh) {  // the columns outside [lo, hi) of each row
    const int64_t r0 = oh * OW;
    for (int64_t o = 0; o < lo; ++o)
      if (r0 + o >= pa && r0 + o < pb) dst[r0 + o - p0] = 0.0f;
    for (int64_t o = std::max<int64_t>(hi, 0); o < OW; ++o)
      if (r0 + o >= pa && r0 + o < pb) dst[r0 + o - p0] = 0.0f;
  }
}

// Writes rows [r0, r1) of the columns [p0, p0 + np) of image/group xg into cb (rows of np
// floats; row r is input channel r / ksp at kernel tap r % ksp).
void Im2Col(const ConvPlane& pl, int64_t ksp, int64_t in_sp, const float* xg, int64_t p0, int64_t np, float* cb,
            int64_t r0, int64_t r1) {
  for (int64_t r = r0; r < r1; ++r) {
    const int64_t c = r / ksp, kh = (r % ksp) / pl.KW, kw = r % pl.KW;
    const float* xc = xg + c * in_sp;
    const int64_t shift = kw * pl.DW - pl.PW, lo = pl.col_lo[size_t(kw)], hi = pl.col_hi[size_t(kw)];
    float* dst = cb + r * np;
    if (pl.SH == 1 && pl.SW == 1 && pl.IW == pl.OW) {
      Im2ColRowFlat(pl, xc, kh, shift, lo, hi, p0, np, dst);
      continue;
    }
    int64_t oh = p0 / pl.OW, ow = p0 % pl.OW;
    for (int64_t i = 0; i < np;) {
      // The rest of output row oh inside this block.
      const int64_t run = std::min(np - i, pl.OW - ow);
      const int64_t ih = oh * pl.SH - pl.PH + kh * pl.DH;
      if (ih < 0 || ih >= pl.IH) {
        std::fill(dst + i, dst + i + run, 0.0f);
      } else {
        // Columns [ow, ow + run): zeros before lo and from hi, input between.
        const float* xrow = xc + ih * pl.IW + shift;
        const int64_t a = std::min(std::max(lo, ow), ow + run), b = std::max(a, std::min(hi, ow + run));
        float* d = dst + i - ow;  // d[o] is column o's slot
        std::fill(d + ow, d + a, 0.0f);
        if (pl.SW == 1)
          std::memcpy(d + a, xrow + a, size_t(b - a) * sizeof(float));
        else
          for (int64_t o = a; o < b; ++o) d[o] = xrow[o * pl.SW];
        std::fill(d + b, d + ow + run, 0.0f);
      }
      i += run;
      ow = 0;
      ++oh;
    }
  }
}

// FinishRows on a transposed tile t (np positions of channels [n0, n1): row r is position
// p0 + r of y, rows n1 - n0 apart) before it goes into y (rows ldy apart): the same steps
// per element, on a tile's long rows (every channel) where y's rows can be short (a 7x7
// plane's are 49 floats), in groups of 16 rows that stay in L2 between the steps (a whole
// tile can be larger than L2); Z's part of each group (a cache line of each of its
// channels) is transposed into scratch first.
void FinishTransposed(const OpContext& ctx, const ConvFinish& f, float* t, int64_t np, int64_t n0, int64_t n1,
                      int64_t p0, int64_t ldy) {
  const KernelTable& k = *ctx.kernels;
  const int64_t w = n1 - n0, rows = 16;  // Z's reads: 16 floats, a cache line, per channel
  auto& zt = ONEMODEL_PER_THREAD(ScratchVector<float>);
  if (f.z && zt.size() < size_t(rows * w)) zt.resize(size_t(rows * w));
  for (int64_t r0 = 0; r0 < np; r0 += rows) {
    const int64_t nr = std::min(rows, np - r0), n = nr * w;
    float* g = t + r0 * w;
    if (f.bias)
      for (int64_t r = 0; r < nr; ++r) k.BinaryF32(kBinAddF32, g + r * w, 1, f.bias + n0, 1, g + r * w, w);
    if (f.z)
      k.Transpose32(reinterpret_cast<const uint32_t*>(f.z + n0 * ldy + p0 + r0), ldy,
                    reinterpret_cast<uint32_t*>(zt.data()), w, w, nr);
    FinishSpan(ctx, f, g, zt.data(), n);
  }
}

// Y (Mg rows of P positions, rows ldy apart) as the transpose of a P x Mg product, in
// tiles: tile(p0, np, n0, n1, out, ldo) computes positions [p0, p0 + np) x channels
// [n0, n1) into out (rows ldo apart; the calling thread's scratch), and the thread that
// computed a tile transposes it into y, so no transpose waits on one thread and each
// thread writes what it computed. The tiles: equal blocks of at most pb positions; with
// several threads, at least one per thread when each keeps min_rows positions, and a
// multiple of the thread count of them (every thread gets the same share); when that
// leaves fewer blocks than threads, each block's 64-channel groups are shared out too
// (so min_rows above P / threads prefers sharing channels). More tiles per thread, taken
// by whichever thread is free, measured slower on Zen 5 (smaller GEMM tiles reread the
// weights; resnet50 at 2 threads +4% with two per thread, +8% with four). Blocks and
// groups depend on sizes and the thread count only; which thread computes a tile changes
// nothing in it. threads: 1 runs every tile on the calling thread (a caller inside
// ParallelFor). fin: finishing steps for each tile (f.z: Z at y's offsets), by the thread
// that computed it, while it is in cache: on y's rows after the transpose when the tile
// holds whole rows, else on the tile's before it.
template <class TileFn>
void TransposedTiles(const OpContext& ctx, int threads, int64_t P, int64_t Mg, int64_t pb, int64_t min_rows, float* y,
                     int64_t ldy, const TileFn& tile, const ConvFinish& fin) {
  if (P <= 0 || Mg <= 0) return;
  const int64_t groups = (Mg + 63) / 64;
  int64_t blocks = (P + std::max<int64_t>(pb, 1) - 1) / std::max<int64_t>(pb, 1), parts = 1;
  if (threads > 1) {
    blocks = std::max(blocks, std::min<int64_t>(threads, P / std::max<int64_t>(min_rows, 1)));
    if (blocks >= threads)
      blocks = std::min(P, (blocks + threads - 1) / threads * threads);
    else
      parts = std::min(groups, (threads + blocks - 1) / blocks);
  }
  auto run = [&](int64_t u0, int64_t u1) {
    auto& yt = ONEMODEL_PER_THREAD(ScratchVector<float>);
    for (int64_t u = u0; u < u1; ++u) {
      const int64_t b = u / parts, g = u % parts;
      const int64_t p0 = P * b / blocks, np = P * (b + 1) / blocks - p0;
      const int64_t n0 = std::min(Mg, groups * g / parts * 64), n1 = std::min(Mg, groups * (g + 1) / parts * 64);
      if (np <= 0 || n1 <= n0) continue;
      const int64_t w = n1 - n0;
      if (yt.size() < size_t(np * w)) yt.resize(size_t(np * w));
      tile(p0, np, n0, n1, yt.data(), w);
      // The finishing steps on y's rows where the tile holds whole rows (then they follow
      // each other in y and Z, FinishRows' long runs), else on the tile's rows (every
      // channel of the tile: y's rows in it can be short, 25 floats of a 7x7 plane).
      const bool short_rows = fin.any() && np < ldy;
      if (short_rows) FinishTransposed(ctx, fin, yt.data(), np, n0, n1, p0, ldy);
      ctx.kernels->Transpose32(reinterpret_cast<const uint32_t*>(yt.data()), w,
                               reinterpret_cast<uint32_t*>(y + n0 * ldy + p0), ldy, np, w);
      if (fin.any() && !short_rows) FinishRows(ctx, fin, y, ldy, n0, n1, p0, np);
    }
  };
  if (threads > 1)
    ParallelFor(ctx, blocks * parts, 1, run);
  else
    run(0, blocks * parts);
}

// One column block by Y^T = col^T W^T: B (Kg x np, rows b_rs apart: col or the input)
// times packed_wt, transposed into y's columns (rows P apart). parallel: the tiles over
// the pool (a caller outside ParallelFor): blocks of at least 24 positions (each packs
// only its own rows of col^T), else groups of channels; groups of channels too when the
// weights outweigh the positions (fewer positions than channels, 4+ channels per term of
// the fold: resnet50's expanding 1x1 layers at 14x14 and 7x7, where blocks of positions
// each stream every weight and 49 positions split 24 + 25 leave a tile row of 6 with one
// row used; Zen 5 per node at 2 threads 0.95x). fin: as TransposedTiles' (y and f.z here
// start at the block's first position).
void TransposedBlock(const OpContext& ctx, bool parallel, const float* B, int64_t b_rs, int64_t np, int64_t Mg,
                     int64_t Kg, const float* packed_wt, float* y, int64_t P, bool fma, const ConvFinish& fin) {
  auto* kernel = GemmFnsOf(ctx, fma).packed;
  const int threads = parallel && ctx.pool ? ctx.pool->threads() : 1;
  auto tile = [&](int64_t p0, int64_t n, int64_t n0, int64_t n1, float* out, int64_t ldo) {
    kernel(n, Mg, Kg, B + p0, 1, b_rs, packed_wt, n0, n1, out, ldo, nullptr, Activation::kNone);
  };
  TransposedTiles(ctx, threads, np, Mg, np, np < Mg && Mg >= 4 * Kg ? np : 24, y, P, tile, fin);
}

// Y^T = col^T W^T for one image (group 1) without building col: GemmPackedIndirectF32
// reads each output position's terms from the input in place (row_off: the position's
// first tap, k_off: tap (c, kh, kw)'s distance from it, c-major as col's rows), from a
// copy of the input with zero borders when some tap is padding. The P x Mg result goes
// to the scratch of the thread computing it, then is transposed into y's Mg rows of P
// (TransposedTiles: blocks of positions, or groups of 64 output channels when there are
// fewer positions than channels and blocks than threads).
// bias (null: none) and act: the epilogue, applied by the kernel per output channel; fin:
// what follows it (a fused residual), per tile (TransposedTiles).
void IndirectTransposed(const OpContext& ctx, const ConvPlane& pl, const float* xg, int64_t Cg, int64_t in_sp,
                        bool any_pad, int64_t Mg, const float* packed_wt, float* y, const float* bias, Activation act,
                        bool fma, const ConvFinish& fin) {
  const int64_t P = pl.OH * pl.OW, ksp = pl.KH * pl.KW, Kg = Cg * ksp;
  // The rows and columns that taps reach, from (-PH, -PW): all of them exist in the copy.
  const int64_t XH = (pl.OH - 1) * pl.SH + (pl.KH - 1) * pl.DH + 1, XW = (pl.OW - 1) * pl.SW + (pl.KW - 1) * pl.DW + 1;
  auto& xpad = ONEMODEL_PER_THREAD(ScratchVector<float>);
  auto& offs = ONEMODEL_PER_THREAD(std::vector<int64_t>);
  const float* src = xg;
  int64_t row = pl.IW, plane = in_sp;
  if (any_pad) {
    row = XW;
    plane = XH * XW;
    if (xpad.size() < size_t(Cg * plane)) xpad.resize(size_t(Cg * plane));
    float* xp = xpad.data();
    // Rows of the copy over the threads (a first layer has few channels of many rows).
    ParallelFor(ctx, Cg * XH, 64, [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) {
        const int64_t c = r / XH, i = r % XH;
        float* d = xp + c * plane + i * XW;
        const int64_t ih = i - pl.PH;
        if (ih < 0 || ih >= pl.IH) {
          std::fill(d, d + XW, 0.0f);
          continue;
        }
        const int64_t a = std::clamp<int64_t>(pl.PW, 0, XW), b = std::clamp<int64_t>(pl.IW + pl.PW, a, XW);
        std::fill(d, d + a, 0.0f);
        std::memcpy(d + a, xg + c * in_sp + ih * pl.IW + (a - pl.PW), size_t(b - a) * sizeof(float));
        std::fill(d + b, d + XW, 0.0f);
      }
    });
    src = xp;
  }
  if (offs.size() < size_t(P + Kg)) offs.resize(size_t(P + Kg));
  int64_t* row_off = offs.data();
  int64_t* k_off = row_off + P;
  for (int64_t oh = 0, p = 0; oh < pl.OH; ++oh)
    for (int64_t ow = 0; ow < pl.OW; ++ow, ++p) row_off[p] = oh * pl.SH * row + ow * pl.SW;
  for (int64_t k = 0; k < Kg; ++k) {
    const int64_t c = k / ksp, kh = (k % ksp) / pl.KW, kw = k % pl.KW;
    k_off[k] = c * plane + kh * pl.DH * row + kw * pl.DW;
  }
  auto* kernel = GemmFnsOf(ctx, fma).packed_indirect;
  // Blocks of positions whose results (about 256 KiB) are transposed while in L2. Every
  // tile reads the input in place, so with fewer positions than channels the threads
  // share the output channels (each tile then reads only its part of the weights).
  const int64_t pb = std::min(P, std::max<int64_t>(48, (int64_t(1) << 16) / std::max<int64_t>(Mg, 1) / 48 * 48));
  const int threads = ctx.pool ? ctx.pool->threads() : 1;
  TransposedTiles(
      ctx, threads, P, Mg, pb, P >= Mg ? 48 : P, y, P,
      [&](int64_t p0, int64_t np, int64_t n0, int64_t n1, float* out, int64_t ldo) {
        kernel(np, Mg, Kg, src, row_off + p0, k_off, packed_wt, n0, n1, out, ldo, bias, act);
      },
      fin);
}

// ConvGemm2D's fix-up: the zero results at positions with a padding tap (has_pad(p)),
// recomputed by the reference fold (output channels over the threads).
template <class HasPad>
void RecomputePaddedZeros2D(const OpContext& ctx, const ConvPlane& pl, const float* xg, int64_t Cg, int64_t in_sp,
                            const float* wg, int64_t Mg, float* yg, const HasPad& has_pad) {
  const int64_t ksp = pl.KH * pl.KW, Kg = Cg * ksp, P = pl.OH * pl.OW;
  ParallelFor(ctx, Mg, 8, [&](int64_t m_begin, int64_t m_end) {
    for (int64_t p = 0; p < P; ++p) {
      if (!has_pad(p)) continue;
      const int64_t oh = p / pl.OW, ow = p % pl.OW;
      for (int64_t m = m_begin; m < m_end; ++m) {
        float& out = yg[m * P + p];
        if (out != 0.0f) continue;
        float acc = -0.0f;
        for (int64_t c = 0; c < Cg; ++c)
          for (int64_t kh = 0; kh < pl.KH; ++kh) {
            const int64_t ih = oh * pl.SH - pl.PH + kh * pl.DH;
            if (ih < 0 || ih >= pl.IH) continue;
            for (int64_t kw = 0; kw < pl.KW; ++kw) {
              const int64_t iw = ow * pl.SW - pl.PW + kw * pl.DW;
              if (iw < 0 || iw >= pl.IW) continue;
              acc = acc + xg[c * in_sp + ih * pl.IW + iw] * wg[m * Kg + c * ksp + kh * pl.KW + kw];
            }
          }
        out = acc;
      }
    }
  });
}
// ConvGemm2D's column blocks. Each holds about 256k floats of col (1 MB, about a core's
// L2), a multiple of 64 columns (whole GEMM panels, read in place: only the last block
// has a partial one), at least 64; direct (a 1x1 kernel read in place): one block of P.
// With several threads and enough columns (count > 0), whole column blocks go to the
// threads: each builds its own columns and runs the kernel on them (one handoff per
// image and group, no B packed twice); else blocks run in turn with the GEMM itself split.
// The blocks over the threads are a multiple of the thread count of them, in whole
// 64-column panels shared out as evenly as they go (each thread the same number of
// panels, give or take one; only the last block has a partial panel: 784 positions over
// 4 blocks are 192, 192, 192 and 208 columns, where equal blocks of 196 each ended in a
// panel of 4 columns that costs a whole one). Sizes and the thread count decide them.
struct ColumnBlocks {
  int64_t P = 0, pc = 0, count = 0, panels = 0;
  int64_t Start(int64_t b) const { return std::min(P, panels * b / std::max<int64_t>(count, 1) * 64); }
  int64_t Widest() const { return (panels + count - 1) / std::max<int64_t>(count, 1) * 64; }
};
ColumnBlocks PlanColumnBlocks(int64_t P, int64_t Kg, bool direct, int threads) {
  ColumnBlocks c;
  c.P = P;
  c.panels = (P + 63) / 64;
  c.pc =
      direct ? P : std::max<int64_t>(64, std::min<int64_t>(P, (int64_t(1) << 18) / std::max<int64_t>(Kg, 1) / 64 * 64));
  if (threads > 1 && P >= 2 * 64 * threads) {
    c.pc = std::min(c.pc, std::max<int64_t>(64, (P + 2 * threads - 1) / (2 * threads)));
    c.count = ((P + c.pc - 1) / c.pc + threads - 1) / threads * threads;
  }
  return c;
}
}  // namespace

bool ConvGemm2D(const OpContext& ctx, const ConvPlane& pl, const float* x, const float* w, const float* wt,
                const float* packed_wt, int64_t N, int64_t C, int64_t M, int64_t group, int64_t in_sp, float* y,
                bool relu, const float* bias, Activation act, const ConvFinish& res, bool fma) {
  const int64_t Cg = C / group, Mg = M / group, ksp = pl.KH * pl.KW, Kg = Cg * ksp, P = pl.OH * pl.OW;
  const bool direct =
      ksp == 1 && pl.SH == 1 && pl.SW == 1 && pl.PH == 0 && pl.PW == 0 && pl.IH == pl.OH && pl.IW == pl.OW;
  int64_t max_lo = 0, min_hi = pl.OW;
  for (int64_t kw = 0; kw < pl.KW; ++kw) {
    max_lo = std::max(max_lo, pl.col_lo[size_t(kw)]);
    min_hi = std::min(min_hi, pl.col_hi[size_t(kw)]);
  }
  auto has_pad = [&](int64_t p) {
    const int64_t oh = p / pl.OW, ow = p % pl.OW;
    const int64_t ih0 = oh * pl.SH - pl.PH, ih1 = ih0 + (pl.KH - 1) * pl.DH;
    return ih0 < 0 || ih1 >= pl.IH || ow < max_lo || ow >= min_hi;
  };
  // Whether any output has a padding tap (the first and last rows and columns decide).
  const bool any_pad =
      pl.OH > 0 && pl.OW > 0 &&
      (-pl.PH < 0 || (pl.OH - 1) * pl.SH - pl.PH + (pl.KH - 1) * pl.DH >= pl.IH || max_lo > 0 || min_hi < pl.OW);
  // Y^T = col^T W^T (packed_wt): for a 1x1 kernel the epilogue (tile_epi) and with more
  // taps (in place, IndirectTransposed) a fused residual (res.z: Z at y's offsets) follow
  // each tile (TransposedTiles); the row-major kernel applies the epilogue and the residual
  // follows each column block. fin: what follows, per group at the offsets of finish_of.
  const bool transposed = packed_wt && group == 1, indirect = transposed && ksp > 1;
  const bool fuse = (bias || act != Activation::kNone || res.z) && (relu || !any_pad) && !(wt && P == 1);
  const bool tile_epi = transposed && !indirect;
  const float* epi_bias = fuse && !tile_epi ? bias : nullptr;
  const Activation epi_act = fuse && !tile_epi ? act : Activation::kNone;
  const ConvFinish fin{fuse && tile_epi ? bias : nullptr, fuse && tile_epi ? act : Activation::kNone,
                       fuse ? res.z : nullptr, res.z_first, res.post};
  auto finish_of = [&](int64_t n, int64_t grp, int64_t p0) {
    return ConvFinish{fin.bias ? fin.bias + grp * Mg : nullptr, fin.act,
                      fin.z ? fin.z + (n * M + grp * Mg) * P + p0 : nullptr, fin.z_first, fin.post};
  };
  const int threads = ctx.pool ? ctx.pool->threads() : 1;
  const ColumnBlocks blocks = PlanColumnBlocks(P, Kg, direct, threads);
  const int64_t pc = blocks.pc;
  const bool by_blocks = blocks.count > 0;
  auto* kernel = GemmFnsOf(ctx, fma).bias_act;
  auto im2col = [&](const float* xg, int64_t p0, int64_t np, float* cb, int64_t r0, int64_t r1) {
    Im2Col(pl, ksp, in_sp, xg, p0, np, cb, r0, r1);
  };
  for (int64_t n = 0; n < N; ++n)
    for (int64_t grp = 0; grp < group; ++grp) {
      const float* xg = x + (n * C + grp * Cg) * in_sp;
      const float* wg = w + grp * Mg * Kg;
      float* yg = y + (n * M + grp * Mg) * P;
      if (indirect) {
        IndirectTransposed(ctx, pl, xg, Cg, in_sp, any_pad, Mg, packed_wt, yg, epi_bias ? epi_bias + grp * Mg : nullptr,
                           epi_act, fma, finish_of(n, grp, 0));
      } else if (by_blocks) {
        ParallelFor(ctx, blocks.count, 1, [&](int64_t b0, int64_t b1) {
          auto& cols = ONEMODEL_PER_THREAD(ScratchVector<float>);
          if (!direct && cols.size() < size_t(Kg * blocks.Widest())) cols.resize(size_t(Kg * blocks.Widest()));
          for (int64_t blk = b0; blk < b1; ++blk) {
            const int64_t p0 = blocks.Start(blk), np = blocks.Start(blk + 1) - p0;
            if (np <= 0) continue;
            const float* gb = epi_bias ? epi_bias + grp * Mg : nullptr;
            const float* B = xg + p0;
            int64_t b_rs = in_sp;
            if (!direct) {
              im2col(xg, p0, np, cols.data(), 0, Kg);
              B = cols.data();
              b_rs = np;
            }
            if (transposed) {
              TransposedBlock(ctx, false, B, b_rs, np, Mg, Kg, packed_wt, yg + p0, P, fma, finish_of(n, grp, p0));
            } else {
              kernel(Mg, np, Kg, wg, Kg, 1, B, b_rs, 1, yg + p0, P, gb, epi_act);
              const ConvFinish f = finish_of(n, grp, p0);
              if (f.any()) FinishRows(ctx, f, yg + p0, P, 0, Mg, 0, np);  // the block still in this core's cache
            }
          }
        });
      } else {
        auto& col = ONEMODEL_PER_THREAD(ScratchVector<float>);
        if (!direct && col.size() < size_t(Kg * pc)) col.resize(size_t(Kg * pc));
        for (int64_t p0 = 0; p0 < P; p0 += pc) {
          const int64_t np = std::min(pc, P - p0);
          const float* B = xg + p0;
          int64_t b_rs = in_sp;
          if (!direct) {
            float* cb = col.data();
            ParallelFor(ctx, Kg, 8, [&](int64_t r0, int64_t r1) { im2col(xg, p0, np, cb, r0, r1); });
            B = cb;
            b_rs = np;
          }
          if (wt && np == 1) {
            // One position: C^T (1 x Mg) = col^T W^T, W^T's rows read in place.
            ParallelGemmF32(ctx, 1, Mg, Kg, B, 0, b_rs, wt + grp * Mg, M, 1, yg + p0, 1, nullptr, Activation::kNone,
                            fma);
          } else if (transposed) {
            TransposedBlock(ctx, true, B, b_rs, np, Mg, Kg, packed_wt, yg + p0, P, fma, finish_of(n, grp, p0));
          } else {
            ParallelGemmF32(ctx, Mg, np, Kg, wg, Kg, 1, B, b_rs, 1, yg + p0, P,
                            epi_bias ? epi_bias + grp * Mg : nullptr, epi_act, fma);
            const ConvFinish f = finish_of(n, grp, p0);
            if (f.any())  // rows of channels over the threads, as the product's rows went
              ParallelFor(ctx, Mg, std::max<int64_t>(1, 8192 / np),
                          [&](int64_t m0, int64_t m1) { FinishRows(ctx, f, yg + p0, P, m0, m1, 0, np); });
          }
        }
      }
      if (!relu && any_pad) RecomputePaddedZeros2D(ctx, pl, xg, Cg, in_sp, wg, Mg, yg, has_pad);
    }
  return fuse;
}

namespace {

// TapGemm's fix-up: the zero results at positions with a padding tap, recomputed by the
// reference fold (output channels over the threads). bmin, bmax: per dimension the least
// and greatest tap offset; in_st: the input's row-major strides.
void RecomputePaddedZeros(const OpContext& ctx, const Taps& tg, const float* x, int64_t Cg, int64_t in_sp,
                          const float* w, int64_t Mg, float* y, const std::vector<int64_t>& bmin,
                          const std::vector<int64_t>& bmax, const std::vector<int64_t>& in_st) {
  const size_t D = tg.in.size();
  int64_t T = 1, P = 1;
  for (const auto& v : tg.b) T *= int64_t(v.size());
  for (int64_t n : tg.out) P *= n;
  const int64_t Kg = Cg * T;
  // Positions with a padding tap, per dimension.
  std::vector<std::vector<uint8_t>> partial(D);
  bool any = false;
  for (size_t d = 0; d < D; ++d) {
    for (int64_t o = 0; o < tg.out[d]; ++o) {
      const int64_t i0 = tg.a[d] * o + bmin[d], i1 = tg.a[d] * o + bmax[d];
      partial[d].push_back(uint8_t(i0 < 0 || i1 >= tg.in[d]));
      any |= partial[d].back() != 0;
    }
  }
  if (!any) return;
  // Zero results at those positions, by the reference fold (output channels over the
  // threads).
  ParallelFor(ctx, Mg, 8, [&](int64_t m0, int64_t m1) {
    std::vector<int64_t> pos(D), tix(D), tap_off, tap_t;
    for (int64_t p = 0; p < P; ++p) {
      int64_t rest = p;
      bool pad = false;
      for (size_t d = D; d-- > 0;) {
        pos[d] = rest % tg.out[d];
        rest /= tg.out[d];
        pad |= partial[d][size_t(pos[d])] != 0;
      }
      if (!pad) continue;
      bool zero = false;
      for (int64_t m = m0; m < m1 && !zero; ++m) zero = y[m * P + p] == 0.0f;
      if (!zero) continue;
      tap_off.clear();
      tap_t.clear();
      for (int64_t t = 0; t < T; ++t) {
        int64_t tt = t, off = 0;
        bool inside = true;
        for (size_t d = D; d-- > 0;) {
          const int64_t nt = int64_t(tg.b[d].size());
          const int64_t ic = tg.a[d] * pos[d] + tg.b[d][size_t(tt % nt)];
          tt /= nt;
          inside = inside && ic >= 0 && ic < tg.in[d];
          off += ic * in_st[d];
        }
        if (inside) {
          tap_off.push_back(off);
          tap_t.push_back(t);
        }
      }
      for (int64_t m = m0; m < m1; ++m) {
        float& out = y[m * P + p];
        if (out != 0.0f) continue;
        float acc = -0.0f;
        for (int64_t c = 0; c < Cg; ++c) {
          const float* xc = x + c * in_sp;
          const float* wc = w + m * Kg + c * T;
          for (size_t k = 0; k < tap_off.size(); ++k) acc = acc + xc[tap_off[k]] * wc[tap_t[k]];
        }
        out = acc;
      }
    }
  });
}

}  // namespace

void TapGemm(const OpContext& ctx, const Taps& tg, const float* x, int64_t Cg, int64_t in_sp, const float* w,
             int64_t Mg, float* y, bool fma) {
  const size_t D = tg.in.size();
  int64_t T = 1, P = 1;
  for (const auto& v : tg.b) T *= int64_t(v.size());
  for (int64_t n : tg.out) P *= n;
  const int64_t Kg = Cg * T;
  if (P == 0 || Mg == 0) return;
  if (Kg == 0) {  // no term at all: -0.0, as the reference's empty fold
    std::fill(y, y + Mg * P, -0.0f);
    return;
  }
  std::vector<int64_t> in_st(D, 1), bmin(D), bmax(D);
  for (size_t d = D - 1; d > 0; --d) in_st[d - 1] = in_st[d] * tg.in[d];
  for (size_t d = 0; d < D; ++d) {
    bmin[d] = *std::min_element(tg.b[d].begin(), tg.b[d].end());
    bmax[d] = *std::max_element(tg.b[d].begin(), tg.b[d].end());
  }
  const size_t L = D - 1;  // the last dimension runs along rows
  const int64_t nl = tg.out[L], al = tg.a[L], inl = tg.in[L];
  std::vector<int64_t> lo_l, hi_l;  // per last-dimension tap: outputs [lo, hi) inside the input
  for (int64_t bl : tg.b[L]) {
    int64_t lo = bl >= 0 ? 0 : (-bl + al - 1) / al;
    int64_t hi = inl - bl <= 0 ? 0 : (inl - bl + al - 1) / al;
    lo = std::min(lo, nl);
    lo_l.push_back(lo);
    hi_l.push_back(std::max(lo, std::min(hi, nl)));
  }
  // Writes rows [r0, r1) of the columns [p0, p0 + np) into cb (np apart).
  auto im2col = [&](int64_t p0, int64_t np, float* cb, int64_t r0, int64_t r1) {
    std::vector<int64_t> tix(D), lead(D);
    for (int64_t r = r0; r < r1; ++r) {
      int64_t t = r % T;
      for (size_t d = D; d-- > 0;) {
        const int64_t nt = int64_t(tg.b[d].size());
        tix[d] = t % nt;
        t /= nt;
      }
      const float* xc = x + (r / T) * in_sp;
      const int64_t bl = tg.b[L][size_t(tix[L])], lo = lo_l[size_t(tix[L])], hi = hi_l[size_t(tix[L])];
      float* dst = cb + r * np;
      int64_t ol = p0 % nl, rest = p0 / nl;
      for (size_t d = L; d-- > 0;) {
        lead[d] = rest % tg.out[d];
        rest /= tg.out[d];
      }
      for (int64_t i = 0; i < np;) {
        const int64_t run = std::min(np - i, nl - ol);
        int64_t off = 0;
        bool inside = true;
        for (size_t d = 0; d < L && inside; ++d) {
          const int64_t ic = tg.a[d] * lead[d] + tg.b[d][size_t(tix[d])];
          inside = ic >= 0 && ic < tg.in[d];
          off += ic * in_st[d];
        }
        if (!inside) {
          std::fill(dst + i, dst + i + run, 0.0f);
        } else {
          const int64_t s = std::min(std::max(lo, ol), ol + run), e = std::max(s, std::min(hi, ol + run));
          float* dd = dst + i - ol;  // dd[o] is last-dimension output o's slot
          std::fill(dd + ol, dd + s, 0.0f);
          if (e > s) {  // e == s: nothing read (x may then be empty, xc null)
            const float* xrow = xc + off + bl;
            if (al == 1)
              std::memcpy(dd + s, xrow + s, size_t(e - s) * sizeof(float));
            else
              for (int64_t o = s; o < e; ++o) dd[o] = xrow[o * al];
          }
          std::fill(dd + e, dd + ol + run, 0.0f);
        }
        i += run;
        ol = 0;
        for (size_t d = L; d-- > 0;) {
          if (++lead[d] < tg.out[d]) break;
          lead[d] = 0;
        }
      }
    }
  };
  const int64_t pc = std::max<int64_t>(64, std::min<int64_t>(P, (int64_t(1) << 18) / Kg));
  auto& col_tl = ONEMODEL_PER_THREAD(ScratchVector<float>);
  ScratchVector<float>& col = col_tl;  // the workers below use this thread's buffer
  if (col.size() < size_t(Kg * std::min(pc, P))) col.resize(size_t(Kg * std::min(pc, P)));
  for (int64_t p0 = 0; p0 < P; p0 += pc) {
    const int64_t np = std::min(pc, P - p0);
    float* cb = col.data();
    ParallelFor(ctx, Kg, 8, [&](int64_t r0, int64_t r1) { im2col(p0, np, cb, r0, r1); });
    ParallelGemmF32(ctx, Mg, np, Kg, w, Kg, 1, cb, np, 1, y + p0, P, nullptr, Activation::kNone, fma);
  }
  RecomputePaddedZeros(ctx, tg, x, Cg, in_sp, w, Mg, y, bmin, bmax, in_st);
}

}  // namespace ops
}  // namespace onemodel::impl
