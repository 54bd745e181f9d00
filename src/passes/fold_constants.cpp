// Constant folding (exact-contract section 7: constant folding done with the reference
// kernels is exact): a node whose inputs are all constants runs once, when the session
// is prepared, and its outputs become initializers of the run graph.
#include <exception>
#include <set>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/limits.h"
#include "passes/passes.h"
#include "ops/op_context.h"
#include "core/value.h"

namespace onemodel::impl {

namespace {

bool IsRandom(const Node& n) {
  static const char* kRandom[] = {"RandomUniform",    "RandomNormal", "RandomUniformLike",
                                  "RandomNormalLike", "Bernoulli",    "Multinomial"};
  if (!n.domain.empty()) return false;
  for (const char* r : kRandom)
    if (n.op_type == r) return true;
  return false;
}

}  // namespace

int FoldConstants(Graph& g, const std::map<std::string, int64_t>& opsets) {
  // Constants: initializers a feed cannot replace (those that are not also graph inputs),
  // then the outputs of the nodes folded so far.
  std::set<std::string> overridable, outputs, constant;
  for (const auto& in : g.inputs) overridable.insert(in.name);
  for (const auto& o : g.outputs) outputs.insert(o.name);
  for (const auto& [name, t] : g.initializers)
    if (!overridable.count(name)) constant.insert(name);
  std::set<std::string> made;  // initializers this pass created
  std::vector<bool> drop(g.nodes.size(), false);
  int folded = 0;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    if (n.op_type != "Constant" && n.inputs.empty()) continue;  // sources other than Constant
    if (IsRandom(n)) continue;
    bool ok = true;
    for (const auto& name : n.inputs) ok &= name.empty() || constant.count(name) > 0;
    for (const auto& name : n.outputs) ok &= !outputs.count(name);  // graph outputs keep their node
    for (const auto& [k, a] : n.attributes) ok &= a.g == nullptr && a.graphs.empty();
    if (!ok) continue;
    const OpFn fn = FindRefOp(n.domain, n.op_type);
    if (!fn) continue;  // model-local functions and unknown operators: left to run time
    auto it = opsets.find(n.domain);
    OpContext ctx(n, it == opsets.end() ? 1 : it->second);
    std::vector<Value> vals;
    vals.reserve(n.inputs.size());
    size_t in_bytes = 0;
    for (const auto& name : n.inputs) {
      if (name.empty()) {
        vals.emplace_back();
        continue;
      }
      const Tensor& t = g.initializers.at(name);
      in_bytes += t.nbytes();
      vals.push_back(Value::FromTensor(t));
    }
    for (size_t k = 0; k < n.inputs.size(); ++k) ctx.inputs.push_back(n.inputs[k].empty() ? nullptr : &vals[k]);
    try {
      // The reference kernel, one thread: the oracle's own computation, for at most
      // kFoldTimeLimitMs (its long loops poll the control, as a run's do).
      const RunControl control = BoundedRunControl(ThreadRunControl(), kFoldTimeLimitMs);
      RunControlScope scope(&control);
      fn(ctx);
    } catch (const std::exception&) {
      continue;  // left to run time, which reports the error (or stops at its limits) as before
    }
    // Every wanted output must be a tensor, and the results must not be much larger than
    // the inputs (a folded ConstantOfShape or Expand would hold memory for the session's
    // life that a run frees after use): at most four times the inputs (int8 weights
    // dequantized to float) plus 1 MiB.
    size_t out_bytes = 0;
    for (size_t k = 0; k < n.outputs.size(); ++k) {
      if (n.outputs[k].empty()) continue;
      ok &= k < ctx.outputs.size() && ctx.outputs[k].is_tensor();
      if (ok) out_bytes += ctx.outputs[k].tensor.nbytes();
    }
    if (!ok || out_bytes > 4 * in_bytes + (size_t(1) << 20)) continue;
    for (size_t k = 0; k < n.outputs.size(); ++k) {
      if (n.outputs[k].empty()) continue;
      g.initializers[n.outputs[k]] = ctx.outputs[k].tensor;
      constant.insert(n.outputs[k]);
      made.insert(n.outputs[k]);
    }
    drop[i] = true;
    ++folded;
  }
  if (folded == 0) return 0;
  std::vector<Node> kept;
  kept.reserve(g.nodes.size() - size_t(folded));
  for (size_t i = 0; i < g.nodes.size(); ++i)
    if (!drop[i]) kept.push_back(std::move(g.nodes[i]));
  g.nodes = std::move(kept);
  // The folded intermediates nothing reads any more (a weight's int8 form once its
  // dequantized form is kept) are released.
  const auto readers = CountReaders(g);
  for (const auto& name : made) {
    auto r = readers.find(name);
    if (r == readers.end() || r->second == 0) g.initializers.erase(name);
  }
  return folded;
}

}  // namespace onemodel::impl
