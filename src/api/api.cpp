// The public C++ API (include/onemodel/onemodel.h) over the engine: conversions between
// the public and the engine's types, and every engine error turned into onemodel::Error.
#include "api/convert.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <new>

#include "core/exact.h"
#include "core/golden.h"
#include "core/io.h"
#include "core/limits.h"
#include "core/minifloat.h"
#include "core/npy.h"
#include "core/random.h"
#include "core/sha256.h"
#include "core/threadpool.h"
#include "passes/infer.h"
#include "onnx/import.h"
#include "onnx/tensor_proto.h"
#include "ops/family.h"
#include "ops/op_context.h"
#include "ref/reduce.h"
#include "runtime/dispatch.h"
#include "runtime/session.h"

#ifndef ONEMODEL_VERSION
#define ONEMODEL_VERSION "0.0.0"
#endif

namespace onemodel {

// ------------------------------------------------------------------------ errors

// The public codes are the engine's, numbered from 1 (0 is the C ABI's OM_OK).
static_assert(int(ErrorCode::kInvalidArgument) == int(impl::ErrorCode::kInvalidArgument) + 1);
static_assert(int(ErrorCode::kUnsupportedIsa) == int(impl::ErrorCode::kUnsupportedIsa) + 1);
static_assert(int(ErrorCode::kInternal) == int(impl::ErrorCode::kInternal) + 1);
static_assert(int(ErrorCode::kOutOfMemory) == int(impl::ErrorCode::kOutOfMemory) + 1);
// The public element types are the engine's (both ONNX's numbering).
static_assert(int32_t(ElementType::kFloat) == int32_t(impl::DType::kFloat));
static_assert(int32_t(ElementType::kString) == int32_t(impl::DType::kString));
static_assert(int32_t(ElementType::kBFloat16) == int32_t(impl::DType::kBFloat16));
static_assert(int32_t(ElementType::kFloat8E4M3FN) == int32_t(impl::DType::kFloat8E4M3FN));
static_assert(int32_t(ElementType::kInt4) == int32_t(impl::DType::kInt4));
static_assert(int32_t(ElementType::kInt2) == impl::kMaxDType);

const char* ErrorCodeName(ErrorCode code) {
  const int c = int(code);
  if (c < int(ErrorCode::kInvalidArgument) || c > int(ErrorCode::kOutOfMemory)) return "unknown";
  return impl::ErrorCodeName(impl::ErrorCode(c - 1));
}

Error::Error(ErrorCode code, const std::string& message)
    : std::runtime_error(std::string(ErrorCodeName(code)) + ": " + message), code_(code), message_(message) {}

namespace detail {

ErrorCode FromImpl(impl::ErrorCode c) { return ErrorCode(int(c) + 1); }

[[noreturn]] void Rethrow() {
  try {
    throw;
  } catch (const Error&) {
    throw;
  } catch (const impl::Error& e) {
    throw Error(FromImpl(e.code()), e.message());
  } catch (const std::bad_alloc&) {
    throw Error(ErrorCode::kOutOfMemory, "out of memory (an allocation was refused)");
  } catch (const std::exception& e) {
    throw Error(ErrorCode::kInternal, e.what());
  }
}

Tensor Access::FromImpl(impl::Tensor t) {
  Tensor r;
  if (t.empty()) return r;
  r.type_ = detail::FromImpl(t.dtype());
  r.shape_.assign(t.shape().begin(), t.shape().end());
  r.size_ = t.numel();
  if (t.dtype() == impl::DType::kString) {
    r.strings_ = std::make_shared<std::vector<std::string>>(t.strings());
    return r;
  }
  r.shared_ = !t.SoleOwner();
  auto holder = std::make_shared<impl::Tensor>(std::move(t));
  r.data_ = const_cast<void*>(holder->raw());
  r.owner_ = std::move(holder);
  return r;
}

impl::Tensor Access::ToImpl(const Tensor& t) {
  if (t.type_ == ElementType::kString) {
    impl::Tensor r(impl::DType::kString, impl::Shape(t.shape_), "string tensor");
    r.mutable_strings() = *t.strings_;
    return r;
  }
  return impl::Tensor::Borrow(detail::ToImpl(t.type_), impl::Shape(t.shape_), t.owner_, t.data_, "tensor");
}

bool Access::Overlaps(const Tensor& view, const void* p) {
  if (!view.view_ || !p) return false;
  const auto* b = static_cast<const uint8_t*>(view.data_);
  const auto* q = static_cast<const uint8_t*>(p);
  return q >= b && q < b + view.byte_size();
}

impl::Value ToImplValue(const Value& v, const std::string& what) {
  impl::Value r;
  switch (v.kind()) {
    case Value::Kind::kTensor:
      if (v.tensor().empty()) throw Error(ErrorCode::kInvalidArgument, what + " is an empty Tensor (no element type)");
      return impl::Value::FromTensor(Access::ToImpl(v.tensor()));
    case Value::Kind::kSequence:
      r.kind = impl::Value::Kind::kSequence;
      for (const Tensor& t : v.sequence()) r.sequence.push_back(Access::ToImpl(t));
      return r;
    case Value::Kind::kNone: r.kind = impl::Value::Kind::kOptionalEmpty; return r;
  }
  return r;
}

Value FromImplValue(impl::Value v) {
  switch (v.kind) {
    case impl::Value::Kind::kTensor: return Value(Access::FromImpl(std::move(v.tensor)));
    case impl::Value::Kind::kSequence: {
      std::vector<Tensor> ts;
      for (auto& t : v.sequence) ts.push_back(Access::FromImpl(std::move(t)));
      return Value::Sequence(std::move(ts));
    }
    default: return Value::None();
  }
}

ValueInfo FromImplType(const std::string& name, const impl::ValueType& t) {
  ValueInfo v;
  v.name = name;
  switch (t.kind) {
    case impl::ValueType::Kind::kTensor: v.kind = ValueInfo::Kind::kTensor; break;
    case impl::ValueType::Kind::kSequence: v.kind = ValueInfo::Kind::kSequence; break;
    case impl::ValueType::Kind::kOptional: v.kind = ValueInfo::Kind::kOptional; break;
    case impl::ValueType::Kind::kMap: v.kind = ValueInfo::Kind::kMap; break;
    default: v.kind = ValueInfo::Kind::kUnknown; break;
  }
  if (v.kind == ValueInfo::Kind::kTensor) {
    v.type = FromImpl(t.tensor.dtype);
    v.has_shape = t.tensor.has_shape;
    v.shape = t.tensor.dims;
    v.symbolic = t.tensor.dim_params;
    v.symbolic.resize(v.shape.size());
  }
  if ((v.kind == ValueInfo::Kind::kSequence || v.kind == ValueInfo::Kind::kOptional) && t.element) {
    v.element.push_back(FromImplType("", *t.element));
  }
  return v;
}

ValueInfo FromInferred(const std::string& name, const impl::TensorType& t) {
  ValueInfo v;
  v.name = name;
  v.kind = t.dtype != impl::DType::kUndefined || t.has_shape ? ValueInfo::Kind::kTensor : ValueInfo::Kind::kUnknown;
  v.type = FromImpl(t.dtype);
  v.has_shape = t.has_shape;
  v.shape = t.dims;
  v.symbolic = t.dim_params;
  v.symbolic.resize(v.shape.size());
  return v;
}

}  // namespace detail

using detail::Access;
using detail::Rethrow;

// ---------------------------------------------------------------------- sessions

namespace {

MemoryPlanStats FromImplStats(const impl::MemoryPlanStats& m) {
  MemoryPlanStats r;
  r.runs = size_t(m.runs);
  r.disabled = m.disabled;
  r.last_replayed = m.last_replayed;
  r.arena_bytes = m.arena_bytes;
  r.peak_live_bytes = m.peak_live_bytes;
  r.planned_buffers = m.planned_buffers;
  r.planned_bytes = m.planned_bytes;
  r.last_from_arena = m.last_from_arena;
  r.last_elsewhere = m.last_elsewhere;
  return r;
}

impl::SessionOptions ToImplOptions(const SessionOptions& o) {
  impl::SessionOptions r;
  r.mode = o.mode == Mode::kFast ? impl::Mode::kFast : impl::Mode::kExact;
  r.threads = o.threads;
  r.isa = o.isa;
  r.prepack = o.prepack;
  r.avx512_tile_bits = o.avx512_tile_bits;
  r.memory_plan = o.memory_plan;
  r.disabled_passes = o.disabled_passes;
  switch (o.profiling) {
    case Profiling::kOff: r.profiling = 0; break;
    case Profiling::kByOpType: r.profiling = 1; break;
    case Profiling::kByNode: r.profiling = 2; break;
    default: throw Error(ErrorCode::kInvalidArgument, "unknown profiling level " + std::to_string(int(o.profiling)));
  }
  r.free_dimension_overrides = o.free_dimension_overrides;
  if (o.max_graph_depth < 0 || o.max_nodes < 0) {
    throw Error(ErrorCode::kInvalidArgument, "max_graph_depth and max_nodes must be >= 0 (0: no limit), got " +
                                                 std::to_string(o.max_graph_depth) + " and " +
                                                 std::to_string(o.max_nodes));
  }
  r.limits.max_model_bytes = o.max_model_bytes;
  r.limits.max_tensor_bytes = o.max_tensor_bytes;
  r.limits.max_session_bytes = o.max_session_bytes;
  r.limits.max_graph_depth = o.max_graph_depth;
  r.limits.max_nodes = o.max_nodes;
  return r;
}

// options.external_data as the loader's map, each name checked.
std::map<std::string, impl::ExternalBytes> ExternalFiles(const SessionOptions& o) {
  std::map<std::string, impl::ExternalBytes> files;
  for (const ExternalData& e : o.external_data) {
    const std::string what = "SessionOptions::external_data '" + e.path + "'";
    if (!e.data && e.size)
      throw Error(ErrorCode::kInvalidArgument, what + ": data is null with a size of " + std::to_string(e.size));
    try {
      impl::CheckRelativeLocation(e.path, what);
    } catch (const impl::Error& err) {
      throw Error(ErrorCode::kInvalidArgument, err.message());
    }
    const std::string key = impl::NormalizeLocation(e.path);
    if (files.count(key)) throw Error(ErrorCode::kInvalidArgument, what + ": a second file named '" + key + "'");
    files[key] = impl::ExternalBytes{static_cast<const uint8_t*>(e.data), e.size, e.keep};
  }
  return files;
}

}  // namespace

struct Session::Impl {
  explicit Impl(impl::Session s) : session(std::move(s)) {
    for (const auto& in : session.inputs()) inputs.push_back(detail::FromImplType(in.name, in.type));
    for (const auto& out : session.outputs()) outputs.push_back(detail::FromImplType(out.name, out.type));
  }
  impl::Session session;
  std::vector<ValueInfo> inputs, outputs;
};

Session::Session() = default;
Session::Session(Session&&) noexcept = default;
Session& Session::operator=(Session&&) noexcept = default;
Session::~Session() = default;

Session::Session(const std::string& path, const SessionOptions& options) {
  try {
    impl_ = std::make_unique<Impl>(impl::Session::Load(path, ToImplOptions(options), ExternalFiles(options)));
  } catch (...) {
    Rethrow();
  }
}

Session Session::FromBytes(const void* data, size_t size, const SessionOptions& options, const std::string& name) {
  try {
    if (!data && size) throw Error(ErrorCode::kInvalidArgument, "Session::FromBytes: data is null");
    Session s;
    s.impl_ = std::make_unique<Impl>(impl::Session::FromBytes(static_cast<const uint8_t*>(data), size,
                                                              ToImplOptions(options), name, ExternalFiles(options)));
    return s;
  } catch (...) {
    Rethrow();
  }
}

const Session::Impl& Session::impl() const {
  if (!impl_) throw Error(ErrorCode::kInvalidArgument, "this Session is empty (it was moved from)");
  return *impl_;
}

const std::vector<ValueInfo>& Session::inputs() const { return impl().inputs; }
const std::vector<ValueInfo>& Session::outputs() const { return impl().outputs; }
std::string Session::target() const { return impl::IsaName(impl().session.isa()); }
int Session::threads() const { return impl().session.threads(); }
std::vector<NodePlan> Session::plans() const {
  std::vector<NodePlan> out;
  for (const impl::NodePlan& p : impl().session.plans()) out.push_back({p.node, p.op_type, p.family, p.row, p.fast});
  return out;
}

MemoryPlanStats Session::memory_plan_stats() const { return FromImplStats(impl().session.memory_plan_stats()); }

RunProfile Session::last_profile() const {
  const impl::RunProfile p = impl().session.last_profile();
  RunProfile r;
  r.total_ms = p.total_ms;
  for (const auto& [name, ms, count] : p.entries) r.entries.push_back({name, ms, count});
  r.recycled_buffer_bytes = p.recycled_bytes;
  r.memory_plan = FromImplStats(p.plan);
  return r;
}

RunOptions::RunOptions() : flag_(std::make_shared<std::atomic<bool>>(false)) {}
void RunOptions::Terminate() { static_cast<std::atomic<bool>*>(flag_.get())->store(true); }
void RunOptions::Reset() { static_cast<std::atomic<bool>*>(flag_.get())->store(false); }
bool RunOptions::terminated() const { return static_cast<const std::atomic<bool>*>(flag_.get())->load(); }

std::shared_ptr<const std::atomic<bool>> Access::TerminateFlag(const RunOptions& o) {
  return std::static_pointer_cast<const std::atomic<bool>>(o.flag_);
}

std::vector<NamedValue> Session::Run(const std::vector<NamedValue>& inputs,
                                     const std::vector<std::string>& output_names) const {
  return RunWith(inputs, output_names, nullptr);
}

std::vector<NamedValue> Session::Run(const std::vector<NamedValue>& inputs,
                                     const std::vector<std::string>& output_names,
                                     const RunOptions& run_options) const {
  try {
    if (!(run_options.time_limit_ms >= 0)) {
      throw Error(ErrorCode::kInvalidArgument,
                  "RunOptions::time_limit_ms must be >= 0 (0: none), got " + std::to_string(run_options.time_limit_ms));
    }
  } catch (...) {
    Rethrow();
  }
  impl::RunControl control;
  control.terminate = Access::TerminateFlag(run_options);
  if (run_options.time_limit_ms > 0) {
    control.has_deadline = true;
    control.time_limit_ms = run_options.time_limit_ms;
    const double capped = std::min(run_options.time_limit_ms, 1e12);
    control.deadline =
        std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                               std::chrono::duration<double, std::milli>(capped));
  }
  return RunWith(inputs, output_names, &control);
}

