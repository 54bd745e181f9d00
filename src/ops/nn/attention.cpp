// Attention (ai.onnx opsets 23+), defined by ref::AttentionF32 (ref/attention.h), following
// ONNX's reference step by step: Q and K are each scaled by sqrt(scale); QK^T and the final
// product with V are GEMMs (one accumulator per output from -0.0, left to right); the bias
// (mask, causal, window, padding) is added after the optional softcap; the softmax
// denominator is a row sum in the canonical L-lane order; fully masked rows give 0. f32
// compute. The attention table below holds its rows; FlexAttention follows.
// Reference src/ref/attention.cpp; kernels src/kernels/gemm.cpp, elementwise.cpp and
// target.cpp; tests tests/ops/nn/attention_test.cpp.
#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#include "core/exact.h"
#include "ref/math.h"
#include "ref/elementwise.h"
#include "ops/ops.h"
#include "ops/nn/attention.h"
#include "ops/parallel.h"
#include "ref/attention.h"
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
// storage of the mask and padding lengths, and the parameters (p.mask and p.nonpad point
// into maskf and nonpad: an AttnInputs is filled in place and never copied).
struct AttnInputs {
  Heads Q, K, V;
  std::vector<int64_t> nonpad;
  std::vector<float> maskf;
  ref::AttentionParams p;
};

// attn_mask: checked to broadcast to [B, Hq, Sq, Skv], read as f32 (a boolean mask as 0 and
// -inf) into a.maskf.
void ReadMask(const OpContext& ctx, AttnInputs& a) {
  ref::AttentionParams& p = a.p;
  const Tensor& mask = ctx.in(3);
  const Shape& ms = mask.shape();
  const int64_t r = int64_t(ms.size());
  const int64_t want[4] = {p.B, p.Hq, p.Sq, p.Skv};
  bool ok = r >= 1 && r <= 4 && ms[size_t(r - 1)] >= 0;
  for (int64_t k = 0; ok && k + 1 < r; ++k) {
    const int64_t d = ms[size_t(k)];
    ok = d == 1 || d == want[4 - r + k];
  }
  if (!ok) throw ctx.Fail(ErrorCode::kShapeMismatch, "attn_mask must broadcast to [batch, heads, q, kv] (rank 1 to 4)");
  if (mask.dtype() == DType::kBool) {
    a.maskf.resize(static_cast<size_t>(mask.numel()));
    for (int64_t i = 0; i < mask.numel(); ++i)
      a.maskf[size_t(i)] = mask.data<uint8_t>()[i] ? 0.0f : -std::numeric_limits<float>::infinity();
  } else {
    a.maskf = ToF32(ctx, mask);
  }
  p.has_mask = true;
  p.mask = a.maskf.data();
  p.mrank = r;
  for (int64_t k = 0; k < r; ++k) p.mshape[k] = ms[size_t(k)];
}

// Reads the node's inputs and attributes into a (outputs not yet made).
void ReadAttention(OpContext& ctx, AttnInputs& a) {
  ref::AttentionParams& p = a.p;
  const Tensor& tq = ctx.in(0);
  const int64_t qh_attr = ctx.attr_i("q_num_heads", 0), kvh_attr = ctx.attr_i("kv_num_heads", 0);
  a.Q = ToHeads(ctx, tq, qh_attr);
  a.K = ToHeads(ctx, ctx.in(1), kvh_attr);
  a.V = ToHeads(ctx, ctx.in(2), kvh_attr);
  p.has_past = ctx.has_input(4) && ctx.has_input(5);
  if (p.has_past) {
    const Heads pk = ToHeads(ctx, ctx.in(4), kvh_attr), pv = ToHeads(ctx, ctx.in(5), kvh_attr);
    if (pk.B != a.K.B || pk.H != a.K.H || pk.D != a.K.D || pv.B != a.V.B || pv.H != a.V.H || pv.D != a.V.D ||
        pk.S != pv.S) {
      throw ctx.Fail(ErrorCode::kShapeMismatch, "past_key / past_value do not agree with K / V");
    }
    p.past_len = pk.S;
    a.K = ConcatSeq(pk, a.K);
    a.V = ConcatSeq(pv, a.V);
  }
  p.has_nonpad = ctx.has_input(6);
  if (p.has_nonpad) {
    const Shape np = ReadInts(ctx, ctx.in(6));
    a.nonpad.assign(np.begin(), np.end());
    if (int64_t(a.nonpad.size()) != a.Q.B)
      throw ctx.Fail(ErrorCode::kShapeMismatch, "nonpad_kv_seqlen must hold one length per batch");
    p.nonpad = a.nonpad.data();
  }
  p.B = a.Q.B, p.Hq = a.Q.H, p.Sq = a.Q.S, p.Dq = a.Q.D, p.Hk = a.K.H, p.Skv = a.K.S, p.Dv = a.V.D;
  // V's heads are K's (the rows index both by the same key/value head).
  if (a.K.B != p.B || a.V.B != p.B || a.K.D != p.Dq || a.V.S != p.Skv || a.V.H != p.Hk || p.Hk == 0 || p.Hq % p.Hk) {
    throw ctx.Fail(ErrorCode::kShapeMismatch, "Q, K and V shapes do not agree");
  }
  const float scale = ctx.has_attr("scale") ? ctx.attr_f("scale", 1.0f) : 1.0f / __builtin_sqrtf(float(p.Dq));
  p.sq = __builtin_sqrtf(scale);
  p.causal = ctx.attr_i("is_causal", 0) != 0;
  p.has_softcap = ctx.has_attr("softcap");
  p.softcap = ctx.attr_f("softcap", 0.0f);
  p.mode = ctx.attr_i("qk_matmul_output_mode", 0);
  p.lw = ctx.attr_i("left_window_size", -1);
  p.rw = ctx.attr_i("right_window_size", -1);
  p.rank3 = tq.rank() == 3;
  if (ctx.has_input(3)) ReadMask(ctx, a);
}

