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
#include "core/minifloat.h"
#include "core/npy.h"
#include "core/random.h"
#include "core/sha256.h"
#include "core/threadpool.h"
#include "passes/infer.h"
#include "onnx/import.h"
#include "onnx/tensor_proto.h"
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
// The public element types are the engine's (both ONNX's numbering).
static_assert(int32_t(ElementType::kFloat) == int32_t(impl::DType::kFloat));
static_assert(int32_t(ElementType::kString) == int32_t(impl::DType::kString));
static_assert(int32_t(ElementType::kBFloat16) == int32_t(impl::DType::kBFloat16));
static_assert(int32_t(ElementType::kFloat8E4M3FN) == int32_t(impl::DType::kFloat8E4M3FN));
static_assert(int32_t(ElementType::kInt4) == int32_t(impl::DType::kInt4));
static_assert(int32_t(ElementType::kInt2) == impl::kMaxDType);

const char* ErrorCodeName(ErrorCode code) {
  const int c = int(code);
  if (c < int(ErrorCode::kInvalidArgument) || c > int(ErrorCode::kInternal)) return "unknown";
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
    throw Error(ErrorCode::kOutOfRange, "out of memory");
  } catch (const std::exception& e) {
    throw Error(ErrorCode::kInternal, e.what());
  }
}

impl::DType ToImpl(ElementType t) { return impl::DType(int32_t(t)); }
ElementType FromImpl(impl::DType t) { return ElementType(int32_t(t)); }

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

// ------------------------------------------------------------------ element types

std::string ElementTypeName(ElementType type) { return impl::DTypeName(detail::ToImpl(type)); }

size_t ElementSize(ElementType type) {
  if (!impl::IsKnownDType(int32_t(type))) return 0;
  return impl::DTypeStorageSize(detail::ToImpl(type));
}

// ----------------------------------------------------------------------- tensors

Tensor::Tensor() = default;

Tensor::Tensor(ElementType type, std::vector<int64_t> shape) {
  try {
    if (type == ElementType::kUndefined || !impl::IsKnownDType(int32_t(type))) {
      throw Error(ErrorCode::kInvalidArgument, "unknown element type " + std::to_string(int32_t(type)));
    }
    *this = Access::FromImpl(impl::Tensor(detail::ToImpl(type), impl::Shape(shape), "tensor"));
  } catch (...) {
    Rethrow();
  }
}

Tensor Tensor::FromBytes(ElementType type, std::vector<int64_t> shape, const void* data, size_t bytes) {
  try {
    if (type == ElementType::kString)
      throw Error(ErrorCode::kInvalidArgument, "Tensor::FromBytes: use FromStrings for strings");
    if (type == ElementType::kUndefined || !impl::IsKnownDType(int32_t(type))) {
      throw Error(ErrorCode::kInvalidArgument, "unknown element type " + std::to_string(int32_t(type)));
    }
    impl::Tensor t = impl::Tensor::Uninitialized(detail::ToImpl(type), impl::Shape(shape), "tensor");
    if (bytes != t.nbytes()) {
      throw Error(ErrorCode::kInvalidArgument,
                  "Tensor::FromBytes: " + ElementTypeName(type) + impl::ShapeToString(t.shape()) + " takes " +
                      std::to_string(t.nbytes()) + " bytes, given " + std::to_string(bytes));
    }
    if (bytes && !data) throw Error(ErrorCode::kInvalidArgument, "Tensor::FromBytes: data is null");
    if (bytes) std::memcpy(t.mutable_data<uint8_t>(), data, bytes);
    return Access::FromImpl(std::move(t));
  } catch (...) {
    Rethrow();
  }
}

Tensor Tensor::FromStrings(std::vector<std::string> values, std::vector<int64_t> shape) {
  try {
    impl::Tensor t(impl::DType::kString, impl::Shape(shape), "string tensor");
    if (int64_t(values.size()) != t.numel()) {
      throw Error(ErrorCode::kInvalidArgument, "Tensor::FromStrings: shape " + impl::ShapeToString(t.shape()) +
                                                   " has " + std::to_string(t.numel()) + " elements, given " +
                                                   std::to_string(values.size()));
    }
    Tensor r;
    r.type_ = ElementType::kString;
    r.shape_ = std::move(shape);
    r.size_ = t.numel();
    r.strings_ = std::make_shared<std::vector<std::string>>(std::move(values));
    return r;
  } catch (...) {
    Rethrow();
  }
}

