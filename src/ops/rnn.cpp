// Reference RNN, GRU and LSTM (ONNX Operators.md equations). Every gate's
// pre-activation is ((x . W) + (h . R)) + (Wb + Rb): each dot product one accumulator
// from -0.0 folding the input (or hidden) index in order, as ONNX's reference groups
// the sums. Activations use the project's own functions. f32 compute.
#include <cmath>

#include "ref/elementwise.h"
#include "ref/math.h"
#include "ops/ops.h"
#include "ops/algorithm.h"
#include "ops/rnn.h"
#include "ops/parallel.h"
#include "ops/util.h"

namespace onemodel::impl {
namespace ops {
namespace {

struct Act {
  std::string name;
  float alpha = 0, beta = 0;
  int code = -1;  // the name's index in kNames, found once (not per element)
  static constexpr const char* kNames[] = {"Sigmoid",         "Tanh",       "Relu",        "Affine", "LeakyRelu",
                                           "ThresholdedRelu", "ScaledTanh", "HardSigmoid", "Elu",    "Softsign",
                                           "Softplus"};
  void Resolve() {
    for (int i = 0; i < int(sizeof(kNames) / sizeof(kNames[0])); ++i)
      if (name == kNames[i]) code = i;
  }
  float operator()(float x) const {
    switch (code) {
      case 0: return math::Sigmoid(x);
      case 1: return math::Tanh(x);
      case 2: return x > 0 ? x : (x != x ? x : 0.0f);
      case 3: return alpha * x + beta;
      case 4: return x < 0 ? alpha * x : x;
      case 5: return x > alpha ? x : 0.0f;
      case 6: return alpha * math::Tanh(beta * x);
      case 7: {
        const float y = alpha * x + beta;
        return y < 0 ? 0.0f : y > 1 ? 1.0f : y;
      }
      case 8: return x < 0 ? alpha * (math::Exp(x) - 1.0f) : x;
      case 9: return x / (1.0f + (x < 0 ? -x : x));
      case 10: return math::Softplus(x);
      default: return x;
    }
  }
};

enum class Kind { kRnn, kGru, kLstm };

void Recurrent(OpContext& ctx, Kind kind) {
  const int64_t G = kind == Kind::kRnn ? 1 : kind == Kind::kGru ? 3 : 4;
  const Tensor& tx = ctx.in(0);
  const int64_t layout = ctx.attr_i("layout", 0);
  const std::string direction = ctx.attr_s("direction", "forward");
  const int64_t D = direction == "bidirectional" ? 2 : 1;
  const int64_t H = ctx.attr_i("hidden_size", 0);
  if (tx.rank() != 3 || H <= 0) throw ctx.Fail(ErrorCode::kShapeMismatch, "X must be 3-D and hidden_size positive");
  const int64_t S = layout ? tx.shape()[1] : tx.shape()[0], B = layout ? tx.shape()[0] : tx.shape()[1],
                I = tx.shape()[2];
  const auto X = ToF32(ctx, tx), W = ToF32(ctx, ctx.in(1)), R = ToF32(ctx, ctx.in(2));
  if (int64_t(W.size()) != D * G * H * I || int64_t(R.size()) != D * G * H * H)
    throw ctx.Fail(ErrorCode::kShapeMismatch, "W or R has the wrong shape");
  std::vector<float> Bv(static_cast<size_t>(D * 2 * G * H), 0.0f);
  if (ctx.has_input(3)) Bv = ToF32(ctx, ctx.in(3));
  std::vector<int64_t> lens(static_cast<size_t>(B), S);
  if (ctx.has_input(4)) lens = ReadInts(ctx, ctx.in(4));
  auto initial = [&](size_t i) {
    std::vector<float> v(static_cast<size_t>(D * B * H), 0.0f);
    if (ctx.has_input(i)) {
      const auto t = ToF32(ctx, ctx.in(i));
      if (layout) {  // [B, D, H] -> [D, B, H]
        for (int64_t b = 0; b < B; ++b)
          for (int64_t d = 0; d < D; ++d)
            for (int64_t h = 0; h < H; ++h) v[size_t((d * B + b) * H + h)] = t[size_t((b * D + d) * H + h)];
      } else {
        v = t;
      }
    }
    return v;
  };
  std::vector<float> Hs = initial(5), Cs;
  std::vector<float> P(static_cast<size_t>(D * 3 * H), 0.0f);
  if (kind == Kind::kLstm) {
    Cs = initial(6);
    if (ctx.has_input(7)) P = ToF32(ctx, ctx.in(7));
  }
  // Activations: per direction, in the op's order.
  std::vector<std::string> names;
  if (const Attribute* a = ctx.node.attr("activations")) names = a->strings;
  const std::vector<std::string> dflt = kind == Kind::kRnn   ? std::vector<std::string>{"Tanh"}
                                        : kind == Kind::kGru ? std::vector<std::string>{"Sigmoid", "Tanh"}
                                                             : std::vector<std::string>{"Sigmoid", "Tanh", "Tanh"};
  const size_t per_dir = dflt.size();
  const auto alphas = ctx.attr_floats("activation_alpha"), betas = ctx.attr_floats("activation_beta");
  std::vector<Act> acts;
  for (int64_t d = 0; d < D; ++d)
    for (size_t k = 0; k < per_dir; ++k) {
      const size_t idx = size_t(d) * per_dir + k;
      Act a;
      a.name = idx < names.size() ? names[idx] : dflt[k];
      const bool needs_default_alpha = a.name == "LeakyRelu" || a.name == "ThresholdedRelu" ||
                                       a.name == "HardSigmoid" || a.name == "Elu" || a.name == "ScaledTanh" ||
                                       a.name == "Affine";
      a.alpha = idx < alphas.size() ? alphas[idx]
                                    : (a.name == "LeakyRelu"     ? 0.01f
                                       : a.name == "HardSigmoid" ? 0.2f
                                                                 : 1.0f);
      a.beta = idx < betas.size() ? betas[idx] : (a.name == "HardSigmoid" ? 0.5f : 0.0f);
      (void)needs_default_alpha;
      a.Resolve();
      acts.push_back(a);
    }
  const bool has_clip = ctx.has_attr("clip");
  const float clip = ctx.attr_f("clip", 0.0f);
  const bool lbr = ctx.attr_i("linear_before_reset", 0) != 0;
  const bool input_forget = ctx.attr_i("input_forget", 0) != 0;
  auto clipf = [&](float v) { return has_clip ? (v < -clip ? -clip : v > clip ? clip : v) : v; };

  Shape yshape = layout ? Shape{B, S, D, H} : Shape{S, D, B, H};
  Tensor* Y = ctx.wants_output(0) ? &ctx.out(0, tx.dtype(), yshape) : nullptr;
  auto yidx = [&](int64_t t, int64_t d, int64_t b, int64_t h) {
    return layout ? ((b * S + t) * D + d) * H + h : ((t * D + d) * B + b) * H + h;
  };
  std::vector<float> pre(static_cast<size_t>(G * H)), hr(static_cast<size_t>(G * H));
  // Vector kernel tables: the products go through the GEMM kernel, each output folding
  // its index in order from -0.0 exactly as the loops below: x . W for every time step
  // and batch row at once (X's rows in memory order), h . R per step against R laid out
  // as [H, G*H] once per call (a matrix-vector product streaming its rows).
  const bool fast = UseAlgorithm(ctx, kAllRnnAlgos, RnnAlgoName, RnnAlgo::kGemm, true);
  std::vector<float> xw_all, rt, rgh, rh_a, ig, fg, cc, og;
  // An activation on n values in place: Sigmoid and Tanh by the session's MathF32 kernel
  // (bitwise the scalar functions), the others element by element.
  auto apply = [&](const Act& a, float* v, int64_t n) {
    if (a.code == 0)
      ctx.kernels->MathF32(kMathSigmoidF32, v, v, n);
    else if (a.code == 1)
      ctx.kernels->MathF32(kMathTanhF32, v, v, n);
    else
      for (int64_t i = 0; i < n; ++i) v[i] = a(v[i]);
  };
  for (int64_t d = 0; d < D; ++d) {
    const bool rev = direction == "reverse" || (d == 1);
    const float* w = W.data() + d * G * H * I;
    const float* r = R.data() + d * G * H * H;
    if (fast) {
      xw_all.resize(size_t(S * B * G * H));
      ParallelGemmF32(ctx, S * B, G * H, I, X.data(), I, 1, w, 1, I, xw_all.data(), G * H);
      rt.resize(size_t(H * G * H));
      for (int64_t g = 0; g < G * H; ++g)
        for (int64_t i = 0; i < H; ++i) rt[size_t(i * G * H + g)] = r[g * H + i];
    }
    const float* wb = Bv.data() + d * 2 * G * H;
    const float* rb = wb + G * H;
    const float* p = P.data() + d * 3 * H;
    for (int64_t b = 0; b < B; ++b) {
      float* h = Hs.data() + (d * B + b) * H;
      float* c = kind == Kind::kLstm ? Cs.data() + (d * B + b) * H : nullptr;
      const int64_t len = lens[size_t(b)];
      for (int64_t step = 0; step < len; ++step) {
        const int64_t t = rev ? len - 1 - step : step;
        const int64_t xrow = layout ? b * S + t : t * B + b;
        const float* x = X.data() + xrow * I;
        if (fast) {
          std::copy(xw_all.begin() + xrow * G * H, xw_all.begin() + (xrow + 1) * G * H, pre.begin());
          ctx.kernels->GemmF32(1, G * H, H, h, H, 1, rt.data(), G * H, 1, hr.data(), G * H);
        } else {
          for (int64_t g = 0; g < G * H; ++g) {
            float xw = -0.0f, hh = -0.0f;
            for (int64_t i = 0; i < I; ++i) xw = xw + x[i] * w[g * I + i];
            for (int64_t i = 0; i < H; ++i) hh = hh + h[i] * r[g * H + i];
            hr[size_t(g)] = hh;
            pre[size_t(g)] = xw;
          }
        }
        std::vector<float> hn(static_cast<size_t>(H)), cn;
        const Act& f = acts[size_t(d) * per_dir];
        auto gate = [&](int64_t row) { return (pre[size_t(row)] + hr[size_t(row)]) + (wb[row] + rb[row]); };
        // With vector tables each activation runs over a whole gate (apply: MathF32 for
        // Sigmoid and Tanh, the scalar functions' bits), on the same clipped values.
        if (kind == Kind::kRnn) {
          for (int64_t k = 0; k < H; ++k) hn[size_t(k)] = clipf(gate(k));
          if (fast)
            apply(f, hn.data(), H);
          else
            for (int64_t k = 0; k < H; ++k) hn[size_t(k)] = f(hn[size_t(k)]);
        } else if (kind == Kind::kGru) {
          const Act& g2 = acts[size_t(d) * per_dir + 1];
          std::vector<float> z(static_cast<size_t>(H)), rg(static_cast<size_t>(H)), hc(static_cast<size_t>(H));
          for (int64_t k = 0; k < H; ++k) {
            z[size_t(k)] = clipf(gate(k));
            rg[size_t(k)] = clipf(gate(H + k));
          }
          if (fast) {
            apply(f, z.data(), H);
            apply(f, rg.data(), H);
          } else {
            for (int64_t k = 0; k < H; ++k) {
              z[size_t(k)] = f(z[size_t(k)]);
              rg[size_t(k)] = f(rg[size_t(k)]);
            }
          }
          if (fast && !lbr) {
            // (r * h) . R_h for every row at once: the rounded products r[i] * h[i] as A.
            rh_a.resize(size_t(H));
            for (int64_t i = 0; i < H; ++i) rh_a[size_t(i)] = rg[size_t(i)] * h[i];
            rgh.resize(size_t(H));
            ctx.kernels->GemmF32(1, H, H, rh_a.data(), H, 1, rt.data() + 2 * H, G * H, 1, rgh.data(), H);
          }
          for (int64_t k = 0; k < H; ++k) {
            const int64_t row = 2 * H + k;
            if (lbr) {
              hc[size_t(k)] = clipf((pre[size_t(row)] + rg[size_t(k)] * (hr[size_t(row)] + rb[row])) + wb[row]);
            } else {
              float rh = -0.0f;  // (r . h) R_h, one accumulator
              if (fast) {
                rh = rgh[size_t(k)];
              } else {
                for (int64_t i = 0; i < H; ++i) rh = rh + (rg[size_t(i)] * h[i]) * r[row * H + i];
              }
              hc[size_t(k)] = clipf((pre[size_t(row)] + rh) + (wb[row] + rb[row]));
            }
          }
          if (fast)
            apply(g2, hc.data(), H);
          else
            for (int64_t k = 0; k < H; ++k) hc[size_t(k)] = g2(hc[size_t(k)]);
          for (int64_t k = 0; k < H; ++k) hn[size_t(k)] = (1.0f - z[size_t(k)]) * hc[size_t(k)] + z[size_t(k)] * h[k];
        } else if (fast) {
          // The same expressions as below, each activation applied to a whole gate at a
          // time (MathF32 for Sigmoid and Tanh: the scalar functions' bits, lane by lane).
          const Act& g2 = acts[size_t(d) * per_dir + 1];
          const Act& h2 = acts[size_t(d) * per_dir + 2];
          cn.resize(static_cast<size_t>(H));
          ig.resize(size_t(H));
          fg.resize(size_t(H));
          cc.resize(size_t(H));
          og.resize(size_t(H));
          for (int64_t k = 0; k < H; ++k) {
            ig[size_t(k)] = clipf(gate(k) + p[k] * c[k]);
            fg[size_t(k)] = clipf(gate(2 * H + k) + p[2 * H + k] * c[k]);
            cc[size_t(k)] = clipf(gate(3 * H + k));
          }
          apply(f, ig.data(), H);
          apply(f, fg.data(), H);
          apply(g2, cc.data(), H);
          for (int64_t k = 0; k < H; ++k) {
            if (input_forget) fg[size_t(k)] = 1.0f - ig[size_t(k)];
            cn[size_t(k)] = fg[size_t(k)] * c[k] + ig[size_t(k)] * cc[size_t(k)];
            og[size_t(k)] = clipf(gate(H + k) + p[H + k] * cn[size_t(k)]);
          }
          apply(f, og.data(), H);
          std::copy(cn.begin(), cn.end(), hn.begin());
          apply(h2, hn.data(), H);
          for (int64_t k = 0; k < H; ++k) hn[size_t(k)] = og[size_t(k)] * hn[size_t(k)];
          for (int64_t k = 0; k < H; ++k) c[k] = cn[size_t(k)];
        } else {
          const Act& g2 = acts[size_t(d) * per_dir + 1];
          const Act& h2 = acts[size_t(d) * per_dir + 2];
          cn.resize(static_cast<size_t>(H));
          for (int64_t k = 0; k < H; ++k) {  // gate order i, o, f, c; peepholes i, o, f
            const float ig = f(clipf(gate(k) + p[k] * c[k]));
            float fg = f(clipf(gate(2 * H + k) + p[2 * H + k] * c[k]));
            if (input_forget) fg = 1.0f - ig;
            const float cc = g2(clipf(gate(3 * H + k)));
            cn[size_t(k)] = fg * c[k] + ig * cc;
            const float og = f(clipf(gate(H + k) + p[H + k] * cn[size_t(k)]));
            hn[size_t(k)] = og * h2(cn[size_t(k)]);
          }
          for (int64_t k = 0; k < H; ++k) c[k] = cn[size_t(k)];
        }
        for (int64_t k = 0; k < H; ++k) h[k] = hn[size_t(k)];
        if (Y)
          for (int64_t k = 0; k < H; ++k) StoreF32(*Y, yidx(t, d, b, k), h[k]);
      }
    }
  }
  // Final states.
  auto put_state = [&](size_t out, const std::vector<float>& st) {
    if (!ctx.wants_output(out)) return;
    Tensor& t = ctx.out(out, tx.dtype(), layout ? Shape{B, D, H} : Shape{D, B, H});
    for (int64_t d = 0; d < D; ++d)
      for (int64_t b = 0; b < B; ++b)
        for (int64_t h = 0; h < H; ++h)
          StoreF32(t, layout ? (b * D + d) * H + h : (d * B + b) * H + h, st[size_t((d * B + b) * H + h)]);
  };
  put_state(1, Hs);
  if (kind == Kind::kLstm) put_state(2, Cs);
}

}  // namespace

void RNN(OpContext& ctx) { Recurrent(ctx, Kind::kRnn); }
void GRU(OpContext& ctx) { Recurrent(ctx, Kind::kGru); }
void LSTM(OpContext& ctx) { Recurrent(ctx, Kind::kLstm); }

}  // namespace ops
}  // namespace onemodel::impl