std::vector<NamedValue> Session::RunWith(const std::vector<NamedValue>& inputs,
                                         const std::vector<std::string>& output_names,
                                         const impl::RunControl* control) const {
  const Impl& im = impl();
  try {
    std::map<std::string, impl::Value> feeds;
    for (const NamedValue& nv : inputs) {
      if (feeds.count(nv.name)) throw Error(ErrorCode::kInvalidArgument, "input '" + nv.name + "' is given twice");
      feeds.emplace(nv.name, detail::ToImplValue(nv.value, "input '" + nv.name + "'"));
    }
    std::vector<size_t> pick;
    if (output_names.empty()) {
      for (size_t i = 0; i < im.outputs.size(); ++i) pick.push_back(i);
    } else {
      for (const std::string& name : output_names) {
        size_t k = 0;
        while (k < im.outputs.size() && im.outputs[k].name != name) ++k;
        if (k == im.outputs.size()) {
          std::string have;
          for (const auto& o : im.outputs) have += (have.empty() ? "'" : ", '") + o.name + "'";
          throw Error(ErrorCode::kInvalidArgument, im.session.model().origin + ": the model has no output named '" +
                                                       name + "' (outputs: " + have + ")");
        }
        pick.push_back(k);
      }
    }
    if (control) {
      if (const int why = control->Stop()) control->Throw(why, "the start of the run");
    }
    std::vector<impl::Value> outs = im.session.Run(feeds, control);
    // An output that points into a view of the caller's memory (Identity of a view, ...)
    // is copied: the caller may reuse that memory as soon as Run returns.
    auto detach = [&](impl::Tensor& t) {
      if (t.empty() || t.dtype() == impl::DType::kString || t.SoleOwner()) return;
      for (const NamedValue& nv : inputs) {
        if (nv.value.is_tensor() && Access::Overlaps(nv.value.tensor(), t.raw())) {
          impl::Tensor c = impl::Tensor::Uninitialized(t.dtype(), t.shape(), "output");
          if (t.nbytes()) std::memcpy(c.mutable_data<uint8_t>(), t.raw(), t.nbytes());
          t = std::move(c);
          return;
        }
      }
    };
    std::vector<NamedValue> result;
    result.reserve(pick.size());
    for (size_t k : pick) {
      impl::Value v = output_names.empty() ? std::move(outs[k]) : outs[k];
      if (v.kind == impl::Value::Kind::kTensor) detach(v.tensor);
      for (auto& t : v.sequence) detach(t);
      result.push_back({im.outputs[k].name, detail::FromImplValue(std::move(v))});
    }
    return result;
  } catch (...) {
    Rethrow();
  }
}

