// Exact-mode fusion of an activation into its producer (see passes.h).
#include <algorithm>
#include <cstdlib>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "passes/passes.h"

namespace onemodel::impl {

std::unordered_map<std::string, int> CountReaders(const Graph& g) {
  std::unordered_map<std::string, int> readers;
  for (const Node& n : g.nodes) {
    for (const std::string& in : n.inputs)
      if (!in.empty()) ++readers[in];
    for (const auto& [name, a] : n.attributes) {
      if (a.g)
        for (const auto& r : a.g->outer_refs) ++readers[r];
      for (const auto& sg : a.graphs)
        for (const auto& r : sg->outer_refs) ++readers[r];
    }
  }
  for (const auto& o : g.outputs) readers[o.name] += 2;
  return readers;
}

std::unordered_map<std::string, size_t> ProducerIndex(const Graph& g) {
  std::unordered_map<std::string, size_t> producer;
  for (size_t i = 0; i < g.nodes.size(); ++i)
    for (const std::string& out : g.nodes[i].outputs)
      if (!out.empty()) producer[out] = i;
  return producer;
}

void EraseNodes(Graph& g, const std::vector<bool>& drop) {
  std::vector<Node> kept;
  kept.reserve(g.nodes.size());
  for (size_t i = 0; i < g.nodes.size(); ++i)
    if (!drop[i]) kept.push_back(std::move(g.nodes[i]));
  g.nodes = std::move(kept);
}

void PlaceFused(Graph& g, const std::vector<bool>& drop, std::vector<std::pair<size_t, Node>>& fused_at) {
  std::unordered_map<size_t, size_t> at;
  for (size_t j = 0; j < fused_at.size(); ++j) at[fused_at[j].first] = j;
  std::vector<Node> kept;
  kept.reserve(g.nodes.size());
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    auto it = at.find(i);
    if (it != at.end())
      kept.push_back(std::move(fused_at[it->second].second));
    else if (!drop[i])
      kept.push_back(std::move(g.nodes[i]));
  }
  g.nodes = std::move(kept);
}

Node FusedNode(const char* op_type, const std::string& name, const std::vector<const Node*>& nodes,
               const std::string& output) {
  Node f;
  f.op_type = op_type;
  f.domain = kOneModelDomain;
  f.name = name;
  auto body = std::make_shared<Graph>();
  body->name = name;
  std::unordered_set<std::string> inner;
  for (const Node* n : nodes) {
    for (const std::string& in : n->inputs) {
      if (in.empty() || inner.count(in) || std::find(f.inputs.begin(), f.inputs.end(), in) != f.inputs.end()) continue;
      f.inputs.push_back(in);
      ValueInfo vi;
      vi.name = in;
      body->inputs.push_back(vi);
    }
    for (const std::string& out : n->outputs)
      if (!out.empty()) inner.insert(out);
    body->nodes.push_back(*n);
  }
  ValueInfo vo;
  vo.name = output;
  body->outputs.push_back(vo);
  f.outputs = {output};
  Attribute a;
  a.name = "body";
  a.type = Attribute::Type::kGraph;
  a.g = body;
  f.attributes[a.name] = a;
  return f;
}

int FuseConvActivation(Graph& g) {
  std::unordered_map<std::string, int> readers = CountReaders(g);
  std::unordered_map<std::string, size_t> producer = ProducerIndex(g);
  std::vector<bool> drop(g.nodes.size(), false);
  int fused = 0;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& relu = g.nodes[i];
    if ((relu.op_type != "Relu" && relu.op_type != "HardSwish") || !(relu.domain.empty() || relu.domain == "ai.onnx") ||
        relu.inputs.size() != 1 || relu.outputs.size() != 1 || relu.outputs[0].empty()) {
      continue;
    }
    auto it = producer.find(relu.inputs[0]);
    if (it == producer.end() || readers[relu.inputs[0]] != 1) continue;
    Node& conv = g.nodes[it->second];
    if (conv.op_type != "Conv" || !(conv.domain.empty() || conv.domain == "ai.onnx") || conv.outputs.size() != 1 ||
        conv.fusion.act != Activation::kNone || conv.fusion.qdq) {
      continue;
    }
    conv.fusion.act = relu.op_type == "Relu" ? Activation::kRelu : Activation::kHardSwish;
    conv.outputs[0] = relu.outputs[0];
    producer[relu.outputs[0]] = it->second;
    drop[i] = true;
    ++fused;
  }
  if (fused) EraseNodes(g, drop);
  return fused;
}

const std::vector<std::string>& ExactPassNames() {
  static const std::vector<std::string> names = {"constant-folding", "quantize-dequantize",
                                                 "conv-activation",  "conv-quantize-dequantize",
                                                 "attention",        "elementwise-chain"};
  return names;
}

int RunExactPasses(Graph& g, const std::map<std::string, int64_t>& opsets, const std::vector<std::string>& disabled) {
  // `disabled` turns passes off (SessionOptions::disabled_passes: for measuring what each
  // one buys; the bits are the same either way).
  auto on = [&](const char* name) { return std::find(disabled.begin(), disabled.end(), name) == disabled.end(); };
  // Constants first (weights dequantized once), then quantise-dequantise pairs, then
  // activations and those pairs into convolutions (their epilogue), attention (before
  // the chains would take its scale and mask), then what remains in chains.
  int n = 0;
  if (on("constant-folding")) n += FoldConstants(g, opsets);
  if (on("quantize-dequantize")) n += FuseQuantizeDequantize(g);
  if (on("conv-activation")) n += FuseConvActivation(g);
  if (on("conv-quantize-dequantize")) n += FuseConvQuantizeDequantize(g);
  if (on("attention")) n += FuseAttention(g, opsets);
  if (on("elementwise-chain")) n += FuseElementwiseChains(g);
  return n;
}

}  // namespace onemodel::impl
