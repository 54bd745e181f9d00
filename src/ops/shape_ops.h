// The algorithms of Transpose and Gather (ops/shape_ops.cpp): data movement, every bit kept. The first of each
// is the reference, every plan of the oracle session (ops/algorithm.h).
#pragma once

#include "ops/algorithm_name.h"

namespace onemodel::impl {
namespace ops {

enum class TransposeAlgo {
  kReference,  // element by element in output order
  kBlocks32,   // 32-bit elements: 2-D blocks through the Transpose32 kernel
};
inline constexpr TransposeAlgo kAllTransposeAlgos[] = {TransposeAlgo::kReference, TransposeAlgo::kBlocks32};
inline const char* TransposeAlgoName(TransposeAlgo a) {
  static constexpr const char* kNames[] = {"reference", "blocks32"};
  return AlgorithmName(a, kNames);
}

enum class GatherAlgo {
  kReference,  // element by element
  kSlices,     // whole slices copied as bytes, over the threads
};
inline constexpr GatherAlgo kAllGatherAlgos[] = {GatherAlgo::kReference, GatherAlgo::kSlices};
inline const char* GatherAlgoName(GatherAlgo a) {
  static constexpr const char* kNames[] = {"reference", "slices"};
  return AlgorithmName(a, kNames);
}

}  // namespace ops
}  // namespace onemodel::impl
