// Reference CausalConvWithState and LinearAttention (ONNX 1.22's operators for
// state-space and linear-attention models), following ONNX's reference in f32. Dot
// products are one accumulator from -0.0, left to right.
#include "ref/math.h"
#include "ops/ops.h"
#include "ops/util.h"

namespace onemodel::impl {
namespace ops {
namespace {}  // namespace

void CausalConvWithState(OpContext& ctx) {
  const Tensor& x = ctx.in(0);
  const Tensor& w = ctx.in(1);
  if (x.rank() != 3 || w.rank() != 3) throw ctx.Fail(ErrorCode::kShapeMismatch, "input and weight must be rank 3");
  const int64_t B = x.shape()[0], C = x.shape()[1], L = x.shape()[2], K = w.shape()[2];
  const std::string act = ctx.attr_s("activation", "none");
  if (act != "none" && act != "silu" && act != "swish")
    throw ctx.Fail(ErrorCode::kInvalidModel, "activation must be none, silu or swish");
  if (K < 1 || w.shape()[0] != C || w.shape()[1] != 1)
    throw ctx.Fail(ErrorCode::kShapeMismatch, "the weight must be [channels, 1, kernel] with kernel >= 1");
  const auto xv = ToF32(ctx, x), wv = ToF32(ctx, w);
  std::vector<float> bias;
  if (ctx.has_input(2)) bias = ToF32(ctx, ctx.in(2));
  if (!bias.empty() && int64_t(bias.size()) != C)
    throw ctx.Fail(ErrorCode::kShapeMismatch, "the bias must hold one value per channel");
  std::vector<float> past(static_cast<size_t>(B * C * (K - 1)), 0.0f);
  if (ctx.has_input(3)) past = ToF32(ctx, ctx.in(3));
  if (int64_t(past.size()) != B * C * (K - 1))
    throw ctx.Fail(ErrorCode::kShapeMismatch, "the past state must be [batch, channels, kernel - 1]");
  Tensor& y = ctx.out(0, x.dtype(), x.shape());
  Tensor* st = ctx.wants_output(1) ? &ctx.out(1, x.dtype(), {B, C, K - 1}) : nullptr;
  const int64_t P = L + K - 1;
  std::vector<float> padded(static_cast<size_t>(P));
  for (int64_t b = 0; b < B; ++b)
    for (int64_t c = 0; c < C; ++c) {
      for (int64_t i = 0; i < K - 1; ++i) padded[size_t(i)] = past[size_t((b * C + c) * (K - 1) + i)];
      for (int64_t i = 0; i < L; ++i) padded[size_t(K - 1 + i)] = xv[size_t((b * C + c) * L + i)];
      for (int64_t t = 0; t < L; ++t) {
        float acc = -0.0f;
        for (int64_t j = 0; j < K; ++j) acc = acc + padded[size_t(t + j)] * wv[size_t(c * K + j)];
        if (!bias.empty()) acc = acc + bias[size_t(c)];
        if (act != "none") acc = acc * math::Sigmoid(acc);
        StoreF32(y, (b * C + c) * L + t, acc);
      }
      if (st)
        for (int64_t i = 0; i < K - 1; ++i) StoreF32(*st, (b * C + c) * (K - 1) + i, padded[size_t(P - (K - 1) + i)]);
    }
}

void LinearAttention(OpContext& ctx) {
  const Tensor& tq = ctx.in(0);
  const Tensor& tk = ctx.in(1);
  const Tensor& tv = ctx.in(2);
  const int64_t Hq = ctx.attr_i("q_num_heads", 0), Hk = ctx.attr_i("kv_num_heads", 0);
  if (Hq <= 0 || Hk <= 0 || Hq % Hk)
    throw ctx.Fail(ErrorCode::kInvalidModel, "q_num_heads must be a positive multiple of kv_num_heads");
  const std::string rule = ctx.attr_s("update_rule", "gated_delta");
  const bool gating = rule == "gated" || rule == "gated_delta", delta = rule == "delta" || rule == "gated_delta";
  if (!gating && !delta && rule != "linear")
    throw ctx.Fail(ErrorCode::kInvalidModel, "unknown update_rule '" + rule + "'");
  if (tq.rank() != 3 || tk.rank() != 3 || tv.rank() != 3)
    throw ctx.Fail(ErrorCode::kShapeMismatch, "query, key and value must be rank 3");
  const int64_t B = tq.shape()[0], T = tq.shape()[1], dk = tq.shape()[2] / Hq, dv = tv.shape()[2] / Hk, G = Hq / Hk;
  if (tq.shape()[2] % Hq || tv.shape()[2] % Hk || tk.shape() != Shape{B, T, Hk * dk} || tv.shape()[0] != B ||
      tv.shape()[1] != T) {
    throw ctx.Fail(ErrorCode::kShapeMismatch, "query, key and value must be [B, T, heads * head size] of one B, T");
  }
  const auto q = ToF32(ctx, tq), k = ToF32(ctx, tk), v = ToF32(ctx, tv);
  std::vector<float> decay, beta;
  int64_t decay_last = 0, beta_last = 0;
  if (gating) {
    if (!ctx.has_input(4)) throw ctx.Fail(ErrorCode::kMissingInput, "decay is required");
    decay = ToF32(ctx, ctx.in(4));
    decay_last = ctx.in(4).shape().back();
  }
  if (delta) {
    if (!ctx.has_input(5)) throw ctx.Fail(ErrorCode::kMissingInput, "beta is required");
    beta = ToF32(ctx, ctx.in(5));
    beta_last = ctx.in(5).shape().back();
  }
  if (gating && !((decay_last == Hk && int64_t(decay.size()) == B * T * Hk) ||
                  (decay_last != Hk && int64_t(decay.size()) == B * T * Hk * dk))) {
    throw ctx.Fail(ErrorCode::kShapeMismatch, "decay must be [B, T, kv heads] or [B, T, kv heads * key size]");
  }
  if (delta &&
      !((beta_last == 1 && int64_t(beta.size()) == B * T) || (beta_last == Hk && int64_t(beta.size()) == B * T * Hk))) {
    throw ctx.Fail(ErrorCode::kShapeMismatch, "beta must be [B, T, 1] or [B, T, kv heads]");
  }
  std::vector<float> S(static_cast<size_t>(B * Hk * dk * dv), 0.0f);
  if (ctx.has_input(3)) S = ToF32(ctx, ctx.in(3));
  if (int64_t(S.size()) != B * Hk * dk * dv)
    throw ctx.Fail(ErrorCode::kShapeMismatch, "the past state must be [B, kv heads, key size, value size]");
  const float sc = ctx.has_attr("scale") && ctx.attr_f("scale", 0.0f) != 0.0f ? ctx.attr_f("scale", 0.0f)
                                                                              : 1.0f / __builtin_sqrtf(float(dk));
  Tensor& y = ctx.out(0, tq.dtype(), {B, T, Hq * dv});
  std::vector<float> vt(static_cast<size_t>(dv));
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < Hk; ++h) {
      float* s = S.data() + (b * Hk + h) * dk * dv;
      for (int64_t t = 0; t < T; ++t) {
        const float* kt = k.data() + (b * T + t) * Hk * dk + h * dk;
        for (int64_t m = 0; m < dv; ++m) vt[size_t(m)] = v[size_t((b * T + t) * Hk * dv + h * dv + m)];
        if (gating) {
          for (int64_t d = 0; d < dk; ++d) {
            const float g = decay_last == Hk ? decay[size_t((b * T + t) * Hk + h)]
                                             : decay[size_t((b * T + t) * Hk * dk + h * dk + d)];
            const float e = math::Exp(g);
            for (int64_t m = 0; m < dv; ++m) s[d * dv + m] = s[d * dv + m] * e;
          }
        }
        if (delta) {
          const float bt = beta[size_t((b * T + t) * beta_last + (beta_last == 1 ? 0 : h))];
          for (int64_t m = 0; m < dv; ++m) {
            float r = -0.0f;
            for (int64_t d = 0; d < dk; ++d) r = r + s[d * dv + m] * kt[d];
            vt[size_t(m)] = bt * (vt[size_t(m)] - r);
          }
        }
        for (int64_t d = 0; d < dk; ++d)
          for (int64_t m = 0; m < dv; ++m) s[d * dv + m] = s[d * dv + m] + kt[d] * vt[size_t(m)];
        for (int64_t g = 0; g < G; ++g) {
          const int64_t hq = h * G + g;
          const float* qt = q.data() + (b * T + t) * Hq * dk + hq * dk;
          for (int64_t m = 0; m < dv; ++m) {
            float acc = -0.0f;
            for (int64_t d = 0; d < dk; ++d) acc = acc + qt[d] * s[d * dv + m];
            StoreF32(y, (b * T + t) * Hq * dv + hq * dv + m, sc * acc);
          }
        }
      }
    }
  if (ctx.wants_output(1)) {
    const DType st = ctx.has_input(3) ? ctx.in(3).dtype() : tq.dtype();
    Tensor& ps = ctx.out(1, st, {B, Hk, dk, dv});
    for (size_t i = 0; i < S.size(); ++i) StoreF32(ps, int64_t(i), S[i]);
  }
}

}  // namespace ops
}  // namespace onemodel::impl
