// The C ABI (include/onemodel/onemodel_c.h) over the public C++ API: handles own C++
// objects; every exception becomes a status code and the thread's last error message.
#include "onemodel/onemodel_c.h"

#include <cstdint>
#include <cstring>
#include <new>
#include <string>
#include <vector>

#include "core/per_thread.h"
#include "onemodel/onemodel.h"

struct OmSessionOptions {
  onemodel::SessionOptions o;
};

struct OmSession {
  onemodel::Session s;
  std::string target;
};

struct OmTensor {
  onemodel::Tensor t;
};

struct OmRunOptions {
  onemodel::RunOptions o;
};

namespace {

// The thread's last error message.
std::string& LastError() { return ONEMODEL_PER_THREAD(std::string); }

OmStatus Fail(OmStatus st, const std::string& what) {
  LastError() = what;
  return st;
}

// Runs f, returning OM_OK, or the status and message of what it threw.
template <typename F>
OmStatus Guard(F&& f) {
  try {
    f();
    return OM_OK;
  } catch (const onemodel::Error& e) {
    return Fail(OmStatus(int(e.code())), e.what());
  } catch (const std::bad_alloc&) {
    return Fail(OM_OUT_OF_MEMORY, "out_of_memory: out of memory (an allocation was refused)");
  } catch (const std::exception& e) {
    return Fail(OM_INTERNAL, std::string("internal: ") + e.what());
  } catch (...) {
    return Fail(OM_INTERNAL, "internal: unknown exception");
  }
}

#define OM_REQUIRE(cond, name)                                                           \
  do {                                                                                   \
    if (!(cond)) return Fail(OM_INVALID_ARGUMENT, "invalid_argument: " name " is NULL"); \
  } while (0)

std::vector<int64_t> Dims(const int64_t* dims, size_t rank) {
  if (rank && !dims) throw onemodel::Error(onemodel::ErrorCode::kInvalidArgument, "dims is NULL with rank > 0");
  return std::vector<int64_t>(dims, dims + rank);
}

OmStatus Info(const std::vector<onemodel::ValueInfo>& list, size_t i, OmElementType* type, int* has_shape, size_t* rank,
              const int64_t** dims) {
  if (i >= list.size()) {
    return Fail(OM_INVALID_ARGUMENT, "invalid_argument: index " + std::to_string(i) + " is past the last (" +
                                         std::to_string(list.size()) + " values)");
  }
  const onemodel::ValueInfo& v = list[i];
  const bool tensor = v.kind == onemodel::ValueInfo::Kind::kTensor;
  if (type) *type = tensor ? OmElementType(int32_t(v.type)) : OM_UNDEFINED;
  if (has_shape) *has_shape = tensor && v.has_shape;
  if (rank) *rank = tensor && v.has_shape ? v.shape.size() : 0;
  if (dims) *dims = tensor && v.has_shape ? v.shape.data() : nullptr;
  return OM_OK;
}

// Dimension d's symbolic name ("" when it has none), NULL past the shape's rank.
const char* DimName(const onemodel::ValueInfo& v, size_t d) {
  if (d >= v.shape.size()) return nullptr;
  return d < v.symbolic.size() ? v.symbolic[d].c_str() : "";
}

}  // namespace

