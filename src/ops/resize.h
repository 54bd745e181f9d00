// The algorithms of Resize and Upsample (ops/resize.cpp). The first of each
// is the reference, every plan of the oracle session (ops/algorithm.h).
#pragma once

#include "ops/algorithm_name.h"

namespace onemodel::impl {
namespace ops {

enum class ResizeAlgo {
  kReference,  // the general interpolation over every axis
  kNearest,    // nearest (or linear landing on whole pixels): a copy of each picked element
  kSeparable,  // linear/cubic in the last two axes: rows then columns, the same taps and folds
};
inline constexpr ResizeAlgo kAllResizeAlgos[] = {ResizeAlgo::kReference, ResizeAlgo::kNearest, ResizeAlgo::kSeparable};
inline const char* ResizeAlgoName(ResizeAlgo a) {
  static constexpr const char* kNames[] = {"reference", "nearest", "separable"};
  return AlgorithmName(a, kNames);
}

}  // namespace ops
}  // namespace onemodel::impl
