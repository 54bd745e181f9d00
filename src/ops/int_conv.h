// The algorithms of ConvInteger and QLinearConv (ops/int_conv.cpp): exact int32 sums (wrapping), so any
// order gives the reference's bits. The first of each
// is the reference, every plan of the oracle session (ops/algorithm.h).
#pragma once

#include "ops/algorithm_name.h"

namespace onemodel::impl {
namespace ops {

enum class IntConvAlgo {
  kReference,  // the definition's loops
  kI16Pairs,   // 1-D/2-D 8-bit: im2col of int16 differences through GemmI16PairsI32
};
inline constexpr IntConvAlgo kAllIntConvAlgos[] = {IntConvAlgo::kReference, IntConvAlgo::kI16Pairs};
inline const char* IntConvAlgoName(IntConvAlgo a) {
  static constexpr const char* kNames[] = {"reference", "i16-pairs"};
  return AlgorithmName(a, kNames);
}

}  // namespace ops
}  // namespace onemodel::impl
