// OneModel's own operators, created by the exact-mode passes (passes/passes.h).
#include <algorithm>
#include <vector>

#include "passes/passes.h"
#include "ref/elementwise_kernels.h"
#include "ref/ops.h"
#include "ref/parallel.h"
#include "ref/util.h"

namespace onemodel {
namespace ref {
namespace {

// One step of a chain: an operation on operands that are the chain's running value
// (index -1) or one of the fused node's inputs.
struct Step {
  enum Kind { kBinary, kUnary, kMath } kind = kBinary;
  int32_t code = 0;
  float p0 = 0.0f, p1 = 0.0f;
  int a = -1, b = -1;  // operands; b only for binary steps
};

// The chain's steps, or false when a body node is not one the fast path knows.
bool CompileChain(const Graph& body, std::vector<Step>* steps) {
  std::vector<std::string> names;  // the fused node's inputs, by body input order
  for (const auto& in : body.inputs) names.push_back(in.name);
  std::string running;
  auto operand = [&](const std::string& v) -> int {
    if (!running.empty() && v == running) return -1;
    for (size_t i = 0; i < names.size(); ++i) if (names[i] == v) return int(i);
    return -2;
  };
  for (const Node& n : body.nodes) {
    if (!IsChainableElementwise(n)) return false;
    Step s;
    const std::string& t = n.op_type;
    if (t == "Add" || t == "Sub" || t == "Mul" || t == "Div") {
      s.kind = Step::kBinary;
      s.code = t == "Add" ? kBinAddF32 : t == "Sub" ? kBinSubF32 : t == "Mul" ? kBinMulF32 : kBinDivF32;
      s.a = operand(n.inputs[0]);
      s.b = operand(n.inputs[1]);
      if (s.a == -2 || s.b == -2) return false;
    } else {
      s.a = operand(n.inputs[0]);
      if (s.a == -2) return false;
      if (t == "Relu" || t == "HardSwish" || t == "HardSigmoid") {
        s.kind = Step::kUnary;
        s.code = t == "Relu" ? kUnReluF32 : t == "HardSwish" ? kUnHardSwishF32 : kUnHardSigmoidF32;
        if (t == "HardSigmoid") {
          const Attribute* al = n.attr("alpha");
          const Attribute* be = n.attr("beta");
          s.p0 = al ? al->f : 0.2f;
          s.p1 = be ? be->f : 0.5f;
        }
      } else {
        s.kind = Step::kMath;
        s.code = t == "Exp" ? kMathExpF32 : t == "Tanh" ? kMathTanhF32 : t == "Sigmoid" ? kMathSigmoidF32 : kMathErfF32;
      }
    }
    steps->push_back(s);
    running = n.outputs[0];
  }
  return !steps->empty() && body.outputs.size() == 1 && body.outputs[0].name == running;
}

}  // namespace

// The chain in one pass: chunks of the data go through every step in turn (the same
// kernels the unfused nodes run, on the same values in the same order), the running
// value in a per-thread buffer. Needs float inputs of one shape, or single elements of
// no higher rank (broadcast scalars); anything else runs the body node by node.
void ElementwiseChain(OpContext& ctx) {
  const Attribute* body_attr = ctx.node.attr("body");
  if (!body_attr || !body_attr->g) throw ctx.Fail(ErrorCode::kInvalidModel, "missing its 'body' graph");
  const Graph& body = *body_attr->g;
  std::vector<Step> steps;
  bool fast = ctx.kernels && ctx.kernels->BinaryF32 && ctx.kernels->UnaryF32 && ctx.kernels->MathF32 &&
              ctx.num_inputs() == body.inputs.size() && CompileChain(body, &steps);
  const Tensor* big = nullptr;
  if (fast) {
    for (size_t i = 0; i < ctx.num_inputs(); ++i) {
      if (!ctx.has_input(i) || !ctx.inputs[i]->is_tensor() || ctx.in(i).dtype() != DType::kFloat) { fast = false; break; }
      if (!big || ctx.in(i).numel() > big->numel()) big = &ctx.in(i);
    }
  }
  if (fast) {
    for (size_t i = 0; i < ctx.num_inputs(); ++i) {
      const Tensor& t = ctx.in(i);
      if (t.shape() != big->shape() && !(t.numel() == 1 && t.rank() <= big->rank())) { fast = false; break; }
    }
  }
  if (!fast) {
    std::vector<Value> in;
    for (const Value* v : ctx.inputs) in.push_back(v ? *v : Value());
    std::vector<Value> out = RunSubgraph(ctx.executor, body, in, *ctx.scope);
    if (out.size() != 1) throw ctx.Fail(ErrorCode::kInternal, "the chain's body gave no single output");
    ctx.outputs[0] = std::move(out[0]);
    return;
  }
  const int64_t n = big->numel();
  Tensor& y = ctx.out_uninit(0, DType::kFloat, big->shape());
  float* py = y.mutable_data<float>();
  const KernelTable& k = *ctx.kernels;
  constexpr int64_t kChunk = 2048;
  ParallelFor(ctx, (n + kChunk - 1) / kChunk, 8, [&](int64_t c0, int64_t c1) {
    thread_local std::vector<float> buf;
    if (buf.size() < size_t(kChunk)) buf.resize(size_t(kChunk));
    float* t = buf.data();
    for (int64_t c = c0; c < c1; ++c) {
      const int64_t i0 = c * kChunk, len = std::min(kChunk, n - i0);
      auto src = [&](int op, int64_t* stride) -> const float* {
        if (op < 0) { *stride = 1; return t; }
        const Tensor& in = ctx.in(size_t(op));
        if (in.numel() == 1 && n != 1) { *stride = 0; return in.data<float>(); }
        *stride = 1;
        return in.data<float>() + i0;
      };
      for (size_t s = 0; s < steps.size(); ++s) {
        const Step& st = steps[s];
        float* dst = s + 1 == steps.size() ? py + i0 : t;
        int64_t sa = 1, sb = 1;
        const float* a = src(st.a, &sa);
        if (st.kind == Step::kBinary) {
          const float* b = src(st.b, &sb);
          k.BinaryF32(st.code, a, sa, b, sb, dst, len);
        } else if (sa == 0) {  // a scalar input: its value in every lane
          for (int64_t j = 0; j < len; ++j) t[j] = a[0];
          if (st.kind == Step::kUnary) k.UnaryF32(st.code, st.p0, st.p1, t, dst, len);
          else k.MathF32(st.code, t, dst, len);
        } else if (st.kind == Step::kUnary) {
          k.UnaryF32(st.code, st.p0, st.p1, a, dst, len);
        } else {
          k.MathF32(st.code, a, dst, len);
        }
      }
    }
  });
}

}  // namespace ref
}  // namespace onemodel
