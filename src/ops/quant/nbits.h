// The table of ONNX Runtime's MatMulNBits (com.microsoft), ops/quant/nbits.cpp. Its
// definition is ref/nbits.h (ref::MatMulNBitsF32).
#pragma once

#include "core/tensor.h"
#include "ops/family.h"
#include "ref/nbits.h"

namespace onemodel::impl {
namespace ops {

// A MatMulNBits node, validated: the geometry, A as f32 [M, K] (float A in place, float16
// widened once), B's codes, the scales and zero points as f32 / packed bytes, the bias (null:
// none) and the output (A's type, every element written by the row).
struct NBitsNode {
  ref::NBitsParams p;
  const float* a = nullptr;
  const uint8_t* b = nullptr;
  ref::NBitsQuant q;
  const float* bias = nullptr;
  Tensor* out = nullptr;
  bool const_weights = false;  // B, the scales and zero points (and g_idx) are constants
  int f32_lanes = 1;           // the session's target's (KernelTable::f32_lanes)
};
using NBitsRun = void (*)(const OpContext& ctx, const NBitsNode& n);
// Rows: "reference" (ref::MatMulNBitsF32); "gemv" (the rows of A through the
// NBitsGemmF32 kernel on W in ref/nbits.h's GEMV layout, 2- and 4-bit codes two to a
// byte, made once per session; no g_idx; chosen with constant weights for up to 4 rows, and on targets of 8
// float lanes or more up to 64 rows of weights too big for dequant-gemm); "dequant-gemm"
// (W dequantized to f32 by its own
// loops, once per session when the weights are constants, then the GEMM kernels' fold:
// per output, k ascending from -0.0, then the bias; chosen for constant weights up to 4M
// values); "column-blocks" (64 columns at a time dequantized into a per-thread scratch,
// each through the GEMM kernel over the whole K: no f32 copy of W is kept).
const FamilyTable<NBitsNode, NBitsRun>& MatMulNBitsTable();

}  // namespace ops
}  // namespace onemodel::impl
