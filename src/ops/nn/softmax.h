// The softmax family (Softmax, LogSoftmax, Hardmax: ops/nn/softmax.cpp) and its table. The
// definition of their bits is ref::Softmax (ref/softmax.h) for every node, any axis and
// element type; on contiguous float rows its steps are ref::SoftmaxRowF32's.
#pragma once

#include "core/dtype.h"
#include "core/tensor.h"
#include "ops/family.h"
#include "ref/softmax.h"

namespace onemodel::impl {
namespace ops {

// A Softmax, LogSoftmax or Hardmax node's validated parameters: the reference's (its
// rows, pointing into the node's reduction layout) and what the rows row needs.
struct SoftmaxPlan {
  ref::SoftmaxParams ref;
  DType dtype = DType::kFloat;  // of x and y: float, double, float16 or bfloat16
  bool rows_fit = false;        // float Softmax along contiguous rows, one after another
  bool fma = false;             // the session's target has a hardware FMA
};
// Runs the planned row on the node's rows: x the input, y the output (same shape and type).
using SoftmaxRun = void (*)(const OpContext& ctx, const SoftmaxPlan& p, const Tensor& x, Tensor& y);
// Rows: reference (ref::Softmax: every node), rows-fma (fast: the SoftmaxRowsFmaF32
// kernel, chosen where the target has a hardware FMA), rows (the session's SoftmaxRowsF32
// kernel, rows over the threads: float Softmax along contiguous rows).
const FamilyTable<SoftmaxPlan, SoftmaxRun>& SoftmaxTable();

}  // namespace ops
}  // namespace onemodel::impl
