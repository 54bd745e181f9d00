// The vocabulary of OneModel's own operators, which the exact-mode passes
// (passes/passes.h) create and ops/fused/fused_ops.cpp runs.
#pragma once

#include <cstdint>
#include <string>

#include "core/function_ref.h"
#include "graph/graph.h"

namespace onemodel::impl {

// The domain of OneModel's own operators (fused nodes the passes create).
inline constexpr const char* kOneModelDomain = "onemodel";

// Whether n is an elementwise node an onemodel.ElementwiseChain may take: Add, Sub, Mul,
// Div, Relu, HardSigmoid, HardSwish, Exp, Tanh, Sigmoid, Erf, Clip (default domain, one
// output).
bool IsChainableElementwise(const Node& n);

// The 8-bit quantisation and dequantisation (QdqParams, graph/graph.h) a QuantizeDequantize body (QuantizeLinear, then
// DequantizeLinear) describes, when it runs as one QuantDequantF32 pass: every scale a
// single float, every zero point a single int8 or uint8 of the type Q makes (absent: 0),
// no blocks, a float result, and (x_known) a float X. input: the tensor a body input
// name holds, or null. Else false (the body runs node by node).
bool QdqFastParams(const Graph& body, FunctionRef<const Tensor*(const std::string&)> input, bool x_known, QdqParams* p);

struct OpContext;
// y[i] = the quantisation then dequantisation q describes of x[i], i < n (y may be x), in
// chunks over the session's threads: the QuantDequantF32 kernel of the session's table
// (the reference's with a scalar table).
void RunQuantDequant(const OpContext& ctx, const QdqParams& q, const float* x, float* y, int64_t n);

namespace ops {
// A fused node's body node by node, its inputs bound to the node's: how every fused
// operator runs inputs its one-pass path does not take.
void RunBody(OpContext& ctx, const Graph& body);
}  // namespace ops

}  // namespace onemodel::impl
