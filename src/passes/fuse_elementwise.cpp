// Exact-mode fusion of elementwise chains into one pass over memory (see passes.h).
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "passes/passes.h"

namespace onemodel {
namespace {

bool IsDefaultDomain(const Node& n) { return n.domain.empty() || n.domain == "ai.onnx"; }

}  // namespace

bool IsChainableElementwise(const Node& n) {
  if (!IsDefaultDomain(n) || n.outputs.size() != 1 || n.outputs[0].empty()) return false;
  static const std::unordered_set<std::string> kBinary = {"Add", "Sub", "Mul", "Div"};
  static const std::unordered_set<std::string> kUnary = {"Relu", "HardSigmoid", "HardSwish", "Exp", "Tanh", "Sigmoid", "Erf"};
  if (kBinary.count(n.op_type)) return n.inputs.size() == 2 && !n.inputs[0].empty() && !n.inputs[1].empty();
  if (kUnary.count(n.op_type)) return n.inputs.size() == 1 && !n.inputs[0].empty();
  return false;
}

int FuseElementwiseChains(Graph& g) {
  // Readers of every value: node inputs, subgraphs' outer references, graph outputs.
  std::unordered_map<std::string, int> readers;
  for (const Node& n : g.nodes) {
    for (const std::string& in : n.inputs) if (!in.empty()) ++readers[in];
    for (const auto& [name, a] : n.attributes) {
      if (a.g) for (const auto& r : a.g->outer_refs) ++readers[r];
      for (const auto& sg : a.graphs) for (const auto& r : sg->outer_refs) ++readers[r];
    }
  }
  for (const auto& o : g.outputs) readers[o.name] += 2;
  // The single reader node of each value read once.
  std::unordered_map<std::string, size_t> reader_of;
  for (size_t i = 0; i < g.nodes.size(); ++i)
    for (const std::string& in : g.nodes[i].inputs) if (!in.empty() && readers[in] == 1) reader_of[in] = i;
  std::vector<bool> taken(g.nodes.size(), false), drop(g.nodes.size(), false);
  std::vector<std::pair<size_t, Node>> fused_at;  // index of the chain's last node -> fused node
  int fused = 0;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    if (taken[i] || !IsChainableElementwise(g.nodes[i])) continue;
    // Extend from node i while the value flows into exactly one chainable node that
    // takes it once.
    std::vector<size_t> chain{i};
    for (;;) {
      const std::string& v = g.nodes[chain.back()].outputs[0];
      auto it = reader_of.find(v);
      if (it == reader_of.end() || taken[it->second] || it->second <= chain.back()) break;
      const Node& next = g.nodes[it->second];
      if (!IsChainableElementwise(next)) break;
      int uses = 0;
      for (const auto& in : next.inputs) uses += in == v;
      if (uses != 1) break;
      chain.push_back(it->second);
    }
    if (chain.size() < 2) continue;
    // The fused node: inputs are the chain's input (input 0 of the first node for a unary
    // first node; for a binary one, its input 0) and then every other operand in order;
    // the body holds the original nodes, reading the fused node's inputs by name.
    Node f;
    f.op_type = "ElementwiseChain";
    f.domain = kOneModelDomain;
    f.name = g.nodes[chain.front()].name + " (elementwise chain of " + std::to_string(chain.size()) + ")";
    auto body = std::make_shared<Graph>();
    body->name = f.name;
    std::unordered_set<std::string> inner;
    auto add_input = [&](const std::string& name) {
      for (const auto& in : f.inputs) if (in == name) return;
      f.inputs.push_back(name);
      ValueInfo vi;
      vi.name = name;
      body->inputs.push_back(vi);
    };
    for (size_t k : chain) {
      const Node& n = g.nodes[k];
      for (const auto& in : n.inputs) if (!inner.count(in)) add_input(in);
      inner.insert(n.outputs[0]);
      body->nodes.push_back(n);
    }
    const std::string out = g.nodes[chain.back()].outputs[0];
    ValueInfo vo;
    vo.name = out;
    body->outputs.push_back(vo);
    f.outputs = {out};
    Attribute a;
    a.name = "body";
    a.type = Attribute::Type::kGraph;
    a.g = body;
    f.attributes[a.name] = a;
    for (size_t k : chain) { taken[k] = true; drop[k] = true; }
    fused_at.push_back({chain.back(), std::move(f)});
    ++fused;
  }
  if (!fused) return 0;
  // The fused node takes the place of the chain's last node (its operands all exist
  // by then, the graph stays topologically sorted).
  std::unordered_map<size_t, size_t> at;
  for (size_t j = 0; j < fused_at.size(); ++j) at[fused_at[j].first] = j;
  std::vector<Node> kept;
  kept.reserve(g.nodes.size());
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    auto it = at.find(i);
    if (it != at.end()) kept.push_back(std::move(fused_at[it->second].second));
    else if (!drop[i]) kept.push_back(std::move(g.nodes[i]));
  }
  g.nodes = std::move(kept);
  return fused;
}

}  // namespace onemodel
