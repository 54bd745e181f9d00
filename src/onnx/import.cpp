// ONNX import (see import.h).
#include "onnx/import.h"

#include <algorithm>
#include <cstdlib>
#include <deque>
#include <set>
#include <unordered_map>

#include "core/error.h"
#include "core/io.h"
#include "onnx/onnx.pb.h"
#include "onnx/tensor_proto.h"

namespace onemodel::impl {

std::string Node::Describe() const {
  std::string s = domain.empty() ? op_type : domain + "." + op_type;
  if (!name.empty())
    s += " node '" + name + "'";
  else if (!outputs.empty())
    s += " node (output '" + outputs[0] + "')";
  return s;
}

namespace {

struct ImportContext {
  std::string origin;
  const ExternalSource* external = nullptr;
  std::shared_ptr<const void> owner;
  const Limits* limits = nullptr;
  int* depth = nullptr;      // subgraph nesting of the graph being imported
  int64_t* nodes = nullptr;  // nodes imported so far
};

TensorType ImportTensorType(int32_t elem, const onnx::TensorShapeProto* shape) {
  TensorType t;
  t.dtype = IsKnownDType(elem) ? DType(elem) : DType::kUndefined;
  if (shape) {
    t.has_shape = true;
    for (const auto& d : shape->dim()) {
      t.dims.push_back(d.has_dim_value() ? d.dim_value() : -1);
      t.dim_params.push_back(d.has_dim_param() ? d.dim_param() : "");
    }
  }
  return t;
}

ValueType ImportType(const onnx::TypeProto& tp) {
  ValueType v;
  if (tp.has_tensor_type()) {
    v.kind = ValueType::Kind::kTensor;
    v.tensor = ImportTensorType(tp.tensor_type().elem_type(),
                                tp.tensor_type().has_shape() ? &tp.tensor_type().shape() : nullptr);
  } else if (tp.has_sequence_type()) {
    v.kind = ValueType::Kind::kSequence;
    v.element = std::make_shared<ValueType>(ImportType(tp.sequence_type().elem_type()));
  } else if (tp.has_optional_type()) {
    v.kind = ValueType::Kind::kOptional;
    v.element = std::make_shared<ValueType>(ImportType(tp.optional_type().elem_type()));
  } else if (tp.has_map_type()) {
    v.kind = ValueType::Kind::kMap;
  } else if (tp.has_sparse_tensor_type()) {
    v.kind = ValueType::Kind::kSparseTensor;
  }
  return v;
}

std::shared_ptr<Graph> ImportGraph(const onnx::GraphProto& gp, const ImportContext& ctx, bool top);

Attribute ImportAttribute(const onnx::AttributeProto& ap, const ImportContext& ctx, const std::string& where) {
  Attribute a;
  a.name = ap.name();
  a.ref_attr_name = ap.ref_attr_name();
  const std::string what = where + " attribute '" + ap.name() + "'";
  switch (ap.type()) {
    case onnx::AttributeProto::FLOAT:
      a.type = Attribute::Type::kFloat;
      a.f = ap.f();
      break;
    case onnx::AttributeProto::INT:
      a.type = Attribute::Type::kInt;
      a.i = ap.i();
      break;
    case onnx::AttributeProto::STRING:
      a.type = Attribute::Type::kString;
      a.s = ap.s();
      break;
    case onnx::AttributeProto::TENSOR:
      a.type = Attribute::Type::kTensor;
      a.t = TensorFromProto(ap.t(), *ctx.external, ctx.owner, what);
      break;
    case onnx::AttributeProto::GRAPH:
      a.type = Attribute::Type::kGraph;
      a.g = ImportGraph(ap.g(), ctx, false);
      break;
    case onnx::AttributeProto::FLOATS:
      a.type = Attribute::Type::kFloats;
      a.floats.assign(ap.floats().begin(), ap.floats().end());
      break;
    case onnx::AttributeProto::INTS:
      a.type = Attribute::Type::kInts;
      a.ints.assign(ap.ints().begin(), ap.ints().end());
      break;
    case onnx::AttributeProto::STRINGS:
      a.type = Attribute::Type::kStrings;
      a.strings.assign(ap.strings().begin(), ap.strings().end());
      break;
    case onnx::AttributeProto::TENSORS:
      a.type = Attribute::Type::kTensors;
      for (int i = 0; i < ap.tensors_size(); ++i)
        a.tensors.push_back(TensorFromProto(ap.tensors(i), *ctx.external, ctx.owner, what));
      break;
    case onnx::AttributeProto::GRAPHS:
      a.type = Attribute::Type::kGraphs;
      for (const auto& g : ap.graphs()) a.graphs.push_back(ImportGraph(g, ctx, false));
      break;
    case onnx::AttributeProto::SPARSE_TENSOR: a.type = Attribute::Type::kSparseTensor; break;
    case onnx::AttributeProto::TYPE_PROTO: a.type = Attribute::Type::kTypeProto; break;
    default:
      if (!a.ref_attr_name.empty()) break;  // a function's reference to its caller's attribute
      throw Error(ErrorCode::kInvalidModel, what + " has no or an unknown type (" + std::to_string(ap.type()) + ")");
  }
  return a;
}

Node ImportNode(const onnx::NodeProto& np, const ImportContext& ctx) {
  if (ctx.limits->max_nodes > 0 && ++*ctx.nodes > ctx.limits->max_nodes) {
    throw Error(ErrorCode::kLimitExceeded, ctx.origin + ": the model has more than max_nodes (" +
                                               std::to_string(ctx.limits->max_nodes) + ") nodes");
  }
  Node n;
  n.name = np.name();
  n.op_type = np.op_type();
  n.domain = np.domain() == "ai.onnx" ? "" : np.domain();
  n.inputs.assign(np.input().begin(), np.input().end());
  n.outputs.assign(np.output().begin(), np.output().end());
  if (n.op_type.empty()) throw Error(ErrorCode::kInvalidModel, ctx.origin + ": a node has no op_type");
  for (const auto& ap : np.attribute()) {
    if (n.attributes.count(ap.name())) {
      throw Error(ErrorCode::kInvalidModel,
                  ctx.origin + ": " + n.Describe() + " repeats attribute '" + ap.name() + "'");
    }
    n.attributes[ap.name()] = ImportAttribute(ap, ctx, ctx.origin + ": " + n.Describe());
  }
  return n;
}

// Names a node reads, including what its subgraphs read from outside themselves.
std::vector<std::string> NodeReads(const Node& n) {
  std::vector<std::string> r;
  for (const auto& i : n.inputs)
    if (!i.empty()) r.push_back(i);
  for (const auto& [k, a] : n.attributes) {
    if (a.g) r.insert(r.end(), a.g->outer_refs.begin(), a.g->outer_refs.end());
    for (const auto& g : a.graphs) r.insert(r.end(), g->outer_refs.begin(), g->outer_refs.end());
  }
  return r;
}

// Sorts nodes so that every value is produced before it is read (stable: among ready
// nodes, file order). Names not produced inside are outer references (subgraphs) or
// errors (the top graph).
void SortGraph(Graph& g, const std::set<std::string>& defined_outside, bool top, const std::string& origin) {
  std::unordered_map<std::string, size_t> producer;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    for (const auto& o : g.nodes[i].outputs) {
      if (o.empty()) continue;
      if (producer.count(o) || defined_outside.count(o)) {
        throw Error(ErrorCode::kInvalidModel,
                    origin + ": value '" + o + "' is produced twice (second by " + g.nodes[i].Describe() + ")");
      }
      producer[o] = i;
    }
  }
  std::vector<std::vector<size_t>> users(g.nodes.size());
  std::vector<size_t> pending(g.nodes.size(), 0);
  std::set<std::string> outer;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    std::set<size_t> deps;
    for (const auto& name : NodeReads(g.nodes[i])) {
      auto it = producer.find(name);
      if (it != producer.end()) {
        deps.insert(it->second);
      } else if (!defined_outside.count(name)) {
        if (top) {
          throw Error(ErrorCode::kInvalidModel, origin + ": " + g.nodes[i].Describe() + " reads '" + name +
                                                    "', which is not an input, an initializer or any node's output");
        }
        outer.insert(name);
      }
    }
    for (size_t d : deps) {
      if (d == i) throw Error(ErrorCode::kGraphCycle, origin + ": " + g.nodes[i].Describe() + " reads its own output");
      users[d].push_back(i);
    }
    pending[i] = deps.size();
  }
  std::vector<Node> sorted;
  sorted.reserve(g.nodes.size());
  std::set<size_t> ready;
  for (size_t i = 0; i < g.nodes.size(); ++i)
    if (pending[i] == 0) ready.insert(i);
  while (!ready.empty()) {
    const size_t i = *ready.begin();
    ready.erase(ready.begin());
    sorted.push_back(g.nodes[i]);
    for (size_t u : users[i])
      if (--pending[u] == 0) ready.insert(u);
  }
  if (sorted.size() != g.nodes.size()) {
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      if (pending[i]) {
        throw Error(ErrorCode::kGraphCycle, origin + ": the graph has a cycle through " + g.nodes[i].Describe());
      }
    }
  }
  g.nodes = std::move(sorted);
  g.outer_refs.assign(outer.begin(), outer.end());
}

