// ConvTranspose's family table (ops/conv/conv_transpose.cpp). Every row gives the reference's
// bits (ref::ConvTransposeF32): per output, the fold from -0.0 over input channels
// (outer) and kernel positions (row-major) of the taps that land on it, then the bias.
#pragma once

#include "ops/family.h"

namespace onemodel::impl {
namespace ops {

// What a ConvTranspose node's plan keeps (its geometry, the stride phases, the row), and
// what one run of a row works on (ops/conv/conv_transpose.cpp).
struct ConvTPrep;
struct ConvTRun;
using ConvTRunFn = void (*)(const ConvTRun&);
// Rows: "reference" (ref::ConvTransposeF32), "patch-gemm" (kernel == stride, no pads or
// dilation: one 1x1 GEMM per kernel position), "phase-taps" (any geometry with 4+
// outputs per group and a fold of 4+ terms: per stride phase a stride-1 convolution by
// taps, TapGemm; weights that are not all finite run the reference).
const FamilyTable<ConvTPrep, ConvTRunFn>& ConvTransposeTable();

}  // namespace ops
}  // namespace onemodel::impl
