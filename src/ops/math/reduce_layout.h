// The layout of a reduction (which elements each output folds, in which order) and the
// folds themselves, shared by the reductions (ops/math/reduce.cpp), the softmax family
// (ops/nn/softmax.cpp) and the losses. Order (exact-contract section 3): the elements an
// output reduces, taken in row-major order, are summed with the canonical L-lane split
// when the innermost axis is among the reduced axes (they then form contiguous runs), and
// folded left to right otherwise. Sums start at -0.0; max/min follow IEEE 754-2019.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "ops/op_context.h"
#include "ops/util.h"
#include "ref/math.h"
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

// Sum of get(0..n) in the canonical order (lanes) or left to right.
template <class C, class Get>
C SumOrdered(int64_t n, bool lanes, Get get) {
  if constexpr (std::is_floating_point_v<C>) {
    if (lanes) return ref::SumCanonicalBy<C>(n, get);
    C acc = C(-0.0);
    for (int64_t i = 0; i < n; ++i) acc += get(i);
    return acc;
  } else {
    using U = std::make_unsigned_t<C>;
    U acc = 0;
    for (int64_t i = 0; i < n; ++i) acc = U(acc + U(get(i)));
    return C(acc);
  }
}

template <class C>
C MaxOf(C a, C b) {
  if constexpr (std::is_floating_point_v<C>) {
    if (a != a || b != b) return std::numeric_limits<C>::quiet_NaN();
    if (a == b) return std::signbit(a) ? b : a;
  }
  return a > b ? a : b;
}
template <class C>
C MinOf(C a, C b) {
  if constexpr (std::is_floating_point_v<C>) {
    if (a != a || b != b) return std::numeric_limits<C>::quiet_NaN();
    if (a == b) return std::signbit(a) ? a : b;
  }
  return a < b ? a : b;
}

template <class C>
C ExpC(C v) {
  if constexpr (std::is_same_v<C, float>)
    return math::Exp(v);
  else
    return math::ExpD(v);
}
template <class C>
C LogC(C v) {
  if constexpr (std::is_same_v<C, float>)
    return math::Log(v);
  else
    return math::LogD(v);
}
template <class C>
C SqrtC(C v) {
  if constexpr (std::is_same_v<C, float>)
    return __builtin_sqrtf(v);
  else
    return __builtin_sqrt(v);
}

}  // namespace ops
}  // namespace onemodel::impl
