// OpContext helpers and the reference-kernel registry (generated from ops.inc).
#include "ops/op_context.h"

#include "ref/reduce.h"

#include <mutex>
#include <unordered_map>

#include "ops/ops.h"

namespace onemodel::impl {

void RunSubgraphInto(SubgraphRunner* runner, const Graph& g, const std::vector<const Value*>& inputs,
                     const Scope& scope, std::vector<Value>* out) {
  if (!runner) throw Error(ErrorCode::kInternal, "subgraph '" + g.name + "' has no runner here");
  runner->RunInto(g, inputs, scope, out);
}

std::vector<Value> RunSubgraph(SubgraphRunner* runner, const Graph& g, const std::vector<Value>& inputs,
                               const Scope& scope) {
  std::vector<const Value*> ptrs;
  ptrs.reserve(inputs.size());
  for (const Value& v : inputs) ptrs.push_back(&v);
  std::vector<Value> out;
  RunSubgraphInto(runner, g, ptrs, scope, &out);
  return out;
}

const Tensor& DerivedCache::Get(const Node* node, const std::string& key, FunctionRef<Tensor()> make) {
  std::lock_guard<std::mutex> lock(mu_);
  auto& slot = map_[{node, key}];
  if (!slot) {
    // Outside the run's memory plan: the derived tensor outlives the run, and a plan
    // that recorded it would not match the next run's allocations (made once, it is
    // absent from them), which then had to plan again before one could follow it.
    struct NoPlan {
      TensorAllocator* saved = SetThreadTensorAllocator(nullptr);
      ~NoPlan() { SetThreadTensorAllocator(saved); }
    } no_plan;
    slot = std::make_unique<Tensor>(make());
  }
  return *slot;
}

size_t DerivedCache::size() {
  std::lock_guard<std::mutex> lock(mu_);
  return map_.size();
}

std::string_view OpContext::ForcedAlgorithm() const {
  if (!algorithms) return {};
  auto it = algorithms->find(node.QualifiedType());
  return it == algorithms->end() ? std::string_view() : std::string_view(it->second);
}

bool OpContext::IsConstInput(size_t i) const {
  if (!derived || !graph || !has_input(i) || !inputs[i]->is_tensor()) return false;
  // Constant: this graph's initializer, not replaced by a feed (the same storage). Checked
  // when a kernel asks, not for every input of every node.
  auto init = graph->initializers.find(node.inputs[i]);
  const Tensor& t = inputs[i]->tensor;
  return init != graph->initializers.end() && t.raw() == init->second.raw() && t.shape() == init->second.shape();
}

const Tensor* OpContext::ConstDerived(size_t i, const std::string& key, FunctionRef<Tensor(const Tensor&)> make) const {
  if (!IsConstInput(i)) return nullptr;
  const Tensor& t = inputs[i]->tensor;
  return &derived->Get(&node, key, [&] { return make(t); });
}

Error OpContext::Fail(ErrorCode code, const std::string& msg) const {
  return Error(code, node.Describe() + ": " + msg);
}

void OpContext::RequireRank(const Tensor& t, int64_t min_rank, const char* name) const {
  if (t.rank() < min_rank)
    throw Fail(ErrorCode::kShapeMismatch, std::string(name) + " must have rank >= " + std::to_string(min_rank));
}

void OpContext::RequireInputType(const Tensor& t, DType want, const char* name) const {
  if (t.dtype() != want)
    throw Fail(ErrorCode::kTypeMismatch, std::string(name) + " must have the input's element type");
}

const Tensor& OpContext::in(size_t i) const {
  if (!has_input(i)) throw Fail(ErrorCode::kMissingInput, "input " + std::to_string(i) + " is required");
  if (!inputs[i]->is_tensor()) throw Fail(ErrorCode::kTypeMismatch, "input " + std::to_string(i) + " is not a tensor");
  return inputs[i]->tensor;
}

Tensor OpContext::NewTensor(DType dtype, const Shape& shape, bool zero, const std::string& label) const {
  // The tensor's errors name it by `label`; the node's description (several heap
  // allocations) is added only when one is thrown, not for every output of every run.
  try {
    return zero ? Tensor(dtype, shape, label) : Tensor::Uninitialized(dtype, shape, label);
  } catch (const Error& e) {
    throw Error(e.code(), node.Describe() + " " + e.message());
  }
}

Tensor& OpContext::out(size_t i, DType dtype, const Shape& shape) {
  if (i >= outputs.size())
    throw Fail(ErrorCode::kInvalidModel, "the node names " + std::to_string(outputs.size()) +
                                             " outputs; the operator gives more (output " + std::to_string(i) + ")");
  outputs[i] = Value::FromTensor(NewTensor(dtype, shape, true, "output " + std::to_string(i)));
  return outputs[i].tensor;
}

Tensor& OpContext::out_uninit(size_t i, DType dtype, const Shape& shape) {
  if (i >= outputs.size())
    throw Fail(ErrorCode::kInvalidModel, "the node names " + std::to_string(outputs.size()) +
                                             " outputs; the operator gives more (output " + std::to_string(i) + ")");
  outputs[i] = Value::FromTensor(NewTensor(dtype, shape, false, "output " + std::to_string(i)));
  return outputs[i].tensor;
}

void OpContext::set_out(size_t i, Tensor t) {
  if (i >= outputs.size())
    throw Fail(ErrorCode::kInvalidModel, "the node names " + std::to_string(outputs.size()) +
                                             " outputs; the operator gives more (output " + std::to_string(i) + ")");
  outputs[i] = Value::FromTensor(std::move(t));
}

int64_t OpContext::attr_i(std::string_view name, int64_t dflt) const {
  const Attribute* a = node.attr(name);
  if (!a) return dflt;
  if (a->type != Attribute::Type::kInt)
    throw Fail(ErrorCode::kInvalidModel, "attribute '" + std::string(name) + "' must be an int");
  return a->i;
}
float OpContext::attr_f(std::string_view name, float dflt) const {
  const Attribute* a = node.attr(name);
  if (!a) return dflt;
  if (a->type == Attribute::Type::kInt) return float(a->i);
  if (a->type != Attribute::Type::kFloat)
    throw Fail(ErrorCode::kInvalidModel, "attribute '" + std::string(name) + "' must be a float");
  return a->f;
}
std::string OpContext::attr_s(std::string_view name, const std::string& dflt) const {
  const Attribute* a = node.attr(name);
  if (!a) return dflt;
  if (a->type != Attribute::Type::kString)
    throw Fail(ErrorCode::kInvalidModel, "attribute '" + std::string(name) + "' must be a string");
  return a->s;
}
std::vector<int64_t> OpContext::attr_ints(std::string_view name, const std::vector<int64_t>& dflt) const {
  const Attribute* a = node.attr(name);
  if (!a) return dflt;
  if (a->type != Attribute::Type::kInts)
    throw Fail(ErrorCode::kInvalidModel, "attribute '" + std::string(name) + "' must be ints");
  return a->ints;
}
Shape OpContext::attr_dims(std::string_view name, const Shape& dflt) const {
  const Attribute* a = node.attr(name);
  if (!a) return dflt;
  if (a->type != Attribute::Type::kInts)
    throw Fail(ErrorCode::kInvalidModel, "attribute '" + std::string(name) + "' must be ints");
  return Shape(a->ints.begin(), a->ints.end());
}
std::vector<float> OpContext::attr_floats(std::string_view name, const std::vector<float>& dflt) const {
  const Attribute* a = node.attr(name);
  if (!a) return dflt;
  if (a->type != Attribute::Type::kFloats)
    throw Fail(ErrorCode::kInvalidModel, "attribute '" + std::string(name) + "' must be floats");
  return a->floats;
}
const Attribute& OpContext::attr_required(std::string_view name) const {
  const Attribute* a = node.attr(name);
  if (!a) throw Fail(ErrorCode::kInvalidModel, "attribute '" + std::string(name) + "' is required");
  return *a;
}

namespace {
// Operators added by RegisterOp, by "domain:op_type".
struct ExtraOpMap {
  std::mutex mu;
  std::unordered_map<std::string, OpFn> map;
};
ExtraOpMap& ExtraOps() {
  static ExtraOpMap m;
  return m;
}
struct Entry {
  const char* domain;
  const char* op;
  OpFn fn;
};
const Entry kOps[] = {
#define ONEMODEL_OP(domain, op, fn) {domain, op, &ops::fn},
#include "ops/ops.inc"
#undef ONEMODEL_OP
};
}  // namespace

OpFn FindRefOp(const std::string& domain, const std::string& op_type) {
  // Built once: the executor looks up every node of every run.
  static const std::unordered_map<std::string, OpFn> kByName = [] {
    std::unordered_map<std::string, OpFn> m;
    for (const Entry& e : kOps) m[std::string(e.domain) + ":" + e.op] = e.fn;
    return m;
  }();
  const std::string key = domain + ":" + op_type;
  auto it = kByName.find(key);
  if (it != kByName.end()) return it->second;
  std::lock_guard<std::mutex> lock(ExtraOps().mu);
  auto e = ExtraOps().map.find(key);
  return e == ExtraOps().map.end() ? nullptr : e->second;
}

bool RegisterOp(const std::string& domain, const std::string& op_type, OpFn fn) {
  if (FindRefOp(domain, op_type)) return false;
  std::lock_guard<std::mutex> lock(ExtraOps().mu);
  return ExtraOps().map.emplace(domain + ":" + op_type, fn).second;
}

Error UnsupportedOpError(const std::string& origin, const Node& node) {
  std::string msg = origin + ": operator " + node.QualifiedType() + " (" + node.Describe() + ") is not supported";
  if (node.domain.empty() && node.op_type == "ImageDecoder") {
    msg +=
        ": image codecs are out of scope (JPEG, WebP and JPEG 2000 decoding is defined only to a tolerance, so "
        "exact mode cannot own its bits; decode images before the model)";
  } else if (node.domain == "ai.onnx.preview.training") {
    msg += ": training operators are out of scope for an inference runtime";
  }
  return Error(ErrorCode::kUnsupportedOp, msg);
}

std::vector<std::string> ListRefOps() {
  std::vector<std::string> v;
  for (const Entry& e : kOps) v.push_back(std::string(e.domain).empty() ? e.op : std::string(e.domain) + "." + e.op);
  return v;
}

}  // namespace onemodel::impl
