// onemodel.SoftmaxAttention (passes.h FuseAttention): MatMul(Q, K^T), an optional scale
// (Div or Mul by a single value), an optional mask Add, Softmax along the last axis and
// MatMul(P, V), with the Transposes around them, per (batch, block of query rows) in one
// task: the scores stay in a per-thread buffer, the Transposes become strides.
#include <algorithm>
#include <array>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "ops/fused/fused.h"
#include "ops/ops.h"
#include "ops/parallel.h"
#include "ops/util.h"
#include "ref/elementwise.h"
#include "core/per_thread.h"
#include "core/scratch.h"

namespace onemodel::impl {
namespace ops {
namespace {

constexpr int kNone = -1;

// The roles of the body's nodes and inputs, found from its output back (every inner value
// of the body has one reader: the pass made it so).
struct AttentionBody : NodeState {
  bool ok = false;
  int q = kNone, k = kNone, v = kNone;  // fused node inputs feeding the products
  const Node* q_t = nullptr;            // Transposes in front of them, or null
  const Node* k_t = nullptr;
  const Node* v_t = nullptr;
  const Node* out_t = nullptr;    // the Transpose of the result, or null
  int scale = kNone;              // the scale's input
  int32_t scale_op = kBinDivF32;  // Div or Mul
  bool scale_first = false;       // Mul(c, scores)
  int mask = kNone;               // the mask's input
  bool mask_first = false;        // Add(mask, scores)
  const Node* softmax = nullptr;
};

// The body's roles, from its output back. A body the pass did not make (a model may hold
// a onemodel node of its own) parses only where every node found has the arity its role
// needs; anything else leaves ok false, and the body then runs node by node.
std::shared_ptr<AttentionBody> ParseBody(const Graph& body) {
  auto p = std::make_shared<AttentionBody>();
  std::unordered_map<std::string, const Node*> producer;
  for (const Node& n : body.nodes)
    for (const std::string& o : n.outputs) producer[o] = &n;
  auto input_index = [&](const std::string& name) {
    for (size_t i = 0; i < body.inputs.size(); ++i)
      if (body.inputs[i].name == name) return int(i);
    return kNone;
  };
  // The node producing v, or null (a body input).
  auto node_of = [&](const std::string& v) -> const Node* {
    auto it = producer.find(v);
    return it == producer.end() ? nullptr : it->second;
  };
  auto is = [](const Node* n, const char* op, size_t k) {
    if (!n || n->op_type != op || n->inputs.size() != k || !(n->domain.empty() || n->domain == "ai.onnx")) return false;
    for (const std::string& in : n->inputs)
      if (in.empty()) return false;
    return true;
  };
  // A product operand: a body input, or a Transpose of one.
  auto operand = [&](const std::string& v, int* idx, const Node** t) {
    const Node* n = node_of(v);
    if (is(n, "Transpose", 1)) {
      *t = n;
      *idx = input_index(n->inputs[0]);
    } else if (!n) {
      *idx = input_index(v);
    }
    return *idx != kNone;
  };
  if (body.outputs.size() != 1) return p;
  const Node* n = node_of(body.outputs[0].name);
  if (is(n, "Transpose", 1)) {
    p->out_t = n;
    n = node_of(n->inputs[0]);
  }
  if (!is(n, "MatMul", 2) || !operand(n->inputs[1], &p->v, &p->v_t)) return p;
  const Node* sm = node_of(n->inputs[0]);
  // The pass writes the Softmax's axis out; without one (a body the pass did not make) its
  // default would depend on the opset: node by node.
  const Attribute* axis = sm ? sm->attr("axis") : nullptr;
  if (!is(sm, "Softmax", 1) || !axis || axis->type != Attribute::Type::kInt) return p;
  p->softmax = sm;
  n = node_of(sm->inputs[0]);
  if (is(n, "Add", 2)) {
    p->mask_first = !node_of(n->inputs[0]);
    p->mask = input_index(n->inputs[p->mask_first ? 0 : 1]);
    if (p->mask == kNone) return p;
    n = node_of(n->inputs[p->mask_first ? 1 : 0]);
  }
  if (is(n, "Div", 2) || is(n, "Mul", 2)) {
    p->scale_op = n->op_type == "Div" ? kBinDivF32 : kBinMulF32;
    p->scale_first = n->op_type == "Mul" && !node_of(n->inputs[0]);
    p->scale = input_index(n->inputs[p->scale_first ? 0 : 1]);
    if (p->scale == kNone) return p;
    n = node_of(n->inputs[p->scale_first ? 1 : 0]);
  }
  if (!is(n, "MatMul", 2)) return p;
  p->ok = operand(n->inputs[0], &p->q, &p->q_t) && operand(n->inputs[1], &p->k, &p->k_t);
  return p;
}

// A Transpose's perm (reversed axes when it has none), or the identity without one.
std::vector<int64_t> PermOf(const Node* transpose, int64_t r) {
  std::vector<int64_t> perm;
  const Attribute* a = transpose ? transpose->attr("perm") : nullptr;
  if (a) return a->ints;
  for (int64_t k = 0; k < r; ++k) perm.push_back(transpose ? r - 1 - k : k);
  return perm;
}

// Whether perm is a permutation of [0, r).
bool IsPerm(const std::vector<int64_t>& perm, int64_t r) {
  std::array<bool, 4> seen{};
  if (int64_t(perm.size()) != r) return false;
  for (int64_t a : perm) {
    if (a < 0 || a >= r || seen[size_t(a)]) return false;
    seen[size_t(a)] = true;
  }
  return true;
}

// A float tensor read through a Transpose (or none) as a strided view of rank r.
struct View {
  std::array<int64_t, 4> dim{}, stride{};
};
bool MakeView(const Tensor& t, const Node* transpose, int64_t r, View* v) {
  if (t.dtype() != DType::kFloat || t.rank() != r) return false;
  std::array<int64_t, 4> st{};
  int64_t s = 1;
  for (int64_t a = r - 1; a >= 0; --a) {
    st[size_t(a)] = s;
    s *= t.shape()[size_t(a)];
  }
  const std::vector<int64_t> perm = PermOf(transpose, r);
  if (!IsPerm(perm, r)) return false;
  for (int64_t k = 0; k < r; ++k) {
    v->dim[size_t(k)] = t.shape()[size_t(perm[size_t(k)])];
    v->stride[size_t(k)] = st[size_t(perm[size_t(k)])];
  }
  return true;
}

// What a node's inputs give the one-pass path: views of Q, K^T and V, the mask's and
// the result's strides over [batch..., S, T] and [batch..., S, Dv], the output's shape.
struct AttentionPlan {
  int64_t r = 0, S = 0, D = 0, T = 0, Dv = 0;
  View q, k, v;
  std::array<int64_t, 4> ms{}, os{};
  Shape out_shape;
  const Tensor *qt = nullptr, *kt = nullptr, *vt = nullptr, *mask = nullptr, *scale = nullptr;
};

bool PlanAttention(const OpContext& ctx, const AttentionBody& b, const Graph& body, AttentionPlan* p) {
  auto tensor = [&](int i) -> const Tensor* {
    return i != kNone && size_t(i) < ctx.num_inputs() && ctx.has_input(size_t(i)) && ctx.inputs[size_t(i)]->is_tensor()
               ? &ctx.inputs[size_t(i)]->tensor
               : nullptr;
  };
  if (!b.ok || ctx.num_inputs() != body.inputs.size()) return false;
  if (ctx.algorithms && (ctx.algorithms->count("MatMul") || ctx.algorithms->count("Softmax"))) return false;
  p->qt = tensor(b.q), p->kt = tensor(b.k), p->vt = tensor(b.v);
  p->scale = tensor(b.scale), p->mask = tensor(b.mask);
  if (!p->qt || !p->kt || !p->vt) return false;
  const int64_t r = p->r = p->qt->rank();
  const size_t rs = size_t(r);
  if (r < 2 || r > 4 || !MakeView(*p->qt, b.q_t, r, &p->q) || !MakeView(*p->kt, b.k_t, r, &p->k) ||
      !MakeView(*p->vt, b.v_t, r, &p->v))
    return false;
  if (b.scale != kNone &&
      !(p->scale && p->scale->dtype() == DType::kFloat && p->scale->numel() == 1 && p->scale->rank() <= r))
    return false;
  if (b.mask != kNone && !(p->mask && p->mask->dtype() == DType::kFloat && p->mask->rank() <= r)) return false;
  p->S = p->q.dim[rs - 2], p->D = p->q.dim[rs - 1], p->T = p->k.dim[rs - 1], p->Dv = p->v.dim[rs - 1];
  if (p->k.dim[rs - 2] != p->D || p->v.dim[rs - 2] != p->T || p->S <= 0 || p->D <= 0 || p->T <= 0 || p->Dv <= 0)
    return false;
  for (size_t a = 0; a + 2 < rs; ++a)
    if (p->k.dim[a] != p->q.dim[a] || p->v.dim[a] != p->q.dim[a] || p->q.dim[a] <= 0) return false;
  // Softmax along the last axis of the scores (opset 13's axis, or an older opset's
  // trailing block starting there: the same rows).
  const int64_t axis = b.softmax->attr("axis")->i;
  if ((axis < 0 ? axis + r : axis) != r - 1) return false;
  // The mask's strides over the scores' axes (0 where it broadcasts); it must not widen them.
  if (p->mask) {
    int64_t s = 1;
    for (int64_t a = p->mask->rank() - 1, o = r - 1; a >= 0; --a, --o) {
      const int64_t d = p->mask->shape()[size_t(a)];
      const int64_t want = o == r - 1 ? p->T : o == r - 2 ? p->S : p->q.dim[size_t(o)];
      if (d != 1 && d != want) return false;
      p->ms[size_t(o)] = d == 1 ? 0 : s;
      s *= d;
    }
  }
  // The result [batch..., S, Dv] stored through the final Transpose, whose last axis
  // must stay last (the kernel writes rows).
  const std::vector<int64_t> perm = PermOf(b.out_t, r);
  if (!IsPerm(perm, r) || perm[rs - 1] != r - 1) return false;
  std::array<int64_t, 4> logical = p->q.dim;
  logical[rs - 1] = p->Dv;
  p->out_shape.assign(rs, 0);
  for (size_t x = 0; x < rs; ++x) p->out_shape[x] = logical[size_t(perm[x])];
  int64_t s = 1;
  for (int64_t x = r - 1; x >= 0; --x) {
    p->os[size_t(perm[size_t(x)])] = s;
    s *= p->out_shape[size_t(x)];
  }
  return true;
}

}  // namespace

// The fused attention (passes.h): every value the one-pass path computes is the unfused
// nodes' own: the products are the GEMM kernel's k-order folds from -0.0 (the MatMul
// operator's bits, ref::GemmF32; in a fast session on an FMA target the MatMul's fast
// row's twin, GemmFmaF32), the scale and the mask the BinaryF32 kernel's IEEE operations,
// the Softmax the SoftmaxRowsF32 kernel (the operator's rows row; in a fast session on an
// FMA target its rows-fma row's SoftmaxRowsFmaF32). Inputs it does not take (other types or ranks, batch dimensions
// that broadcast, a mask or scale that would widen the scores, empty dimensions, an algorithm forced for MatMul or
// Softmax) run the body node by node.
void SoftmaxAttention(OpContext& ctx) {
  const Attribute* body_attr = ctx.node.attr("body");
  if (!body_attr || !body_attr->g) throw ctx.Fail(ErrorCode::kInvalidModel, "missing its 'body' graph");
  const Graph& body = *body_attr->g;
  const std::shared_ptr<const AttentionBody> b =
      ctx.Prepared<AttentionBody>([](const AttentionBody&) { return true; }, [&] { return ParseBody(body); });
  AttentionPlan p;
  if (!PlanAttention(ctx, *b, body, &p)) {
    RunBody(ctx, body);
    return;
  }
  const int64_t r = p.r, S = p.S, D = p.D, T = p.T, Dv = p.Dv;
  const size_t rs = size_t(r);
  Tensor& y = ctx.out_uninit(0, DType::kFloat, p.out_shape);
  float* py = y.mutable_data<float>();
  const float* pq = p.qt->data<float>();
  const float* pk = p.kt->data<float>();
  const float* pv = p.vt->data<float>();
  const float* pm = p.mask ? p.mask->data<float>() : nullptr;
  const float* pc = p.scale ? p.scale->data<float>() : nullptr;
  const KernelTable& kt = *ctx.kernels;
  auto* gemm = ctx.fast && kt.fma_f32 ? kt.GemmFmaF32 : kt.GemmF32;
  // The scale, the mask and the Softmax of a block's rows in one kernel call, each value
  // the nodes' own (SoftmaxRowsF32: the IEEE operations of BinaryF32, then the rows row's
  // steps; IEEE multiplication and addition are commutative, so Mul(c, scores) and
  // Add(mask, scores) are the same values); in a fast session on an FMA target the
  // Softmax's fast row's kernel.
  auto* softmax = ctx.fast && kt.fma_f32 ? kt.SoftmaxRowsFmaF32 : kt.SoftmaxRowsF32;
  const int32_t scale_op = pc ? b->scale_op : -1;
  const float scale = pc ? *pc : 1.0f;
  // Batches (the leading axes, at most two) times blocks of query rows; a block's scores
  // (rows x T floats) stay within 64 KiB where T allows. Each output row depends only on
  // its own query row, so the split changes nothing in the bits.
  const int64_t B0 = r == 4 ? p.q.dim[0] : 1, B1 = r >= 3 ? p.q.dim[rs - 3] : 1;
  const int64_t batches = B0 * B1;
  const int64_t threads = ctx.pool ? ctx.pool->threads() : 1;
  int64_t rows = std::max<int64_t>(1, std::min<int64_t>(S, 16384 / T));
  const int64_t want_blocks = (4 * threads + batches - 1) / batches;
  rows = std::max<int64_t>(1, std::min(rows, (S + want_blocks - 1) / want_blocks));
  const int64_t blocks = (S + rows - 1) / rows;
  auto at = [&](const std::array<int64_t, 4>& s, int64_t b0, int64_t b1) {
    return (r == 4 ? b0 * s[0] : 0) + (r >= 3 ? b1 * s[rs - 3] : 0);
  };
  ParallelFor(ctx, batches * blocks, 1, [&](int64_t t0, int64_t t1) {
    auto& buf = ONEMODEL_PER_THREAD(ScratchVector<float>);
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t bi = t / blocks, i0 = (t % blocks) * rows, n = std::min(rows, S - i0);
      const int64_t b0 = bi / B1, b1 = bi % B1;
      if (buf.size() < size_t(n * T)) buf.resize(size_t(n * T));
      float* sc = buf.data();
      gemm(n, T, D, pq + at(p.q.stride, b0, b1) + i0 * p.q.stride[rs - 2], p.q.stride[rs - 2], p.q.stride[rs - 1],
           pk + at(p.k.stride, b0, b1), p.k.stride[rs - 2], p.k.stride[rs - 1], sc, T);
      softmax(sc, sc, n, T, scale_op, scale, pm ? pm + at(p.ms, b0, b1) + i0 * p.ms[rs - 2] : nullptr, p.ms[rs - 2],
              p.ms[rs - 1]);
      gemm(n, Dv, T, sc, T, 1, pv + at(p.v.stride, b0, b1), p.v.stride[rs - 2], p.v.stride[rs - 1],
           py + at(p.os, b0, b1) + i0 * p.os[rs - 2], p.os[rs - 2]);
    }
  });
}

}  // namespace ops
}  // namespace onemodel::impl
