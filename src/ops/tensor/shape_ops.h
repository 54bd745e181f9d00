// The family tables of Transpose and Gather (ops/tensor/shape_ops.cpp): data movement, every bit
// kept. The reference rows run the oracle's definitions, ref::Transpose (ref/transpose.h) and
// ref::Gather (ref/data_movement.h).
#pragma once

#include <cstdint>

#include "core/tensor.h"
#include "ops/family.h"
#include "ref/data_movement.h"

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
// Rows: "reference" (ref::Transpose: rows of the output's last axis copied as bytes in turn,
// element by element for strings), "blocks32" (32-bit elements whose output's last axis is
// not the input's: 2-D blocks through the Transpose32 kernel), "rows" (rows of the output's
// last axis copied as bytes over the threads; not strings).
const FamilyTable<TransposeParams, TransposeRun>& TransposeTable();

// A Gather node: input x, output out (every element written; strings: constructed), and
// the reference's parameters (outer/inner sizes around the axis, the checked indices).
struct GatherParams {
  const Tensor* x = nullptr;
  Tensor* out = nullptr;
  ref::GatherParams ref;
};
using GatherRun = void (*)(const OpContext&, const GatherParams&);
// Rows: "reference" (ref::Gather, element by element), "slices" (whole slices copied as bytes, over
// the threads; not for strings).
const FamilyTable<GatherParams, GatherRun>& GatherTable();

}  // namespace ops
}  // namespace onemodel::impl
