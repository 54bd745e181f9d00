// Exact-mode fusion of QuantizeLinear -> DequantizeLinear pairs (see passes.h).
#include <algorithm>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "passes/passes.h"

namespace onemodel::impl {
namespace {
bool IsOnnxOp(const Node& n, const char* op) {
  return n.op_type == op && (n.domain.empty() || n.domain == "ai.onnx") && n.outputs.size() == 1 &&
         !n.outputs[0].empty() && !n.inputs.empty() && !n.inputs[0].empty();
}
}  // namespace

int FuseQuantizeDequantize(Graph& g) {
  std::unordered_map<std::string, int> readers = CountReaders(g);
  std::unordered_map<std::string, size_t> producer = ProducerIndex(g);
  std::vector<bool> drop(g.nodes.size(), false);
  int fused = 0;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    Node& dq = g.nodes[i];
    if (!IsOnnxOp(dq, "DequantizeLinear") || dq.inputs.size() > 3) continue;
    auto it = producer.find(dq.inputs[0]);
    if (it == producer.end() || readers[dq.inputs[0]] != 1) continue;
    const Node& q = g.nodes[it->second];
    if (!IsOnnxOp(q, "QuantizeLinear") || q.inputs.size() > 3 || drop[it->second]) continue;
    // The fused node reads Q's X first, then the other inputs of both (each once); its
    // body holds the two nodes as they were.
    Node f = FusedNode("QuantizeDequantize", q.name + " + " + dq.name, {&q, &dq}, dq.outputs[0]);
    drop[it->second] = true;
    dq = std::move(f);  // in DQ's place: every input exists by then
    ++fused;
  }
  if (fused) EraseNodes(g, drop);
  return fused;
}

namespace {
// The value is float whatever is fed: a graph input or initializer declared float, or
// the output of a DequantizeLinear (alone or in a QuantizeDequantize body) whose scale is
// a float initializer and whose output type is not changed, or of a Conv of such a value.
bool KnownFloat(const Graph& g, const std::unordered_map<std::string, size_t>& producer, std::string v) {
  // A Conv's output has its input's type: follow chains of convolutions.
  std::unordered_map<std::string, size_t>::const_iterator it;
  for (;;) {
    for (const ValueInfo& in : g.inputs)
      if (in.name == v) return in.type.kind == ValueType::Kind::kTensor && in.type.tensor.dtype == DType::kFloat;
    auto init = g.initializers.find(v);
    if (init != g.initializers.end()) return init->second.dtype() == DType::kFloat;
    it = producer.find(v);
    if (it == producer.end()) return false;
    const Node& n = g.nodes[it->second];
    if (n.op_type != "Conv" || !(n.domain.empty() || n.domain == "ai.onnx") || n.inputs.empty()) break;
    v = n.inputs[0];
  }
  const Node* dq = &g.nodes[it->second];
  if (dq->op_type == "QuantizeDequantize" && dq->domain == kOneModelDomain) {
    const Attribute* b = dq->attr("body");
    if (!b || !b->g || b->g->nodes.size() != 2) return false;
    dq = &b->g->nodes[1];
  }
  if (dq->op_type != "DequantizeLinear" || !(dq->domain.empty() || dq->domain == "ai.onnx") || dq->inputs.size() < 2)
    return false;
  const Attribute* od = dq->attr("output_dtype");
  if (od && od->i != 0 && od->i != 1) return false;
  auto s = g.initializers.find(dq->inputs[1]);
  return s != g.initializers.end() && s->second.dtype() == DType::kFloat;
}
}  // namespace

int FuseConvQuantizeDequantize(Graph& g) {
  std::unordered_map<std::string, int> readers = CountReaders(g);
  std::unordered_map<std::string, size_t> producer = ProducerIndex(g);
  std::set<std::string> fed;  // initializers a feed can replace are not constants
  for (const ValueInfo& in : g.inputs) fed.insert(in.name);
  std::vector<bool> drop(g.nodes.size(), false);
  int fused = 0;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& qdq = g.nodes[i];
    if (qdq.op_type != "QuantizeDequantize" || qdq.domain != kOneModelDomain || qdq.outputs.size() != 1 ||
        qdq.inputs.empty())
      continue;
    const Attribute* b = qdq.attr("body");
    auto it = producer.find(qdq.inputs[0]);
    if (!b || !b->g || it == producer.end() || readers[qdq.inputs[0]] != 1) continue;
    Node& conv = g.nodes[it->second];
    if (conv.op_type != "Conv" || !(conv.domain.empty() || conv.domain == "ai.onnx") || conv.outputs.size() != 1 ||
        conv.inputs.empty() || conv.fusion.qdq || !KnownFloat(g, producer, conv.inputs[0]))
      continue;
    // The parameters: constants only (initializers no feed replaces), per tensor.
    const std::string& x = b->g->nodes[0].inputs[0];
    auto constant = [&](const std::string& name) -> const Tensor* {
      if (name == x || fed.count(name)) return nullptr;
      auto t = g.initializers.find(name);
      return t == g.initializers.end() ? nullptr : &t->second;
    };
    QdqParams p;
    if (!QdqFastParams(*b->g, constant, false, &p)) continue;
    conv.fusion.qdq = true;
    conv.fusion.qdq_params = p;
    conv.outputs[0] = qdq.outputs[0];
    producer[qdq.outputs[0]] = it->second;
    drop[i] = true;
    ++fused;
  }
  if (fused) EraseNodes(g, drop);
  return fused;
}

