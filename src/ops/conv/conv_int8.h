// Fast mode's integer convolution: the Conv row "qdq-u8s8" (ops/conv/conv.cpp's table,
// Exactness::kFast). A 2-D Conv of one group whose input lies on a quantisation grid
// (Node::fusion.in_grid, set by the fast pass MarkConvInputGrids) and whose constant
// weights are symmetric int8 values times a scale per output channel (or one for the
// tensor) computes on the integers: the input re-quantised to its bytes (exactly the q
// it was made of), im2col rows of bytes per output position, GemmU8S8I32 (exact int32
// sums), then per output channel float(sum - zp * sum of weights) * (x scale * w scale)
// + bias, the activation and the fused quantisation (DequantRowsI32F32, QuantDequantF32),
// transposed into the output. Against exact mode it differs by the float rounding of
// exact mode's sum (the integer sum has none) and of the combined scale; docs/graph-passes.md
// ("Fast passes") states the bound.
#pragma once

#include "ops/conv/conv.h"

namespace onemodel::impl {
namespace ops {

// Whether the row computes this node: in_grid with an 8-bit grid, 2-D, group 1, no
// activation or Relu (input channels that are not a multiple of 4 are padded), a fold of
// at most 65536 terms (so every sum, at most 65536 * 255 * 128 in magnitude, fits int32).
bool ConvInt8Fits(const ConvPlan& p);
// Whether automatic planning takes it: on dot-product instructions (VNNI: avx512vnni,
// avxvnni) and for folds of 64 terms or more. Without them GemmU8S8I32 is a composition
// that loses to the float path (resnet50_int8 at 1 thread, exact / fast: avx2 88 / 192 ms,
// avx512 48 / 89, wasm SIMD128 221 / 275; avxvnni 131 / 52, avx512vnni 52 / 21); shorter
// folds spend more on the input's quantisation and the output's transpose than the
// integer products save (mobilenet_v3_large_int8's first pointwise layers, 24 channels
// into 72 at 56x56: 0.106 ms exact, 0.203 integer). Zen 5, AMD EPYC family 26.
bool ConvInt8Chosen(const ConvPlan& p);
// Whether this run can take the row: the weights are constant and on an int8 grid (their
// packed form is made and kept on the first call). Otherwise the plan's exact row runs.
bool ConvInt8Ready(const OpContext& ctx, const ConvPlan& p, const Tensor& w);
// Runs the row (after ConvInt8Ready): y = the node's float output, bias null for none.
void RunConvInt8(const OpContext& ctx, const ConvPlan& p, const float* x, const float* bias, float* y);

}  // namespace ops
}  // namespace onemodel::impl
