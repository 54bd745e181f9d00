// The reference (oracle) attention core of ONNX Runtime's com.microsoft attention
// operators (GroupQueryAttention, MultiHeadAttention, Attention; ops/nn/ms_attention.cpp),
// the definition of their bits, in ONNX Runtime's CPU order of operations
// (docs/contrib-operators.md):
//  - each score is the fold over d from -0.0 of q * k (exact-contract section 3), then
//    times scale (scale multiplies the finished dot product, as ONNX Runtime's GEMM alpha);
//  - softcap when > 0: softcap * Tanh(score / softcap);
//  - then the additive terms: score + (bias + mask) (bias: attention_bias; mask: the
//    operators' padding and causal values, MultiHeadAttention's and Attention's);
//  - the softmax runs over the row's window [lo, hi) only (GroupQueryAttention's causal
//    and local windows are structural: outside it a probability is exactly 0): the
//    maximum (and the sink, with smooth softmax), the project's Exp of score - max, the
//    denominator the canonical L-lane sum over the window (+ Exp(sink - max)), each
//    probability e / denominator;
//  - each output the fold over t in [0, kv_len) from -0.0 of p * v (masked terms are 0 * v).
// f32 throughout (section 2): the operators widen float16 and round each output once.
#pragma once

#include <cstdint>

namespace onemodel::impl {
namespace ref {

// A com.microsoft attention's validated parameters. Q is [B, N, S, H] (BNSH), K [B, Nkv,
// T, H] and V [B, Nkv, T, Hv]: T rows per key/value head (the present cache, past first);
// query head n reads key/value head n / (N / Nkv). Y is [B, S, N * Hv].
struct MsAttentionParams {
  int64_t B = 0, N = 0, S = 0, H = 0;  // batch, query heads, query length, query/key head size
  int64_t Nkv = 0, T = 0, Hv = 0;      // key/value heads, key/value rows, value head size
  float scale = 1.0f;
  float softcap = 0.0f;  // > 0: on
  // Keys batch b reads: [0, kv_len[b]) (null: [0, T)).
  const int64_t* kv_len = nullptr;
  // GroupQueryAttention's window: with `causal`, query s of batch b sees keys up to
  // past[b] + s (at most kv_len[b] - 1) and, with local_window >= 0, the local_window
  // keys ending there.
  bool causal = false;
  const int64_t* past = nullptr;
  int64_t local_window = -1;
  // attention_bias as f32 [bias_b, bias_n, S, bias_t] (bias_b 1 or B, bias_n 1 or N:
  // broadcast), null: none.
  const float* bias = nullptr;
  int64_t bias_b = 1, bias_n = 1, bias_t = 0;
  // MultiHeadAttention's and Attention's mask values, f32 [B, S, T], null: none.
  const float* mask = nullptr;
  // Smooth softmax: one more logit, sink[n] (null: 0), in the maximum and the denominator.
  bool smooth = false;
  const float* sink = nullptr;
  // The scores output, [B, N, S, qk_t]: 1 the scores before the softmax (after softcap,
  // bias and mask), 2 the probabilities; 0 outside the window. 0: none.
  int64_t qk_mode = 0, qk_t = 0;

  // The keys batch b reads, and query s's window within them.
  int64_t KvLen(int64_t b) const { return kv_len ? kv_len[b] : T; }
  void Window(int64_t b, int64_t s, int64_t& lo, int64_t& hi) const {
    const int64_t len = KvLen(b);
    hi = len;
    lo = 0;
    if (!causal) return;
    const int64_t c = past[b] + s + 1;
    hi = c < len ? c : len;
    if (local_window >= 0 && hi > local_window) lo = hi - local_window;
  }
  // score + the additive terms at (b, n, s, t).
  float AddTerms(float x, int64_t b, int64_t n, int64_t s, int64_t t) const {
    if (bias && mask) return x + (BiasAt(b, n, s, t) + mask[(b * S + s) * T + t]);
    if (bias) return x + BiasAt(b, n, s, t);
    if (mask) return x + mask[(b * S + s) * T + t];
    return x;
  }
  float BiasAt(int64_t b, int64_t n, int64_t s, int64_t t) const {
    return bias[(((bias_b == 1 ? 0 : b) * bias_n + (bias_n == 1 ? 0 : n)) * S + s) * bias_t + t];
  }
};

// The attention of q, k, v (the layouts above) into y ([B, S, N * Hv]) and, when qk is
// not null, the scores output qk_mode names.
void MsAttentionF32(const MsAttentionParams& p, const float* q, const float* k, const float* v, float* y, float* qk);

// Attention's input projection: out[m, c] = (the fold over i from -0.0 of x[m, i] *
// w[i, c]) + bias[c] (bias null: the fold alone), x [M, Din], w [Din, C], out [M, C].
void ProjectF32(int64_t M, int64_t Din, int64_t C, const float* x, const float* w, const float* bias, float* out);

}  // namespace ref
}  // namespace onemodel::impl
