// The reference (oracle) RNN, GRU and LSTM (ONNX Operators.md equations), the definition
// of their bits: every gate's pre-activation is ((x . W) + (h . R)) + (Wb + Rb), each dot
// product one accumulator from -0.0 folding the input (or hidden) index in order, as
// ONNX's reference groups the sums; activations are the project's own functions; f32
// throughout. RnnSequenceF32 runs the cells over the sequence, direction by direction and
// batch row by batch row (the reference row of ops/nn/rnn.cpp's table); the GEMM row runs the
// same equations over whole gates with the session's kernels.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

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

enum class RnnKind : uint8_t { kRnn, kGru, kLstm };

// A node's validated parameters: the operator, G gates of H rows, D directions, layout
// (1: batch first), the sequence length S, batch B and input size I, whether the one
// direction runs reversed (direction "reverse"; bidirectional: direction 1 does), the
// activations per direction in the operator's order (per_dir each), and what the cells
// share.
struct RnnParams {
  RnnKind kind = RnnKind::kRnn;
  int64_t G = 1, H = 0, D = 1, layout = 0;
  int64_t S = 0, B = 0, I = 0;
  bool reverse = false;
  std::vector<RnnActivation> acts;
  size_t per_dir = 1;
  RnnCell cell;  // H, clip, linear_before_reset, input_forget
  float Clip(float v) const { return cell.Clip(v); }
  const RnnActivation& act(int64_t d, size_t k) const { return acts[size_t(d) * per_dir + k]; }
};

// A node's data as floats: X ([S, B, I], or [B, S, I] batch first), W [D, G*H, I],
// R [D, G*H, H], the biases [D, 2*G*H] (Wb then Rb), the peepholes [D, 3*H] (zeros but for
// LSTM), the B sequence lengths (each in [0, S]), the hidden states hs [D, B, H] and (LSTM)
// the cell states cs [D, B, H], initial on entry and final on return, and y (null: not
// wanted) the output Y in its layout ([S, D, B, H], or [B, S, D, H] batch first), whose
// steps past a row's length are left as they are.
struct RnnData {
  const float *x, *w, *r, *bias, *peep;
  const int64_t* lens;
  float *hs, *cs, *y;
};

// The definition over the sequence: for each direction d, each batch row b, the steps of
// its length in order (reversed for a reversed direction): the products (RnnProductsF32),
// the cell (RnnCellF32, GruCellF32, LstmCellF32) updating h (and c), h into y.
void RnnSequenceF32(const RnnParams& p, const RnnData& io);

}  // namespace ref
}  // namespace onemodel::impl
