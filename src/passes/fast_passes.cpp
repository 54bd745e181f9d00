// Fast-mode graph passes (passes.h, docs/graph-passes.md "Fast passes").
#include <algorithm>
#include <cmath>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "passes/passes.h"

namespace onemodel::impl {
namespace {

// A float initializer no feed replaces, or null.
const Tensor* ConstantFloat(const Graph& g, const std::set<std::string>& fed, const std::string& name) {
  if (name.empty() || fed.count(name)) return nullptr;
  auto t = g.initializers.find(name);
  return t == g.initializers.end() || t->second.dtype() != DType::kFloat ? nullptr : &t->second;
}

// A value name that no initializer, graph input or node output of g has yet.
std::string FreshName(const Graph& g, const std::set<std::string>& taken, const std::string& base) {
  std::string name = base;
  for (int i = 1; g.initializers.count(name) || taken.count(name); ++i) name = base + "_" + std::to_string(i);
  return name;
}

// BatchNormalization's float attribute `name`, or `fallback` when absent.
float AttrF(const Node& n, const char* name, float fallback) {
  const Attribute* a = n.attr(name);
  return a ? a->f : fallback;
}

}  // namespace

int FoldConvBatchNorm(Graph& g) {
  const std::unordered_map<std::string, int> readers = CountReaders(g);
  const std::unordered_map<std::string, size_t> producer = ProducerIndex(g);
  std::set<std::string> fed, taken;
  for (const ValueInfo& in : g.inputs) fed.insert(in.name), taken.insert(in.name);
  for (const Node& n : g.nodes) taken.insert(n.outputs.begin(), n.outputs.end());
  std::vector<bool> drop(g.nodes.size(), false);
  std::set<std::string> replaced;  // initializers the folded nodes read before
  int folded = 0;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& bn = g.nodes[i];
    if (bn.op_type != "BatchNormalization" || !bn.DefaultDomain() || bn.inputs.size() != 5 || bn.outputs.empty() ||
        bn.outputs[0].empty())
      continue;
    bool extra_outputs = false;  // training mode's running statistics
    for (size_t k = 1; k < bn.outputs.size(); ++k) extra_outputs = extra_outputs || !bn.outputs[k].empty();
    const Attribute* training = bn.attr("training_mode");
    const Attribute* spatial = bn.attr("spatial");  // opsets before 9: 0 is per element
    if (extra_outputs || (training && training->i != 0) || (spatial && spatial->i == 0)) continue;
    auto p = producer.find(bn.inputs[0]);
    if (p == producer.end()) continue;
    Node& conv = g.nodes[p->second];
    auto r = readers.find(bn.inputs[0]);
    if (conv.op_type != "Conv" || !conv.DefaultDomain() || conv.outputs.size() != 1 || r == readers.end() ||
        r->second != 1 || conv.inputs.size() < 2)
      continue;
    const NodeFusion& fu = conv.fusion;
    if (fu.act != Activation::kNone || fu.qdq || fu.in_grid || fu.residual) continue;
    const Tensor* w = ConstantFloat(g, fed, conv.inputs[1]);
    const bool has_bias = conv.inputs.size() > 2 && !conv.inputs[2].empty();
    const Tensor* b = has_bias ? ConstantFloat(g, fed, conv.inputs[2]) : nullptr;
    if (!w || w->shape().size() < 3 || w->shape()[0] <= 0 || (has_bias && !b)) continue;
    const int64_t M = w->shape()[0], per = w->numel() / M;
    const Tensor* prm[4];  // scale, B, mean, var
    bool ok = !b || b->numel() == M;
    for (int k = 0; k < 4 && ok; ++k) {
      prm[k] = ConstantFloat(g, fed, bn.inputs[size_t(k) + 1]);
      ok = prm[k] && prm[k]->numel() == M && prm[k]->shape().size() == 1;
    }
    if (!ok) continue;
    // In binary64: s = scale / sqrt(var + epsilon); W' = W s and b' = (b - mean) s + B,
    // each rounded once to binary32. Anything not finite leaves the nodes as they are.
    const double eps = double(AttrF(bn, "epsilon", 1e-5f));
    Tensor w2(DType::kFloat, w->shape(), "folded Conv weights");
    Tensor b2(DType::kFloat, Shape{M}, "folded Conv bias");
    const float* wp = w->data<float>();
    float* w2p = w2.mutable_data<float>();
    float* b2p = b2.mutable_data<float>();
    for (int64_t m = 0; m < M && ok; ++m) {
      const double scale = prm[0]->data<float>()[m], shift = prm[1]->data<float>()[m];
      const double mean = prm[2]->data<float>()[m], var = prm[3]->data<float>()[m];
      const double s = scale / std::sqrt(var + eps);
      const double bias = b ? double(b->data<float>()[m]) : 0.0;
      b2p[m] = float((bias - mean) * s + shift);
      ok = std::isfinite(s) && std::isfinite(b2p[m]);
      for (int64_t k = 0; k < per && ok; ++k) {
        w2p[m * per + k] = float(double(wp[m * per + k]) * s);
        ok = std::isfinite(w2p[m * per + k]);
      }
    }
    if (!ok) continue;
    const std::string base = conv.name.empty() ? bn.outputs[0] : conv.name;
    const std::string wname = FreshName(g, taken, base + "/bn_folded_W");
    taken.insert(wname);
    const std::string bname = FreshName(g, taken, base + "/bn_folded_B");
    taken.insert(bname);
    replaced.insert(conv.inputs[1]);
    if (has_bias) replaced.insert(conv.inputs[2]);
    for (size_t k = 1; k < 5; ++k) replaced.insert(bn.inputs[k]);
    g.initializers.emplace(wname, std::move(w2));
    g.initializers.emplace(bname, std::move(b2));
    conv.inputs.resize(3);
    conv.inputs[1] = wname;
    conv.inputs[2] = bname;
    conv.outputs[0] = bn.outputs[0];
    drop[i] = true;
    ++folded;
  }
  if (!folded) return 0;
  EraseNodes(g, drop);
  // The weights and statistics nothing reads any more go (the model's memory, not twice).
  const std::unordered_map<std::string, int> now = CountReaders(g);
  for (const std::string& name : replaced)
    if (!fed.count(name) && !now.count(name)) g.initializers.erase(name);
  return folded;
}

