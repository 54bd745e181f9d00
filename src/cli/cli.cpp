// Command-line commands (see cli.h), written against the public API only
// (include/onemodel/onemodel.h); ONEMODEL_* variables are read here as session options.
#include "cli.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <iomanip>
#include <map>
#include <sstream>

#include "files.h"
#include "options.h"
#include "onemodel/onemodel.h"

namespace onemodel::cli {
int64_t ParseInt(const std::string& flag, const std::string& v, int64_t lo, int64_t hi) {
  char* end = nullptr;
  const long long x = std::strtoll(v.c_str(), &end, 10);
  if (v.empty() || *end != 0 || x < lo || x > hi) {
    throw Error(ErrorCode::kInvalidArgument, flag + " takes a whole number from " + std::to_string(lo) + " to " +
                                                 std::to_string(hi) + ", not '" + v + "'");
  }
  return x;
}

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

// The session options of a command: the global options plus the ONEMODEL_* variables.
SessionOptions MakeSessionOptions(const Options& o) {
  SessionOptions so;
  so.mode = o.mode;
  so.threads = o.threads;
  so.isa = o.isa;
  so.memory_plan = Env("ONEMODEL_MEMORY_PLAN") != "0";
  so.prepack = Env("ONEMODEL_PREPACK") != "0";
  const std::string tiles = Env("ONEMODEL_AVX512_TILES");
  if (!tiles.empty()) so.avx512_tile_bits = int(ParseInt("ONEMODEL_AVX512_TILES", tiles, 0, 512));
  std::stringstream passes(Env("ONEMODEL_DISABLE_PASSES"));
  for (std::string p; std::getline(passes, p, ',');) {
    if (!p.empty()) so.disabled_passes.push_back(p);
  }
  const std::string prof = Env("ONEMODEL_PROFILE");
  so.profiling = prof == "1" ? Profiling::kByOpType : prof == "2" ? Profiling::kByNode : Profiling::kOff;
  return so;
}

// ONEMODEL_VERBOSE=1: the chosen target and each kernel's provider, once per process.
void MaybeDescribeKernels(const std::string& isa, std::ostream& err) {
  static bool done = false;
  if (done || Env("ONEMODEL_VERBOSE") != "1") return;
  done = true;
  err << DescribeKernels(isa) << std::flush;
}

Session LoadSession(const Options& o, const std::string& model, std::ostream& err) {
  MaybeDescribeKernels(o.isa, err);
  return Session(model, MakeSessionOptions(o));
}

// Runs s, printing the run's profile on err when ONEMODEL_PROFILE asked for one.
std::vector<NamedValue> RunSession(const Session& s, const std::vector<NamedValue>& feeds, std::ostream& err) {
  std::vector<NamedValue> out = s.Run(feeds);
  const RunProfile p = s.last_profile();
  if (!p.entries.empty()) err << p.ToString() << std::flush;
  return out;
}

std::string ShapeText(const std::vector<int64_t>& s) {
  std::string r = "[";
  for (size_t k = 0; k < s.size(); ++k) r += (k ? "," : "") + std::to_string(s[k]);
  return r + "]";
}

namespace {

const char* kUsage =
    "usage: onemodel COMMAND [ARGS] [--isa ISA] [--threads N] [--mode exact|fast]\n"
    "  (options go before or after the command; --mode fast: docs/graph-passes.md \"Fast passes\")\n"
    "commands (onemodel COMMAND --help for one):\n"
    "  run MODEL [--input NAME=FILE.npy ...] [--dim NAME=N ...] [--save DIR]\n"
    "                          run MODEL; print each output's type, shape, a summary and its hash\n"
    "  hash MODEL [--input NAME=FILE.npy ...] [--dim NAME=N ...] [--save DIR]\n"
    "                          golden lines: input/<name> <hash>, then <model>/<output> <hash>\n"
    "  golden [--models DIR ...] [--cases DIR ...] [--only A,B]\n"
    "                          golden lines of every model in DIR and every node case\n"
    "  cases DIR [--filter S] [--verbose] [--expected-fail FILE]\n"
    "                          run and check ONNX case folders; case/<name> <hash> lines\n"
    "  generate MODEL [--prompt N | --ids A,B,..] [--steps N] [--json]\n"
    "                          greedy decoding of a decoder-only LLM with its KV cache\n"
    "  bench MODEL [--runs N] [--input NAME=FILE.npy ...] [--dim NAME=N ...]\n"
    "                          time runs after a warm-up; last line median_ms=<x> min_ms=<y>\n"
    "  info MODEL [--plan]     the model's inputs, outputs, opsets and operators; --plan: one run,\n"
    "                          then the algorithm each node planned\n"
    "  families                every operator family's table of algorithms\n"
    "  targets                 the CPU's features, the compiled targets and the chosen one\n"
    "  bench-lanes [--n N] [--reps R] [--all]\n"
    "                          time the canonical L-lane float sum (the benchmark that chose L)\n"
    "  bench-peak [--reps R] [--all]\n"
    "                          the register-only multiply+add peak (GFLOP/s, 1 thread) per target\n"
    "  version                 the version and build\n"
    "options:\n"
    "  --isa ISA               cap the instruction set (ref, scalar, sse41, avx2, avxvnni, avx512,\n"
    "                          avx512vnni, neon, neondot, wasm128); default: ONEMODEL_ISA, else the\n"
    "                          best supported\n"
    "  --threads N             worker threads (default: ONEMODEL_THREADS, else all cores)\n"
    "  --mode exact|fast       default exact\n"
    "environment: ONEMODEL_ISA, ONEMODEL_THREADS, ONEMODEL_VERBOSE=1, ONEMODEL_PROFILE=1|2,\n"
    "  ONEMODEL_MEMORY_PLAN=0, ONEMODEL_PREPACK=0, ONEMODEL_DISABLE_PASSES=a,b,\n"
    "  ONEMODEL_AVX512_TILES=256|512 (README)\n";

const std::map<std::string, std::string>& CommandHelp() {
  static const std::map<std::string, std::string> h = {
      {"run",
       "usage: onemodel run MODEL [--input NAME=FILE.npy ...] [--dim NAME=N ...] [--save DIR]\n"
       "  Runs MODEL and prints, per output, its element type and shape, min/max/mean (numbers),\n"
       "  the first values and its SHA-256 golden hash. Inputs not given are generated (see hash).\n"
       "  --input NAME=FILE.npy   feed input NAME from a NumPy file\n"
       "  --dim NAME=N            size of the symbolic dimension NAME for generated inputs (default 1)\n"
       "  --save DIR              also write each tensor output to DIR/<output>.npy\n"},
      {"hash",
       "usage: onemodel hash MODEL [--input NAME=FILE.npy ...] [--dim NAME=N ...] [--save DIR]\n"
       "  Runs MODEL in exact mode; prints input/<name> <hash> per input, then <model>/<output>\n"
       "  <hash> per output. Inputs not given are generated: floats uniform in [-1, 1), integers in\n"
       "  [0, 64), bools alternating (SplitMix64 seeded by the FNV-1a hash of the input's name).\n"
       "  --save DIR writes each tensor output to DIR/<output>.npy\n"},
      {"golden",
       "usage: onemodel golden [--models DIR ...] [--cases DIR ...] [--only A,B]\n"
       "  Every model DIR/<m>.onnx (stored inputs from DIR/<m>.inputs, NAME=PATH lines; others\n"
       "  generated): input/<m>/<name> <hash> lines, then <m>/<output> <hash>; then a case/<name>\n"
       "  <hash> line per node case. Progress on stderr. --only runs the named models only.\n"},
      {"cases",
       "usage: onemodel cases DIR [--filter S] [--verbose] [--expected-fail FILE]\n"
       "  Runs every ONNX case folder in DIR (model.onnx + test_data_set_0), compares with the\n"
       "  expected outputs (rtol 1e-3, atol 1e-7, or a case's `tolerance` file: rtol atol),\n"
       "  prints case/<name> <hash> per case and\n"
       "  `N passed, N failed, N skipped` on stderr. --verbose: a PASS/FAIL/SKIP line per case.\n"
       "  --expected-fail FILE: the cases FILE names (one per line: name, then the reason; #\n"
       "  comments) that fail are counted as `N expected failures`, not as failed.\n"},
      {"generate",
       "usage: onemodel generate MODEL [--prompt N | --ids A,B,..] [--steps N] [--json]\n"
       "  Greedy decoding, batch 1, of a decoder-only language model laid out as ONNX Runtime\n"
       "  GenAI's builder or transformers.js's exports lay them out (input_ids, attention_mask,\n"
       "  position_ids, past_key_values.<k> in; logits, present.<k> out): the prompt (--ids, or\n"
       "  ids 1 .. N, default 8) in one step, then --steps N (default 16) tokens, each present.<k>\n"
       "  fed back as past_key_values.<k>. Prints the new tokens, the prompt's time and the time\n"
       "  per decoded token; --json: one JSON line (tools/bench_llm.mjs reads it).\n"},
      {"bench",
       "usage: onemodel bench MODEL [--runs N] [--input NAME=FILE.npy ...] [--dim NAME=N ...]\n"
       "  One untimed warm-up run, then N (default 10) timed runs; checks the last run's outputs\n"
       "  equal the first's; last line median_ms=<x> min_ms=<y>.\n"},
      {"info",
       "usage: onemodel info MODEL [--plan [--input NAME=FILE.npy ...] [--dim NAME=N ...]]\n"
       "  Lists the model's inputs, outputs (declared and inferred), opsets and operators.\n"
       "  --plan: runs the model once (inputs as `hash` makes them) and prints, per node whose\n"
       "  operator has a family table, `plan <node> <op_type> <family>/<algorithm> exact|fast`.\n"},
      {"families",
       "usage: onemodel families\n  Prints every operator family's table: `family NAME: OP_TYPE ...`, then one line "
       "per\n"
       "  algorithm, `  NAME exact|fast DEVICE [kernels]`, the reference first.\n"},
      {"targets",
       "usage: onemodel targets\n  Prints the CPU's features, the compiled targets, the selected one and L.\n"},
      {"bench-lanes",
       "usage: onemodel bench-lanes [--n N] [--reps R] [--all]\n"
       "  Times the canonical L-lane float sum for L = 16, 32, 64, 128 and checks it against the\n"
       "  reference bit for bit; --all: every target the CPU runs (up to --isa).\n"},
      {"bench-peak",
       "usage: onemodel bench-peak [--reps R] [--all]\n"
       "  Times independent chains of a separate float multiply and add on whole vectors, one\n"
       "  thread, no memory traffic (best of R, default 5): the peak exact mode's arithmetic can\n"
       "  reach on this core. One line per target: target=<t> lanes=<n> gflops=<x>; --all: every\n"
       "  target the CPU runs (up to --isa).\n"},
      {"version", "usage: onemodel version\n  Prints the version and the build (architecture, compiler).\n"},
  };
  return h;
}

Mode ParseMode(const std::string& m) {
  if (m == "exact") return Mode::kExact;
  if (m == "fast") return Mode::kFast;
  throw Error(ErrorCode::kInvalidArgument, "--mode takes exact or fast, not '" + m + "'");
}

std::string ModelStem(const std::string& path) {
  std::string base = BaseName(path);
  if (base.size() > 5 && base.substr(base.size() - 5) == ".onnx") base = base.substr(0, base.size() - 5);
  return base;
}

// An output name as a file name: characters other than [A-Za-z0-9._-] become '_'.
std::string SafeFileName(const std::string& name) {
  std::string r = name;
  for (char& c : r) {
    const bool ok =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
    if (!ok) c = '_';
  }
  return r.empty() || r[0] == '.' ? "_" + r : r;
}

// The session's inputs: from .npy files where given (NAME -> path), else generated.
std::vector<NamedValue> MakeFeeds(const Session& s, const std::string& model,
                                  const std::map<std::string, std::string>& files,
                                  const std::map<std::string, int64_t>& dims) {
  std::map<std::string, Tensor> given;
  for (const auto& [name, path] : files) {
    bool known = false;
    for (const auto& in : s.inputs()) known |= in.name == name;
    if (!known) throw Error(ErrorCode::kInvalidArgument, model + ": the model has no input named '" + name + "'");
    const std::vector<uint8_t> bytes = ReadFile(path);
    given[name] = ReadNpy(bytes.data(), bytes.size(), path);
  }
  std::vector<NamedValue> feeds;
  for (const auto& in : s.inputs()) {
    auto it = given.find(in.name);
    if (it == given.end() && in.kind == ValueInfo::Kind::kTensor) {
      // A generated input holds at most 2^28 elements (1 GiB of floats); larger ones are
      // given with --input (a huge --dim would otherwise fill gigabytes first).
      double n = 1;
      for (size_t k = 0; k < in.shape.size(); ++k) {
        int64_t d = in.shape[k];
        if (d < 0) {
          auto di = k < in.symbolic.size() ? dims.find(in.symbolic[k]) : dims.end();
          d = di != dims.end() ? di->second : 1;
        }
        n *= double(d);
      }
      if (n > double(int64_t(1) << 28)) {
        throw Error(ErrorCode::kInvalidArgument, "input '" + in.name + "' would be generated with " +
                                                     std::to_string(n) +
                                                     " elements (at most 2^28): give it with --input");
      }
    }
    feeds.push_back({in.name, it != given.end() ? it->second : MakeGoldenInput(in, dims)});
  }
  return feeds;
}

void SaveOutput(const std::string& dir, const NamedValue& v) {
  if (dir.empty() || !v.value.is_tensor()) return;
  SaveNpy(JoinPath(dir, SafeFileName(v.name) + ".npy"), v.value.tensor());
}

void RunModelLines(const Options& o, const std::string& model, const std::map<std::string, std::string>& files,
                   const std::map<std::string, int64_t>& dims, const std::string& input_prefix,
                   const std::string& save_dir, std::ostream& out, std::ostream& err) {
  Session s = LoadSession(o, model, err);
  const std::vector<NamedValue> feeds = MakeFeeds(s, model, files, dims);
  for (const NamedValue& in : feeds) out << "input/" << input_prefix << in.name << " " << GoldenHash(in.value) << "\n";
  const std::vector<NamedValue> outs = RunSession(s, feeds, err);
  const std::string stem = ModelStem(model);
  for (const NamedValue& v : outs) {
    out << stem << "/" << v.name << " " << GoldenHash(v.value) << "\n";
    SaveOutput(save_dir, v);
  }
  out.flush();
}

// MODEL [--input NAME=FILE.npy ...] [--dim NAME=N ...] plus, per command, --save DIR
// (hash, run) or --runs N (bench).
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
      if (eq == std::string::npos || eq == 0)
        throw Error(ErrorCode::kInvalidArgument, a + " needs NAME=VALUE, not '" + v + "'");
      return std::make_pair(v.substr(0, eq), v.substr(eq + 1));
    };
    if (a == "--input") {
      auto [k, v] = kv();
      m.files[k] = v;
    } else if (a == "--dim") {
      auto [k, v] = kv();
      m.dims[k] = ParseInt("--dim " + k, v, 0, int64_t(1) << 31);
    } else if (a == "--save" && (cmd == "hash" || cmd == "run")) {
      m.save_dir = value();
      MakeDirectories(m.save_dir, "--save");
    } else if (a == "--runs" && cmd == "bench")
      m.runs = int(ParseInt("--runs", value(), 1, 100000));
    else if (!a.empty() && a[0] != '-' && m.model.empty())
      m.model = a;
    else
      throw Error(ErrorCode::kInvalidArgument, cmd + ": unexpected argument '" + a + "'");
  }
  if (m.model.empty()) throw Error(ErrorCode::kInvalidArgument, cmd + ": give the model file");
  return m;
}

