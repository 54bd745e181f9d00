// RNN, GRU and LSTM. Their definition is ref/rnn.h (the cells' equations and the
// products' folds); the reference row runs it step by step (ref::RnnSequenceF32), the
// GEMM row (RnnTable, ops/nn/rnn.h) the same equations with the products as GEMMs and each
// activation over a whole gate.
// Reference src/ref/rnn.cpp; kernels src/kernels/gemm.cpp and elementwise.cpp (MathF32);
// tests tests/ops/nn/rnn_test.cpp.
#include "ops/nn/rnn.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "ref/elementwise.h"
#include "ref/math.h"
#include "ops/ops.h"
#include "ops/parallel.h"
#include "ops/util.h"

namespace onemodel::impl {
namespace ops {
namespace {

using Act = ref::RnnActivation;
using Kind = ref::RnnKind;
using Spec = ref::RnnParams;

// What a node's attributes say: sizes, directions, activations (per direction, in the
// operator's order), clip and the GRU/LSTM options (ReadInputs adds S, B and I).
Spec ReadSpec(const OpContext& ctx, Kind kind) {
  Spec sp;
  sp.kind = kind;
  sp.G = kind == Kind::kRnn ? 1 : kind == Kind::kGru ? 3 : 4;
  sp.layout = ctx.attr_i("layout", 0);
  const std::string direction = ctx.attr_s("direction", "forward");
  sp.reverse = direction == "reverse";
  sp.D = direction == "bidirectional" ? 2 : 1;
  sp.H = ctx.attr_i("hidden_size", 0);
  std::vector<std::string> names;
  if (const Attribute* a = ctx.node.attr("activations")) names = a->strings;
  const std::vector<std::string> dflt = kind == Kind::kRnn   ? std::vector<std::string>{"Tanh"}
                                        : kind == Kind::kGru ? std::vector<std::string>{"Sigmoid", "Tanh"}
                                                             : std::vector<std::string>{"Sigmoid", "Tanh", "Tanh"};
  sp.per_dir = dflt.size();
  const auto alphas = ctx.attr_floats("activation_alpha"), betas = ctx.attr_floats("activation_beta");
  for (int64_t d = 0; d < sp.D; ++d)
    for (size_t k = 0; k < sp.per_dir; ++k) {
      const size_t idx = size_t(d) * sp.per_dir + k;
      const std::string name = idx < names.size() ? names[idx] : dflt[k];
      Act a;
      a.code = Act::Code(name);
      a.alpha = idx < alphas.size() ? alphas[idx] : (name == "LeakyRelu" ? 0.01f : name == "HardSigmoid" ? 0.2f : 1.0f);
      a.beta = idx < betas.size() ? betas[idx] : (name == "HardSigmoid" ? 0.5f : 0.0f);
      sp.acts.push_back(a);
    }
  sp.cell.H = sp.H;
  sp.cell.has_clip = ctx.has_attr("clip");
  sp.cell.clip = ctx.attr_f("clip", 0.0f);
  sp.cell.linear_before_reset = ctx.attr_i("linear_before_reset", 0) != 0;
  sp.cell.input_forget = ctx.attr_i("input_forget", 0) != 0;
  return sp;
}

// The inputs as floats: X [S, B, I] (or batch-first), W, R, the biases, the sequence
// lengths, the initial states laid out [D, B, H] and the peepholes.
struct Inputs {
  std::vector<float> X, W, R, Bv, Hs, Cs, P;
  std::vector<int64_t> lens;
};

// Reads the inputs and sets sp's S, B and I from X's shape.
Inputs ReadInputs(const OpContext& ctx, Spec& sp, const Tensor& tx) {
  Inputs in;
  const int64_t G = sp.G, H = sp.H, D = sp.D;
  sp.S = sp.layout ? tx.shape()[1] : tx.shape()[0];
  sp.B = sp.layout ? tx.shape()[0] : tx.shape()[1];
  sp.I = tx.shape()[2];
  const int64_t S = sp.S, B = sp.B, I = sp.I;
  in.X = ToF32(ctx, tx);
  in.W = ToF32(ctx, ctx.in(1));
  in.R = ToF32(ctx, ctx.in(2));
  if (int64_t(in.W.size()) != D * G * H * I || int64_t(in.R.size()) != D * G * H * H)
    throw ctx.Fail(ErrorCode::kShapeMismatch, "W or R has the wrong shape");
  in.Bv.assign(static_cast<size_t>(D * 2 * G * H), 0.0f);
  if (ctx.has_input(3)) in.Bv = ToF32(ctx, ctx.in(3));
  if (int64_t(in.Bv.size()) != D * 2 * G * H) throw ctx.Fail(ErrorCode::kShapeMismatch, "B has the wrong shape");
  in.lens.assign(static_cast<size_t>(B), S);
  if (ctx.has_input(4)) {
    const Shape l = ReadInts(ctx, ctx.in(4));
    in.lens.assign(l.begin(), l.end());
    if (int64_t(in.lens.size()) != B)
      throw ctx.Fail(ErrorCode::kShapeMismatch, "sequence_lens must hold one length per batch row");
    for (int64_t len : in.lens)
      if (len < 0 || len > S) throw ctx.Fail(ErrorCode::kOutOfRange, "a sequence length is outside [0, seq_length]");
  }
  auto initial = [&](size_t i) {
    std::vector<float> v(static_cast<size_t>(D * B * H), 0.0f);
    if (ctx.has_input(i)) {
      const auto t = ToF32(ctx, ctx.in(i));
      if (int64_t(t.size()) != D * B * H)
        throw ctx.Fail(ErrorCode::kShapeMismatch, "an initial state has the wrong shape");
      if (sp.layout) {  // [B, D, H] -> [D, B, H]
        for (int64_t b = 0; b < B; ++b)
          for (int64_t d = 0; d < D; ++d)
            for (int64_t h = 0; h < H; ++h) v[size_t((d * B + b) * H + h)] = t[size_t((b * D + d) * H + h)];
      } else {
        v = t;
      }
    }
    return v;
  };
  in.Hs = initial(5);
  in.P.assign(static_cast<size_t>(D * 3 * H), 0.0f);
  if (sp.kind == Kind::kLstm) {
    in.Cs = initial(6);
    if (ctx.has_input(7)) in.P = ToF32(ctx, ctx.in(7));
    if (int64_t(in.P.size()) != D * 3 * H) throw ctx.Fail(ErrorCode::kShapeMismatch, "P has the wrong shape");
  }
  return in;
}

// The GEMM row's cell of one direction: from the products of one step and batch row
// (pre = x . W, hr = h . R) the gates and the new hidden state hn (and the LSTM's cell
// state). Every gate's pre-activation is ((x . W) + (h . R)) + (Wb + Rb), as the
// ref::*CellF32 definitions; each activation runs over a whole gate (Apply: MathF32 for
// Sigmoid and Tanh, the scalar functions' bits), on the same clipped values.
struct Cell {
  const OpContext& ctx;
  const Spec& sp;
  int64_t d;
  const float* rt;  // R laid out [H, G*H]
  const float* wb;
  const float* rb;
  const float* p;  // peepholes i, o, f
  std::vector<float> pre, hr, hn, cn, z, rg, hc, ig, fg, cc, og, rh_a, rgh;