std::shared_ptr<Graph> ImportGraph(const onnx::GraphProto& gp, const ImportContext& ctx, bool top) {
  struct DepthGuard {
    int* d;
    ~DepthGuard() { --*d; }
  } guard{ctx.depth};
  if (++*ctx.depth - 1 > ctx.limits->max_graph_depth && ctx.limits->max_graph_depth > 0) {
    throw Error(ErrorCode::kLimitExceeded, ctx.origin + ": subgraph '" + gp.name() + "' is nested " +
                                               std::to_string(*ctx.depth - 1) + " deep, past max_graph_depth (" +
                                               std::to_string(ctx.limits->max_graph_depth) + ")");
  }
  auto g = std::make_shared<Graph>();
  g->name = gp.name();
  std::set<std::string> defined;
  for (const auto& vi : gp.input()) {
    if (!defined.insert(vi.name()).second) {
      throw Error(ErrorCode::kInvalidModel,
                  ctx.origin + ": graph '" + gp.name() + "': input '" + vi.name() + "' is declared twice");
    }
    g->inputs.push_back({vi.name(), ImportType(vi.type())});
  }
  for (const auto& vi : gp.output()) g->outputs.push_back({vi.name(), ImportType(vi.type())});
  for (const auto& vi : gp.value_info()) g->value_infos.push_back({vi.name(), ImportType(vi.type())});
  for (const auto& tp : gp.initializer()) {
    if (tp.name().empty()) throw Error(ErrorCode::kInvalidModel, ctx.origin + ": an initializer has no name");
    if (g->initializers.count(tp.name())) {
      throw Error(ErrorCode::kInvalidModel, ctx.origin + ": initializer '" + tp.name() + "' is defined twice");
    }
    g->initializers[tp.name()] =
        TensorFromProto(tp, *ctx.external, ctx.owner, ctx.origin + ": initializer '" + tp.name() + "'");
    defined.insert(tp.name());
  }
  if (gp.sparse_initializer_size() > 0) {
    throw Error(ErrorCode::kUnsupportedOp, ctx.origin + ": sparse initializers are not supported");
  }
  for (const auto& np : gp.node()) g->nodes.push_back(ImportNode(np, ctx));
  SortGraph(*g, defined, top, ctx.origin);
  if (top) {
    std::set<std::string> produced = defined;
    for (const auto& n : g->nodes)
      for (const auto& o : n.outputs) produced.insert(o);
    for (const auto& o : g->outputs) {
      if (!produced.count(o.name)) {
        throw Error(ErrorCode::kInvalidModel, ctx.origin + ": graph output '" + o.name + "' is never produced");
      }
    }
  } else {
    // A subgraph's outputs may also be outer values.
    std::set<std::string> produced = defined;
    for (const auto& n : g->nodes)
      for (const auto& o : n.outputs) produced.insert(o);
    std::set<std::string> outer(g->outer_refs.begin(), g->outer_refs.end());
    for (const auto& o : g->outputs)
      if (!produced.count(o.name)) outer.insert(o.name);
    g->outer_refs.assign(outer.begin(), outer.end());
  }
  return g;
}

