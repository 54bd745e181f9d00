// The pooling family (MaxPool, AveragePool, LpPool and their global forms: ops/conv/pool.cpp)
// and its table. Every row gives the reference's bits (ref/pool.h, ref::PoolF32): per
// output, the window's taps folded in row-major order, padding taps skipped (max: the
// first NaN sticks; average: the sum from -0.0, then one division by the count; Lp).
#pragma once

#include <cstdint>
#include <vector>

#include "ops/family.h"
#include "ref/conv.h"
#include "ref/pool.h"

namespace onemodel::impl {
namespace ops {

// A pooling node's plan: the reference's parameters and what the faster rows need.
struct PoolPlan {
  ref::PoolParams ref;
  bool indices = false;  // a MaxPool whose indices (output 1) are wanted
  // 1-D/2-D windows of at most 4096 x 4096 taps: the planes (pl) and, per output row and
  // column, the average's divisors (count_h: {1} in 1-D).
  bool planes = false;
  ref::ConvPlane pl{};
  std::vector<float> count_h, count_w;
};
// Runs the planned row on x (the input's N * C planes as floats) into y (the output; a
// float one is written directly, another through f32 results) and idx (MaxPool's
// indices, or null).
using PoolRun = void (*)(const OpContext& ctx, const PoolPlan& p, const float* x, Tensor& y, Tensor* idx);
// Rows: reference (ref::PoolF32), global-average (GlobalAveragePool: SumPlanesF32 over
// blocks of channels), max-planes (1-D/2-D MaxPool without indices: tap runs on
// MaxStepStridedF32), average-planes (1-D/2-D AveragePool: tap runs on MulAddStridedF32,
// x * 1, then / count).
const FamilyTable<PoolPlan, PoolRun>& PoolTable();

}  // namespace ops
}  // namespace onemodel::impl
