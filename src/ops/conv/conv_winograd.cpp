// Winograd F(4x4, 3x3) convolutions (see conv_winograd.h).
//
// Per image, blocks of whole tile rows, one task each over the threads: (a) the input
// transform of the block's tiles into V[36][T][Cp], (b) for each of the 36 points xi the
// product Mx_xi[T x M] = V_xi[T x C] * U_xi[C x M] by the packed GEMM (U transformed and
// packed once per session), (c) the output transform with the bias and activation into Y.
// Small planes whose blocks would hold few tiles (14x14: 16 tiles, one row of 4 per block
// at 256 channels, so each product read its U_xi for 4 rows) run per image in three
// splits instead: (a) over channel groups, (b) over the 36 points, each product over all
// the image's tiles, (c) over output channel groups. Each value's operations do not
// depend on the block, the stage split or the thread count, and the GEMM kernels' folds
// do not depend on their tiling: the same bits at any thread count.
#include "ops/conv/conv_winograd.h"
#include "core/per_thread.h"
#include "core/scratch.h"

#include <algorithm>
#include <atomic>
#include <vector>

#include "core/cache_info.h"
#include "ops/parallel.h"
#include "ref/winograd.h"

namespace onemodel::impl {
namespace ops {
bool WinogradF4Conv(const OpContext& ctx, const ConvPlan& p, const Tensor& w, const float* x, const float* bias,
                    Activation act, float* y, bool fma) {
  if (w.dtype() != DType::kFloat) return false;
  const int64_t C = p.C, M = p.M;
  const int64_t stride = ref::GemmPackedFloats(C, M);
  const Tensor* u = ctx.ConstDerived(1, "winograd f4x4 U", [&](const Tensor& t) {
    std::vector<float> plain(size_t(6 * C * M));
    Tensor packed = Tensor::Uninitialized(DType::kFloat, Shape{std::max<int64_t>(36 * stride, 1)}, "winograd weights");
    float* dst = packed.mutable_data<float>();
    for (int64_t i = 0; i < 6; ++i) {
      ref::WinogradF4Weights(t.data<float>(), M, C, i, plain.data());
      for (int64_t j = 0; j < 6; ++j)
        ctx.kernels->GemmPackBF32(C, M, plain.data() + j * C * M, M, 1, dst + (i * 6 + j) * stride);
    }
    return packed;
  });
  if (!u) return false;
  const Conv2DGeometry& g = p.pl;  // 3x3, stride 1, dilation 1 (the row's condition)
  const int64_t TW = ref::WinogradTileCols(g), TH = ref::WinogradTileRows(g);
  const int64_t Cp = (C + 15) / 16 * 16, Mp = (M + 15) / 16 * 16;
  // Tile rows per block: V and Mx (36 (Cp + Mp) floats per tile) within half of L2, at
  // least one row, and at least one block per thread where the plane allows.
  const int64_t per_tile = 36 * (Cp + Mp) * int64_t(sizeof(float));
  const int64_t threads = ctx.pool ? ctx.pool->threads() : 1;
  const int64_t rows =
      std::clamp<int64_t>(Caches().l2 / 2 / (per_tile * TW), 1, std::max<int64_t>(1, (TH + threads - 1) / threads));
  const int64_t blocks = (TH + rows - 1) / rows;
  const GemmFns fns = GemmFnsOf(ctx, fma);
  const float* up = u->data<float>();
  // The three stages on tile rows [ty0, ty1) of image n (T tiles, V and Mx at v and mx):
  // channel group cb's input transform (false: some input is not finite), point xi's
  // product, output channel group mb's transform with the bias and activation.
  auto input = [&](int64_t n, int64_t ty0, int64_t ty1, int64_t cb, float* v, int64_t T) {
    return ctx.kernels->WinogradF4InputF32(x + n * C * p.in_sp, p.in_sp, g, ty0, ty1, cb * 16,
                                           std::min(C, cb * 16 + 16), v, Cp, T * Cp);
  };
  auto product = [&](int64_t xi, const float* v, float* mx, int64_t T) {
    fns.packed(T, M, C, v + xi * T * Cp, Cp, 1, up + xi * stride, 0, M, mx + xi * T * Mp, Mp, nullptr,
               Activation::kNone);
  };
  auto output = [&](int64_t n, int64_t ty0, int64_t ty1, int64_t mb, const float* mx, int64_t T) {
    ctx.kernels->WinogradF4OutputF32(mx, Mp, T * Mp, g, ty0, ty1, mb * 16, std::min(M, mb * 16 + 16), bias, act,
                                     y + n * M * p.out_sp, p.out_sp);
  };
  const int64_t cgroups = (C + 15) / 16, mgroups = (M + 15) / 16;
  std::atomic<bool> finite{true};
  if (blocks > 1 && TH * TW <= kWinogradWholeImageTiles) {
    const int64_t T = TH * TW;
    auto& scratch = ONEMODEL_PER_THREAD(ScratchVector<float>);
    if (scratch.size() < size_t(36 * T * (Cp + Mp))) scratch.resize(size_t(36 * T * (Cp + Mp)));
    float* v = scratch.data();
    float* mx = v + 36 * T * Cp;
    for (int64_t n = 0; n < p.N; ++n) {
      ParallelFor(ctx, cgroups, 1, [&](int64_t b, int64_t e) {
        for (int64_t cb = b; cb < e; ++cb)
          if (!input(n, 0, TH, cb, v, T)) finite.store(false, std::memory_order_relaxed);
      });
      if (!finite.load()) return false;
      ParallelFor(ctx, 36, 1, [&](int64_t b, int64_t e) {
        for (int64_t xi = b; xi < e; ++xi) product(xi, v, mx, T);
      });
      ParallelFor(ctx, mgroups, 1, [&](int64_t b, int64_t e) {
        for (int64_t mb = b; mb < e; ++mb) output(n, 0, TH, mb, mx, T);
      });
    }
    return true;
  }
  // One task per (image, block of tile rows): its input transform, 36 products and output
  // transform in the thread's own scratch, no barrier between the stages.
  ParallelFor(ctx, p.N * blocks, 1, [&](int64_t b, int64_t e) {
    auto& scratch = ONEMODEL_PER_THREAD(ScratchVector<float>);
    const size_t need = size_t(36 * rows * TW * (Cp + Mp));
    if (scratch.size() < need) scratch.resize(need);
    float* v = scratch.data();
    float* mx = v + 36 * rows * TW * Cp;
    for (int64_t task = b; task < e && finite.load(std::memory_order_relaxed); ++task) {
      const int64_t n = task / blocks, ty0 = task % blocks * rows;
      const int64_t ty1 = std::min(TH, ty0 + rows), T = (ty1 - ty0) * TW;
      for (int64_t cb = 0; cb < cgroups; ++cb)
        if (!input(n, ty0, ty1, cb, v, T)) {
          finite.store(false, std::memory_order_relaxed);
          return;
        }
      for (int64_t xi = 0; xi < 36; ++xi) product(xi, v, mx, T);
      for (int64_t mb = 0; mb < mgroups; ++mb) output(n, ty0, ty1, mb, mx, T);
    }
  });
  return finite.load();
}

}  // namespace ops
}  // namespace onemodel::impl
