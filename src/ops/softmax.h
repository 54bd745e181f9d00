// The softmax family's plans (Softmax, LogSoftmax, Hardmax: ops/softmax.cpp). The
// definition of Softmax's bits is ref::SoftmaxRowF32 (ref/softmax.h) for a row, the same
// steps with the reduction's order (ops/reduce_layout.h) for any axis.
#pragma once

#include <cstdint>

#include "ops/reduce_layout.h"

namespace onemodel::impl {
namespace ops {

enum class SoftmaxAlgo {
  kReference,  // float Softmax along contiguous rows: ref::SoftmaxRowF32 per row, in turn;
               // anything else: the layout's index tables, one output's elements at a time
  kRows,       // float Softmax along contiguous rows: the session's SoftmaxRowF32 kernel,
               // rows over the threads
};
inline constexpr SoftmaxAlgo kAllSoftmaxAlgos[] = {SoftmaxAlgo::kReference, SoftmaxAlgo::kRows};
const char* SoftmaxAlgoName(SoftmaxAlgo a);

}  // namespace ops
}  // namespace onemodel::impl
