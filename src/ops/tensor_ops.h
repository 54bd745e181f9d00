// The algorithms of Pad (ops/tensor_ops.cpp): data movement, every bit kept. The first of each
// is the reference, every plan of the oracle session (ops/algorithm.h).
#pragma once

#include "ops/algorithm_name.h"

namespace onemodel::impl {
namespace ops {

enum class PadAlgo {
  kReference,  // element by element
  kRows,       // rows of the last axis copied as bytes
};
inline constexpr PadAlgo kAllPadAlgos[] = {PadAlgo::kReference, PadAlgo::kRows};
inline const char* PadAlgoName(PadAlgo a) {
  static constexpr const char* kNames[] = {"reference", "rows"};
  return AlgorithmName(a, kNames);
}

}  // namespace ops
}  // namespace onemodel::impl
