// The family table of Cast and CastLike (ops/tensor/cast.cpp). The reference row is the
// project's conversion routines (the oracle's, ref::Cast in ref/cast.h), element by element.
#pragma once

#include "core/tensor.h"
#include "ops/family.h"
#include "ref/cast.h"

namespace onemodel::impl {
namespace ops {

// A Cast node: input x (neither string nor complex), the target type, and the reference's
// options (saturate, the E8M0 rounding mode). The rows create output 0.
struct CastParams {
  const Tensor* x = nullptr;
  DType to = DType::kFloat;
  ref::CastParams ref;
};
using CastRun = void (*)(OpContext&, const CastParams&);
// Rows: "reference" (ref::Cast), "int-to-float" (integers of at most 32 bits to float by C++'s
// conversion, which rounds to nearest even once: the same value; other types of a node
// it is forced on take the reference's conversion).
const FamilyTable<CastParams, CastRun>& CastTable();

}  // namespace ops
}  // namespace onemodel::impl