int CmdHash(const Options& o, std::ostream& out, std::ostream& err) {
  const ModelArgs m = ParseModelArgs(o, "hash");
  RunModelLines(o, m.model, m.files, m.dims, "", m.save_dir, out, err);
  return 0;
}

// One output for a person: type and shape, then min/max/mean and the first values of a
// numeric tensor (NaNs counted apart), then its hash.
void Describe(const NamedValue& v, std::ostream& out) {
  out << "output " << v.name << ": ";
  if (v.value.kind() == Value::Kind::kNone) {
    out << "optional without a value\n";
  } else if (v.value.kind() == Value::Kind::kSequence) {
    out << "sequence of " << v.value.sequence().size() << " tensors\n";
  } else {
    const Tensor& t = v.value.tensor();
    out << ElementTypeName(t.type()) << " " << ShapeText(t.shape()) << " (" << t.size() << " elements)\n";
    const int64_t shown = std::min<int64_t>(t.size(), 8);
    if (t.type() == ElementType::kString) {
      out << "  first:";
      for (int64_t i = 0; i < shown; ++i) out << " \"" << t.strings()[size_t(i)] << "\"";
      out << (t.size() > shown ? " ..." : "") << "\n";
    } else if (t.type() != ElementType::kComplex64 && t.type() != ElementType::kComplex128 && t.size() > 0) {
      double lo = INFINITY, hi = -INFINITY, sum = 0;
      int64_t nans = 0;
      for (int64_t i = 0; i < t.size(); ++i) {
        const double x = t.ElementAsDouble(i);
        if (x != x) {
          ++nans;
          continue;
        }
        lo = std::min(lo, x);
        hi = std::max(hi, x);
        sum += x;
      }
      const int64_t counted = t.size() - nans;
      out << std::setprecision(7) << "  min " << (counted ? lo : NAN) << "  max " << (counted ? hi : NAN) << "  mean "
          << (counted ? sum / double(counted) : NAN);
      if (nans) out << "  NaN " << nans;
      out << "\n  first:";
      for (int64_t i = 0; i < shown; ++i) out << " " << t.ElementAsDouble(i);
      out << (t.size() > shown ? " ..." : "") << "\n";
    }
  }
  out << "  sha256 " << GoldenHash(v.value) << "\n";
}

