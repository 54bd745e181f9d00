// Exact-mode fusion of scaled dot-product attention into one node (see passes.h).
#include <algorithm>
#include <string>
#include <unordered_map>
#include <vector>

#include "passes/passes.h"

namespace onemodel::impl {
namespace {

bool Is(const Node& n, const char* op) { return n.op_type == op && (n.domain.empty() || n.domain == "ai.onnx"); }

}  // namespace

int FuseAttention(Graph& g, const std::map<std::string, int64_t>& opsets) {
  std::unordered_map<std::string, int> readers = CountReaders(g);
  const std::unordered_map<std::string, size_t> producer = ProducerIndex(g);
  auto opset_it = opsets.find("");
  const int64_t opset = opset_it != opsets.end() ? opset_it->second : 0;
  std::vector<bool> taken(g.nodes.size(), false), drop(g.nodes.size(), false);
  std::vector<std::pair<size_t, Node>> fused_at;  // index of the last member -> fused node
  // The node producing v when v is read once (by the node that asks) and is no graph
  // output, it has one output and is not yet in another fusion.
  auto sole_producer = [&](const std::string& v) -> const Node* {
    if (v.empty()) return nullptr;
    auto it = producer.find(v);
    if (it == producer.end() || readers[v] != 1 || taken[it->second]) return nullptr;
    const Node& n = g.nodes[it->second];
    return n.outputs.size() == 1 ? &n : nullptr;
  };
  auto index_of = [&](const Node* n) { return size_t(n - g.nodes.data()); };
  int fused = 0;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    // The second product P . V, read back from its Softmax.
    const Node& mm2 = g.nodes[i];
    if (taken[i] || !Is(mm2, "MatMul") || mm2.inputs.size() != 2) continue;
    const Node* sm = sole_producer(mm2.inputs[0]);
    if (!sm || !Is(*sm, "Softmax") || sm->inputs.size() != 1) continue;
    // Softmax along the last axis: an explicit axis (checked against the rank when the node
    // runs), or none where the default is -1 (opset 13 on; before, it was 1).
    if (!sm->attr("axis") && opset < 13) continue;
    std::vector<const Node*> members{&mm2, sm};
    const Node* cur = sole_producer(sm->inputs[0]);
    // An optional mask Add: the scores on one side, anything on the other.
    if (cur && Is(*cur, "Add") && cur->inputs.size() == 2) {
      const Node* add = cur;
      const Node* a = sole_producer(add->inputs[0]);
      const Node* b = sole_producer(add->inputs[1]);
      auto scores = [&](const Node* n) { return n && (Is(*n, "Div") || Is(*n, "Mul") || Is(*n, "MatMul")); };
      cur = scores(a) ? a : scores(b) ? b : nullptr;
      if (!cur) continue;
      members.push_back(add);
    }
    // An optional scale: Div(scores, c), Mul(scores, c) or Mul(c, scores).
    if (cur && (Is(*cur, "Div") || Is(*cur, "Mul")) && cur->inputs.size() == 2) {
      const Node* scale = cur;
      const Node* a = sole_producer(scale->inputs[0]);
      const Node* b = Is(*scale, "Mul") ? sole_producer(scale->inputs[1]) : nullptr;
      cur = a && Is(*a, "MatMul") ? a : b && Is(*b, "MatMul") ? b : nullptr;
      if (!cur) continue;
      members.push_back(scale);
    }
    if (!cur || !Is(*cur, "MatMul") || cur->inputs.size() != 2) continue;
    const Node* mm1 = cur;
    members.push_back(mm1);
    // Transposes feeding Q, K^T and V that nothing else reads (their layouts become strides).
    for (const std::string& v : {mm1->inputs[0], mm1->inputs[1], mm2.inputs[1]}) {
      const Node* t = sole_producer(v);
      if (t && Is(*t, "Transpose") && t->inputs.size() == 1 &&
          std::find(members.begin(), members.end(), t) == members.end())
        members.push_back(t);
    }
    // A Transpose of the result, when it is the result's one reader.
    const std::string& out = mm2.outputs[0];
    std::string fused_out = out;
    if (readers[out] == 1)
      for (size_t r = i + 1; r < g.nodes.size(); ++r) {
        const Node& t = g.nodes[r];
        if (std::find(t.inputs.begin(), t.inputs.end(), out) == t.inputs.end()) continue;
        if (!taken[r] && Is(t, "Transpose") && t.inputs.size() == 1 && t.outputs.size() == 1) {
          members.push_back(&t);
          fused_out = t.outputs[0];
        }
        break;
      }
    std::vector<size_t> idx;
    for (const Node* n : members) idx.push_back(index_of(n));
    std::sort(idx.begin(), idx.end());
    std::vector<const Node*> ordered;
    for (size_t k : idx) ordered.push_back(&g.nodes[k]);
    Node f = FusedNode("SoftmaxAttention", mm1->name + " (attention)", ordered, fused_out);
    // The Softmax's axis written out (its default here is -1: checked above), so that the
    // node never reads a default that depends on the opset.
    for (Node& b : f.attributes["body"].g->nodes)
      if (Is(b, "Softmax") && !b.attr("axis")) {
        Attribute axis;
        axis.name = "axis";
        axis.type = Attribute::Type::kInt;
        axis.i = -1;
        b.attributes["axis"] = axis;
      }
    for (size_t k : idx) {
      taken[k] = true;
      drop[k] = true;
    }
    fused_at.push_back({idx.back(), std::move(f)});
    ++fused;
  }
  if (fused) PlaceFused(g, drop, fused_at);
  return fused;
}

}  // namespace onemodel::impl
