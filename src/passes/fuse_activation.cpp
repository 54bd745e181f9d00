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

int FuseConvResidual(Graph& g) {
  std::unordered_map<std::string, int> readers = CountReaders(g);
  std::unordered_map<std::string, size_t> producer = ProducerIndex(g);
  std::unordered_map<std::string, size_t> reader;  // the reader of a value read once
  for (size_t i = 0; i < g.nodes.size(); ++i)
    for (const std::string& in : g.nodes[i].inputs)
      if (!in.empty()) reader[in] = i;
  auto plain = [](const Node& n, const char* op) {
    return n.op_type == op && n.DefaultDomain() && n.outputs.size() == 1 && !n.outputs[0].empty();
  };
  std::vector<bool> drop(g.nodes.size(), false);
  std::vector<std::pair<size_t, Node>> fused_at;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& add = g.nodes[i];
    if (drop[i] || !plain(add, "Add") || add.inputs.size() != 2 || add.inputs[0].empty() || add.inputs[1].empty() ||
        add.inputs[0] == add.inputs[1])
      continue;
    // The Conv operand: a Conv's only output, read by this Add alone (not a graph output).
    size_t ci = g.nodes.size(), side = 0;
    for (size_t k = 0; k < 2 && ci == g.nodes.size(); ++k) {
      auto it = producer.find(add.inputs[k]);
      if (it == producer.end() || readers[add.inputs[k]] != 1 || drop[it->second]) continue;
      const Node& c = g.nodes[it->second];
      if (plain(c, "Conv") && c.inputs.size() >= 2 && c.inputs.size() <= 3 && !c.fusion.qdq && !c.fusion.residual &&
          !c.fusion.in_grid) {
        ci = it->second;
        side = k;
      }
    }
    if (ci == g.nodes.size()) continue;
    // A Relu reading only the sum joins.
    const std::string& sum = add.outputs[0];
    size_t relu = g.nodes.size();
    if (readers[sum] == 1) {
      auto it = reader.find(sum);
      if (it != reader.end() && plain(g.nodes[it->second], "Relu") && g.nodes[it->second].inputs.size() == 1)
        relu = it->second;
    }
    Node conv = g.nodes[ci];
    auto body = std::make_shared<Graph>();
    body->name = add.name + " (residual of " + conv.name + ")";
    for (const std::string& in : {add.inputs[side], add.inputs[1 - side]}) {
      ValueInfo vi;
      vi.name = in;
      body->inputs.push_back(vi);
    }
    body->nodes.push_back(add);
    if (relu < g.nodes.size()) body->nodes.push_back(g.nodes[relu]);
    ValueInfo vo;
    vo.name = relu < g.nodes.size() ? g.nodes[relu].outputs[0] : sum;
    body->outputs.push_back(vo);
    conv.inputs.resize(3);  // "" where there is no bias
    conv.inputs.push_back(add.inputs[1 - side]);
    conv.outputs[0] = vo.name;
    conv.fusion.residual = true;
    conv.fusion.z_first = side == 1;
    conv.fusion.post_act = relu < g.nodes.size() ? Activation::kRelu : Activation::kNone;
    conv.fusion.residual_body = std::move(body);
    // The fused node runs where the Add ran (Z may be made after the Conv): nothing between
    // reads the Conv's result, and the Relu's place is later still.
    drop[ci] = true;
    if (relu < g.nodes.size()) drop[relu] = true;
    drop[i] = true;
    fused_at.push_back({i, std::move(conv)});
  }
  if (!fused_at.empty()) PlaceFused(g, drop, fused_at);
  return int(fused_at.size());
}

const std::vector<std::string>& ExactPassNames() {
  static const std::vector<std::string> names = {"constant-folding", "quantize-dequantize",      "dynamic-quant-matmul",
                                                 "conv-activation",  "conv-quantize-dequantize", "conv-residual",
                                                 "attention",        "elementwise-chain"};
  return names;
}

int RunExactPasses(Graph& g, const std::map<std::string, int64_t>& opsets, const std::vector<std::string>& disabled) {
  // `disabled` turns passes off (SessionOptions::disabled_passes: for measuring what each
  // one buys; the bits are the same either way).
  auto on = [&](const char* name) { return std::find(disabled.begin(), disabled.end(), name) == disabled.end(); };
  // Constants first (weights dequantized once), then quantise-dequantise pairs, then
  // activations and those pairs into convolutions (their epilogue), residual Adds into
  // convolutions (after the quantisations: a Conv with one keeps its Add), attention (before
  // the chains would take its scale and mask), then what remains in chains.
  int n = 0;
  if (on("constant-folding")) n += FoldConstants(g, opsets);
  if (on("quantize-dequantize")) n += FuseQuantizeDequantize(g);
  if (on("dynamic-quant-matmul")) n += FuseDynamicQuantMatMul(g);
  if (on("conv-activation")) n += FuseConvActivation(g);
  if (on("conv-quantize-dequantize")) n += FuseConvQuantizeDequantize(g);
  if (on("conv-residual")) n += FuseConvResidual(g);
  if (on("attention")) n += FuseAttention(g, opsets);
  if (on("elementwise-chain")) n += FuseElementwiseChains(g);
  return n;
}

}  // namespace onemodel::impl
