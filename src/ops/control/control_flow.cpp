// Reference control flow (If, Loop, Scan), sequences and optionals. Subgraphs run
// with the same executor, seeing the enclosing graphs' values.
#include <algorithm>

#include "ops/ops.h"
#include "ops/util.h"

namespace onemodel::impl {
namespace ops {
namespace {

const Graph& GraphAttr(const OpContext& ctx, const std::string& name) {
  const Attribute& a = ctx.attr_required(name);
  if (!a.g) throw ctx.Fail(ErrorCode::kInvalidModel, "attribute '" + name + "' must be a graph");
  return *a.g;
}
bool ScalarTrue(const OpContext& ctx, const Tensor& t) {
  if (t.numel() != 1) throw ctx.Fail(ErrorCode::kShapeMismatch, "the condition must hold one element");
  return t.data<uint8_t>()[0] != 0;
}
Value IntScalar(int64_t v) {
  Tensor t(DType::kInt64, {});
  t.mutable_data<int64_t>()[0] = v;
  return Value::FromTensor(t);
}
Value BoolScalar(bool v) {
  Tensor t(DType::kBool, {});
  t.mutable_data<uint8_t>()[0] = v;
  return Value::FromTensor(t);
}
void CopyElems(const Tensor& src, int64_t si, Tensor& dst, int64_t di, int64_t n) {
  if (src.dtype() == DType::kString) {
    for (int64_t k = 0; k < n; ++k) dst.mutable_strings()[size_t(di + k)] = src.strings()[size_t(si + k)];
    return;
  }
  const size_t es = DTypeStorageSize(src.dtype());
  if (n)
    std::memcpy(dst.mutable_data<uint8_t>() + size_t(di) * es, static_cast<const uint8_t*>(src.raw()) + size_t(si) * es,
                size_t(n) * es);
}
// The slice of t at index `at` along `axis`, with that axis removed.
Tensor SliceAt(const Tensor& t, int64_t axis, int64_t at) {
  Shape s = t.shape();
  const int64_t dim = s[size_t(axis)];
  s.erase(s.begin() + axis);
  Tensor out(t.dtype(), s);
  int64_t outer = 1, inner = 1;
  for (int64_t k = 0; k < axis; ++k) outer *= t.shape()[size_t(k)];
  for (int64_t k = axis + 1; k < t.rank(); ++k) inner *= t.shape()[size_t(k)];
  for (int64_t b = 0; b < outer; ++b) CopyElems(t, (b * dim + at) * inner, out, b * inner, inner);
  return out;
}
// Stacks equally shaped tensors along a new `axis`.
Tensor Stack(const OpContext& ctx, const std::vector<Tensor>& parts, int64_t axis, DType dtype,
             const Shape& empty_elem) {
  Shape elem = parts.empty() ? empty_elem : parts[0].shape();
  for (const Tensor& p : parts) {
    if (p.shape() != elem || p.dtype() != parts[0].dtype())
      throw ctx.Fail(ErrorCode::kShapeMismatch, "scan outputs differ in shape or type between iterations");
  }
  Shape s = elem;
  s.insert(s.begin() + axis, int64_t(parts.size()));
  Tensor out(parts.empty() ? dtype : parts[0].dtype(), s);
  int64_t outer = 1, inner = 1;
  for (int64_t k = 0; k < axis; ++k) outer *= elem[size_t(k)];
  for (size_t k = size_t(axis); k < elem.size(); ++k) inner *= elem[k];
  const int64_t n = int64_t(parts.size());
  for (int64_t b = 0; b < outer; ++b)
    for (int64_t i = 0; i < n; ++i) CopyElems(parts[size_t(i)], b * inner, out, (b * n + i) * inner, inner);
  return out;
}
DType GraphOutType(const Graph& g, size_t i) {
  return i < g.outputs.size() ? g.outputs[i].type.tensor.dtype : DType::kFloat;
}

}  // namespace

void If(OpContext& ctx) {
  const bool c = ScalarTrue(ctx, ctx.in(0));
  const Graph& g = GraphAttr(ctx, c ? "then_branch" : "else_branch");
  std::vector<Value> outs = RunSubgraph(ctx.executor, g, {}, *ctx.scope);
  if (outs.size() != ctx.outputs.size())
    throw ctx.Fail(ErrorCode::kInvalidModel, "the branch has the wrong number of outputs");
  for (size_t i = 0; i < outs.size(); ++i) ctx.outputs[i] = std::move(outs[i]);
}

void Loop(OpContext& ctx) {
  const Graph& body = GraphAttr(ctx, "body");
  const bool has_m = ctx.has_input(0) && ctx.in(0).numel() > 0;
  const int64_t max_trips = has_m ? ctx.in(0).data<int64_t>()[0] : 0;
  bool cond = ctx.has_input(1) && ctx.in(1).numel() > 0 ? ScalarTrue(ctx, ctx.in(1)) : true;
  if (ctx.num_inputs() < 2 || ctx.outputs.size() < ctx.num_inputs() - 2) {
    throw ctx.Fail(ErrorCode::kInvalidModel,
                   "Loop takes M, cond and its loop-carried values, and has an output for each");
  }
  const size_t n_carried = ctx.num_inputs() - 2;
  std::vector<Value> carried;
  for (size_t i = 0; i < n_carried; ++i) {
    if (!ctx.has_input(2 + i)) throw ctx.Fail(ErrorCode::kMissingInput, "loop-carried input missing");
    carried.push_back(*ctx.inputs[2 + i]);
  }
  const size_t n_scan = ctx.outputs.size() - n_carried;
  std::vector<std::vector<Tensor>> scans(n_scan);
  std::vector<std::vector<Tensor>> scan_seq(n_scan);
  for (int64_t it = 0; (!has_m || it < max_trips) && cond; ++it) {
    if (it > (int64_t(1) << 31)) throw ctx.Fail(ErrorCode::kOutOfRange, "the loop does not end");
    std::vector<Value> in{IntScalar(it), BoolScalar(cond)};
    in.insert(in.end(), carried.begin(), carried.end());
    std::vector<Value> out = RunSubgraph(ctx.executor, body, in, *ctx.scope);
    if (out.size() != 1 + n_carried + n_scan)
      throw ctx.Fail(ErrorCode::kInvalidModel, "the body has the wrong number of outputs");
    cond = ScalarTrue(ctx, out[0].tensor);
    for (size_t i = 0; i < n_carried; ++i) carried[i] = out[1 + i];
    for (size_t k = 0; k < n_scan; ++k) scans[k].push_back(out[1 + n_carried + k].tensor);
  }
  for (size_t i = 0; i < n_carried; ++i) ctx.outputs[i] = carried[i];
  for (size_t k = 0; k < n_scan; ++k) {
    ctx.set_out(n_carried + k, Stack(ctx, scans[k], 0, GraphOutType(body, 1 + n_carried + k), {}));
  }
}

// Scan-8: a leading batch axis on states and scan inputs (scanned along axis 1), an
// optional first input sequence_lens, and the scan run once per batch element.
void Scan8(OpContext& ctx) {
  const Graph& body = GraphAttr(ctx, "body");
  const int64_t m = ctx.attr_i("num_scan_inputs", 0);
  const int64_t n_state = int64_t(ctx.num_inputs()) - 1 - m;
  const int64_t k_out = int64_t(ctx.outputs.size()) - n_state;
  const auto dirs = ctx.attr_ints("directions", std::vector<int64_t>(size_t(m), 0));
  if (n_state < 0 || m <= 0) throw ctx.Fail(ErrorCode::kInvalidModel, "num_scan_inputs does not fit the inputs");
  const Tensor& first_scan = ctx.in(size_t(1 + n_state));
  const int64_t B = first_scan.shape()[0], S = first_scan.shape()[1];
  std::vector<int64_t> lens(static_cast<size_t>(B), S);
  if (ctx.has_input(0)) lens = ReadInts(ctx, ctx.in(0));
  std::vector<std::vector<Tensor>> final_states(static_cast<size_t>(n_state)), scans(static_cast<size_t>(k_out));
  for (int64_t b = 0; b < B; ++b) {
    std::vector<Value> state;
    for (int64_t i = 0; i < n_state; ++i) state.push_back(Value::FromTensor(SliceAt(ctx.in(size_t(1 + i)), 0, b)));
    std::vector<std::vector<Tensor>> outs(static_cast<size_t>(k_out));
    const int64_t len = lens[size_t(b)];
    for (int64_t t = 0; t < len; ++t) {
      std::vector<Value> in = state;
      for (int64_t j = 0; j < m; ++j) {
        const Tensor seq = SliceAt(ctx.in(size_t(1 + n_state + j)), 0, b);
        in.push_back(Value::FromTensor(SliceAt(seq, 0, dirs[size_t(j)] ? len - 1 - t : t)));
      }
      std::vector<Value> out = RunSubgraph(ctx.executor, body, in, *ctx.scope);
      for (int64_t i = 0; i < n_state; ++i) state[size_t(i)] = out[size_t(i)];
      for (int64_t k = 0; k < k_out; ++k) outs[size_t(k)].push_back(out[size_t(n_state + k)].tensor);
    }
    for (int64_t i = 0; i < n_state; ++i) final_states[size_t(i)].push_back(state[size_t(i)].tensor);
    for (int64_t k = 0; k < k_out; ++k)
      scans[size_t(k)].push_back(Stack(ctx, outs[size_t(k)], 0, GraphOutType(body, size_t(n_state + k)), {}));
  }
  for (int64_t i = 0; i < n_state; ++i)
    ctx.set_out(size_t(i), Stack(ctx, final_states[size_t(i)], 0, DType::kFloat, {}));
  for (int64_t k = 0; k < k_out; ++k)
    ctx.set_out(size_t(n_state + k), Stack(ctx, scans[size_t(k)], 0, DType::kFloat, {}));
}

void Scan(OpContext& ctx) {
  if (ctx.opset < 9) {
    Scan8(ctx);
    return;
  }
  const Graph& body = GraphAttr(ctx, "body");
  const int64_t m = ctx.attr_i("num_scan_inputs", 0);
  const int64_t n_state = int64_t(ctx.num_inputs()) - m;
  const int64_t k_out = int64_t(ctx.outputs.size()) - n_state;
  const auto in_axes = ctx.attr_ints("scan_input_axes", std::vector<int64_t>(size_t(m), 0));
  const auto in_dirs = ctx.attr_ints("scan_input_directions", std::vector<int64_t>(size_t(m), 0));
  const auto out_axes = ctx.attr_ints("scan_output_axes", std::vector<int64_t>(size_t(k_out), 0));
  const auto out_dirs = ctx.attr_ints("scan_output_directions", std::vector<int64_t>(size_t(k_out), 0));
  std::vector<Value> state;
  for (int64_t i = 0; i < n_state; ++i) state.push_back(*ctx.inputs[size_t(i)]);
  int64_t len = -1;
  std::vector<int64_t> axes(static_cast<size_t>(m));
  for (int64_t j = 0; j < m; ++j) {
    const Tensor& t = ctx.in(size_t(n_state + j));
    axes[size_t(j)] = NormAxis(ctx, in_axes[size_t(j)], t.rank());
    const int64_t l = t.shape()[size_t(axes[size_t(j)])];
    if (len >= 0 && l != len) throw ctx.Fail(ErrorCode::kShapeMismatch, "scan inputs differ in length");
    len = l;
  }
  if (len < 0) len = 0;
  std::vector<std::vector<Tensor>> outs(static_cast<size_t>(k_out));
  for (int64_t t = 0; t < len; ++t) {
    std::vector<Value> in = state;
    for (int64_t j = 0; j < m; ++j) {
      const int64_t at = in_dirs[size_t(j)] ? len - 1 - t : t;
      in.push_back(Value::FromTensor(SliceAt(ctx.in(size_t(n_state + j)), axes[size_t(j)], at)));
    }
    std::vector<Value> out = RunSubgraph(ctx.executor, body, in, *ctx.scope);
    for (int64_t i = 0; i < n_state; ++i) state[size_t(i)] = out[size_t(i)];
    for (int64_t k = 0; k < k_out; ++k) outs[size_t(k)].push_back(out[size_t(n_state + k)].tensor);
  }
  for (int64_t i = 0; i < n_state; ++i) ctx.outputs[size_t(i)] = state[size_t(i)];
  for (int64_t k = 0; k < k_out; ++k) {
    auto parts = outs[size_t(k)];
    if (out_dirs[size_t(k)]) std::reverse(parts.begin(), parts.end());
    const int64_t rank = parts.empty() ? 0 : parts[0].rank();
    const int64_t ax = NormAxis(ctx, out_axes[size_t(k)], rank + 1);
    ctx.set_out(size_t(n_state + k), Stack(ctx, parts, ax, GraphOutType(body, size_t(n_state + k)), {}));
  }
}

// Sequences.
namespace {
const std::vector<Tensor>& SeqIn(const OpContext& ctx, size_t i) {
  if (!ctx.has_input(i) || ctx.inputs[i]->kind != Value::Kind::kSequence)
    throw ctx.Fail(ErrorCode::kTypeMismatch, "input " + std::to_string(i) + " must be a sequence");
  return ctx.inputs[i]->sequence;
}
void SetSeq(OpContext& ctx, size_t i, std::vector<Tensor> s) {
  Value v;
  v.kind = Value::Kind::kSequence;
  v.sequence = std::move(s);
  ctx.outputs[i] = std::move(v);
}
int64_t Position(const OpContext& ctx, size_t i, int64_t size, bool insert) {
  int64_t p = ReadInts(ctx, ctx.in(i))[0];
  if (p < 0) p += size;
  if (p < 0 || p > size || (!insert && p == size))
    throw ctx.Fail(ErrorCode::kInvalidArgument, "position is out of range");
  return p;
}
}  // namespace

void SequenceConstruct(OpContext& ctx) {
  std::vector<Tensor> s;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) s.push_back(ctx.in(i));
  SetSeq(ctx, 0, std::move(s));
}
void SequenceEmpty(OpContext& ctx) { SetSeq(ctx, 0, {}); }
void SequenceAt(OpContext& ctx) {
  const auto& s = SeqIn(ctx, 0);
  ctx.set_out(0, s[size_t(Position(ctx, 1, int64_t(s.size()), false))]);
}
void SequenceInsert(OpContext& ctx) {
  auto s = SeqIn(ctx, 0);
  const int64_t p = ctx.has_input(2) ? Position(ctx, 2, int64_t(s.size()), true) : int64_t(s.size());
  s.insert(s.begin() + p, ctx.in(1));
  SetSeq(ctx, 0, std::move(s));
}
void SequenceErase(OpContext& ctx) {
  auto s = SeqIn(ctx, 0);
  if (s.empty()) throw ctx.Fail(ErrorCode::kInvalidArgument, "the sequence is empty");
  const int64_t p = ctx.has_input(1) ? Position(ctx, 1, int64_t(s.size()), false) : int64_t(s.size()) - 1;
  s.erase(s.begin() + p);
  SetSeq(ctx, 0, std::move(s));
}
void SequenceLength(OpContext& ctx) { ctx.outputs[0] = IntScalar(int64_t(SeqIn(ctx, 0).size())); }

void ConcatFromSequence(OpContext& ctx) {
  const auto& s = SeqIn(ctx, 0);
  const bool new_axis = ctx.attr_i("new_axis", 0) != 0;
  if (s.empty()) throw ctx.Fail(ErrorCode::kInvalidArgument, "the sequence is empty");
  if (new_axis) {
    const int64_t ax = NormAxis(ctx, ctx.attr_i("axis", 0), s[0].rank() + 1);
    ctx.set_out(0, Stack(ctx, s, ax, s[0].dtype(), s[0].shape()));
    return;
  }
  const int64_t ax = NormAxis(ctx, ctx.attr_i("axis", 0), s[0].rank());
  Shape shape = s[0].shape();
  shape[size_t(ax)] = 0;
  for (const Tensor& t : s) shape[size_t(ax)] += t.shape()[size_t(ax)];
  Tensor out(s[0].dtype(), shape);
  int64_t outer = 1, inner = 1;
  for (int64_t k = 0; k < ax; ++k) outer *= shape[size_t(k)];
  for (int64_t k = ax + 1; k < int64_t(shape.size()); ++k) inner *= shape[size_t(k)];
  int64_t w = 0;
  for (int64_t b = 0; b < outer; ++b)
    for (const Tensor& t : s) {
      const int64_t chunk = t.shape()[size_t(ax)] * inner;
      CopyElems(t, b * chunk, out, w, chunk);
      w += chunk;
    }
  ctx.set_out(0, out);
}

void SplitToSequence(OpContext& ctx) {
  const Tensor& x = ctx.in(0);
  const int64_t ax = NormAxis(ctx, ctx.attr_i("axis", 0), x.rank());
  const int64_t dim = x.shape()[size_t(ax)];
  std::vector<int64_t> sizes;
  bool squeeze = false;
  if (ctx.has_input(1)) {
    const Tensor& sp = ctx.in(1);
    const auto v = ReadInts(ctx, sp);
    if (sp.rank() == 0) {
      if (v.empty() || v[0] <= 0) throw ctx.Fail(ErrorCode::kInvalidArgument, "a scalar split must be > 0");
      for (int64_t st = 0; st < dim; st += v[0]) sizes.push_back(std::min(v[0], dim - st));
    } else {
      if (sp.rank() != 1) throw ctx.Fail(ErrorCode::kShapeMismatch, "split must be a scalar or 1-D");
      sizes = v;
      int64_t total = 0;
      for (int64_t sz : sizes) {
        if (sz < 0 || sz > dim - total)
          throw ctx.Fail(ErrorCode::kInvalidArgument,
                         "the split sizes must be >= 0 and sum to the axis' length " + std::to_string(dim));
        total += sz;
      }
      if (total != dim)
        throw ctx.Fail(ErrorCode::kInvalidArgument, "the split sizes sum to " + std::to_string(total) +
                                                        ", not the axis' length " + std::to_string(dim));
    }
  } else {
    sizes.assign(size_t(dim), 1);
    squeeze = ctx.attr_i("keepdims", 1) == 0;
  }
  std::vector<Tensor> parts;
  int64_t outer = 1, inner = 1;
  for (int64_t k = 0; k < ax; ++k) outer *= x.shape()[size_t(k)];
  for (int64_t k = ax + 1; k < x.rank(); ++k) inner *= x.shape()[size_t(k)];
  int64_t start = 0;
  for (int64_t sz : sizes) {
    Shape s = x.shape();
    s[size_t(ax)] = sz;
    Tensor t(x.dtype(), s);
    for (int64_t b = 0; b < outer; ++b) CopyElems(x, (b * dim + start) * inner, t, b * sz * inner, sz * inner);
    if (squeeze) {
      Shape q = s;
      q.erase(q.begin() + ax);
      Tensor r(x.dtype(), q);
      CopyElems(t, 0, r, 0, t.numel());
      t = r;
    }
    parts.push_back(t);
    start += sz;
  }
  SetSeq(ctx, 0, std::move(parts));
}

void SequenceMap(OpContext& ctx) {
  const Graph& body = GraphAttr(ctx, "body");
  const auto& s = SeqIn(ctx, 0);
  std::vector<std::vector<Tensor>> outs(ctx.outputs.size());
  for (size_t i = 0; i < s.size(); ++i) {
    std::vector<Value> in{Value::FromTensor(s[i])};
    for (size_t k = 1; k < ctx.num_inputs(); ++k) {
      const Value& v = *ctx.inputs[k];
      in.push_back(v.kind == Value::Kind::kSequence ? Value::FromTensor(v.sequence.at(i)) : v);
    }
    std::vector<Value> o = RunSubgraph(ctx.executor, body, in, *ctx.scope);
    for (size_t k = 0; k < o.size() && k < outs.size(); ++k) outs[k].push_back(o[k].tensor);
  }
  for (size_t k = 0; k < outs.size(); ++k) SetSeq(ctx, k, std::move(outs[k]));
}

// Optionals: an empty optional is kOptionalEmpty; a present one is its value.
void Optional(OpContext& ctx) {
  if (ctx.has_input(0)) {
    ctx.outputs[0] = *ctx.inputs[0];
    return;
  }
  Value v;
  v.kind = Value::Kind::kOptionalEmpty;
  ctx.outputs[0] = v;
}
void OptionalHasElement(OpContext& ctx) {
  const bool has = ctx.has_input(0) && ctx.inputs[0]->kind != Value::Kind::kOptionalEmpty;
  ctx.outputs[0] = BoolScalar(has);
}
void OptionalGetElement(OpContext& ctx) {
  if (!ctx.has_input(0) || ctx.inputs[0]->kind == Value::Kind::kOptionalEmpty) {
    throw ctx.Fail(ErrorCode::kInvalidArgument, "the optional is empty");
  }
  ctx.outputs[0] = *ctx.inputs[0];
}

}  // namespace ops
}  // namespace onemodel::impl
