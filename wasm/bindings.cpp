// Embind bindings: the wasm module's JS surface, over the public API (onemodel.h) and
// the CLI. No logic here beyond moving values across: js/ builds the onnxruntime-web
// shaped API on top (js/backend.mjs).
#include <emscripten/bind.h>
#include <emscripten/emscripten.h>

#include <cstdint>
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
      EM_ASM({
        const t = UTF8ToString($0);
        if (typeof process !== 'undefined' && process.stderr) process.stderr.write(t);
        else console.log(t);
      }, part.c_str());
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
    return ErrorValue("out_of_range", "out of wasm memory");
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
    if (v.shape[k] >= 0) shape.call<void>("push", double(v.shape[k]));
    else shape.call<void>("push", k < v.symbolic.size() ? v.symbolic[k] : std::string());
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
      feeds.push_back({in["name"].as<std::string>(), onemodel::Tensor::FromStrings(std::move(strings), std::move(dims))});
    } else {
      void* p = reinterpret_cast<void*>(in["ptr"].as<uintptr_t>());
      feeds.push_back({in["name"].as<std::string>(), onemodel::Tensor::View(type, std::move(dims), p, in["bytes"].as<size_t>())});
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

// A session over the public API. Inputs arrive as views of wasm memory the JS side
// filled (no second copy); outputs leave as fresh Uint8Arrays (one copy out).
class JsSession {
 public:
  // Loads the model from bytes already in wasm memory at [ptr, ptr + size) (the caller
  // frees them after). Returns {} or {error}.
  val Load(uintptr_t ptr, size_t size, val options) {
    return Guarded([&] {
      onemodel::SessionOptions o;
      if (options["mode"].as<std::string>() == "fast") o.mode = onemodel::Mode::kFast;
      o.isa = options["isa"].as<std::string>();
      o.profiling = options["profiling"].as<bool>() ? onemodel::Profiling::kByOpType : onemodel::Profiling::kOff;
      const val names = options["freeDimensionNames"];
      const val sizes = options["freeDimensionSizes"];
      for (int k = 0; k < names["length"].as<int>(); ++k) {
        o.free_dimension_overrides[names[k].as<std::string>()] = int64_t(sizes[k].as<double>());
      }
      s_ = std::make_unique<onemodel::Session>(
          onemodel::Session::FromBytes(reinterpret_cast<const void*>(ptr), size, o, options["name"].as<std::string>()));
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

  // inputs: [{name, elementType, dims, ptr, bytes} | {name, elementType: 8, dims, strings}],
  // outputNames: [] for every output. Returns {outputs: [{name, elementType, dims, bytes |
  // strings}]} or {error}.
  val Run(val inputs, val output_names) const {
    return Guarded([&] {
      const std::vector<onemodel::NamedValue> feeds = Values(inputs);
      std::vector<std::string> names;
      for (int k = 0; k < output_names["length"].as<int>(); ++k) names.push_back(output_names[k].as<std::string>());
      const std::vector<onemodel::NamedValue> outs = S().Run(feeds, names);
      val list = val::array();
      for (const auto& nv : outs) {
        if (!nv.value.is_tensor()) {
          throw onemodel::Error(onemodel::ErrorCode::kTypeMismatch,
                                "output '" + nv.name + "' is a sequence or optional, which the JS API does not return yet");
        }
        const onemodel::Tensor& t = nv.value.tensor();
        val o = val::object();
        o.set("name", nv.name);
        o.set("elementType", int(t.type()));
        val dims = val::array();
        for (int64_t d : t.shape()) dims.call<void>("push", double(d));
        o.set("dims", dims);
        if (t.type() == onemodel::ElementType::kString) {
          val strings = val::array();
          for (const std::string& s : t.strings()) strings.call<void>("push", s);
          o.set("strings", strings);
        } else {
          const val view(emscripten::typed_memory_view(t.byte_size(), static_cast<const uint8_t*>(t.data())));
          o.set("bytes", val::global("Uint8Array").new_(view));  // a copy: the tensor dies here
        }
        list.call<void>("push", o);
      }
      const onemodel::RunProfile p = S().last_profile();
      val r = val::object();
      r.set("outputs", list);
      if (!p.entries.empty()) r.set("profile", p.ToString());
      return r;
    });
  }

 private:
  const onemodel::Session& S() const {
    if (!s_) throw onemodel::Error(onemodel::ErrorCode::kInvalidArgument, "the session is not loaded");
    return *s_;
  }
  std::unique_ptr<onemodel::Session> s_;
};

std::string VersionJs() { return onemodel::Version(); }
std::string BestTargetJs() { return onemodel::BestTarget(); }

}  // namespace

EMSCRIPTEN_BINDINGS(onemodel) {
  emscripten::register_vector<std::string>("StringVector");
  emscripten::function("runCli", &RunCliJs);
  emscripten::function("version", &VersionJs);
  emscripten::function("bestTarget", &BestTargetJs);
  emscripten::function("goldenHash", &GoldenHashJs);
  emscripten::class_<JsSession>("Session")
      .constructor<>()
      .function("load", &JsSession::Load)
      .function("inputs", &JsSession::Inputs)
      .function("outputs", &JsSession::Outputs)
      .function("target", &JsSession::Target)
      .function("run", &JsSession::Run);
}
