// The reference recurrent cells (see rnn.h): plain loops in program order.
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

}  // namespace ref
}  // namespace onemodel::impl
