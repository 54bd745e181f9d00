// Fast-mode graph passes (passes.h, docs/graph-passes.md "Fast passes").
#include <algorithm>
#include <cmath>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "passes/passes.h"

namespace onemodel::impl {

int MarkConvInputGrids(Graph& g) {
  const std::unordered_map<std::string, size_t> producer = ProducerIndex(g);
  std::set<std::string> fed;  // initializers a feed can replace are not constants
  for (const ValueInfo& in : g.inputs) fed.insert(in.name);
  int marked = 0;
  for (Node& conv : g.nodes) {
    if (conv.op_type != "Conv" || !(conv.domain.empty() || conv.domain == "ai.onnx") || conv.inputs.size() < 2 ||
        conv.outputs.size() != 1 || conv.fusion.in_grid)
      continue;
    auto it = producer.find(conv.inputs[0]);
    if (it == producer.end()) continue;
    const Node& src = g.nodes[it->second];
    QdqParams q;
    bool found = false;
    if (src.op_type == "Conv" && (src.domain.empty() || src.domain == "ai.onnx")) {
      found = src.fusion.qdq;
      q = src.fusion.qdq_params;
    } else if (src.op_type == "QuantizeDequantize" && src.domain == kOneModelDomain && src.outputs.size() == 1) {
      const Attribute* b = src.attr("body");
      if (!b || !b->g || b->g->nodes.empty() || b->g->nodes[0].inputs.empty()) continue;
      const std::string& x = b->g->nodes[0].inputs[0];
      auto constant = [&](const std::string& name) -> const Tensor* {
        if (name == x || fed.count(name)) return nullptr;
        auto t = g.initializers.find(name);
        return t == g.initializers.end() ? nullptr : &t->second;
      };
      found = QdqFastParams(*b->g, constant, false, &q);
    }
    // Re-quantising a value of the grid (x / scale, rounded) gives back its q exactly
    // only for a positive finite scale.
    if (!found || !(q.dq_scale > 0.0f) || !std::isfinite(q.dq_scale)) continue;
    conv.fusion.in_grid = true;
    conv.fusion.grid = QuantGrid{q.dq_scale, q.dq_zp, q.lo, q.hi};
    ++marked;
  }
  return marked;
}

const std::vector<std::string>& FastPassNames() {
  static const std::vector<std::string> names = {"conv-input-grid"};
  return names;
}

int RunFastPasses(Graph& g, const std::vector<std::string>& disabled) {
  auto on = [&](const char* name) { return std::find(disabled.begin(), disabled.end(), name) == disabled.end(); };
  int n = 0;
  if (on("conv-input-grid")) n += MarkConvInputGrids(g);
  return n;
}

}  // namespace onemodel::impl
