// The family table of Where (ops/math/elementwise.cpp): a selection, every bit kept. The
// reference row runs the oracle's definition, ref::Where (ref/data_movement.h).
#pragma once

#include <cstddef>

#include "core/tensor.h"
#include "ops/family.h"

namespace onemodel::impl {
namespace ops {

// A Where node: condition c, values a and b (of one type, es bytes of storage each; 0
// for strings), the broadcast output shape. The rows create output 0.
struct WhereParams {
  const Tensor* c = nullptr;
  const Tensor* a = nullptr;
  const Tensor* b = nullptr;
  const Shape* shape = nullptr;
  size_t es = 0;
};
using WhereRun = void (*)(OpContext&, const WhereParams&);
// Rows: "reference" (ref::Where: element by element through broadcast index tables), "rows"
// (rows of the last axis, elements copied as storage bytes of 1, 2, 4, 8 or 16).
const FamilyTable<WhereParams, WhereRun>& WhereTable();

}  // namespace ops
}  // namespace onemodel::impl
