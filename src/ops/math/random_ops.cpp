// Reference random operators with a seeded, deterministic generator: SplitMix64
// seeded from the `seed` attribute (its binary32 bits), or, without one, from the
// FNV-1a hash of the node's first output name, so a model gives the same values on
// every run and every target (decision: ONNX leaves unseeded values unspecified).
// Uniform: 24 random bits per binary32 (53 per binary64); Normal: Box-Muller on the
// project's own log and cos; Bernoulli: u < p.
#include <cstring>

#include "core/random.h"
#include "ref/math.h"
#include "ops/ops.h"
#include "ops/util.h"

namespace onemodel::impl {
namespace ops {
namespace {

SplitMix64 Rng(const OpContext& ctx) {
  if (ctx.has_attr("seed")) {
    const float s = ctx.attr_f("seed", 0.0f);
    uint32_t u;
    std::memcpy(&u, &s, 4);
    return SplitMix64(0x6F6E656D6F64656Cull ^ u);
  }
  uint64_t h = 1469598103934665603ull;
  for (char c : ctx.node.outputs.empty() ? std::string() : ctx.node.outputs[0]) h = (h ^ uint8_t(c)) * 1099511628211ull;
  return SplitMix64(h);
}
double U53(SplitMix64& r) { return double(r.Next() >> 11) * (1.0 / 9007199254740992.0); }
float U24(SplitMix64& r) { return float(r.NextU32() >> 8) * (1.0f / 16777216.0f); }

void Fill(OpContext& ctx, DType dt, const Shape& shape, bool normal) {
  SplitMix64 rng = Rng(ctx);
  const float a = normal ? ctx.attr_f("mean", 0.0f) : ctx.attr_f("low", 0.0f);
  const float b = normal ? ctx.attr_f("scale", 1.0f) : ctx.attr_f("high", 1.0f);
  Tensor& y = ctx.out(0, dt, shape);
  for (int64_t i = 0; i < y.numel(); ++i) {
    float v;
    if (normal) {
      const float u1 = 1.0f - U24(rng), u2 = U24(rng);  // u1 in (0, 1]
      const float z = __builtin_sqrtf(-2.0f * math::Log(u1)) * math::Cos(6.28318530717958647692f * u2);
      v = a + b * z;
    } else {
      v = a + (b - a) * U24(rng);
    }
    switch (dt) {
      case DType::kFloat: y.mutable_data<float>()[i] = v; break;
      case DType::kDouble:
        y.mutable_data<double>()[i] = normal ? double(v) : double(a) + (double(b) - double(a)) * U53(rng);
        break;
      case DType::kFloat16: y.mutable_data<uint16_t>()[i] = F32ToHalf(v); break;
      case DType::kBFloat16: y.mutable_data<uint16_t>()[i] = F32ToBF16(v); break;
      default: throw ctx.Fail(ErrorCode::kTypeMismatch, "dtype must be a float type");
    }
  }
}

}  // namespace

void RandomUniform(OpContext& ctx) { Fill(ctx, DType(ctx.attr_i("dtype", 1)), ctx.attr_ints("shape"), false); }
void RandomNormal(OpContext& ctx) { Fill(ctx, DType(ctx.attr_i("dtype", 1)), ctx.attr_ints("shape"), true); }
void RandomUniformLike(OpContext& ctx) {
  Fill(ctx, ctx.has_attr("dtype") ? DType(ctx.attr_i("dtype", 1)) : ctx.in(0).dtype(), ctx.in(0).shape(), false);
}
void RandomNormalLike(OpContext& ctx) {
  Fill(ctx, ctx.has_attr("dtype") ? DType(ctx.attr_i("dtype", 1)) : ctx.in(0).dtype(), ctx.in(0).shape(), true);
}

void Bernoulli(OpContext& ctx) {
  const Tensor& p = ctx.in(0);
  SplitMix64 rng = Rng(ctx);
  const DType dt = ctx.has_attr("dtype") ? DType(ctx.attr_i("dtype", 1)) : p.dtype();
  Tensor& y = ctx.out(0, dt, p.shape());
  std::vector<double> pv(static_cast<size_t>(p.numel()));
  DispatchNumeric(p.dtype(), [&]<class T>() {
    for (int64_t i = 0; i < p.numel(); ++i) pv[size_t(i)] = double(Widen(p.data<T>()[i]));
  });
  const bool ok = DispatchNumeric(dt, [&]<class T>() {
    for (int64_t i = 0; i < p.numel(); ++i) {
      const bool one = U53(rng) < pv[size_t(i)];
      y.mutable_data<T>()[i] = Narrow<T>(typename Compute<T>::type(one ? 1 : 0));
    }
  });
  if (!ok) throw ctx.Fail(ErrorCode::kTypeMismatch, "unsupported dtype");
}

void Multinomial(OpContext& ctx) {
  const Tensor& x = ctx.in(0);
  if (x.rank() != 2) throw ctx.Fail(ErrorCode::kShapeMismatch, "input must be [batch, classes]");
  const int64_t B = x.shape()[0], C = x.shape()[1], n = ctx.attr_i("sample_size", 1);
  const DType dt = DType(ctx.attr_i("dtype", int64_t(DType::kInt32)));
  SplitMix64 rng = Rng(ctx);
  Tensor& y = ctx.out(0, dt, {B, n});
  std::vector<double> lv(static_cast<size_t>(x.numel()));
  DispatchNumeric(x.dtype(), [&]<class T>() {
    for (int64_t i = 0; i < x.numel(); ++i) lv[size_t(i)] = double(Widen(x.data<T>()[i]));
  });
  for (int64_t b = 0; b < B; ++b) {
    double m = lv[size_t(b * C)];
    for (int64_t c = 1; c < C; ++c) m = lv[size_t(b * C + c)] > m ? lv[size_t(b * C + c)] : m;
    std::vector<double> cum(static_cast<size_t>(C));
    double s = 0;
    for (int64_t c = 0; c < C; ++c) {
      s += math::ExpD(lv[size_t(b * C + c)] - m);
      cum[size_t(c)] = s;
    }
    for (int64_t k = 0; k < n; ++k) {
      const double u = U53(rng) * s;
      int64_t c = 0;
      while (c + 1 < C && cum[size_t(c)] <= u) ++c;
      if (dt == DType::kInt64)
        y.mutable_data<int64_t>()[b * n + k] = c;
      else
        y.mutable_data<int32_t>()[b * n + k] = int32_t(c);
    }
  }
}

}  // namespace ops
}  // namespace onemodel::impl
