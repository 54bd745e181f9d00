// The reference transpose kernel (see transpose.h).
#include "ref/transpose.h"

namespace onemodel::impl {
namespace ref {

void Transpose32(const uint32_t* src, int64_t ss, uint32_t* dst, int64_t ds, int64_t rows, int64_t cols) {
  for (int64_t q = 0; q < cols; ++q)
    for (int64_t j = 0; j < rows; ++j) dst[q * ds + j] = src[j * ss + q];
}

}  // namespace ref
}  // namespace onemodel::impl
