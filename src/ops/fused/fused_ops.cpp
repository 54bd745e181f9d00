// OneModel's own operators, created by the exact-mode passes (passes/passes.h).
#include <algorithm>
#include <limits>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "ops/fused/fused.h"
#include "ref/elementwise.h"
#include "ops/ops.h"
#include "ops/parallel.h"
#include "ops/util.h"
#include "core/per_thread.h"
#include "core/scratch.h"

namespace onemodel::impl {
namespace {
bool IsDefaultDomain(const Node& n) { return n.domain.empty() || n.domain == "ai.onnx"; }
}  // namespace

bool IsChainableElementwise(const Node& n) {
  if (!IsDefaultDomain(n) || n.outputs.size() != 1 || n.outputs[0].empty()) return false;
  static const std::unordered_set<std::string> kBinary = {"Add", "Sub", "Mul", "Div"};
  static const std::unordered_set<std::string> kUnary = {"Relu", "HardSigmoid", "HardSwish", "Exp",
                                                         "Tanh", "Sigmoid",     "Erf"};
  if (kBinary.count(n.op_type)) return n.inputs.size() == 2 && !n.inputs[0].empty() && !n.inputs[1].empty();
  if (kUnary.count(n.op_type)) return n.inputs.size() == 1 && !n.inputs[0].empty();
  // Cast to float (the chain converts its input as the node does, whatever the input's
  // type it can read: others run the body node by node).
  if (n.op_type == "Cast") {
    const Attribute* to = n.attr("to");
    return n.inputs.size() == 1 && !n.inputs[0].empty() && to && to->type == Attribute::Type::kInt &&
           to->i == int64_t(DType::kFloat);
  }
  // Clip: bounds as attributes (opset < 11) or as inputs (opset >= 11), never both.
  if (n.op_type == "Clip") {
    if (n.inputs.empty() || n.inputs[0].empty() || n.inputs.size() > 3) return false;
    return n.inputs.size() == 1 || (!n.attr("min") && !n.attr("max"));
  }
  return false;
}

namespace ops {
namespace {

// An operand of a step: one of the fused node's inputs, or an earlier step's result.
struct Operand {
  bool inner = false;
  int idx = 0;
};
// One step of a chain: one body node; step s leaves its result in slot s of the
// per-thread buffer (the last step writes the output).
struct Step {
  enum Kind { kBinary, kUnary, kMath, kCast } kind = kBinary;
  int32_t code = 0;
  float p0 = 0.0f, p1 = 0.0f;
  Operand a, b;          // b only for binary steps
  int lo = -1, hi = -1;  // Clip: the fused node's inputs holding its bounds (-1: none)
};

// The steps of the body (topologically sorted nodes, one output each), or false when a
// node is not one the fast path knows.
bool CompileChain(const Graph& body, std::vector<Step>* steps) {
  std::unordered_map<std::string, int> external, inner;
  for (size_t i = 0; i < body.inputs.size(); ++i) external[body.inputs[i].name] = int(i);
  auto operand = [&](const std::string& v, Operand* o) {
    auto it = inner.find(v);
    if (it != inner.end()) {
      o->inner = true;
      o->idx = it->second;
      return true;
    }
    auto ex = external.find(v);
    if (ex == external.end()) return false;
    o->inner = false;
    o->idx = ex->second;
    return true;
  };
  for (const Node& n : body.nodes) {
    if (!IsChainableElementwise(n)) return false;
    Step s;
    const std::string& t = n.op_type;
    if (!operand(n.inputs[0], &s.a)) return false;
    if (t == "Add" || t == "Sub" || t == "Mul" || t == "Div") {
      s.kind = Step::kBinary;
      s.code = t == "Add" ? kBinAddF32 : t == "Sub" ? kBinSubF32 : t == "Mul" ? kBinMulF32 : kBinDivF32;
      if (!operand(n.inputs[1], &s.b)) return false;
    } else if (t == "Relu" || t == "HardSwish" || t == "HardSigmoid" || t == "Clip") {
      s.kind = Step::kUnary;
      s.code = t == "Relu"          ? kUnReluF32
               : t == "HardSwish"   ? kUnHardSwishF32
               : t == "HardSigmoid" ? kUnHardSigmoidF32
                                    : kUnClipF32;
      if (t == "HardSigmoid") {
        const Attribute* al = n.attr("alpha");
        const Attribute* be = n.attr("beta");
        s.p0 = al ? al->f : 0.2f;
        s.p1 = be ? be->f : 0.5f;
      } else if (t == "Clip") {
        // The bounds as Clip's float path takes them: attributes (opset < 11) or
        // single-element inputs (opset >= 11), +-infinity when absent.
        const Attribute* mn = n.attr("min");
        const Attribute* mx = n.attr("max");
        s.p0 = mn ? mn->f : -std::numeric_limits<float>::infinity();
        s.p1 = mx ? mx->f : std::numeric_limits<float>::infinity();
        for (int k = 1; k <= 2; ++k) {
          if (size_t(k) >= n.inputs.size() || n.inputs[size_t(k)].empty()) continue;
          Operand o;
          if (!operand(n.inputs[size_t(k)], &o) || o.inner) return false;
          (k == 1 ? s.lo : s.hi) = o.idx;
        }
      }
    } else if (t == "Cast") {
      s.kind = Step::kCast;
    } else {
      s.kind = Step::kMath;
      s.code = t == "Exp" ? kMathExpF32 : t == "Tanh" ? kMathTanhF32 : t == "Sigmoid" ? kMathSigmoidF32 : kMathErfF32;
    }
    inner[n.outputs[0]] = int(steps->size());
    steps->push_back(s);
  }
  return !steps->empty() && body.outputs.size() == 1 && inner.count(body.outputs[0].name) &&
         inner[body.outputs[0].name] == int(steps->size()) - 1;
}

// The input types a Cast step converts (ConvertToFloat, ops/util.h: every value of these
// types has one nearest float, and C++'s conversion rounds to nearest even once, as
// ref::Cast does from the magnitude); others run the body node by node.
bool CastStepReads(DType t) {
  switch (t) {
    case DType::kFloat:
    case DType::kBool:
    case DType::kInt8:
    case DType::kUInt8:
    case DType::kInt16:
    case DType::kUInt16:
    case DType::kInt32:
    case DType::kInt64: return true;
    default: return false;
  }
}

// What the chain's fast path derives from the body and the inputs' shapes and types,
// kept per node (OpContext::Prepared): the compiled steps and how each input is read.
// fast false: the body runs node by node for these inputs.
struct ChainPrep : NodeState {
  std::vector<Shape> shapes;
  std::vector<DType> types;  // kUndefined: not a tensor
  bool fast = false;
  std::vector<Step> steps;
  std::vector<int64_t> period;  // per input: kFull, kScalar or a row's length
  size_t big = 0;               // the input whose shape the output takes
};
enum : int64_t { kFull = 0, kScalar = -1 };

std::shared_ptr<ChainPrep> MakeChainPrep(const OpContext& ctx, const Graph& body) {
  auto p = std::make_shared<ChainPrep>();
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    const bool t = ctx.has_input(i) && ctx.inputs[i]->is_tensor();
    p->shapes.push_back(t ? ctx.inputs[i]->tensor.shape() : Shape{});
    p->types.push_back(t ? ctx.inputs[i]->tensor.dtype() : DType::kUndefined);
  }
  bool fast = ctx.num_inputs() == body.inputs.size() && CompileChain(body, &p->steps);
  const Tensor* big = nullptr;
  if (fast) {
    // Float inputs everywhere, except that a Cast step may read the types ConvertToFloat
    // converts (and only Cast steps may read them).
    std::vector<bool> cast_only(ctx.num_inputs(), true);
    for (const Step& st : p->steps) {
      if (!st.a.inner && st.kind != Step::kCast) cast_only[size_t(st.a.idx)] = false;
      if (st.kind == Step::kBinary && !st.b.inner) cast_only[size_t(st.b.idx)] = false;
      for (int k : {st.lo, st.hi})
        if (k >= 0) cast_only[size_t(k)] = false;
    }
    for (size_t i = 0; i < ctx.num_inputs(); ++i) {
      if (!(p->types[i] == DType::kFloat || (cast_only[i] && CastStepReads(p->types[i])))) {
        fast = false;
        break;
      }
      const Tensor& t = ctx.in(i);
      if (!big || t.numel() > big->numel() || (t.numel() == big->numel() && t.rank() > big->rank())) {
        big = &t;
        p->big = i;
      }
    }
  }
  // Each input: the output's shape (read at the same index), a single element (its value
  // everywhere), or the output's trailing dimensions (a row repeated: element i reads
  // i mod its size), which only a binary step may take. Anything else: node by node.
  p->period.assign(ctx.num_inputs(), kFull);
  if (fast) {
    for (size_t i = 0; i < ctx.num_inputs() && fast; ++i) {
      const Tensor& t = ctx.in(i);
      if (t.shape() == big->shape()) continue;
      if (t.rank() > big->rank()) {
        fast = false;
        break;
      }
      if (t.numel() == 1) {
        p->period[i] = kScalar;
        continue;
      }
      // Leading ones dropped, the rest must be big's last dimensions.
      size_t lead = 0;
      while (lead < t.shape().size() && t.shape()[lead] == 1) ++lead;
      const size_t tail = t.shape().size() - lead;
      for (size_t d = 0; d < tail && fast; ++d)
        fast = t.shape()[lead + d] == big->shape()[big->shape().size() - tail + d];
      p->period[i] = t.numel();
    }
    for (const Step& st : p->steps)
      if (fast && st.kind != Step::kBinary && !st.a.inner && p->period[size_t(st.a.idx)] > 0) fast = false;
    for (const Step& st : p->steps)  // a Cast reads an input of the output's shape
      if (fast && st.kind == Step::kCast && !st.a.inner && p->period[size_t(st.a.idx)] != kFull) fast = false;
  }
  // Clip bounds from inputs: single floats (else the body runs node by node).
  for (const Step& st : p->steps) {
    for (int k : {st.lo, st.hi}) {
      if (!fast || k < 0) continue;
      if (ctx.in(size_t(k)).numel() > 1) fast = false;  // an empty bound is no bound, as in Clip
    }
  }
  p->fast = fast;
  return p;
}

}  // namespace

// The body node by node (the fused node's inputs bound to its inputs).
void RunBody(OpContext& ctx, const Graph& body) {
  // The outputs' vector is the thread's, taken while in use (a nested run makes its own).
  auto& spare = ONEMODEL_PER_THREAD(std::vector<Value>);
  std::vector<Value> out = std::move(spare);
  RunSubgraphInto(ctx.executor, body, ctx.inputs, *ctx.scope, &out);
  if (out.size() != 1) throw ctx.Fail(ErrorCode::kInternal, "the fused node's body gave no single output");
  ctx.outputs[0] = std::move(out[0]);
  out.clear();
  spare = std::move(out);
}

// The chain in one pass: chunks of the data go through every step in turn (the same
// kernels the unfused nodes run, on the same values in the same order), each step's
// result in its slot of a per-thread buffer. Needs float inputs of the output's shape,
// single elements, or rows of the output's trailing dimensions (a bias) for binary steps;
// anything else runs the body node by node.
void ElementwiseChain(OpContext& ctx) {
  const Attribute* body_attr = ctx.node.attr("body");
  if (!body_attr || !body_attr->g) throw ctx.Fail(ErrorCode::kInvalidModel, "missing its 'body' graph");
  const Graph& body = *body_attr->g;
  const std::shared_ptr<const ChainPrep> prep = ctx.Prepared<ChainPrep>(
      [&](const ChainPrep& p) {
        if (p.shapes.size() != ctx.num_inputs()) return false;
        for (size_t i = 0; i < ctx.num_inputs(); ++i) {
          const bool t = ctx.has_input(i) && ctx.inputs[i]->is_tensor();
          if (!t ? !p.shapes[i].empty() || p.types[i] != DType::kUndefined
                 : ctx.inputs[i]->tensor.shape() != p.shapes[i] || ctx.inputs[i]->tensor.dtype() != p.types[i])
            return false;
        }
        return true;
      },
      [&] { return MakeChainPrep(ctx, body); });
  if (!prep->fast) {
    RunBody(ctx, body);
    return;
  }
  const std::vector<Step>& steps = prep->steps;
  const std::vector<int64_t>& period = prep->period;
  const Tensor* big = &ctx.in(prep->big);
  // A Clip step's bound from an input: its single value (an empty one is no bound).
  auto bound = [&](int k, float dflt) {
    if (k < 0) return dflt;
    const Tensor& t = ctx.in(size_t(k));
    return t.numel() ? t.data<float>()[0] : dflt;
  };
  const int64_t n = big->numel();
  Tensor& y = ctx.out_uninit(0, DType::kFloat, big->shape());
  float* py = y.mutable_data<float>();
  const KernelTable& k = *ctx.kernels;
  constexpr int64_t kChunk = 1024;
  const size_t slots = steps.size();
  // A fast session on a target with a hardware FMA takes fast mode's erf for Erf steps.
  const bool fast_erf = ctx.fast && k.fma_f32;
  ParallelFor(ctx, (n + kChunk - 1) / kChunk, 16, [&](int64_t c0, int64_t c1) {
    auto& buf = ONEMODEL_PER_THREAD(ScratchVector<float>);
    if (buf.size() < slots * size_t(kChunk)) buf.resize(slots * size_t(kChunk));
    for (int64_t c = c0; c < c1; ++c) {
      const int64_t i0 = c * kChunk, len = std::min(kChunk, n - i0);
      // Operand o at offset j of the chunk; *stride 0 for a single element; *room: how
      // many elements from there stay in one repeat of a row operand.
      auto src = [&](const Operand& o, int64_t j, int64_t* stride, int64_t* room) -> const float* {
        *stride = 1;
        *room = len - j;
        if (o.inner) return buf.data() + size_t(o.idx) * size_t(kChunk) + j;
        const Tensor& in = ctx.in(size_t(o.idx));
        const int64_t per = period[size_t(o.idx)];
        if (per == kScalar && n != 1) {
          *stride = 0;
          return in.data<float>();
        }
        if (per > 0) {
          const int64_t off = (i0 + j) % per;
          *room = std::min(*room, per - off);
          return in.data<float>() + off;
        }
        return in.data<float>() + i0 + j;
      };
      for (size_t s = 0; s < steps.size(); ++s) {
        const Step& st = steps[s];
        float* dst = s + 1 == steps.size() ? py + i0 : buf.data() + s * size_t(kChunk);
        int64_t sa = 1, sb = 1, ra = 0, rb = 0;
        if (st.kind == Step::kBinary) {
          // In pieces that stay inside one repeat of any row operand.
          for (int64_t j = 0; j < len;) {
            const float* a = src(st.a, j, &sa, &ra);
            const float* b = src(st.b, j, &sb, &rb);
            const int64_t piece = std::min(ra, rb);
            k.BinaryF32(st.code, a, sa, b, sb, dst + j, piece);
            j += piece;
          }
          continue;
        }
        if (st.kind == Step::kCast && !st.a.inner) {
          ConvertToFloat(ctx.in(size_t(st.a.idx)), i0, len, dst);
          continue;
        }
        const float* a = src(st.a, 0, &sa, &ra);
        if (sa == 0) {  // a single-element input: its value in every lane
          float* t = buf.data() + s * size_t(kChunk);
          for (int64_t j = 0; j < len; ++j) t[j] = a[0];
          a = t;
        }
        if (st.kind == Step::kCast)
          std::copy(a, a + len, dst);  // an earlier step's float: Cast to float copies it
        else if (st.kind == Step::kUnary)
          k.UnaryF32(st.code, bound(st.lo, st.p0), bound(st.hi, st.p1), a, dst, len);
        else if (fast_erf && st.code == kMathErfF32)
          k.ErfFmaF32(a, dst, len);  // fast mode's erf (ref/softmax.h)
        else
          k.MathF32(st.code, a, dst, len);
      }
    }
  });
}

namespace {
// The inputs of a QuantizeDequantize node, for QdqFastParams.
struct QdqInputs {
  const OpContext& ctx;
  const Graph& body;
  const Tensor* operator()(const std::string& name) const {
    for (size_t i = 0; i < body.inputs.size(); ++i)
      if (body.inputs[i].name == name)
        return ctx.has_input(i) && ctx.inputs[i]->is_tensor() ? &ctx.inputs[i]->tensor : nullptr;
    return nullptr;
  }
};
}  // namespace

// QuantizeLinear -> DequantizeLinear as one pass over memory (passes.h): the byte each
// element quantises to is dequantised in the same lane, the reference's two formulas
// one after the other; any other parameters run the body node by node.
void QuantizeDequantize(OpContext& ctx) {
  const Attribute* body_attr = ctx.node.attr("body");
  if (!body_attr || !body_attr->g) throw ctx.Fail(ErrorCode::kInvalidModel, "missing its 'body' graph");
  const Graph& body = *body_attr->g;
  QdqParams p;
  if (ctx.num_inputs() != body.inputs.size() || !QdqFastParams(body, QdqInputs{ctx, body}, true, &p)) {
    RunBody(ctx, body);
    return;
  }
  const Tensor& x = ctx.in(0);
  Tensor& y = ctx.out_uninit(0, DType::kFloat, x.shape());
  RunQuantDequant(ctx, p, x.data<float>(), y.mutable_data<float>(), x.numel());
}

}  // namespace ops