int FuseDynamicQuantMatMul(Graph& g) {
  std::unordered_map<std::string, int> readers = CountReaders(g);
  std::unordered_map<std::string, size_t> reader;  // the reader of a value read once
  for (size_t i = 0; i < g.nodes.size(); ++i)
    for (const std::string& in : g.nodes[i].inputs)
      if (!in.empty() && readers[in] == 1) reader[in] = i;
  std::set<std::string> fed;  // initializers a feed can replace are not constants
  for (const ValueInfo& in : g.inputs) fed.insert(in.name);
  // The node reading v, when v is read once, by such a node of the default domain with one
  // output.
  auto sole_reader = [&](const std::string& v, const char* op) -> const Node* {
    auto it = reader.find(v);
    if (it == reader.end()) return nullptr;
    const Node& n = g.nodes[it->second];
    return n.op_type == op && n.DefaultDomain() && n.outputs.size() == 1 && !n.outputs[0].empty() ? &n : nullptr;
  };
  std::vector<bool> drop(g.nodes.size(), false);
  std::vector<std::pair<size_t, Node>> fused_at;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& dq = g.nodes[i];
    if (dq.op_type != "DynamicQuantizeLinear" || !dq.DefaultDomain() || dq.inputs.size() != 1 || dq.inputs[0].empty() ||
        dq.outputs.size() != 3)
      continue;
    const std::string &q = dq.outputs[0], &scale = dq.outputs[1], &zp = dq.outputs[2];
    if (q.empty() || scale.empty() || zp.empty()) continue;
    const Node* mi = sole_reader(q, "MatMulInteger");
    if (!mi || mi->inputs.size() < 3 || mi->inputs.size() > 4 || mi->inputs[0] != q || mi->inputs[2] != zp ||
        reader.count(zp) == 0 || &g.nodes[reader[zp]] != mi || mi->inputs[1] == q || mi->inputs[1] == zp ||
        mi->inputs[1] == scale)
      continue;
    const Node* cast = sole_reader(mi->outputs[0], "Cast");
    const Attribute* to = cast ? cast->attr("to") : nullptr;
    if (!cast || cast->inputs.size() != 1 || !to || to->i != int64_t(DType::kFloat)) continue;
    const Node* m1 = sole_reader(scale, "Mul");
    if (!m1 || m1->inputs.size() != 2 || m1->inputs[0] == m1->inputs[1] || readers[m1->outputs[0]] != 1) continue;
    const std::string& ws = m1->inputs[m1->inputs[0] == scale ? 1 : 0];
    if (ws == q || ws == zp) continue;
    const Node* m2 = sole_reader(cast->outputs[0], "Mul");
    if (!m2 || m2->inputs.size() != 2 ||
        !((m2->inputs[0] == cast->outputs[0] && m2->inputs[1] == m1->outputs[0]) ||
          (m2->inputs[1] == cast->outputs[0] && m2->inputs[0] == m1->outputs[0])))
      continue;
    std::vector<const Node*> members{&dq, mi, cast, m1, m2};
    // A bias Add reading the product alone joins: its other operand a constant float
    // initializer of rank 1 (no feed replaces it).
    const Node* add = sole_reader(m2->outputs[0], "Add");
    if (add && add->inputs.size() == 2) {
      const std::string& b = add->inputs[add->inputs[0] == m2->outputs[0] ? 1 : 0];
      auto init = g.initializers.find(b);
      if (b != m2->outputs[0] && !fed.count(b) && init != g.initializers.end() &&
          init->second.dtype() == DType::kFloat && init->second.rank() == 1)
        members.push_back(add);
    }
    size_t last = 0;
    std::vector<size_t> idx;
    for (const Node* n : members) idx.push_back(size_t(n - g.nodes.data()));
    bool free = true;
    for (size_t k : idx) {
      free = free && !drop[k];
      last = std::max(last, k);
    }
    if (!free) continue;
    Node f = FusedNode("DynamicQuantMatMul", mi->name + " (dynamic quantisation)", members, members.back()->outputs[0]);
    for (size_t k : idx) drop[k] = true;
    fused_at.push_back({last, std::move(f)});
  }
  if (!fused_at.empty()) PlaceFused(g, drop, fused_at);
  return int(fused_at.size());
}

}  // namespace onemodel::impl
