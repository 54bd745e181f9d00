// Reference transcendental operators, on the project's own functions (ref/math.h).
// float16/bfloat16 compute in f32 and round once; double uses the binary64 functions
// where they exist (Exp, Log, Pow) and is otherwise not supported yet.
#include <algorithm>
#include <cmath>

#include "core/exact.h"
#include "ref/elementwise.h"
#include "ref/math.h"
#include "ops/parallel.h"
#include "ref/reduce.h"
#include "ops/ops.h"
#include "ops/util.h"

namespace onemodel::impl {
namespace ops {
namespace {

using F32Fn = float (*)(float);
using F64Fn = double (*)(double);

template <class F>
void MapFloat(OpContext& ctx, F f, F64Fn f64 = nullptr) {
  const Tensor& x = ctx.in(0);
  Tensor& out = ctx.out(0, x.dtype(), x.shape());
  const int64_t n = x.numel();
  switch (x.dtype()) {
    case DType::kFloat:
      for (int64_t i = 0; i < n; ++i) out.mutable_data<float>()[i] = f(x.data<float>()[i]);
      return;
    case DType::kFloat16:
      for (int64_t i = 0; i < n; ++i) out.mutable_data<uint16_t>()[i] = F32ToHalf(f(HalfToF32(x.data<uint16_t>()[i])));
      return;
    case DType::kBFloat16:
      for (int64_t i = 0; i < n; ++i) out.mutable_data<uint16_t>()[i] = F32ToBF16(f(BF16ToF32(x.data<uint16_t>()[i])));
      return;
    case DType::kDouble:
      if (f64) {
        for (int64_t i = 0; i < n; ++i) out.mutable_data<double>()[i] = f64(x.data<double>()[i]);
        return;
      }
      throw ctx.Fail(ErrorCode::kUnsupportedOp, "double inputs are not supported yet for this operator");
    default: throw ctx.Fail(ErrorCode::kTypeMismatch, "input must be floating point, got " + DTypeName(x.dtype()));
  }
}

// The binary64 path through the session's MathF64 kernel (op a MathOpF64), in chunks
// over the threads; false (nothing done) without a table or for another element type.
bool MathFastF64(OpContext& ctx, int32_t op) {
  const Tensor& x = ctx.in(0);
  if (x.dtype() != DType::kDouble) return false;
  auto* kernel = ctx.kernels->MathF64;
  Tensor out = ctx.NewTensor(DType::kDouble, x.shape(), false, "output");
  const double* px = x.data<double>();
  double* po = out.mutable_data<double>();
  const int64_t n = x.numel(), chunk = 2048;
  ParallelFor(ctx, (n + chunk - 1) / chunk, 16, [&](int64_t b, int64_t e) {
    for (int64_t c = b; c < e; ++c) kernel(op, px + c * chunk, po + c * chunk, std::min(chunk, n - c * chunk));
  });
  ctx.set_out(0, std::move(out));
  return true;
}

// The float path through the session's MathF32 kernel, in chunks over the threads.
bool MathFast(OpContext& ctx, int32_t op) {
  auto* kernel = ctx.kernels->MathF32;
  return MapChunksF32(ctx, 2048, [&](const float* x, float* y, int64_t n) { kernel(op, x, y, n); });
}

}  // namespace

void Exp(OpContext& ctx) {
  if (!MathFast(ctx, kMathExpF32) && !MathFastF64(ctx, kMathExpF64)) MapFloat(ctx, &math::Exp, &math::ExpD);
}
void Log(OpContext& ctx) {
  if (!MathFast(ctx, kMathLogF32) && !MathFastF64(ctx, kMathLogF64)) MapFloat(ctx, &math::Log, &math::LogD);
}
void Tanh(OpContext& ctx) {
  if (!MathFast(ctx, kMathTanhF32)) MapFloat(ctx, &math::Tanh);
}
void Sigmoid(OpContext& ctx) {
  if (!MathFast(ctx, kMathSigmoidF32)) MapFloat(ctx, &math::Sigmoid);
}
// In a fast session on a target with a hardware FMA, float Erf takes fast mode's erf
// (ref::ErfFmaF32, as an elementwise chain's Erf step does there).
void Erf(OpContext& ctx) {
  if (ctx.fast && ctx.kernels->fma_f32) {
    auto* kernel = ctx.kernels->ErfFmaF32;
    if (MapChunksF32(ctx, 2048, [&](const float* x, float* y, int64_t n) { kernel(x, y, n); })) return;
  }
  if (!MathFast(ctx, kMathErfF32)) MapFloat(ctx, &math::Erf);
}
void Sin(OpContext& ctx) {
  if (!MathFast(ctx, kMathSinF32)) MapFloat(ctx, &math::Sin);
}
void Cos(OpContext& ctx) {
  if (!MathFast(ctx, kMathCosF32)) MapFloat(ctx, &math::Cos);
}
void Tan(OpContext& ctx) {
  if (!MathFast(ctx, kMathTanF32)) MapFloat(ctx, &math::Tan);
}
void Asin(OpContext& ctx) {
  if (!MathFast(ctx, kMathAsinF32)) MapFloat(ctx, &math::Asin);
}
void Acos(OpContext& ctx) {
  if (!MathFast(ctx, kMathAcosF32)) MapFloat(ctx, &math::Acos);
}
void Atan(OpContext& ctx) {
  if (!MathFast(ctx, kMathAtanF32)) MapFloat(ctx, &math::Atan);
}
void Sinh(OpContext& ctx) {
  if (!MathFast(ctx, kMathSinhF32)) MapFloat(ctx, &math::Sinh);
}
void Cosh(OpContext& ctx) {
  if (!MathFast(ctx, kMathCoshF32)) MapFloat(ctx, &math::Cosh);
}
void Asinh(OpContext& ctx) {
  if (!MathFast(ctx, kMathAsinhF32)) MapFloat(ctx, &math::Asinh);
}
void Acosh(OpContext& ctx) {
  if (!MathFast(ctx, kMathAcoshF32)) MapFloat(ctx, &math::Acosh);
}
void Atanh(OpContext& ctx) {
  if (!MathFast(ctx, kMathAtanhF32)) MapFloat(ctx, &math::Atanh);
}
// With a kernel table the float forms below go through UnaryF32, whose reference is
// these very expressions (ref/elementwise.h).
void Softplus(OpContext& ctx) {
  if (!UnaryFastF32(ctx, kUnSoftplusF32)) MapFloat(ctx, &math::Softplus);
}
void Softsign(OpContext& ctx) {
  if (!UnaryFastF32(ctx, kUnSoftsignF32)) MapFloat(ctx, [](float v) { return v / (1.0f + (v < 0 ? -v : v)); });
}
void Elu(OpContext& ctx) {
  const float alpha = ctx.attr_f("alpha", 1.0f);
  if (!UnaryFastF32(ctx, kUnEluF32, alpha))
    MapFloat(ctx, [alpha](float v) { return v < 0.0f ? alpha * (math::Exp(v) - 1.0f) : v; });
}
void Selu(OpContext& ctx) {
  const float alpha = ctx.attr_f("alpha", 1.67326319217681884765625f);
  const float gamma = ctx.attr_f("gamma", 1.05070102214813232421875f);
  if (UnaryFastF32(ctx, kUnSeluF32, alpha, gamma)) return;
  MapFloat(ctx, [=](float v) { return v <= 0.0f ? gamma * (alpha * math::Exp(v) - alpha) : gamma * v; });
}
// Celu; double (opset 28) in binary64 with the project's ExpD, the same expression.
void Celu(OpContext& ctx) {
  const float alpha = ctx.attr_f("alpha", 1.0f);
  if (UnaryFastF32(ctx, kUnCeluF32, alpha)) return;
  const Tensor& x = ctx.in(0);
  if (x.dtype() == DType::kDouble) {
    const double ad = alpha;
    Tensor& y = ctx.out_uninit(0, x.dtype(), x.shape());
    for (int64_t i = 0; i < x.numel(); ++i) {
      const double v = x.data<double>()[i], m = ad * (math::ExpD(v / ad) - 1.0);
      y.mutable_data<double>()[i] = (v > 0.0 ? v : 0.0) + (m < 0.0 ? m : 0.0);
    }
    return;
  }
  MapFloat(ctx, [alpha](float v) {
    const float m = alpha * (math::Exp(v / alpha) - 1.0f);
    const float neg = m < 0.0f ? m : 0.0f;
    return (v > 0.0f ? v : 0.0f) + neg;
  });
}
void Mish(OpContext& ctx) {
  if (!UnaryFastF32(ctx, kUnMishF32)) MapFloat(ctx, [](float v) { return v * math::Tanh(math::Softplus(v)); });
}
void Swish(OpContext& ctx) {
  const float alpha = ctx.attr_f("alpha", 1.0f);
  if (!UnaryFastF32(ctx, kUnSwishF32, alpha)) MapFloat(ctx, [alpha](float v) { return v * math::Sigmoid(alpha * v); });
}
// SwiGLU (opset 28): Y = Swish_alpha(A) * B, A and B of one shape and type (no
// broadcast). f32: Swish as the Swish operator (v * Sigmoid(alpha * v), the session's
// exact UnaryF32), then one product with B; float16 and bfloat16 widen exactly and round
// once; double in binary64: (a * (1 / (1 + ExpD(-alpha * a)))) * b.
void SwiGLU(OpContext& ctx) {
  const Tensor& a = ctx.in(0);
  const Tensor& b = ctx.in(1);
  if (a.shape() != b.shape())
    throw ctx.Fail(ErrorCode::kShapeMismatch,
                   "A " + ShapeToString(a.shape()) + " and B " + ShapeToString(b.shape()) + " must have one shape");
  if (a.dtype() != b.dtype()) throw ctx.Fail(ErrorCode::kTypeMismatch, "A and B must have one type");
  const float alpha = ctx.attr_f("alpha", 1.0f);
  const int64_t n = a.numel();
  Tensor& y = ctx.out_uninit(0, a.dtype(), a.shape());
  if (a.dtype() == DType::kDouble) {
    const double ad = alpha;
    for (int64_t i = 0; i < n; ++i) {
      const double v = a.data<double>()[i];
      y.mutable_data<double>()[i] = (v * (1.0 / (1.0 + math::ExpD(-ad * v)))) * b.data<double>()[i];
    }
    return;
  }
  std::vector<float> s = ToF32(ctx, a);
  const F32View bv(ctx, b);
  ctx.kernels->UnaryF32(kUnSwishF32, alpha, 0.0f, s.data(), s.data(), n);
  for (int64_t i = 0; i < n; ++i) StoreF32(y, i, s[size_t(i)] * bv[size_t(i)]);
}
namespace {
float GeluTanhF32(float v) {
  const float inner = 0.7978845608028654f * (v + 0.044715f * (v * v * v));
  return 0.5f * v * (1.0f + math::Tanh(inner));
}
float GeluErfF32(float v) { return 0.5f * v * (1.0f + math::Erf(v * 0.7071067811865476f)); }

// Gelu of v = X + bias (bias null: of X), op kUnGeluTanhF32 or kUnGeluErfF32 and f its
// scalar form: bias is 1-D with X's last dimension (ONNX Runtime's FastGelu / BiasGelu),
// the sum rounds once in f32, then Gelu as ONNX's (ref/elementwise.h); narrow floats
// widen exactly and the result rounds once.
void GeluOfSum(OpContext& ctx, const Tensor* bias, int32_t op, float (*f)(float)) {
  if (!bias) {
    if (!UnaryFastF32(ctx, op)) MapFloat(ctx, f);
    return;
  }
  const Tensor& x = ctx.in(0);
  if (bias->dtype() != x.dtype())
    throw ctx.Fail(ErrorCode::kTypeMismatch,
                   "bias is " + DTypeName(bias->dtype()) + ", input is " + DTypeName(x.dtype()));
  if (x.rank() < 1 || bias->rank() != 1 || bias->shape()[0] != x.shape()[x.rank() - 1])
    throw ctx.Fail(ErrorCode::kShapeMismatch, "bias must be 1-D with the input's last dimension: input " +
                                                  ShapeToString(x.shape()) + ", bias " + ShapeToString(bias->shape()));
  Tensor out = ctx.NewTensor(x.dtype(), x.shape(), false, "output");
  if (x.dtype() == DType::kFloat) {
    BroadcastBinaryF32(ctx, kBinAddF32, x, *bias, out);
    float* po = out.mutable_data<float>();
    auto* kernel = ctx.kernels->UnaryF32;
    const int64_t n = out.numel(), chunk = 4096;
    ParallelFor(ctx, (n + chunk - 1) / chunk, 8, [&](int64_t b, int64_t e) {
      for (int64_t c = b; c < e; ++c)
        kernel(op, 0.0f, 0.0f, po + c * chunk, po + c * chunk, std::min(chunk, n - c * chunk));
    });
  } else if (x.dtype() == DType::kFloat16 || x.dtype() == DType::kBFloat16) {
    const F32View xv(ctx, x), bv(ctx, *bias);
    const int64_t n = x.numel(), h = bias->numel();
    for (int64_t i = 0; i < n; ++i) StoreF32(out, i, f(xv.data()[i] + bv.data()[i % h]));
  } else {
    throw ctx.Fail(ErrorCode::kTypeMismatch, "input must be float, float16 or bfloat16, got " + DTypeName(x.dtype()));
  }
  ctx.set_out(0, std::move(out));
}
}  // namespace

void Gelu(OpContext& ctx) {
  const std::string approx = ctx.attr_s("approximate", "none");
  if (approx == "tanh") {
    GeluOfSum(ctx, nullptr, kUnGeluTanhF32, &GeluTanhF32);
  } else if (approx == "none") {
    GeluOfSum(ctx, nullptr, kUnGeluErfF32, &GeluErfF32);
  } else {
    throw ctx.Fail(ErrorCode::kInvalidModel, "approximate must be 'none' or 'tanh'");
  }
}
// com.microsoft FastGelu (X, bias?): Gelu's tanh form of X + bias.
void FastGelu(OpContext& ctx) { GeluOfSum(ctx, ctx.has_input(1) ? &ctx.in(1) : nullptr, kUnGeluTanhF32, &GeluTanhF32); }
// com.microsoft BiasGelu (A, B): Gelu's erf form of A + B.
void BiasGelu(OpContext& ctx) {
  if (!ctx.has_input(1)) throw ctx.Fail(ErrorCode::kMissingInput, "BiasGelu needs its bias B (input 1)");
  GeluOfSum(ctx, &ctx.in(1), kUnGeluErfF32, &GeluErfF32);
}
// com.microsoft QuickGelu: x * Sigmoid(alpha * x), Swish's expression (alpha 1.702 by default).
void QuickGelu(OpContext& ctx) {
  const float alpha = ctx.attr_f("alpha", 1.702f);
  if (!UnaryFastF32(ctx, kUnSwishF32, alpha)) MapFloat(ctx, [alpha](float v) { return v * math::Sigmoid(alpha * v); });
}

// Pow(X, Y): numpy broadcasting; Y may have another numeric type. Float bases use
// math::Pow (binary64 inside, one rounding); integer bases use exact repeated squaring
// with wrap (negative exponents give 0 except for bases 1 and -1).
void Pow(OpContext& ctx) {
  const Tensor& x = ctx.in(0);
  const Tensor& y = ctx.in(1);
  const Shape shape = BroadcastShapes(ctx, {x.shape(), y.shape()});
  Tensor& out = ctx.out(0, x.dtype(), shape);
  if (x.dtype() == DType::kFloat && y.dtype() == DType::kFloat) {
    // float bases and exponents: broadcast runs through the session's BinaryF32 kernel
    // (kBinPowF32 is math::Pow, what the loop below computes).
    BroadcastBinaryF32(ctx, kBinPowF32, x, y, out);
    return;
  }
  std::vector<double> yv(static_cast<size_t>(y.numel()));
  const bool yok = DispatchNumeric(y.dtype(), [&]<class T>() {
    for (int64_t i = 0; i < y.numel(); ++i) yv[size_t(i)] = double(Widen(y.data<T>()[i]));
  });
  if (!yok) throw ctx.Fail(ErrorCode::kTypeMismatch, "exponent type " + DTypeName(y.dtype()) + " is not supported");
  if (x.dtype() == DType::kFloat && ctx.kernels) {
    // float bases: the exponents as binary32 (what the loop below uses), then broadcast
    // runs through the session's BinaryF32 kernel (kBinPowF32 is math::Pow).
    Tensor yf;
    if (y.dtype() != DType::kFloat) {
      yf = Tensor(DType::kFloat, y.shape());
      for (size_t i = 0; i < yv.size(); ++i) yf.mutable_data<float>()[i] = float(yv[i]);
    }
    BroadcastBinaryF32(ctx, kBinPowF32, x, y.dtype() == DType::kFloat ? y : yf, out);
    return;
  }
  const auto ix = BroadcastIndex(x.shape(), shape), iy = BroadcastIndex(y.shape(), shape);
  const bool ok = DispatchNumeric(x.dtype(), [&]<class T>() {
    if constexpr (std::is_same_v<T, bool>) {
      throw ctx.Fail(ErrorCode::kTypeMismatch, "bool base is not supported");
    } else if constexpr (kIsFloat<T>) {
      for (size_t i = 0; i < ix.size(); ++i) {
        const double b = double(Widen(x.data<T>()[ix[i]]));
        if constexpr (std::is_same_v<T, double>)
          out.mutable_data<T>()[i] = math::PowD(b, yv[size_t(iy[i])]);
        else
          out.mutable_data<T>()[i] = Narrow<T>(float(math::PowD(b, double(float(yv[size_t(iy[i])])))));
      }
    } else {
      using U = std::make_unsigned_t<T>;
      for (size_t i = 0; i < ix.size(); ++i) {
        const T b = x.data<T>()[ix[i]];
        const double e = yv[size_t(iy[i])];
        int64_t k = e != e ? 0 : e > 1e18 ? int64_t(1e18) : e < -1e18 ? int64_t(-1e18) : int64_t(e);
        U r = 1;
        if (k < 0) {
          r = b == T(1) ? U(1) : (std::is_signed_v<T> && b == T(-1)) ? U((k & 1) ? U(0) - U(1) : U(1)) : U(0);
        } else {
          U base = U(b);
          while (k) {
            if (k & 1) r = U(r * base);
            base = U(base * base);
            k >>= 1;
          }
        }
        out.mutable_data<T>()[i] = T(r);
      }
    }
  });
  if (!ok) throw ctx.Fail(ErrorCode::kTypeMismatch, "base type " + DTypeName(x.dtype()) + " is not supported");
}

}  // namespace ops
}  // namespace onemodel::impl
