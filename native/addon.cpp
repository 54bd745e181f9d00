// The npm package's native engine in node: an N-API addon (node-addon-api) over the C ABI
// (include/onemodel/onemodel_c.h). js/native.mjs builds the onnxruntime-node shaped API
// on it, as js/api.mjs does on the wasm module. Sessions are created and run on libuv's
// worker threads, so node's event loop stays free; every failure is a rejected promise or
// a thrown Error whose `code` is the engine's error name ("invalid_model", ...).
#include <napi.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "onemodel/onemodel_c.h"

namespace {

// The last failure on this thread without its "<code>: " prefix.
std::string LastMessage(OmStatus st) {
  std::string m = om_last_error();
  const std::string prefix = std::string(om_status_name(st)) + ": ";
  if (m.compare(0, prefix.size(), prefix) == 0) m.erase(0, prefix.size());
  return m;
}

Napi::Error TypedError(Napi::Env env, const std::string& code, const std::string& message) {
  Napi::Error e = Napi::Error::New(env, message);
  e.Set("code", Napi::String::New(env, code));
  return e;
}

// A failed C ABI call as a typed error (status and message captured on its thread).
struct Failure {
  OmStatus status = OM_OK;
  std::string message;
  void Take(OmStatus st) {
    status = st;
    if (st != OM_OK) message = LastMessage(st);
  }
  Napi::Error ToError(Napi::Env env) const { return TypedError(env, om_status_name(status), message); }
};

void ThrowIf(Napi::Env env, OmStatus st) {
  if (st != OM_OK) throw TypedError(env, om_status_name(st), LastMessage(st));
}

[[noreturn]] void BadArgument(Napi::Env env, const std::string& what) {
  throw TypedError(env, "invalid_argument", what);
}

struct OptionsDeleter {
  void operator()(OmSessionOptions* o) const { om_session_options_free(o); }
};
struct TensorDeleter {
  void operator()(OmTensor* t) const { om_tensor_free(t); }
};
struct RunOptionsDeleter {
  void operator()(OmRunOptions* o) const { om_run_options_free(o); }
};
using TensorPtr = std::unique_ptr<OmTensor, TensorDeleter>;

// A session shared by its JS object and the runs under way: freed when the last of them
// lets go (release() while a run is under way frees it when that run ends).
struct Holder {
  OmSession* s = nullptr;
  ~Holder() { om_session_free(s); }
};

uint64_t WholeNumber(Napi::Env env, const Napi::Value& v, const std::string& what) {
  if (!v.IsNumber()) BadArgument(env, what + " must be a number");
  const double d = v.As<Napi::Number>().DoubleValue();
  if (!(d >= 0) || d > 9007199254740991.0 || d != double(uint64_t(d))) {
    BadArgument(env, what + " must be a whole number >= 0");
  }
  return uint64_t(d);
}

std::vector<int64_t> Dims(Napi::Env env, const Napi::Value& v) {
  if (!v.IsArray()) BadArgument(env, "dims must be an array");
  const Napi::Array a = v.As<Napi::Array>();
  std::vector<int64_t> dims;
  for (uint32_t k = 0; k < a.Length(); ++k) dims.push_back(int64_t(WholeNumber(env, a.Get(k), "a dimension")));
  return dims;
}

// {elementType, dims, data: TypedArray} or {elementType: 8, dims, strings: string[]} as a
// new tensor holding a copy of the elements (the caller's buffer may change after run()).
TensorPtr ToTensor(Napi::Env env, const Napi::Object& o) {
  const auto type = OmElementType(o.Get("elementType").As<Napi::Number>().Int32Value());
  const std::vector<int64_t> dims = Dims(env, o.Get("dims"));
  OmTensor* t = nullptr;
  if (type == OM_STRING) {
    const Napi::Value sv = o.Get("strings");
    if (!sv.IsArray()) BadArgument(env, "a string tensor's strings must be an array");
    const Napi::Array a = sv.As<Napi::Array>();
    std::vector<std::string> values;
    for (uint32_t k = 0; k < a.Length(); ++k) values.push_back(a.Get(k).ToString().Utf8Value());
    std::vector<const char*> ptrs;
    for (const std::string& s : values) ptrs.push_back(s.c_str());
    ThrowIf(env, om_tensor_create_strings(ptrs.data(), ptrs.size(), dims.data(), dims.size(), &t));
  } else {
    const Napi::Value dv = o.Get("data");
    if (!dv.IsTypedArray()) BadArgument(env, "a tensor's data must be a typed array");
    const Napi::TypedArray ta = dv.As<Napi::TypedArray>();
    const auto* base = static_cast<const uint8_t*>(ta.ArrayBuffer().Data());
    const size_t bytes = ta.ByteLength();
    ThrowIf(env,
            om_tensor_create_copy(type, dims.data(), dims.size(), bytes ? base + ta.ByteOffset() : nullptr, bytes, &t));
  }
  return TensorPtr(t);
}

// A tensor to JS: {elementType, dims, data: ArrayBuffer} (the tensor's own memory, freed
// with the ArrayBuffer; a copy where external buffers are not allowed) or {..., strings}.
Napi::Object FromTensor(Napi::Env env, TensorPtr t) {
  Napi::Object o = Napi::Object::New(env);
  const OmElementType type = om_tensor_type(t.get());
  o.Set("elementType", Napi::Number::New(env, int(type)));
  Napi::Array dims = Napi::Array::New(env, om_tensor_rank(t.get()));
  for (size_t k = 0; k < om_tensor_rank(t.get()); ++k) {
    dims.Set(uint32_t(k), Napi::Number::New(env, double(om_tensor_dims(t.get())[k])));
  }
  o.Set("dims", dims);
  if (type == OM_STRING) {
    Napi::Array strings = Napi::Array::New(env, size_t(om_tensor_size(t.get())));
    for (int64_t i = 0; i < om_tensor_size(t.get()); ++i) {
      size_t n = 0;
      const char* s = om_tensor_string(t.get(), i, &n);
      strings.Set(uint32_t(i), Napi::String::New(env, s, n));
    }
    o.Set("strings", strings);
    return o;
  }
  const size_t bytes = om_tensor_byte_size(t.get());
  void* data = bytes ? om_tensor_mutable_data(t.get()) : nullptr;
  if (bytes && !data) ThrowIf(env, OM_OUT_OF_MEMORY);
  napi_value ab = nullptr;
  if (bytes) {
    OmTensor* raw = t.get();
    const napi_status st = napi_create_external_arraybuffer(
        env, data, bytes,
        [](napi_env e, void*, void* hint) {
          auto* tensor = static_cast<OmTensor*>(hint);
          int64_t adjusted = 0;
          napi_adjust_external_memory(e, -int64_t(om_tensor_byte_size(tensor)), &adjusted);
          om_tensor_free(tensor);
        },
        raw, &ab);
    if (st == napi_ok) {
      t.release();  // the ArrayBuffer's finalizer frees it
      Napi::MemoryManagement::AdjustExternalMemory(env, int64_t(bytes));
    } else {
      ab = nullptr;
    }
  }
  if (!ab) {
    Napi::ArrayBuffer copy = Napi::ArrayBuffer::New(env, bytes);
    if (bytes) std::memcpy(copy.Data(), data, bytes);
    ab = copy;
  }
  o.Set("data", Napi::Value(env, ab));
  return o;
}

// The session options js/native.mjs passes: {mode, threads, isa, profiling, freeDimensions:
// [[name, size]], limits: {max_*: n}, disabledPasses: [name], externalData: [{path, data}]}.
// The external data's bytes stay the caller's until the session is made: `keep` holds them.
std::unique_ptr<OmSessionOptions, OptionsDeleter> ReadOptions(Napi::Env env, const Napi::Object& js,
                                                              std::vector<Napi::ObjectReference>* keep) {
  OmSessionOptions* raw = nullptr;
  ThrowIf(env, om_session_options_create(&raw));
  std::unique_ptr<OmSessionOptions, OptionsDeleter> o(raw);
  if (js.Has("mode")) ThrowIf(env, om_session_options_set_mode(raw, js.Get("mode").ToString().Utf8Value().c_str()));
  if (js.Has("isa")) ThrowIf(env, om_session_options_set_isa(raw, js.Get("isa").ToString().Utf8Value().c_str()));
  if (js.Has("threads"))
    ThrowIf(env, om_session_options_set_threads(raw, int(WholeNumber(env, js.Get("threads"), "threads"))));
  if (js.Has("profiling")) {
    ThrowIf(env, om_session_options_set_profiling(raw, int(WholeNumber(env, js.Get("profiling"), "profiling"))));
  }
  if (js.Has("freeDimensions")) {
    const Napi::Array a = js.Get("freeDimensions").As<Napi::Array>();
    for (uint32_t k = 0; k < a.Length(); ++k) {
      const Napi::Array pair = a.Get(k).As<Napi::Array>();
      const std::string name = pair.Get(0u).ToString().Utf8Value();
      ThrowIf(env, om_session_options_set_free_dimension(raw, name.c_str(),
                                                         int64_t(WholeNumber(env, pair.Get(1u), "a free dimension"))));
    }
  }
  if (js.Has("limits")) {
    const Napi::Object limits = js.Get("limits").As<Napi::Object>();
    const Napi::Array names = limits.GetPropertyNames();
    for (uint32_t k = 0; k < names.Length(); ++k) {
      const std::string name = names.Get(k).ToString().Utf8Value();
      ThrowIf(env, om_session_options_set_limit(raw, name.c_str(), WholeNumber(env, limits.Get(name), name)));
    }
  }
  if (js.Has("disabledPasses")) {
    const Napi::Array a = js.Get("disabledPasses").As<Napi::Array>();
    for (uint32_t k = 0; k < a.Length(); ++k) {
      ThrowIf(env, om_session_options_disable_pass(raw, a.Get(k).ToString().Utf8Value().c_str()));
    }
  }
  if (js.Has("externalData")) {
    const Napi::Array a = js.Get("externalData").As<Napi::Array>();
    for (uint32_t k = 0; k < a.Length(); ++k) {
      const Napi::Object f = a.Get(k).As<Napi::Object>();
      if (!f.Get("data").IsTypedArray()) BadArgument(env, "externalData's data must be a Uint8Array");
      const Napi::TypedArray data = f.Get("data").As<Napi::TypedArray>();
      keep->push_back(Napi::Persistent(data.As<Napi::Object>()));
      const auto* base = static_cast<const uint8_t*>(data.ArrayBuffer().Data()) + data.ByteOffset();
      ThrowIf(env, om_session_options_add_external_data(raw, f.Get("path").ToString().Utf8Value().c_str(),
                                                        data.ByteLength() ? base : nullptr, data.ByteLength()));
    }
  }
  return o;
}

class SessionWrap;

// The addon's per-environment data: the Session class's constructor.
struct AddonData {
  Napi::FunctionReference session_class;
};

// Settles a promise from a worker thread's result: OnOK never throws into node (a throw
// there would end the process), it rejects instead.
class PromiseWorker : public Napi::AsyncWorker {
 public:
  PromiseWorker(Napi::Env env, const char* name)
      : Napi::AsyncWorker(env, name), deferred_(Napi::Promise::Deferred::New(env)) {}
  Napi::Promise Promise() const { return deferred_.Promise(); }

