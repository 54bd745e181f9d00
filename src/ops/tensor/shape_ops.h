// The family tables of Transpose and Gather (ops/tensor/shape_ops.cpp): data movement, every bit
// kept. The reference row is the oracle's element-by-element order.
#pragma once

#include <cstdint>

#include "core/tensor.h"
#include "ops/family.h"

namespace onemodel::impl {
namespace ops {

// A Transpose node: its input, output (shape s), the normalised perm, the input's
// strides, and lp, the output position of the input's last axis.
struct TransposeParams {
  const Tensor* x = nullptr;
  Tensor* out = nullptr;
  const Shape* s = nullptr;
  const Shape* perm = nullptr;
  const Shape* in_st = nullptr;
  int64_t r = 0, lp = 0;
};
using TransposeRun = void (*)(const OpContext&, const TransposeParams&);
// Rows: "reference" (rows of the output's last axis copied as bytes, element by element
// for strings), "blocks32" (32-bit elements whose output's last axis is not the input's:
// 2-D blocks through the Transpose32 kernel).
const FamilyTable<TransposeParams, TransposeRun>& TransposeTable();

// A Gather node: input x, output out (zeroed), outer/inner sizes around the axis of size
// dim, and the checked indices (non-negative, < dim) in order.
struct GatherParams {
  const Tensor* x = nullptr;
  Tensor* out = nullptr;
  int64_t outer = 1, inner = 1, dim = 0;
  const int64_t* rows = nullptr;
  int64_t n = 0;
};
using GatherRun = void (*)(const OpContext&, const GatherParams&);
// Rows: "reference" (element by element), "slices" (whole slices copied as bytes, over
// the threads; not for strings).
const FamilyTable<GatherParams, GatherRun>& GatherTable();

}  // namespace ops
}  // namespace onemodel::impl
