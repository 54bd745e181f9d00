// The family table of Pad (ops/tensor/tensor_ops.cpp): data movement, every bit kept. The
// reference row is the oracle's element-by-element order.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "ops/family.h"

namespace onemodel::impl {
namespace ops {

// A Pad node: input x, output out (zeroed, of shape s), the constant (cval: input 2, may
// be empty; value_attr/value: the attribute before opset 11), the mode and the leading
// pad of each axis.
struct PadParams {
  const Tensor* x = nullptr;
  Tensor* out = nullptr;
  const Tensor* cval = nullptr;
  std::string mode;
  const std::vector<int64_t>* lo = nullptr;
  const Shape* s = nullptr;
  bool value_attr = false;
  float value = 0.0f;
};
using PadRun = void (*)(const OpContext&, const PadParams&);
// Rows: "reference" (element by element), "rows" (rows of the last axis copied as bytes;
// constant, edge, wrap and reflect modes, not strings).
const FamilyTable<PadParams, PadRun>& PadTable();

}  // namespace ops
}  // namespace onemodel::impl
