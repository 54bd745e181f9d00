// Fast mode's Conv row "winograd-f4x4": 3x3, stride-1, dilation-1, one-group 2-D
// convolutions by Winograd F(4x4, 3x3) (ref/winograd.h: the transforms and their operation
// order), the 36 channel sums per tile by the session's GEMM kernels (the fused
// multiply-add twins where the target has FMA). Bound and tests: docs/graph-passes.md
// "Fast passes".
#pragma once

#include "core/tensor.h"
#include "ops/conv/conv.h"
#include "ops/op_context.h"

namespace onemodel::impl {
namespace ops {

// Planes of at most this many 4x4 tiles (a 32x32 output) run as three splits per image
// when the blocks of tile rows would be several (conv_winograd.cpp), which lets the row
// take larger transformed weights there (conv.cpp's WinogradChosen).
constexpr int64_t kWinogradWholeImageTiles = 64;

// Y (the node's output for image-major NCHW x) with the bias and activation act applied.
// Returns false, having written nothing that matters, when the row gives way: the weights
// are not a constant float tensor, or some input value is not finite (an inf or NaN would
// spread over its tiles' outputs); the caller then runs the GEMM row.
bool WinogradF4Conv(const OpContext& ctx, const ConvPlan& p, const Tensor& w, const float* x, const float* bias,
                    Activation act, float* y, bool fma);

}  // namespace ops
}  // namespace onemodel::impl
