// The algorithms of Where (ops/elementwise.cpp): a selection, every bit kept. The first of each
// is the reference, every plan of the oracle session (ops/algorithm.h).
#pragma once

namespace onemodel::impl {
namespace ops {

enum class WhereAlgo {
  kReference,  // element by element through the broadcast index tables
  kRows,       // rows of the last axis, elements copied as storage bytes
};
inline constexpr WhereAlgo kAllWhereAlgos[] = {WhereAlgo::kReference, WhereAlgo::kRows};
inline const char* WhereAlgoName(WhereAlgo a) {
  switch (a) {
    case WhereAlgo::kReference: return "reference";
    case WhereAlgo::kRows: return "rows";
  }
  return "?";
}

}  // namespace ops
}  // namespace onemodel::impl
