// The algorithms of RNN, GRU and LSTM (ops/rnn.cpp). The first of each
// is the reference, every plan of the oracle session (ops/algorithm.h).
#pragma once

#include "ops/algorithm_name.h"

namespace onemodel::impl {
namespace ops {

enum class RnnAlgo {
  kReference,  // per step and gate, the products folded from -0.0 and each activation by the scalar function
  kGemm,  // x . W for every step at once and h . R per step through the GEMM kernel, activations over whole gates by
          // MathF32
};
inline constexpr RnnAlgo kAllRnnAlgos[] = {RnnAlgo::kReference, RnnAlgo::kGemm};
inline const char* RnnAlgoName(RnnAlgo a) {
  static constexpr const char* kNames[] = {"reference", "gemm"};
  return AlgorithmName(a, kNames);
}

}  // namespace ops
}  // namespace onemodel::impl