// The definition itself: ref::AttentionF32.
void RunReference(const OpContext&, const ref::AttentionParams& p, const AttentionData& d) {
  const F32Out y(d.y), qk(d.qk);
  ref::AttentionF32(p, d.q, d.k, d.v, y.data(), qk.data());
  y.Store();
  qk.Store();
}

// The GEMM algorithm. Per batch and head: the scores as one GEMM of Q and K each scaled
// by sqrt(scale) (each term the product of the two rounded factors, folded over d from
// -0.0, as ref::AttentionF32's loops), the row steps of the reference over the threads
// (MathF32's Exp is the scalar function's bits, SumF32 the canonical sum), and the product
// with V as a second GEMM (folded over j from -0.0).
void RunGemm(const OpContext& ctx, const ref::AttentionParams& p, const AttentionData& d) {
  const int64_t B = p.B, Hq = p.Hq, Sq = p.Sq, Dq = p.Dq, Hk = p.Hk, Skv = p.Skv, Dv = p.Dv, mode = p.mode;
  const float sq = p.sq, softcap = p.softcap;
  const bool has_softcap = p.has_softcap;
  const float ninf = -std::numeric_limits<float>::infinity();
  Tensor& y = *d.y;
  Tensor* qk_out = d.qk;
  const KernelTable& k = *ctx.kernels;
  std::vector<float> qs(size_t(Sq * Dq)), ks(size_t(Skv * Dq)), sc(size_t(Sq * Skv)), o(size_t(Sq * Dv));
  float* yf = y.dtype() == DType::kFloat ? y.mutable_data<float>() : nullptr;
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < Hq; ++h) {
      const int64_t hk = h / (Hq / Hk);
      const float* qv = d.q + (b * Hq + h) * Sq * Dq;
      const float* kv = d.k + (b * Hk + hk) * Skv * Dq;
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
            const float bias = p.BiasAt(b, h, i, j);
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
      ParallelGemmF32(ctx, Sq, Dv, Skv, sc.data(), Skv, 1, d.v + (b * Hk + hk) * Skv * Dv, Dv, 1, o.data(), Dv);
      for (int64_t i = 0; i < Sq; ++i)
        for (int64_t dv = 0; dv < Dv; ++dv) {
          const int64_t off = p.OutOffset(b, h, i, dv);
          if (yf)
            yf[off] = o[size_t(i * Dv + dv)];
          else
            StoreF32(y, off, o[size_t(i * Dv + dv)]);
        }
    }
}

constexpr const char* kAttentionOps[] = {"Attention"};
constexpr AlgorithmRow<ref::AttentionParams, AttentionRun> kAttentionRows[] = {
    {"reference", Exactness::kExact, "", nullptr, nullptr, RunReference},
    {"gemm", Exactness::kExact, "GemmF32, MathF32, SumF32", nullptr, nullptr, RunGemm},
};

}  // namespace

const FamilyTable<ref::AttentionParams, AttentionRun>& AttentionTable() {
  static constexpr FamilyTable<ref::AttentionParams, AttentionRun> kTable{"attention", kAttentionOps, kAttentionRows};
  return kTable;
}

void Attention(OpContext& ctx) {
  AttnInputs a;
  ReadAttention(ctx, a);
  const ref::AttentionParams& p = a.p;
  const Tensor& tq = ctx.in(0);
  const int64_t B = p.B, Hq = p.Hq, Sq = p.Sq, Skv = p.Skv, Dv = p.Dv;
  Tensor& y = ctx.out(0, tq.dtype(), p.rank3 ? Shape{B, Sq, Hq * Dv} : Shape{B, Hq, Sq, Dv});
  Tensor* pk_out = ctx.wants_output(1) ? &ctx.out(1, tq.dtype(), {B, p.Hk, Skv, a.K.D}) : nullptr;
  Tensor* pv_out = ctx.wants_output(2) ? &ctx.out(2, tq.dtype(), {B, a.V.H, Skv, Dv}) : nullptr;
  Tensor* qk_out = ctx.wants_output(3) ? &ctx.out(3, tq.dtype(), {B, Hq, Sq, Skv}) : nullptr;
  if (pk_out)
    for (size_t i = 0; i < a.K.v.size(); ++i) StoreF32(*pk_out, int64_t(i), a.K.v[i]);
  if (pv_out)
    for (size_t i = 0; i < a.V.v.size(); ++i) StoreF32(*pv_out, int64_t(i), a.V.v[i]);
  const AttentionData d{a.Q.v.data(), a.K.v.data(), a.V.v.data(), &y, qk_out};
  PlanRow(ctx, AttentionTable(), p).run(ctx, p, d);
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
