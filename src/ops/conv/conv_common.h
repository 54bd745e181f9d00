// What the convolution and pooling operators share (ops/conv/conv.cpp, conv_transpose.cpp,
// int_conv.cpp, pool.cpp): geometry from the attributes, prepared-state keys, the bias,
// the finite-weights check, and the pooling planes.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "core/index.h"
#include "ops/op_context.h"
#include "ops/parallel.h"
#include "ops/util.h"
#include "ref/conv.h"

namespace onemodel::impl {
namespace ops {

using ref::ConvGeometry;
using ref::ConvPlane;
using ref::MakeConvPlane;

// Resolves strides, dilations, pads (explicit or auto_pad) and output sizes from the
// node's attributes for input shape x and the kernel's spatial sizes.
ConvGeometry MakeGeometry(const OpContext& ctx, const Shape& x, const std::vector<int64_t>& kernel, bool ceil_mode);
// The kernel_shape attribute of a convolution with weight w (rank >= 3), W's spatial
// dimensions when absent; kShapeMismatch when it names other sizes than W has (the
// kernels read W by those sizes).
std::vector<int64_t> KernelShape(const OpContext& ctx, const Tensor& w);

// Pooling by planes, per channel nc of NC: the outputs start at `init`, every tap run of
// the plane goes through step(acc + o, x + i, n) (PlaneTapRuns), then finish(acc). The
// results land in y, directly when it is float, else through a buffer and StoreF32.
template <class Step, class Finish>
void PoolPlanes(const OpContext& ctx, const ConvPlane& pl, int64_t NC, int64_t in_sp, int64_t out_sp, const float* x,
                Tensor& y, float init, Step step, Finish finish) {
  std::vector<float> ybuf;
  float* yf = y.dtype() == DType::kFloat ? y.mutable_data<float>() : (ybuf.resize(size_t(NC * out_sp)), ybuf.data());
  ParallelFor(ctx, NC, 1, [&](int64_t b, int64_t e) {
    for (int64_t nc = b; nc < e; ++nc) {
      const float* xc = x + nc * in_sp;
      float* acc = yf + nc * out_sp;
      std::fill(acc, acc + out_sp, init);
      PlaneTapRuns(pl, [&](int64_t o, int64_t i, int64_t n) { step(acc + o, xc + i, n); });
      finish(acc);
    }
  });
  if (!ybuf.empty())
    for (int64_t i = 0; i < NC * out_sp; ++i) StoreF32(y, i, ybuf[size_t(i)]);
}

// The inputs a convolution's prepared state was made for: the input and weight shapes
// and whether there is a bias.
struct ConvInputs : NodeState {
  Shape x_shape, w_shape;
  bool has_bias = false;
  void Set(const OpContext& ctx, const Tensor& x, const Tensor& w) {
    x_shape = x.shape();
    w_shape = w.shape();
    has_bias = ctx.has_input(2);
  }
  bool Fits(const OpContext& ctx, const Tensor& x, const Tensor& w) const {
    return x_shape == x.shape() && w_shape == w.shape() && has_bias == ctx.has_input(2);
  }
};

// The node's prepared state P (a ConvInputs), made by make() when absent or made for
// other inputs.
template <class P, class Make>
std::shared_ptr<const P> PreparedConv(const OpContext& ctx, const Tensor& x, const Tensor& w, Make make) {
  return ctx.Prepared<P>([&](const P& p) { return p.Fits(ctx, x, w); }, make);
}

// A convolution's bias (input 2) as floats, read in place when float (null: none);
// kShapeMismatch unless it has one value per output channel.
inline const float* ConvBias(const OpContext& ctx, int64_t M, std::optional<F32View>* view) {
  if (!ctx.has_input(2)) return nullptr;
  view->emplace(ctx, ctx.in(2));
  if (int64_t((*view)->size()) != M)
    throw ctx.Fail(ErrorCode::kShapeMismatch, "bias has " + std::to_string((*view)->size()) + " elements for " +
                                                  std::to_string(M) + " output channels");
  return (*view)->data();
}

// A convolution's finishing steps on finished sums, in order: + bias[m] (bias not null),
// the activation act, then a fused residual Add (z not null: + Z in the Add's operand
// order) and the activation after it (post). Steps already applied are left null/kNone.
struct ConvFinish {
  const float* bias = nullptr;  // per output channel of the rows below
  Activation act = Activation::kNone;
  const float* z = nullptr;  // Z at y's offsets (the rows below)
  bool z_first = false;      // the Add was Add(Z, conv)
  Activation post = Activation::kNone;
  bool any() const { return bias || act != Activation::kNone || z; }
};

// The steps of f after the bias on n consecutive results o (Z's at z): the activation,
// then + Z in the Add's operand order and post (f.z not null).
void FinishSpan(const OpContext& ctx, const ConvFinish& f, float* o, const float* z, int64_t n);

// Applies f to rows [m0, m1) of y (output channel m's results start at y + m * ldy; Z
// at the same offsets from f.z; bias[m]), positions [p0, p0 + np) of each, with the
// session's kernels (the reference's on a session without vector kernels).
void FinishRows(const OpContext& ctx, const ConvFinish& f, float* y, int64_t ldy, int64_t m0, int64_t m1, int64_t p0,
                int64_t np);

// Whether every weight is finite (the exponent field is not all ones; a branch-free
// scan): the GEMM algorithms' condition (ops/conv/conv_gemm.h). For a constant weight (input
// 1) the answer is kept in the session's derived cache, so the scan runs once.
bool FiniteWeights(const OpContext& ctx, const F32View& w);

// Whether a float convolution of Mg output channels per group, each folding Kg terms,
// may take a GEMM algorithm: a vector session, enough output channels to fill a
// register tile, and finite weights.
inline bool UseConvGemm(const OpContext& ctx, int64_t Kg, int64_t Mg, const F32View& w) {
  return ctx.VectorKernels() && Mg >= 4 && Kg >= 4 && FiniteWeights(ctx, w);
}

}  // namespace ops
}  // namespace onemodel::impl
