// Static type and shape inference: what can be known about every value before the
// graph runs. Constant subgraphs (initializers, Constant, Shape of a static shape, and
// anything computed only from those) are folded with the reference kernels (exact
// mode allows constant folding with ref kernels, exact-contract section 7); the common
// operators have shape rules; everything else is left unknown and found at run time.
#pragma once

#include <map>
#include <string>

#include "graph/graph.h"

namespace onemodel::impl {

struct InferredValue {
  TensorType type;  // dtype UNDEFINED / has_shape false when unknown; dims -1 unknown
  bool is_constant = false;
  Tensor constant;  // when is_constant
};

// Infers every value of the model's main graph. Graph inputs take their declared types
// unless `inputs` overrides them (for example with a concrete shape).
std::map<std::string, InferredValue> InferTypes(const Model& model,
                                                const std::map<std::string, TensorType>& inputs = {});

}  // namespace onemodel::impl
