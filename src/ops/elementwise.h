// The algorithms of Where (ops/elementwise.cpp): a selection, every bit kept. The first of each
// is the reference, every plan of the oracle session (ops/algorithm.h).
#pragma once

#include "ops/algorithm_name.h"

namespace onemodel::impl {
namespace ops {

enum class WhereAlgo {
  kReference,  // element by element through the broadcast index tables
  kRows,       // rows of the last axis, elements copied as storage bytes
};
inline constexpr WhereAlgo kAllWhereAlgos[] = {WhereAlgo::kReference, WhereAlgo::kRows};
inline const char* WhereAlgoName(WhereAlgo a) {
  static constexpr const char* kNames[] = {"reference", "rows"};
  return AlgorithmName(a, kNames);
}

}  // namespace ops
}  // namespace onemodel::impl
