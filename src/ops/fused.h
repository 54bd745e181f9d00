// The vocabulary of OneModel's own operators, which the exact-mode passes
// (passes/passes.h) create and ops/fused_ops.cpp runs.
#pragma once

#include "graph/graph.h"

namespace onemodel::impl {

// The domain of OneModel's own operators (fused nodes the passes create).
inline constexpr const char* kOneModelDomain = "onemodel";

// The attribute a fused producer carries: its output goes through this activation
// ("Relu" or "HardSwish") before it is stored. The dot keeps it apart from ONNX
// attribute names.
inline constexpr const char* kFusedActivationAttr = "onemodel.activation";

// Whether n is an elementwise node an onemodel.ElementwiseChain may take: Add, Sub, Mul,
// Div, Relu, HardSigmoid, HardSwish, Exp, Tanh, Sigmoid, Erf, Clip (default domain, one
// output).
bool IsChainableElementwise(const Node& n);

}  // namespace onemodel::impl
