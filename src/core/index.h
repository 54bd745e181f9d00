// Multi-index helpers shared by every layer: row-major strides, products of dims, and
// the odometer walk over every multi-index of a shape.
#pragma once

#include <cstdint>
#include <vector>

#include "core/limits.h"

namespace onemodel::impl {

[[noreturn]] void ThrowProductOverflow();

// The product of the dims (1 for none); kOutOfRange when it overflows 64 bits (sizes
// made from attributes reach here before any tensor of that size is allocated).
template <class Dims>
int64_t ProductOf(const Dims& dims) {
  int64_t p = 1;
  for (int64_t d : dims)
    if (__builtin_mul_overflow(p, d, &p)) ThrowProductOverflow();
  return p;
}

// Row-major strides of dims: the last is 1 (as an Out: std::vector, or a Shape, which
// keeps short lists off the heap).
template <class Out = std::vector<int64_t>, class Dims>
Out RowMajorStrides(const Dims& dims) {
  Out st(dims.size(), 1);
  for (size_t d = dims.size(); d-- > 1;) st[d - 1] = st[d] * int64_t(dims[d]);
  return st;
}

// Calls f(i, pos) for every multi-index pos of dims in row-major order, i its flat index.
template <class Dims, class F>
void ForEachIndex(const Dims& dims, F&& f) {
  const int64_t n = ProductOf(dims);
  std::vector<int64_t> pos(dims.size(), 0);
  const RunControl* stop = ThreadRunControl();
  uint32_t& polls = ThreadPollCount();
  for (int64_t i = 0; i < n; ++i) {
    PollStop(stop, polls);  // a reference loop nest as long as a model likes stops with its run
    f(i, static_cast<const std::vector<int64_t>&>(pos));
    for (size_t k = dims.size(); k-- > 0;) {
      if (++pos[k] < int64_t(dims[k])) break;
      pos[k] = 0;
    }
  }
}

}  // namespace onemodel::impl
