// The pooling operators' algorithms (ops/pool.cpp). Each gives the reference's bits: per
// output, the window's taps folded in row-major order, padding taps skipped (max: the
// first NaN sticks; average: the sum from -0.0, then one division by the count; Lp).
#pragma once

#include "ops/algorithm_name.h"

namespace onemodel::impl {
namespace ops {

enum class PoolAlgo {
  kReference,      // the definition's loops (every plan of the oracle session)
  kGlobalAverage,  // GlobalAveragePool: eight channels' folds side by side
  kMaxPlanes,      // 1-D/2-D MaxPool without indices: tap runs on MaxStepStridedF32
  kAveragePlanes,  // 1-D/2-D AveragePool: tap runs on MulAddStridedF32 (x * 1), then / count
};
inline constexpr PoolAlgo kAllPoolAlgos[] = {PoolAlgo::kReference, PoolAlgo::kGlobalAverage, PoolAlgo::kMaxPlanes,
                                             PoolAlgo::kAveragePlanes};
const char* PoolAlgoName(PoolAlgo a);

}  // namespace ops
}  // namespace onemodel::impl
