// ONNX Runtime's com.microsoft attention operators, defined by ref::MsAttentionF32 and
// ref::ProjectF32 (ref/ms_attention.h) in ONNX Runtime's CPU order of operations
// (docs/contrib-operators.md): GroupQueryAttention (grouped heads, the KV cache, rotary,
// causal and local windows, softcap, smooth softmax), MultiHeadAttention (separate, packed
// or BNSH K/V, bias, padding masks, attention_bias, past) and Attention (the input
// projection, mask_index, past). The operators read their inputs into f32 heads (float16
// widened; GroupQueryAttention's rotated Q and K rounded to the input type, as ONNX
// Runtime stores them), then the planned row of the ms_attention table computes.
// Reference src/ref/ms_attention.cpp; kernels src/kernels/gemm.cpp, elementwise.cpp;
// tests tests/ops/nn/ms_attention_test.cpp.
#include "ops/nn/ms_attention.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "core/minifloat.h"
#include "ops/nn/rotary.h"
#include "ops/ops.h"
#include "ops/parallel.h"
#include "ops/util.h"
#include "ref/math.h"

namespace onemodel::impl {
namespace ops {
namespace {

void ReferenceProject(const OpContext&, int64_t M, int64_t Din, int64_t C, const float* x, const float* w,
                      const float* bias, float* out) {
  ref::ProjectF32(M, Din, C, x, w, bias, out);
}
void ReferenceCore(const OpContext&, const ref::MsAttentionParams& p, const float* q, const float* k, const float* v,
                   float* y, float* qk) {
  ref::MsAttentionF32(p, q, k, v, y, qk);
}

// The projection as one GEMM (each output folds i in order from -0.0), then + bias[c].
void GemmProject(const OpContext& ctx, int64_t M, int64_t Din, int64_t C, const float* x, const float* w,
                 const float* bias, float* out) {
  ParallelGemmF32(ctx, M, C, Din, x, Din, 1, w, C, 1, out, C);
  if (bias) AddColumnBias(out, M, C, bias);
}

// Per batch and head: the dot products of the rows of Q with the keys the batch reads as
// one GEMM, the reference's score and softmax steps over the threads (MathF32's Exp is the
// scalar function's bits, SumF32 the canonical sum), then the product with V as a GEMM
// (the probabilities outside the window are 0, as the reference's).
void GemmCore(const OpContext& ctx, const ref::MsAttentionParams& p, const float* q, const float* k, const float* v,
              float* y, float* qk) {
  const int64_t N = p.N, S = p.S, H = p.H, Nkv = p.Nkv, T = p.T, Hv = p.Hv, group = N / Nkv;
  const KernelTable& kt = *ctx.kernels;
  std::vector<float> sc(static_cast<size_t>(S * T)), o(static_cast<size_t>(S * Hv));
  for (int64_t b = 0; b < p.B; ++b)
    for (int64_t n = 0; n < N; ++n) {
      const int64_t kvh = n / group, len = p.KvLen(b);
      const float* kb = k + (b * Nkv + kvh) * T * H;
      const float* vb = v + (b * Nkv + kvh) * T * Hv;
      ParallelGemmF32(ctx, S, len, H, q + (b * N + n) * S * H, H, 1, kb, 1, H, sc.data(), len);
      ParallelFor(ctx, S, std::max<int64_t>(1, 4096 / std::max<int64_t>(len, 1)), [&](int64_t s0, int64_t s1) {
        for (int64_t s = s0; s < s1; ++s) {
          float* row = sc.data() + s * len;
          int64_t lo = 0, hi = 0;
          p.Window(b, s, lo, hi);
          float m = -std::numeric_limits<float>::infinity();
          for (int64_t t = lo; t < hi; ++t) {
            float xt = row[t] * p.scale;
            if (p.softcap > 0.0f) xt = math::Tanh(xt / p.softcap) * p.softcap;
            row[t] = p.AddTerms(xt, b, n, s, t);
            m = row[t] > m ? row[t] : m;
          }
          float* qrow = qk ? qk + ((b * N + n) * S + s) * p.qk_t : nullptr;
          if (qrow && p.qk_mode == 1)
            for (int64_t t = 0; t < p.qk_t; ++t) qrow[t] = t >= lo && t < hi ? row[t] : 0.0f;
          const float sink = p.smooth && p.sink ? p.sink[n] : 0.0f;
          if (p.smooth) m = sink > m ? sink : m;
          for (int64_t t = lo; t < hi; ++t) row[t] = row[t] - m;
          kt.MathF32(kMathExpF32, row + lo, row + lo, hi - lo);
          float total = kt.SumF32(row + lo, size_t(hi - lo));
          if (p.smooth) total = total + math::Exp(sink - m);
          for (int64_t t = 0; t < len; ++t) row[t] = t >= lo && t < hi ? row[t] / total : 0.0f;
          if (qrow && p.qk_mode == 2)
            for (int64_t t = 0; t < p.qk_t; ++t) qrow[t] = t < len ? row[t] : 0.0f;
        }
      });
      ParallelGemmF32(ctx, S, Hv, len, sc.data(), len, 1, vb, Hv, 1, o.data(), Hv);
      for (int64_t s = 0; s < S; ++s)
        std::copy(o.begin() + s * Hv, o.begin() + (s + 1) * Hv, y + (b * S + s) * N * Hv + n * Hv);
    }
}

constexpr MsAttentionKernels kReference{ReferenceProject, ReferenceCore};
constexpr MsAttentionKernels kGemm{GemmProject, GemmCore};
constexpr const char* kMsAttentionOps[] = {"com.microsoft.GroupQueryAttention", "com.microsoft.MultiHeadAttention",
                                           "com.microsoft.Attention"};
constexpr AlgorithmRow<ref::MsAttentionParams, MsAttentionRun> kMsAttentionRows[] = {
    {"reference", Exactness::kExact, "", nullptr, nullptr, &kReference},
    {"gemm", Exactness::kExact, "GemmF32, MathF32, SumF32", nullptr, nullptr, &kGemm},
};

// ---- Reading the inputs ---------------------------------------------------------------

// Rows of x ([B, S, stride] f32), the N heads of H channels starting at channel `off`,
// as BNSH [B, N, S, H].
std::vector<float> ToBnsh(const float* x, int64_t B, int64_t S, int64_t N, int64_t H, int64_t stride, int64_t off) {
  std::vector<float> r(static_cast<size_t>(B * N * S * H));
  for (int64_t b = 0; b < B; ++b)
    for (int64_t s = 0; s < S; ++s)
      for (int64_t n = 0; n < N; ++n)
        std::copy(x + (b * S + s) * stride + off + n * H, x + (b * S + s) * stride + off + (n + 1) * H,
                  r.begin() + ((b * N + n) * S + s) * H);
  return r;
}

// [B, N, P, H] then [B, N, L, H] along the sequence: [B, N, P + L, H].
std::vector<float> Concat(const float* past, int64_t P, const std::vector<float>& cur, int64_t B, int64_t N, int64_t L,
                          int64_t H) {
  std::vector<float> r(static_cast<size_t>(B * N * (P + L) * H));
  for (int64_t bn = 0; bn < B * N; ++bn) {
    if (P) std::copy(past + bn * P * H, past + (bn + 1) * P * H, r.begin() + bn * (P + L) * H);
    std::copy(cur.begin() + bn * L * H, cur.begin() + (bn + 1) * L * H, r.begin() + (bn * (P + L) + P) * H);
  }
  return r;
}

// Rounds v as a tensor of type dt stores it (float: unchanged).
float RoundAs(DType dt, float v) {
  if (dt == DType::kFloat16) return HalfToF32(F32ToHalf(v));
  if (dt == DType::kBFloat16) return BF16ToF32(F32ToBF16(v));
  return v;
}

void RequireFloat(const OpContext& ctx, const Tensor& t, const char* what) {
  const DType dt = t.dtype();
  if (dt != DType::kFloat && dt != DType::kFloat16 && dt != DType::kBFloat16)
    throw ctx.Fail(ErrorCode::kTypeMismatch, std::string(what) + " must be float, float16 or bfloat16");
}

void RequireShape(const OpContext& ctx, const Tensor& t, const Shape& want, const char* what) {
  if (t.shape() != want)
    throw ctx.Fail(ErrorCode::kShapeMismatch,
                   std::string(what) + " must be " + ShapeToString(want) + ", got " + ShapeToString(t.shape()));
}

// attention_bias: [B or 1, N or 1, S, T], read as f32 into `store`.
void ReadBias(const OpContext& ctx, const Tensor& t, ref::MsAttentionParams& p, int64_t bias_t,
              std::vector<float>& store) {
  RequireFloat(ctx, t, "attention_bias");
  const Shape& s = t.shape();
  if (s.size() != 4 || (s[0] != 1 && s[0] != p.B) || (s[1] != 1 && s[1] != p.N) || s[2] != p.S || s[3] != bias_t)
    throw ctx.Fail(ErrorCode::kShapeMismatch, "attention_bias must be [batch or 1, heads or 1, " + std::to_string(p.S) +
                                                  ", " + std::to_string(bias_t) + "], got " + ShapeToString(s));
  store = ToF32(ctx, t);
  p.bias = store.data();
  p.bias_b = s[0];
  p.bias_n = s[1];
  p.bias_t = bias_t;
}

// The attention core through the planned row, into output 0 ([B, S, N * Hv], y_type) and
// the scores output `qk_index` when p.qk_mode is set.
void RunCore(OpContext& ctx, const MsAttentionKernels& row, const ref::MsAttentionParams& p, const float* q,
             const float* k, const float* v, DType y_type, size_t qk_index) {
  Tensor& y = ctx.out(0, y_type, {p.B, p.S, p.N * p.Hv});
  Tensor* qk = p.qk_mode ? &ctx.out(qk_index, y_type, {p.B, p.N, p.S, p.qk_t}) : nullptr;
  const F32Out yo(&y), qo(qk);
  row.core(ctx, p, q, k, v, yo.data(), qo.data());
  yo.Store();
  qo.Store();
}

void StoreAll(OpContext& ctx, size_t index, DType dt, const Shape& shape, const std::vector<float>& v) {
  if (!ctx.wants_output(index)) return;
  Tensor& t = ctx.out(index, dt, shape);
  for (size_t i = 0; i < v.size(); ++i) StoreF32(t, int64_t(i), v[i]);
}

float DefaultScale(const OpContext& ctx, int64_t H) {
  const float scale = ctx.attr_f("scale", 0.0f);
  return scale != 0.0f ? scale : 1.0f / std::sqrt(float(H));
}

}  // namespace

const FamilyTable<ref::MsAttentionParams, MsAttentionRun>& MsAttentionTable() {
  static constexpr FamilyTable<ref::MsAttentionParams, MsAttentionRun> kTable{"ms_attention", kMsAttentionOps,
                                                                              kMsAttentionRows};
  return kTable;
}

// ---- GroupQueryAttention ----------------------------------------------------------------
// (query, key?, value?, past_key?, past_value?, seqlens_k, total_sequence_length,
// cos_cache?, sin_cache?, position_ids?, attention_bias?, head_sink?) -> (output,
// present_key, present_value, output_qk?). Batch b holds T_b = seqlens_k[b] + 1 tokens
// (past and new); its new tokens are the last S of them (past_b = T_b - S), or all S of a
// first prompt (S == total_sequence_length: past_b = 0, right padding). The present cache
// [B, kv_num_heads, max(total_sequence_length, past length), H] holds the past's first
// past_b rows, then the new (rotated) keys and values, then zeros.
namespace {

// A GroupQueryAttention node's heads: Q [B, N, S, H], the new keys and values [B, Nkv, S,
// H], the past [B, Nkv, P, H] (empty when there is none), f32.
struct GqaHeads {
  int64_t B = 0, S = 0, N = 0, Nkv = 0, H = 0, P = 0;
  DType dt = DType::kFloat;
  std::vector<float> q, k, v, pk, pv;
};

void ReadGqaHeads(OpContext& ctx, GqaHeads& g) {
  const Tensor& tq = ctx.in(0);
  RequireFloat(ctx, tq, "query");
  g.dt = tq.dtype();
  const int64_t N = g.N, Nkv = g.Nkv;
  if (tq.rank() != 3) throw ctx.Fail(ErrorCode::kShapeMismatch, "query must be [batch, sequence, hidden]");
  const int64_t B = g.B = tq.shape()[0], S = g.S = tq.shape()[1], D = tq.shape()[2];
  const bool packed = !ctx.has_input(1);
  if (packed && ctx.has_input(2)) throw ctx.Fail(ErrorCode::kMissingInput, "value without key");
  if (!packed && !ctx.has_input(2)) throw ctx.Fail(ErrorCode::kMissingInput, "key without value");
  const int64_t heads_in_q = packed ? N + 2 * Nkv : N;
  if (D % heads_in_q || D == 0)
    throw ctx.Fail(ErrorCode::kShapeMismatch, "query's hidden size " + std::to_string(D) + " is not a multiple of " +
                                                  std::to_string(heads_in_q) + " heads");
  const int64_t H = g.H = D / heads_in_q;
  const auto qf = ToF32(ctx, tq);
  g.q = ToBnsh(qf.data(), B, S, N, H, D, 0);
  if (packed) {
    g.k = ToBnsh(qf.data(), B, S, Nkv, H, D, N * H);
    g.v = ToBnsh(qf.data(), B, S, Nkv, H, D, (N + Nkv) * H);
  } else {
    const Shape kv{B, S, Nkv * H};
    RequireShape(ctx, ctx.in(1), kv, "key");
    RequireShape(ctx, ctx.in(2), kv, "value");
    if (ctx.in(1).dtype() != g.dt || ctx.in(2).dtype() != g.dt)
      throw ctx.Fail(ErrorCode::kTypeMismatch, "key and value must have query's type");
    g.k = ToBnsh(ToF32(ctx, ctx.in(1)).data(), B, S, Nkv, H, Nkv * H, 0);
    g.v = ToBnsh(ToF32(ctx, ctx.in(2)).data(), B, S, Nkv, H, Nkv * H, 0);
  }
  if (ctx.has_input(3) != ctx.has_input(4))
    throw ctx.Fail(ErrorCode::kMissingInput, "past_key and past_value go together");
  if (ctx.has_input(3)) {
    const Tensor& tpk = ctx.in(3);
    if (tpk.rank() != 4 || tpk.shape()[0] != B || tpk.shape()[1] != Nkv || tpk.shape()[3] != H)
      throw ctx.Fail(ErrorCode::kShapeMismatch,
                     "past_key must be [batch, kv_num_heads, past, head size], got " + ShapeToString(tpk.shape()));
    RequireShape(ctx, ctx.in(4), tpk.shape(), "past_value");
    if (tpk.dtype() != g.dt || ctx.in(4).dtype() != g.dt)
      throw ctx.Fail(ErrorCode::kTypeMismatch, "past_key and past_value must have query's type");
    g.P = tpk.shape()[2];
    g.pk = ToF32(ctx, tpk);
    g.pv = ToF32(ctx, ctx.in(4));
  }
}

// do_rotary: Q and the new keys rotated in place (rounded to the input type), positions
// position_ids[0] + s on a first prompt, position_ids[b, s] or past[b] + s later.
void GqaRotary(OpContext& ctx, GqaHeads& g, bool first, const std::vector<int64_t>& past) {
  if (!ctx.has_input(7) || !ctx.has_input(8))
    throw ctx.Fail(ErrorCode::kMissingInput, "do_rotary needs cos_cache and sin_cache");
  const Tensor& tc = ctx.in(7);
  if (tc.rank() != 2) throw ctx.Fail(ErrorCode::kShapeMismatch, "cos_cache must be [max position, rotary dim / 2]");
  RequireShape(ctx, ctx.in(8), tc.shape(), "sin_cache");
  const int64_t half = tc.shape()[1], rows = tc.shape()[0], B = g.B, S = g.S, H = g.H;
  if (2 * half > H) throw ctx.Fail(ErrorCode::kShapeMismatch, "the caches' rotary dimension exceeds the head size");
  const F32View cs(ctx, tc), sn(ctx, ctx.in(8));  // float caches in place: only `rows` of them are read
  Shape pos;
  if (ctx.has_input(9)) {
    const Tensor& tp = ctx.in(9);
    if (tp.dtype() != DType::kInt64) throw ctx.Fail(ErrorCode::kTypeMismatch, "position_ids must be int64");
    pos = ReadInts(ctx, tp);
    if (int64_t(pos.size()) < (first ? 1 : B * S))
      throw ctx.Fail(ErrorCode::kShapeMismatch, "position_ids must be [batch, sequence]");
  }
  auto position = [&](int64_t b, int64_t s) {
    if (first) return (pos.empty() ? 0 : pos[0]) + s;
    return pos.empty() ? past[size_t(b)] + s : pos[size_t(b * S + s)];
  };
  const bool inter = ctx.attr_i("rotary_interleaved", 0) != 0;
  std::vector<float> in(static_cast<size_t>(H));
  auto rotate = [&](std::vector<float>& x, int64_t heads) {
    for (int64_t b = 0; b < B; ++b)
      for (int64_t s = 0; s < S; ++s) {
        const int64_t r = position(b, s);
        if (r < 0 || r >= rows)
          throw ctx.Fail(ErrorCode::kOutOfRange,
                         "position " + std::to_string(r) + " is outside the caches' " + std::to_string(rows) + " rows");
        for (int64_t h = 0; h < heads; ++h) {
          float* row = x.data() + ((b * heads + h) * S + s) * H;
          std::copy(row, row + H, in.begin());
          RotateRow(in.data(), row, cs.data() + r * half, sn.data() + r * half, half, inter);
          for (int64_t d = 0; d < 2 * half; ++d) row[d] = RoundAs(g.dt, row[d]);
        }
      }
  };
  rotate(g.q, g.N);
  rotate(g.k, g.Nkv);
}

}  // namespace

void GroupQueryAttention(OpContext& ctx) {
  GqaHeads g;
  g.N = ctx.attr_i("num_heads", 0), g.Nkv = ctx.attr_i("kv_num_heads", 0);
  if (g.N <= 0 || g.Nkv <= 0 || g.N % g.Nkv)
    throw ctx.Fail(ErrorCode::kInvalidModel,
                   "num_heads and kv_num_heads must be positive, kv_num_heads dividing "
                   "num_heads");
  for (size_t i = 12; i < ctx.inputs.size(); ++i)
    if (ctx.has_input(i))
      throw ctx.Fail(ErrorCode::kUnsupportedOp,
                     "input " + std::to_string(i) + " (quantized cache scales, q/k norm weights) is not supported");
  ReadGqaHeads(ctx, g);
  const int64_t B = g.B, S = g.S, N = g.N, Nkv = g.Nkv, H = g.H, P = g.P;
  // Lengths.
  if (!ctx.has_input(5) || !ctx.has_input(6))
    throw ctx.Fail(ErrorCode::kMissingInput, "seqlens_k and total_sequence_length are required");
  const Tensor& tsl = ctx.in(5);
  const Tensor& ttot = ctx.in(6);
  if (tsl.dtype() != DType::kInt32 || ttot.dtype() != DType::kInt32)
    throw ctx.Fail(ErrorCode::kTypeMismatch, "seqlens_k and total_sequence_length must be int32");
  if (tsl.numel() != B) throw ctx.Fail(ErrorCode::kShapeMismatch, "seqlens_k must hold one value per batch");
  if (ttot.numel() != 1) throw ctx.Fail(ErrorCode::kShapeMismatch, "total_sequence_length must be one value");
  const int64_t total = ttot.data<int32_t>()[0];
  const bool first = S == total;
  const int64_t Tp = std::max(total, P);
  std::vector<int64_t> kv_len(static_cast<size_t>(B)), past(static_cast<size_t>(B));
  for (int64_t b = 0; b < B; ++b) {
    const int64_t len = int64_t(tsl.data<int32_t>()[b]) + 1;
    const int64_t pb = first ? 0 : len - S;
    if (len < 1 || len > total || pb < 0 || (!first && pb > P))
      throw ctx.Fail(ErrorCode::kOutOfRange, "seqlens_k[" + std::to_string(b) + "] = " + std::to_string(len - 1) +
                                                 " does not fit " + std::to_string(S) + " new tokens, a past of " +
                                                 std::to_string(P) + " and total_sequence_length " +
                                                 std::to_string(total));
    kv_len[size_t(b)] = len;
    past[size_t(b)] = pb;
  }
  if (ctx.attr_i("do_rotary", 0)) GqaRotary(ctx, g, first, past);
  // The present cache.
  std::vector<float> k(static_cast<size_t>(B * Nkv * Tp * H), 0.0f), v(k.size(), 0.0f);
  for (int64_t bh = 0; bh < B * Nkv; ++bh) {
    const int64_t pb = past[size_t(bh / Nkv)];
    if (pb) {
      std::copy(g.pk.begin() + bh * P * H, g.pk.begin() + (bh * P + pb) * H, k.begin() + bh * Tp * H);
      std::copy(g.pv.begin() + bh * P * H, g.pv.begin() + (bh * P + pb) * H, v.begin() + bh * Tp * H);
    }
    std::copy(g.k.begin() + bh * S * H, g.k.begin() + (bh + 1) * S * H, k.begin() + (bh * Tp + pb) * H);
    std::copy(g.v.begin() + bh * S * H, g.v.begin() + (bh + 1) * S * H, v.begin() + (bh * Tp + pb) * H);
  }
  StoreAll(ctx, 1, g.dt, {B, Nkv, Tp, H}, k);
  StoreAll(ctx, 2, g.dt, {B, Nkv, Tp, H}, v);

  ref::MsAttentionParams p;
  p.B = B, p.N = N, p.S = S, p.H = H, p.Nkv = Nkv, p.T = Tp, p.Hv = H;
  p.scale = DefaultScale(ctx, H);
  p.softcap = ctx.attr_f("softcap", 0.0f);
  p.kv_len = kv_len.data();
  p.causal = true;
  p.past = past.data();
  p.local_window = ctx.attr_i("local_window_size", -1);
  std::vector<float> bias, sink;
  if (ctx.has_input(10)) ReadBias(ctx, ctx.in(10), p, total, bias);
  if (ctx.has_input(11)) {
    RequireFloat(ctx, ctx.in(11), "head_sink");
    if (ctx.in(11).numel() != N) throw ctx.Fail(ErrorCode::kShapeMismatch, "head_sink must hold num_heads values");
    sink = ToF32(ctx, ctx.in(11));
    p.sink = sink.data();
  }
  p.smooth = ctx.attr_i("smooth_softmax", -1) == 1 || p.sink;
  p.qk_mode = ctx.attr_i("qk_output", 0);
  if (p.qk_mode < 0 || p.qk_mode > 2) throw ctx.Fail(ErrorCode::kInvalidModel, "qk_output must be 0, 1 or 2");
  if (p.qk_mode != 0 && !ctx.wants_output(3))
    throw ctx.Fail(ErrorCode::kInvalidModel, "qk_output needs the output_qk output");
  if (p.qk_mode == 0 && ctx.wants_output(3))
    throw ctx.Fail(ErrorCode::kInvalidModel, "output_qk needs qk_output 1 or 2");
  p.qk_t = total;
  const MsAttentionKernels& row = *PlanRow(ctx, MsAttentionTable(), p).run;
  RunCore(ctx, row, p, g.q.data(), k.data(), v.data(), g.dt, 3);
}

// ---- MultiHeadAttention and Attention: the mask ---------------------------------------
namespace {

// The [B, S, T] mask of MultiHeadAttention's key_padding_mask and Attention's mask_index
// (int32): key lengths [B] (or the first B of [3B + 2]), ends and starts [2B] (Attention),
// 0/1 per key [B, T] or per query and key [B, S, T]; masked keys get mask_filter_value.
// With unidirectional and S > 1, keys after past + s get float's lowest (over any padding
// value). Returns false (no mask) when there is neither.
bool BuildMask(const OpContext& ctx, const Tensor* m, bool allow_starts, bool causal, int64_t B, int64_t S, int64_t T,
               int64_t past, std::vector<float>& out) {
  if (!m && !(causal && S > 1)) return false;
  const float filter = ctx.attr_f("mask_filter_value", -10000.0f);
  out.assign(static_cast<size_t>(B * S * T), 0.0f);
  if (m) {
    if (m->dtype() != DType::kInt32) throw ctx.Fail(ErrorCode::kTypeMismatch, "the mask must be int32");
    const int32_t* v = m->data<int32_t>();
    const Shape& s = m->shape();
    auto set = [&](int64_t b, int64_t i, int64_t t) { out[size_t((b * S + i) * T + t)] = filter; };
    if (s.size() == 1 && (s[0] == B || s[0] == 3 * B + 2 || (allow_starts && s[0] == 2 * B))) {
      const bool starts = allow_starts && s[0] == 2 * B;
      for (int64_t b = 0; b < B; ++b)
        for (int64_t i = 0; i < S; ++i)
          for (int64_t t = 0; t < T; ++t)
            if (t >= v[b] || (starts && t < std::min<int64_t>(v[B + b], T))) set(b, i, t);
    } else if (s.size() == 2 && s[0] == B && s[1] == T) {
      for (int64_t b = 0; b < B; ++b)
        for (int64_t i = 0; i < S; ++i)
          for (int64_t t = 0; t < T; ++t)
            if (!v[b * T + t]) set(b, i, t);
    } else if (s.size() == 3 && s[0] == B && s[1] == S && s[2] == T) {
      for (int64_t i = 0; i < B * S * T; ++i)
        if (!v[i]) out[size_t(i)] = filter;
    } else {
      throw ctx.Fail(ErrorCode::kShapeMismatch, "the mask's shape " + ShapeToString(s) + " is not one of [" +
                                                    std::to_string(B) + "], [" + std::to_string(B) + ", " +
                                                    std::to_string(T) + "], [" + std::to_string(B) + ", " +
                                                    std::to_string(S) + ", " + std::to_string(T) + "]");
    }
  }
  if (causal && S > 1)
    for (int64_t b = 0; b < B; ++b)
      for (int64_t i = 0; i < S; ++i)
        for (int64_t t = past + i + 1; t < T; ++t)
          out[size_t((b * S + i) * T + t)] = std::numeric_limits<float>::lowest();
  return true;
}

// MultiHeadAttention's Q, K and V as heads ([B, N, S, H], [B, N, L, H], [B, N, L, Hv]),
// the bias added.
struct MhaHeads {
  int64_t B = 0, S = 0, N = 0, H = 0, Hv = 0, L = 0;
  bool bnsh_kv = false;
  std::vector<float> q, k, v;
};

void ReadMhaHeads(OpContext& ctx, DType dt, MhaHeads& h) {
  const Tensor& tq = ctx.in(0);
  const int64_t N = h.N;
  std::vector<float>& q = h.q;
  std::vector<float>& k = h.k;
  std::vector<float>& v = h.v;
  int64_t& H = h.H;
  int64_t& Hv = h.Hv;
  int64_t& L = h.L;
  bool& bnsh_kv = h.bnsh_kv;
  const int64_t B = h.B = tq.shape()[0], S = h.S = tq.shape()[1];
  const bool has_bias = ctx.has_input(3);
  std::vector<float> biasv;
  if (has_bias) {
    RequireFloat(ctx, ctx.in(3), "bias");
    biasv = ToF32(ctx, ctx.in(3));
  }
  auto add_bias = [&](std::vector<float>& x, int64_t width, int64_t off) {
    for (size_t i = 0; i < x.size(); ++i) x[i] = x[i] + biasv[size_t(off + int64_t(i) % width)];
  };
  if (tq.rank() == 5) {  // packed QKV [B, S, N, 3, H]
    if (ctx.has_input(1) || ctx.has_input(2) || has_bias || tq.shape()[2] != N || tq.shape()[3] != 3)
      throw ctx.Fail(ErrorCode::kShapeMismatch,
                     "packed query must be [batch, sequence, num_heads, 3, head size] "
                     "without key, value or bias");
    H = Hv = tq.shape()[4];
    L = S;
    const auto x = ToF32(ctx, tq);
    for (int64_t part = 0; part < 3; ++part) {
      std::vector<float>& dst = part == 0 ? q : part == 1 ? k : v;
      dst.assign(static_cast<size_t>(B * N * S * H), 0.0f);
      for (int64_t b = 0; b < B; ++b)
        for (int64_t s = 0; s < S; ++s)
          for (int64_t n = 0; n < N; ++n)
            for (int64_t d = 0; d < H; ++d)
              dst[size_t(((b * N + n) * S + s) * H + d)] = x[size_t((((b * S + s) * N + n) * 3 + part) * H + d)];
    }
  } else {
    const int64_t D = tq.shape()[2];
    if (D % N) throw ctx.Fail(ErrorCode::kShapeMismatch, "query's hidden size is not a multiple of num_heads");
    H = D / N;
    if (!ctx.has_input(1)) throw ctx.Fail(ErrorCode::kMissingInput, "key is required with a 3-D query");
    const Tensor& tk = ctx.in(1);
    RequireFloat(ctx, tk, "key");
    if (tk.dtype() != dt) throw ctx.Fail(ErrorCode::kTypeMismatch, "key must have query's type");
    auto qf = ToF32(ctx, tq);
    if (has_bias) {
      if (tk.rank() == 5) throw ctx.Fail(ErrorCode::kInvalidModel, "bias is not allowed with packed key and value");
    }
    if (tk.rank() == 5) {  // packed KV [B, L, N, 2, H]
      if (ctx.has_input(2) || tk.shape()[0] != B || tk.shape()[2] != N || tk.shape()[3] != 2 || tk.shape()[4] != H)
        throw ctx.Fail(ErrorCode::kShapeMismatch,
                       "packed key must be [batch, kv length, num_heads, 2, head size] "
                       "without value");
      L = tk.shape()[1];
      Hv = H;
      const auto x = ToF32(ctx, tk);
      k.assign(static_cast<size_t>(B * N * L * H), 0.0f);
      v.assign(k.size(), 0.0f);
      for (int64_t b = 0; b < B; ++b)
        for (int64_t l = 0; l < L; ++l)
          for (int64_t n = 0; n < N; ++n)
            for (int64_t d = 0; d < H; ++d) {
              const size_t at = size_t(((b * N + n) * L + l) * H + d);
              k[at] = x[size_t((((b * L + l) * N + n) * 2 + 0) * H + d)];
              v[at] = x[size_t((((b * L + l) * N + n) * 2 + 1) * H + d)];
            }
    } else {
      if (!ctx.has_input(2)) throw ctx.Fail(ErrorCode::kMissingInput, "value is required with key");
      const Tensor& tv = ctx.in(2);
      RequireFloat(ctx, tv, "value");
      if (tv.dtype() != dt) throw ctx.Fail(ErrorCode::kTypeMismatch, "value must have query's type");
      if (tk.rank() == 4) {  // BNSH key and value (cross attention)
        bnsh_kv = true;
        if (tk.shape()[0] != B || tk.shape()[1] != N || tk.shape()[3] != H || tv.rank() != 4 || tv.shape()[0] != B ||
            tv.shape()[1] != N || tv.shape()[2] != tk.shape()[2])
          throw ctx.Fail(ErrorCode::kShapeMismatch,
                         "key and value as heads must be [batch, num_heads, kv length, "
                         "head size]");
        L = tk.shape()[2];
        Hv = tv.shape()[3];
        k = ToF32(ctx, tk);
        v = ToF32(ctx, tv);
      } else if (tk.rank() == 3) {
        if (tk.shape()[0] != B || tk.shape()[2] != D || tv.rank() != 3 || tv.shape()[0] != B ||
            tv.shape()[1] != tk.shape()[1] || tv.shape()[2] % N)
          throw ctx.Fail(ErrorCode::kShapeMismatch, "key must be [batch, kv length, " + std::to_string(D) +
                                                        "] and value [batch, kv length, a multiple of num_heads]");
        L = tk.shape()[1];
        Hv = tv.shape()[2] / N;
        auto kf = ToF32(ctx, tk), vf = ToF32(ctx, tv);
        if (has_bias) {
          if (int64_t(biasv.size()) != 2 * D + N * Hv)
            throw ctx.Fail(ErrorCode::kShapeMismatch, "bias must hold " + std::to_string(2 * D + N * Hv) + " values");
          add_bias(kf, D, D);
          add_bias(vf, N * Hv, 2 * D);
        }
        k = ToBnsh(kf.data(), B, L, N, H, D, 0);
        v = ToBnsh(vf.data(), B, L, N, Hv, N * Hv, 0);
      } else {
        throw ctx.Fail(ErrorCode::kShapeMismatch, "key must be 3-D, 4-D or 5-D");
      }
    }
    if (has_bias) {
      if (int64_t(biasv.size()) < D) throw ctx.Fail(ErrorCode::kShapeMismatch, "bias is shorter than the query");
      add_bias(qf, D, 0);
    }
    q = ToBnsh(qf.data(), B, S, N, H, D, 0);
  }
}

}  // namespace

// ---- MultiHeadAttention -----------------------------------------------------------------
// (query, key?, value?, bias?, key_padding_mask?, attention_bias?, past_key?, past_value?,
// past_sequence_length?, cache_indirection?) -> (output, present_key?, present_value?,
// qk?). Query [B, S, D] with key [B, L, D] and value [B, L, Dv], key and value already as
// heads [B, N, L, H] (cross attention: the bias's K and V parts are not used, no past),
// key packed [B, L, N, 2, H], or query packed [B, S, N, 3, H]. bias [D + D + Dv] is added
// before the heads are split; the past comes before the new keys and values.
void MultiHeadAttention(OpContext& ctx) {
  const Tensor& tq = ctx.in(0);
  RequireFloat(ctx, tq, "query");
  const DType dt = tq.dtype();
  const int64_t N = ctx.attr_i("num_heads", 0);
  if (N <= 0) throw ctx.Fail(ErrorCode::kInvalidModel, "num_heads must be positive");
  if (ctx.has_input(8) || ctx.has_input(9))
    throw ctx.Fail(ErrorCode::kUnsupportedOp,
                   "past_sequence_length and cache_indirection (shared buffers, beam search) are not supported");
  if (tq.rank() != 3 && tq.rank() != 5) throw ctx.Fail(ErrorCode::kShapeMismatch, "query must be 3-D or 5-D");
  MhaHeads h;
  h.N = N;
  ReadMhaHeads(ctx, dt, h);
  const int64_t B = h.B, S = h.S, H = h.H, Hv = h.Hv, L = h.L;
  const bool bnsh_kv = h.bnsh_kv;
  std::vector<float>& k = h.k;
  std::vector<float>& v = h.v;
  // The past.
  if (ctx.has_input(6) != ctx.has_input(7))
    throw ctx.Fail(ErrorCode::kMissingInput, "past_key and past_value go together");
  int64_t P = 0;
  if (ctx.has_input(6)) {
    if (bnsh_kv || tq.rank() == 5)
      throw ctx.Fail(ErrorCode::kInvalidModel, "a past goes only with separate 3-D key and value");
    const Tensor& tpk = ctx.in(6);
    const Tensor& tpv = ctx.in(7);
    if (tpk.rank() != 4 || tpk.shape()[0] != B || tpk.shape()[1] != N || tpk.shape()[3] != H)
      throw ctx.Fail(ErrorCode::kShapeMismatch, "past_key must be [batch, num_heads, past, head size]");
    RequireShape(ctx, tpv, {B, N, tpk.shape()[2], Hv}, "past_value");
    if (tpk.dtype() != dt || tpv.dtype() != dt)
      throw ctx.Fail(ErrorCode::kTypeMismatch, "past_key and past_value must have query's type");
    P = tpk.shape()[2];
    k = Concat(ToF32(ctx, tpk).data(), P, k, B, N, L, H);
    v = Concat(ToF32(ctx, tpv).data(), P, v, B, N, L, Hv);
  }
  const int64_t T = P + L;
  StoreAll(ctx, 1, dt, {B, N, T, H}, k);
  StoreAll(ctx, 2, dt, {B, N, T, Hv}, v);

  ref::MsAttentionParams p;
  p.B = B, p.N = N, p.S = S, p.H = H, p.Nkv = N, p.T = T, p.Hv = Hv;
  p.scale = DefaultScale(ctx, H);
  std::vector<float> mask, bias;
  if (BuildMask(ctx, ctx.has_input(4) ? &ctx.in(4) : nullptr, false, ctx.attr_i("unidirectional", 0) != 0, B, S, T, P,
                mask))
    p.mask = mask.data();
  if (ctx.has_input(5)) ReadBias(ctx, ctx.in(5), p, T, bias);
  if (ctx.wants_output(3)) {
    p.qk_mode = 1;
    p.qk_t = T;
  }
  const MsAttentionKernels& row = *PlanRow(ctx, MsAttentionTable(), p).run;
  RunCore(ctx, row, p, h.q.data(), k.data(), v.data(), dt, 3);
}

// ---- Attention (com.microsoft) ----------------------------------------------------------
// (input, weights, bias?, mask_index?, past?, attention_bias?, past_sequence_length?) ->
// (output, present?). Q, K and V are input [B, S, Din] times weights [Din, Dq + Dk + Dv]
// (columns: Q's heads, K's, V's) plus bias (ref::ProjectF32); past [2, B, N, P, H] (keys,
// then values) comes first; present is [2, B, N, P + S, H].
void MsAttention(OpContext& ctx) {
  const Tensor& tx = ctx.in(0);
  const Tensor& tw = ctx.in(1);
  RequireFloat(ctx, tx, "input");
  RequireFloat(ctx, tw, "weights");
  const DType dt = tx.dtype();
  const int64_t N = ctx.attr_i("num_heads", 0);
  if (N <= 0) throw ctx.Fail(ErrorCode::kInvalidModel, "num_heads must be positive");
  if (ctx.attr_i("do_rotary", 0))
    throw ctx.Fail(ErrorCode::kUnsupportedOp,
                   "do_rotary is not supported (use MultiHeadAttention and "
                   "RotaryEmbedding)");
  if (tx.rank() != 3) throw ctx.Fail(ErrorCode::kShapeMismatch, "input must be [batch, sequence, hidden]");
  const int64_t B = tx.shape()[0], S = tx.shape()[1], Din = tx.shape()[2];
  if (tw.rank() != 2 || tw.shape()[0] != Din)
    throw ctx.Fail(ErrorCode::kShapeMismatch, "weights must be [" + std::to_string(Din) + ", q + k + v hidden]");
  const int64_t C = tw.shape()[1];
  std::vector<int64_t> sizes = ctx.attr_ints("qkv_hidden_sizes");
  if (sizes.empty()) {
    if (C % 3) throw ctx.Fail(ErrorCode::kShapeMismatch, "the weights' columns are not three equal parts");
    sizes = {C / 3, C / 3, C / 3};
  }
  if (sizes.size() != 3 || sizes[0] != sizes[1] || sizes[0] % N || sizes[2] % N || sizes[0] <= 0 || sizes[2] <= 0 ||
      sizes[0] + sizes[1] + sizes[2] != C)
    throw ctx.Fail(ErrorCode::kInvalidModel,
                   "qkv_hidden_sizes must be three sizes (q = k) divisible by num_heads "
                   "and summing to the weights' columns");
  const int64_t Dq = sizes[0], Dv = sizes[2], H = Dq / N, Hv = Dv / N;
  std::vector<float> biasv;
  if (ctx.has_input(2)) {
    RequireFloat(ctx, ctx.in(2), "bias");
    RequireShape(ctx, ctx.in(2), {C}, "bias");
    biasv = ToF32(ctx, ctx.in(2));
  }
  // The past.
  int64_t P = 0;
  std::vector<float> past;
  if (ctx.has_input(4)) {
    const Tensor& tp = ctx.in(4);
    if (Dq != Dv) throw ctx.Fail(ErrorCode::kInvalidModel, "a past needs equal key and value hidden sizes");
    if (ctx.attr_i("past_present_share_buffer", 0))
      throw ctx.Fail(ErrorCode::kUnsupportedOp, "past_present_share_buffer is not supported");
    if (tp.rank() != 5 || tp.shape()[0] != 2 || tp.shape()[1] != B || tp.shape()[2] != N || tp.shape()[4] != H)
      throw ctx.Fail(ErrorCode::kShapeMismatch,
                     "past must be [2, batch, num_heads, past, head size], got " + ShapeToString(tp.shape()));
    if (tp.dtype() != dt) throw ctx.Fail(ErrorCode::kTypeMismatch, "past must have input's type");
    P = tp.shape()[3];
    past = ToF32(ctx, tp);
  }
  const int64_t T = P + S;
  ref::MsAttentionParams p;
  p.B = B, p.N = N, p.S = S, p.H = H, p.Nkv = N, p.T = T, p.Hv = Hv;
  p.scale = DefaultScale(ctx, H);
  std::vector<float> mask, bias;
  const Tensor* tm = ctx.has_input(3) ? &ctx.in(3) : nullptr;
  if (tm && tm->rank() == 4) throw ctx.Fail(ErrorCode::kUnsupportedOp, "a 4-D mask_index is not supported");
  if (tm && tm->rank() == 2 && tm->shape()[1] == 1 && T != 1) tm = nullptr;  // a placeholder mask: none
  if (BuildMask(ctx, tm, true, ctx.attr_i("unidirectional", 0) != 0, B, S, T, P, mask)) p.mask = mask.data();
  if (ctx.has_input(5)) {
    if (P) throw ctx.Fail(ErrorCode::kInvalidModel, "past and attention_bias do not go together");
    ReadBias(ctx, ctx.in(5), p, T, bias);
  }
  const MsAttentionKernels& row = *PlanRow(ctx, MsAttentionTable(), p).run;
  // Q, K and V: the projection, split into heads, the past in front.
  const auto x = ToF32(ctx, tx), w = ToF32(ctx, tw);
  std::vector<float> qkv(static_cast<size_t>(B * S * C));
  row.project(ctx, B * S, Din, C, x.data(), w.data(), biasv.empty() ? nullptr : biasv.data(), qkv.data());
  const auto q = ToBnsh(qkv.data(), B, S, N, H, C, 0);
  auto k = ToBnsh(qkv.data(), B, S, N, H, C, Dq);
  auto v = ToBnsh(qkv.data(), B, S, N, Hv, C, 2 * Dq);
  if (P) {
    const int64_t half = B * N * P * H;
    k = Concat(past.data(), P, k, B, N, S, H);
    v = Concat(past.data() + half, P, v, B, N, S, H);
  }
  if (ctx.wants_output(1)) {
    if (Dq != Dv) throw ctx.Fail(ErrorCode::kInvalidModel, "present needs equal key and value hidden sizes");
    Tensor& t = ctx.out(1, dt, {2, B, N, T, H});
    for (size_t i = 0; i < k.size(); ++i) StoreF32(t, int64_t(i), k[i]);
    for (size_t i = 0; i < v.size(); ++i) StoreF32(t, int64_t(k.size() + i), v[i]);
  }
  RunCore(ctx, row, p, q.data(), k.data(), v.data(), dt, 0);
}

}  // namespace ops
}  // namespace onemodel::impl