Tensor Tensor::View(ElementType type, std::vector<int64_t> shape, void* data, size_t bytes) {
  try {
    if (type == ElementType::kString)
      throw Error(ErrorCode::kInvalidArgument, "Tensor::View: strings cannot be viewed");
    if (type == ElementType::kUndefined || !impl::IsKnownDType(int32_t(type))) {
      throw Error(ErrorCode::kInvalidArgument, "unknown element type " + std::to_string(int32_t(type)));
    }
    const int64_t n = impl::CheckedNumElements(impl::Shape(shape), ElementSize(type), "Tensor::View");
    const size_t want = size_t(n) * ElementSize(type);
    if (bytes != want) {
      throw Error(ErrorCode::kInvalidArgument, "Tensor::View: " + ElementTypeName(type) +
                                                   impl::ShapeToString(impl::Shape(shape)) + " takes " +
                                                   std::to_string(want) + " bytes, given " + std::to_string(bytes));
    }
    if (bytes && !data) throw Error(ErrorCode::kInvalidArgument, "Tensor::View: data is null");
    Tensor r;
    r.type_ = type;
    r.shape_ = std::move(shape);
    r.size_ = n;
    r.data_ = data;
    r.view_ = true;
    return r;
  } catch (...) {
    Rethrow();
  }
}

void* Tensor::mutable_data() {
  if (view_ || type_ == ElementType::kString || empty()) return view_ ? data_ : nullptr;
  if (shared_ || owner_.use_count() > 1) {
    Tensor copy = Clone();
    *this = std::move(copy);
  }
  return data_;
}

const std::vector<std::string>& Tensor::strings() const {
  if (type_ != ElementType::kString) {
    throw Error(ErrorCode::kTypeMismatch, "Tensor::strings: the tensor is " + ElementTypeName(type_) + ", not STRING");
  }
  return *strings_;
}

void Tensor::CheckAccess(size_t elem_size, ElementType want) const {
  if (type_ == want) return;
  auto in = [&](std::initializer_list<ElementType> l) { return std::find(l.begin(), l.end(), type_) != l.end(); };
  using E = ElementType;
  bool ok = false;
  if (want == E::kUInt16) ok = in({E::kFloat16, E::kBFloat16});
  if (want == E::kUInt8) {
    ok = in({E::kBool, E::kFloat8E4M3FN, E::kFloat8E4M3FNUZ, E::kFloat8E5M2, E::kFloat8E5M2FNUZ, E::kFloat8E8M0,
             E::kUInt4, E::kInt4, E::kFloat4E2M1, E::kUInt2, E::kInt2});
  }
  if (want == E::kInt8) ok = in({E::kInt4, E::kInt2});
  if (!ok || elem_size != ElementSize(type_)) {
    throw Error(ErrorCode::kTypeMismatch, "the tensor is " + ElementTypeName(type_) + ", not " + ElementTypeName(want));
  }
}

double Tensor::ElementAsDouble(int64_t i) const {
  if (type_ == ElementType::kString || type_ == ElementType::kComplex64 || type_ == ElementType::kComplex128 ||
      empty()) {
    throw Error(ErrorCode::kTypeMismatch, "ElementAsDouble: the tensor is " + ElementTypeName(type_));
  }
  if (i < 0 || i >= size_) {
    throw Error(ErrorCode::kOutOfRange,
                "ElementAsDouble: index " + std::to_string(i) + " outside [0, " + std::to_string(size_) + ")");
  }
  try {
    return impl::ElementAsDouble(Access::ToImpl(*this), i);
  } catch (...) {
    Rethrow();
  }
}

Tensor Tensor::Clone() const {
  if (empty()) return Tensor();
  if (type_ == ElementType::kString) return FromStrings(*strings_, shape_);
  return FromBytes(type_, shape_, data_, byte_size());
}

// ------------------------------------------------------------------------ values

Value Value::Sequence(std::vector<Tensor> tensors) {
  Value v;
  v.kind_ = Kind::kSequence;
  v.sequence_ = std::move(tensors);
  return v;
}

const Tensor& Value::tensor() const {
  if (kind_ != Kind::kTensor) throw Error(ErrorCode::kTypeMismatch, "the value is not a tensor");
  return tensor_;
}
Tensor& Value::tensor() {
  if (kind_ != Kind::kTensor) throw Error(ErrorCode::kTypeMismatch, "the value is not a tensor");
  return tensor_;
}
const std::vector<Tensor>& Value::sequence() const {
  if (kind_ != Kind::kSequence) throw Error(ErrorCode::kTypeMismatch, "the value is not a sequence");
  return sequence_;
}

