// Reference quantisation operators. Quantise: q = saturate(round_half_even(x / scale)
// + zero_point), computed in f32 (the division rounds once, the rounding is exact, the
// integer add is exact), then clamped to the target range (float8 targets: converted
// with the saturate attribute). Integer products accumulate exactly in int32 (wrap).
// Requantisation (QLinear*) multiplies the int32 sum by the f32 multiplier
// a_scale * b_scale / y_scale in binary64, then rounds half to even and saturates.
#include <cmath>
#include <limits>

#include "core/minifloat.h"
#include "ref/math.h"
#include "ref/ops.h"
#include "ref/util.h"

namespace onemodel {
namespace ref {
namespace {

double Get(const Tensor& t, int64_t i) { return ElementAsDouble(t, i); }
bool IsIntType(DType t) {
  switch (t) {
    case DType::kInt8: case DType::kUInt8: case DType::kInt16: case DType::kUInt16: case DType::kInt32:
    case DType::kUInt32: case DType::kInt4: case DType::kUInt4: case DType::kInt2: case DType::kUInt2: return true;
    default: return false;
  }
}
void IntRange(DType t, double* lo, double* hi) {
  switch (t) {
    case DType::kInt8: *lo = -128; *hi = 127; break;
    case DType::kUInt8: *lo = 0; *hi = 255; break;
    case DType::kInt16: *lo = -32768; *hi = 32767; break;
    case DType::kUInt16: *lo = 0; *hi = 65535; break;
    case DType::kInt32: *lo = -2147483648.0; *hi = 2147483647.0; break;
    case DType::kUInt32: *lo = 0; *hi = 4294967295.0; break;
    case DType::kInt4: *lo = -8; *hi = 7; break;
    case DType::kUInt4: *lo = 0; *hi = 15; break;
    case DType::kInt2: *lo = -2; *hi = 1; break;
    case DType::kUInt2: *lo = 0; *hi = 3; break;
    default: *lo = 0; *hi = 0;
  }
}
void PutInt(Tensor& t, int64_t i, int64_t v) {
  switch (DTypeStorageSize(t.dtype())) {
    case 1: t.mutable_data<uint8_t>()[i] = uint8_t(v); break;
    case 2: t.mutable_data<uint16_t>()[i] = uint16_t(v); break;
    default: t.mutable_data<uint32_t>()[i] = uint32_t(v); break;
  }
}
void PutFloat(Tensor& t, int64_t i, float v) {
  switch (t.dtype()) {
    case DType::kFloat: t.mutable_data<float>()[i] = v; break;
    case DType::kFloat16: t.mutable_data<uint16_t>()[i] = F32ToHalf(v); break;
    case DType::kBFloat16: t.mutable_data<uint16_t>()[i] = F32ToBF16(v); break;
    case DType::kDouble: t.mutable_data<double>()[i] = v; break;
    default: break;
  }
}

// Index into scale / zero point for element i of x: per tensor, per axis or blocked.
std::vector<int64_t> ParamIndex(const OpContext& ctx, const Tensor& x, const Tensor& scale) {
  std::vector<int64_t> idx(static_cast<size_t>(x.numel()), 0);
  if (scale.numel() <= 1 && scale.rank() <= 1) return idx;
  const int64_t axis = NormAxis(ctx, ctx.attr_i("axis", 1), x.rank());
  const int64_t block = ctx.attr_i("block_size", 0);
  int64_t inner = 1;
  for (int64_t k = axis + 1; k < x.rank(); ++k) inner *= x.shape()[size_t(k)];
  const int64_t dim = x.shape()[size_t(axis)];
  if (block <= 0) {
    if (scale.rank() != 1 || scale.shape()[0] != dim) throw ctx.Fail(ErrorCode::kShapeMismatch, "per-axis scale must have one value per slice");
    for (int64_t i = 0; i < x.numel(); ++i) idx[size_t(i)] = (i / inner) % dim;
    return idx;
  }
  // Blocked: scale has x's shape with the axis divided (rounded up) by block_size.
  if (scale.rank() != x.rank()) throw ctx.Fail(ErrorCode::kShapeMismatch, "blocked scale must have the input's rank");
  std::vector<int64_t> xs(size_t(x.rank()), 1), ss(size_t(x.rank()), 1);
  for (int64_t k = x.rank() - 1; k > 0; --k) {
    xs[size_t(k - 1)] = xs[size_t(k)] * x.shape()[size_t(k)];
    ss[size_t(k - 1)] = ss[size_t(k)] * scale.shape()[size_t(k)];
  }
  for (int64_t i = 0; i < x.numel(); ++i) {
    int64_t rem = i, off = 0;
    for (int64_t k = 0; k < x.rank(); ++k) {
      int64_t p = rem / xs[size_t(k)];
      rem %= xs[size_t(k)];
      if (k == axis) p /= block;
      off += p * ss[size_t(k)];
    }
    idx[size_t(i)] = off;
  }
  return idx;
}

// The int32 sum of (a - azp)(b - bzp) products of an [M, K] x [K, N] product, wrapping.
void IntMatMul(const OpContext& ctx, const Tensor& a, const Tensor& b, const Tensor* azp, const Tensor* bzp,
               Shape* out_shape, std::vector<int32_t>* acc) {
  Shape sa = a.shape(), sb = b.shape();
  const bool a1 = sa.size() == 1, b1 = sb.size() == 1;
  if (a1) sa.insert(sa.begin(), 1);
  if (b1) sb.push_back(1);
  const int64_t M = sa[sa.size() - 2], K = sa.back(), N = sb.back();
  if (sb[sb.size() - 2] != K) throw ctx.Fail(ErrorCode::kShapeMismatch, "A and B do not agree on K");
  const Shape ba(sa.begin(), sa.end() - 2), bb(sb.begin(), sb.end() - 2);
  const Shape batch = BroadcastShapes(ctx, {ba, bb});
  *out_shape = batch;
  if (!a1) out_shape->push_back(M);
  if (!b1) out_shape->push_back(N);
  const auto ia = BroadcastIndex(ba, batch), ib = BroadcastIndex(bb, batch);
  acc->assign(ia.size() * size_t(M * N), 0);
  // Operands minus their zero points, read once. Integer sums modulo 2^32 do not depend
  // on the order of the terms, so the loops run row by row (k outer, n inner).
  auto centred = [](const Tensor& t, const Tensor* zp, int64_t rows, int64_t cols, bool zp_per_row) {
    std::vector<uint32_t> v(static_cast<size_t>(t.numel()));
    std::vector<int64_t> z(static_cast<size_t>(zp_per_row ? rows : cols), 0);
    for (size_t i = 0; i < z.size(); ++i) z[i] = zp ? int64_t(Get(*zp, zp->numel() > 1 ? int64_t(i) : 0)) : 0;
    for (int64_t i = 0; i < t.numel(); ++i) {
      const int64_t r = (i / cols) % rows, c = i % cols;
      v[size_t(i)] = uint32_t(int64_t(Get(t, i)) - z[size_t(zp_per_row ? r : c)]);
    }
    return v;
  };
  const std::vector<uint32_t> av = centred(a, azp, M, K, true), bv = centred(b, bzp, K, N, false);
  for (size_t bi = 0; bi < ia.size(); ++bi) {
    uint32_t* out = reinterpret_cast<uint32_t*>(acc->data()) + bi * size_t(M * N);
    for (int64_t m = 0; m < M; ++m) {
      const uint32_t* arow = av.data() + ia[bi] * M * K + m * K;
      uint32_t* orow = out + m * N;
      for (int64_t k = 0; k < K; ++k) {
        const uint32_t x = arow[k];
        const uint32_t* brow = bv.data() + ib[bi] * K * N + k * N;
        for (int64_t n = 0; n < N; ++n) orow[n] += x * brow[n];
      }
    }
  }
}

// round_half_even(v) + zp, saturated to the integer type t.
int64_t SatRound(double v, double zp, DType t) {
  double lo, hi;
  IntRange(t, &lo, &hi);
  if (v != v) return int64_t(zp < lo ? lo : zp > hi ? hi : zp);
  double r = math::RoundEvenD(v);
  r = r + zp;
  r = r < lo ? lo : r > hi ? hi : r;
  return int64_t(r);
}

}  // namespace

void QuantizeLinear(OpContext& ctx) {
  const Tensor& x = ctx.in(0);
  const Tensor& scale = ctx.in(1);
  const Tensor* zp = ctx.has_input(2) ? &ctx.in(2) : nullptr;
  DType out_t = zp ? zp->dtype() : DType::kUInt8;
  if (ctx.has_attr("output_dtype") && ctx.attr_i("output_dtype", 0) != 0) out_t = DType(ctx.attr_i("output_dtype", 2));
  const bool saturate = ctx.attr_i("saturate", 1) != 0;
  const auto idx = ParamIndex(ctx, x, scale);
  Tensor& y = ctx.out(0, out_t, x.shape());
  const MiniFormat* mf = MiniFormatOf(out_t);
  if (!mf && !IsIntType(out_t)) throw ctx.Fail(ErrorCode::kTypeMismatch, "unsupported output type " + DTypeName(out_t));
  for (int64_t i = 0; i < x.numel(); ++i) {
    const float xv = float(Get(x, i)), sv = float(Get(scale, idx[size_t(i)]));
    const float q = xv / sv;
    if (mf) {
      const float z = zp ? float(Get(*zp, idx[size_t(i)])) : 0.0f;
      y.mutable_data<uint8_t>()[i] = uint8_t(F32ToMini(q + z, *mf, saturate));
    } else {
      const double z = zp ? Get(*zp, idx[size_t(i)]) : 0.0;
      PutInt(y, i, SatRound(double(math::RoundEven(q)), z, out_t));
    }
  }
}

void DequantizeLinear(OpContext& ctx) {
  const Tensor& x = ctx.in(0);
  const Tensor& scale = ctx.in(1);
  const Tensor* zp = ctx.has_input(2) ? &ctx.in(2) : nullptr;
  DType out_t = scale.dtype();
  if (ctx.has_attr("output_dtype") && ctx.attr_i("output_dtype", 0) != 0) out_t = DType(ctx.attr_i("output_dtype", 1));
  const auto idx = ParamIndex(ctx, x, scale);
  Tensor& y = ctx.out(0, out_t, x.shape());
  for (int64_t i = 0; i < x.numel(); ++i) {
    const double z = zp ? Get(*zp, idx[size_t(i)]) : 0.0;
    const float d = IsIntType(x.dtype()) ? float(int64_t(Get(x, i)) - int64_t(z)) : float(Get(x, i) - z);
    PutFloat(y, i, d * float(Get(scale, idx[size_t(i)])));
  }
}

void DynamicQuantizeLinear(OpContext& ctx) {
  const Tensor& x = ctx.in(0);
  float mn = 0.0f, mx = 0.0f;
  for (int64_t i = 0; i < x.numel(); ++i) {
    const float v = float(Get(x, i));
    if (v < mn) mn = v;
    if (v > mx) mx = v;
  }
  const float scale = (mx - mn) / 255.0f;
  const float zpf = scale == 0.0f ? 0.0f : 0.0f - mn / scale;
  const int64_t zp = SatRound(double(math::RoundEven(zpf)), 0.0, DType::kUInt8);
  Tensor& y = ctx.out(0, DType::kUInt8, x.shape());
  for (int64_t i = 0; i < x.numel(); ++i) {
    const float q = scale == 0.0f ? 0.0f : float(Get(x, i)) / scale;
    y.mutable_data<uint8_t>()[i] = uint8_t(SatRound(double(math::RoundEven(q)), double(zp), DType::kUInt8));
  }
  ctx.out(1, DType::kFloat, {}).mutable_data<float>()[0] = scale;
  ctx.out(2, DType::kUInt8, {}).mutable_data<uint8_t>()[0] = uint8_t(zp);
}

void MatMulInteger(OpContext& ctx) {
  Shape s;
  std::vector<int32_t> acc;
  IntMatMul(ctx, ctx.in(0), ctx.in(1), ctx.has_input(2) ? &ctx.in(2) : nullptr, ctx.has_input(3) ? &ctx.in(3) : nullptr, &s, &acc);
  Tensor& y = ctx.out(0, DType::kInt32, s);
  std::copy(acc.begin(), acc.end(), y.mutable_data<int32_t>());
}

void QLinearMatMul(OpContext& ctx) {
  const Tensor& a = ctx.in(0);
  const Tensor& b = ctx.in(3);
  Shape s;
  std::vector<int32_t> acc;
  IntMatMul(ctx, a, b, &ctx.in(2), &ctx.in(5), &s, &acc);
  const float m = float(float(Get(ctx.in(1), 0)) * float(Get(ctx.in(4), 0))) / float(Get(ctx.in(6), 0));
  const Tensor& yzp = ctx.in(7);
  Tensor& y = ctx.out(0, yzp.dtype(), s);
  for (size_t i = 0; i < acc.size(); ++i) {
    PutInt(y, int64_t(i), SatRound(double(acc[i]) * double(m), Get(yzp, 0), yzp.dtype()));
  }
}

}  // namespace ref
}  // namespace onemodel