// Before any external data is read: the model's size plus the lengths its main graph's
// external initializers declare, against max_model_bytes (so a model too big for the
// limit, or for wasm memory, fails at once instead of after reading gigabytes). Entries
// without a parseable length are counted as they are read (AddModelBytes).
void CheckExternalTotal(const onnx::ModelProto& mp, size_t size, const Limits& limits, const std::string& origin) {
  if (limits.max_model_bytes == 0) return;
  uint64_t total = size;
  for (const auto& tp : mp.graph().initializer()) {
    if (tp.data_location() != onnx::TensorProto::EXTERNAL) continue;
    for (const auto& kv : tp.external_data()) {
      if (kv.key() != "length") continue;
      char* end = nullptr;
      const unsigned long long n = std::strtoull(kv.value().c_str(), &end, 10);
      if (!kv.value().empty() && *end == 0 && kv.value()[0] != '-')
        total += std::min<unsigned long long>(n, 1ull << 62);
    }
  }
  if (total > limits.max_model_bytes) {
    throw Error(ErrorCode::kLimitExceeded, origin + ": the model with the external data its initializers declare is " +
                                               std::to_string(total) + " bytes, over max_model_bytes (" +
                                               std::to_string(limits.max_model_bytes) + ")" +
                                               (sizeof(void*) <= 4 ? ": a wasm32 memory holds at most 4 GiB" : ""));
  }
}

}  // namespace

