// Reference RotaryEmbedding (opset 23), as ONNX's reference: real = cos*x1 - sin*x2,
// imag = sin*x1 + cos*x2, each product rounded, on the first rotary_embedding_dim
// channels of every head (split halves, or even/odd pairs when interleaved).
#include "ops/ops.h"
#include "ops/util.h"

namespace onemodel::impl {
namespace ops {

void RotaryEmbedding(OpContext& ctx) {
  const Tensor& x = ctx.in(0);
  const bool interleaved = ctx.attr_i("interleaved", 0) != 0;
  const int64_t nh_attr = ctx.attr_i("num_heads", 0);
  int64_t B, S, NH, D;
  const bool four = x.rank() == 4;
  if (four) {
    B = x.shape()[0];
    NH = x.shape()[1];
    S = x.shape()[2];
    D = x.shape()[3];
  } else if (x.rank() == 3 && nh_attr > 0 && x.shape()[2] % nh_attr == 0) {
    B = x.shape()[0];
    S = x.shape()[1];
    NH = nh_attr;
    D = x.shape()[2] / nh_attr;
  } else
    throw ctx.Fail(ErrorCode::kShapeMismatch, "input must be 4-D, or 3-D with num_heads dividing the hidden size");
  int64_t rd = ctx.attr_i("rotary_embedding_dim", 0);
  if (rd == 0) rd = D;
  const int64_t half = rd / 2;
  const auto xv = ToF32(ctx, x), cosv = ToF32(ctx, ctx.in(1)), sinv = ToF32(ctx, ctx.in(2));
  const bool has_pos = ctx.has_input(3);
  const Shape pos = has_pos ? ReadInts(ctx, ctx.in(3)) : Shape{};
  if (rd < 0 || rd > D || rd % 2)
    throw ctx.Fail(ErrorCode::kInvalidArgument, "rotary_embedding_dim must be even and in [0, head size]");
  if (ctx.in(1).rank() < 1 || ctx.in(1).shape().back() != half)
    throw ctx.Fail(ErrorCode::kShapeMismatch, "cos_cache's last dimension must be rotary_embedding_dim / 2");
  if (ctx.in(2).shape() != ctx.in(1).shape())
    throw ctx.Fail(ErrorCode::kShapeMismatch, "sin_cache must have cos_cache's shape");
  const int64_t rows = half ? ctx.in(1).numel() / half : 0;
  if (has_pos && int64_t(pos.size()) != B * S)
    throw ctx.Fail(ErrorCode::kShapeMismatch, "position_ids must hold batch x sequence values");
  for (int64_t b = 0; b < B; ++b)
    for (int64_t s = 0; s < S; ++s) {
      const int64_t row = has_pos ? pos[size_t(b * S + s)] : (ctx.in(1).rank() == 3 ? b * S + s : s);
      if (half && (row < 0 || row >= rows))
        throw ctx.Fail(ErrorCode::kOutOfRange, "a position (" + std::to_string(row) + ") is outside the caches' " +
                                                   std::to_string(rows) + " rows");
    }
  Tensor& y = ctx.out(0, x.dtype(), x.shape());
  auto xi = [&](int64_t b, int64_t s, int64_t h, int64_t d) {
    return four ? ((b * NH + h) * S + s) * D + d : ((b * S + s) * NH + h) * D + d;
  };
  for (int64_t b = 0; b < B; ++b)
    for (int64_t s = 0; s < S; ++s) {
      // Cache row: cache[position_ids[b, s]] or cache[b, s] (3-D caches) .
      const int64_t row = has_pos ? pos[size_t(b * S + s)] : (ctx.in(1).rank() == 3 ? b * S + s : s);
      for (int64_t h = 0; h < NH; ++h) {
        std::vector<float> out(static_cast<size_t>(D));
        for (int64_t d = rd; d < D; ++d) out[size_t(d)] = xv[size_t(xi(b, s, h, d))];
        for (int64_t k = 0; k < half; ++k) {
          const float c = cosv[size_t(row * half + k)], sn = sinv[size_t(row * half + k)];
          const int64_t i1 = interleaved ? 2 * k : k, i2 = interleaved ? 2 * k + 1 : k + half;
          const float x1 = xv[size_t(xi(b, s, h, i1))], x2 = xv[size_t(xi(b, s, h, i2))];
          out[size_t(i1)] = c * x1 - sn * x2;
          out[size_t(i2)] = sn * x1 + c * x2;
        }
        for (int64_t d = 0; d < D; ++d) {
          StoreF32(y, xi(b, s, h, d), out[size_t(d)]);
        }
      }
    }
}

}  // namespace ops
}  // namespace onemodel::impl
