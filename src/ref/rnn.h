// The reference (oracle) recurrent cells of RNN, GRU and LSTM (ONNX Operators.md
// equations), the definition of their bits: every gate's pre-activation is
// ((x . W) + (h . R)) + (Wb + Rb), each dot product one accumulator from -0.0 folding the
// input (or hidden) index in order, as ONNX's reference groups the sums; activations are
// the project's own functions; f32 throughout. ops/rnn.cpp runs them (its reference
// algorithm) or the same equations over whole gates with the session's kernels.
#pragma once

#include <cstdint>
#include <string>

namespace onemodel::impl {
namespace ref {

// A recurrent activation by name (ONNX's list) with its alpha and beta.
struct RnnActivation {
  // Sigmoid, Tanh, Relu, Affine, LeakyRelu, ThresholdedRelu, ScaledTanh, HardSigmoid,
  // Elu, Softsign, Softplus; -1 for an unknown name (the identity).
  int code = -1;
  float alpha = 0, beta = 0;
  static int Code(const std::string& name);
  float operator()(float x) const;
};

// What every cell of one node shares: the hidden size, clip, GRU's linear_before_reset
// and LSTM's input_forget.
struct RnnCell {
  int64_t H = 0;
  bool has_clip = false, linear_before_reset = false, input_forget = false;
  float clip = 0.0f;
  float Clip(float v) const { return has_clip ? (v < -clip ? -clip : v > clip ? clip : v) : v; }
};

// One step's products for G gates of H rows: pre[g] = the fold of x[i] * w[g * I + i] over
// i < I, hr[g] = the fold of h[i] * r[g * H + i] over i < H, each from -0.0.
void RnnProductsF32(int64_t G, int64_t H, int64_t I, const float* x, const float* w, const float* h, const float* r,
                    float* pre, float* hr);

// The new hidden state hn (H values) of each cell from its products pre, hr and the
// biases wb, rb (gate order: RNN i; GRU z, r, h; LSTM i, o, f, c).
// RNN: hn = f(clip(gate)).
void RnnCellF32(const RnnCell& c, const RnnActivation& f, const float* pre, const float* hr, const float* wb,
                const float* rb, float* hn);
// GRU: z and r by f, the candidate by g from (r * h) . R_h (or, linear_before_reset,
// r * (h . R_h + Rb_h)); hn = (1 - z) * candidate + z * h. r_h: the recurrence weights
// [G*H, H]; h: the previous hidden state.
void GruCellF32(const RnnCell& c, const RnnActivation& f, const RnnActivation& g, const float* pre, const float* hr,
                const float* wb, const float* rb, const float* r_h, const float* h, float* hn);
// LSTM with peepholes p (i, o, f): i and f by f, the cell candidate by g, the new cell
// state cs (updated in place), o by f, hn = o * h2(cs).
void LstmCellF32(const RnnCell& c, const RnnActivation& f, const RnnActivation& g, const RnnActivation& h2,
                 const float* pre, const float* hr, const float* wb, const float* rb, const float* p, float* cs,
                 float* hn);

}  // namespace ref
}  // namespace onemodel::impl