extern "C" {

const char* om_version(void) { return onemodel::Version(); }

const char* om_status_name(OmStatus status) {
  if (status == OM_OK) return "ok";
  return onemodel::ErrorCodeName(onemodel::ErrorCode(int(status)));
}

const char* om_last_error(void) { return LastError().c_str(); }

const char* om_best_target(void) {
  static const std::string best = [] {
    try {
      return onemodel::BestTarget();
    } catch (...) {
      return std::string("ref");
    }
  }();
  return best.c_str();
}

OmStatus om_session_options_create(OmSessionOptions** out) {
  OM_REQUIRE(out, "out");
  *out = nullptr;
  return Guard([&] { *out = new OmSessionOptions(); });
}

void om_session_options_free(OmSessionOptions* options) { delete options; }

OmStatus om_session_options_set_mode(OmSessionOptions* o, const char* mode) {
  OM_REQUIRE(o, "options");
  OM_REQUIRE(mode, "mode");
  if (std::strcmp(mode, "exact") == 0)
    o->o.mode = onemodel::Mode::kExact;
  else if (std::strcmp(mode, "fast") == 0)
    o->o.mode = onemodel::Mode::kFast;
  else
    return Fail(OM_INVALID_ARGUMENT, std::string("invalid_argument: mode takes exact or fast, not '") + mode + "'");
  return OM_OK;
}

OmStatus om_session_options_set_threads(OmSessionOptions* o, int threads) {
  OM_REQUIRE(o, "options");
  if (threads < 0 || threads > 1024) {
    return Fail(OM_INVALID_ARGUMENT,
                "invalid_argument: threads must be 0 (every core) or 1 .. 1024, got " + std::to_string(threads));
  }
  o->o.threads = threads;
  return OM_OK;
}

OmStatus om_session_options_set_isa(OmSessionOptions* o, const char* isa) {
  OM_REQUIRE(o, "options");
  o->o.isa = isa ? isa : "";
  return OM_OK;
}

OmStatus om_session_options_set_prepack(OmSessionOptions* o, int on) {
  OM_REQUIRE(o, "options");
  o->o.prepack = on != 0;
  return OM_OK;
}

OmStatus om_session_options_set_avx512_tile_bits(OmSessionOptions* o, int bits) {
  OM_REQUIRE(o, "options");
  o->o.avx512_tile_bits = bits;
  return OM_OK;
}

OmStatus om_session_options_set_memory_plan(OmSessionOptions* o, int on) {
  OM_REQUIRE(o, "options");
  o->o.memory_plan = on != 0;
  return OM_OK;
}

OmStatus om_session_options_disable_pass(OmSessionOptions* o, const char* pass) {
  OM_REQUIRE(o, "options");
  OM_REQUIRE(pass, "pass");
  o->o.disabled_passes.push_back(pass);
  return OM_OK;
}

OmStatus om_session_options_set_profiling(OmSessionOptions* o, int level) {
  OM_REQUIRE(o, "options");
  if (level < 0 || level > 2) {
    return Fail(OM_INVALID_ARGUMENT, "invalid_argument: profiling takes 0, 1 or 2, got " + std::to_string(level));
  }
  o->o.profiling = level == 0   ? onemodel::Profiling::kOff
                   : level == 1 ? onemodel::Profiling::kByOpType
                                : onemodel::Profiling::kByNode;
  return OM_OK;
}

OmStatus om_session_options_set_free_dimension(OmSessionOptions* o, const char* name, int64_t size) {
  OM_REQUIRE(o, "options");
  OM_REQUIRE(name, "name");
  o->o.free_dimension_overrides[name] = size;
  return OM_OK;
}

OmStatus om_session_options_add_external_data(OmSessionOptions* o, const char* path, const void* data, size_t size) {
  OM_REQUIRE(o, "options");
  OM_REQUIRE(path, "path");
  OM_REQUIRE(data || size == 0, "data");
  return Guard([&] { o->o.external_data.push_back(onemodel::ExternalData{path, data, size, nullptr}); });
}

OmStatus om_session_create(const char* path, const OmSessionOptions* options, OmSession** out) {
  OM_REQUIRE(out, "out");
  *out = nullptr;
  OM_REQUIRE(path, "path");
  return Guard([&] {
    onemodel::Session s(path, options ? options->o : onemodel::SessionOptions{});
    std::string target = s.target();
    *out = new OmSession{std::move(s), std::move(target)};
  });
}

OmStatus om_session_create_from_bytes(const void* data, size_t size, const OmSessionOptions* options, OmSession** out) {
  OM_REQUIRE(out, "out");
  *out = nullptr;
  OM_REQUIRE(data || size == 0, "data");
  return Guard([&] {
    onemodel::Session s = onemodel::Session::FromBytes(data, size, options ? options->o : onemodel::SessionOptions{});
    std::string target = s.target();
    *out = new OmSession{std::move(s), std::move(target)};
  });
}

void om_session_free(OmSession* session) { delete session; }

size_t om_session_input_count(const OmSession* s) { return s ? s->s.inputs().size() : 0; }
size_t om_session_output_count(const OmSession* s) { return s ? s->s.outputs().size() : 0; }

const char* om_session_input_name(const OmSession* s, size_t i) {
  return s && i < s->s.inputs().size() ? s->s.inputs()[i].name.c_str() : nullptr;
}
const char* om_session_output_name(const OmSession* s, size_t i) {
  return s && i < s->s.outputs().size() ? s->s.outputs()[i].name.c_str() : nullptr;
}

OmStatus om_session_input_info(const OmSession* s, size_t i, OmElementType* type, int* has_shape, size_t* rank,
                               const int64_t** dims) {
  OM_REQUIRE(s, "session");
  return Info(s->s.inputs(), i, type, has_shape, rank, dims);
}

OmStatus om_session_output_info(const OmSession* s, size_t i, OmElementType* type, int* has_shape, size_t* rank,
                                const int64_t** dims) {
  OM_REQUIRE(s, "session");
  return Info(s->s.outputs(), i, type, has_shape, rank, dims);
}

const char* om_session_input_dim_name(const OmSession* s, size_t i, size_t d) {
  if (!s || i >= s->s.inputs().size()) return nullptr;
  return DimName(s->s.inputs()[i], d);
}

const char* om_session_output_dim_name(const OmSession* s, size_t i, size_t d) {
  if (!s || i >= s->s.outputs().size()) return nullptr;
  return DimName(s->s.outputs()[i], d);
}

const char* om_session_target(const OmSession* s) { return s ? s->target.c_str() : nullptr; }

const char* om_session_last_profile(const OmSession* s) {
  auto& text = ONEMODEL_PER_THREAD(std::string);
  text.clear();
  if (s) {
    (void)Guard([&] {
      const onemodel::RunProfile p = s->s.last_profile();
      if (!p.entries.empty()) text = p.ToString();
    });
  }
  return text.c_str();
}

OmStatus om_session_options_set_limit(OmSessionOptions* o, const char* name, uint64_t value) {
  OM_REQUIRE(o, "options");
  OM_REQUIRE(name, "name");
  const std::string n = name;
  if (n == "max_model_bytes") {
    o->o.max_model_bytes = value;
  } else if (n == "max_tensor_bytes") {
    o->o.max_tensor_bytes = value;
  } else if (n == "max_session_bytes") {
    o->o.max_session_bytes = value;
  } else if (n == "max_graph_depth" || n == "max_nodes") {
    const uint64_t cap = n == "max_graph_depth" ? uint64_t(INT32_MAX) : uint64_t(INT64_MAX);
    if (value > cap) {
      return Fail(OM_INVALID_ARGUMENT, "invalid_argument: " + n + " takes at most " + std::to_string(cap) + ", got " +
                                           std::to_string(value));
    }
    if (n == "max_graph_depth")
      o->o.max_graph_depth = int(value);
    else
      o->o.max_nodes = int64_t(value);
  } else {
    return Fail(OM_INVALID_ARGUMENT, "invalid_argument: unknown limit '" + n +
                                         "' (limits: max_model_bytes, max_tensor_bytes, max_session_bytes, "
                                         "max_graph_depth, max_nodes)");
  }
  return OM_OK;
}

OmStatus om_run_options_create(OmRunOptions** out) {
  OM_REQUIRE(out, "out");
  *out = nullptr;
  return Guard([&] { *out = new OmRunOptions(); });
}

void om_run_options_free(OmRunOptions* o) { delete o; }

OmStatus om_run_options_terminate(OmRunOptions* o) {
  OM_REQUIRE(o, "run options");
  o->o.Terminate();
  return OM_OK;
}

OmStatus om_run_options_reset(OmRunOptions* o) {
  OM_REQUIRE(o, "run options");
  o->o.Reset();
  return OM_OK;
}

OmStatus om_run_options_set_time_limit_ms(OmRunOptions* o, double ms) {
  OM_REQUIRE(o, "run options");
  if (!(ms >= 0)) {
    return Fail(OM_INVALID_ARGUMENT,
                "invalid_argument: the time limit must be >= 0 ms (0: none), got " + std::to_string(ms));
  }
  o->o.time_limit_ms = ms;
  return OM_OK;
}

OmStatus om_session_run(const OmSession* s, const char* const* input_names, const OmTensor* const* inputs,
                        size_t n_inputs, const char* const* output_names, size_t n_outputs, OmTensor** outputs) {
  return om_session_run_with_options(s, nullptr, input_names, inputs, n_inputs, output_names, n_outputs, outputs);
}

OmStatus om_session_run_with_options(const OmSession* s, const OmRunOptions* run_options,
                                     const char* const* input_names, const OmTensor* const* inputs, size_t n_inputs,
                                     const char* const* output_names, size_t n_outputs, OmTensor** outputs) {
  OM_REQUIRE(s, "session");
  OM_REQUIRE(outputs || n_outputs == 0, "outputs");
  for (size_t k = 0; k < n_outputs; ++k) outputs[k] = nullptr;
  OM_REQUIRE((input_names && inputs) || n_inputs == 0, "inputs");
  if (!output_names && n_outputs != s->s.outputs().size()) {
    return Fail(OM_INVALID_ARGUMENT, "invalid_argument: without output names, n_outputs must be the model's " +
                                         std::to_string(s->s.outputs().size()) + " outputs, got " +
                                         std::to_string(n_outputs));
  }
  std::vector<OmTensor*> made;
  const OmStatus st = Guard([&] {
    std::vector<onemodel::NamedValue> feeds;
    feeds.reserve(n_inputs);
    for (size_t k = 0; k < n_inputs; ++k) {
      if (!input_names[k] || !inputs[k]) {
        throw onemodel::Error(onemodel::ErrorCode::kInvalidArgument,
                              "input " + std::to_string(k) + ": its name or tensor is NULL");
      }
      feeds.push_back({input_names[k], inputs[k]->t});
    }
    std::vector<std::string> names;
    for (size_t k = 0; output_names && k < n_outputs; ++k) {
      if (!output_names[k])
        throw onemodel::Error(onemodel::ErrorCode::kInvalidArgument, "output name " + std::to_string(k) + " is NULL");
      names.push_back(output_names[k]);
    }
    std::vector<onemodel::NamedValue> res =
        run_options ? s->s.Run(feeds, names, run_options->o) : s->s.Run(feeds, names);
    for (auto& nv : res) {
      if (!nv.value.is_tensor()) {
        throw onemodel::Error(onemodel::ErrorCode::kTypeMismatch,
                              "output '" + nv.name + "' is a sequence or optional, which the C ABI does not return");
      }
    }
    for (auto& nv : res) made.push_back(new OmTensor{std::move(nv.value.tensor())});
  });
  if (st != OM_OK) {
    for (OmTensor* t : made) delete t;
    return st;
  }
  for (size_t k = 0; k < n_outputs; ++k) outputs[k] = made[k];
  return OM_OK;
}

OmStatus om_tensor_create(OmElementType type, const int64_t* dims, size_t rank, OmTensor** out) {
  OM_REQUIRE(out, "out");
  *out = nullptr;
  return Guard([&] { *out = new OmTensor{onemodel::Tensor(onemodel::ElementType(int32_t(type)), Dims(dims, rank))}; });
}

OmStatus om_tensor_create_copy(OmElementType type, const int64_t* dims, size_t rank, const void* data, size_t bytes,
                               OmTensor** out) {
  OM_REQUIRE(out, "out");
  *out = nullptr;
  return Guard([&] {
    *out =
        new OmTensor{onemodel::Tensor::FromBytes(onemodel::ElementType(int32_t(type)), Dims(dims, rank), data, bytes)};
  });
}

OmStatus om_tensor_create_view(OmElementType type, const int64_t* dims, size_t rank, void* data, size_t bytes,
                               OmTensor** out) {
  OM_REQUIRE(out, "out");
  *out = nullptr;
  return Guard([&] {
    *out = new OmTensor{onemodel::Tensor::View(onemodel::ElementType(int32_t(type)), Dims(dims, rank), data, bytes)};
  });
}

OmStatus om_tensor_create_strings(const char* const* values, size_t count, const int64_t* dims, size_t rank,
                                  OmTensor** out) {
  OM_REQUIRE(out, "out");
  *out = nullptr;
  OM_REQUIRE(values || count == 0, "values");
  return Guard([&] {
    std::vector<std::string> v;
    for (size_t k = 0; k < count; ++k) {
      if (!values[k])
        throw onemodel::Error(onemodel::ErrorCode::kInvalidArgument, "string " + std::to_string(k) + " is NULL");
      v.emplace_back(values[k]);
    }
    *out = new OmTensor{onemodel::Tensor::FromStrings(std::move(v), Dims(dims, rank))};
  });
}

void om_tensor_free(OmTensor* t) { delete t; }

OmElementType om_tensor_type(const OmTensor* t) { return t ? OmElementType(int32_t(t->t.type())) : OM_UNDEFINED; }
size_t om_tensor_rank(const OmTensor* t) { return t ? t->t.shape().size() : 0; }
const int64_t* om_tensor_dims(const OmTensor* t) { return t ? t->t.shape().data() : nullptr; }
int64_t om_tensor_size(const OmTensor* t) { return t ? t->t.size() : 0; }
size_t om_tensor_byte_size(const OmTensor* t) { return t ? t->t.byte_size() : 0; }
const void* om_tensor_data(const OmTensor* t) { return t ? t->t.data() : nullptr; }

void* om_tensor_mutable_data(OmTensor* t) {
  if (!t) return nullptr;
  void* p = nullptr;
  if (Guard([&] { p = t->t.mutable_data(); }) != OM_OK) return nullptr;
  return p;
}

const char* om_tensor_string(const OmTensor* t, int64_t i, size_t* length) {
  if (!t || t->t.type() != onemodel::ElementType::kString || i < 0 || i >= t->t.size()) return nullptr;
  const std::string& s = t->t.strings()[size_t(i)];
  if (length) *length = s.size();
  return s.c_str();
}

OmStatus om_golden_hash(const OmTensor* const* tensors, size_t n, char out[65]) {
  OM_REQUIRE(out, "out");
  out[0] = 0;
  OM_REQUIRE(tensors || n == 0, "tensors");
  return Guard([&] {
    onemodel::GoldenHasher h;
    for (size_t k = 0; k < n; ++k) {
      if (!tensors[k])
        throw onemodel::Error(onemodel::ErrorCode::kInvalidArgument, "tensor " + std::to_string(k) + " is NULL");
      h.Add(tensors[k]->t);
    }
    const std::string d = h.HexDigest();
    std::memcpy(out, d.c_str(), 65);
  });
}

OmStatus om_npy_load(const char* path, OmTensor** out) {
  OM_REQUIRE(out, "out");
  *out = nullptr;
  OM_REQUIRE(path, "path");
  return Guard([&] { *out = new OmTensor{onemodel::LoadNpy(path)}; });
}

OmStatus om_npy_save(const char* path, const OmTensor* t) {
  OM_REQUIRE(path, "path");
  OM_REQUIRE(t, "tensor");
  return Guard([&] { onemodel::SaveNpy(path, t->t); });
}

}  // extern "C"
