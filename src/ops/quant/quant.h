// The quantisation families' tables (ops/quant/quant.cpp): MatMulInteger and QLinearMatMul,
// QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear. Their definitions are the
// reference's (ref/quant.h). Integer sums are exact modulo 2^32, so any order gives the
// reference's bits; the float steps are the reference's, lane by lane.
#pragma once

#include <cstdint>

#include "core/function_ref.h"
#include "core/shape.h"
#include "ops/family.h"
#include "ref/quant.h"

namespace onemodel::impl {
namespace ops {

// A MatMulInteger / QLinearMatMul node's validated parameters: the product (ref/quant.h),
// the output's shape, the batch shapes of A and B and their broadcast (the reference's
// batches), and what the vector rows need: pairs_fit (A of rank >= 2 against a 2-D B,
// each zero point a scalar or 1-D of one per row of A / column of B), native_dot (the
// session's GemmU8S8I32 runs on dot-product instructions).
struct MatMulIntegerNode : MatMulIntegerParams {
  Shape out_shape, a_batch, b_batch, batch;
  bool pairs_fit = false, native_dot = false;
};
struct IntMatMulRun;  // one run of a row: the operands and the int32 output (ops/quant/quant.cpp)
using MatMulIntegerRunFn = void (*)(const MatMulIntegerNode& p, const IntMatMulRun& r);
// Rows: "reference" (ref::MatMulIntegerI32), "i16-pairs" (8-bit operands minus their zero
// points as int16 pairs through GemmI16PairsI32, chosen without native dot products),
// "u8s8-dot" (raw operands as u8 x s8 quads through GemmU8S8I32, the zero points applied
// after, chosen with them); both vector rows need pairs_fit.
const FamilyTable<MatMulIntegerNode, MatMulIntegerRunFn>& MatMulIntegerTable();

// Whether t is int8 or uint8.
bool Is8Bit(const Tensor& t);

// The int32 sums turned into floats where they are written: y = float(sum) * mult[n]
// (+ bias[n]) per column n, each operation one rounding in f32, the float's bits stored
// in the sum's place (onemodel.DynamicQuantMatMul's Cast, Mul and Add; the
// FinishDotSumsI32 kernel, ref/gemm.h).
struct IntToFloat {
  const float* mult;
  const float* bias;  // null: none
};

// The int32 sums of (a - azp)(b - bzp) over an [M, K] x [K, N] product (zero points may be
// null), wrapping, by the row the node plans, written to output(shape) (a buffer of the
// product's shape, contents undefined). b_in, bzp_in: the node's input indices of b and
// its zero point (for layouts kept per session when they are constants). to_float (may be
// null): a row that can applies it as it finishes each block and sets *finished; the
// others leave int32 sums.
void IntMatMul(const OpContext& ctx, const Tensor& a, const Tensor& b, const Tensor* azp, const Tensor* bzp,
               FunctionRef<int32_t*(const Shape&)> output, size_t b_in, size_t bzp_in,
               const IntToFloat* to_float = nullptr, bool* finished = nullptr);

// Whether runs of `inner` consecutive elements of x share a scale and zero point, run r
// taking parameter r % dim (per tensor: one run of the whole tensor, dim 1; per axis).
struct QuantRuns {
  bool fit = false;
  int64_t inner = 0, dim = 0;
};

// A QuantizeLinear node's validated parameters (ref/quant.h) and its runs; runs_fit: x
// and the scale float, y 8-bit, and runs.
struct QuantizeNode : QuantizeParams {
  QuantRuns runs;
  bool runs_fit = false;
};
using QuantizeRunFn = void (*)(OpContext& ctx, const QuantizeNode& p, const Tensor& x, const Tensor& scale,
                               const Tensor* zero);
// Rows: "reference" (ref::QuantizeLinear, element by element), "runs" (the runs through
// the QuantizeF32 kernel).
const FamilyTable<QuantizeNode, QuantizeRunFn>& QuantizeTable();

// A DequantizeLinear node's validated parameters: the layout, y's element type, its runs;
// runs_fit: x 8-bit, the scale and y float, and runs.
struct DequantizeNode : QuantLayout {
  DType out = DType::kFloat;
  QuantRuns runs;
  bool runs_fit = false;
};
using DequantizeRunFn = void (*)(OpContext& ctx, const DequantizeNode& p, const Tensor& x, const Tensor& scale,
                                 const Tensor* zero);
// Rows: "reference" (ref::DequantizeLinear, element by element), "runs" (the runs in a
// typed loop).
const FamilyTable<DequantizeNode, DequantizeRunFn>& DequantizeTable();

// A DynamicQuantizeLinear node: whether x is float.
struct DynamicQuantizeNode {
  bool f32 = false;
};
using DynamicQuantizeRunFn = void (*)(OpContext& ctx, const DynamicQuantizeNode& p, const Tensor& x);
// Rows: "reference" (ref::DynamicQuantizeLinear), "kernel" (x float: the range by
// RangeF32, then the QuantizeF32 kernel; a scale of 0 by ref::DynamicQuantizeU8).
const FamilyTable<DynamicQuantizeNode, DynamicQuantizeRunFn>& DynamicQuantizeTable();
// The "kernel" row's work on float x: its bytes into y (x.numel() of them), its scale and
// zero point.
void DynamicQuantizeKernel(const OpContext& ctx, const Tensor& x, uint8_t* y, float* scale, uint8_t* zp);

}  // namespace ops
}  // namespace onemodel::impl