std::string ValueInfo::ToString() const {
  switch (kind) {
    case Kind::kTensor: {
      std::string s = ElementTypeName(type);
      if (!has_shape) return s + "[?]";
      s += "[";
      for (size_t k = 0; k < shape.size(); ++k) {
        const std::string sym = k < symbolic.size() ? symbolic[k] : "";
        s += (k ? "," : "") + (shape[k] >= 0 ? std::to_string(shape[k]) : (sym.empty() ? "?" : sym));
      }
      return s + "]";
    }
    case Kind::kSequence: return "sequence<" + (element.empty() ? "?" : element[0].ToString()) + ">";
    case Kind::kOptional: return "optional<" + (element.empty() ? "?" : element[0].ToString()) + ">";
    case Kind::kMap: return "map";
    default: return "?";
  }
}

std::string RunProfile::ToString() const {
  std::string s;
  char line[256];
  std::snprintf(line, sizeof line, "[onemodel] profile: %.3f ms in all; recycled tensor buffers %.1f MiB\n", total_ms,
                double(recycled_buffer_bytes) / 1048576.0);
  s += line;
  const MemoryPlanStats& m = memory_plan;
  if (m.runs) {
    std::snprintf(line, sizeof line,
                  "[onemodel] memory plan: %s; arena %.1f MiB for %zu buffers (%.1f MiB unshared); this run %zu from "
                  "the arena, %zu elsewhere\n",
                  m.disabled        ? "off for these shapes"
                  : m.last_replayed ? "followed"
                                    : "made from this run",
                  double(m.arena_bytes) / 1048576.0, m.planned_buffers, double(m.planned_bytes) / 1048576.0,
                  m.last_from_arena, m.last_elsewhere);
    s += line;
  }
  for (const Entry& e : entries) {
    std::snprintf(line, sizeof line, "[onemodel]   %-40s %10.3f ms %5.1f%% %6lld nodes\n", e.name.c_str(), e.ms,
                  100.0 * e.ms / (total_ms > 0 ? total_ms : 1), static_cast<long long>(e.count));
    s += line;
  }
  return s;
}

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
  r.memory_plan = o.memory_plan;
  r.disabled_passes = o.disabled_passes;
  switch (o.profiling) {
    case Profiling::kOff: r.profiling = 0; break;
    case Profiling::kByOpType: r.profiling = 1; break;
    case Profiling::kByNode: r.profiling = 2; break;
    default: throw Error(ErrorCode::kInvalidArgument, "unknown profiling level " + std::to_string(int(o.profiling)));
  }
  r.free_dimension_overrides = o.free_dimension_overrides;
  return r;
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
    impl_ = std::make_unique<Impl>(impl::Session::Load(path, ToImplOptions(options)));
  } catch (...) {
    Rethrow();
  }
}