void RunQuantDequant(const OpContext& ctx, const QdqParams& q, const float* x, float* y, int64_t n) {
  auto* kernel = ctx.VectorKernels() ? ctx.kernels->QuantDequantF32 : &ref::QuantDequantF32;
  constexpr int64_t kChunk = 4096;
  ops::ParallelFor(ctx, (n + kChunk - 1) / kChunk, 4, [&](int64_t c0, int64_t c1) {
    const int64_t i0 = c0 * kChunk, i1 = std::min(n, c1 * kChunk);
    kernel(x + i0, i1 - i0, q.scale, q.zp, q.lo, q.hi, q.dq_scale, q.dq_zp, y + i0);
  });
}

bool QdqFastParams(const Graph& body, FunctionRef<const Tensor*(const std::string&)> input, bool x_known,
                   QdqParams* p) {
  if (body.nodes.size() != 2) return false;
  const Node& q = body.nodes[0];
  const Node& dq = body.nodes[1];
  auto in = [&](const Node& n, size_t k) -> const Tensor* {
    return k < n.inputs.size() && !n.inputs[k].empty() ? input(n.inputs[k]) : nullptr;
  };
  auto attr = [](const Node& n, const char* name) {
    const Attribute* a = n.attr(name);
    return a ? a->i : 0;
  };
  const Tensor *s = in(q, 1), *z = in(q, 2), *ds = in(dq, 1), *dz = in(dq, 2);
  const bool has_z = q.inputs.size() > 2 && !q.inputs[2].empty(),
             has_dz = dq.inputs.size() > 2 && !dq.inputs[2].empty();
  if (!s || !ds || (has_z && !z) || (has_dz && !dz)) return false;
  if (x_known) {
    const Tensor* x = in(q, 0);
    if (!x || x->dtype() != DType::kFloat) return false;
  }
  auto scalar = [](const Tensor* t, DType want) { return t->dtype() == want && t->numel() == 1 && t->rank() <= 1; };
  DType t = z ? z->dtype() : DType::kUInt8;
  if (attr(q, "output_dtype") != 0) t = DType(attr(q, "output_dtype"));
  if (t != DType::kUInt8 && t != DType::kInt8) return false;
  if (!scalar(s, DType::kFloat) || !scalar(ds, DType::kFloat) || (z && !scalar(z, t)) || (dz && !scalar(dz, t)))
    return false;
  if (attr(q, "block_size") != 0 || attr(dq, "block_size") != 0 ||
      (attr(dq, "output_dtype") != 0 && attr(dq, "output_dtype") != 1))
    return false;
  auto value = [t](const Tensor* v) {
    return v ? t == DType::kInt8 ? int32_t(v->data<int8_t>()[0]) : int32_t(v->data<uint8_t>()[0]) : 0;
  };
  p->scale = s->data<float>()[0];
  p->dq_scale = ds->data<float>()[0];
  p->zp = value(z);
  p->dq_zp = value(dz);
  p->lo = t == DType::kInt8 ? -128 : 0;
  p->hi = t == DType::kInt8 ? 127 : 255;
  return true;
}

}  // namespace onemodel::impl
