// Constants that are part of the definition of exact mode's bits.
#pragma once

#include <cstddef>
#include <limits>

// Exact mode needs binary32/binary64 arithmetic rounded once per operation: no fast-math,
// and no excess precision (32-bit x86's x87 unit evaluates in 80 bits; CMakeLists.txt
// builds i686 with -msse2 -mfpmath=sse, which makes __FLT_EVAL_METHOD__ 0).
#if defined(__FAST_MATH__)
#error "exact mode cannot be built with -ffast-math"
#endif
#if defined(__FLT_EVAL_METHOD__) && __FLT_EVAL_METHOD__ != 0 && __FLT_EVAL_METHOD__ != -1
#error "exact mode needs float arithmetic without excess precision (on 32-bit x86: -msse2 -mfpmath=sse)"
#endif

namespace onemodel::impl {

static_assert(std::numeric_limits<float>::is_iec559 && std::numeric_limits<double>::is_iec559,
              "exact mode needs IEEE 754 binary32 and binary64");

// L of exact-contract section 3: the number of partial sums along one contiguous run.
// Chosen once, by tools/bench_lanes.sh on every target (figures in docs/exact-mode.md),
// before the first golden hash was recorded. Changing it changes golden hashes.
constexpr size_t kCanonicalLanes = 16;

}  // namespace onemodel::impl
