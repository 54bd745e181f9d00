// Reference-kernel helpers (see util.h).
#include "ref/util.h"

namespace onemodel {
namespace ref {

Shape BroadcastShapes(const OpContext& ctx, const std::vector<Shape>& shapes) {
  size_t rank = 0;
  for (const Shape& s : shapes) rank = std::max(rank, s.size());
  Shape out(rank, 1);
  for (const Shape& s : shapes) {
    for (size_t k = 0; k < s.size(); ++k) {
      const size_t o = rank - s.size() + k;
      const int64_t d = s[k];
      if (d == out[o] || d == 1) continue;
      if (out[o] == 1) { out[o] = d; continue; }
      std::string all;
      for (const Shape& t : shapes) all += (all.empty() ? "" : " and ") + ShapeToString(t);
      throw ctx.Fail(ErrorCode::kShapeMismatch, "shapes " + all + " cannot be broadcast together");
    }
  }
  return out;
}

std::vector<int64_t> BroadcastIndex(const Shape& in, const Shape& out) {
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
      if (++pos[k] < out[k]) { cur += stride[k]; break; }
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
    throw ctx.Fail(ErrorCode::kInvalidArgument, "axis " + std::to_string(axis) + " is out of range for rank " +
                                                    std::to_string(rank));
  }
  return axis < 0 ? axis + rank : axis;
}

std::vector<int64_t> ReadInts(const OpContext& ctx, const Tensor& t) {
  std::vector<int64_t> v(static_cast<size_t>(t.numel()));
  if (t.dtype() == DType::kInt64) {
    for (int64_t i = 0; i < t.numel(); ++i) v[size_t(i)] = t.data<int64_t>()[i];
  } else if (t.dtype() == DType::kInt32) {
    for (int64_t i = 0; i < t.numel(); ++i) v[size_t(i)] = t.data<int32_t>()[i];
  } else {
    throw ctx.Fail(ErrorCode::kTypeMismatch, "expected an int64 or int32 tensor, got " + DTypeName(t.dtype()));
  }
  return v;
}

}  // namespace ref
}  // namespace onemodel
