// Reference Attention (ai.onnx opsets 23+), following ONNX's reference step by step:
// Q and K are each scaled by sqrt(scale); QK^T and the final product with V are GEMMs
// (one accumulator per output from -0.0, left to right); the bias (mask, causal,
// window, padding) is added after the optional softcap; the softmax denominator is a
// row sum in the canonical L-lane order; fully masked rows give 0. f32 compute.
#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#include "core/exact.h"
#include "ref/math.h"
#include "ref/elementwise.h"
#include "ops/ops.h"
#include "ops/algorithm.h"
#include "ops/attention.h"
#include "ops/parallel.h"
#include "ref/reduce.h"
#include "ops/util.h"

namespace onemodel::impl {
namespace ops {
namespace {

// A [B, H, S, D] view of Q/K/V given as 4-D or as 3-D [B, S, H*D].
struct Heads {
  int64_t B = 0, H = 0, S = 0, D = 0;
  std::vector<float> v;  // [B, H, S, D]
  float at(int64_t b, int64_t h, int64_t s, int64_t d) const { return v[size_t(((b * H + h) * S + s) * D + d)]; }
};
Heads ToHeads(const OpContext& ctx, const Tensor& t, int64_t heads) {
  Heads r;
  const auto x = ToF32(ctx, t);
  if (t.rank() == 4) {
    r.B = t.shape()[0];
    r.H = t.shape()[1];
    r.S = t.shape()[2];
    r.D = t.shape()[3];
    r.v = x;
    return r;
  }
  if (t.rank() != 3 || heads <= 0 || t.shape()[2] % heads) {
    throw ctx.Fail(ErrorCode::kShapeMismatch, "3-D inputs need q_num_heads / kv_num_heads dividing the hidden size");
  }
  r.B = t.shape()[0];
  r.S = t.shape()[1];
  r.H = heads;
  r.D = t.shape()[2] / heads;
  r.v.resize(x.size());
  for (int64_t b = 0; b < r.B; ++b)
    for (int64_t s = 0; s < r.S; ++s)
      for (int64_t h = 0; h < r.H; ++h)
        for (int64_t d = 0; d < r.D; ++d)
          r.v[size_t(((b * r.H + h) * r.S + s) * r.D + d)] = x[size_t((b * r.S + s) * r.H * r.D + h * r.D + d)];
  return r;
}
Heads ConcatSeq(const Heads& past, const Heads& cur) {
  Heads r = cur;
  r.S = past.S + cur.S;
  r.v.assign(size_t(r.B * r.H * r.S * r.D), 0.0f);
  for (int64_t b = 0; b < r.B; ++b)
    for (int64_t h = 0; h < r.H; ++h)
      for (int64_t s = 0; s < r.S; ++s)
        for (int64_t d = 0; d < r.D; ++d)
          r.v[size_t(((b * r.H + h) * r.S + s) * r.D + d)] =
              s < past.S ? past.at(b, h, s, d) : cur.at(b, h, s - past.S, d);
  return r;
}

// What one Attention node works on: Q, K and V as heads (K and V after the past), the
// sizes, the scale and softcap, the score bias (mask, causal, windows, padding) and the
// outputs.
struct AttnArgs {
  Heads Q, K, V;
  int64_t B = 0, Hq = 0, Sq = 0, Dq = 0, Hk = 0, Skv = 0, Dv = 0, past_len = 0, mode = 0, lw = -1, rw = -1;
  float sq = 1.0f, softcap = 0.0f;
  bool has_softcap = false, causal = false, has_past = false, has_nonpad = false, rank3 = false;
  std::vector<int64_t> nonpad;
  const Tensor* mask = nullptr;
  std::vector<float> maskf;
  Shape mshape;
  Tensor* y = nullptr;
  Tensor* qk_out = nullptr;

