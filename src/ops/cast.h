// The algorithms of Cast (ops/cast.cpp). The first of each
// is the reference, every plan of the oracle session (ops/algorithm.h).
#pragma once

#include "ops/algorithm_name.h"

namespace onemodel::impl {
namespace ops {

enum class CastAlgo {
  kReference,   // the project's conversion routines, element by element
  kIntToFloat,  // integers of at most 32 bits to float by C++'s conversion (round to nearest even once: the same value)
};
inline constexpr CastAlgo kAllCastAlgos[] = {CastAlgo::kReference, CastAlgo::kIntToFloat};
inline const char* CastAlgoName(CastAlgo a) {
  static constexpr const char* kNames[] = {"reference", "int-to-float"};
  return AlgorithmName(a, kNames);
}

}  // namespace ops
}  // namespace onemodel::impl
