// Shared helpers for the test suite: the target under test, specials corpora, and
// bitwise comparison with a hex dump of the first difference.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "core/bits.h"
#include "runtime/dispatch.h"

namespace onemodel::impl {
namespace test {

// The target this run tests: --isa, else ONEMODEL_ISA, else the best supported.
Isa ActiveIsa();
void SetActiveIsa(Isa isa);

// Special f32 values of exact-contract section 9 (NaNs, zeros, infinities,
// subnormals, ties, saturation edges).
const std::vector<float>& F32Specials();

using ::onemodel::impl::F2U;
using ::onemodel::impl::U2F;
inline bool IsNaN(float f) { return (F2U(f) & 0x7FFFFFFFu) > 0x7F800000u; }
// Bitwise equality where any NaN equals any NaN (NaN payloads are unspecified).
inline bool SameF32(float a, float b) { return (IsNaN(a) && IsNaN(b)) || F2U(a) == F2U(b); }

// Heap allocations (operator new, any thread) counted between Start and Stop; the test
// binary replaces the global operator new for this (tests/test_main.cpp).
void StartCountingAllocations();
long StopCountingAllocations();

// Returns "" when equal, else a message naming the first differing element in hex.
std::string DiffF32(const float* want, const float* got, size_t n);
std::string DiffBytes(const uint8_t* want, const uint8_t* got, size_t n, size_t elem_size);

}  // namespace test
}  // namespace onemodel::impl
