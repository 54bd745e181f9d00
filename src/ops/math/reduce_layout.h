// The layout of a reduction (which elements each output folds, in which order) and the
// folds themselves (the oracle's, ref/reduce.h), shared by the reductions
// (ops/math/reduce.cpp), the softmax family (ops/nn/softmax.cpp) and the losses. Order
// (exact-contract section 3): the elements an output reduces, taken in row-major order,
// are summed with the canonical L-lane split when the innermost axis is among the reduced
// axes (they then form contiguous runs), and folded left to right otherwise. Sums start
// at -0.0; max/min follow IEEE 754-2019.
#pragma once

#include <cstdint>
#include <type_traits>

#include "ops/op_context.h"
#include "ops/util.h"
#include "ref/reduce.h"

namespace onemodel::impl {
namespace ops {

// The reduced-element sequence of every output: out_index -> list of flat indices.
struct ReduceLayout {
  Shape out_shape;
  int64_t outputs = 0, per_output = 0;
  bool lanes = false;  // canonical L-lane order applies
  IndexTable base;     // flat index of each output's first element
  IndexTable offsets;  // offsets of the reduced elements, row-major
};

// The layout for reducing `in` over `axes` (empty: all, unless noop); keepdims keeps the
// reduced axes as 1s in out_shape. Axes out of range are kInvalidArgument naming the node.
ReduceLayout MakeReduceLayout(const OpContext& ctx, const Shape& in, const Shape& axes, bool keepdims, bool noop);

// The folds are the oracle's own (ref/reduce.h): the ordered sum, IEEE max/min, Exp/Log
// in the compute type.
using ref::ExpC;
using ref::LogC;
using ref::MaxOf;
using ref::MinOf;
using ref::SumOrdered;

// The square root (correctly rounded) in the compute type C: float or double.
template <class C>
C SqrtC(C v) {
  if constexpr (std::is_same_v<C, float>)
    return __builtin_sqrtf(v);
  else
    return __builtin_sqrt(v);
}

}  // namespace ops
}  // namespace onemodel::impl
