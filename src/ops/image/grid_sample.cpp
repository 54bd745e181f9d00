// Reference GridSample (opsets 16+, any number of spatial dimensions), following ONNX's
// reference in f32: coordinates denormalised per axis, then nearest, linear or cubic
// interpolation, separable with the first spatial axis outermost; padding zeros,
// border or reflection.
#include <cmath>
#include <functional>

#include "ref/math.h"
#include "ops/ops.h"
#include "ops/util.h"

namespace onemodel::impl {
namespace ops {
namespace {

float Reflect(float x, float lo, float hi) {
  const float rng = hi - lo;
  if (x < lo) {
    const float dx = lo - x;
    const int64_t n = int64_t(dx / rng);
    const float r = dx - float(n) * rng;
    return n % 2 == 0 ? lo + r : hi - r;
  }
  if (x > hi) {
    const float dx = x - hi;
    const int64_t n = int64_t(dx / rng);
    const float r = dx - float(n) * rng;
    return n % 2 == 0 ? hi - r : lo + r;
  }
  return x;
}

void Cubic(float x, float c[4]) {
  const float A = -0.75f;
  x = x < 0 ? -x : x;
  c[0] = ((A * (x + 1) - 5 * A) * (x + 1) + 8 * A) * (x + 1) - 4 * A;
  c[1] = ((A + 2) * x - (A + 3)) * x * x + 1;
  c[2] = ((A + 2) * (1 - x) - (A + 3)) * (1 - x) * (1 - x) + 1;
  c[3] = ((A * (2 - x) - 5 * A) * (2 - x) + 8 * A) * (2 - x) - 4 * A;
}

}  // namespace

void GridSample(OpContext& ctx) {
  const Tensor& tx = ctx.in(0);
  const Tensor& tg = ctx.in(1);
  std::string mode = ctx.attr_s("mode", ctx.opset >= 20 ? "linear" : "bilinear");
  if (mode == "bilinear") mode = "linear";
  if (mode == "bicubic") mode = "cubic";
  const std::string pad = ctx.attr_s("padding_mode", "zeros");
  const bool align = ctx.attr_i("align_corners", 0) != 0;
  const int64_t D = tx.rank() - 2;
  if (D < 1 || tg.rank() != D + 2 || tg.shape().back() != D)
    throw ctx.Fail(ErrorCode::kShapeMismatch, "grid must be [N, out..., spatial rank]");
  const int64_t N = tx.shape()[0], C = tx.shape()[1];
  if (tg.shape()[0] != N) throw ctx.Fail(ErrorCode::kShapeMismatch, "grid must have the input's batch size");
  const auto xv = ToF32(ctx, tx), gv = ToF32(ctx, tg);
  std::vector<int64_t> dims(tx.shape().begin() + 2, tx.shape().end());
  Shape os{N, C};
  os.insert(os.end(), tg.shape().begin() + 1, tg.shape().end() - 1);
  Tensor& y = ctx.out(0, tx.dtype(), os);
  int64_t in_sp = 1, out_sp = 1;
  for (int64_t d : dims) in_sp *= d;
  for (size_t k = 2; k < os.size(); ++k) out_sp *= os[k];
  std::vector<float> lo(static_cast<size_t>(D)), hi(static_cast<size_t>(D));
  for (int64_t i = 0; i < D; ++i) {
    lo[size_t(i)] = align ? 0.0f : -0.5f;
    hi[size_t(i)] = align ? float(dims[size_t(i)] - 1) : float(dims[size_t(i)]) - 0.5f;
  }
  std::vector<int64_t> st(static_cast<size_t>(D), 1);
  for (int64_t k = D - 1; k > 0; --k) st[size_t(k - 1)] = st[size_t(k)] * dims[size_t(k)];
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c) {
      const float* data = xv.data() + (n * C + c) * in_sp;
      // Pixel along axis a at index i, the rest fetched recursively.
      std::function<float(int64_t, int64_t, const std::vector<int64_t>&)> pixel;
      pixel = [&](int64_t a, int64_t base, const std::vector<int64_t>& idx) -> float {
        if (a == D) return data[base];
        int64_t i = idx[size_t(a)];
        const int64_t d = dims[size_t(a)];
        if (pad == "zeros") {
          if (i < 0 || i >= d) return 0.0f;
        } else if (pad == "border")
          i = i < 0 ? 0 : i >= d ? d - 1 : i;
        else
          i = int64_t(Reflect(float(i), lo[size_t(a)], hi[size_t(a)]));
        return pixel(a + 1, base + i * st[size_t(a)], idx);
      };
      for (int64_t o = 0; o < out_sp; ++o) {
        const float* g = gv.data() + (n * out_sp + o) * D;
        std::vector<float> x(static_cast<size_t>(D));
        for (int64_t i = 0; i < D; ++i) {
          const float v = g[D - 1 - i];  // the grid lists x (last axis) first
          const float len = float(dims[size_t(i)]);
          x[size_t(i)] = align ? (v + 1) / 2.0f * (len - 1) : ((v + 1) * len - 1) / 2.0f;
          if (mode == "nearest") x[size_t(i)] = math::RoundEven(x[size_t(i)]);
          if (x[size_t(i)] < lo[size_t(i)] || x[size_t(i)] > hi[size_t(i)]) {
            if (pad == "border")
              x[size_t(i)] = x[size_t(i)] < 0 ? 0.0f : x[size_t(i)] > len - 1 ? len - 1 : x[size_t(i)];
            else if (pad == "reflection")
              x[size_t(i)] = Reflect(x[size_t(i)], lo[size_t(i)], hi[size_t(i)]);
          }
        }
        float r;
        if (mode == "nearest") {
          std::vector<int64_t> idx(static_cast<size_t>(D));
          for (int64_t i = 0; i < D; ++i) idx[size_t(i)] = int64_t(x[size_t(i)]);
          r = pixel(0, 0, idx);
        } else {
          const bool cubic = mode == "cubic";
          const int64_t taps = cubic ? 4 : 2;
          // interp(a, idx): interpolate along axes [a, D) with idx[0..a) fixed.
          std::vector<int64_t> idx(static_cast<size_t>(D));
          std::function<float(int64_t)> interp = [&](int64_t a) -> float {
            if (a == D) return pixel(0, 0, idx);
            const float fl = math::Floor(x[size_t(a)]);
            const int64_t x0 = int64_t(fl);
            float cf[4];
            if (cubic)
              Cubic(x[size_t(a)] - fl, cf);
            else {
              const float t = x[size_t(a)] - fl;
              cf[0] = 1 - t;
              cf[1] = t;
            }
            float acc = -0.0f;
            for (int64_t k = 0; k < taps; ++k) {
              idx[size_t(a)] = x0 + k - (cubic ? 1 : 0);
              acc = acc + cf[k] * interp(a + 1);
            }
            return acc;
          };
          r = interp(0);
        }
        StoreF32(y, (n * C + c) * out_sp + o, r);
      }
    }
}

// AffineGrid: grid = theta . [base coordinates, 1], the base coordinates evenly spaced
// in [-1, 1] (pixel corners with align_corners, else pixel centres), in f32; each grid
// value is one accumulator from -0.0 over the row of theta, left to right.
void AffineGrid(OpContext& ctx) {
  const Tensor& th = ctx.in(0);
  const auto size = ReadInts(ctx, ctx.in(1));
  const bool align = ctx.attr_i("align_corners", 0) != 0;
  const int64_t D = int64_t(size.size()) - 2;
  if ((D != 2 && D != 3) || th.rank() != 3 || th.shape()[1] != D || th.shape()[2] != D + 1) {
    throw ctx.Fail(ErrorCode::kShapeMismatch, "theta must be [N, 2, 3] or [N, 3, 4] with a matching size");
  }
  const auto tv = ToF32(ctx, th);
  const int64_t N = size[0];
  std::vector<int64_t> sp(size.begin() + 2, size.end());
  Shape os{N};
  os.insert(os.end(), sp.begin(), sp.end());
  os.push_back(D);
  Tensor& y = ctx.out(0, th.dtype(), os);
  auto base = [&](int64_t i, int64_t len) -> float {
    if (len <= 1) return 0.0f;
    return align ? -1.0f + (2.0f * float(i)) / float(len - 1) : (2.0f * float(i) + 1.0f) / float(len) - 1.0f;
  };
  int64_t npos = 1;
  for (int64_t d : sp) npos *= d;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t p = 0; p < npos; ++p) {
      // Position (..., h, w): coordinates listed x (last axis) first, then y, then z.
      std::vector<float> coord(static_cast<size_t>(D + 1), 1.0f);
      int64_t rem = p;
      for (int64_t a = D - 1; a >= 0; --a) {
        const int64_t i = rem % sp[size_t(a)];
        rem /= sp[size_t(a)];
        coord[size_t(D - 1 - a)] = base(i, sp[size_t(a)]);
      }
      for (int64_t r = 0; r < D; ++r) {
        float acc = -0.0f;
        for (int64_t k = 0; k <= D; ++k) acc = acc + tv[size_t((n * D + r) * (D + 1) + k)] * coord[size_t(k)];
        StoreF32(y, (n * npos + p) * D + r, acc);
      }
    }
}

}  // namespace ops
}  // namespace onemodel::impl
