// Reference-kernel helpers (see util.h).
#include "ops/util.h"

#include <algorithm>

#include "core/per_thread.h"

namespace onemodel::impl {
namespace ops {

Shape BroadcastShapes(const OpContext& ctx, std::initializer_list<Shape> shapes) {
  size_t rank = 0;
  for (const Shape& s : shapes) rank = std::max(rank, s.size());
  Shape out(rank, 1);
  for (const Shape& s : shapes) {
    for (size_t k = 0; k < s.size(); ++k) {
      const size_t o = rank - s.size() + k;
      const int64_t d = s[k];
      if (d == out[o] || d == 1) continue;
      if (out[o] == 1) {
        out[o] = d;
        continue;
      }
      std::string all;
      for (const Shape& t : shapes) all += (all.empty() ? "" : " and ") + ShapeToString(t);
      throw ctx.Fail(ErrorCode::kShapeMismatch, "shapes " + all + " cannot be broadcast together");
    }
  }
  return out;
}

namespace {
constexpr size_t kKeptIndexEntries = size_t(1) << 20;
std::vector<std::vector<int64_t>>& SpareIndexVectors() {
  auto& spare = ONEMODEL_PER_THREAD(std::vector<std::vector<int64_t>>);
  return spare;
}
std::vector<int64_t> TakeIndexVector() {
  auto& spare = SpareIndexVectors();
  if (spare.empty()) return {};
  std::vector<int64_t> v = std::move(spare.back());
  spare.pop_back();
  return v;
}
void GiveIndexVector(std::vector<int64_t>&& v) {
  if (v.capacity() == 0 || v.capacity() > kKeptIndexEntries) return;
  auto& spare = SpareIndexVectors();
  if (spare.size() >= 16) return;
  v.clear();
  spare.push_back(std::move(v));
}
}  // namespace

IndexTable::IndexTable() : v_(TakeIndexVector()) {}
IndexTable::IndexTable(size_t n) : v_(TakeIndexVector()) { v_.resize(n); }
IndexTable& IndexTable::operator=(IndexTable&& o) noexcept {
  if (this != &o) {
    GiveIndexVector(std::move(v_));
    v_ = std::move(o.v_);
  }
  return *this;
}
IndexTable::~IndexTable() { GiveIndexVector(std::move(v_)); }

bool Broadcasts(const Shape& in, const Shape& out) {
  bool fits = in.size() <= out.size();
  for (size_t k = 0; fits && k < in.size(); ++k) fits = in[k] == 1 || in[k] == out[out.size() - in.size() + k];
  return fits;
}

IndexTable BroadcastIndex(const Shape& in, const Shape& out) {
  const size_t rank = out.size();
  if (!Broadcasts(in, out)) {
    throw Error(ErrorCode::kShapeMismatch,
                "shape " + ShapeToString(in) + " does not broadcast to " + ShapeToString(out));
  }
  int64_t total = 1;
  for (int64_t d : out) total *= d;
  IndexTable idx(static_cast<size_t>(total));
  // Strides of `in` aligned to the right of `out`, 0 where broadcast.
  Shape stride(rank, 0);
  int64_t s = 1;
  for (size_t k = in.size(); k-- > 0;) {
    const size_t o = rank - in.size() + k;
    stride[o] = in[k] == 1 ? 0 : s;
    s *= in[k];
  }
  Shape pos(rank, 0);
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

int64_t NormAxis(const OpContext& ctx, int64_t axis, int64_t rank, bool inclusive) {
  // inclusive: axes in [-rank, rank] (Flatten, Unsqueeze-like positions); negative
  // values count from the end of the input's rank.
  const int64_t lo = -rank, hi = inclusive ? rank : rank - 1;
  if (axis < lo || axis > hi) {
    throw ctx.Fail(ErrorCode::kInvalidArgument,
                   "axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
  }
  return axis < 0 ? axis + rank : axis;
}

Shape ReadInts(const OpContext& ctx, const Tensor& t) {
  Shape v(static_cast<size_t>(t.numel()));
  if (t.dtype() == DType::kInt64) {
    for (int64_t i = 0; i < t.numel(); ++i) v[size_t(i)] = t.data<int64_t>()[i];
  } else if (t.dtype() == DType::kInt32) {
    for (int64_t i = 0; i < t.numel(); ++i) v[size_t(i)] = t.data<int32_t>()[i];
  } else {
    throw ctx.Fail(ErrorCode::kTypeMismatch, "expected an int64 or int32 tensor, got " + DTypeName(t.dtype()));
  }
  return v;
}

std::vector<float> ToF32(const OpContext& ctx, const Tensor& t, bool allow_bytes) {
  std::vector<float> v(static_cast<size_t>(t.numel()));
  const bool ok = DispatchNumeric(t.dtype(), [&]<class T>() {
    if constexpr (std::is_same_v<T, int8_t> || std::is_same_v<T, uint8_t>) {
      if (!allow_bytes)
        throw ctx.Fail(ErrorCode::kTypeMismatch, "expected float, float16 or bfloat16, got " + DTypeName(t.dtype()));
      for (int64_t i = 0; i < t.numel(); ++i) v[size_t(i)] = float(t.data<T>()[i]);
    } else if constexpr (!kIsFloat<T> || std::is_same_v<T, double>) {
      throw ctx.Fail(ErrorCode::kTypeMismatch, "expected float, float16 or bfloat16, got " + DTypeName(t.dtype()));
    } else {
      for (int64_t i = 0; i < t.numel(); ++i) v[size_t(i)] = float(Widen(t.data<T>()[i]));
    }
  });
  if (!ok) throw ctx.Fail(ErrorCode::kTypeMismatch, "unsupported element type " + DTypeName(t.dtype()));
  return v;
}

void StoreF32(Tensor& t, int64_t i, float v) {
  switch (t.dtype()) {
    case DType::kFloat: t.mutable_data<float>()[i] = v; break;
    case DType::kFloat16: t.mutable_data<uint16_t>()[i] = F32ToHalf(v); break;
    case DType::kBFloat16: t.mutable_data<uint16_t>()[i] = F32ToBF16(v); break;
    case DType::kDouble: t.mutable_data<double>()[i] = v; break;
    // Out of range (an empty pooling window's -inf, ...) saturates and NaN is 0: a
    // defined result where C++'s conversion is undefined.
    case DType::kUInt8:
      t.mutable_data<uint8_t>()[i] = uint8_t(v != v ? 0.0f : v < 0.0f ? 0.0f : v > 255.0f ? 255.0f : v);
      break;
    case DType::kInt8:
      t.mutable_data<int8_t>()[i] = int8_t(v != v ? 0.0f : v < -128.0f ? -128.0f : v > 127.0f ? 127.0f : v);
      break;
    default: break;
  }
}

Tensor TransposedF32(const float* src, int64_t rows, int64_t cols) {
  Tensor t = Tensor::Uninitialized(DType::kFloat, Shape{cols, rows}, "transposed weight");
  float* dst = t.mutable_data<float>();
  // 32 x 32 blocks keep both sides in cache.
  for (int64_t r0 = 0; r0 < rows; r0 += 32)
    for (int64_t c0 = 0; c0 < cols; c0 += 32)
      for (int64_t r = r0; r < std::min(rows, r0 + 32); ++r)
        for (int64_t c = c0; c < std::min(cols, c0 + 32); ++c) dst[c * rows + r] = src[r * cols + c];
  return t;
}

bool ConvertToFloat(const Tensor& x, int64_t i0, int64_t len, float* dst) {
  auto run = [&](auto tag) {
    using T = decltype(tag);
    const T* in = x.data<T>() + i0;
    for (int64_t j = 0; j < len; ++j) dst[j] = float(in[j]);
    return true;
  };
  switch (x.dtype()) {
    case DType::kFloat: return run(float{});
    case DType::kBool: {
      const uint8_t* in = x.data<uint8_t>() + i0;
      for (int64_t j = 0; j < len; ++j) dst[j] = in[j] ? 1.0f : 0.0f;
      return true;
    }
    case DType::kInt8: return run(int8_t{});
    case DType::kUInt8: return run(uint8_t{});
    case DType::kInt16: return run(int16_t{});
    case DType::kUInt16: return run(uint16_t{});
    case DType::kInt32: return run(int32_t{});
    case DType::kInt64: return run(int64_t{});
    default: return false;
  }
}

}  // namespace ops
}  // namespace onemodel::impl
