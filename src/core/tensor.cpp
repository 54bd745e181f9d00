// Tensor storage and size checks.
#include "core/tensor.h"

#include <cstring>
#include <limits>

#include "core/error.h"

namespace onemodel {

size_t MaxTensorBytes() {
  if (sizeof(size_t) <= 4) return size_t(0xFFFFFFFFu);  // wasm32: 4 GiB address space
  return size_t(1) << 40;
}

int64_t CheckedNumElements(const Shape& shape, size_t elem_size, const std::string& what) {
  int64_t n = 1;
  const uint64_t limit = MaxTensorBytes() / (elem_size ? elem_size : 1);
  for (int64_t d : shape) {
    if (d < 0) throw Error(ErrorCode::kOutOfRange, what + ": negative dimension in shape " + ShapeToString(shape));
    if (d != 0 && uint64_t(n) > limit / uint64_t(d)) {
      throw Error(ErrorCode::kOutOfRange, what + ": shape " + ShapeToString(shape) + " is too large (over " +
                                              std::to_string(MaxTensorBytes()) + " bytes)");
    }
    n *= d;
  }
  return n;
}

std::string ShapeToString(const Shape& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? "," : "") + std::to_string(shape[i]);
  return s + "]";
}

Tensor::Tensor(DType dtype, Shape shape, const std::string& what)
    : dtype_(dtype), shape_(std::move(shape)) {
  if (!IsKnownDType(int32_t(dtype))) {
    throw Error(ErrorCode::kTypeMismatch, what + ": unknown element type " + std::to_string(int(dtype)));
  }
  numel_ = CheckedNumElements(shape_, DTypeStorageSize(dtype_), what);
  if (dtype_ == DType::kString) {
    strings_ = std::make_shared<std::vector<std::string>>(size_t(numel_));
    return;
  }
  const size_t bytes = nbytes();
  std::shared_ptr<uint8_t[]> buf(new uint8_t[bytes ? bytes : 1]());
  data_ = buf.get();
  owner_ = std::shared_ptr<const void>(buf, buf.get());
  owned_ = true;
}

Tensor Tensor::Borrow(DType dtype, Shape shape, std::shared_ptr<const void> owner, const void* data,
                      const std::string& what) {
  Tensor t;
  t.dtype_ = dtype;
  t.shape_ = std::move(shape);
  t.numel_ = CheckedNumElements(t.shape_, DTypeStorageSize(dtype), what);
  if (dtype == DType::kString) throw Error(ErrorCode::kInternal, what + ": strings cannot be borrowed");
  t.owner_ = std::move(owner);
  t.data_ = data;
  t.owned_ = false;
  return t;
}

void Tensor::MakeOwned() {
  if (owned_ || dtype_ == DType::kString) return;
  const size_t bytes = nbytes();
  std::shared_ptr<uint8_t[]> buf(new uint8_t[bytes ? bytes : 1]());
  if (bytes) std::memcpy(buf.get(), data_, bytes);
  data_ = buf.get();
  owner_ = std::shared_ptr<const void>(buf, buf.get());
  owned_ = true;
}

}  // namespace onemodel
