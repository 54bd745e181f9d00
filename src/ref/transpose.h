// The reference (oracle) transpose kernel of the dispatch table.
#pragma once

#include <cstdint>

namespace onemodel::impl {
namespace ref {

// A 2-D transpose of 32-bit elements (data movement, no arithmetic: every bit kept):
// dst[q * ds + j] = src[j * ss + q] for j < rows, q < cols (the Transpose operator).
void Transpose32(const uint32_t* src, int64_t ss, uint32_t* dst, int64_t ds, int64_t rows, int64_t cols);

}  // namespace ref
}  // namespace onemodel::impl
