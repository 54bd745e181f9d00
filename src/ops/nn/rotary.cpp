// Reference RotaryEmbedding: ONNX's (opset 23) and ONNX Runtime's (com.microsoft). Both
// rotate, as ONNX's reference: real = cos*x1 - sin*x2, imag = sin*x1 + cos*x2, each product
// rounded, on the first rotary_embedding_dim channels of every head (split halves, or
// even/odd pairs when interleaved); the other channels are copied. Narrow floats compute
// in f32 and round once.
#include "core/function_ref.h"
#include "ops/nn/rotary.h"
#include "ops/ops.h"
#include "ops/util.h"

namespace onemodel::impl {
namespace ops {
namespace {

// x [B, NH, S, D] (bnsh) or [B, S, NH, D], rotary dim rd; the cache row of (b, s) is
// row(b, s), checked against the caches' rows before anything is written.
struct RotaryGeom {
  int64_t B = 0, S = 0, NH = 0, D = 0, rd = 0;
  bool bnsh = false, interleaved = false;
};

void Rotate(OpContext& ctx, const RotaryGeom& g, const Tensor& x, const Tensor& cos_cache, const Tensor& sin_cache,
            FunctionRef<int64_t(int64_t, int64_t)> row) {
  const int64_t half = g.rd / 2;
  if (cos_cache.rank() < 1 || cos_cache.shape().back() != half)
    throw ctx.Fail(ErrorCode::kShapeMismatch, "cos_cache's last dimension must be rotary_embedding_dim / 2");
  if (sin_cache.shape() != cos_cache.shape())
    throw ctx.Fail(ErrorCode::kShapeMismatch, "sin_cache must have cos_cache's shape");
  const int64_t rows = half ? cos_cache.numel() / half : 0;
  for (int64_t b = 0; b < g.B; ++b)
    for (int64_t s = 0; s < g.S; ++s) {
      const int64_t r = row(b, s);
      if (half && (r < 0 || r >= rows))
        throw ctx.Fail(ErrorCode::kOutOfRange, "a position (" + std::to_string(r) + ") is outside the caches' " +
                                                   std::to_string(rows) + " rows");
    }
  const auto xv = ToF32(ctx, x), cosv = ToF32(ctx, cos_cache), sinv = ToF32(ctx, sin_cache);
  Tensor& y = ctx.out(0, x.dtype(), x.shape());
  auto xi = [&](int64_t b, int64_t s, int64_t h, int64_t d) {
    return g.bnsh ? ((b * g.NH + h) * g.S + s) * g.D + d : ((b * g.S + s) * g.NH + h) * g.D + d;
  };
  std::vector<float> in(static_cast<size_t>(g.D)), out(static_cast<size_t>(g.D));
  for (int64_t b = 0; b < g.B; ++b)
    for (int64_t s = 0; s < g.S; ++s) {
      const int64_t r = row(b, s);
      for (int64_t h = 0; h < g.NH; ++h) {
        for (int64_t d = 0; d < g.D; ++d) in[size_t(d)] = out[size_t(d)] = xv[size_t(xi(b, s, h, d))];
        const size_t at = half ? size_t(r * half) : 0;
        RotateRow(in.data(), out.data(), cosv.data() + at, sinv.data() + at, half, g.interleaved);
        for (int64_t d = 0; d < g.D; ++d) StoreF32(y, xi(b, s, h, d), out[size_t(d)]);
      }
    }
}

}  // namespace

// ONNX (X, cos_cache, sin_cache, position_ids?): X [B, NH, S, D], or [B, S, hidden] with
// num_heads; cache row position_ids[b, s], else b * S + s for 3-D caches, else s.
void RotaryEmbedding(OpContext& ctx) {
  const Tensor& x = ctx.in(0);
  RotaryGeom g;
  g.interleaved = ctx.attr_i("interleaved", 0) != 0;
  const int64_t nh_attr = ctx.attr_i("num_heads", 0);
  g.bnsh = x.rank() == 4;
  if (g.bnsh) {
    g.B = x.shape()[0], g.NH = x.shape()[1], g.S = x.shape()[2], g.D = x.shape()[3];
  } else if (x.rank() == 3 && nh_attr > 0 && x.shape()[2] % nh_attr == 0) {
    g.B = x.shape()[0], g.S = x.shape()[1], g.NH = nh_attr, g.D = x.shape()[2] / nh_attr;
  } else {
    throw ctx.Fail(ErrorCode::kShapeMismatch, "input must be 4-D, or 3-D with num_heads dividing the hidden size");
  }
  g.rd = ctx.attr_i("rotary_embedding_dim", 0);
  if (g.rd == 0) g.rd = g.D;
  if (g.rd < 0 || g.rd > g.D || g.rd % 2)
    throw ctx.Fail(ErrorCode::kInvalidArgument, "rotary_embedding_dim must be even and in [0, head size]");
  const bool has_pos = ctx.has_input(3);
  const Shape pos = has_pos ? ReadInts(ctx, ctx.in(3)) : Shape{};
  if (has_pos && int64_t(pos.size()) != g.B * g.S)
    throw ctx.Fail(ErrorCode::kShapeMismatch, "position_ids must hold batch x sequence values");
  const bool cache3 = ctx.in(1).rank() == 3;
  Rotate(ctx, g, x, ctx.in(1), ctx.in(2),
         [&](int64_t b, int64_t s) { return has_pos ? pos[size_t(b * g.S + s)] : (cache3 ? b * g.S + s : s); });
}

// ONNX Runtime's (input, position_ids, cos_cache, sin_cache), com.microsoft: input [B, S,
// hidden] or [B, NH, S, D]; position_ids one value (an offset: row offset + s) or [B, S];
// caches [max_position, rotary_dim / 2]. Without rotary_embedding_dim the head size is
// twice the caches' width and all of it rotates; with it, num_heads is required.
void MsRotaryEmbedding(OpContext& ctx) {
  const Tensor& x = ctx.in(0);
  const Tensor& cos_cache = ctx.in(2);
  RotaryGeom g;
  g.interleaved = ctx.attr_i("interleaved", 0) != 0;
  int64_t nh = ctx.attr_i("num_heads", 0);
  g.rd = ctx.attr_i("rotary_embedding_dim", 0);
  if (x.rank() != 3 && x.rank() != 4) throw ctx.Fail(ErrorCode::kShapeMismatch, "input must be 3-D or 4-D");
  if (cos_cache.rank() != 2) throw ctx.Fail(ErrorCode::kShapeMismatch, "cos_cache must be 2-D");
  g.bnsh = x.rank() == 4;
  g.B = x.shape()[0];
  g.S = g.bnsh ? x.shape()[2] : x.shape()[1];
  const int64_t hidden = g.bnsh ? x.shape()[1] * x.shape()[3] : x.shape()[2];
  if (g.rd > 0 && nh <= 0) throw ctx.Fail(ErrorCode::kInvalidModel, "rotary_embedding_dim needs num_heads");
  g.D = g.rd > 0 ? (nh > 0 ? hidden / nh : 0) : 2 * cos_cache.shape()[1];
  if (g.rd == 0) g.rd = g.D;
  if (nh <= 0) nh = g.D > 0 ? hidden / g.D : 0;
  g.NH = nh;
  if (g.D <= 0 || g.NH * g.D != hidden || (g.bnsh && x.shape()[1] != g.NH) || g.rd > g.D || g.rd % 2)
    throw ctx.Fail(ErrorCode::kShapeMismatch, "input " + ShapeToString(x.shape()) + ", num_heads " +
                                                  std::to_string(nh) + " and the caches do not agree on the head size");
  const Tensor& pt = ctx.in(1);
  if (pt.dtype() != DType::kInt64) throw ctx.Fail(ErrorCode::kTypeMismatch, "position_ids must be int64");
  const Shape pos = ReadInts(ctx, pt);
  const bool offset = pos.size() == 1;
  if (!offset && !(pt.rank() == 2 && pt.shape()[0] == g.B && pt.shape()[1] == g.S))
    throw ctx.Fail(ErrorCode::kShapeMismatch,
                   "position_ids must be one value (an offset) or [batch, sequence], got " + ShapeToString(pt.shape()));
  Rotate(ctx, g, x, cos_cache, ctx.in(3),
         [&](int64_t b, int64_t s) { return offset ? pos[0] + s : pos[size_t(b * g.S + s)]; });
}

}  // namespace ops
}  // namespace onemodel::impl
