// The algorithms of Attention (ops/attention.cpp). The first of each
// is the reference, every plan of the oracle session (ops/algorithm.h).
#pragma once

#include "ops/algorithm_name.h"

namespace onemodel::impl {
namespace ops {

enum class AttentionAlgo {
  kReference,  // the definition's loops
  kGemm,       // per batch and head, the scores and the weighted sum as GEMMs, softmax rows by the session's kernels
};
inline constexpr AttentionAlgo kAllAttentionAlgos[] = {AttentionAlgo::kReference, AttentionAlgo::kGemm};
inline const char* AttentionAlgoName(AttentionAlgo a) {
  static constexpr const char* kNames[] = {"reference", "gemm"};
  return AlgorithmName(a, kNames);
}

}  // namespace ops
}  // namespace onemodel::impl
