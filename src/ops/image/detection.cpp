// Reference NonMaxSuppression, following ONNX's reference: per batch and class, the
// candidates above score_threshold in order of score (ties: lower box index first),
// greedily kept unless their IoU with a kept box exceeds iou_threshold. f32 geometry.
#include <algorithm>

#include "ops/ops.h"
#include "ops/util.h"

namespace onemodel::impl {
namespace ops {
namespace {

bool Suppress(const float* a, const float* b, bool center, float iou_threshold) {
  float ax0, ax1, ay0, ay1, bx0, bx1, by0, by1;
  if (center) {
    const float aw = a[2] / 2, ah = a[3] / 2, bw = b[2] / 2, bh = b[3] / 2;
    ax0 = a[0] - aw;
    ax1 = a[0] + aw;
    ay0 = a[1] - ah;
    ay1 = a[1] + ah;
    bx0 = b[0] - bw;
    bx1 = b[0] + bw;
    by0 = b[1] - bh;
    by1 = b[1] + bh;
  } else {
    ay0 = std::min(a[0], a[2]);
    ay1 = std::max(a[0], a[2]);
    ax0 = std::min(a[1], a[3]);
    ax1 = std::max(a[1], a[3]);
    by0 = std::min(b[0], b[2]);
    by1 = std::max(b[0], b[2]);
    bx0 = std::min(b[1], b[3]);
    bx1 = std::max(b[1], b[3]);
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
  if (tb.rank() != 3 || tb.shape()[2] != 4 || ts.rank() != 3)
    throw ctx.Fail(ErrorCode::kShapeMismatch, "boxes must be [B, S, 4], scores [B, C, S]");
  const auto boxes = ToF32(ctx, tb), scores = ToF32(ctx, ts);
  const int64_t B = tb.shape()[0], S = tb.shape()[1], C = ts.shape()[1];
  if (ts.shape()[0] != B || ts.shape()[2] != S)
    throw ctx.Fail(ErrorCode::kShapeMismatch, "scores must be [B, C, S] for boxes [B, S, 4]");
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
      for (int64_t i = 0; i < S; ++i)
        if (!has_score || sc[i] > score_th) cand.push_back(i);
      std::stable_sort(cand.begin(), cand.end(), [&](int64_t x, int64_t y) { return sc[x] > sc[y]; });
      std::vector<int64_t> kept;
      for (int64_t i : cand) {
        if (int64_t(kept.size()) >= max_out) break;
        bool ok = true;
        for (int64_t k : kept) {
          if (Suppress(boxes.data() + (b * S + i) * 4, boxes.data() + (b * S + k) * 4, center, iou)) {
            ok = false;
            break;
          }
        }
        if (ok) {
          kept.push_back(i);
          sel.push_back(b);
          sel.push_back(c);
          sel.push_back(i);
        }
      }
    }
  Tensor& y = ctx.out(0, DType::kInt64, {int64_t(sel.size() / 3), 3});
  std::copy(sel.begin(), sel.end(), y.mutable_data<int64_t>());
}

// RoiAlign, following ONNX's reference in binary64: per bin, a grid of bilinear samples
// averaged (avg) or maximised (max, over the weighted corner values as the reference
// does), rounded once to the output type.
void RoiAlign(OpContext& ctx) {
  const Tensor& x = ctx.in(0);
  const Tensor& rois = ctx.in(1);
  const auto bidx = ReadInts(ctx, ctx.in(2));
  const bool half = ctx.attr_s("coordinate_transformation_mode",
                               ctx.opset >= 16 ? "half_pixel" : "output_half_pixel") == "half_pixel";
  const bool avg = ctx.attr_s("mode", "avg") == "avg";
  const int64_t PH = ctx.attr_i("output_height", 1), PW = ctx.attr_i("output_width", 1);
  const double sampling = ctx.attr_f("sampling_ratio", 0.0f), scale = ctx.attr_f("spatial_scale", 1.0f);
  if (x.rank() != 4 || rois.rank() != 2 || rois.shape()[1] != 4)
    throw ctx.Fail(ErrorCode::kShapeMismatch, "X must be 4-D and rois [R, 4]");
  const int64_t C = x.shape()[1], H = x.shape()[2], W = x.shape()[3], R = rois.shape()[0];
  if (int64_t(bidx.size()) != R) throw ctx.Fail(ErrorCode::kShapeMismatch, "batch_indices must hold one index per roi");
  for (int64_t b : bidx)
    if (b < 0 || b >= x.shape()[0]) throw ctx.Fail(ErrorCode::kOutOfRange, "a batch index is outside [0, N)");
  if (PH <= 0 || PW <= 0) throw ctx.Fail(ErrorCode::kInvalidArgument, "output_height and output_width must be > 0");
  if (R > 0 && (H <= 0 || W <= 0)) throw ctx.Fail(ErrorCode::kShapeMismatch, "X's height and width must be > 0");
  const auto xv = ToF32(ctx, x);
  const auto rv = ToF32(ctx, rois);
  Tensor& y = ctx.out(0, x.dtype(), {R, C, PH, PW});
  for (int64_t n = 0; n < R; ++n) {
    const double off = half ? 0.5 : 0.0;
    const double sw = double(rv[size_t(n * 4)]) * scale - off, sh = double(rv[size_t(n * 4 + 1)]) * scale - off;
    const double ew = double(rv[size_t(n * 4 + 2)]) * scale - off, eh = double(rv[size_t(n * 4 + 3)]) * scale - off;
    double rw = ew - sw, rh = eh - sh;
    if (!half) {
      rw = rw < 1.0 ? 1.0 : rw;
      rh = rh < 1.0 ? 1.0 : rh;
    }
    const double bh = rh / double(PH), bw = rw / double(PW);
    auto ceil_pos = [](double v) {
      const int64_t t = int64_t(v);
      return double(t) < v ? t + 1 : t;
    };
    const int64_t gh = sampling > 0 ? int64_t(sampling) : ceil_pos(rh / double(PH));
    const int64_t gw = sampling > 0 ? int64_t(sampling) : ceil_pos(rw / double(PW));
    const double count = double(std::max<int64_t>(gh * gw, 1));
    const int64_t b = bidx[size_t(n)];
    for (int64_t c = 0; c < C; ++c) {
      const float* img = xv.data() + (b * C + c) * H * W;
      for (int64_t ph = 0; ph < PH; ++ph)
        for (int64_t pw = 0; pw < PW; ++pw) {
          double out = 0.0;
          bool first = true;
          for (int64_t iy = 0; iy < gh; ++iy)
            for (int64_t ix = 0; ix < gw; ++ix) {
              double yy = sh + double(ph) * bh + (double(iy) + 0.5) * bh / double(gh);
              double xx = sw + double(pw) * bw + (double(ix) + 0.5) * bw / double(gw);
              double w1 = 0, w2 = 0, w3 = 0, w4 = 0;
              int64_t p1 = 0, p2 = 0, p3 = 0, p4 = 0;
              if (!(yy < -1.0 || yy > double(H) || xx < -1.0 || xx > double(W))) {
                yy = yy < 0 ? 0 : yy;
                xx = xx < 0 ? 0 : xx;
                int64_t yl = int64_t(yy), xl = int64_t(xx), yh2, xh2;
                if (yl >= H - 1) {
                  yh2 = yl = H - 1;
                  yy = double(yl);
                } else {
                  yh2 = yl + 1;
                }
                if (xl >= W - 1) {
                  xh2 = xl = W - 1;
                  xx = double(xl);
                } else {
                  xh2 = xl + 1;
                }
                const double ly = yy - double(yl), lx = xx - double(xl), hy = 1.0 - ly, hx = 1.0 - lx;
                w1 = hy * hx;
                w2 = hy * lx;
                w3 = ly * hx;
                w4 = ly * lx;
                p1 = yl * W + xl;
                p2 = yl * W + xh2;
                p3 = yh2 * W + xl;
                p4 = yh2 * W + xh2;
              }
              if (avg) {
                out += w1 * img[p1] + w2 * img[p2] + w3 * img[p3] + w4 * img[p4];
              } else {
                double v = w1 * img[p1];
                v = std::max(v, w2 * double(img[p2]));
                v = std::max(v, w3 * double(img[p3]));
                v = std::max(v, w4 * double(img[p4]));
                out = first ? v : std::max(out, v);
                first = false;
              }
            }
          if (avg) out /= count;
          StoreF32(y, ((n * C + c) * PH + ph) * PW + pw, float(out));
        }
    }
  }
}

}  // namespace ops
}  // namespace onemodel::impl
