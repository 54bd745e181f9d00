// The integer convolution family's table (ConvInteger and QLinearConv: ops/quant/int_conv.cpp).
// The definition of the int32 sums is ref::ConvIntegerI32 (ref/quant.h); sums modulo 2^32
// do not depend on the order of their terms, so every row gives the reference's bits.
#pragma once

#include "core/shape.h"
#include "ops/family.h"
#include "ref/quant.h"

namespace onemodel::impl {
namespace ops {

// A ConvInteger / QLinearConv node's validated parameters (ref/quant.h), its output's
// shape, and what the vector rows need: gemm_fits (1-D or 2-D), native_dot (the session's
// GemmU8S8I32 runs on dot-product instructions).
struct IntConvNode : IntConvParams {
  Shape out_shape;
  bool gemm_fits = false, native_dot = false;
};
struct IntConvRun;  // one run of a row: the operands and the int32 sums (ops/quant/int_conv.cpp)
using IntConvRunFn = void (*)(const IntConvNode& p, const IntConvRun& r);
// Rows: "reference" (ref::ConvIntegerI32), "i16-pairs" (1-D/2-D: im2col of int16
// differences through GemmI16PairsI32, chosen without native dot products), "u8s8-dot"
// (1-D/2-D: raw weights (u8) x im2col (s8) quads through GemmU8S8I32, chosen with them).
const FamilyTable<IntConvNode, IntConvRunFn>& IntConvTable();

}  // namespace ops
}  // namespace onemodel::impl