 protected:
  virtual Napi::Value Result() = 0;
  Failure failure_;

 private:
  void OnOK() override {
    Napi::Env env = Env();
    Napi::HandleScope scope(env);
    if (failure_.status != OM_OK) {
      deferred_.Reject(failure_.ToError(env).Value());
      return;
    }
    try {
      deferred_.Resolve(Result());
    } catch (const Napi::Error& e) {
      deferred_.Reject(e.Value());
    } catch (const std::bad_alloc&) {
      deferred_.Reject(TypedError(env, "out_of_memory", "out of memory while returning the result").Value());
    }
  }
  void OnError(const Napi::Error& e) override { deferred_.Reject(e.Value()); }

  Napi::Promise::Deferred deferred_;
};

class CreateWorker : public PromiseWorker {
 public:
  CreateWorker(Napi::Env env, std::string path, const uint8_t* bytes, size_t size,
               std::unique_ptr<OmSessionOptions, OptionsDeleter> options, std::vector<Napi::ObjectReference> keep)
      : PromiseWorker(env, "onemodel.createSession"),
        path_(std::move(path)),
        bytes_(bytes),
        size_(size),
        options_(std::move(options)),
        keep_(std::move(keep)) {}

 private:
  void Execute() override {
    OmSession* s = nullptr;
    failure_.Take(bytes_ ? om_session_create_from_bytes(bytes_, size_, options_.get(), &s)
                         : om_session_create(path_.c_str(), options_.get(), &s));
    holder_ = std::make_shared<Holder>();
    holder_->s = s;
  }
  Napi::Value Result() override;