  // The mask, broadcast to [B, Hq, Sq, Skv] (shorter last dims padded as masked).
  float MaskAt(int64_t b, int64_t h, int64_t i, int64_t j) const {
    const int64_t r = int64_t(mshape.size());
    const int64_t last = mshape[size_t(r - 1)];
    if (j >= last) return -std::numeric_limits<float>::infinity();
    const int64_t idx4[4] = {b, h, i, j};
    int64_t off = 0, mul = 1;
    for (int64_t k = r - 1; k >= 0; --k) {
      const int64_t d = mshape[size_t(k)];
      const int64_t p = idx4[4 - r + k];
      off += (d == 1 ? 0 : p) * mul;
      mul *= d;
    }
    return maskf[size_t(off)];
  }
  // The bias added to score (b, h, i, j): the mask, then -inf for each rule that masks it.
  float BiasAt(int64_t b, int64_t h, int64_t i, int64_t j) const {
    const float ninf = -std::numeric_limits<float>::infinity();
    float bias = 0.0f;
    if (mask) bias = bias + MaskAt(b, h, i, j);
    const int64_t offset = (has_nonpad && !has_past) ? nonpad[size_t(b)] - Sq : past_len;
    if (causal && !(j <= i + offset)) bias = bias + ninf;
    if (lw >= 0 || rw >= 0) {
      const int64_t diff = (i + offset) - j;
      if ((lw >= 0 && diff > lw) || (rw >= 0 && -diff > rw)) bias = bias + ninf;
    }
    if (has_nonpad && j >= nonpad[size_t(b)]) bias = bias + ninf;
    return bias;
  }
  int64_t OutOffset(int64_t b, int64_t h, int64_t i, int64_t d) const {
    return rank3 ? (b * Sq + i) * Hq * Dv + h * Dv + d : ((b * Hq + h) * Sq + i) * Dv + d;
  }
};

// Reads the node's inputs and attributes into a (outputs not yet made).
void ReadAttention(OpContext& ctx, AttnArgs& a) {
  const Tensor& tq = ctx.in(0);
  const int64_t qh_attr = ctx.attr_i("q_num_heads", 0), kvh_attr = ctx.attr_i("kv_num_heads", 0);
  a.Q = ToHeads(ctx, tq, qh_attr);
  a.K = ToHeads(ctx, ctx.in(1), kvh_attr);
  a.V = ToHeads(ctx, ctx.in(2), kvh_attr);
  a.has_past = ctx.has_input(4) && ctx.has_input(5);
  if (a.has_past) {
    const Heads pk = ToHeads(ctx, ctx.in(4), kvh_attr), pv = ToHeads(ctx, ctx.in(5), kvh_attr);
    if (pk.B != a.K.B || pk.H != a.K.H || pk.D != a.K.D || pv.B != a.V.B || pv.H != a.V.H || pv.D != a.V.D ||
        pk.S != pv.S) {
      throw ctx.Fail(ErrorCode::kShapeMismatch, "past_key / past_value do not agree with K / V");
    }
    a.past_len = pk.S;
    a.K = ConcatSeq(pk, a.K);
    a.V = ConcatSeq(pv, a.V);
  }
  a.has_nonpad = ctx.has_input(6);
  if (a.has_nonpad) {
    const Shape np = ReadInts(ctx, ctx.in(6));
    a.nonpad.assign(np.begin(), np.end());
    if (int64_t(a.nonpad.size()) != a.Q.B)
      throw ctx.Fail(ErrorCode::kShapeMismatch, "nonpad_kv_seqlen must hold one length per batch");
  }
  a.B = a.Q.B, a.Hq = a.Q.H, a.Sq = a.Q.S, a.Dq = a.Q.D, a.Hk = a.K.H, a.Skv = a.K.S, a.Dv = a.V.D;
  if (a.K.B != a.B || a.V.B != a.B || a.K.D != a.Dq || a.V.S != a.Skv || a.Hk == 0 || a.Hq % a.Hk) {
    throw ctx.Fail(ErrorCode::kShapeMismatch, "Q, K and V shapes do not agree");
  }
  const float scale = ctx.has_attr("scale") ? ctx.attr_f("scale", 1.0f) : 1.0f / __builtin_sqrtf(float(a.Dq));
  a.sq = __builtin_sqrtf(scale);
  a.causal = ctx.attr_i("is_causal", 0) != 0;
  a.has_softcap = ctx.has_attr("softcap");
  a.softcap = ctx.attr_f("softcap", 0.0f);
  a.mode = ctx.attr_i("qk_matmul_output_mode", 0);
  a.lw = ctx.attr_i("left_window_size", -1);
  a.rw = ctx.attr_i("right_window_size", -1);
  a.rank3 = tq.rank() == 3;
  a.mask = ctx.has_input(3) ? &ctx.in(3) : nullptr;
  if (a.mask) {
    a.mshape = a.mask->shape();
    const int64_t r = int64_t(a.mshape.size());
    const int64_t want[4] = {a.B, a.Hq, a.Sq, a.Skv};
    bool ok = r >= 1 && r <= 4 && a.mshape[size_t(r - 1)] >= 0;
    for (int64_t k = 0; ok && k + 1 < r; ++k) {
      const int64_t d = a.mshape[size_t(k)];
      ok = d == 1 || d == want[4 - r + k];
    }
    if (!ok)
      throw ctx.Fail(ErrorCode::kShapeMismatch, "attn_mask must broadcast to [batch, heads, q, kv] (rank 1 to 4)");
    if (a.mask->dtype() == DType::kBool) {
      a.maskf.resize(static_cast<size_t>(a.mask->numel()));
      for (int64_t i = 0; i < a.mask->numel(); ++i)
        a.maskf[size_t(i)] = a.mask->data<uint8_t>()[i] ? 0.0f : -std::numeric_limits<float>::infinity();
    } else {
      a.maskf = ToF32(ctx, *a.mask);
    }
  }
}

// The GEMM algorithm. Per batch and head: the scores as one GEMM of Q and K each scaled
// by sqrt(scale) (each term the product of the two rounded factors, folded over d from
// -0.0, as the reference's loops), the row steps of the reference over the threads
// (MathF32's Exp is the scalar function's bits, SumF32 the canonical sum), and the product
// with V as a second GEMM (folded over j from -0.0).
void AttentionGemm(OpContext& ctx, const AttnArgs& a) {
  const Heads &Q = a.Q, &K = a.K, &V = a.V;
  const int64_t B = a.B, Hq = a.Hq, Sq = a.Sq, Dq = a.Dq, Hk = a.Hk, Skv = a.Skv, Dv = a.Dv, mode = a.mode;
  const float sq = a.sq, softcap = a.softcap;
  const bool has_softcap = a.has_softcap;
  const float ninf = -std::numeric_limits<float>::infinity();
  Tensor& y = *a.y;
  Tensor* qk_out = a.qk_out;
  // Per batch and head: the scores as one GEMM of Q and K each scaled by sqrt(scale)
  // (each term the product of the two rounded factors, folded over d from -0.0, as the
  // loops below), the row steps of the loops below over the threads (MathF32's Exp is
  // the scalar function's bits, SumF32 the canonical sum), and the product with V as a
  // second GEMM (folded over j from -0.0).
  const KernelTable& k = *ctx.kernels;
  std::vector<float> qs(size_t(Sq * Dq)), ks(size_t(Skv * Dq)), sc(size_t(Sq * Skv)), o(size_t(Sq * Dv));
  float* yf = y.dtype() == DType::kFloat ? y.mutable_data<float>() : nullptr;
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < Hq; ++h) {
      const int64_t hk = h / (Hq / Hk);
      const float* qv = Q.v.data() + (b * Hq + h) * Sq * Dq;
      const float* kv = K.v.data() + (b * Hk + hk) * Skv * Dq;
      for (size_t i = 0; i < qs.size(); ++i) qs[i] = qv[i] * sq;
      if (h % (Hq / Hk) == 0) {  // once per key/value head (query heads share it in groups)
        for (size_t i = 0; i < ks.size(); ++i) ks[i] = kv[i] * sq;
      }
      ParallelGemmF32(ctx, Sq, Skv, Dq, qs.data(), Dq, 1, ks.data(), 1, Dq, sc.data(), Skv);
      ParallelFor(ctx, Sq, std::max<int64_t>(1, 4096 / std::max<int64_t>(Skv, 1)), [&](int64_t i0, int64_t i1) {
        for (int64_t i = i0; i < i1; ++i) {
          float* row = sc.data() + i * Skv;
          const int64_t qk = ((b * Hq + h) * Sq + i) * Skv;
          float bias_max = ninf;
          for (int64_t j = 0; j < Skv; ++j) {
            float acc = row[j];
            if (has_softcap && softcap > 0.0f) acc = math::Tanh(acc / softcap) * softcap;
            const float bias = a.BiasAt(b, h, i, j);
            bias_max = bias > bias_max || bias_max != bias_max ? bias : bias_max;
            row[j] = acc + bias;
            if (qk_out && mode <= 1) StoreF32(*qk_out, qk + j, acc);
            if (qk_out && mode == 2) StoreF32(*qk_out, qk + j, row[j]);
          }
          float m = ninf;
          for (int64_t j = 0; j < Skv; ++j) m = row[j] > m ? row[j] : m;
          const float safe = m == ninf ? 0.0f : m;
          for (int64_t j = 0; j < Skv; ++j) row[j] = row[j] - safe;
          k.MathF32(kMathExpF32, row, row, Skv);
          const float total = k.SumF32(row, size_t(Skv));
          const float s = total == 0.0f ? 1.0f : total;
          const bool all_masked = bias_max == ninf;
          for (int64_t j = 0; j < Skv; ++j) {
            row[j] = all_masked ? 0.0f : row[j] / s;
            if (qk_out && mode == 3) StoreF32(*qk_out, qk + j, row[j]);
          }
        }
      });
      ParallelGemmF32(ctx, Sq, Dv, Skv, sc.data(), Skv, 1, V.v.data() + (b * Hk + hk) * Skv * Dv, Dv, 1, o.data(), Dv);
      for (int64_t i = 0; i < Sq; ++i)
        for (int64_t d = 0; d < Dv; ++d) {
          const int64_t off = a.OutOffset(b, h, i, d);
          if (yf)
            yf[off] = o[size_t(i * Dv + d)];
          else
            StoreF32(y, off, o[size_t(i * Dv + d)]);
        }
    }
}

// The reference: per score, the fold over d from -0.0 of the scaled factors, the softcap
// and the bias, a softmax with the reference's guards for fully masked rows (the
// canonical sum), then the fold over j from -0.0 with V.
void AttentionReference(const AttnArgs& a) {
  const Heads &Q = a.Q, &K = a.K, &V = a.V;
  const int64_t B = a.B, Hq = a.Hq, Sq = a.Sq, Dq = a.Dq, Hk = a.Hk, Skv = a.Skv, Dv = a.Dv, mode = a.mode;
  const float sq = a.sq, softcap = a.softcap;
  const bool has_softcap = a.has_softcap;
  const float ninf = -std::numeric_limits<float>::infinity();
  Tensor& y = *a.y;
  Tensor* qk_out = a.qk_out;
  std::vector<float> row(static_cast<size_t>(Skv)), e(static_cast<size_t>(Skv));
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < Hq; ++h) {
      const int64_t hk = h / (Hq / Hk);
      for (int64_t i = 0; i < Sq; ++i) {
        float bias_max = ninf;
        for (int64_t j = 0; j < Skv; ++j) {
          float acc = -0.0f;
          for (int64_t d = 0; d < Dq; ++d) acc = acc + (Q.at(b, h, i, d) * sq) * (K.at(b, hk, j, d) * sq);
          if (has_softcap && softcap > 0.0f) acc = math::Tanh(acc / softcap) * softcap;
          const float bias = a.BiasAt(b, h, i, j);
          bias_max = bias > bias_max || bias_max != bias_max ? bias : bias_max;
          const float with_bias = acc + bias;
          row[size_t(j)] = with_bias;
          if (qk_out && mode <= 1) StoreF32(*qk_out, ((b * Hq + h) * Sq + i) * Skv + j, acc);
          if (qk_out && mode == 2) StoreF32(*qk_out, ((b * Hq + h) * Sq + i) * Skv + j, with_bias);
        }
        // Softmax with the reference's guards for fully masked rows.
        float m = ninf;
        for (int64_t j = 0; j < Skv; ++j) m = row[size_t(j)] > m ? row[size_t(j)] : m;
        const float safe = m == ninf ? 0.0f : m;
        for (int64_t j = 0; j < Skv; ++j) e[size_t(j)] = math::Exp(row[size_t(j)] - safe);
        const float total = ref::SumCanonicalBy<float>(Skv, [&](int64_t j) { return e[size_t(j)]; });
        const float s = total == 0.0f ? 1.0f : total;
        const bool all_masked = bias_max == ninf;
        for (int64_t j = 0; j < Skv; ++j) {
          e[size_t(j)] = all_masked ? 0.0f : e[size_t(j)] / s;
          if (qk_out && mode == 3) StoreF32(*qk_out, ((b * Hq + h) * Sq + i) * Skv + j, e[size_t(j)]);
        }
        for (int64_t d = 0; d < Dv; ++d) {
          float o = -0.0f;
          for (int64_t j = 0; j < Skv; ++j) o = o + e[size_t(j)] * V.at(b, hk, j, d);
          const int64_t off = a.OutOffset(b, h, i, d);
          StoreF32(y, off, o);
        }
      }
    }
}

}  // namespace