  float Gate(int64_t row) const { return (pre[size_t(row)] + hr[size_t(row)]) + (wb[row] + rb[row]); }
  // An activation on n values in place: Sigmoid and Tanh by the session's MathF32 kernel
  // (bitwise the scalar functions), the others element by element.
  void Apply(const Act& a, float* v, int64_t n) const {
    if (a.code == 0)
      ctx.kernels->MathF32(kMathSigmoidF32, v, v, n);
    else if (a.code == 1)
      ctx.kernels->MathF32(kMathTanhF32, v, v, n);
    else
      for (int64_t i = 0; i < n; ++i) v[i] = a(v[i]);
  }
  void Rnn() {
    for (int64_t k = 0; k < sp.H; ++k) hn[size_t(k)] = sp.Clip(Gate(k));
    Apply(sp.act(d, 0), hn.data(), sp.H);
  }

  void Gru(const float* h) {
    const int64_t H = sp.H, G = sp.G;
    const Act& f = sp.act(d, 0);
    for (int64_t k = 0; k < H; ++k) {
      z[size_t(k)] = sp.Clip(Gate(k));
      rg[size_t(k)] = sp.Clip(Gate(H + k));
    }
    Apply(f, z.data(), H);
    Apply(f, rg.data(), H);
    if (!sp.cell.linear_before_reset) {
      // (r * h) . R_h for every row at once: the rounded products r[i] * h[i] as A.
      for (int64_t i = 0; i < H; ++i) rh_a[size_t(i)] = rg[size_t(i)] * h[i];
      ctx.kernels->GemmF32(1, H, H, rh_a.data(), H, 1, rt + 2 * H, G * H, 1, rgh.data(), H);
    }
    for (int64_t k = 0; k < H; ++k) {
      const int64_t row = 2 * H + k;
      if (sp.cell.linear_before_reset)
        hc[size_t(k)] = sp.Clip((pre[size_t(row)] + rg[size_t(k)] * (hr[size_t(row)] + rb[row])) + wb[row]);
      else  // (r . h) R_h: the GEMM's fold, one accumulator from -0.0
        hc[size_t(k)] = sp.Clip((pre[size_t(row)] + rgh[size_t(k)]) + (wb[row] + rb[row]));
    }
    Apply(sp.act(d, 1), hc.data(), H);
    for (int64_t k = 0; k < H; ++k) hn[size_t(k)] = (1.0f - z[size_t(k)]) * hc[size_t(k)] + z[size_t(k)] * h[k];
  }

