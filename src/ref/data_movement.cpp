// The reference Gather, Pad and Where (see data_movement.h).
#include "ref/data_movement.h"

#include <cstring>

#include "core/compute.h"
#include "core/index.h"

namespace onemodel::impl {
namespace ref {
namespace {

// The index on an axis of size d that padded position p (output index minus the low pad)
// reads, or -1 for the constant value (mode constant, or an empty axis).
int64_t PadSource(PadMode mode, int64_t p, int64_t d) {
  if (p >= 0 && p < d) return p;
  if (mode == PadMode::kConstant || d == 0) return -1;
  if (mode == PadMode::kEdge) return p < 0 ? 0 : d - 1;
  if (mode == PadMode::kWrap) return ((p % d) + d) % d;
  if (d == 1) return 0;
  const int64_t period = 2 * (d - 1);
  p = ((p % period) + period) % period;
  return p >= d ? period - p : p;
}

// The constant (input 2, or attribute `value` before opset 11) written into every
// element, element by element.
void PadFill(const PadParams& p, const Tensor& x, const Tensor& cval, Tensor& out) {
  if (p.mode != PadMode::kConstant || x.dtype() == DType::kString) return;
  if (!cval.empty()) {
    for (int64_t i = 0; i < out.numel(); ++i) CopyElement(cval, 0, out, i);
  } else if (p.value_attr) {
    const float v = p.value;
    DispatchNumeric(x.dtype(), [&]<class T>() {
      for (int64_t i = 0; i < out.numel(); ++i) out.mutable_data<T>()[i] = Narrow<T>(typename Compute<T>::type(v));
    });
  }
}

// For each output index (row-major), the flat index into an input of shape `in` broadcast
// to `out` (numpy rules, `in` aligned right; the caller checked that it broadcasts).
std::vector<int64_t> BroadcastTable(const Shape& in, const Shape& out) {
  const size_t rank = out.size();
  int64_t total = 1;
  for (int64_t d : out) total *= d;
  std::vector<int64_t> idx(static_cast<size_t>(total));
  // Strides of `in` aligned to the right of `out`, 0 where broadcast.
  std::vector<int64_t> stride(rank, 0);
  int64_t s = 1;
  for (size_t k = in.size(); k-- > 0;) {
    const size_t o = rank - in.size() + k;
    stride[o] = in[k] == 1 ? 0 : s;
    s *= in[k];
  }
  std::vector<int64_t> pos(rank, 0);
  int64_t cur = 0;
  for (int64_t i = 0; i < total; ++i) {
    idx[size_t(i)] = cur;
    for (size_t k = rank; k-- > 0;) {
      if (++pos[k] < out[k]) {
        cur += stride[k];
        break;
      }
      cur -= stride[k] * (out[k] - 1);
      pos[k] = 0;
    }
  }
  return idx;
}

}  // namespace

void CopyElement(const Tensor& src, int64_t si, Tensor& dst, int64_t di) {
  if (src.dtype() == DType::kString) {
    dst.mutable_strings()[size_t(di)] = src.strings()[size_t(si)];
    return;
  }
  const size_t es = DTypeStorageSize(src.dtype());
  std::memcpy(dst.mutable_data<uint8_t>() + size_t(di) * es, static_cast<const uint8_t*>(src.raw()) + size_t(si) * es,
              es);
}

void Gather(const GatherParams& p, const Tensor& x, Tensor& out) {
  int64_t o = 0;
  for (int64_t b = 0; b < p.outer; ++b)
    for (int64_t k = 0; k < p.n; ++k)
      for (int64_t i = 0; i < p.inner; ++i) CopyElement(x, (b * p.dim + p.rows[k]) * p.inner + i, out, o++);
}

void Pad(const PadParams& p, const Tensor& x, const Tensor& cval, Tensor& out) {
  PadFill(p, x, cval, out);
  const int64_t r = x.rank();
  const auto st = RowMajorStrides(x.shape());
  ForEachIndex(p.s, [&](int64_t o, const std::vector<int64_t>& pos) {
    int64_t src = 0;
    for (int64_t k = 0; k < r; ++k) {
      const int64_t q = PadSource(p.mode, pos[size_t(k)] - p.lo[size_t(k)], x.shape()[size_t(k)]);
      if (q < 0) return;  // the constant, already written
      src += q * st[size_t(k)];
    }
    CopyElement(x, src, out, o);
  });
}

void Where(const Tensor& c, const Tensor& a, const Tensor& b, Tensor& out) {
  const Shape& shape = out.shape();
  const auto ic = BroadcastTable(c.shape(), shape), ia = BroadcastTable(a.shape(), shape),
             ib = BroadcastTable(b.shape(), shape);
  if (a.dtype() == DType::kString) {
    for (size_t i = 0; i < ic.size(); ++i)
      out.mutable_strings()[i] = c.data<uint8_t>()[ic[i]] ? a.strings()[size_t(ia[i])] : b.strings()[size_t(ib[i])];
    return;
  }
  const size_t es = DTypeStorageSize(a.dtype());
  const uint8_t* pa = static_cast<const uint8_t*>(a.raw());
  const uint8_t* pb = static_cast<const uint8_t*>(b.raw());
  uint8_t* po = out.mutable_data<uint8_t>();
  for (size_t i = 0; i < ic.size(); ++i) {
    const uint8_t* src = c.data<uint8_t>()[ic[i]] ? pa + size_t(ia[i]) * es : pb + size_t(ib[i]) * es;
    std::memcpy(po + i * es, src, es);
  }
}

}  // namespace ref
}  // namespace onemodel::impl
