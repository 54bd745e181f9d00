// ONNX Runtime's com.microsoft attentions (ops/nn/ms_attention.h): GroupQueryAttention
// (first prompt with right padding, decoding with a past, chunked prefill, packed QKV,
// rotary in both layouts, local window, softcap, head_sink and smooth softmax,
// attention_bias, both scores outputs, float16), MultiHeadAttention (bias, key padding
// masks of every form, attention_bias, past, unidirectional, BNSH and packed K/V, the qk
// output) and Attention (the projection, mask_index forms, past and present,
// qkv_hidden_sizes). Every case at every row equals the oracle.
#include "tests/catch.h"

#include <string>
#include <vector>

#include "core/error.h"
#include "runtime/session.h"
#include "tests/ops/op_test.h"
#include "tests/test_util.h"

namespace onemodel::impl {
namespace test {
namespace {

std::vector<double> IntValues(std::vector<int64_t> v) { return std::vector<double>(v.begin(), v.end()); }

// Rotary caches [rows, half]: cos and sin of increasing angles.
void Caches(std::vector<TInit>& inits, int64_t rows, int64_t half) {
  std::vector<double> c, s;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t k = 0; k < half; ++k) {
      const double a = double(r) / (1.0 + double(k) * 3.0);
      c.push_back(float(__builtin_cos(a)));
      s.push_back(float(__builtin_sin(a)));
    }
  inits.push_back({"cos", F, {rows, half}, c});
  inits.push_back({"sin", F, {rows, half}, s});
}

struct Gqa {
  const char* what;
  int64_t B, S, N, Nkv, H, P, total;
  std::vector<int64_t> seqlens;
  bool packed = false, rotary = false, interleaved = false, pos = false, bias = false, sink = false;
  int64_t window = -1, qk = 0, smooth = -1;
  float softcap = 0.0f;
  bool f16 = false;
};

OpCase GqaCase(SplitMix64& rng, const Gqa& g, int kind) {
  const int64_t D = g.packed ? (g.N + 2 * g.Nkv) * g.H : g.N * g.H;
  const Shape qs{g.B, g.S, D};
  std::vector<TInit> inits;
  std::vector<TNode> nodes;
  std::vector<std::string> in(12);
  in[0] = g.f16 ? "xh" : "X";
  auto floats = [&](const std::string& name, Shape s, float lo, float hi) {
    inits.push_back({g.f16 ? name + "f" : name, F, s, Floats(rng, Count(s), lo, hi)});
    if (g.f16) nodes.push_back({"Cast", {name + "f"}, {name}, {AI("to", 10)}});
  };
  if (g.f16) nodes.push_back({"Cast", {"X"}, {"xh"}, {AI("to", 10)}});
  if (!g.packed) {
    floats("K", {g.B, g.S, g.Nkv * g.H}, -2.0f, 2.0f);
    floats("V", {g.B, g.S, g.Nkv * g.H}, -1.0f, 1.0f);
    in[1] = "K", in[2] = "V";
  }
  if (g.P) {
    floats("PK", {g.B, g.Nkv, g.P, g.H}, -2.0f, 2.0f);
    floats("PV", {g.B, g.Nkv, g.P, g.H}, -1.0f, 1.0f);
    in[3] = "PK", in[4] = "PV";
  }
  inits.push_back({"SL", I32, {g.B}, IntValues(g.seqlens)});
  inits.push_back({"TOT", I32, {}, IntValues({g.total})});
  in[5] = "SL", in[6] = "TOT";
  std::vector<TAttr> attrs = {AI("num_heads", g.N), AI("kv_num_heads", g.Nkv)};
  if (g.rotary) {
    std::vector<TInit> c;
    Caches(c, g.total + 4, g.H / 2 - (g.interleaved ? 0 : 4));
    for (auto& t : c) floats(t.name, t.shape, -1.0f, 1.0f), inits.back().data = t.data;
    in[7] = "cos", in[8] = "sin";
    attrs.push_back(AI("do_rotary", 1));
    attrs.push_back(AI("rotary_interleaved", g.interleaved));
  }
  if (g.pos) {
    std::vector<int64_t> p;
    for (int64_t b = 0; b < g.B; ++b)
      for (int64_t s = 0; s < g.S; ++s) p.push_back(g.seqlens[size_t(b)] + 1 - g.S + s + (s % 2));
    inits.push_back({"POS", I64, {g.B, g.S}, IntValues(p)});
    in[9] = "POS";
  }
  if (g.bias) {
    floats("AB", {1, g.N, g.S, g.total}, -1.0f, 1.0f);
    in[10] = "AB";
  }
  if (g.sink) {
    floats("SINK", {g.N}, -1.0f, 1.0f);
    in[11] = "SINK";
  }
  if (g.window >= 0) attrs.push_back(AI("local_window_size", g.window));
  if (g.softcap > 0.0f) attrs.push_back(AF("softcap", g.softcap));
  if (g.smooth >= 0) attrs.push_back(AI("smooth_softmax", g.smooth));
  if (g.qk) attrs.push_back(AI("qk_output", g.qk));
  while (!in.empty() && in.back().empty()) in.pop_back();
  std::vector<std::string> outs = {"Y", "PKo", "PVo"};
  if (g.qk) outs.push_back("QK");
  std::vector<std::string> graph_outs = outs;
  if (g.f16) {
    for (auto& o : outs) {
      nodes.push_back({"Cast", {o + "h"}, {o}, {AI("to", 1)}});
      o += "h";
    }
  }
  nodes.insert(nodes.end() - (g.f16 ? long(outs.size()) : 0),
               TNode{"com.microsoft.GroupQueryAttention", in, outs, attrs});
  const std::string what = std::string("GroupQueryAttention ") + g.what + " kind " + std::to_string(kind);
  return XCase(what, TypedGraph(qs, inits, nodes, graph_outs), qs, Values(rng, Count(qs), kind, -2.0f, 2.0f));
}

struct Mha {
  const char* what;
  int64_t B, S, L, N, H, Hv, P;
  int kv;      // 0 3-D key and value, 1 BNSH, 2 packed KV, 3 packed QKV
  Shape mask;  // key_padding_mask's shape (empty: none)
  bool bias = false, abias = false, causal = false, qk = false;
};

OpCase MhaCase(SplitMix64& rng, const Mha& m, int kind) {
  const int64_t D = m.N * m.H, T = m.P + m.L;
  const Shape qs = m.kv == 3 ? Shape{m.B, m.S, m.N, 3, m.H} : Shape{m.B, m.S, D};
  std::vector<TInit> inits;
  std::vector<std::string> in(8);
  in[0] = "X";
  if (m.kv == 0) {
    inits.push_back({"K", F, {m.B, m.L, D}, Floats(rng, m.B * m.L * D, -2.0f, 2.0f)});
    inits.push_back({"V", F, {m.B, m.L, m.N * m.Hv}, Floats(rng, m.B * m.L * m.N * m.Hv, -1.0f, 1.0f)});
    in[1] = "K", in[2] = "V";
  } else if (m.kv == 1) {
    inits.push_back({"K", F, {m.B, m.N, m.L, m.H}, Floats(rng, m.B * m.L * D, -2.0f, 2.0f)});
    inits.push_back({"V", F, {m.B, m.N, m.L, m.Hv}, Floats(rng, m.B * m.L * m.N * m.Hv, -1.0f, 1.0f)});
    in[1] = "K", in[2] = "V";
  } else if (m.kv == 2) {
    inits.push_back({"K", F, {m.B, m.L, m.N, 2, m.H}, Floats(rng, m.B * m.L * D * 2, -2.0f, 2.0f)});
    in[1] = "K";
  }
  if (m.bias) {
    inits.push_back({"BI", F, {2 * D + m.N * m.Hv}, Floats(rng, 2 * D + m.N * m.Hv, -0.5f, 0.5f)});
    in[3] = "BI";
  }
  if (!m.mask.empty()) {
    std::vector<int64_t> v;
    const int64_t n = Count(m.mask);
    for (int64_t i = 0; i < n; ++i)
      v.push_back(m.mask.size() == 1 ? (i < m.B ? T - 1 - i % T : 0) : (i % 5 == 2 ? 0 : 1));
    inits.push_back({"M", I32, m.mask, IntValues(v)});
    in[4] = "M";
  }
  if (m.abias) {
    inits.push_back({"AB", F, {m.B, 1, m.S, T}, Floats(rng, m.B * m.S * T, -1.0f, 1.0f)});
    in[5] = "AB";
  }
  if (m.P) {
    inits.push_back({"PK", F, {m.B, m.N, m.P, m.H}, Floats(rng, m.B * m.N * m.P * m.H, -2.0f, 2.0f)});
    inits.push_back({"PV", F, {m.B, m.N, m.P, m.Hv}, Floats(rng, m.B * m.N * m.P * m.Hv, -1.0f, 1.0f)});
    in[6] = "PK", in[7] = "PV";
  }
  while (!in.empty() && in.back().empty()) in.pop_back();
  std::vector<TAttr> attrs = {AI("num_heads", m.N)};
  if (m.causal) attrs.push_back(AI("unidirectional", 1));
  std::vector<std::string> outs = {"Y"};
  if (m.P || m.kv == 0) outs.push_back("PKo"), outs.push_back("PVo");
  if (m.qk) {
    while (outs.size() < 3) outs.push_back("");
    outs.push_back("QK");
  }
  std::vector<std::string> graph_outs;
  for (const auto& o : outs)
    if (!o.empty()) graph_outs.push_back(o);
  const std::string what = std::string("MultiHeadAttention ") + m.what + " kind " + std::to_string(kind);
  return XCase(what, TypedGraph(qs, inits, {{"com.microsoft.MultiHeadAttention", in, outs, attrs}}, graph_outs), qs,
               Values(rng, Count(qs), kind, -2.0f, 2.0f));
}

struct Att {
  const char* what;
  int64_t B, S, Din, N, Dq, Dv, P;
  Shape mask;
  bool bias = true, causal = false, abias = false;
};

OpCase AttCase(SplitMix64& rng, const Att& a, int kind) {
  const Shape xs{a.B, a.S, a.Din};
  const int64_t C = 2 * a.Dq + a.Dv, T = a.P + a.S;
  std::vector<TInit> inits = {{"W", F, {a.Din, C}, Floats(rng, a.Din * C, -0.5f, 0.5f)}};
  std::vector<std::string> in = {"X", "W", "", "", "", ""};
  if (a.bias) {
    inits.push_back({"BI", F, {C}, Floats(rng, C, -0.5f, 0.5f)});
    in[2] = "BI";
  }
  if (!a.mask.empty()) {
    std::vector<int64_t> v;
    const int64_t n = Count(a.mask);
    for (int64_t i = 0; i < n; ++i)
      v.push_back(a.mask.size() == 1 ? (i < a.B ? T - i % T : i % 2) : (i % 3 == 1 ? 0 : 1));
    inits.push_back({"M", I32, a.mask, IntValues(v)});
    in[3] = "M";
  }
  if (a.P) {
    inits.push_back({"PAST", F, {2, a.B, a.N, a.P, a.Dq / a.N}, Floats(rng, 2 * a.B * a.P * a.Dq, -1.0f, 1.0f)});
    in[4] = "PAST";
  }
  if (a.abias) {
    inits.push_back({"AB", F, {1, a.N, a.S, T}, Floats(rng, a.N * a.S * T, -1.0f, 1.0f)});
    in[5] = "AB";
  }
  while (!in.empty() && in.back().empty()) in.pop_back();
  std::vector<TAttr> attrs = {AI("num_heads", a.N)};
  if (a.Dq != a.Dv) attrs.push_back(AInts("qkv_hidden_sizes", {a.Dq, a.Dq, a.Dv}));
  if (a.causal) attrs.push_back(AI("unidirectional", 1));
  std::vector<std::string> outs = {"Y"};
  if (a.Dq == a.Dv) outs.push_back("PRES");
  const std::string what = std::string("Attention ") + a.what + " kind " + std::to_string(kind);
  return XCase(what, TypedGraph(xs, inits, {{"com.microsoft.Attention", in, outs, attrs}}, outs), xs,
               Values(rng, Count(xs), kind, -1.0f, 1.0f));
}

std::vector<OpCase> MsAttentionCases() {
  std::vector<OpCase> cases;
  SplitMix64 rng(3303);
  const Gqa gqas[] = {
      {"first prompt, right padding, rotary", 2, 7, 4, 2, 16, 0, 7, {6, 4}, false, true},
      {"decoding with a past, local window, softcap, head_sink, probabilities out",
       2,
       1,
       4,
       2,
       16,
       9,
       10,
       {9, 6},
       false,
       false,
       false,
       false,
       false,
       true,
       4,
       2,
       -1,
       5.0f},
      {"chunked prefill, packed QKV, interleaved rotary with positions, bias, smooth softmax, scores out",
       1,
       3,
       4,
       1,
       16,
       5,
       8,
       {7},
       true,
       true,
       true,
       true,
       true,
       false,
       -1,
       1,
       1},
      {"first prompt, float16, no past",
       1,
       9,
       2,
       2,
       32,
       0,
       9,
       {8},
       false,
       true,
       false,
       false,
       false,
       false,
       3,
       0,
       -1,
       0.0f,
       true},
      {"decoding, past buffer longer than the tokens", 2, 1, 8, 2, 24, 12, 12, {7, 11}},
  };
  for (const Gqa& g : gqas)
    for (int kind : {0, 1}) cases.push_back(GqaCase(rng, g, kind));
  const Mha mhas[] = {
      {"bias, [B, T] mask, attention_bias, past, unidirectional, qk",
       2,
       5,
       5,
       3,
       8,
       12,
       4,
       0,
       {2, 9},
       true,
       true,
       true,
       true},
      {"cross attention, BNSH key and value, [B] lengths", 2, 6, 11, 2, 16, 16, 0, 1, {2}},
      {"packed KV, [B, S, T] mask", 1, 4, 7, 2, 8, 8, 0, 2, {1, 4, 7}},
      {"packed QKV, unidirectional", 2, 6, 6, 2, 8, 8, 0, 3, {}, false, false, true},
      {"plain, [3B + 2] mask", 2, 3, 70, 4, 20, 12, 0, 0, {8}},
  };
  for (const Mha& m : mhas)
    for (int kind : {0, 1}) cases.push_back(MhaCase(rng, m, kind));
  const Att atts[] = {
      {"bias, [B] mask", 2, 6, 24, 3, 24, 24, 0, {2}},
      {"past, ends and starts, unidirectional", 2, 4, 16, 2, 16, 16, 3, {4}, true, true},
      {"qkv_hidden_sizes, [B, S, T] mask, attention_bias, no bias",
       1,
       5,
       12,
       2,
       8,
       12,
       0,
       {1, 5, 5},
       false,
       false,
       true},
  };
  for (const Att& a : atts)
    for (int kind : {0, 1}) cases.push_back(AttCase(rng, a, kind));
  return cases;
}

const bool kMsAttentionRegistered = RegisterFamily(
    {"ms_attention",
     {"com.microsoft.GroupQueryAttention", "com.microsoft.MultiHeadAttention", "com.microsoft.Attention"},
     &MsAttentionCases});

// The case's run fails with `code` and a message containing `text`.
void ExpectError(const OpCase& c, ErrorCode code, const std::string& text) {
  INFO(c.what);
  try {
    Session s = Session::FromBytes(reinterpret_cast<const uint8_t*>(c.model.data()), c.model.size(), {}, "case.onnx");
    s.Run(c.feeds);
    FAIL("no error");
  } catch (const Error& e) {
    INFO("message: " << e.what());
    CHECK(e.code() == code);
    CHECK(std::string(e.what()).find(text) != std::string::npos);
  }
}

}  // namespace

TEST_CASE("ops/ms_attention: every case at every algorithm equals the oracle", "[ops][exact_paths]") {
  RunFamily("ms_attention");
}

TEST_CASE("ops/ms_attention: inputs that do not fit are typed errors", "[ops]") {
  SplitMix64 rng(77);
  ExpectError(GqaCase(rng, {"seqlens_k past the total", 1, 7, 2, 1, 16, 0, 7, {9}}, 0), ErrorCode::kOutOfRange,
              "seqlens_k[0] = 9 does not fit");
  ExpectError(GqaCase(rng, {"a past shorter than seqlens_k says", 1, 1, 2, 1, 16, 3, 8, {7}}, 0),
              ErrorCode::kOutOfRange, "a past of 3");
  ExpectError(MhaCase(rng, {"mask of another batch", 2, 4, 6, 2, 8, 8, 0, 0, {3, 6}}, 0), ErrorCode::kShapeMismatch,
              "the mask's shape [3,6]");
  ExpectError(AttCase(rng, {"4-D mask", 1, 5, 12, 2, 12, 12, 0, {1, 1, 5, 5}}, 0), ErrorCode::kUnsupportedOp,
              "4-D mask_index");
}

}  // namespace test
}  // namespace onemodel::impl