int DivToReciprocalMul(Graph& g) {
  std::set<std::string> fed, taken;
  for (const ValueInfo& in : g.inputs) fed.insert(in.name), taken.insert(in.name);
  for (const Node& n : g.nodes) taken.insert(n.outputs.begin(), n.outputs.end());
  std::unordered_map<std::string, std::string> reciprocal;  // divisor -> its reciprocal's name
  int changed = 0;
  for (Node& n : g.nodes) {
    if (n.op_type != "Div" || !n.DefaultDomain() || n.inputs.size() != 2 || n.outputs.size() != 1) continue;
    const Tensor* c = ConstantFloat(g, fed, n.inputs[1]);
    if (!c || c->numel() != 1) continue;
    const float r = 1.0f / c->data<float>()[0];
    if (!std::isnormal(r)) continue;  // c zero, infinite, NaN, or too large for a normal reciprocal
    auto it = reciprocal.find(n.inputs[1]);
    if (it == reciprocal.end()) {
      const std::string name = FreshName(g, taken, n.inputs[1] + "_reciprocal");
      Tensor t(DType::kFloat, c->shape(), "reciprocal of a divisor");
      t.mutable_data<float>()[0] = r;
      g.initializers.emplace(name, std::move(t));
      taken.insert(name);
      it = reciprocal.emplace(n.inputs[1], name).first;
    }
    n.op_type = "Mul";
    n.inputs[1] = it->second;
    ++changed;
  }
  // Divisors nothing reads any more leave the session's graph.
  const std::unordered_map<std::string, int> now = CountReaders(g);
  for (const auto& [divisor, name] : reciprocal)
    if (!fed.count(divisor) && !now.count(divisor)) g.initializers.erase(divisor);
  return changed;
}

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
  static const std::vector<std::string> names = {"conv-batchnorm", "div-reciprocal", "conv-input-grid"};
  return names;
}

int RunFastGraphPasses(Graph& g, const std::map<std::string, int64_t>& opsets,
                       const std::vector<std::string>& disabled) {
  auto on = [&](const char* name) { return std::find(disabled.begin(), disabled.end(), name) == disabled.end(); };
  int n = 0;
  const bool bn = on("conv-batchnorm"), div = on("div-reciprocal");
  // Constants first: a model's statistics and divisors often come from Constant nodes.
  if ((bn || div) && on("constant-folding")) n += FoldConstants(g, opsets);
  if (bn) n += FoldConvBatchNorm(g);
  if (div) n += DivToReciprocalMul(g);
  return n;
}

int RunFastPasses(Graph& g, const std::vector<std::string>& disabled) {
  auto on = [&](const char* name) { return std::find(disabled.begin(), disabled.end(), name) == disabled.end(); };
  int n = 0;
  if (on("conv-input-grid")) n += MarkConvInputGrids(g);
  return n;
}

}  // namespace onemodel::impl