  // Gate order i, o, f, c; peepholes i, o, f.
  void Lstm(float* c) {
    const int64_t H = sp.H;
    const Act& f = sp.act(d, 0);
    const Act& g2 = sp.act(d, 1);
    const Act& h2 = sp.act(d, 2);
    // The same expressions, each activation applied to a whole gate at a time.
    for (int64_t k = 0; k < H; ++k) {
      ig[size_t(k)] = sp.Clip(Gate(k) + p[k] * c[k]);
      fg[size_t(k)] = sp.Clip(Gate(2 * H + k) + p[2 * H + k] * c[k]);
      cc[size_t(k)] = sp.Clip(Gate(3 * H + k));
    }
    Apply(f, ig.data(), H);
    Apply(f, fg.data(), H);
    Apply(g2, cc.data(), H);
    for (int64_t k = 0; k < H; ++k) {
      if (sp.cell.input_forget) fg[size_t(k)] = 1.0f - ig[size_t(k)];
      cn[size_t(k)] = fg[size_t(k)] * c[k] + ig[size_t(k)] * cc[size_t(k)];
      og[size_t(k)] = sp.Clip(Gate(H + k) + p[H + k] * cn[size_t(k)]);
    }
    Apply(f, og.data(), H);
    std::copy(cn.begin(), cn.end(), hn.begin());
    Apply(h2, hn.data(), H);
    for (int64_t k = 0; k < H; ++k) hn[size_t(k)] = og[size_t(k)] * hn[size_t(k)];
    for (int64_t k = 0; k < H; ++k) c[k] = cn[size_t(k)];
  }
};

// The definition: ref::RnnSequenceF32.
void RunReference(const OpContext&, const Spec& sp, const ref::RnnData& io) { ref::RnnSequenceF32(sp, io); }

// The GEMM row: the products go through the GEMM kernel, each output folding its index
// in order from -0.0 exactly as ref::RnnProductsF32: x . W for every time step and batch
// row at once (X's rows in memory order), h . R per step against R laid out as [H, G*H]
// once per call (a matrix-vector product streaming its rows); the cells as Cell.
void RunGemm(const OpContext& ctx, const Spec& sp, const ref::RnnData& io) {
  const int64_t G = sp.G, H = sp.H, D = sp.D, S = sp.S, B = sp.B, I = sp.I;
  auto yidx = [&](int64_t t, int64_t d, int64_t b, int64_t h) {
    return sp.layout ? ((b * S + t) * D + d) * H + h : ((t * D + d) * B + b) * H + h;
  };
  std::vector<float> xw_all, rt;
  for (int64_t d = 0; d < D; ++d) {
    const bool rev = sp.reverse || (d == 1);
    const float* w = io.w + d * G * H * I;
    const float* r = io.r + d * G * H * H;
    xw_all.resize(size_t(S * B * G * H));
    ParallelGemmF32(ctx, S * B, G * H, I, io.x, I, 1, w, 1, I, xw_all.data(), G * H);
    rt.resize(size_t(H * G * H));
    for (int64_t g = 0; g < G * H; ++g)
      for (int64_t i = 0; i < H; ++i) rt[size_t(i * G * H + g)] = r[g * H + i];
    const float* wb = io.bias + d * 2 * G * H;
    Cell cell{ctx, sp, d,  rt.data(), wb, wb + G * H, io.peep + d * 3 * H, {}, {}, {}, {}, {}, {}, {},
              {},  {}, {}, {},        {}, {}};
    for (auto* v : {&cell.pre, &cell.hr}) v->assign(size_t(G * H), 0.0f);
    for (auto* v : {&cell.hn, &cell.cn, &cell.z, &cell.rg, &cell.hc, &cell.ig, &cell.fg, &cell.cc, &cell.og, &cell.rh_a,
                    &cell.rgh})
      v->assign(size_t(H), 0.0f);
    for (int64_t b = 0; b < B; ++b) {
      float* h = io.hs + (d * B + b) * H;
      float* c = sp.kind == Kind::kLstm ? io.cs + (d * B + b) * H : nullptr;
      const int64_t len = io.lens[size_t(b)];
      for (int64_t step = 0; step < len; ++step) {
        const int64_t t = rev ? len - 1 - step : step;
        const int64_t xrow = sp.layout ? b * S + t : t * B + b;
        std::copy(xw_all.begin() + xrow * G * H, xw_all.begin() + (xrow + 1) * G * H, cell.pre.begin());
        ctx.kernels->GemmF32(1, G * H, H, h, H, 1, rt.data(), G * H, 1, cell.hr.data(), G * H);
        if (sp.kind == Kind::kRnn)
          cell.Rnn();
        else if (sp.kind == Kind::kGru)
          cell.Gru(h);
        else
          cell.Lstm(c);
        for (int64_t k = 0; k < H; ++k) h[k] = cell.hn[size_t(k)];
        if (io.y)
          for (int64_t k = 0; k < H; ++k) io.y[yidx(t, d, b, k)] = h[k];
      }
    }
  }
}

constexpr const char* kRnnOps[] = {"RNN", "GRU", "LSTM"};
constexpr AlgorithmRow<Spec, RnnRun> kRnnRows[] = {
    {"reference", Exactness::kExact, "", nullptr, nullptr, RunReference},
    {"gemm", Exactness::kExact, "GemmF32, MathF32", nullptr, nullptr, RunGemm},
};

}  // namespace

const FamilyTable<ref::RnnParams, RnnRun>& RnnTable() {
  static constexpr FamilyTable<ref::RnnParams, RnnRun> kTable{"rnn", kRnnOps, kRnnRows};
  return kTable;
}

namespace {

// The final states (outputs 1 and 2) from st [D, B, H].
void PutState(OpContext& ctx, const Spec& sp, DType dtype, size_t out, const std::vector<float>& st) {
  if (!ctx.wants_output(out)) return;
  const int64_t D = sp.D, B = sp.B, H = sp.H;
  Tensor& t = ctx.out(out, dtype, sp.layout ? Shape{B, D, H} : Shape{D, B, H});
  for (int64_t d = 0; d < D; ++d)
    for (int64_t b = 0; b < B; ++b)
      for (int64_t h = 0; h < H; ++h)
        StoreF32(t, sp.layout ? (b * D + d) * H + h : (d * B + b) * H + h, st[size_t((d * B + b) * H + h)]);
}

void Recurrent(OpContext& ctx, Kind kind) {
  const Tensor& tx = ctx.in(0);
  Spec sp = ReadSpec(ctx, kind);
  if (tx.rank() != 3 || sp.H <= 0) throw ctx.Fail(ErrorCode::kShapeMismatch, "X must be 3-D and hidden_size positive");
  Inputs in = ReadInputs(ctx, sp, tx);
  const int64_t S = sp.S, B = sp.B, D = sp.D, H = sp.H;
  // Y (every row writes its f32 values; steps past a row's length stay zero): a float
  // output directly, another through a buffer and StoreF32.
  Tensor* Y =
      ctx.wants_output(0) ? &ctx.out(0, tx.dtype(), sp.layout ? Shape{B, S, D, H} : Shape{S, D, B, H}) : nullptr;
  std::vector<float> ybuf;
  float* y = nullptr;
  if (Y)
    y = Y->dtype() == DType::kFloat ? Y->mutable_data<float>() : (ybuf.assign(size_t(Y->numel()), 0.0f), ybuf.data());
  const ref::RnnData io{
      in.X.data(), in.W.data(), in.R.data(), in.Bv.data(), in.P.data(), in.lens.data(), in.Hs.data(), in.Cs.data(), y};
  PlanRow(ctx, RnnTable(), sp).run(ctx, sp, io);
  if (Y && Y->dtype() != DType::kFloat)
    for (int64_t i = 0; i < Y->numel(); ++i) StoreF32(*Y, i, ybuf[size_t(i)]);
  PutState(ctx, sp, tx.dtype(), 1, in.Hs);
  if (kind == Kind::kLstm) PutState(ctx, sp, tx.dtype(), 2, in.Cs);
}

}  // namespace

void RNN(OpContext& ctx) { Recurrent(ctx, Kind::kRnn); }
void GRU(OpContext& ctx) { Recurrent(ctx, Kind::kGru); }
void LSTM(OpContext& ctx) { Recurrent(ctx, Kind::kLstm); }

}  // namespace ops
}  // namespace onemodel::impl
