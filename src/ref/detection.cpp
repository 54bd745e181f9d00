// Reference NonMaxSuppression, following ONNX's reference: per batch and class, the
// candidates above score_threshold in order of score (ties: lower box index first),
// greedily kept unless their IoU with a kept box exceeds iou_threshold. f32 geometry.
#include <algorithm>

#include "ref/ops.h"
#include "ref/util.h"

namespace onemodel {
namespace ref {
namespace {

bool Suppress(const float* a, const float* b, bool center, float iou_threshold) {
  float ax0, ax1, ay0, ay1, bx0, bx1, by0, by1;
  if (center) {
    const float aw = a[2] / 2, ah = a[3] / 2, bw = b[2] / 2, bh = b[3] / 2;
    ax0 = a[0] - aw; ax1 = a[0] + aw; ay0 = a[1] - ah; ay1 = a[1] + ah;
    bx0 = b[0] - bw; bx1 = b[0] + bw; by0 = b[1] - bh; by1 = b[1] + bh;
  } else {
    ay0 = std::min(a[0], a[2]); ay1 = std::max(a[0], a[2]); ax0 = std::min(a[1], a[3]); ax1 = std::max(a[1], a[3]);
    by0 = std::min(b[0], b[2]); by1 = std::max(b[0], b[2]); bx0 = std::min(b[1], b[3]); bx1 = std::max(b[1], b[3]);
  }
  const float ix0 = std::max(ax0, bx0), ix1 = std::min(ax1, bx1);
  if (ix1 <= ix0) return false;
  const float iy0 = std::max(ay0, by0), iy1 = std::min(ay1, by1);
  if (iy1 <= iy0) return false;
  const float inter = (ix1 - ix0) * (iy1 - iy0);
  if (inter <= 0) return false;
  const float area_a = (ax1 - ax0) * (ay1 - ay0), area_b = (bx1 - bx0) * (by1 - by0);
  const float uni = area_a + area_b - inter;
  if (area_a <= 0 || area_b <= 0 || uni <= 0) return false;
  return inter / uni > iou_threshold;
}

}  // namespace

void NonMaxSuppression(OpContext& ctx) {
  const Tensor& tb = ctx.in(0);
  const Tensor& ts = ctx.in(1);
  if (tb.rank() != 3 || tb.shape()[2] != 4 || ts.rank() != 3) throw ctx.Fail(ErrorCode::kShapeMismatch, "boxes must be [B, S, 4], scores [B, C, S]");
  const auto boxes = ToF32(ctx, tb), scores = ToF32(ctx, ts);
  const int64_t B = tb.shape()[0], S = tb.shape()[1], C = ts.shape()[1];
  const int64_t max_out = ctx.has_input(2) && ctx.in(2).numel() ? std::max<int64_t>(0, ReadInts(ctx, ctx.in(2))[0]) : 0;
  const float iou = ctx.has_input(3) && ctx.in(3).numel() ? ToF32(ctx, ctx.in(3))[0] : 0.0f;
  const bool has_score = ctx.has_input(4) && ctx.in(4).numel();
  const float score_th = has_score ? ToF32(ctx, ctx.in(4))[0] : 0.0f;
  const bool center = ctx.attr_i("center_point_box", 0) != 0;
  std::vector<int64_t> sel;
  for (int64_t b = 0; b < B; ++b)
    for (int64_t c = 0; c < C; ++c) {
      const float* sc = scores.data() + (b * C + c) * S;
      std::vector<int64_t> cand;
      for (int64_t i = 0; i < S; ++i) if (!has_score || sc[i] > score_th) cand.push_back(i);
      std::stable_sort(cand.begin(), cand.end(), [&](int64_t x, int64_t y) { return sc[x] > sc[y]; });
      std::vector<int64_t> kept;
      for (int64_t i : cand) {
        if (int64_t(kept.size()) >= max_out) break;
        bool ok = true;
        for (int64_t k : kept) {
          if (Suppress(boxes.data() + (b * S + i) * 4, boxes.data() + (b * S + k) * 4, center, iou)) { ok = false; break; }
        }
        if (ok) { kept.push_back(i); sel.push_back(b); sel.push_back(c); sel.push_back(i); }
      }
    }
  Tensor& y = ctx.out(0, DType::kInt64, {int64_t(sel.size() / 3), 3});
  std::copy(sel.begin(), sel.end(), y.mutable_data<int64_t>());
}

}  // namespace ref
}  // namespace onemodel
