// Exact-mode fusion of QuantizeLinear -> DequantizeLinear pairs (see passes.h).
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
  std::unordered_map<std::string, size_t> producer;
  for (size_t i = 0; i < g.nodes.size(); ++i)
    for (const std::string& out : g.nodes[i].outputs)
      if (!out.empty()) producer[out] = i;
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
    Node f;
    f.op_type = "QuantizeDequantize";
    f.domain = kOneModelDomain;
    f.name = q.name + " + " + dq.name;
    auto body = std::make_shared<Graph>();
    body->name = f.name;
    auto add_input = [&](const std::string& name) {
      if (name.empty()) return;
      for (const auto& in : f.inputs)
        if (in == name) return;
      f.inputs.push_back(name);
      ValueInfo vi;
      vi.name = name;
      body->inputs.push_back(vi);
    };
    for (const std::string& in : q.inputs) add_input(in);
    for (size_t k = 1; k < dq.inputs.size(); ++k) add_input(dq.inputs[k]);
    body->nodes = {q, dq};
    ValueInfo vo;
    vo.name = dq.outputs[0];
    body->outputs.push_back(vo);
    f.outputs = dq.outputs;
    Attribute a;
    a.name = "body";
    a.type = Attribute::Type::kGraph;
    a.g = body;
    f.attributes[a.name] = a;
    drop[it->second] = true;
    dq = std::move(f);  // in DQ's place: every input exists by then
    ++fused;
  }
  if (fused) {
    std::vector<Node> kept;
    kept.reserve(g.nodes.size() - size_t(fused));
    for (size_t i = 0; i < g.nodes.size(); ++i)
      if (!drop[i]) kept.push_back(std::move(g.nodes[i]));
    g.nodes = std::move(kept);
  }
  return fused;
}

}  // namespace onemodel::impl
