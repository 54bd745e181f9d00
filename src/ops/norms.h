// The algorithms of the normalisations (ops/norm_ops.cpp). The first of each
// is the reference, every plan of the oracle session (ops/algorithm.h).
#pragma once

#include "ops/algorithm_name.h"

namespace onemodel::impl {
namespace ops {

enum class LayerNormAlgo {
  kReference,  // the definition's loops
  kRows,       // rows over the threads, each step one pass of the session's kernels
};
inline constexpr LayerNormAlgo kAllLayerNormAlgos[] = {LayerNormAlgo::kReference, LayerNormAlgo::kRows};
inline const char* LayerNormAlgoName(LayerNormAlgo a) {
  static constexpr const char* kNames[] = {"reference", "rows"};
  return AlgorithmName(a, kNames);
}

enum class InstanceNormAlgo {
  kReference,  // the definition's loops
  kPlanes,     // planes over the threads, each step one BinaryF32 pass
};
inline constexpr InstanceNormAlgo kAllInstanceNormAlgos[] = {InstanceNormAlgo::kReference, InstanceNormAlgo::kPlanes};
inline const char* InstanceNormAlgoName(InstanceNormAlgo a) {
  static constexpr const char* kNames[] = {"reference", "planes"};
  return AlgorithmName(a, kNames);
}

}  // namespace ops
}  // namespace onemodel::impl
