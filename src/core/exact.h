// Constants that are part of the definition of exact mode's bits.
#pragma once

#include <cstddef>

namespace onemodel::impl {

// L of exact-contract section 3: the number of partial sums along one contiguous run.
// Chosen once, by tools/bench_lanes.sh on every target (figures in docs/exact-mode.md),
// before the first golden hash was recorded. Changing it changes golden hashes.
constexpr size_t kCanonicalLanes = 16;

}  // namespace onemodel::impl
