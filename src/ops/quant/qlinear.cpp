// ONNX Runtime's QOperator-format operators (com.microsoft): QLinearAdd, QLinearMul,
// QLinearSigmoid, QLinearLeakyRelu, QLinearGlobalAveragePool and QLinearConcat. Each is
// defined as the ONNX operators it stands for, DequantizeLinear -> the float operator ->
// QuantizeLinear (ref/quant.h: dequantise (q - zero_point) * scale in f32; quantise
// round_half_even(v / scale) + zero_point, saturated), with the project's functions
// (math::Sigmoid). QLinearGlobalAveragePool sums the integers (q - zero_point) exactly,
// then (sum * x_scale) / count in f32. One loop each (no table): ONNX Runtime's CPU
// kernels use lookup tables and fixed-point steps, within one quantum of these
// (docs/contrib-operators.md). Scales are one value (float), zero points one value of the
// data's 8-bit type (absent: 0).
// Tests: tests/ops/quant/qlinear_test.cpp and the contrib cases (tools/contrib_cases.py).
#include <string>
#include <vector>

#include "ops/ops.h"
#include "ops/util.h"
#include "ref/math.h"
#include "ref/quant.h"

namespace onemodel::impl {
namespace ops {
namespace {

bool Is8(DType t) { return t == DType::kUInt8 || t == DType::kInt8; }

int32_t Q8(const Tensor& t, int64_t i) {
  return t.dtype() == DType::kUInt8 ? int32_t(t.data<uint8_t>()[i]) : int32_t(t.data<int8_t>()[i]);
}

// One input's quantisation: its scale, zero point and type.
struct QParams {
  float scale = 1.0f;
  int32_t zero = 0;
  DType type = DType::kUInt8;
  float Dq(int32_t q) const { return float(q - zero) * scale; }
  // round_half_even(v / scale) + zero, saturated to the type, as QuantizeLinear.
  int64_t Q(float v) const { return ref::SaturateRound(double(v / scale), double(zero), type); }
};

// Scale input si and zero point input zi (optional) of data of type `type`.
QParams ReadQ(const OpContext& ctx, size_t si, size_t zi, DType type, const std::string& what) {
  QParams q;
  q.type = type;
  const Tensor& s = ctx.in(si);
  if (s.numel() != 1) throw ctx.Fail(ErrorCode::kShapeMismatch, what + "'s scale must be one value");
  q.scale = ToF32(ctx, s)[0];
  if (ctx.has_input(zi)) {
    const Tensor& z = ctx.in(zi);
    if (z.numel() != 1) throw ctx.Fail(ErrorCode::kShapeMismatch, what + "'s zero point must be one value");
    if (z.dtype() != type) throw ctx.Fail(ErrorCode::kTypeMismatch, what + "'s zero point must be " + DTypeName(type));
    q.zero = Q8(z, 0);
  }
  return q;
}

const Tensor& Data8(const OpContext& ctx, size_t i, const char* what) {
  const Tensor& t = ctx.in(i);
  if (!Is8(t.dtype())) throw ctx.Fail(ErrorCode::kTypeMismatch, std::string(what) + " must be uint8 or int8");
  return t;
}

void Store8(Tensor& y, int64_t i, int64_t q) {
  if (y.dtype() == DType::kUInt8)
    y.mutable_data<uint8_t>()[i] = uint8_t(q);
  else
    y.mutable_data<int8_t>()[i] = int8_t(q);
}

// QLinearAdd and QLinearMul: (A, A_scale, A_zero_point?, B, B_scale, B_zero_point?,
// C_scale, C_zero_point?) -> C, A and B broadcast.
template <class Op>
void QLinearBinary(OpContext& ctx, Op op) {
  const Tensor& a = Data8(ctx, 0, "A");
  const Tensor& b = Data8(ctx, 3, "B");
  if (b.dtype() != a.dtype()) throw ctx.Fail(ErrorCode::kTypeMismatch, "A and B must have one type");
  const QParams qa = ReadQ(ctx, 1, 2, a.dtype(), "A"), qb = ReadQ(ctx, 4, 5, a.dtype(), "B"),
                qc = ReadQ(ctx, 6, 7, a.dtype(), "C");
  const Shape out = BroadcastShapes(ctx, {a.shape(), b.shape()});
  const IndexTable ia = BroadcastIndex(a.shape(), out), ib = BroadcastIndex(b.shape(), out);
  Tensor& c = ctx.out_uninit(0, a.dtype(), out);
  for (int64_t i = 0; i < c.numel(); ++i)
    Store8(c, i, qc.Q(op(qa.Dq(Q8(a, ia[size_t(i)])), qb.Dq(Q8(b, ib[size_t(i)])))));
}

// QLinearSigmoid and QLinearLeakyRelu: (X, X_scale, X_zero_point?, Y_scale, Y_zero_point?).
template <class Op>
void QLinearUnary(OpContext& ctx, Op op) {
  const Tensor& x = Data8(ctx, 0, "X");
  const QParams qx = ReadQ(ctx, 1, 2, x.dtype(), "X"), qy = ReadQ(ctx, 3, 4, x.dtype(), "Y");
  Tensor& y = ctx.out_uninit(0, x.dtype(), x.shape());
  for (int64_t i = 0; i < x.numel(); ++i) Store8(y, i, qy.Q(op(qx.Dq(Q8(x, i)))));
}

}  // namespace

void QLinearAdd(OpContext& ctx) {
  QLinearBinary(ctx, [](float a, float b) { return a + b; });
}
void QLinearMul(OpContext& ctx) {
  QLinearBinary(ctx, [](float a, float b) { return a * b; });
}
void QLinearSigmoid(OpContext& ctx) {
  QLinearUnary(ctx, [](float v) { return math::Sigmoid(v); });
}
// LeakyRelu: v >= 0 ? v : alpha * v (alpha 0.01 by default).
void QLinearLeakyRelu(OpContext& ctx) {
  const float alpha = ctx.attr_f("alpha", 0.01f);
  QLinearUnary(ctx, [alpha](float v) { return v >= 0.0f ? v : alpha * v; });
}

// (X, x_scale, x_zero_point, y_scale, y_zero_point) -> Y: X [N, C, spatial...] (or [N,
// spatial..., C] with channels_last), Y [N, C, 1, ...] ([N, 1, ..., C]).
void QLinearGlobalAveragePool(OpContext& ctx) {
  const Tensor& x = Data8(ctx, 0, "X");
  if (x.rank() < 3) throw ctx.Fail(ErrorCode::kShapeMismatch, "X must have rank 3 or more");
  const QParams qx = ReadQ(ctx, 1, 2, x.dtype(), "x"), qy = ReadQ(ctx, 3, 4, x.dtype(), "y");
  const bool last = ctx.attr_i("channels_last", 0) != 0;
  const Shape& s = x.shape();
  const int64_t N = s[0], C = last ? s.back() : s[1];
  const int64_t count = N * C != 0 ? x.numel() / (N * C) : 0;
  Shape ys(s.size(), 1);
  ys[0] = N;
  ys[last ? s.size() - 1 : 1] = C;
  Tensor& y = ctx.out_uninit(0, x.dtype(), ys);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c) {
      int64_t sum = 0;
      for (int64_t j = 0; j < count; ++j)
        sum += Q8(x, last ? (n * count + j) * C + c : (n * C + c) * count + j) - qx.zero;
      Store8(y, n * C + c, qy.Q((float(sum) * qx.scale) / float(count)));
    }
}

// (Y_scale, Y_zero_point, then X, X_scale, X_zero_point per input) -> Y along `axis`:
// every element dequantized with its input's parameters and quantized with Y's.
void QLinearConcat(OpContext& ctx) {
  const size_t n_in = ctx.num_inputs();
  if (n_in < 5 || (n_in - 2) % 3)
    throw ctx.Fail(ErrorCode::kInvalidModel,
                   "inputs must be Y_scale, Y_zero_point "
                   "and triples of X, X_scale, X_zero_point");
  const Tensor& x0 = Data8(ctx, 2, "X");
  const DType type = ctx.has_input(1) ? ctx.in(1).dtype() : x0.dtype();
  if (!Is8(type)) throw ctx.Fail(ErrorCode::kTypeMismatch, "Y_zero_point must be uint8 or int8");
  const QParams qy = ReadQ(ctx, 0, 1, type, "Y");
  const int64_t axis = NormAxis(ctx, ctx.attr_i("axis", 0), x0.rank());
  Shape out = x0.shape();
  out[size_t(axis)] = 0;
  for (size_t k = 2; k < n_in; k += 3) {
    const Tensor& x = Data8(ctx, k, "X");
    bool ok = x.rank() == x0.rank() && x.dtype() == x0.dtype();
    for (int64_t d = 0; ok && d < x.rank(); ++d) ok = d == axis || x.shape()[size_t(d)] == x0.shape()[size_t(d)];
    if (!ok)
      throw ctx.Fail(ErrorCode::kShapeMismatch, "input " + std::to_string(k) + " " + ShapeToString(x.shape()) +
                                                    " does not concatenate with " + ShapeToString(x0.shape()));
    out[size_t(axis)] += x.shape()[size_t(axis)];
  }
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= out[size_t(d)];
  for (int64_t d = axis + 1; d < int64_t(out.size()); ++d) inner *= out[size_t(d)];
  Tensor& y = ctx.out_uninit(0, type, out);
  int64_t at = 0;  // the first output row along axis of this input
  for (size_t k = 2; k < n_in; k += 3) {
    const Tensor& x = ctx.in(k);
    const QParams qx = ReadQ(ctx, k + 1, k + 2, x.dtype(), "input " + std::to_string(k));
    const int64_t len = x.shape()[size_t(axis)];
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t j = 0; j < len * inner; ++j)
        Store8(y, (o * out[size_t(axis)] + at) * inner + j, qy.Q(qx.Dq(Q8(x, o * len * inner + j))));
    at += len;
  }
}

}  // namespace ops
}  // namespace onemodel::impl
