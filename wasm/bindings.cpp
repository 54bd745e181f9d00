// Embind bindings: the wasm module's JS surface, over the public API (onemodel.h) and
// the CLI. No logic here beyond moving values across: js/ builds the onnxruntime-web
// shaped API on top (js/api.mjs).
#include <emscripten/bind.h>
#include <emscripten/emscripten.h>

#include <emscripten/heap.h>
#include <malloc.h>

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "cli.h"
#include "onemodel/onemodel.h"

namespace {

using emscripten::val;

// stderr that reaches the host as it is written (each flush), so long commands show
// progress: node's process.stderr, or the page's console. It also keeps all of it.
class LiveErr : public std::stringbuf {
 protected:
  int sync() override {
    const std::string s = str();
    if (s.size() > shown_) {
      const std::string part = s.substr(shown_);
      shown_ = s.size();
      // JavaScript: clang-format leaves it alone.
      // clang-format off
      EM_ASM({
        const t = UTF8ToString($0);
        if (typeof process !== 'undefined' && process.stderr) process.stderr.write(t);
        else console.log(t);
      }, part.c_str());
      // clang-format on
    }
    return 0;
  }

 private:
  size_t shown_ = 0;
};

// Runs the CLI with args; returns {code, stdout, stderr}. stderr has also been written
// to the host as the command ran.
val RunCliJs(const std::vector<std::string>& args) {
  std::ostringstream out;
  LiveErr errbuf;
  std::ostream err(&errbuf);
  const int code = onemodel::cli::RunCli(args, out, err);
  err.flush();
  val r = val::object();
  r.set("code", code);
  r.set("stdout", out.str());
  r.set("stderr", errbuf.str());
  return r;
}

val ErrorValue(const std::string& code, const std::string& message) {
  val e = val::object();
  e.set("code", code);
  e.set("message", message);
  val r = val::object();
  r.set("error", e);
  return r;
}

// Runs f() -> val; an onemodel::Error (or any exception) becomes {error: {code, message}}
// for the JS side to throw as an Error with that code.
template <typename F>
val Guarded(F&& f) {
  try {
    return f();
  } catch (const onemodel::Error& e) {
    return ErrorValue(onemodel::ErrorCodeName(e.code()), e.message());
  } catch (const std::bad_alloc&) {
    return ErrorValue("out_of_memory", "out of wasm memory (an allocation was refused)");
  } catch (const std::exception& e) {
    return ErrorValue("internal", e.what());
  }
}

val InfoValue(const onemodel::ValueInfo& v) {
  val o = val::object();
  o.set("name", v.name);
  o.set("isTensor", v.kind == onemodel::ValueInfo::Kind::kTensor);
  o.set("elementType", int(v.type));
  o.set("hasShape", v.has_shape);
  val shape = val::array();
  for (size_t k = 0; k < v.shape.size(); ++k) {
    if (v.shape[k] >= 0)
      shape.call<void>("push", double(v.shape[k]));
    else
      shape.call<void>("push", k < v.symbolic.size() ? v.symbolic[k] : std::string());
  }
  o.set("shape", shape);
  return o;
}

std::vector<int64_t> Dims(const val& dims) {
  std::vector<int64_t> d;
  const int n = dims["length"].as<int>();
  for (int k = 0; k < n; ++k) d.push_back(int64_t(dims[k].as<double>()));
  return d;
}

// Tensors from JS: [{name, elementType, dims, ptr, bytes}] views of wasm memory the JS
// side filled (no second copy), or [{name, elementType: 8, dims, strings}].
std::vector<onemodel::NamedValue> Values(const val& inputs) {
  std::vector<onemodel::NamedValue> feeds;
  for (int k = 0; k < inputs["length"].as<int>(); ++k) {
    const val in = inputs[k];
    const auto type = onemodel::ElementType(in["elementType"].as<int>());
    std::vector<int64_t> dims = Dims(in["dims"]);
    if (type == onemodel::ElementType::kString) {
      std::vector<std::string> strings;
      const val js = in["strings"];
      for (int i = 0; i < js["length"].as<int>(); ++i) strings.push_back(js[i].as<std::string>());
      feeds.push_back(
          {in["name"].as<std::string>(), onemodel::Tensor::FromStrings(std::move(strings), std::move(dims))});
    } else {
      void* p = reinterpret_cast<void*>(in["ptr"].as<uintptr_t>());
      feeds.push_back(
          {in["name"].as<std::string>(), onemodel::Tensor::View(type, std::move(dims), p, in["bytes"].as<size_t>())});
    }
  }
  return feeds;
}

// The exact-mode golden hash of the tensors in order: {hash} or {error}.
val GoldenHashJs(val tensors) {
  return Guarded([&] {
    val r = val::object();
    r.set("hash", onemodel::GoldenHash(Values(tensors)));
    return r;
  });
}

// The session options js/api.mjs passes (sessionOptions there), read into o.
void ReadOptions(const val& options, onemodel::SessionOptions* o) {
  if (options["mode"].as<std::string>() == "fast") o->mode = onemodel::Mode::kFast;
  o->isa = options["isa"].as<std::string>();
  o->profiling = options["profiling"].as<bool>() ? onemodel::Profiling::kByOpType : onemodel::Profiling::kOff;
  const val names = options["freeDimensionNames"];
  const val sizes = options["freeDimensionSizes"];
  for (int k = 0; k < names["length"].as<int>(); ++k) {
    o->free_dimension_overrides[names[k].as<std::string>()] = int64_t(sizes[k].as<double>());
  }
  const val limits = options["limits"];  // numbers >= 0, checked by js/api.mjs
  if (!limits.isUndefined()) {
    o->max_model_bytes = uint64_t(limits["maxModelBytes"].as<double>());
    o->max_tensor_bytes = uint64_t(limits["maxTensorBytes"].as<double>());
    o->max_session_bytes = uint64_t(limits["maxSessionBytes"].as<double>());
    o->max_graph_depth = int(limits["maxGraphDepth"].as<double>());
    o->max_nodes = int64_t(limits["maxNodes"].as<double>());
  }
}

// Takes ownership of the malloc'ed external-data buffers in `files` ([{path, ptr,
// size}] or undefined) first, so that nothing can leak them, then lists them in o.
void TakeExternal(const val& files, onemodel::SessionOptions* o) {
  if (files.isUndefined() || files.isNull()) return;
  const int n = files["length"].as<int>();
  std::vector<std::shared_ptr<void>> owned;
  for (int k = 0; k < n; ++k) {
    owned.emplace_back(reinterpret_cast<void*>(uintptr_t(files[k]["ptr"].as<double>())), std::free);
  }
  for (int k = 0; k < n; ++k) {
    o->external_data.push_back(onemodel::ExternalData{files[k]["path"].as<std::string>(), owned[size_t(k)].get(),
                                                      size_t(files[k]["size"].as<double>()), owned[size_t(k)]});
  }
}

// A session over the public API. Inputs arrive as views of wasm memory the JS side
// filled (no second copy); outputs leave as fresh Uint8Arrays (one copy out).
class JsSession {
 public:
  // Loads the model from bytes already in wasm memory at [ptr, ptr + size) (the caller
  // frees them after). options.externalFiles: [{path, ptr, size}], external-data files
  // the JS side malloc'ed into wasm memory: from this call on they are the session's
  // (the weights borrow them, no second copy; freed with the last weight using them, or
  // now on failure). Returns {} or {error}.
  val Load(uintptr_t ptr, size_t size, val options) {
    onemodel::SessionOptions o;
    TakeExternal(options["externalFiles"], &o);
    return Guarded([&] {
      ReadOptions(options, &o);
      s_ = std::make_unique<onemodel::Session>(
          onemodel::Session::FromBytes(reinterpret_cast<const void*>(ptr), size, o, options["name"].as<std::string>()));
      return val::object();
    });
  }
  // Loads the model file at `path` through the host's file system (node's fs), its
  // external data from the files beside it and options.externalFiles (as Load).
  val LoadPath(const std::string& path, val options) {
    onemodel::SessionOptions o;
    TakeExternal(options["externalFiles"], &o);
    return Guarded([&] {
      ReadOptions(options, &o);
      s_ = std::make_unique<onemodel::Session>(path, o);
      return val::object();
    });
  }