  std::string path_;
  const uint8_t* bytes_;
  size_t size_;
  std::unique_ptr<OmSessionOptions, OptionsDeleter> options_;
  std::vector<Napi::ObjectReference> keep_;  // the model's and external data's buffers
  std::shared_ptr<Holder> holder_;
};

class RunWorker : public PromiseWorker {
 public:
  RunWorker(Napi::Env env, std::shared_ptr<Holder> holder, std::vector<std::string> in_names,
            std::vector<TensorPtr> inputs, std::vector<std::string> out_names, double time_limit_ms)
      : PromiseWorker(env, "onemodel.run"),
        holder_(std::move(holder)),
        in_names_(std::move(in_names)),
        inputs_(std::move(inputs)),
        out_names_(std::move(out_names)),
        time_limit_ms_(time_limit_ms) {}

 private:
  void Execute() override {
    std::unique_ptr<OmRunOptions, RunOptionsDeleter> ro;
    if (time_limit_ms_ > 0) {
      OmRunOptions* raw = nullptr;
      failure_.Take(om_run_options_create(&raw));
      ro.reset(raw);
      if (failure_.status == OM_OK) failure_.Take(om_run_options_set_time_limit_ms(raw, time_limit_ms_));
      if (failure_.status != OM_OK) return;
    }
    std::vector<const char*> in_names, out_names;
    std::vector<const OmTensor*> inputs;
    for (size_t k = 0; k < inputs_.size(); ++k) {
      in_names.push_back(in_names_[k].c_str());
      inputs.push_back(inputs_[k].get());
    }
    for (const std::string& n : out_names_) out_names.push_back(n.c_str());
    const size_t n_out = out_names_.empty() ? om_session_output_count(holder_->s) : out_names_.size();
    std::vector<OmTensor*> outs(n_out, nullptr);
    failure_.Take(om_session_run_with_options(holder_->s, ro.get(), in_names.data(), inputs.data(), inputs.size(),
                                              out_names_.empty() ? nullptr : out_names.data(), n_out, outs.data()));
    for (OmTensor* t : outs) outputs_.emplace_back(t);
    inputs_.clear();  // the copies go now, not when the promise is collected
  }

