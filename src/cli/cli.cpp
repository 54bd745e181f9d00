// Command-line commands (see cli.h).
#include "cli/cli.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <functional>
#include <map>
#include <iomanip>
#include <sstream>

#include "core/error.h"
#include "core/golden.h"
#include "core/minifloat.h"
#include "core/npy.h"
#include "core/io.h"
#include "onnx/tensor_proto.h"
#include "graph/infer.h"
#include "onnx/import.h"
#include "ref/op_context.h"
#include "runtime/session.h"
#include "core/exact.h"
#include "core/random.h"
#include "core/threadpool.h"
#include "ref/reduce.h"
#include "runtime/dispatch.h"

#ifndef ONEMODEL_VERSION
#define ONEMODEL_VERSION "0.0.0"
#endif

namespace onemodel {
namespace {

const char* kUsage =
    "usage: onemodel [--isa ISA] [--threads N] [--mode exact|fast] COMMAND [ARGS]\n"
    "  (--mode fast currently runs the exact path: fast mode's rewrites are not built yet)\n"
    "commands:\n"
    "  version                 print the version and build\n"
    "  targets                 print the CPU's features, the compiled targets and the chosen one\n"
    "  cases DIR [--filter S] [--mode exact|fast] [--verbose]\n"
    "                          run every ONNX case folder in DIR (model.onnx + test_data_set_*),\n"
    "                          compare with the expected outputs, print case/<name> <hash>;\n"
    "                          --verbose: one PASS/FAIL/SKIP line per case (with the reason) on stderr\n"
    "  hash MODEL [--input NAME=FILE.npy ...] [--dim NAME=N ...] [--save DIR]\n"
    "                          run MODEL in exact mode; print input/<name> <hash> per input, then\n"
    "                          <model>/<output> <hash> per output (inputs not given are generated);\n"
    "                          --save DIR also writes each tensor output to DIR/<output>.npy\n"
    "  golden [--models DIR ...] [--cases DIR ...] [--only A,B]\n"
    "                          every model DIR/<m>.onnx (stored inputs from DIR/<m>.inputs, others\n"
    "                          generated): input/<m>/<name> <hash> lines, then <m>/<output> <hash>;\n"
    "                          then a case/<name> <hash> line per node case; progress on stderr\n"
    "  bench MODEL [--runs N] [--input NAME=FILE.npy ...] [--dim NAME=N ...]\n"
    "                          time Session::Run (after one warm-up run); last line\n"
    "                          median_ms=<x> min_ms=<y>\n"
    "  info MODEL              list the model's inputs, outputs, opsets and operators\n"
    "  bench-lanes [--n N] [--reps R] [--all]\n"
    "                          time the canonical L-lane f32 sum for L = 16, 32, 64, 128\n"
    "                          (the benchmark that chose L); --all runs every supported target\n"
    "options:\n"
    "  --isa ISA               cap the instruction set (ref, scalar, sse41, avx2, avx512, neon,\n"
    "                          neondot, wasm128); default: ONEMODEL_ISA, else the best supported\n"
    "  --threads N             worker threads (default: ONEMODEL_THREADS, else all cores)\n";

struct Options {
  Isa isa;
  int threads;
  Mode mode = Mode::kExact;
  std::vector<std::string> rest;
};

Mode ParseMode(const std::string& m) {
  if (m == "exact") return Mode::kExact;
  if (m == "fast") return Mode::kFast;
  throw Error(ErrorCode::kInvalidArgument, "--mode takes exact or fast, not '" + m + "'");
}

int64_t ParseInt(const std::string& flag, const std::string& v, int64_t lo, int64_t hi) {
  char* end = nullptr;
  const long long x = std::strtoll(v.c_str(), &end, 10);
  if (v.empty() || *end != 0 || x < lo || x > hi) {
    throw Error(ErrorCode::kInvalidArgument, flag + " takes a whole number from " + std::to_string(lo) + " to " +
                                                 std::to_string(hi) + ", not '" + v + "'");
  }
  return x;
}

std::string BuildName() {
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

int CmdTargets(const Options& o, std::ostream& out) {
  const Dispatch d = MakeDispatch(o.isa);  // errors before any output
  MaybePrintDispatch(d);
  out << "cpu: " << CpuDescription() << "\n";
  out << "compiled:";
  for (Isa i : CompiledIsas()) out << " " << IsaName(i) << (CpuSupports(i) ? "" : "(unsupported)");
  out << "\n";
  out << "selected: " << IsaName(d.isa) << "\n";
  out << "threads: " << o.threads << "\n";
  out << "canonical lanes (L): " << kCanonicalLanes << "\n";
  return 0;
}

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

int CmdBenchLanes(const Options& o, std::ostream& out, std::ostream& err) {
  size_t n = 4096;
  int reps = 7;
  bool all = false;
  for (size_t i = 0; i < o.rest.size(); ++i) {
    const std::string& a = o.rest[i];
    if (a == "--all") all = true;
    else if (a == "--n" && i + 1 < o.rest.size()) n = size_t(ParseInt("--n", o.rest[++i], 1, int64_t(1) << 28));
    else if (a == "--reps" && i + 1 < o.rest.size()) reps = int(ParseInt("--reps", o.rest[++i], 1, 1000));
    else throw Error(ErrorCode::kInvalidArgument, "bench-lanes: unexpected argument '" + a + "'");
  }
  std::vector<float> x(n);
  SplitMix64 rng(20261129);
  for (float& v : x) v = rng.Uniform(-1.0f, 1.0f);
  std::vector<Isa> isas;
  if (all) {
    for (Isa i : CompiledIsas())
      if (i != Isa::kRef && CpuSupports(i) && int(i) <= int(o.isa)) isas.push_back(i);
  } else {
    isas.push_back(o.isa == Isa::kRef ? Isa::kScalar : o.isa);
  }
  out << "target   L     n         ns/elem   GB/s     equals-ref\n";
  bool ok = true;
  for (Isa isa : isas) {
    const Dispatch d = MakeDispatch(isa);
    const LaneBench& b = *d.lane_bench;
    struct { size_t L; float (*fn)(const float*, size_t); float (*ref)(const float*, size_t); } rows[] = {
        {16, b.sum_l16, &ref::SumCanonical<16>},
        {32, b.sum_l32, &ref::SumCanonical<32>},
        {64, b.sum_l64, &ref::SumCanonical<64>},
        {128, b.sum_l128, &ref::SumCanonical<128>},
    };
    for (const auto& r : rows) {
      float got = 0;
      const double ns = TimeNsPerElem(r.fn, x.data(), n, reps, &got);
      const float want = r.ref(x.data(), n);
      const bool same = std::memcmp(&got, &want, 4) == 0;
      ok &= same;
      out << std::left << std::setw(9) << IsaName(d.isa) << std::setw(6) << r.L << std::setw(10) << n
          << std::fixed << std::setprecision(4) << std::setw(10) << ns << std::setprecision(2) << std::setw(9)
          << (4.0 / ns) << (same ? "yes" : "NO") << "\n";
    }
  }
  if (!ok) err << "bench-lanes: a vector sum differs from the reference: this is a bug\n";
  return ok ? 0 : 1;
}

// Compares one output with the expected tensor (ONNX's backend-test rule: rtol 1e-3,
// atol 1e-7 for floats, NaN equals NaN; integers, bools and strings exactly). Returns
// "" when they agree, else what differs.
std::string CompareTensors(const Tensor& want, const Tensor& got) {
  if (want.dtype() != got.dtype()) return "type " + DTypeName(got.dtype()) + ", expected " + DTypeName(want.dtype());
  if (want.shape() != got.shape()) return "shape " + ShapeToString(got.shape()) + ", expected " + ShapeToString(want.shape());
  const int64_t n = want.numel();
  if (want.dtype() == DType::kString) {
    for (int64_t i = 0; i < n; ++i)
      if (want.strings()[size_t(i)] != got.strings()[size_t(i)]) return "string " + std::to_string(i) + " differs";
    return "";
  }
  auto as_double = [](const Tensor& t, int64_t i) { return ElementAsDouble(t, i); };
  const bool is_float = IsFloatDType(want.dtype()) && want.dtype() != DType::kComplex64 &&
                        want.dtype() != DType::kComplex128;
  if (is_float) {
    for (int64_t i = 0; i < n; ++i) {
      const double w = as_double(want, i), g = as_double(got, i);
      if (w != w && g != g) continue;
      if (w == g) continue;
      const double diff = w > g ? w - g : g - w;
      const double aw = w < 0 ? -w : w;
      if (!(diff <= 1e-7 + 1e-3 * aw)) {
        std::ostringstream s;
        s << "element " << i << ": got " << std::setprecision(9) << g << ", expected " << w;
        return s.str();
      }
    }
    return "";
  }
  if (want.nbytes() && std::memcmp(want.raw(), got.raw(), want.nbytes()) != 0) {
    const size_t es = DTypeStorageSize(want.dtype());
    for (int64_t i = 0; i < n; ++i) {
      if (std::memcmp(static_cast<const uint8_t*>(want.raw()) + size_t(i) * es,
                      static_cast<const uint8_t*>(got.raw()) + size_t(i) * es, es) != 0) {
        return "element " + std::to_string(i) + " differs";
      }
    }
  }
  return "";
}

enum class CaseResult { kPassed, kFailed, kSkipped };

// Runs one case folder; returns the result, the line's hash and a reason.
CaseResult RunCase(const std::string& dir, const Options& o, std::string* hash, std::string* why) {
  *hash = GoldenSkipMarker();
  try {
    SessionOptions so;
    so.threads = o.threads;
    so.isa = IsaName(o.isa);
    so.mode = o.mode;
    Session s = Session::Load(JoinPath(dir, "model.onnx"), so);
    const std::string data = JoinPath(dir, "test_data_set_0");
    std::map<std::string, Value> feeds;
    auto read_value = [&](const std::string& p, const ValueType& type) -> Value {
      auto bytes = ReadFile(p);
      if (type.kind == ValueType::Kind::kSequence) return ValueFromBytes(bytes->data(), bytes->size(), false, p);
      if (type.kind == ValueType::Kind::kOptional) return ValueFromBytes(bytes->data(), bytes->size(), true, p);
      if (type.kind == ValueType::Kind::kMap || type.kind == ValueType::Kind::kSparseTensor) {
        throw Error(ErrorCode::kUnsupportedOp, p + ": map and sparse values are not supported");
      }
      return Value::FromTensor(TensorFromBytes(bytes->data(), bytes->size(), p));
    };
    for (size_t i = 0;; ++i) {
      const std::string p = JoinPath(data, "input_" + std::to_string(i) + ".pb");
      if (!FileExists(p)) break;
      if (i >= s.inputs().size()) throw Error(ErrorCode::kInvalidModel, "more input files than model inputs");
      feeds[s.inputs()[i].name] = read_value(p, s.inputs()[i].type);
    }
    std::vector<Value> outs = s.Run(feeds);
    // Static inference, given the inputs' concrete types, must agree with what ran.
    std::map<std::string, TensorType> given;
    for (const auto& [name, v] : feeds) {
      if (!v.is_tensor()) continue;
      TensorType tt;
      tt.dtype = v.tensor.dtype();
      tt.has_shape = true;
      tt.dims = v.tensor.shape();
      tt.dim_params.assign(tt.dims.size(), "");
      given[name] = tt;
    }
    const auto inferred = InferTypes(s.model(), given);
    for (size_t i = 0; i < outs.size(); ++i) {
      auto it = inferred.find(s.outputs()[i].name);
      if (it == inferred.end() || !outs[i].is_tensor()) continue;
      const TensorType& tt = it->second.type;
      const Tensor& got = outs[i].tensor;
      bool ok = tt.dtype == DType::kUndefined || tt.dtype == got.dtype();
      if (tt.has_shape) {
        ok = ok && tt.dims.size() == got.shape().size();
        for (size_t k = 0; ok && k < tt.dims.size(); ++k) ok = tt.dims[k] < 0 || tt.dims[k] == got.shape()[k];
      }
      if (!ok) {
        *why = "static inference says output " + std::to_string(i) + " is " + DTypeName(tt.dtype) + " " +
               ShapeToString(tt.dims) + ", the run gave " + DTypeName(got.dtype()) + " " + ShapeToString(got.shape());
        return CaseResult::kFailed;
      }
    }
    Sha256 h;
    for (const Value& v : outs) {
      if (v.kind == Value::Kind::kTensor) GoldenSerialize(v.tensor, h);
      else if (v.kind == Value::Kind::kSequence) GoldenSerializeSequence(v.sequence, h);
      else GoldenSerializeEmptyOptional(h);
    }
    *hash = h.HexDigest();
    for (size_t i = 0; i < outs.size(); ++i) {
      const std::string p = JoinPath(data, "output_" + std::to_string(i) + ".pb");
      if (!FileExists(p)) { *why = "expected output " + std::to_string(i) + " is missing"; return CaseResult::kFailed; }
      const Value want = read_value(p, s.outputs()[i].type);
      const Value& got = outs[i];
      std::string d;
      if (want.kind != got.kind) {
        d = "kind of value differs (sequence, optional or tensor)";
      } else if (want.kind == Value::Kind::kTensor) {
        d = CompareTensors(want.tensor, got.tensor);
      } else if (want.kind == Value::Kind::kSequence) {
        if (want.sequence.size() != got.sequence.size()) d = "sequence length differs";
        for (size_t k = 0; d.empty() && k < want.sequence.size(); ++k) {
          d = CompareTensors(want.sequence[k], got.sequence[k]);
          if (!d.empty()) d = "sequence element " + std::to_string(k) + ": " + d;
        }
      }
      if (!d.empty()) { *why = "output " + std::to_string(i) + ": " + d; return CaseResult::kFailed; }
    }
    return CaseResult::kPassed;
  } catch (const Error& e) {
    *hash = GoldenSkipMarker();
    *why = e.what();
    return e.code() == ErrorCode::kUnsupportedOp ? CaseResult::kSkipped : CaseResult::kFailed;
  }
}

struct CaseCounts {
  int passed = 0, failed = 0, skipped = 0;
};

// Runs every case folder of dir (name order) whose name contains filter; prints one
// `case/<name> <hash>` line per case on out.
CaseCounts RunCaseFolders(const Options& o, const std::string& dir, const std::string& filter, bool verbose,
                          std::ostream& out, std::ostream& err) {
  if (!IsDirectory(dir)) throw Error(ErrorCode::kIo, "cases: '" + dir + "' is not a directory");
  CaseCounts c;
  for (const std::string& name : ListDirectory(dir)) {
    const std::string cdir = JoinPath(dir, name);
    if (!FileExists(JoinPath(cdir, "model.onnx"))) continue;
    if (!filter.empty() && name.find(filter) == std::string::npos) continue;
    std::string hash, why;
    const CaseResult r = RunCase(cdir, o, &hash, &why);
    std::string line_name = name;
    if (line_name.rfind("test_", 0) == 0) line_name = line_name.substr(5);
    out << "case/" << line_name << " " << hash << "\n";
    if (r == CaseResult::kPassed) ++c.passed;
    else if (r == CaseResult::kFailed) ++c.failed;
    else ++c.skipped;
    if (verbose) {
      if (r == CaseResult::kPassed) err << "PASS " << name << "\n";
      else err << (r == CaseResult::kFailed ? "FAIL " : "SKIP ") << name << ": " << why << "\n";
    }
  }
  out.flush();
  return c;
}

int CmdCases(const Options& o, std::ostream& out, std::ostream& err) {
  Options o2 = o;  // cases also takes --mode after the command
  std::string dir, filter;
  bool verbose = false;
  for (size_t i = 0; i < o.rest.size(); ++i) {
    const std::string& a = o.rest[i];
    if (a == "--filter" && i + 1 < o.rest.size()) filter = o.rest[++i];
    else if (a == "--mode" && i + 1 < o.rest.size()) {
      o2.mode = ParseMode(o.rest[++i]);
    } else if (a == "--verbose") verbose = true;
    else if (!a.empty() && a[0] != '-' && dir.empty()) dir = a;
    else throw Error(ErrorCode::kInvalidArgument, "cases: unexpected argument '" + a + "'");
  }
  if (dir.empty()) throw Error(ErrorCode::kInvalidArgument, "cases: give the folder of case folders");
  const CaseCounts c = RunCaseFolders(o2, dir, filter, verbose, out, err);
  err << c.passed << " passed, " << c.failed << " failed, " << c.skipped << " skipped\n";
  return c.failed == 0 ? 0 : 1;
}

std::string ModelStem(const std::string& path) {
  std::string base = path.substr(path.find_last_of('/') == std::string::npos ? 0 : path.find_last_of('/') + 1);
  if (base.size() > 5 && base.substr(base.size() - 5) == ".onnx") base = base.substr(0, base.size() - 5);
  return base;
}

std::string TypeString(const ValueType& t) {
  switch (t.kind) {
    case ValueType::Kind::kTensor: {
      std::string s = DTypeName(t.tensor.dtype);
      if (!t.tensor.has_shape) return s + "[?]";
      s += "[";
      for (size_t k = 0; k < t.tensor.dims.size(); ++k) {
        s += (k ? "," : "") + (t.tensor.dims[k] >= 0 ? std::to_string(t.tensor.dims[k])
                                                      : (t.tensor.dim_params[k].empty() ? "?" : t.tensor.dim_params[k]));
      }
      return s + "]";
    }
    case ValueType::Kind::kSequence: return "sequence<" + (t.element ? TypeString(*t.element) : "?") + ">";
    case ValueType::Kind::kOptional: return "optional<" + (t.element ? TypeString(*t.element) : "?") + ">";
    case ValueType::Kind::kMap: return "map";
    default: return "?";
  }
}

// The documented generator for inputs the caller does not give (README, "onemodel
// hash"): symbolic or unknown dimensions are 1 unless --dim NAME=N names them; floats
// are uniform in [-1, 1), integers uniform in [0, 64), bools alternate, seeded per input
// with SplitMix64(FNV-1a of the input name).
Tensor GenerateInput(const ValueInfo& in, const std::map<std::string, int64_t>& dims) {
  if (in.type.kind != ValueType::Kind::kTensor) {
    throw Error(ErrorCode::kInvalidArgument, "input '" + in.name + "' is not a tensor: give it with --input");
  }
  Shape shape;
  for (size_t k = 0; k < in.type.tensor.dims.size(); ++k) {
    int64_t d = in.type.tensor.dims[k];
    if (d < 0) {
      auto it = dims.find(in.type.tensor.dim_params[k]);
      d = it == dims.end() ? 1 : it->second;
    }
    shape.push_back(d);
  }
  uint64_t seed = 1469598103934665603ull;
  for (char c : in.name) seed = (seed ^ uint8_t(c)) * 1099511628211ull;
  SplitMix64 rng(seed);
  const DType dt = in.type.tensor.dtype;
  Tensor t(dt, shape, "generated input '" + in.name + "'");
  for (int64_t i = 0; i < t.numel(); ++i) {
    switch (dt) {
      case DType::kFloat: t.mutable_data<float>()[i] = rng.Uniform(-1.0f, 1.0f); break;
      case DType::kDouble: t.mutable_data<double>()[i] = double(rng.Uniform(-1.0f, 1.0f)); break;
      case DType::kFloat16: t.mutable_data<uint16_t>()[i] = F32ToHalf(rng.Uniform(-1.0f, 1.0f)); break;
      case DType::kBFloat16: t.mutable_data<uint16_t>()[i] = F32ToBF16(rng.Uniform(-1.0f, 1.0f)); break;
      case DType::kInt64: t.mutable_data<int64_t>()[i] = int64_t(rng.NextU32() % 64); break;
      case DType::kInt32: t.mutable_data<int32_t>()[i] = int32_t(rng.NextU32() % 64); break;
      case DType::kUInt8: case DType::kInt8: t.mutable_data<uint8_t>()[i] = uint8_t(rng.NextU32() % 64); break;
      case DType::kBool: t.mutable_data<uint8_t>()[i] = uint8_t(i % 2); break;
      default: throw Error(ErrorCode::kTypeMismatch, "cannot generate input '" + in.name + "' of type " + DTypeName(dt) + ": give it with --input");
    }
  }
  return t;
}

void HashValue(const Value& v, Sha256& h) {
  if (v.kind == Value::Kind::kTensor) GoldenSerialize(v.tensor, h);
  else if (v.kind == Value::Kind::kSequence) GoldenSerializeSequence(v.sequence, h);
  else GoldenSerializeEmptyOptional(h);
}

// An output name as a file name: characters other than [A-Za-z0-9._-] become '_'.
std::string SafeFileName(const std::string& name) {
  std::string r = name;
  for (char& c : r) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
    if (!ok) c = '_';
  }
  return r.empty() || r[0] == '.' ? "_" + r : r;
}

// Runs one model in exact mode with inputs from files (NAME -> .npy path) or generated;
// prints `input/<input_prefix><name> <hash>` per input, then `<stem>/<output> <hash>`.
Session LoadSession(const Options& o, const std::string& model) {
  SessionOptions so;
  so.threads = o.threads;
  so.isa = IsaName(o.isa);
  so.mode = o.mode;
  return Session::Load(model, so);
}

// The session's inputs: from .npy files where given (NAME -> path), else generated.
std::map<std::string, Value> MakeFeeds(const Session& s, const std::string& model,
                                       const std::map<std::string, std::string>& files,
                                       const std::map<std::string, int64_t>& dims) {
  std::map<std::string, Value> feeds;
  for (const auto& [name, path] : files) {
    bool known = false;
    for (const auto& in : s.inputs()) known |= in.name == name;
    if (!known) throw Error(ErrorCode::kInvalidArgument, model + ": the model has no input named '" + name + "'");
    auto bytes = ReadFile(path);
    feeds[name] = Value::FromTensor(ParseNpy(bytes->data(), bytes->size(), path));
  }
  for (const auto& in : s.inputs()) {
    if (!feeds.count(in.name)) feeds[in.name] = Value::FromTensor(GenerateInput(in, dims));
  }
  return feeds;
}

void RunModelLines(const Options& o, const std::string& model, const std::map<std::string, std::string>& files,
                   const std::map<std::string, int64_t>& dims, const std::string& input_prefix,
                   const std::string& save_dir, std::ostream& out) {
  Session s = LoadSession(o, model);
  std::map<std::string, Value> feeds = MakeFeeds(s, model, files, dims);
  for (const auto& in : s.inputs()) {
    Sha256 h;
    HashValue(feeds[in.name], h);
    out << "input/" << input_prefix << in.name << " " << h.HexDigest() << "\n";
  }
  const std::vector<Value> outs = s.Run(feeds);
  const std::string stem = ModelStem(model);
  for (size_t i = 0; i < outs.size(); ++i) {
    Sha256 h;
    HashValue(outs[i], h);
    out << stem << "/" << s.outputs()[i].name << " " << h.HexDigest() << "\n";
    if (!save_dir.empty() && outs[i].is_tensor()) {
      const auto bytes = SerializeNpy(outs[i].tensor);
      WriteFile(JoinPath(save_dir, SafeFileName(s.outputs()[i].name) + ".npy"), bytes.data(), bytes.size());
    }
  }
  out.flush();
}

// MODEL [--input NAME=FILE.npy ...] [--dim NAME=N ...] plus, per command, --save DIR
// (hash) or --runs N (bench).
struct ModelArgs {
  std::string model;
  std::map<std::string, std::string> files;
  std::map<std::string, int64_t> dims;
  std::string save_dir;
  int runs = 10;
};

ModelArgs ParseModelArgs(const Options& o, const std::string& cmd) {
  ModelArgs m;
  for (size_t i = 0; i < o.rest.size(); ++i) {
    const std::string& a = o.rest[i];
    auto value = [&]() {
      if (i + 1 >= o.rest.size()) throw Error(ErrorCode::kInvalidArgument, a + " needs a value");
      return o.rest[++i];
    };
    auto kv = [&]() {
      const std::string v = value();
      const size_t eq = v.find('=');
      if (eq == std::string::npos || eq == 0) throw Error(ErrorCode::kInvalidArgument, a + " needs NAME=VALUE, not '" + v + "'");
      return std::make_pair(v.substr(0, eq), v.substr(eq + 1));
    };
    if (a == "--input") { auto [k, v] = kv(); m.files[k] = v; }
    else if (a == "--dim") { auto [k, v] = kv(); m.dims[k] = ParseInt("--dim " + k, v, 0, int64_t(1) << 31); }
    else if (a == "--save" && cmd == "hash") {
      m.save_dir = value();
      if (!IsDirectory(m.save_dir)) throw Error(ErrorCode::kInvalidArgument, "--save: '" + m.save_dir + "' is not a directory");
    } else if (a == "--runs" && cmd == "bench") m.runs = int(ParseInt("--runs", value(), 1, 100000));
    else if (!a.empty() && a[0] != '-' && m.model.empty()) m.model = a;
    else throw Error(ErrorCode::kInvalidArgument, cmd + ": unexpected argument '" + a + "'");
  }
  if (m.model.empty()) throw Error(ErrorCode::kInvalidArgument, cmd + ": give the model file");
  return m;
}

int CmdHash(const Options& o, std::ostream& out) {
  const ModelArgs m = ParseModelArgs(o, "hash");
  RunModelLines(o, m.model, m.files, m.dims, "", m.save_dir, out);
  return 0;
}

// bench: one untimed warm-up run, then --runs timed runs of Session::Run (inputs made
// once, outside the timing); the last line is `median_ms=<x> min_ms=<y>`.
int CmdBench(const Options& o, std::ostream& out) {
  const ModelArgs m = ParseModelArgs(o, "bench");
  Session s = LoadSession(o, m.model);
  const std::map<std::string, Value> feeds = MakeFeeds(s, m.model, m.files, m.dims);
  const std::vector<Value> first = s.Run(feeds);
  std::vector<double> ms;
  std::vector<Value> outs;
  for (int r = 0; r < m.runs; ++r) {
    outs.clear();
    const auto t0 = std::chrono::steady_clock::now();
    outs = s.Run(feeds);
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  // The last run (which follows the memory plan) must give the first run's bytes.
  for (size_t k = 0; k < first.size() && k < outs.size(); ++k) {
    const Tensor& a = first[k].tensor;
    const Tensor& b = outs[k].tensor;
    if (!first[k].is_tensor() || a.dtype() == DType::kString) continue;
    if (a.shape() != b.shape() || a.dtype() != b.dtype() || std::memcmp(a.raw(), b.raw(), a.nbytes()) != 0) {
      throw Error(ErrorCode::kInternal, "bench: output " + std::to_string(k) + " of the last run differs from the first run's");
    }
  }
  const MemoryPlanStats plan = s.memory_plan_stats();
  std::vector<double> sorted = ms;
  std::sort(sorted.begin(), sorted.end());
  const size_t n = sorted.size();
  const double median = n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
  out << "model: " << m.model << "\n";
  out << "mode: " << (o.mode == Mode::kExact ? "exact" : "fast") << " isa: " << IsaName(o.isa) << " threads: " << o.threads
      << " runs: " << m.runs << "\n";
  if (plan.runs) {
    out << std::fixed << std::setprecision(1) << "memory plan: " << (plan.last_replayed ? "followed" : plan.disabled ? "off" : "not followed")
        << ", arena " << double(plan.arena_bytes) / 1048576.0 << " MiB (peak of live buffers "
        << double(plan.peak_live_bytes) / 1048576.0 << " MiB) for " << plan.planned_buffers << " buffers ("
        << double(plan.planned_bytes) / 1048576.0 << " MiB unshared), last run " << plan.last_from_arena
        << " from the arena and " << plan.last_elsewhere << " elsewhere\n";
  }
  out << std::fixed << std::setprecision(3) << "median_ms=" << median << " min_ms=" << sorted.front() << "\n";
  return 0;
}

// The stored inputs of DIR/<stem>.onnx, from DIR/<stem>.inputs: one `NAME=PATH` per line,
// PATH relative to DIR (tools/prepare.sh writes them); none when the file is absent.
std::map<std::string, std::string> ReadInputList(const std::string& dir, const std::string& stem) {
  std::map<std::string, std::string> files;
  const std::string list = JoinPath(dir, stem + ".inputs");
  if (!FileExists(list)) return files;
  const auto bytes = ReadFile(list);
  std::string text(reinterpret_cast<const char*>(bytes->data()), bytes->size());
  size_t start = 0;
  while (start < text.size()) {
    size_t nl = text.find('\n', start);
    if (nl == std::string::npos) nl = text.size();
    const std::string line = text.substr(start, nl - start);
    start = nl + 1;
    if (line.empty() || line[0] == '#') continue;
    const size_t eq = line.find('=');
    if (eq == std::string::npos || eq == 0) throw Error(ErrorCode::kInvalidArgument, list + ": a line is not NAME=PATH: '" + line + "'");
    const std::string path = line.substr(eq + 1);
    files[line.substr(0, eq)] = !path.empty() && path[0] == '/' ? path : JoinPath(dir, path);
  }
  return files;
}

// golden: every model of --models (its stored inputs from <stem>.inputs, others generated)
// in name order, then every node case of --cases; progress on err.
int CmdGolden(const Options& o, std::ostream& out, std::ostream& err) {
  std::vector<std::string> model_dirs, case_dirs;
  std::string only;
  for (size_t i = 0; i < o.rest.size(); ++i) {
    const std::string& a = o.rest[i];
    auto value = [&]() {
      if (i + 1 >= o.rest.size()) throw Error(ErrorCode::kInvalidArgument, a + " needs a value");
      return o.rest[++i];
    };
    if (a == "--models") model_dirs.push_back(value());
    else if (a == "--cases") case_dirs.push_back(value());
    else if (a == "--only") only = "," + value() + ",";
    else throw Error(ErrorCode::kInvalidArgument, "golden: unexpected argument '" + a + "'");
  }
  if (model_dirs.empty() && case_dirs.empty()) throw Error(ErrorCode::kInvalidArgument, "golden: give --models DIR and/or --cases DIR");
  for (const std::string& dir : model_dirs) {
    if (!IsDirectory(dir)) throw Error(ErrorCode::kIo, "golden: '" + dir + "' is not a directory");
    for (const std::string& name : ListDirectory(dir)) {
      if (name.size() <= 5 || name.substr(name.size() - 5) != ".onnx") continue;
      const std::string stem = name.substr(0, name.size() - 5);
      if (!only.empty() && only.find("," + stem + ",") == std::string::npos) continue;
      err << "[golden] " << stem << " ..." << std::flush;
      const auto t0 = std::chrono::steady_clock::now();
      RunModelLines(o, JoinPath(dir, name), ReadInputList(dir, stem), {}, stem + "/", "", out);
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      err << " " << s << " s\n";
    }
  }
  for (const std::string& dir : case_dirs) {
    err << "[golden] node cases in " << dir << " ..." << std::flush;
    const CaseCounts c = RunCaseFolders(o, dir, "", false, out, err);
    err << " " << c.passed << " passed, " << c.failed << " failed, " << c.skipped << " skipped\n";
  }
  return 0;
}

int CmdInfo(const Options& o, std::ostream& out) {
  if (o.rest.size() != 1) throw Error(ErrorCode::kInvalidArgument, "info: give exactly one model file");
  const Model m = LoadModelFile(o.rest[0]);
  out << "model: " << o.rest[0] << "\n";
  out << "ir_version: " << m.ir_version << "\n";
  if (!m.producer.empty()) out << "producer: " << m.producer << "\n";
  out << "opsets:";
  for (const auto& [d, v] : m.opsets) out << " " << (d.empty() ? "ai.onnx" : d) << "=" << v;
  out << "\n";
  for (const auto& in : m.graph->inputs) {
    if (!m.graph->initializers.count(in.name)) out << "input " << in.name << " " << TypeString(in.type) << "\n";
  }
  const auto inferred = InferTypes(m);
  for (const auto& o2 : m.graph->outputs) {
    out << "output " << o2.name << " " << TypeString(o2.type);
    auto it = inferred.find(o2.name);
    if (it != inferred.end() && it->second.type.has_shape) {
      ValueType vt;
      vt.kind = ValueType::Kind::kTensor;
      vt.tensor = it->second.type;
      out << " (inferred " << TypeString(vt) << ")";
    }
    out << "\n";
  }
  std::map<std::string, int> ops;
  std::function<void(const Graph&)> count = [&](const Graph& g) {
    for (const Node& n : g.nodes) {
      ops[(n.domain.empty() ? "" : n.domain + ".") + n.op_type]++;
      for (const auto& [k, a] : n.attributes) {
        if (a.g) count(*a.g);
        for (const auto& sg : a.graphs) count(*sg);
      }
    }
  };
  count(*m.graph);
  size_t weights = 0;
  for (const auto& [k, t] : m.graph->initializers) weights += t.nbytes();
  out << "initializers: " << m.graph->initializers.size() << " (" << weights << " bytes)\n";
  for (const auto& [op, n] : ops) {
    const size_t dot = op.rfind('.');
    const bool have = FindRefOp(dot == std::string::npos ? "" : op.substr(0, dot), dot == std::string::npos ? op : op.substr(dot + 1)) != nullptr;
    out << "op " << op << " x" << n << (have ? "" : " (not supported)") << "\n";
  }
  return 0;
}

}  // namespace

int RunCli(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  try {
    Options o;
    o.threads = ThreadPool::DefaultThreads();
    bool isa_given = false;
    size_t i = 0;
    for (; i < args.size(); ++i) {
      const std::string& a = args[i];
      if (a == "--isa" && i + 1 < args.size()) { o.isa = ParseIsa(args[++i]); isa_given = true; }
      else if (a == "--threads" && i + 1 < args.size()) o.threads = int(ParseInt("--threads", args[++i], 1, 1024));
      else if (a == "--mode" && i + 1 < args.size()) o.mode = ParseMode(args[++i]);
      else if (a == "-h" || a == "--help") { out << kUsage; return 0; }
      else if (a.size() > 1 && a[0] == '-' ) { err << "onemodel: unknown option '" << a << "'\n" << kUsage; return 2; }
      else break;
    }
    if (!isa_given) o.isa = DefaultIsaCap();
    if (i == args.size()) { err << kUsage; return 2; }
    const std::string cmd = args[i];
    o.rest.assign(args.begin() + long(i) + 1, args.end());
    if (cmd == "version") {
      out << "onemodel " << ONEMODEL_VERSION << " (" << BuildName() << ")\n";
      return 0;
    }
    if (cmd == "targets") return CmdTargets(o, out);
    if (cmd == "bench-lanes") return CmdBenchLanes(o, out, err);
    if (cmd == "cases") return CmdCases(o, out, err);
    if (cmd == "hash") return CmdHash(o, out);
    if (cmd == "golden") return CmdGolden(o, out, err);
    if (cmd == "bench") return CmdBench(o, out);
    if (cmd == "info") return CmdInfo(o, out);
    if (cmd == "help") { out << kUsage; return 0; }
    err << "onemodel: unknown command '" << cmd << "'\n" << kUsage;
    return 2;
  } catch (const Error& e) {
    err << "onemodel: error: " << e.what() << "\n";
    return 1;
  } catch (const std::exception& e) {
    err << "onemodel: internal error: " << e.what() << "\n";
    return 1;
  }
}

}  // namespace onemodel
