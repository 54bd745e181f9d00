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
  kU8S8Dot,    // 1-D/2-D 8-bit: raw weights (u8) x im2col (s8) quads through GemmU8S8I32
};
inline constexpr IntConvAlgo kAllIntConvAlgos[] = {IntConvAlgo::kReference, IntConvAlgo::kI16Pairs,
                                                   IntConvAlgo::kU8S8Dot};
inline const char* IntConvAlgoName(IntConvAlgo a) {
  static constexpr const char* kNames[] = {"reference", "i16-pairs", "u8s8-dot"};
  return AlgorithmName(a, kNames);
}

}  // namespace ops
}  // namespace onemodel::impl
