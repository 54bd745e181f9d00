// What the convolution and pooling operators share (see conv_common.h).
#include "ops/conv/conv_common.h"

#include <algorithm>
#include <string>

namespace onemodel::impl {
namespace ops {

// Resolves strides, dilations, pads (explicit or auto_pad) and output sizes.
std::vector<int64_t> KernelShape(const OpContext& ctx, const Tensor& w) {
  const std::vector<int64_t> dims(w.shape().begin() + 2, w.shape().end());
  std::vector<int64_t> kernel = ctx.attr_ints("kernel_shape", dims);
  if (kernel != dims)
    throw ctx.Fail(ErrorCode::kShapeMismatch, "kernel_shape " + ShapeToString(Shape(kernel.begin(), kernel.end())) +
                                                  " does not match the weight " + ShapeToString(w.shape()));
  return kernel;
}

ConvGeometry MakeGeometry(const OpContext& ctx, const Shape& x, const std::vector<int64_t>& kernel, bool ceil_mode) {
  ConvGeometry g;
  g.dims = int64_t(x.size()) - 2;
  if (g.dims < 1) throw ctx.Fail(ErrorCode::kShapeMismatch, "input must have rank >= 3");
  g.in.assign(x.begin() + 2, x.end());
  g.kernel = kernel;
  if (int64_t(g.kernel.size()) != g.dims)
    throw ctx.Fail(ErrorCode::kShapeMismatch, "kernel rank does not match the input");
  g.stride = ctx.attr_ints("strides", std::vector<int64_t>(size_t(g.dims), 1));
  g.dil = ctx.attr_ints("dilations", std::vector<int64_t>(size_t(g.dims), 1));
  std::vector<int64_t> pads = ctx.attr_ints("pads", std::vector<int64_t>(size_t(2 * g.dims), 0));
  if (int64_t(g.stride.size()) != g.dims || int64_t(g.dil.size()) != g.dims || int64_t(pads.size()) != 2 * g.dims) {
    throw ctx.Fail(ErrorCode::kInvalidModel, "strides, dilations or pads have the wrong length");
  }
  const std::string ap = ctx.attr_s("auto_pad", "NOTSET");
  g.pad_b.resize(size_t(g.dims));
  g.pad_e.resize(size_t(g.dims));
  g.out.resize(size_t(g.dims));
  // Each size below 2^31 (a decision: no model comes near, and then no sum or product
  // of two of them overflows), so a window far larger than any input is an error here
  // rather than a loop of 2^60 taps or a per-column table of gigabytes later.
  const int64_t kMax = int64_t(1) << 31;
  for (int64_t d = 0; d < g.dims; ++d) {
    const size_t i = size_t(d);
    if (g.stride[i] <= 0 || g.dil[i] <= 0)
      throw ctx.Fail(ErrorCode::kInvalidModel, "strides and dilations must be positive");
    if (g.kernel[i] < 1 || g.kernel[i] >= kMax || g.stride[i] >= kMax || g.dil[i] >= kMax || pads[i] < 0 ||
        pads[i] >= kMax || pads[i + size_t(g.dims)] < 0 || pads[i + size_t(g.dims)] >= kMax)
      throw ctx.Fail(ErrorCode::kInvalidModel,
                     "kernel sizes, strides and dilations must be in [1, 2^31), pads in [0, 2^31)");
    const int64_t ek = g.dil[i] * (g.kernel[i] - 1) + 1;
    if (ap == "SAME_UPPER" || ap == "SAME_LOWER") {
      g.out[i] = (g.in[i] + g.stride[i] - 1) / g.stride[i];
      const int64_t total = std::max<int64_t>(0, (g.out[i] - 1) * g.stride[i] + ek - g.in[i]);
      g.pad_b[i] = ap == "SAME_UPPER" ? total / 2 : total - total / 2;
      g.pad_e[i] = total - g.pad_b[i];
      continue;
    }
    if (ap == "VALID") {
      g.pad_b[i] = g.pad_e[i] = 0;
    } else {
      g.pad_b[i] = pads[i];
      g.pad_e[i] = pads[i + size_t(g.dims)];
    }
    const int64_t span = g.in[i] + g.pad_b[i] + g.pad_e[i] - ek;
    if (span < 0) throw ctx.Fail(ErrorCode::kShapeMismatch, "the kernel is larger than the padded input");
    g.out[i] = (ceil_mode ? (span + g.stride[i] - 1) / g.stride[i] : span / g.stride[i]) + 1;
    if (ceil_mode && (g.out[i] - 1) * g.stride[i] >= g.in[i] + g.pad_b[i]) --g.out[i];
  }
  return g;
}

bool FiniteWeights(const OpContext& ctx, const F32View& w) {
  auto scan = [&] {
    uint32_t bad = 0;
    for (size_t i = 0; i < w.size(); ++i) bad |= uint32_t((F2U(w[i]) & 0x7F800000u) == 0x7F800000u);
    return bad == 0;
  };
  const Tensor* known = ctx.ConstDerived(1, "finite", [&](const Tensor&) {
    Tensor t(DType::kBool, Shape{}, "finite flag");
    *t.mutable_data<bool>() = scan();
    return t;
  });
  return known ? *known->data<bool>() : scan();
}

void FinishSpan(const OpContext& ctx, const ConvFinish& f, float* o, const float* z, int64_t n) {
  const bool vec = ctx.VectorKernels();
  auto* binary = vec ? ctx.kernels->BinaryF32 : &ref::BinaryF32;
  auto* unary = vec ? ctx.kernels->UnaryF32 : &ref::UnaryF32;
  if (f.act != Activation::kNone) unary(int32_t(f.act), 0.0f, 0.0f, o, o, n);
  if (!f.z) return;
  if (f.z_first)
    binary(kBinAddF32, z, 1, o, 1, o, n);
  else
    binary(kBinAddF32, o, 1, z, 1, o, n);
  if (f.post != Activation::kNone) unary(int32_t(f.post), 0.0f, 0.0f, o, o, n);
}

void FinishRows(const OpContext& ctx, const ConvFinish& f, float* y, int64_t ldy, int64_t m0, int64_t m1, int64_t p0,
                int64_t np) {
  auto* binary = ctx.VectorKernels() ? ctx.kernels->BinaryF32 : &ref::BinaryF32;
  // Whole rows follow each other in y and Z: then per group of rows (about 32 KiB) the
  // bias row by row and the later steps over the group at once (fewer, longer kernel
  // calls; each element still takes the steps in order). Else row by row.
  const int64_t rows = np == ldy ? std::max<int64_t>(1, 8192 / std::max<int64_t>(np, 1)) : 1;
  for (int64_t a = m0; a < m1; a += rows) {
    const int64_t b = std::min(m1, a + rows);
    for (int64_t m = a; m < b && f.bias; ++m)  // o + bias: the reference's operand order
      binary(kBinAddF32, y + m * ldy + p0, 1, f.bias + m, 0, y + m * ldy + p0, np);
    FinishSpan(ctx, f, y + a * ldy + p0, f.z ? f.z + a * ldy + p0 : nullptr, (b - a) * np);
  }
}

}  // namespace ops
}  // namespace onemodel::impl
