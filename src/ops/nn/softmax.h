// The softmax family (Softmax, LogSoftmax, Hardmax: ops/nn/softmax.cpp) and its table. The
// definition of Softmax's bits is ref::SoftmaxRowF32 (ref/softmax.h) for a row, the same
// steps with the reduction's order (ops/math/reduce_layout.h) for any axis.
#pragma once

#include <cstdint>

#include "ops/family.h"
#include "ops/math/reduce_layout.h"

namespace onemodel::impl {
namespace ops {

// A float Softmax node's validated parameters: the layout of its rows.
struct SoftmaxParams {
  const ReduceLayout* layout = nullptr;
  bool rows_fit = false;  // float Softmax along contiguous rows
};
// Runs the planned row on the node's rows: x and y of p.layout's shape.
using SoftmaxRun = void (*)(const OpContext& ctx, const SoftmaxParams& p, const float* x, float* y);
// Rows: reference (ref::SoftmaxRowF32 per row, in turn), rows (the session's
// SoftmaxRowF32 kernel, rows over the threads).
const FamilyTable<SoftmaxParams, SoftmaxRun>& SoftmaxTable();

}  // namespace ops
}  // namespace onemodel::impl