void Attention(OpContext& ctx) {
  AttnArgs a;
  ReadAttention(ctx, a);
  const Tensor& tq = ctx.in(0);
  const int64_t B = a.B, Hq = a.Hq, Sq = a.Sq, Skv = a.Skv, Dv = a.Dv;
  a.y = &ctx.out(0, tq.dtype(), a.rank3 ? Shape{B, Sq, Hq * Dv} : Shape{B, Hq, Sq, Dv});
  Tensor* pk_out = ctx.wants_output(1) ? &ctx.out(1, tq.dtype(), {B, a.Hk, Skv, a.K.D}) : nullptr;
  Tensor* pv_out = ctx.wants_output(2) ? &ctx.out(2, tq.dtype(), {B, a.V.H, Skv, Dv}) : nullptr;
  a.qk_out = ctx.wants_output(3) ? &ctx.out(3, tq.dtype(), {B, Hq, Sq, Skv}) : nullptr;
  if (pk_out)
    for (size_t i = 0; i < a.K.v.size(); ++i) StoreF32(*pk_out, int64_t(i), a.K.v[i]);
  if (pv_out)
    for (size_t i = 0; i < a.V.v.size(); ++i) StoreF32(*pv_out, int64_t(i), a.V.v[i]);
  if (UseAlgorithm(ctx, kAllAttentionAlgos, AttentionAlgoName, AttentionAlgo::kGemm, true))
    AttentionGemm(ctx, a);
  else
    AttentionReference(a);
}

