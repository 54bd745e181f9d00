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
  // An initializer no feed replaces, or null.
  auto constant = [&](const std::string& name) -> const Tensor* {
    if (name.empty() || fed.count(name)) return nullptr;
    auto t = g.initializers.find(name);
    return t == g.initializers.end() ? nullptr : &t->second;
  };
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
      found = QdqFastParams(
          *b->g, [&](const std::string& name) { return name == x ? nullptr : constant(name); }, false, &q);
    } else if (src.op_type == "DequantizeLinear" && (src.domain.empty() || src.domain == "ai.onnx") &&
               src.inputs.size() == 3 && src.outputs.size() == 1) {
      // Any 8-bit tensor dequantised by single constant parameters: float(q - zp) * scale
      // with q in the zero point's type's range.
      const Attribute* od = src.attr("output_dtype");
      const Tensor* sc = constant(src.inputs[1]);
      const Tensor* zp = constant(src.inputs[2]);
      if ((od && od->i != 0 && od->i != 1) || !sc || !zp || sc->dtype() != DType::kFloat || sc->numel() != 1 ||
          zp->numel() != 1 || (zp->dtype() != DType::kUInt8 && zp->dtype() != DType::kInt8))
        continue;
      const bool s8 = zp->dtype() == DType::kInt8;
      q.dq_scale = sc->data<float>()[0];
      q.dq_zp = s8 ? int32_t(zp->data<int8_t>()[0]) : int32_t(zp->data<uint8_t>()[0]);
      q.lo = s8 ? -128 : 0;
      q.hi = s8 ? 127 : 255;
      found = true;
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