Model ImportModel(const uint8_t* data, size_t size, const std::string& origin, const std::string& model_dir,
                  const Limits& limits) {
  ExternalSource external;
  external.dir = model_dir;
  return ImportModel(data, size, origin, external, limits);
}

Model ImportModel(const uint8_t* data, size_t size, const std::string& origin, const ExternalSource& external,
                  const Limits& limits) {
  auto mp = std::make_shared<onnx::ModelProto>();
  if (size == 0) throw Error(ErrorCode::kInvalidModel, origin + ": the model is empty (0 bytes)");
  CheckModelBytes(size, limits, origin);
  if (size > size_t(INT32_MAX)) {
    throw Error(ErrorCode::kInvalidModel, origin +
                                              ": a protobuf message cannot exceed 2 GiB; store the weights as "
                                              "external data");
  }
  if (!mp->ParseFromArray(data, int(size))) {
    throw Error(ErrorCode::kInvalidModel, origin +
                                              ": not an ONNX model (the protobuf is truncated or corrupt, or nests "
                                              "messages deeper than protobuf's limit of 100)");
  }
  if (!mp->has_graph()) throw Error(ErrorCode::kInvalidModel, origin + ": the model has no graph");
  Model m;
  m.origin = origin;
  m.ir_version = mp->ir_version();
  if (m.ir_version < kMinIrVersion || m.ir_version > kMaxIrVersion) {
    throw Error(ErrorCode::kUnsupportedOpset, origin + ": IR version " + std::to_string(m.ir_version) +
                                                  " is not supported (supported: " + std::to_string(kMinIrVersion) +
                                                  " to " + std::to_string(kMaxIrVersion) + ")");
  }
  for (const auto& o : mp->opset_import()) {
    const std::string dom = o.domain() == "ai.onnx" ? "" : o.domain();
    m.opsets[dom] = o.version();
    if (dom.empty() && (o.version() < 1 || o.version() > kMaxDefaultOpset)) {
      throw Error(ErrorCode::kUnsupportedOpset, origin + ": opset " + std::to_string(o.version()) +
                                                    " of the default domain is not supported (supported: 1 to " +
                                                    std::to_string(kMaxDefaultOpset) + ")");
    }
    if (dom == "ai.onnx.ml" && (o.version() < 1 || o.version() > kMaxMlOpset)) {
      throw Error(ErrorCode::kUnsupportedOpset, origin + ": opset " + std::to_string(o.version()) +
                                                    " of ai.onnx.ml is not supported (supported: 1 to " +
                                                    std::to_string(kMaxMlOpset) + ")");
    }
  }
  if (!m.opsets.count("")) m.opsets[""] = 1;  // IR < 3 style models omit it
  m.producer = mp->producer_name();
  int depth = 0;
  int64_t nodes = 0;
  CheckExternalTotal(*mp, size, limits, origin);
  ImportContext ctx{origin, &external, mp, &limits, &depth, &nodes};
  ModelBytesScope bytes_scope(size);
  for (const auto& fp : mp->functions()) {
    Function f;
    f.name = fp.name();
    f.domain = fp.domain();
    f.inputs.assign(fp.input().begin(), fp.input().end());
    f.outputs.assign(fp.output().begin(), fp.output().end());
    f.attributes.assign(fp.attribute().begin(), fp.attribute().end());
    for (const auto& o : fp.opset_import()) f.opsets[o.domain() == "ai.onnx" ? "" : o.domain()] = o.version();
    for (const auto& np : fp.node()) f.nodes.push_back(ImportNode(np, ctx));
    m.functions[f.domain + ":" + f.name] = std::move(f);
  }
  m.graph = ImportGraph(mp->graph(), ctx, true);
  return m;
}

Model LoadModelFile(const std::string& path, const Limits& limits, const std::map<std::string, ExternalBytes>& given) {
  const int64_t size = FileSize(path);  // -1: unknown before reading (checked after)
  if (size >= 0) CheckModelBytes(uint64_t(size), limits, path);
  auto bytes = ReadFile(path);
  ExternalSource external{DirName(path), given};
  return ImportModel(bytes->data(), bytes->size(), path, external, limits);
}

}  // namespace onemodel::impl