// ai.onnx.preview FlexAttention, following ONNX's reference: scores = (Q * sqrt(scale))
// (K * sqrt(scale))^T as a GEMM, the optional score_mod graph on the whole score tensor,
// a canonical-order softmax, the optional prob_mod graph, then the product with V.
// Computed in binary64 for double inputs (with the project's ExpD) and in f32 for every
// other type (f16 and bf16 are widened, as ONNX's reference promotes them).
namespace {

template <class C>
std::vector<C> ToCompute(const OpContext& ctx, const Tensor& t) {
  if constexpr (std::is_same_v<C, float>) {
    return ToF32(ctx, t);
  } else {
    std::vector<C> r(static_cast<size_t>(t.numel()));
    for (int64_t i = 0; i < t.numel(); ++i) r[size_t(i)] = C(ElementAsDouble(t, i));
    return r;
  }
}

template <class C>
void StoreCompute(Tensor& t, int64_t i, C v) {
  if constexpr (std::is_same_v<C, float>) {
    StoreF32(t, i, v);
  } else {
    t.mutable_data<double>()[i] = v;
  }
}

template <class C>
C ExpC(C x) {
  if constexpr (std::is_same_v<C, float>) {
    return math::Exp(x);
  } else {
    return math::ExpD(x);
  }
}

template <class C>
void FlexAttentionImpl(OpContext& ctx) {
  constexpr DType kC = std::is_same_v<C, float> ? DType::kFloat : DType::kDouble;
  const Tensor& tq = ctx.in(0);
  const Tensor& tk = ctx.in(1);
  const Tensor& tv = ctx.in(2);
  const int64_t B = tq.shape()[0], Hq = tq.shape()[1], L = tq.shape()[2], E = tq.shape()[3];
  const int64_t Hk = tk.shape()[1], S = tk.shape()[2], Ev = tv.shape()[3];
  if (tk.shape()[0] != B || tv.shape()[0] != B || tk.shape()[3] != E || tv.shape()[2] != S || tv.shape()[1] != Hk ||
      Hk <= 0 || Hq % Hk) {
    throw ctx.Fail(ErrorCode::kShapeMismatch, "Q, K and V shapes do not agree");
  }
  // The scale attribute is a float; its square root is taken in the compute type.
  const C scale = ctx.has_attr("scale") ? C(ctx.attr_f("scale", 1.0f)) : C(1) / __builtin_sqrt(C(E));
  const C sq = __builtin_sqrt(scale);
  const auto q = ToCompute<C>(ctx, tq), k = ToCompute<C>(ctx, tk), v = ToCompute<C>(ctx, tv);
  Tensor scores(kC, {B, Hq, L, S});
  C* sc = scores.mutable_data<C>();
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < Hq; ++h) {
      const int64_t hk = h / (Hq / Hk);
      for (int64_t i = 0; i < L; ++i)
        for (int64_t j = 0; j < S; ++j) {
          C acc = C(-0.0);
          for (int64_t d = 0; d < E; ++d)
            acc = acc +
                  (q[size_t(((b * Hq + h) * L + i) * E + d)] * sq) * (k[size_t(((b * Hk + hk) * S + j) * E + d)] * sq);
          sc[((b * Hq + h) * L + i) * S + j] = acc;
        }
    }
  auto apply = [&](const char* name, Tensor t) -> Tensor {
    const Attribute* a = ctx.node.attr(name);
    if (!a || !a->g) return t;
    std::vector<Value> out = RunSubgraph(ctx.executor, *a->g, {Value::FromTensor(t)}, *ctx.scope);
    if (out.size() != 1 || !out[0].is_tensor() || out[0].tensor.shape() != t.shape()) {
      throw ctx.Fail(ErrorCode::kInvalidModel, std::string(name) + " must map the tensor to one of the same shape");
    }
    Tensor r(kC, t.shape());
    const auto f = ToCompute<C>(ctx, out[0].tensor);
    std::copy(f.begin(), f.end(), r.mutable_data<C>());
    return r;
  };
  scores = apply("score_mod", scores);
  Tensor probs(kC, scores.shape());
  const C* s2 = scores.data<C>();
  C* p = probs.mutable_data<C>();
  for (int64_t row = 0; row < B * Hq * L; ++row) {
    C m = -std::numeric_limits<C>::infinity();
    for (int64_t j = 0; j < S; ++j) m = s2[row * S + j] > m ? s2[row * S + j] : m;
    for (int64_t j = 0; j < S; ++j) p[row * S + j] = ExpC<C>(s2[row * S + j] - m);
    const C total = ref::SumCanonicalBy<C>(S, [&](int64_t j) { return p[row * S + j]; });
    for (int64_t j = 0; j < S; ++j) p[row * S + j] = p[row * S + j] / total;
  }
  probs = apply("prob_mod", probs);
  const C* pp = probs.data<C>();
  Tensor& y = ctx.out(0, tv.dtype(), {B, Hq, L, Ev});
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < Hq; ++h) {
      const int64_t hk = h / (Hq / Hk);
      for (int64_t i = 0; i < L; ++i)
        for (int64_t d = 0; d < Ev; ++d) {
          C acc = C(-0.0);
          for (int64_t j = 0; j < S; ++j)
            acc = acc + pp[((b * Hq + h) * L + i) * S + j] * v[size_t(((b * Hk + hk) * S + j) * Ev + d)];
          StoreCompute<C>(y, ((b * Hq + h) * L + i) * Ev + d, acc);
        }
    }
}

}  // namespace

void FlexAttention(OpContext& ctx) {
  const Tensor& tq = ctx.in(0);
  const Tensor& tk = ctx.in(1);
  const Tensor& tv = ctx.in(2);
  if (tq.rank() != 4 || tk.rank() != 4 || tv.rank() != 4)
    throw ctx.Fail(ErrorCode::kShapeMismatch, "Q, K and V must be rank 4");
  if (tq.dtype() == DType::kDouble) {
    if (tk.dtype() != DType::kDouble || tv.dtype() != DType::kDouble)
      throw ctx.Fail(ErrorCode::kTypeMismatch, "Q, K and V must share one type");
    FlexAttentionImpl<double>(ctx);
  } else {
    FlexAttentionImpl<float>(ctx);
  }
}

}  // namespace ops
}  // namespace onemodel::impl