Session Session::FromBytes(const void* data, size_t size, const SessionOptions& options, const std::string& name) {
  try {
    if (!data && size) throw Error(ErrorCode::kInvalidArgument, "Session::FromBytes: data is null");
    Session s;
    s.impl_ = std::make_unique<Impl>(
        impl::Session::FromBytes(static_cast<const uint8_t*>(data), size, ToImplOptions(options), name));
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

std::vector<NamedValue> Session::Run(const std::vector<NamedValue>& inputs,
                                     const std::vector<std::string>& output_names) const {
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
    std::vector<impl::Value> outs = im.session.Run(feeds);
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

// ------------------------------------------------------------------ golden hashes

struct GoldenHasher::State {
  impl::Sha256 h;
};
GoldenHasher::GoldenHasher() : s_(std::make_unique<State>()) {}
GoldenHasher::~GoldenHasher() = default;

void GoldenHasher::Add(const Value& v) {
  try {
    switch (v.kind()) {
      case Value::Kind::kTensor: impl::GoldenSerialize(Access::ToImpl(v.tensor()), s_->h); break;
      case Value::Kind::kSequence: {
        std::vector<impl::Tensor> ts;
        for (const Tensor& t : v.sequence()) ts.push_back(Access::ToImpl(t));
        impl::GoldenSerializeSequence(ts, s_->h);
        break;
      }
      case Value::Kind::kNone: impl::GoldenSerializeEmptyOptional(s_->h); break;
    }
  } catch (...) {
    Rethrow();
  }
}

std::string GoldenHasher::HexDigest() {
  std::string d = s_->h.HexDigest();
  s_ = std::make_unique<State>();
  return d;
}

std::string GoldenHash(const std::vector<NamedValue>& values) {
  GoldenHasher h;
  for (const NamedValue& v : values) h.Add(v.value);
  return h.HexDigest();
}

std::string GoldenHash(const Value& value) {
  GoldenHasher h;
  h.Add(value);
  return h.HexDigest();
}

std::string GoldenSkipMarker() { return impl::GoldenSkipMarker(); }

Tensor MakeGoldenInput(const ValueInfo& in, const std::map<std::string, int64_t>& dims) {
  try {
    if (in.kind != ValueInfo::Kind::kTensor) {
      throw Error(ErrorCode::kInvalidArgument, "input '" + in.name + "' is not a tensor: give it with --input");
    }
    impl::Shape shape;
    for (size_t k = 0; k < in.shape.size(); ++k) {
      int64_t d = in.shape[k];
      if (d < 0) {
        auto it = dims.find(k < in.symbolic.size() ? in.symbolic[k] : "");
        d = it == dims.end() ? 1 : it->second;
      }
      shape.push_back(d);
    }
    uint64_t seed = 1469598103934665603ull;
    for (char c : in.name) seed = (seed ^ uint8_t(c)) * 1099511628211ull;
    impl::SplitMix64 rng(seed);
    using impl::DType;
    const DType dt = detail::ToImpl(in.type);
    impl::Tensor t(dt, shape, "generated input '" + in.name + "'");
    for (int64_t i = 0; i < t.numel(); ++i) {
      switch (dt) {
        case DType::kFloat: t.mutable_data<float>()[i] = rng.Uniform(-1.0f, 1.0f); break;
        case DType::kDouble: t.mutable_data<double>()[i] = double(rng.Uniform(-1.0f, 1.0f)); break;
        case DType::kFloat16: t.mutable_data<uint16_t>()[i] = impl::F32ToHalf(rng.Uniform(-1.0f, 1.0f)); break;
        case DType::kBFloat16: t.mutable_data<uint16_t>()[i] = impl::F32ToBF16(rng.Uniform(-1.0f, 1.0f)); break;
        case DType::kInt64: t.mutable_data<int64_t>()[i] = int64_t(rng.NextU32() % 64); break;
        case DType::kInt32: t.mutable_data<int32_t>()[i] = int32_t(rng.NextU32() % 64); break;
        case DType::kUInt8:
        case DType::kInt8: t.mutable_data<uint8_t>()[i] = uint8_t(rng.NextU32() % 64); break;
        case DType::kBool: t.mutable_data<uint8_t>()[i] = uint8_t(i % 2); break;
        default:
          throw Error(ErrorCode::kTypeMismatch, "cannot generate input '" + in.name + "' of type " +
                                                    impl::DTypeName(dt) + ": give it with --input");
      }
    }
    return Access::FromImpl(std::move(t));
  } catch (...) {
    Rethrow();
  }
}

// ------------------------------------------------------------------- tensor files

Tensor ReadNpy(const void* data, size_t size, const std::string& name) {
  try {
    if (!data && size) throw Error(ErrorCode::kInvalidArgument, "ReadNpy: data is null");
    return Access::FromImpl(impl::ParseNpy(static_cast<const uint8_t*>(data), size, name));
  } catch (...) {
    Rethrow();
  }
}

Tensor LoadNpy(const std::string& path) {
  try {
    auto bytes = impl::ReadFile(path);
    return Access::FromImpl(impl::ParseNpy(bytes->data(), bytes->size(), path));
  } catch (...) {
    Rethrow();
  }
}

std::vector<uint8_t> WriteNpy(const Tensor& t) {
  try {
    if (t.empty()) throw Error(ErrorCode::kInvalidArgument, "WriteNpy: the tensor is empty");
    return impl::SerializeNpy(Access::ToImpl(t));
  } catch (...) {
    Rethrow();
  }
}

void SaveNpy(const std::string& path, const Tensor& t) {
  const std::vector<uint8_t> bytes = WriteNpy(t);
  try {
    impl::WriteFile(path, bytes.data(), bytes.size());
  } catch (...) {
    Rethrow();
  }
}

Value ReadOnnxValue(const void* data, size_t size, ValueInfo::Kind kind, const std::string& name) {
  try {
    if (!data && size) throw Error(ErrorCode::kInvalidArgument, "ReadOnnxValue: data is null");
    const auto* p = static_cast<const uint8_t*>(data);
    switch (kind) {
      case ValueInfo::Kind::kSequence: return detail::FromImplValue(impl::ValueFromBytes(p, size, false, name));
      case ValueInfo::Kind::kOptional: return detail::FromImplValue(impl::ValueFromBytes(p, size, true, name));
      case ValueInfo::Kind::kMap:
        throw Error(ErrorCode::kUnsupportedOp, name + ": map and sparse values are not supported");
      default: return Value(Access::FromImpl(impl::TensorFromBytes(p, size, name)));
    }
  } catch (...) {
    Rethrow();
  }
}

// -------------------------------------------------------------------- the build

const char* Version() { return ONEMODEL_VERSION; }

std::string BuildDescription() {
  std::string s;
#if defined(__EMSCRIPTEN__)
  s = "wasm32";
#elif defined(__x86_64__)
  s = "x86-64";
#elif defined(__aarch64__)
  s = "arm64";
#else
  s = "generic";
#endif
#if defined(__clang__)
  s += " clang " __clang_version__;
#elif defined(__GNUC__)
  s += " gcc " __VERSION__;
#endif
  return s;
}

std::vector<TargetInfo> CompiledTargets() {
  std::vector<TargetInfo> r;
  for (impl::Isa i : impl::CompiledIsas()) r.push_back({impl::IsaName(i), impl::CpuSupports(i)});
  return r;
}

std::string BestTarget() { return impl::IsaName(impl::BestIsa()); }
std::string CpuDescription() { return impl::CpuDescription(); }
int CanonicalLanes() { return int(impl::kCanonicalLanes); }
int DefaultThreads() { return impl::ThreadPool::DefaultThreads(); }
void ReleaseCachedBuffers() { impl::TrimRecycledTensorBuffers(); }
size_t CachedBufferBytes() { return impl::RecycledTensorBytes(); }

std::string DescribeKernels(const std::string& isa) {
  try {
    return impl::DescribeDispatch(impl::MakeDispatch(isa.empty() ? impl::BestIsa() : impl::ParseIsa(isa)));
  } catch (...) {
    Rethrow();
  }
}

namespace {
double TimeNsPerElem(float (*fn)(const float*, size_t), const float* x, size_t n, int reps, float* result) {
  double best = 1e300;
  volatile float sink = 0;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    const size_t inner = n >= (size_t(1) << 20) ? 1 : (size_t(1) << 22) / n;
    float s = 0;
    for (size_t k = 0; k < inner; ++k) s = fn(x, n);
    const auto t1 = std::chrono::steady_clock::now();
    sink = s;
    *result = s;
    const double ns = std::chrono::duration<double, std::nano>(t1 - t0).count() / double(inner * n);
    if (ns < best) best = ns;
  }
  (void)sink;
  return best;
}
}  // namespace

std::vector<LaneBenchRow> BenchCanonicalSums(const std::string& isa, size_t n, int reps) {
  try {
    if (n < 1 || n > (size_t(1) << 28)) throw Error(ErrorCode::kInvalidArgument, "n must be 1 .. 2^28");
    if (reps < 1 || reps > 1000) throw Error(ErrorCode::kInvalidArgument, "reps must be 1 .. 1000");
    impl::Isa cap = isa.empty() ? impl::BestIsa() : impl::ParseIsa(isa);
    if (cap == impl::Isa::kRef) cap = impl::Isa::kScalar;
    const impl::Dispatch d = impl::MakeDispatch(cap);
    std::vector<float> x(n);
    impl::SplitMix64 rng(20261129);
    for (float& v : x) v = rng.Uniform(-1.0f, 1.0f);
    const impl::LaneBench& b = *d.lane_bench;
    struct {
      int L;
      float (*fn)(const float*, size_t);
      float (*ref)(const float*, size_t);
    } rows[] = {
        {16, b.sum_l16, &impl::ref::SumCanonical<16>},
        {32, b.sum_l32, &impl::ref::SumCanonical<32>},
        {64, b.sum_l64, &impl::ref::SumCanonical<64>},
        {128, b.sum_l128, &impl::ref::SumCanonical<128>},
    };
    std::vector<LaneBenchRow> out;
    for (const auto& r : rows) {
      float got = 0;
      LaneBenchRow row;
      row.target = impl::IsaName(d.isa);
      row.lanes = r.L;
      row.n = n;
      row.ns_per_element = TimeNsPerElem(r.fn, x.data(), n, reps, &got);
      const float want = r.ref(x.data(), n);
      row.equals_reference = std::memcmp(&got, &want, 4) == 0;
      out.push_back(row);
    }
    return out;
  } catch (...) {
    Rethrow();
  }
}

}  // namespace onemodel
