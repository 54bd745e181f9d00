// Tensor storage and size checks.
#include "core/tensor.h"

#include <cstring>
#include <limits>

#include "core/error.h"
#include "core/minifloat.h"

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

double ElementAsDouble(const Tensor& t, int64_t i) {
  switch (t.dtype()) {
    case DType::kFloat: return t.data<float>()[i];
    case DType::kDouble: return t.data<double>()[i];
    case DType::kInt8: case DType::kInt4: case DType::kInt2: return t.data<int8_t>()[i];
    case DType::kUInt8: case DType::kUInt4: case DType::kUInt2: case DType::kBool: return t.data<uint8_t>()[i];
    case DType::kInt16: return t.data<int16_t>()[i];
    case DType::kUInt16: return t.data<uint16_t>()[i];
    case DType::kInt32: return t.data<int32_t>()[i];
    case DType::kUInt32: return t.data<uint32_t>()[i];
    case DType::kInt64: return double(t.data<int64_t>()[i]);
    case DType::kUInt64: return double(t.data<uint64_t>()[i]);
    case DType::kFloat8E8M0: return E8M0ToF32(t.data<uint8_t>()[i]);
    default:
      if (const MiniFormat* f = MiniFormatOf(t.dtype())) {
        return MiniToF32(DTypeStorageSize(t.dtype()) == 2 ? t.data<uint16_t>()[i] : t.data<uint8_t>()[i], *f);
      }
      return 0;
  }
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
