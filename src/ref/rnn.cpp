// The reference recurrent cells and sequence (see rnn.h): plain loops in program order.
#include "ref/rnn.h"

#include <vector>

#include "ref/math.h"

namespace onemodel::impl {
namespace ref {

int RnnActivation::Code(const std::string& name) {
  static constexpr const char* kNames[] = {"Sigmoid",         "Tanh",       "Relu",        "Affine", "LeakyRelu",
                                           "ThresholdedRelu", "ScaledTanh", "HardSigmoid", "Elu",    "Softsign",
                                           "Softplus"};
  for (int i = 0; i < int(sizeof(kNames) / sizeof(kNames[0])); ++i)
    if (name == kNames[i]) return i;
  return -1;
}

float RnnActivation::operator()(float x) const {
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

void RnnProductsF32(int64_t G, int64_t H, int64_t I, const float* x, const float* w, const float* h, const float* r,
                    float* pre, float* hr) {
  for (int64_t g = 0; g < G * H; ++g) {
    float xw = -0.0f, hh = -0.0f;
    for (int64_t i = 0; i < I; ++i) xw = xw + x[i] * w[g * I + i];
    for (int64_t i = 0; i < H; ++i) hh = hh + h[i] * r[g * H + i];
    hr[g] = hh;
    pre[g] = xw;
  }
}

namespace {
float Gate(const float* pre, const float* hr, const float* wb, const float* rb, int64_t row) {
  return (pre[row] + hr[row]) + (wb[row] + rb[row]);
}
}  // namespace

void RnnCellF32(const RnnCell& c, const RnnActivation& f, const float* pre, const float* hr, const float* wb,
                const float* rb, float* hn) {
  for (int64_t k = 0; k < c.H; ++k) hn[k] = f(c.Clip(Gate(pre, hr, wb, rb, k)));
}

void GruCellF32(const RnnCell& c, const RnnActivation& f, const RnnActivation& g, const float* pre, const float* hr,
                const float* wb, const float* rb, const float* r_h, const float* h, float* hn) {
  const int64_t H = c.H;
  std::vector<float> z(static_cast<size_t>(H)), rg(static_cast<size_t>(H));
  for (int64_t k = 0; k < H; ++k) {
    z[size_t(k)] = f(c.Clip(Gate(pre, hr, wb, rb, k)));
    rg[size_t(k)] = f(c.Clip(Gate(pre, hr, wb, rb, H + k)));
  }
  for (int64_t k = 0; k < H; ++k) {
    const int64_t row = 2 * H + k;
    float hc;
    if (c.linear_before_reset) {
      hc = c.Clip((pre[row] + rg[size_t(k)] * (hr[row] + rb[row])) + wb[row]);
    } else {
      float rh = -0.0f;  // (r . h) R_h, one accumulator
      for (int64_t i = 0; i < H; ++i) rh = rh + (rg[size_t(i)] * h[i]) * r_h[row * H + i];
      hc = c.Clip((pre[row] + rh) + (wb[row] + rb[row]));
    }
    hc = g(hc);
    hn[k] = (1.0f - z[size_t(k)]) * hc + z[size_t(k)] * h[k];
  }
}

void LstmCellF32(const RnnCell& c, const RnnActivation& f, const RnnActivation& g, const RnnActivation& h2,
                 const float* pre, const float* hr, const float* wb, const float* rb, const float* p, float* cs,
                 float* hn) {
  const int64_t H = c.H;
  std::vector<float> cn(static_cast<size_t>(H));
  for (int64_t k = 0; k < H; ++k) {  // gate order i, o, f, c; peepholes i, o, f
    const float i_k = f(c.Clip(Gate(pre, hr, wb, rb, k) + p[k] * cs[k]));
    float f_k = f(c.Clip(Gate(pre, hr, wb, rb, 2 * H + k) + p[2 * H + k] * cs[k]));
    if (c.input_forget) f_k = 1.0f - i_k;
    const float c_k = g(c.Clip(Gate(pre, hr, wb, rb, 3 * H + k)));
    cn[size_t(k)] = f_k * cs[k] + i_k * c_k;
    const float o_k = f(c.Clip(Gate(pre, hr, wb, rb, H + k) + p[H + k] * cn[size_t(k)]));
    hn[k] = o_k * h2(cn[size_t(k)]);
  }
  for (int64_t k = 0; k < H; ++k) cs[k] = cn[size_t(k)];
}

void RnnSequenceF32(const RnnParams& p, const RnnData& io) {
  const int64_t G = p.G, H = p.H, D = p.D, S = p.S, B = p.B, I = p.I;
  auto yidx = [&](int64_t t, int64_t d, int64_t b, int64_t h) {
    return p.layout ? ((b * S + t) * D + d) * H + h : ((t * D + d) * B + b) * H + h;
  };
  std::vector<float> pre(static_cast<size_t>(G * H), 0.0f), hr(static_cast<size_t>(G * H), 0.0f);
  std::vector<float> hn(static_cast<size_t>(H), 0.0f);
  for (int64_t d = 0; d < D; ++d) {
    const bool rev = p.reverse || (d == 1);
    const float* w = io.w + d * G * H * I;
    const float* r = io.r + d * G * H * H;
    const float* wb = io.bias + d * 2 * G * H;
    const float* rb = wb + G * H;
    const float* peep = io.peep + d * 3 * H;
    for (int64_t b = 0; b < B; ++b) {
      float* h = io.hs + (d * B + b) * H;
      float* c = p.kind == RnnKind::kLstm ? io.cs + (d * B + b) * H : nullptr;
      const int64_t len = io.lens[size_t(b)];
      for (int64_t step = 0; step < len; ++step) {
        const int64_t t = rev ? len - 1 - step : step;
        const int64_t xrow = p.layout ? b * S + t : t * B + b;
        const float* x = io.x + xrow * I;
        RnnProductsF32(G, H, I, x, w, h, r, pre.data(), hr.data());
        if (p.kind == RnnKind::kRnn)
          RnnCellF32(p.cell, p.act(d, 0), pre.data(), hr.data(), wb, rb, hn.data());
        else if (p.kind == RnnKind::kGru)
          GruCellF32(p.cell, p.act(d, 0), p.act(d, 1), pre.data(), hr.data(), wb, rb, r, h, hn.data());
        else
          LstmCellF32(p.cell, p.act(d, 0), p.act(d, 1), p.act(d, 2), pre.data(), hr.data(), wb, rb, peep, c, hn.data());
        for (int64_t k = 0; k < H; ++k) h[k] = hn[size_t(k)];
        if (io.y)
          for (int64_t k = 0; k < H; ++k) io.y[yidx(t, d, b, k)] = h[k];
      }
    }
  }
}

}  // namespace ref
}  // namespace onemodel::impl