  val Inputs() const {
    val a = val::array();
    for (const auto& v : S().inputs()) a.call<void>("push", InfoValue(v));
    return a;
  }
  val Outputs() const {
    val a = val::array();
    for (const auto& v : S().outputs()) a.call<void>("push", InfoValue(v));
    return a;
  }
  std::string Target() const { return s_ ? s_->target() : std::string(); }

  // The run path, with as few JS<->wasm value conversions as possible. The JS side
  // writes a descriptor of doubles into wasm memory:
  //   [nInputs, then per input: inputIndex, elementType, rank, ptr, bytes, dims...,
  //    nOutputs (0: every output), outputIndex...]
  // where a string input (elementType 8) has ptr/bytes 0 and its strings in `strings`
  // (an array of arrays, by input position; RunStrings). Returns the address of the
  // output descriptor, [words, then per output: outputIndex, elementType, rank, dataPtr,
  // bytes, dims...], the outputs kept until ReleaseOutputs; or 0, with LastError()
  // saying why.
  uintptr_t Run(uintptr_t desc_ptr) { return RunStrings(desc_ptr, val::undefined()); }
  // The next runs' time limit in milliseconds (0: none; RunOptions::time_limit_ms).
  void SetTimeLimit(double ms) { run_options_.time_limit_ms = ms; }
  uintptr_t RunStrings(uintptr_t desc_ptr, val strings) {
    last_.clear();
    error_ = val::undefined();
    try {
      const double* d = reinterpret_cast<const double*>(desc_ptr);
      const auto& infos = S().inputs();
      size_t at = 0;
      const int n_in = int(d[at++]);
      std::vector<onemodel::NamedValue> feeds;
      feeds.reserve(size_t(n_in));
      for (int k = 0; k < n_in; ++k) {
        const size_t index = size_t(d[at++]);
        const auto type = onemodel::ElementType(int(d[at++]));
        const size_t rank = size_t(d[at++]);
        void* p = reinterpret_cast<void*>(uintptr_t(d[at++]));
        const size_t bytes = size_t(d[at++]);
        std::vector<int64_t> dims(rank);
        for (size_t r = 0; r < rank; ++r) dims[r] = int64_t(d[at++]);
        if (index >= infos.size())
          throw onemodel::Error(onemodel::ErrorCode::kInvalidArgument, "input index out of range");
        if (type == onemodel::ElementType::kString) {
          std::vector<std::string> v;
          const val js = strings[k];
          for (int i = 0; i < js["length"].as<int>(); ++i) v.push_back(js[i].as<std::string>());
          feeds.push_back({infos[index].name, onemodel::Tensor::FromStrings(std::move(v), std::move(dims))});
        } else {
          feeds.push_back({infos[index].name, onemodel::Tensor::View(type, std::move(dims), p, bytes)});
        }
      }
      const auto& outs = S().outputs();
      std::vector<std::string> names;
      const int n_out = int(d[at++]);
      for (int k = 0; k < n_out; ++k) {
        const size_t index = size_t(d[at++]);
        if (index >= outs.size())
          throw onemodel::Error(onemodel::ErrorCode::kInvalidArgument, "output index out of range");
        names.push_back(outs[index].name);
      }
      last_ = S().Run(feeds, names, run_options_);
      out_desc_.assign(1, 0.0);
      for (const auto& nv : last_) {
        if (!nv.value.is_tensor()) {
          throw onemodel::Error(
              onemodel::ErrorCode::kTypeMismatch,
              "output '" + nv.name + "' is a sequence or optional, which the JS API does not return yet");
        }
        size_t index = 0;
        while (outs[index].name != nv.name) ++index;
        const onemodel::Tensor& t = nv.value.tensor();
        out_desc_.push_back(double(index));
        out_desc_.push_back(double(int(t.type())));
        out_desc_.push_back(double(t.rank()));
        out_desc_.push_back(double(reinterpret_cast<uintptr_t>(t.data())));
        out_desc_.push_back(double(t.byte_size()));
        for (int64_t dim : t.shape()) out_desc_.push_back(double(dim));
      }
      out_desc_[0] = double(out_desc_.size());
      return reinterpret_cast<uintptr_t>(out_desc_.data());
    } catch (const onemodel::Error& e) {
      error_ = ErrorValue(onemodel::ErrorCodeName(e.code()), e.message());
    } catch (const std::bad_alloc&) {
      error_ = ErrorValue("out_of_memory", "out of wasm memory (an allocation was refused)");
    } catch (const std::exception& e) {
      error_ = ErrorValue("internal", e.what());
    }
    last_.clear();
    return 0;
  }
  // A string output's elements (k: its position in the last run's outputs).
  val OutputStrings(size_t k) const {
    val a = val::array();
    if (k < last_.size() && last_[k].value.is_tensor() &&
        last_[k].value.tensor().type() == onemodel::ElementType::kString) {
      for (const std::string& s : last_[k].value.tensor().strings()) a.call<void>("push", s);
    }
    return a;
  }
  void ReleaseOutputs() {
    last_.clear();
    out_desc_.clear();
  }
  val LastError() const { return error_; }
  // The profile of the last run ("" when profiling is off).
  std::string LastProfile() const {
    const onemodel::RunProfile p = S().last_profile();
    return p.entries.empty() ? std::string() : p.ToString();
  }

