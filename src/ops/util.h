// Helpers shared by reference kernels: element-type dispatch, broadcasting, axes.
#pragma once

#include <cstdint>
#include <limits>
#include <initializer_list>
#include <cstring>
#include <vector>

#include "core/compute.h"
#include "core/minifloat.h"
#include "ops/op_context.h"
#include "ref/cast.h"
#include "ref/data_movement.h"

namespace onemodel::impl {
namespace ops {

// Cast's float -> integer conversion (exact-contract section 5): truncated toward zero,
// NaN -> 0, saturated to T's range (the definition: ref/cast.h).
using ref::FloatToIntSat;

// A binary64 result as compute type C: floats round once; integers by FloatToIntSat.
template <class C>
inline C FromDouble(double v) {
  if constexpr (std::is_floating_point_v<C>)
    return C(v);
  else if constexpr (std::is_same_v<C, bool>)
    return v != 0.0;
  else
    return FloatToIntSat<C>(v);
}

// Numpy-style multidirectional broadcasting of shapes; throws kShapeMismatch.
Shape BroadcastShapes(const OpContext& ctx, std::initializer_list<Shape> shapes);
// A table of int64 indices whose storage comes from, and returns to, a list kept by the
// calling thread, so that the kernels' index tables take nothing from the heap once a
// run has been seen (tables over 1M entries are freed instead of kept).
class IndexTable {
 public:
  IndexTable();
  explicit IndexTable(size_t n);
  IndexTable(IndexTable&& o) noexcept : v_(std::move(o.v_)) {}
  IndexTable& operator=(IndexTable&& o) noexcept;
  IndexTable(const IndexTable&) = delete;
  IndexTable& operator=(const IndexTable&) = delete;
  ~IndexTable();
  int64_t operator[](size_t i) const { return v_[i]; }
  int64_t& operator[](size_t i) { return v_[i]; }
  size_t size() const { return v_.size(); }
  bool empty() const { return v_.empty(); }
  const int64_t* data() const { return v_.data(); }
  int64_t* data() { return v_.data(); }

 private:
  std::vector<int64_t> v_;
};
// For each output index (row-major), the flat index into an input of shape `in`
// broadcast to `out`. Returned as a table (ref kernels favour clarity over speed).
// Whether `in` broadcasts to `out` (numpy rules, `in` aligned right); BroadcastIndex
// throws kShapeMismatch when it does not.
bool Broadcasts(const Shape& in, const Shape& out);
IndexTable BroadcastIndex(const Shape& in, const Shape& out);
// Normalises an axis in [-rank, rank) (or [-rank-1, rank] with `inclusive`).
int64_t NormAxis(const OpContext& ctx, int64_t axis, int64_t rank, bool inclusive = false);
// Reads an int64/int32 1-D tensor as int64 values.
// Small lists (up to Shape::kInline values) take nothing from the heap.
Shape ReadInts(const OpContext& ctx, const Tensor& t);

// Elements [i0, i0 + len) of x converted to float into dst by C++'s conversion, which
// rounds to nearest even once, as ref::Cast does from the magnitude: bool (0 or 1), int8,
// uint8, int16, uint16, int32, int64 or float (copied). False, nothing written, for other
// types. Cast's int-to-float row and the elementwise chains' Cast steps.
bool ConvertToFloat(const Tensor& x, int64_t i0, int64_t len, float* dst);

// Reads a float, float16 or bfloat16 tensor (and int8/uint8 when allow_bytes, exactly)
// as f32 values; kTypeMismatch naming the node otherwise.
std::vector<float> ToF32(const OpContext& ctx, const Tensor& t, bool allow_bytes = false);
// A float tensor's values in place, or a float16/bfloat16 (int8/uint8 when allow_bytes)
// tensor's converted once, as ToF32. Lives no longer than the tensor.
class F32View {
 public:
  F32View(const OpContext& ctx, const Tensor& t, bool allow_bytes = false) : n_(size_t(t.numel())) {
    if (t.dtype() == DType::kFloat) {
      p_ = t.data<float>();
    } else {
      own_ = ToF32(ctx, t, allow_bytes);
      p_ = own_.data();
    }
  }
  const float* data() const { return p_; }
  size_t size() const { return n_; }
  bool empty() const { return n_ == 0; }
  float operator[](size_t i) const { return p_[i]; }

 private:
  std::vector<float> own_;
  const float* p_ = nullptr;
  size_t n_ = 0;
};
// Writes v into element i of a float, float16, bfloat16, double, int8 or uint8 tensor
// (narrow types round once; int8/uint8 take values that are already integers).
void StoreF32(Tensor& t, int64_t i, float v);
// y[m, c] = y[m, c] + bias[c] for the M x N row-major y (a column bias after the full sums).
inline void AddColumnBias(float* y, int64_t M, int64_t N, const float* bias) {
  for (int64_t m = 0; m < M; ++m)
    for (int64_t c = 0; c < N; ++c) y[m * N + c] = y[m * N + c] + bias[c];
}

// A reference kernel's f32 output for tensor t (null: none): t's own data when t is float,
// else a zeroed temporary that Store() rounds into t, each value once (StoreF32), as
// storing it directly would.
class F32Out {
 public:
  explicit F32Out(Tensor* t) : t_(t) {
    if (!t) return;
    if (t->dtype() == DType::kFloat) {
      p_ = t->mutable_data<float>();
    } else {
      own_.assign(size_t(t->numel()), 0.0f);
      p_ = own_.data();
    }
  }
  float* data() const { return p_; }
  void Store() const {
    for (size_t i = 0; i < own_.size(); ++i) StoreF32(*t_, int64_t(i), own_[i]);
  }

 private:
  Tensor* t_;
  std::vector<float> own_;
  float* p_ = nullptr;
};

// The [cols, rows] float tensor holding the transpose of the row-major rows x cols
// matrix at src (a weight laid out for a kernel; see OpContext::ConstDerived).
Tensor TransposedF32(const float* src, int64_t rows, int64_t cols);
// dst[di] = src[si] for any element type, strings included (ref/data_movement.h).
using ref::CopyElement;

}  // namespace ops
}  // namespace onemodel::impl