int CmdRun(const Options& o, std::ostream& out, std::ostream& err) {
  const ModelArgs m = ParseModelArgs(o, "run");
  Session s = LoadSession(o, m.model, err);
  const std::vector<NamedValue> feeds = MakeFeeds(s, m.model, m.files, m.dims);
  for (const NamedValue& in : feeds) {
    const Tensor& t = in.value.tensor();
    out << "input " << in.name << ": " << ElementTypeName(t.type()) << " " << ShapeText(t.shape())
        << (m.files.count(in.name) ? " from " + m.files.at(in.name) : std::string(" generated")) << "\n";
  }
  out << "mode " << (o.mode == Mode::kExact ? "exact" : "fast") << ", target " << s.target() << ", " << s.threads()
      << " threads\n";
  for (const NamedValue& v : RunSession(s, feeds, err)) {
    Describe(v, out);
    SaveOutput(m.save_dir, v);
  }
  out.flush();
  return 0;
}

// bench: one untimed warm-up run, then --runs timed runs of Session::Run (inputs made
// once, outside the timing); the last line is `median_ms=<x> min_ms=<y>`.
int CmdBench(const Options& o, std::ostream& out, std::ostream& err) {
  const ModelArgs m = ParseModelArgs(o, "bench");
  Session s = LoadSession(o, m.model, err);
  const std::vector<NamedValue> feeds = MakeFeeds(s, m.model, m.files, m.dims);
  const std::vector<NamedValue> first = RunSession(s, feeds, err);
  std::vector<double> ms;
  std::vector<NamedValue> outs;
  for (int r = 0; r < m.runs; ++r) {
    outs.clear();
    const auto t0 = std::chrono::steady_clock::now();
    outs = s.Run(feeds);
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    const RunProfile p = s.last_profile();  // outside the timing
    if (!p.entries.empty()) err << p.ToString() << std::flush;
  }
  // The last run (which follows the memory plan) must give the first run's bytes.
  for (size_t k = 0; k < first.size() && k < outs.size(); ++k) {
    if (!first[k].value.is_tensor()) continue;
    const Tensor& a = first[k].value.tensor();
    const Tensor& b = outs[k].value.tensor();
    if (a.type() == ElementType::kString) continue;
    if (a.shape() != b.shape() || a.type() != b.type() || std::memcmp(a.data(), b.data(), a.byte_size()) != 0) {
      throw Error(ErrorCode::kInternal,
                  "bench: output " + std::to_string(k) + " of the last run differs from the first run's");
    }
  }
  const MemoryPlanStats plan = s.memory_plan_stats();
  std::vector<double> sorted = ms;
  std::sort(sorted.begin(), sorted.end());
  const size_t n = sorted.size();
  const double median = n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
  out << "model: " << m.model << "\n";
  out << "mode: " << (o.mode == Mode::kExact ? "exact" : "fast") << " isa: " << s.target()
      << " threads: " << s.threads() << " runs: " << m.runs << "\n";
  if (plan.runs) {
    out << std::fixed << std::setprecision(1) << "memory plan: "
        << (plan.last_replayed ? "followed"
            : plan.disabled    ? "off"
                               : "not followed")
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
  const std::string list = JoinPath(dir, stem + ".inputs");
  if (!FileExists(list)) return {};
  const std::vector<uint8_t> bytes = ReadFile(list);
  return ParseInputList(std::string(bytes.begin(), bytes.end()), dir, list);
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
    if (a == "--models")
      model_dirs.push_back(value());
    else if (a == "--cases")
      case_dirs.push_back(value());
    else if (a == "--only")
      only = "," + value() + ",";
    else
      throw Error(ErrorCode::kInvalidArgument, "golden: unexpected argument '" + a + "'");
  }
  if (model_dirs.empty() && case_dirs.empty())
    throw Error(ErrorCode::kInvalidArgument, "golden: give --models DIR and/or --cases DIR");
  for (const std::string& dir : model_dirs) {
    if (!IsDirectory(dir)) throw Error(ErrorCode::kIo, "golden: '" + dir + "' is not a directory");
    for (const std::string& name : ListDirectory(dir)) {
      if (name.size() <= 5 || name.substr(name.size() - 5) != ".onnx") continue;
      const std::string stem = name.substr(0, name.size() - 5);
      if (!only.empty() && only.find("," + stem + ",") == std::string::npos) continue;
      err << "[golden] " << stem << " ..." << std::flush;
      const auto t0 = std::chrono::steady_clock::now();
      RunModelLines(o, JoinPath(dir, name), ReadInputList(dir, stem), {}, stem + "/", "", out, err);
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

// info --plan: one run with the given or generated inputs, then each node's planned row.
int CmdInfoPlan(const Options& o, std::ostream& out, std::ostream& err) {
  Options rest = o;
  rest.rest.erase(std::find(rest.rest.begin(), rest.rest.end(), "--plan"));
  const ModelArgs m = ParseModelArgs(rest, "info");
  Session s = LoadSession(o, m.model, err);
  RunSession(s, MakeFeeds(s, m.model, m.files, m.dims), err);
  out << "mode " << (o.mode == Mode::kExact ? "exact" : "fast") << ", target " << s.target() << ", " << s.threads()
      << " threads\n";
  for (const NodePlan& p : s.plans())
    out << "plan " << (p.node.empty() ? "(unnamed)" : p.node) << " " << p.op_type << " " << p.family << "/"
        << p.algorithm << " " << (p.fast ? "fast" : "exact") << "\n";
  return 0;
}

int CmdInfo(const Options& o, std::ostream& out, std::ostream& err) {
  if (std::find(o.rest.begin(), o.rest.end(), "--plan") != o.rest.end()) return CmdInfoPlan(o, out, err);
  if (o.rest.size() != 1) throw Error(ErrorCode::kInvalidArgument, "info: give exactly one model file");
  const ModelInfo m = InspectModel(o.rest[0]);
  out << "model: " << o.rest[0] << "\n";
  out << "ir_version: " << m.ir_version << "\n";
  if (!m.producer.empty()) out << "producer: " << m.producer << "\n";
  out << "opsets:";
  for (const auto& [d, v] : m.opsets) out << " " << (d.empty() ? "ai.onnx" : d) << "=" << v;
  out << "\n";
  for (const ValueInfo& in : m.inputs) out << "input " << in.name << " " << in.ToString() << "\n";
  for (size_t k = 0; k < m.outputs.size(); ++k) {
    out << "output " << m.outputs[k].name << " " << m.outputs[k].ToString();
    const ValueInfo& inf = m.inferred_outputs[k];
    if (inf.kind == ValueInfo::Kind::kTensor && inf.has_shape) out << " (inferred " << inf.ToString() << ")";
    out << "\n";
  }
  out << "initializers: " << m.initializer_count << " (" << m.initializer_bytes << " bytes)\n";
  for (const OperatorUse& u : m.operators) {
    out << "op " << (u.domain.empty() ? "" : u.domain + ".") << u.op_type << " x" << u.count
        << (u.supported ? "" : " (not supported)") << "\n";
  }
  return 0;
}

}  // namespace

std::map<std::string, std::string> ParseInputList(const std::string& text, const std::string& dir,
                                                  const std::string& where) {
  std::map<std::string, std::string> files;
  size_t start = 0;
  while (start < text.size()) {
    size_t nl = text.find('\n', start);
    if (nl == std::string::npos) nl = text.size();
    const std::string line = text.substr(start, nl - start);
    start = nl + 1;
    if (line.empty() || line[0] == '#') continue;
    const size_t eq = line.find('=');
    if (eq == std::string::npos || eq == 0)
      throw Error(ErrorCode::kInvalidArgument, where + ": a line is not NAME=PATH: '" + line + "'");
    const std::string path = line.substr(eq + 1);
    files[line.substr(0, eq)] = IsAbsolutePath(path) ? path : JoinPath(dir, path);
  }
  return files;
}

int RunCli(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  try {
    Options o;
    o.isa = Env("ONEMODEL_ISA");
    const std::string env_threads = Env("ONEMODEL_THREADS");
    if (!env_threads.empty()) o.threads = int(ParseInt("ONEMODEL_THREADS", env_threads, 1, 1024));
    // The global options, before or after the command; the rest is the command's.
    std::string cmd;
    bool help = false;
    for (size_t i = 0; i < args.size(); ++i) {
      const std::string& a = args[i];
      auto value = [&]() {
        if (i + 1 >= args.size()) throw Error(ErrorCode::kInvalidArgument, a + " needs a value");
        return args[++i];
      };
      if (a == "--isa")
        o.isa = value();
      else if (a == "--threads")
        o.threads = int(ParseInt("--threads", value(), 1, 1024));
      else if (a == "--mode")
        o.mode = ParseMode(value());
      else if (a == "-h" || a == "--help")
        help = true;
      else if (cmd.empty() && a.size() > 1 && a[0] == '-') {
        err << "onemodel: unknown option '" << a << "'\n" << kUsage;
        return 2;
      } else if (cmd.empty())
        cmd = a;
      else
        o.rest.push_back(a);
    }
    if (cmd == "help") {
      if (o.rest.empty()) {
        out << kUsage;
        return 0;
      }
      cmd = o.rest[0];
      help = true;
    }
    if (help) {
      if (cmd.empty()) {
        out << kUsage;
        return 0;
      }
      auto it = CommandHelp().find(cmd);
      if (it == CommandHelp().end()) {
        err << "onemodel: unknown command '" << cmd << "'\n" << kUsage;
        return 2;
      }
      out << it->second;
      return 0;
    }
    if (cmd.empty()) {
      err << kUsage;
      return 2;
    }
    if (!o.isa.empty() && o.isa != "ref") (void)DescribeKernels(o.isa);  // an unknown or unsupported ISA fails first
    if (cmd == "version") {
      out << "onemodel " << Version() << " (" << BuildDescription() << ")\n";
      return 0;
    }
    if (cmd == "targets") return CmdTargets(o, out, err);
    if (cmd == "bench-lanes") return CmdBenchLanes(o, out, err);
    if (cmd == "bench-peak") return CmdBenchPeak(o, out);
    if (cmd == "cases") return CmdCases(o, out, err);
    if (cmd == "hash") return CmdHash(o, out, err);
    if (cmd == "run") return CmdRun(o, out, err);
    if (cmd == "golden") return CmdGolden(o, out, err);
    if (cmd == "bench") return CmdBench(o, out, err);
    if (cmd == "info") return CmdInfo(o, out, err);
    if (cmd == "families") return CmdFamilies(o, out);
    if (cmd == "generate") return CmdGenerate(o, out, err);
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

}  // namespace onemodel::cli
