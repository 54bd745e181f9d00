// Tensor storage and size checks.
#include "core/tensor.h"

#include <cstring>
#include <iterator>
#include <limits>
#include <map>
#include <mutex>
#include <new>
#include <unordered_map>
#include <vector>

#include "core/error.h"
#include "core/limits.h"
#include "core/minifloat.h"
#include "core/scratch.h"

namespace onemodel::impl {
namespace {

// Tensor storage starts on a cache line (core/scratch.h: large malloc blocks begin 16
// bytes past a page, so the kernels' 512-bit loads of packed weights and of activations
// each straddled two lines).
uint8_t* NewBytes(size_t n) {
  if (n > size_t(-1) / 2) return nullptr;
  return static_cast<uint8_t*>(CacheLineAlloc(n ? n : 1, std::nothrow));
}
void DeleteBytes(uint8_t* p) { CacheLineFree(p); }

// Recycled tensor buffers: the steady state of the memory plan. A freed buffer of at
// least kMinBytes waits by its capacity, and the next tensor that fits it (at most half
// of it unused) takes it, so a model's runs after the first take no memory from the
// system (activation sizes repeat from run to run), and activations of different sizes
// share buffers, which keeps a run's working set near its peak of live tensors. At most kLimit bytes wait in the lists;
// beyond that, buffers are freed. The cache is never destroyed (tensors may outlive
// static destruction).
class BufferCache {
 public:
  static constexpr size_t kMinBytes = size_t(64) << 10;
  static constexpr size_t kLimit = sizeof(size_t) <= 4 ? size_t(256) << 20 : size_t(2) << 30;

  std::shared_ptr<uint8_t> Get(size_t bytes, bool zero) {
    uint8_t* p = nullptr;
    size_t cap = bytes;
    if (bytes >= kMinBytes) {
      // The smallest waiting buffer that holds `bytes` and is at most twice as large;
      // of equal ones the last freed (likely still in cache).
      std::lock_guard<std::mutex> lock(mu_);
      auto it = free_.lower_bound(bytes);
      if (it != free_.end() && it->first / 2 <= bytes) {
        it = std::prev(free_.upper_bound(it->first));
        p = it->second;
        cap = it->first;
        free_.erase(it);
        cached_ -= cap;
      }
    }
    if (!p) {
      p = NewBytes(bytes);
      if (!p) {
        Trim();  // the waiting buffers back to the system, then once more
        p = NewBytes(bytes);
      }
      if (!p)
        throw Error(ErrorCode::kOutOfMemory, "cannot allocate a tensor buffer of " + std::to_string(bytes) + " bytes");
      if (bytes >= kMinBytes) {
        std::lock_guard<std::mutex> lock(mu_);
        owned_ += cap;
      }
    }
    if (zero && bytes) std::memset(p, 0, bytes);
    if (bytes < kMinBytes) return std::shared_ptr<uint8_t>(p, [](uint8_t* q) { DeleteBytes(q); });
    return std::shared_ptr<uint8_t>(p, [this, cap](uint8_t* q) { Put(q, cap); });
  }

  void Trim() {
    std::multimap<size_t, uint8_t*> drop;
    {
      std::lock_guard<std::mutex> lock(mu_);
      drop.swap(free_);
      owned_ -= cached_;
      cached_ = 0;
    }
    for (auto& [cap, p] : drop) DeleteBytes(p);
  }

 private:
  void Put(uint8_t* p, size_t bytes) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (cached_ + bytes <= kLimit) {
        free_.emplace(bytes, p);
        cached_ += bytes;
        return;
      }
      owned_ -= bytes;
    }
    DeleteBytes(p);
  }
  std::mutex mu_;
  std::multimap<size_t, uint8_t*> free_;  // capacity -> buffer, equal ones in freeing order
  size_t cached_ = 0;
  size_t owned_ = 0;  // recyclable buffers in use or waiting

 public:
  size_t Owned() {
    std::lock_guard<std::mutex> lock(mu_);
    return owned_;
  }
};
BufferCache& Cache() {
  static BufferCache* cache = new BufferCache;
  return *cache;
}

thread_local TensorAllocator* tl_allocator = nullptr;

}  // namespace

size_t RecycledTensorBytes() { return Cache().Owned(); }
void TrimRecycledTensorBuffers() { Cache().Trim(); }

TensorAllocator* SetThreadTensorAllocator(TensorAllocator* a) {
  TensorAllocator* prev = tl_allocator;
  tl_allocator = a;
  return prev;
}

namespace {
// The buffer, counted in the thread's session budget while it lives (when one is set).
std::shared_ptr<uint8_t> Budgeted(std::shared_ptr<uint8_t> p, size_t bytes, const std::shared_ptr<MemoryBudget>& b) {
  return std::shared_ptr<uint8_t>(p.get(), [p, b, bytes](uint8_t*) mutable {
    b->live.fetch_sub(bytes, std::memory_order_relaxed);
    p.reset();
  });
}
}  // namespace

