// The reference (oracle) integer and quantisation operators, the definition of their
// bits (ONNX Operators.md: QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear,
// MatMulInteger, QLinearMatMul, ConvInteger, QLinearConv; exact-contract sections 2
// and 5). ops/quant/quant.cpp and ops/quant/int_conv.cpp parse and validate the nodes into the
// parameters below and run these or one of their vector rows.
//  - Quantise: q = saturate(round_half_even(x / scale) + zero_point), the division in
//    f32 (one rounding), the rounding exact, the add exact, then clamped to the target
//    range (float8 targets: x / scale + zero_point converted with the saturate attribute).
//  - Dequantise: (x - zero_point) * scale in f32 (the difference exact).
//  - Integer products (MatMulInteger, ConvInteger): int32 sums of (a - a_zero) *
//    (b - b_zero), wrapping modulo 2^32, so the order of the terms does not matter.
//  - Requantisation (QLinear*): the int32 sum times the f32 multiplier
//    a_scale * b_scale / y_scale in binary64, rounded half to even, plus y's zero point,
//    saturated to y's 8-bit type.
#pragma once

#include <cstdint>
#include <vector>

#include "core/dtype.h"
#include "core/shape.h"
#include "core/tensor.h"
#include "ref/conv.h"

namespace onemodel::impl {

// Where element i of QuantizeLinear's / DequantizeLinear's x takes its scale and zero
// point (validated by the operator: the scale is not empty and its shape agrees):
// per tensor (a scale of one value, rank <= 1), per axis (block 0: one value per slice of
// `axis`), or blocked (the scale has x's shape with the axis divided, rounded up, by
// block).
struct QuantLayout {
  Shape x_shape, scale_shape;
  bool per_tensor = true;
  int64_t axis = 0, block = 0;
};
// QuantizeLinear's parameters: the layout, y's element type (an integer type of
// IsQuantInteger or a narrow float format) and the saturate attribute (float8 targets).
struct QuantizeParams : QuantLayout {
  DType out = DType::kUInt8;
  bool saturate = true;
};

// A MatMulInteger product (validated: A and B 8-bit, each zero point of its operand's
// type, K agreeing, the batch dimensions broadcasting, a zero point scalar or one value
// per row of A / column of B): `batches` products of [M, K] x [K, N] (a 1-D A or B as
// one row or column), output batch i reading A's batch a_batch[i] and B's b_batch[i].
struct MatMulIntegerParams {
  int64_t M = 0, K = 0, N = 0, batches = 0;
};

// A ConvInteger / QLinearConv node (validated: X and W 8-bit of the same rank >= 3, each
// zero point of its operand's type, W's zero points (and QLinearConv's W scales) a scalar
// or one per output channel, input, weight and group agreeing): N images of C channels
// into M output channels in `group` groups (Cg and Mg per group), the geometry g (in_sp,
// out_sp, k_sp: its spatial sizes' products; in_st: the input's spatial row-major
// strides), X's zero point; QLinearConv's scales of X and Y and Y's zero point and type.
struct IntConvParams {
  ref::ConvGeometry g;
  int64_t N = 0, C = 0, M = 0, group = 1, Cg = 0, Mg = 0, in_sp = 0, out_sp = 0, k_sp = 0;
  std::vector<int64_t> in_st;
  int64_t x_zero = 0;
  float x_scale = 0.0f, y_scale = 0.0f;
  int64_t y_zero = 0;
  bool y_signed = false;  // Y int8 (else uint8)
};

namespace ref {

// Whether t is one of the integer types QuantizeLinear writes and DequantizeLinear reads
// as integers ((u)int2/4/8/16/32).
bool IsQuantInteger(DType t);

// For each element of x (row-major), the index of its scale and zero point.
std::vector<int64_t> QuantParamIndex(const QuantLayout& l);

// round_half_even(v) + zp, saturated to the integer type t (NaN: zp saturated).
int64_t SaturateRound(double v, double zp, DType t);

// QuantizeLinear into y (x's shape, p.out): per element, q = x / scale in f32, then
// SaturateRound(RoundEven(q), zero_point) for integer targets, or q + zero_point
// converted to the float8 target (F32ToMini with p.saturate). zero may be null (0).
void QuantizeLinear(const QuantizeParams& p, const Tensor& x, const Tensor& scale, const Tensor* zero, Tensor& y);

// DequantizeLinear into y (x's shape, its element type the output's: float, float16,
// bfloat16 or double): per element (x - zero_point) (exact: integers in int64, else in
// binary64, then to f32) times the scale in f32. zero may be null (0).
void DequantizeLinear(const QuantLayout& l, const Tensor& x, const Tensor& scale, const Tensor* zero, Tensor& y);

// DynamicQuantizeLinear's scale and zero point from the range [mn, mx] of x (0 included):
// scale = (mx - mn) / 255, zero = SaturateRound(RoundEven(0 - mn / scale)) (0 when the
// scale is 0) in uint8.
void DynamicQuantizeScale(float mn, float mx, float* scale, uint8_t* zero);
// Its quantisation of x's n elements: q = x / scale (0 when the scale is 0), then
// SaturateRound(RoundEven(q), zero) in uint8.
void DynamicQuantizeU8(const Tensor& x, float scale, uint8_t zero, uint8_t* y);
// The whole operator: the range of x (each element in turn, from mn = mx = 0; a NaN
// changes neither), DynamicQuantizeScale, DynamicQuantizeU8. y holds x.numel() bytes.
void DynamicQuantizeLinear(const Tensor& x, uint8_t* y, float* scale, uint8_t* zero);

// MatMulInteger's int32 sums: y[i][m][n] = sum over k, in k order, of (a - a_zero[m])
// * (b - b_zero[n]) modulo 2^32, for output batch i < p.batches of p.M x p.N (a_zero,
// b_zero: null for 0, a scalar or one value per row of A / column of B).
void MatMulIntegerI32(const MatMulIntegerParams& p, const int64_t* a_batch, const int64_t* b_batch, const Tensor& a,
                      const Tensor& b, const Tensor* a_zero, const Tensor* b_zero, int32_t* y);

// QLinearMatMul's output from the n int32 sums acc: m = a_scale * b_scale / y_scale in
// f32, then y[i] = SaturateRound(acc[i] * m in binary64, y_zero[0], y's type).
void QLinearMatMulOutput(const int32_t* acc, int64_t n, const Tensor& a_scale, const Tensor& b_scale,
                         const Tensor& y_scale, const Tensor& y_zero, Tensor& y);

// ConvInteger's int32 sums into y (N x M x out): per output, the sum modulo 2^32, input
// channel of the group (outer) then kernel position (row-major), of (x - x_zero) *
// (w - w_zero[m]) over the taps inside the input (a padding tap, as padding with the zero
// point, adds nothing). w_zero: null, empty, one value or one per output channel.
void ConvIntegerI32(const IntConvParams& p, const Tensor& x, const Tensor& w, const Tensor* w_zero, int32_t* y);

// QLinearConv's output from ConvIntegerI32's sums acc: per element of output channel m,
// a = acc (+ bias[m], wrapping, when bias is not null), m' = x_scale * w_scale[m] (f32)
// / y_scale (f32), then round_half_even(a * m' in binary64) + y_zero, saturated to y's
// type (int8 or uint8, y of acc's shape).
void QLinearConvOutput(const IntConvParams& p, const int32_t* acc, const float* w_scale, int64_t w_scales,
                       const int32_t* bias, Tensor& y);

}  // namespace ref
}  // namespace onemodel::impl