std::vector<ValueInfo> Session::InferOutputs(const std::vector<NamedValue>& inputs) const {
  const Impl& im = impl();
  try {
    std::map<std::string, impl::TensorType> given;
    for (const NamedValue& nv : inputs) {
      if (!nv.value.is_tensor() || nv.value.tensor().empty()) continue;
      const Tensor& t = nv.value.tensor();
      impl::TensorType tt;
      tt.dtype = detail::ToImpl(t.type());
      tt.has_shape = true;
      tt.dims = t.shape();
      tt.dim_params.assign(tt.dims.size(), "");
      given[nv.name] = tt;
    }
    const auto inferred = impl::InferTypes(im.session.model(), given);
    std::vector<ValueInfo> r;
    for (const ValueInfo& o : im.outputs) {
      auto it = inferred.find(o.name);
      if (it == inferred.end()) {
        ValueInfo u;
        u.name = o.name;
        r.push_back(u);
      } else {
        r.push_back(detail::FromInferred(o.name, it->second.type));
      }
    }
    return r;
  } catch (...) {
    Rethrow();
  }
}

// ----------------------------------------------------------- models without a session

namespace {
ModelInfo Inspect(const impl::Model& m) {
  ModelInfo r;
  r.ir_version = m.ir_version;
  r.producer = m.producer;
  for (const auto& [d, v] : m.opsets) r.opsets.emplace_back(d, v);
  for (const auto& in : m.graph->inputs) {
    if (!m.graph->initializers.count(in.name)) r.inputs.push_back(detail::FromImplType(in.name, in.type));
  }
  for (const auto& o : m.graph->outputs) r.outputs.push_back(detail::FromImplType(o.name, o.type));
  const auto inferred = impl::InferTypes(m);
  for (const auto& o : m.graph->outputs) {
    auto it = inferred.find(o.name);
    ValueInfo u;
    u.name = o.name;
    r.inferred_outputs.push_back(it == inferred.end() ? u : detail::FromInferred(o.name, it->second.type));
  }
  std::map<std::string, OperatorUse> ops;  // keyed "domain.op" ("op" for ai.onnx)
  std::function<void(const impl::Graph&)> count = [&](const impl::Graph& g) {
    for (const impl::Node& n : g.nodes) {
      OperatorUse& u = ops[(n.domain.empty() ? "" : n.domain + ".") + n.op_type];
      u.domain = n.domain;
      u.op_type = n.op_type;
      u.count++;
      for (const auto& [k, a] : n.attributes) {
        if (a.g) count(*a.g);
        for (const auto& sg : a.graphs) count(*sg);
      }
    }
  };
  count(*m.graph);
  for (auto& [key, u] : ops) {
    u.supported = impl::FindRefOp(u.domain, u.op_type) != nullptr;
    r.operators.push_back(u);
  }
  r.initializer_count = m.graph->initializers.size();
  for (const auto& [k, t] : m.graph->initializers) r.initializer_bytes += t.nbytes();
  return r;
}
}  // namespace

std::vector<OperatorFamily> OperatorFamilies() {
  std::vector<OperatorFamily> out;
  for (const impl::ops::FamilyInfo& f : impl::ops::Families()) {
    OperatorFamily o{f.family, f.op_types, {}};
    for (const impl::ops::RowInfo& r : f.rows)
      o.algorithms.push_back(
          {r.name, r.exactness == impl::ops::Exactness::kFast, impl::ops::DeviceName(r.device), r.kernels});
    out.push_back(std::move(o));
  }
  return out;
}

ModelInfo InspectModel(const std::string& path) {
  try {
    return Inspect(impl::LoadModelFile(path));
  } catch (...) {
    Rethrow();
  }
}

ModelInfo InspectModelBytes(const void* data, size_t size, const std::string& name) {
  try {
    if (!data && size) throw Error(ErrorCode::kInvalidArgument, "InspectModelBytes: data is null");
    return Inspect(impl::ImportModel(static_cast<const uint8_t*>(data), size, name, ""));
  } catch (...) {
    Rethrow();
  }
}

}  // namespace onemodel
