// ONNX Runtime's MatMulIntegerToFloat and DynamicQuantizeMatMul (com.microsoft), and
// onemodel.DynamicQuantMatMul (passes.h FuseDynamicQuantMatMul): integer products whose
// sums become floats. The sums by the planned MatMulInteger row (ops/quant/quant.h).
#include <algorithm>
#include <string>
#include <vector>

#include "core/bits.h"
#include "core/index.h"
#include "core/per_thread.h"
#include "core/scratch.h"
#include "ops/fused/fused.h"
#include "ops/ops.h"
#include "ops/parallel.h"
#include "ops/quant/quant.h"
#include "ops/util.h"
#include "ref/quant.h"

namespace onemodel::impl {
namespace ops {

// ONNX Runtime's MatMulIntegerToFloat and DynamicQuantizeMatMul (com.microsoft): the int32
// sums by the planned row, then per output y = float(sum) * (a_scale * b_scale[n]) (the
// multiplier one f32 product, as ONNX Runtime forms it), then + bias[n] when given, each
// step one rounding in f32; y rounds once to the scales' type. a_scale is one value,
// b_scale one value or one per column of B.
namespace {

void ScaleSums(OpContext& ctx, const std::vector<int32_t>& acc, const Shape& shape, float a_scale,
               const Tensor& b_scale, const Tensor* bias, DType out) {
  const int64_t N = shape.empty() ? 1 : shape.back();
  if (b_scale.numel() != 1 && !(b_scale.rank() == 1 && b_scale.numel() == N))
    throw ctx.Fail(ErrorCode::kShapeMismatch, "b_scale must be one value or one per column of B");
  if (bias && !(bias->rank() == 1 && bias->numel() == N))
    throw ctx.Fail(ErrorCode::kShapeMismatch, "bias must be 1-D with one value per column of B");
  const auto bs = ToF32(ctx, b_scale);
  std::vector<float> mult(static_cast<size_t>(N));
  for (int64_t n = 0; n < N; ++n) mult[size_t(n)] = a_scale * bs[bs.size() == 1 ? 0 : size_t(n)];
  std::vector<float> bv;
  if (bias) bv = ToF32(ctx, *bias);
  Tensor& y = ctx.out_uninit(0, out, shape);
  float* yf = out == DType::kFloat ? y.mutable_data<float>() : nullptr;
  for (size_t i = 0; i < acc.size(); ++i) {
    const size_t n = i % size_t(N);
    float v = float(acc[i]) * mult[n];
    if (bias) v = v + bv[n];
    if (yf)
      yf[i] = v;
    else
      StoreF32(y, int64_t(i), v);
  }
}

// The int32 sums of A and B (zero points may be null) into acc; their shape.
Shape IntSums(OpContext& ctx, const Tensor& a, const Tensor& b, const Tensor* azp, const Tensor* bzp, size_t b_in,
              size_t bzp_in, std::vector<int32_t>& acc) {
  Shape s;
  IntMatMul(
      ctx, a, b, azp, bzp,
      [&](const Shape& shape) {
        s = shape;
        acc.resize(size_t(ProductOf(shape)));
        return acc.data();
      },
      b_in, bzp_in);
  return s;
}

float ScalarScale(const OpContext& ctx, const Tensor& t, const char* what) {
  if (t.numel() != 1) throw ctx.Fail(ErrorCode::kShapeMismatch, std::string(what) + " must be one value");
  return ToF32(ctx, t)[0];
}

}  // namespace

// (A, B, a_scale, b_scale, a_zero_point?, b_zero_point?, bias?) -> Y.
void MatMulIntegerToFloat(OpContext& ctx) {
  std::vector<int32_t> acc;
  const Shape s = IntSums(ctx, ctx.in(0), ctx.in(1), ctx.has_input(4) ? &ctx.in(4) : nullptr,
                          ctx.has_input(5) ? &ctx.in(5) : nullptr, 1, 5, acc);
  const Tensor& as = ctx.in(2);
  ScaleSums(ctx, acc, s, ScalarScale(ctx, as, "a_scale"), ctx.in(3), ctx.has_input(6) ? &ctx.in(6) : nullptr,
            as.dtype());
}

// (A, B, b_scale, b_zero_point?, bias?) -> Y: A (float) quantized to uint8 as
// DynamicQuantizeLinear does (ref::DynamicQuantizeLinear), then MatMulIntegerToFloat.
void DynamicQuantizeMatMul(OpContext& ctx) {
  const Tensor& a = ctx.in(0);
  if (a.dtype() != DType::kFloat) throw ctx.Fail(ErrorCode::kTypeMismatch, "A must be float");
  Tensor aq(DType::kUInt8, a.shape());
  Tensor azp(DType::kUInt8, {});
  float a_scale = 0.0f;
  ref::DynamicQuantizeLinear(a, aq.mutable_data<uint8_t>(), &a_scale, azp.mutable_data<uint8_t>());
  std::vector<int32_t> acc;
  const Shape s = IntSums(ctx, aq, ctx.in(1), &azp, ctx.has_input(3) ? &ctx.in(3) : nullptr, 1, 3, acc);
  ScaleSums(ctx, acc, s, a_scale, ctx.in(2), ctx.has_input(4) ? &ctx.in(4) : nullptr, DType::kFloat);
}

// --- onemodel.DynamicQuantMatMul (passes.h FuseDynamicQuantMatMul) ---
namespace {

// The roles of a DynamicQuantMatMul body's inputs (indices into the fused node's inputs;
// -1: absent), when the body is the pattern the pass makes: DynamicQuantizeLinear(A),
// MatMulInteger(A_q, W, A_zp[, W_zp]), Cast(to float), Mul(A_scale, W_scale) (either
// order), Mul(sums, scales) (either order), optionally Add(product, bias) (either order).
struct DqmmRoles {
  int a = -1, w = -1, wzp = -1, ws = -1, bias = -1;
};

bool DqmmBodyRoles(const Graph& body, DqmmRoles* r) {
  const size_t n = body.nodes.size();
  if ((n != 5 && n != 6) || body.outputs.size() != 1) return false;
  for (const Node& x : body.nodes)
    if (!x.DefaultDomain()) return false;
  const Node &dq = body.nodes[0], &mi = body.nodes[1], &cast = body.nodes[2], &m1 = body.nodes[3], &m2 = body.nodes[4];
  auto index = [&](const std::string& name) {
    for (size_t i = 0; i < body.inputs.size(); ++i)
      if (body.inputs[i].name == name) return int(i);
    return -1;
  };
  // The other operand of a binary node that reads `known` once (-1: not so).
  auto other = [](const Node& b, const std::string& known) -> int {
    if (b.inputs.size() != 2 || b.outputs.size() != 1 || b.inputs[0] == b.inputs[1]) return -1;
    return b.inputs[0] == known ? 1 : b.inputs[1] == known ? 0 : -1;
  };
  if (dq.op_type != "DynamicQuantizeLinear" || dq.inputs.size() != 1 || dq.outputs.size() != 3) return false;
  if (mi.op_type != "MatMulInteger" || mi.inputs.size() < 3 || mi.inputs.size() > 4 || mi.outputs.size() != 1 ||
      mi.inputs[0] != dq.outputs[0] || mi.inputs[2] != dq.outputs[2])
    return false;
  const Attribute* to = cast.attr("to");
  if (cast.op_type != "Cast" || cast.inputs.size() != 1 || cast.inputs[0] != mi.outputs[0] || !to ||
      to->i != int64_t(DType::kFloat))
    return false;
  const int s1 = other(m1, dq.outputs[1]);
  const int s2 = other(m2, cast.outputs[0]);
  if (m1.op_type != "Mul" || m2.op_type != "Mul" || s1 < 0 || s2 < 0 || m2.inputs[size_t(s2)] != m1.outputs[0])
    return false;
  r->a = index(dq.inputs[0]);
  r->w = index(mi.inputs[1]);
  r->wzp = mi.inputs.size() == 4 && !mi.inputs[3].empty() ? index(mi.inputs[3]) : -1;
  r->ws = index(m1.inputs[size_t(s1)]);
  std::string out = m2.outputs[0];
  if (n == 6) {
    const Node& add = body.nodes[5];
    const int sb = other(add, m2.outputs[0]);
    if (add.op_type != "Add" || sb < 0) return false;
    r->bias = index(add.inputs[size_t(sb)]);
    if (r->bias < 0) return false;
    out = add.outputs[0];
  }
  const bool wzp_ok = mi.inputs.size() == 3 || mi.inputs[3].empty() || r->wzp >= 0;
  return r->a >= 0 && r->w >= 0 && r->ws >= 0 && wzp_ok && body.outputs[0].name == out;
}

}  // namespace

// The chain in one node, the same bits: A quantised by DynamicQuantizeLinear's kernel
// row, the int32 sums by the planned MatMulInteger row written into the output's own
// buffer, then per element float(sum) * (A_scale * W_scale[n]) (+ bias[n]): the Cast's
// conversion (round to nearest even), the two Muls' and the Add's single roundings, in
// their order (each operation commutative, so the operand order is immaterial). Anything
// else (not float A of rank >= 2, W not 2-D 8-bit, a W_scale or bias that is not one
// float per column or one in all, a forced row of a body node's operator, the oracle
// session) runs the body node by node.
void DynamicQuantMatMul(OpContext& ctx) {
  const Attribute* body_attr = ctx.node.attr("body");
  if (!body_attr || !body_attr->g) throw ctx.Fail(ErrorCode::kInvalidModel, "missing its 'body' graph");
  const Graph& body = *body_attr->g;
  DqmmRoles r;
  auto tensor = [&](int i) -> const Tensor* {
    return i >= 0 && ctx.has_input(size_t(i)) && ctx.inputs[size_t(i)]->is_tensor() ? &ctx.inputs[size_t(i)]->tensor
                                                                                    : nullptr;
  };
  bool fast = ctx.VectorKernels() && ctx.num_inputs() == body.inputs.size() && DqmmBodyRoles(body, &r);
  if (fast && ctx.algorithms)
    for (const char* op : {"DynamicQuantizeLinear", "MatMulInteger", "Cast", "Mul", "Add"})
      fast = fast && !ctx.algorithms->count(op);
  const Tensor *a = fast ? tensor(r.a) : nullptr, *w = fast ? tensor(r.w) : nullptr;
  const Tensor *wzp = fast ? tensor(r.wzp) : nullptr, *ws = fast ? tensor(r.ws) : nullptr;
  const Tensor* bias = fast ? tensor(r.bias) : nullptr;
  fast = fast && a && w && ws && a->dtype() == DType::kFloat && a->rank() >= 2 && w->rank() == 2 && Is8Bit(*w) &&
         a->shape().back() == w->shape()[0] && (r.wzp < 0 || (wzp && wzp->dtype() == w->dtype()));
  auto per_column = [&, N = fast ? w->shape()[1] : 0](const Tensor* t) {
    return t && t->dtype() == DType::kFloat && t->rank() <= 1 && (t->numel() == 1 || t->numel() == N);
  };
  fast = fast && per_column(ws) && (r.bias < 0 || (per_column(bias) && bias->rank() == 1));
  if (!fast) {
    RunBody(ctx, body);
    return;
  }
  // A's bytes and zero point in the thread's scratch (views: no allocation per run).
  auto& aq_buf = ONEMODEL_PER_THREAD(ScratchVector<uint8_t>);
  if (aq_buf.size() < size_t(a->numel()) + 1) aq_buf.resize(size_t(a->numel()) + 1);
  float a_scale = 0.0f;
  DynamicQuantizeKernel(ctx, *a, aq_buf.data(), &a_scale, &aq_buf[size_t(a->numel())]);
  const Tensor aq = Tensor::Borrow(DType::kUInt8, a->shape(), nullptr, aq_buf.data(), "A quantised");
  const Tensor azp = Tensor::Borrow(DType::kUInt8, {}, nullptr, aq_buf.data() + a->numel(), "A zero point");
  // Per column: the multiplier A_scale * W_scale[n] (the first Mul's rounding) and the bias.
  const int64_t N = w->shape()[1];
  auto& col_buf = ONEMODEL_PER_THREAD(ScratchVector<float>);
  col_buf.resize(size_t(2 * N));
  float* mult = col_buf.data();
  float* badd = col_buf.data() + N;
  const float* wsp = ws->data<float>();
  for (int64_t n = 0; n < N; ++n) mult[n] = a_scale * wsp[ws->numel() == 1 ? 0 : n];
  if (bias)
    for (int64_t n = 0; n < N; ++n) badd[n] = bias->data<float>()[bias->numel() == 1 ? 0 : n];
  // The dot-product row turns the sums into the results as it finishes them; others give
  // int32 sums in the output's buffer, turned into floats in place here.
  const IntToFloat to_float{mult, bias ? badd : nullptr};
  bool finished = false;
  uint32_t* sums = nullptr;
  int64_t total = 0;
  IntMatMul(
      ctx, aq, *w, &azp, wzp,
      [&](const Shape& s) {
        Tensor& y = ctx.out_uninit(0, DType::kFloat, s);
        total = y.numel();
        sums = reinterpret_cast<uint32_t*>(y.mutable_data<float>());
        return reinterpret_cast<int32_t*>(sums);
      },
      size_t(r.w), size_t(r.wzp < 0 ? r.w : r.wzp), &to_float, &finished);
  if (finished) return;
  // The other rows' int32 sums, converted in place by the same kernel with no zero-point
  // terms (a row term and column terms of 0).
  const int64_t rows = N ? total / N : 0;
  auto& zero_buf = ONEMODEL_PER_THREAD(std::vector<uint32_t>);
  zero_buf.assign(size_t(N), 0u);
  const uint32_t* zeros = zero_buf.data();
  auto* finish = ctx.kernels->FinishDotSumsI32;
  ParallelFor(ctx, rows, std::max<int64_t>(1, 8192 / std::max<int64_t>(N, 1)), [&](int64_t r0, int64_t r1) {
    for (int64_t row = r0; row < r1; ++row)
      finish(sums + row * N, N, 1, N, zeros, nullptr, 0u, zeros, mult, bias ? badd : nullptr);
  });
}

}  // namespace ops
}  // namespace onemodel::impl
