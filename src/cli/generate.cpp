// `onemodel generate`: greedy decoding of a decoder-only language model with its KV
// cache, the way ONNX Runtime GenAI's builder and transformers.js's exports lay such
// models out: inputs input_ids [B, S] int64, attention_mask [B, T] int64 and
// position_ids [B, S] int64 (each optional but input_ids), past_key_values.<k> [B, H, P, D]
// (empty at the first step); outputs logits [B, S, V] and present.<k>, fed back as
// past_key_values.<k> at the next step (moved, not copied). Batch 1. Prints the tokens and
// the time of the prompt's step (prefill) and of each later step (decode); --json prints
// one JSON line instead (tools/bench_llm.mjs reads it).
#include <algorithm>
#include <chrono>
#include <cstring>
#include <fstream>
#include <iomanip>
#include <sstream>

#include "options.h"

namespace onemodel::cli {
namespace {

struct GenerateArgs {
  std::string model;
  std::vector<int64_t> prompt;
  int64_t steps = 16;
  int64_t rounds = 1;
  bool json = false;
};

std::vector<int64_t> ParseIds(const std::string& text) {
  std::vector<int64_t> ids;
  std::stringstream ss(text);
  for (std::string t; std::getline(ss, t, ',');) ids.push_back(ParseInt("--ids", t, 0, int64_t(1) << 40));
  if (ids.empty()) throw Error(ErrorCode::kInvalidArgument, "--ids takes token ids separated by commas");
  return ids;
}

GenerateArgs ParseGenerateArgs(const Options& o) {
  GenerateArgs g;
  int64_t prompt_len = 8;
  bool have_ids = false;
  for (size_t i = 0; i < o.rest.size(); ++i) {
    const std::string& a = o.rest[i];
    auto value = [&]() -> const std::string& {
      if (i + 1 >= o.rest.size()) throw Error(ErrorCode::kInvalidArgument, "generate: " + a + " needs a value");
      return o.rest[++i];
    };
    if (a == "--ids") {
      g.prompt = ParseIds(value());
      have_ids = true;
    } else if (a == "--prompt") {
      prompt_len = ParseInt("--prompt", value(), 1, 1 << 20);
    } else if (a == "--steps") {
      g.steps = ParseInt("--steps", value(), 0, 1 << 20);
    } else if (a == "--rounds") {
      g.rounds = ParseInt("--rounds", value(), 1, 1000);
    } else if (a == "--json") {
      g.json = true;
    } else if (!a.empty() && a[0] != '-' && g.model.empty()) {
      g.model = a;
    } else {
      throw Error(ErrorCode::kInvalidArgument, "generate: unexpected argument '" + a + "'");
    }
  }
  if (g.model.empty()) throw Error(ErrorCode::kInvalidArgument, "generate: give the model");
  // The default prompt: ids 1 .. N (the vocabulary's first tokens), as --prompt N says.
  if (!have_ids)
    for (int64_t k = 1; k <= prompt_len; ++k) g.prompt.push_back(k);
  return g;
}

const ValueInfo* FindInput(const Session& s, const std::string& name) {
  for (const ValueInfo& v : s.inputs())
    if (v.name == name) return &v;
  return nullptr;
}

// The past inputs and the outputs that feed them: past_key_values.<k> <- present.<k>.
struct CachePair {
  std::string past, present;
  ElementType type;
  std::vector<int64_t> empty_shape;  // [1, H, 0, D]
};

std::vector<CachePair> CachePairs(const Session& s) {
  static const std::string kPast = "past_key_values.";
  std::vector<CachePair> pairs;
  for (const ValueInfo& in : s.inputs()) {
    if (in.name.rfind(kPast, 0) != 0) {
      if (in.name != "input_ids" && in.name != "attention_mask" && in.name != "position_ids")
        throw Error(ErrorCode::kInvalidArgument, "generate: the model has input '" + in.name +
                                                     "', which a decoder of this layout does not have "
                                                     "(input_ids, attention_mask, position_ids, past_key_values.*)");
      continue;
    }
    CachePair p{in.name, "present." + in.name.substr(kPast.size()), in.type, {}};
    const bool found =
        std::any_of(s.outputs().begin(), s.outputs().end(), [&](const ValueInfo& v) { return v.name == p.present; });
    if (!found)
      throw Error(ErrorCode::kInvalidArgument, "generate: input '" + p.past + "' has no output '" + p.present + "'");
    if (in.type != ElementType::kFloat && in.type != ElementType::kFloat16)
      throw Error(ErrorCode::kTypeMismatch, "generate: '" + p.past + "' is " + in.ToString() + ", not a float tensor");
    if (!in.has_shape || in.shape.size() != 4 || in.shape[1] < 0 || in.shape[3] < 0)
      throw Error(ErrorCode::kShapeMismatch,
                  "generate: '" + p.past + "' is " + in.ToString() + "; its heads and head size must be fixed");
    p.empty_shape = {1, in.shape[1], 0, in.shape[3]};
    pairs.push_back(p);
  }
  if (!FindInput(s, "input_ids"))
    throw Error(ErrorCode::kInvalidArgument, "generate: the model has no input 'input_ids'");
  return pairs;
}

Tensor Ids(const std::vector<int64_t>& v, int64_t from, int64_t n) {
  return Tensor::FromVector(std::vector<int64_t>(v.begin() + from, v.begin() + from + n), {1, n});
}

// The token of the largest logit of the last position (the first one on ties).
int64_t Argmax(const Tensor& logits) {
  if (logits.type() != ElementType::kFloat || logits.rank() != 3 || logits.shape()[2] < 1)
    throw Error(ErrorCode::kTypeMismatch, "generate: 'logits' must be float [1, S, V]");
  const int64_t vocab = logits.shape()[2];
  const float* row = logits.data<float>() + (logits.size() - vocab);
  return int64_t(std::max_element(row, row + vocab) - row);
}

// The peak resident set of this process (VmHWM), 0 where /proc does not tell (wasm: the
// CLI reads files through the host's bridge only).
int64_t PeakRssBytes() {
#if defined(__EMSCRIPTEN__)
  return 0;
#endif
  std::ifstream f("/proc/self/status");
  for (std::string line; std::getline(f, line);)
    if (line.rfind("VmHWM:", 0) == 0) return int64_t(std::strtoll(line.c_str() + 6, nullptr, 10)) * 1024;
  return 0;
}

// One generation from an empty cache: the tokens (prompt first), the prompt's step time
// and each later step's.
struct Generation {
  std::vector<int64_t> tokens;
  double prefill_ms = 0;
  std::vector<double> step_ms;
};

Generation Generate(const Session& s, const GenerateArgs& g, const std::vector<CachePair>& pairs, bool has_mask,
                    bool has_pos, std::ostream& err) {
  Generation r;
  std::vector<int64_t>& tokens = r.tokens;
  tokens = g.prompt;
  std::vector<Tensor> past;
  for (const CachePair& p : pairs) past.emplace_back(p.type, p.empty_shape);
  std::vector<std::string> fetch{"logits"};
  for (const CachePair& p : pairs) fetch.push_back(p.present);

  int64_t done = 0;  // tokens already in the cache
  // The prompt's step gives the first new token, each later step one more.
  for (int64_t step = 0; step < std::max<int64_t>(g.steps, 1); ++step) {
    const int64_t n = int64_t(tokens.size()) - done;
    std::vector<NamedValue> feeds;
    feeds.push_back({"input_ids", Ids(tokens, done, n)});
    if (has_mask)
      feeds.push_back({"attention_mask", Tensor::FromVector(std::vector<int64_t>(done + n, 1), {1, done + n})});
    if (has_pos) {
      std::vector<int64_t> pos(static_cast<size_t>(n));
      for (int64_t k = 0; k < n; ++k) pos[size_t(k)] = done + k;
      feeds.push_back({"position_ids", Tensor::FromVector(pos, {1, n})});
    }
    for (size_t k = 0; k < pairs.size(); ++k) feeds.push_back({pairs[k].past, std::move(past[k])});
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<NamedValue> outs = s.Run(feeds, fetch);
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    const RunProfile profile = s.last_profile();  // ONEMODEL_PROFILE, outside the timing
    if (!profile.entries.empty()) err << profile.ToString() << std::flush;
    if (step == 0)
      r.prefill_ms = ms;
    else
      r.step_ms.push_back(ms);
    for (size_t k = 0; k < pairs.size(); ++k) past[k] = std::move(outs[k + 1].value.tensor());
    done += n;
    if (g.steps > 0) tokens.push_back(Argmax(outs[0].value.tensor()));
  }
  return r;
}

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

double Mean(const std::vector<double>& v) {
  double sum = 0;
  for (double x : v) sum += x;
  return v.empty() ? 0 : sum / double(v.size());
}

}  // namespace

int CmdGenerate(const Options& o, std::ostream& out, std::ostream& err) {
  const GenerateArgs g = ParseGenerateArgs(o);
  const auto t_load = std::chrono::steady_clock::now();
  Session s = LoadSession(o, g.model, err);
  const double load_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t_load).count();
  const std::vector<CachePair> pairs = CachePairs(s);
  const bool has_mask = FindInput(s, "attention_mask") != nullptr;
  const bool has_pos = FindInput(s, "position_ids") != nullptr;
  // Each round decodes from an empty cache again; the first pays the session's first-run
  // work (plans, packed weights). The figures are the rounds' medians.
  std::vector<double> prefills, decodes, medians;
  Generation first;
  for (int64_t round = 0; round < g.rounds; ++round) {
    Generation r = Generate(s, g, pairs, has_mask, has_pos, err);
    if (round == 0)
      first = r;
    else if (r.tokens != first.tokens)
      throw Error(ErrorCode::kInternal,
                  "generate: round " + std::to_string(round) + " gave other tokens than the first");
    prefills.push_back(r.prefill_ms);
    decodes.push_back(Mean(r.step_ms));
    medians.push_back(Median(r.step_ms));
  }
  const std::vector<int64_t>& tokens = first.tokens;
  const double prefill_ms = Median(prefills), mean = Median(decodes), median = Median(medians);
  const size_t decoded = first.step_ms.size();
  std::ostringstream ids;
  for (size_t k = g.prompt.size(); k < tokens.size(); ++k) ids << (k > g.prompt.size() ? "," : "") << tokens[k];
  out << std::fixed << std::setprecision(3);
  if (g.json) {
    out << "{\"load_ms\":" << load_ms << ",\"prompt\":" << g.prompt.size() << ",\"rounds\":" << g.rounds
        << ",\"prefill_ms\":" << prefill_ms << ",\"decode_ms_per_token\":" << mean << ",\"decode_ms_median\":" << median
        << ",\"tokens\":[" << ids.str() << "],\"rss_bytes\":" << PeakRssBytes() << ",\"isa\":\"" << s.target()
        << "\",\"threads\":" << s.threads() << "}\n";
    return 0;
  }
  out << "tokens: " << ids.str() << "\n";
  out << "isa: " << s.target() << " threads: " << s.threads() << " load_ms=" << load_ms << "\n";
  out << "prefill: " << g.prompt.size() << " tokens in " << prefill_ms << " ms ("
      << double(g.prompt.size()) * 1000.0 / prefill_ms << " tokens/s)\n";
  if (decoded)
    out << "decode: " << decoded << " tokens, " << mean << " ms each (median " << median << ", " << 1000.0 / mean
        << " tokens/s)\n";
  const int64_t rss = PeakRssBytes();
  if (rss) out << "peak_rss_mib=" << double(rss) / 1048576.0 << "\n";
  return 0;
}

}  // namespace onemodel::cli