  Napi::Value Result() override {
    Napi::Env env = Env();
    Napi::Array out = Napi::Array::New(env, outputs_.size());
    for (size_t k = 0; k < outputs_.size(); ++k) out.Set(uint32_t(k), FromTensor(env, std::move(outputs_[k])));
    return out;
  }

  std::shared_ptr<Holder> holder_;
  std::vector<std::string> in_names_;
  std::vector<TensorPtr> inputs_;
  std::vector<std::string> out_names_;
  double time_limit_ms_;
  std::vector<TensorPtr> outputs_;
};

// A value's declared type and shape: {name, isTensor, elementType, hasShape, shape}, the
// shape's dimensions numbers when fixed and their symbolic names ("" for none) when not.
Napi::Object Info(Napi::Env env, const OmSession* s, size_t i, bool input) {
  OmElementType type = OM_UNDEFINED;
  int has_shape = 0;
  size_t rank = 0;
  const int64_t* dims = nullptr;
  ThrowIf(env, input ? om_session_input_info(s, i, &type, &has_shape, &rank, &dims)
                     : om_session_output_info(s, i, &type, &has_shape, &rank, &dims));
  Napi::Object o = Napi::Object::New(env);
  o.Set("name", input ? om_session_input_name(s, i) : om_session_output_name(s, i));
  o.Set("isTensor", type != OM_UNDEFINED);
  o.Set("elementType", int(type));
  o.Set("hasShape", has_shape != 0);
  Napi::Array shape = Napi::Array::New(env, rank);
  for (size_t d = 0; d < rank; ++d) {
    const char* name = input ? om_session_input_dim_name(s, i, d) : om_session_output_dim_name(s, i, d);
    shape.Set(uint32_t(d), dims[d] >= 0 ? Napi::Value(Napi::Number::New(env, double(dims[d])))
                                        : Napi::Value(Napi::String::New(env, name ? name : "")));
  }
  o.Set("shape", shape);
  return o;
}

// The JS Session: made by createSession only.
class SessionWrap : public Napi::ObjectWrap<SessionWrap> {
 public:
  static Napi::Function Define(Napi::Env env) {
    return DefineClass(
        env, "Session",
        {InstanceMethod("inputs", &SessionWrap::Inputs), InstanceMethod("outputs", &SessionWrap::Outputs),
         InstanceMethod("target", &SessionWrap::Target), InstanceMethod("run", &SessionWrap::Run),
         InstanceMethod("lastProfile", &SessionWrap::LastProfile), InstanceMethod("release", &SessionWrap::Release)});
  }

