// The family table of Pad (ops/tensor/pad.cpp): data movement, every bit kept. The
// reference row runs the oracle's definition, ref::Pad (ref/data_movement.h).
#pragma once

#include "core/tensor.h"
#include "ops/family.h"
#include "ref/data_movement.h"

namespace onemodel::impl {
namespace ops {

// A Pad node: input x, output out (zeroed, of shape ref.s), the constant (cval: input 2,
// may be empty), and the reference's parameters (the mode, checked; the leading pad of
// each axis; the attribute `value` before opset 11).
struct PadParams {
  const Tensor* x = nullptr;
  Tensor* out = nullptr;
  const Tensor* cval = nullptr;
  ref::PadParams ref;
};
using PadRun = void (*)(const OpContext&, const PadParams&);
// Rows: "reference" (ref::Pad, element by element), "rows" (rows of the last axis copied
// as bytes over the threads; not strings).
const FamilyTable<PadParams, PadRun>& PadTable();

}  // namespace ops
}  // namespace onemodel::impl
