// The reference transpose kernel and operator (see transpose.h).
#include "ref/transpose.h"

#include <cstring>
#include <vector>

#include "core/index.h"
#include "core/tensor.h"
#include "ref/data_movement.h"

namespace onemodel::impl {
namespace ref {
namespace {

// dst[j] = src[j * step] for j < inner, elements of type E moved as bytes.
template <class E>
void CopyStrided(const uint8_t* src, uint8_t* dst, int64_t inner, int64_t step) {
  const E* sp = reinterpret_cast<const E*>(src);
  E* dp = reinterpret_cast<E*>(dst);
  for (int64_t j = 0; j < inner; ++j) std::memcpy(dp + j, sp + j * step, sizeof(E));
}

}  // namespace

void Transpose32(const uint32_t* src, int64_t ss, uint32_t* dst, int64_t ds, int64_t rows, int64_t cols) {
  for (int64_t q = 0; q < cols; ++q)
    for (int64_t j = 0; j < rows; ++j) dst[q * ds + j] = src[j * ss + q];
}

void Transpose(const Shape& perm, const Tensor& x, Tensor& out) {
  const Shape& s = out.shape();
  const auto in_st = RowMajorStrides<Shape>(x.shape());
  const int64_t r = x.rank();
  if (x.dtype() != DType::kString && r >= 1 && out.numel()) {
    // Rows of the output's last axis, each read with the input's stride for it.
    const int64_t inner = s[size_t(r - 1)], rows = out.numel() / inner, step = in_st[size_t(perm[size_t(r - 1)])];
    const size_t es = DTypeStorageSize(x.dtype());
    const uint8_t* src = static_cast<const uint8_t*>(x.raw());
    uint8_t* dst = out.mutable_data<uint8_t>();
    for (int64_t row = 0; row < rows; ++row) {
      int64_t off = 0, rest = row;
      for (int64_t i = r - 2; i >= 0; --i) {
        off += (rest % s[size_t(i)]) * in_st[size_t(perm[size_t(i)])];
        rest /= s[size_t(i)];
      }
      const uint8_t* sp = src + size_t(off) * es;
      uint8_t* d = dst + size_t(row * inner) * es;
      if (step == 1) {  // a contiguous run of the input (the last axis kept)
        std::memcpy(d, sp, size_t(inner) * es);
      } else if (es == 4) {
        CopyStrided<uint32_t>(sp, d, inner, step);
      } else if (es == 2) {
        CopyStrided<uint16_t>(sp, d, inner, step);
      } else if (es == 8) {
        CopyStrided<uint64_t>(sp, d, inner, step);
      } else if (es == 1) {
        CopyStrided<uint8_t>(sp, d, inner, step);
      } else {
        for (int64_t j = 0; j < inner; ++j) std::memcpy(d + size_t(j) * es, sp + size_t(j * step) * es, es);
      }
    }
    return;
  }
  std::vector<int64_t> pos(size_t(r), 0);
  for (int64_t o = 0; o < out.numel(); ++o) {
    int64_t src = 0;
    for (int64_t i = 0; i < r; ++i) src += pos[size_t(i)] * in_st[size_t(perm[size_t(i)])];
    CopyElement(x, src, out, o);
    for (int64_t k = r - 1; k >= 0; --k) {
      if (++pos[size_t(k)] < s[size_t(k)]) break;
      pos[size_t(k)] = 0;
    }
  }
}

}  // namespace ref
}  // namespace onemodel::impl