 private:
  const onemodel::Session& S() const {
    if (!s_) throw onemodel::Error(onemodel::ErrorCode::kInvalidArgument, "the session is not loaded");
    return *s_;
  }
  std::unique_ptr<onemodel::Session> s_;
  std::vector<onemodel::NamedValue> last_;  // the last run's outputs, until ReleaseOutputs
  onemodel::RunOptions run_options_;        // the time limit of SetTimeLimit
  std::vector<double> out_desc_;
  val error_ = val::undefined();
};

std::string VersionJs() { return onemodel::Version(); }
// Bytes of wasm memory malloc has handed out and not had back (what release() frees),
// and the memory's whole size.
double HeapInUse() { return double(mallinfo().uordblks); }
double HeapSize() { return double(emscripten_get_heap_size()); }
std::string BestTargetJs() { return onemodel::BestTarget(); }

}  // namespace

EMSCRIPTEN_BINDINGS(onemodel) {
  emscripten::register_vector<std::string>("StringVector");
  emscripten::function("runCli", &RunCliJs);
  emscripten::function("version", &VersionJs);
  emscripten::function("bestTarget", &BestTargetJs);
  emscripten::function("goldenHash", &GoldenHashJs);
  emscripten::function("heapInUse", &HeapInUse);
  emscripten::function("heapSize", &HeapSize);
  emscripten::function("releaseCachedBuffers", &onemodel::ReleaseCachedBuffers);
  emscripten::class_<JsSession>("Session")
      .constructor<>()
      .function("load", &JsSession::Load)
      .function("loadPath", &JsSession::LoadPath)
      .function("inputs", &JsSession::Inputs)
      .function("outputs", &JsSession::Outputs)
      .function("target", &JsSession::Target)
      .function("run", &JsSession::Run)
      .function("setTimeLimit", &JsSession::SetTimeLimit)
      .function("runStrings", &JsSession::RunStrings)
      .function("outputStrings", &JsSession::OutputStrings)
      .function("releaseOutputs", &JsSession::ReleaseOutputs)
      .function("lastError", &JsSession::LastError)
      .function("lastProfile", &JsSession::LastProfile);
}