  explicit SessionWrap(const Napi::CallbackInfo& info) : Napi::ObjectWrap<SessionWrap>(info) {
    if (info.Length() != 1 || !info[0].IsExternal()) {
      throw TypedError(info.Env(), "invalid_argument", "Session objects are made by createSession");
    }
    holder_ = *info[0].As<Napi::External<std::shared_ptr<Holder>>>().Data();
  }

 private:
  const OmSession* Live(Napi::Env env) const {
    if (!holder_) throw TypedError(env, "invalid_argument", "the session was released");
    return holder_->s;
  }
  Napi::Value List(const Napi::CallbackInfo& info, bool input) {
    const OmSession* s = Live(info.Env());
    const size_t n = input ? om_session_input_count(s) : om_session_output_count(s);
    Napi::Array a = Napi::Array::New(info.Env(), n);
    for (size_t i = 0; i < n; ++i) a.Set(uint32_t(i), Info(info.Env(), s, i, input));
    return a;
  }
  Napi::Value Inputs(const Napi::CallbackInfo& info) { return List(info, true); }
  Napi::Value Outputs(const Napi::CallbackInfo& info) { return List(info, false); }
  Napi::Value Target(const Napi::CallbackInfo& info) {
    return Napi::String::New(info.Env(), om_session_target(Live(info.Env())));
  }
  Napi::Value LastProfile(const Napi::CallbackInfo& info) {
    return Napi::String::New(info.Env(), om_session_last_profile(Live(info.Env())));
  }
  Napi::Value Release(const Napi::CallbackInfo& info) {
    holder_.reset();  // runs under way keep it until they end
    return info.Env().Undefined();
  }

