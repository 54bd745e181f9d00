// The reference (oracle) Attention (ai.onnx opsets 23+, ONNX Operators.md "Attention"),
// the definition of its bits, following ONNX's reference step by step: Q and K are each
// scaled by sqrt(scale); each score is the fold over d of the products of the two rounded
// factors, one accumulator from -0.0 (exact-contract section 3, across outputs); the
// optional softcap (softcap * Tanh(score / softcap)); then the bias (the mask, -inf for
// causal, window and padding rules); the softmax of the row (the maximum, the project's
// Exp, the denominator a canonical L-lane sum, section 3; a fully masked row gives 0);
// then the fold over j from -0.0 of the probabilities times V. f32 throughout (section 2):
// the operator (ops/nn/attention.cpp) widens narrow floats and rounds the results once.
#pragma once

#include <cstdint>
#include <limits>

namespace onemodel::impl {
namespace ref {

// An Attention node's validated parameters. Q is [B, Hq, Sq, Dq], K [B, Hk, Skv, Dq] and V
// [B, Hk, Skv, Dv] (past_key / past_value already in front: Skv counts them); query head h
// reads key/value head h / (Hq / Hk).
struct AttentionParams {
  int64_t B = 0, Hq = 0, Sq = 0, Dq = 0;  // batch, query heads, query length, query/key head size
  int64_t Hk = 0, Skv = 0, Dv = 0;        // key/value heads, key/value length, value head size
  int64_t past_len = 0;                   // past_key's length (0 without a past)
  int64_t mode = 0;                       // qk_matmul_output_mode
  int64_t lw = -1, rw = -1;               // left_window_size, right_window_size (-1: none)
  float sq = 1.0f;                        // sqrt(scale)
  float softcap = 0.0f;
  bool has_softcap = false, causal = false, has_past = false;
  bool rank3 = false;  // Q and Y are 3-D [B, S, H * D]
  // nonpad_kv_seqlen: one valid key/value length per batch (has_nonpad).
  bool has_nonpad = false;
  const int64_t* nonpad = nullptr;
  // attn_mask (has_mask) as f32 values of shape mshape[0..mrank) (rank 1 to 4, broadcast to
  // [B, Hq, Sq, Skv]); a boolean mask as 0 (attend) and -inf.
  bool has_mask = false;
  const float* mask = nullptr;
  int64_t mrank = 0;
  int64_t mshape[4] = {};

  // The mask, broadcast to [B, Hq, Sq, Skv] (shorter last dims padded as masked).
  float MaskAt(int64_t b, int64_t h, int64_t i, int64_t j) const {
    const int64_t r = mrank;
    const int64_t last = mshape[r - 1];
    if (j >= last) return -std::numeric_limits<float>::infinity();
    const int64_t idx4[4] = {b, h, i, j};
    int64_t off = 0, mul = 1;
    for (int64_t k = r - 1; k >= 0; --k) {
      const int64_t d = mshape[k];
      const int64_t p = idx4[4 - r + k];
      off += (d == 1 ? 0 : p) * mul;
      mul *= d;
    }
    return mask[off];
  }
  // The bias added to score (b, h, i, j): the mask, then -inf for each rule that masks it.
  float BiasAt(int64_t b, int64_t h, int64_t i, int64_t j) const {
    const float ninf = -std::numeric_limits<float>::infinity();
    float bias = 0.0f;
    if (has_mask) bias = bias + MaskAt(b, h, i, j);
    const int64_t offset = (has_nonpad && !has_past) ? nonpad[b] - Sq : past_len;
    if (causal && !(j <= i + offset)) bias = bias + ninf;
    if (lw >= 0 || rw >= 0) {
      const int64_t diff = (i + offset) - j;
      if ((lw >= 0 && diff > lw) || (rw >= 0 && -diff > rw)) bias = bias + ninf;
    }
    if (has_nonpad && j >= nonpad[b]) bias = bias + ninf;
    return bias;
  }
  // Element (b, h, i, d) of Y: [B, Hq, Sq, Dv], or [B, Sq, Hq * Dv] (rank3).
  int64_t OutOffset(int64_t b, int64_t h, int64_t i, int64_t d) const {
    return rank3 ? (b * Sq + i) * Hq * Dv + h * Dv + d : ((b * Hq + h) * Sq + i) * Dv + d;
  }
};

// Attention of q, k, v (the layouts above) into y (OutOffset) and, when qk is not null, the
// [B, Hq, Sq, Skv] scores qk_matmul_output_mode names: 0 or 1 the scaled (and softcapped)
// products, 2 with the bias added, 3 the softmax (other modes: qk is not written).
void AttentionF32(const AttentionParams& p, const float* q, const float* k, const float* v, float* y, float* qk);

}  // namespace ref
}  // namespace onemodel::impl