std::shared_ptr<uint8_t> AllocateTensorBuffer(size_t bytes, bool zero) {
  const std::shared_ptr<MemoryBudget>& budget = ThreadBudget();
  if (budget && budget->limit > 0 && bytes) {
    const uint64_t now = budget->live.fetch_add(bytes, std::memory_order_relaxed) + bytes;
    if (now > budget->limit) {
      budget->live.fetch_sub(bytes, std::memory_order_relaxed);
      throw Error(ErrorCode::kLimitExceeded,
                  "a tensor of " + std::to_string(bytes) + " bytes would bring the session to " + std::to_string(now) +
                      " bytes, over max_session_bytes (" + std::to_string(budget->limit) + ")");
    }
    try {
      std::shared_ptr<uint8_t> p;
      if (tl_allocator) p = tl_allocator->Allocate(bytes);
      if (p) {
        if (zero) std::memset(p.get(), 0, bytes);
      } else {
        p = Cache().Get(bytes, zero);
      }
      return Budgeted(std::move(p), bytes, budget);
    } catch (...) {
      budget->live.fetch_sub(bytes, std::memory_order_relaxed);
      throw;
    }
  }
  if (tl_allocator && bytes) {
    if (std::shared_ptr<uint8_t> p = tl_allocator->Allocate(bytes)) {
      if (zero) std::memset(p.get(), 0, bytes);
      return p;
    }
  }
  return Cache().Get(bytes, zero);
}

std::shared_ptr<uint8_t> RecycledTensorBuffer(size_t bytes, bool zero) { return Cache().Get(bytes, zero); }

size_t MaxTensorBytes() {
  if (sizeof(size_t) <= 4) return size_t(0xFFFFFFFFu);  // 32-bit (wasm32, i686): 4 GiB address space
  return size_t(uint64_t(1) << 40);
}

int64_t CheckedNumElements(const Shape& shape, size_t elem_size, std::string_view what) {
  int64_t n = 1;
  const Limits* limits = ThreadLimits();
  const uint64_t limit = MaxTensorBytes() / (elem_size ? elem_size : 1);
  for (int64_t d : shape) {
    if (d < 0)
      throw Error(ErrorCode::kOutOfRange, std::string(what) + ": negative dimension in shape " + ShapeToString(shape));
    if (d != 0 && uint64_t(n) > limit / uint64_t(d)) {
      throw Error(ErrorCode::kOutOfRange, std::string(what) + ": shape " + ShapeToString(shape) +
                                              " is too large (over " + std::to_string(MaxTensorBytes()) + " bytes)");
    }
    n *= d;
  }
  if (limits && limits->max_tensor_bytes > 0 && uint64_t(n) * (elem_size ? elem_size : 1) > limits->max_tensor_bytes) {
    throw Error(ErrorCode::kLimitExceeded, std::string(what) + ": shape " + ShapeToString(shape) + " is " +
                                               std::to_string(uint64_t(n) * elem_size) +
                                               " bytes, over max_tensor_bytes (" +
                                               std::to_string(limits->max_tensor_bytes) + ")");
  }
  return n;
}

void Shape::ThrowRankZero() {
  throw Error(ErrorCode::kShapeMismatch, "a rank-0 (scalar) tensor where a dimension is needed");
}

std::string ShapeToString(const Shape& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ',';
    s += std::to_string(shape[i]);
  }
  s += ']';
  return s;
}

Tensor::Tensor(DType dtype, Shape shape, const std::string& what) : dtype_(dtype), shape_(std::move(shape)) {
  if (!IsKnownDType(int32_t(dtype))) {
    throw Error(ErrorCode::kTypeMismatch, what + ": unknown element type " + std::to_string(int(dtype)));
  }
  numel_ = CheckedNumElements(shape_, DTypeStorageSize(dtype_), what);
  if (dtype_ == DType::kString) {
    strings_ = std::make_shared<std::vector<std::string>>(size_t(numel_));
    return;
  }
  std::shared_ptr<uint8_t> buf = AllocateTensorBuffer(nbytes(), true);
  data_ = buf.get();
  owner_ = std::shared_ptr<const void>(buf, buf.get());
  owned_ = true;
}

Tensor Tensor::Uninitialized(DType dtype, Shape shape, const std::string& what) {
  if (dtype == DType::kString) return Tensor(dtype, std::move(shape), what);
  Tensor t;
  if (!IsKnownDType(int32_t(dtype)))
    throw Error(ErrorCode::kTypeMismatch, what + ": unknown element type " + std::to_string(int(dtype)));
  t.dtype_ = dtype;
  t.shape_ = std::move(shape);
  t.numel_ = CheckedNumElements(t.shape_, DTypeStorageSize(dtype), what);
  std::shared_ptr<uint8_t> buf = AllocateTensorBuffer(t.nbytes(), false);
  t.data_ = buf.get();
  t.owner_ = std::shared_ptr<const void>(buf, buf.get());
  t.owned_ = true;
  return t;
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
  if (i < 0 || i >= t.numel())  // an operator reading a scalar input that is empty, or too short
    throw Error(ErrorCode::kShapeMismatch,
                "element " + std::to_string(i) + " of a tensor of " + std::to_string(t.numel()) + " elements was read");
  switch (t.dtype()) {
    case DType::kFloat: return t.data<float>()[i];
    case DType::kDouble: return t.data<double>()[i];
    case DType::kInt8:
    case DType::kInt4:
    case DType::kInt2: return t.data<int8_t>()[i];
    case DType::kUInt8:
    case DType::kUInt4:
    case DType::kUInt2:
    case DType::kBool: return t.data<uint8_t>()[i];
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
  std::shared_ptr<uint8_t> buf = AllocateTensorBuffer(bytes, false);
  if (bytes) std::memcpy(buf.get(), data_, bytes);
  data_ = buf.get();
  owner_ = std::shared_ptr<const void>(buf, buf.get());
  owned_ = true;
}

}  // namespace onemodel::impl