  // run(inputs: [{name, elementType, dims, data | strings}], outputNames: string[] | null,
  // timeLimitMs) -> Promise<[{elementType, dims, data | strings}]> in the order asked
  // (every output in graph order when outputNames is null).
  Napi::Value Run(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    Live(env);
    if (info.Length() < 3 || !info[0].IsArray() || !info[2].IsNumber()) {
      BadArgument(env, "run(inputs, outputNames, timeLimitMs)");
    }
    const Napi::Array ins = info[0].As<Napi::Array>();
    std::vector<std::string> names;
    std::vector<TensorPtr> tensors;
    for (uint32_t k = 0; k < ins.Length(); ++k) {
      const Napi::Object o = ins.Get(k).As<Napi::Object>();
      names.push_back(o.Get("name").ToString().Utf8Value());
      tensors.push_back(ToTensor(env, o));
    }
    std::vector<std::string> outs;
    if (info[1].IsArray()) {
      const Napi::Array a = info[1].As<Napi::Array>();
      for (uint32_t k = 0; k < a.Length(); ++k) outs.push_back(a.Get(k).ToString().Utf8Value());
    }
    auto* w = new RunWorker(env, holder_, std::move(names), std::move(tensors), std::move(outs),
                            info[2].As<Napi::Number>().DoubleValue());
    Napi::Promise p = w->Promise();
    w->Queue();
    return p;
  }

  std::shared_ptr<Holder> holder_;
};

Napi::Value CreateWorker::Result() {
  Napi::Env env = Env();
  auto* data = env.GetInstanceData<AddonData>();
  auto held = std::make_unique<std::shared_ptr<Holder>>(holder_);
  Napi::Object s = data->session_class.New({Napi::External<std::shared_ptr<Holder>>::New(env, held.get())});
  return s;
}

// createSession(pathOrBytes, options) -> Promise<Session>. A Uint8Array is read on the
// worker thread: the caller must not change it until the promise settles.
Napi::Value CreateSession(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 2 || !info[1].IsObject()) BadArgument(env, "createSession(pathOrBytes, options)");
  std::vector<Napi::ObjectReference> keep;
  auto options = ReadOptions(env, info[1].As<Napi::Object>(), &keep);
  std::string path;
  const uint8_t* bytes = nullptr;
  size_t size = 0;
  if (info[0].IsString()) {
    path = info[0].As<Napi::String>().Utf8Value();
  } else if (info[0].IsTypedArray()) {
    const Napi::TypedArray ta = info[0].As<Napi::TypedArray>();
    keep.push_back(Napi::Persistent(ta.As<Napi::Object>()));
    static const uint8_t kEmpty = 0;
    bytes = ta.ByteLength() ? static_cast<const uint8_t*>(ta.ArrayBuffer().Data()) + ta.ByteOffset() : &kEmpty;
    size = ta.ByteLength();
  } else {
    BadArgument(env, "createSession takes a path or a Uint8Array");
  }
  auto* w = new CreateWorker(env, std::move(path), bytes, size, std::move(options), std::move(keep));
  Napi::Promise p = w->Promise();
  w->Queue();
  return p;
}

// goldenHash(tensors) -> the exact-mode golden hash (64 hex digits) of the tensors in order.
Napi::Value GoldenHash(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsArray()) BadArgument(env, "goldenHash(tensors)");
  const Napi::Array a = info[0].As<Napi::Array>();
  std::vector<TensorPtr> tensors;
  std::vector<const OmTensor*> ptrs;
  for (uint32_t k = 0; k < a.Length(); ++k) {
    tensors.push_back(ToTensor(env, a.Get(k).As<Napi::Object>()));
    ptrs.push_back(tensors.back().get());
  }
  char out[65] = {0};
  ThrowIf(env, om_golden_hash(ptrs.data(), ptrs.size(), out));
  return Napi::String::New(env, out);
}

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  auto* data = new AddonData();
  data->session_class = Napi::Persistent(SessionWrap::Define(env));
  env.SetInstanceData(data);
  exports.Set("version", Napi::String::New(env, om_version()));
  exports.Set("bestTarget", Napi::String::New(env, om_best_target()));
  exports.Set("createSession", Napi::Function::New(env, CreateSession, "createSession"));
  exports.Set("goldenHash", Napi::Function::New(env, GoldenHash, "goldenHash"));
  return exports;
}

}  // namespace

NODE_API_MODULE(onemodel, Init)
