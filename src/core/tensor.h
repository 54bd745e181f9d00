// Tensors: an element type, a shape and a buffer (owned, or borrowed from a model's
// weights without a copy). Sub-byte types hold one element per byte in memory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/dtype.h"
#include "core/shape.h"

namespace onemodel::impl {

// Largest element count and byte size a tensor may have in this build (wasm32: what
// 4 GiB of memory can hold; 64-bit: 2^40 bytes). Larger requests are kOutOfRange.
size_t MaxTensorBytes();
// Bytes of the recycled tensor buffers (those of at least 64 KiB), in use or waiting for
// reuse: the activation memory a session's runs hold (ONEMODEL_PROFILE prints it).
size_t RecycledTensorBytes();
// Frees the recycled buffers that wait for reuse (none in use is touched).
void TrimRecycledTensorBuffers();

// A source of tensor buffers for the calling thread (runtime/memory_plan.h installs one
// while a session runs). Allocate returns a buffer of `bytes` (its contents unspecified)
// whose deleter returns it, or null to let the default (recycled buffers) serve.
class TensorAllocator {
 public:
  virtual ~TensorAllocator() = default;
  virtual std::shared_ptr<uint8_t> Allocate(size_t bytes) = 0;
};
// Installs `a` for the calling thread (null: none); returns the one it replaces. Thread
// pool chunks run with none, so which thread runs a chunk never changes a plan.
TensorAllocator* SetThreadTensorAllocator(TensorAllocator* a);
// A buffer of `bytes` from the calling thread's allocator, else a recycled one (zeroed
// when `zero`).
std::shared_ptr<uint8_t> AllocateTensorBuffer(size_t bytes, bool zero);
// A recycled buffer (what serves when no allocator is installed or it declines).
std::shared_ptr<uint8_t> RecycledTensorBuffer(size_t bytes, bool zero);

// Returns the element count of shape; throws kOutOfRange naming `what` for negative
// dimensions or a product that overflows or exceeds MaxTensorBytes() at elem_size.
int64_t CheckedNumElements(const Shape& shape, size_t elem_size, std::string_view what);

std::string ShapeToString(const Shape& shape);

class Tensor;
// Element i of a numeric tensor as a binary64: integers exactly (int64 and uint64 beyond
// 2^53 round), every float format decoded exactly. 0 for strings. kShapeMismatch when i is
// outside [0, numel()).
double ElementAsDouble(const Tensor& t, int64_t i);

class Tensor {
 public:
  Tensor() = default;
  // A zero-filled tensor (strings: empty strings).
  Tensor(DType dtype, Shape shape, const std::string& what = "tensor");
  // A tensor whose elements the caller will all write (its bytes are unspecified).
  static Tensor Uninitialized(DType dtype, Shape shape, const std::string& what = "tensor");
  // A view of bytes owned by `owner` (which keeps them alive); no copy is made.
  static Tensor Borrow(DType dtype, Shape shape, std::shared_ptr<const void> owner, const void* data,
                       const std::string& what = "tensor");

  DType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  int64_t rank() const { return int64_t(shape_.size()); }
  int64_t numel() const { return numel_; }
  size_t nbytes() const { return size_t(numel_) * DTypeStorageSize(dtype_); }
  bool empty() const { return dtype_ == DType::kUndefined; }

  template <typename T>
  const T* data() const {
    return static_cast<const T*>(data_);
  }
  // Mutable access; a borrowed tensor is copied first (copy on write).
  template <typename T>
  T* mutable_data() {
    MakeOwned();
    return static_cast<T*>(const_cast<void*>(data_));
  }
  const void* raw() const { return data_; }
  // True when this tensor owns its buffer and no other Tensor shares it (so writing it
  // changes nothing else: not a model's weights, not another value).
  bool SoleOwner() const { return owned_ && owner_.use_count() == 1; }
  // The object keeping the buffer alive (null for a borrowed view without an owner).
  const std::shared_ptr<const void>& owner() const { return owner_; }
  const std::vector<std::string>& strings() const { return *strings_; }
  std::vector<std::string>& mutable_strings() { return *strings_; }

 private:
  void MakeOwned();
  DType dtype_ = DType::kUndefined;
  Shape shape_;
  int64_t numel_ = 0;
  std::shared_ptr<const void> owner_;
  const void* data_ = nullptr;
  bool owned_ = false;
  std::shared_ptr<std::vector<std::string>> strings_;
};

}  // namespace onemodel::impl
