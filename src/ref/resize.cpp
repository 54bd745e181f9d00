// The reference Resize (see resize.h): the coordinate tables and the nested binary64
// sums, plain loops in program order.
#include "ref/resize.h"

#include <functional>

#include "core/limits.h"
#include "core/tensor.h"
#include "ref/math.h"

namespace onemodel::impl {
namespace ref {
namespace {

double FloorD(double x) {
  const double t = double(int64_t(x));  // |x| < 2^63 here
  return x < t ? t - 1.0 : t;
}

std::vector<double> Coeffs(const ResizeParams& p, double ratio, double scale) {
  const double A = p.cubic_a;
  if (p.mode == ResizeMode::kNearest) {
    if (ratio == 1.0) return {0, 1};
    if (p.nearest == ResizeNearest::kRoundPreferFloor) return {double(ratio <= 0.5), double(ratio > 0.5)};
    if (p.nearest == ResizeNearest::kRoundPreferCeil) return {double(ratio < 0.5), double(ratio >= 0.5)};
    if (p.nearest == ResizeNearest::kFloor) return {1, 0};
    return {0, 1};
  }
  if (p.mode == ResizeMode::kLinear) {
    if (!p.antialias || scale >= 1.0) return {1 - ratio, ratio};
    const double s = scale;
    const int64_t start = int64_t(FloorD(-1 / s) + 1);
    const int64_t footprint = 2 - 2 * start;
    std::vector<double> c;
    double sum = 0;
    for (int64_t i = start; i < start + footprint; ++i) {
      double a = (double(i) - ratio) * s;
      a = a < 0 ? -a : a;
      double v = 1 - a;
      v = v < 0 ? 0 : v > 1 ? 1 : v;
      c.push_back(v);
      sum += v;
    }
    for (double& v : c) v /= sum;
    return c;
  }
  // cubic
  if (!p.antialias || scale >= 1.0) {
    const double r1 = ratio + 1, q = 1 - ratio, q1 = q + 1;
    return {((A * r1 - 5 * A) * r1 + 8 * A) * r1 - 4 * A, ((A + 2) * ratio - (A + 3)) * ratio * ratio + 1,
            ((A + 2) * q - (A + 3)) * q * q + 1, ((A * q1 - 5 * A) * q1 + 8 * A) * q1 - 4 * A};
  }
  const double s = scale;
  auto f = [&](double x) {
    x = x < 0 ? -x : x;
    const double x2 = x * x, x3 = x * x2;
    if (x <= 1) return (A + 2) * x3 - (A + 3) * x2 + 1;
    if (x < 2) return A * x3 - 5 * A * x2 + 8 * A * x - 4 * A;
    return 0.0;
  };
  const int64_t i0 = int64_t(FloorD(-2 / s) + 1), i1 = 2 - i0;
  std::vector<double> c;
  double sum = 0;
  for (int64_t i = i0; i < i1; ++i) {
    const double v = f(s * (double(i) - ratio));
    c.push_back(v);
    sum += v;
  }
  for (double& v : c) v /= sum;
  return c;
}

// Original coordinate of output index o along one axis; sets *extrapolate for
// tf_crop_and_resize positions outside the input.
double Original(const ResizeParams& p, double o, double scale, int64_t in, int64_t out_int, double roi_s, double roi_e,
                bool* extrapolate) {
  const double out_w = scale * double(in);
  *extrapolate = false;
  if (p.coord == ResizeCoord::kAlignCorners) return out_w == 1 ? 0.0 : o * double(in - 1) / (out_w - 1);
  if (p.coord == ResizeCoord::kAsymmetric) return o / scale;
  if (p.coord == ResizeCoord::kTfCropAndResize) {
    double x = out_w == 1 ? (roi_e - roi_s) * double(in - 1) / 2 : o * (roi_e - roi_s) * double(in - 1) / (out_w - 1);
    x += roi_s * double(in - 1);
    *extrapolate = x < 0 || x > double(in - 1);
    return x;
  }
  if (p.coord == ResizeCoord::kPytorchHalfPixel) return out_w == 1 ? -0.5 : (o + 0.5) / scale - 0.5;
  if (p.coord == ResizeCoord::kHalfPixelSymmetric) {
    const double adjustment = double(out_int) / out_w;
    const double center = double(in) / 2;
    return center * (1 - adjustment) + (o + 0.5) / scale - 0.5;
  }
  return (o + 0.5) / scale - 0.5;  // half_pixel
}

}  // namespace

void MakeResizeTaps(ResizeParams* p, size_t elem_size) {
  const Shape& xs = p->x_shape;
  const Shape& out_shape = p->out_shape;
  const int64_t r = int64_t(xs.size());
  const std::vector<double>& roi = p->roi;
  std::vector<int64_t>& st = p->st;
  st.assign(static_cast<size_t>(r), 1);
  for (int64_t k = r - 1; k > 0; --k) st[size_t(k - 1)] = st[size_t(k)] * xs[size_t(k)];
  std::vector<std::vector<ResizeTaps>>& taps = p->taps;
  taps.assign(static_cast<size_t>(r), {});
  // The output's size is checked (and limited) before any table: then each axis's table
  // is at most the output's element count long, and an empty output needs none (one axis
  // of 0 beside one of 2^40 made a table of 2^40 taps).
  const int64_t total = CheckedNumElements(out_shape, elem_size, "the resized output");
  const RunControl* control = ThreadRunControl();  // a table of millions of taps stops with its run
  uint32_t& polls = ThreadPollCount();
  for (int64_t a = 0; a < r; ++a) {
    const int64_t in = xs[size_t(a)], on = total == 0 ? 0 : out_shape[size_t(a)];
    const double sc = p->scales[size_t(a)];
    for (int64_t o = 0; o < on; ++o) {
      PollStop(control, polls);
      ResizeTaps t;
      const double xo = Original(*p, double(o), sc, in, on, roi.empty() ? 0 : roi[size_t(a)],
                                 roi.empty() ? 1 : roi[size_t(a + r)], &t.extrapolate);
      const double fl = FloorD(xo);
      const bool integral = xo == fl;
      const double ratio = integral ? 1.0 : xo - fl;
      t.w = Coeffs(*p, ratio, sc);
      const int64_t n = int64_t(t.w.size());
      const int64_t start = (integral ? int64_t(fl) : int64_t(fl) + 1) - n / 2;
      double sum = 0;
      for (int64_t k = 0; k < n; ++k) {
        const int64_t i = start + k;
        if (p->exclude_outside && (i < 0 || i >= in)) t.w[size_t(k)] = 0;
        sum += t.w[size_t(k)];
        t.idx.push_back(i < 0 ? 0 : i >= in ? in - 1 : i);
      }
      if (p->exclude_outside && sum != 0)
        for (double& w : t.w) w /= sum;
      taps[size_t(a)].push_back(t);
    }
  }
}

void ResizeF64(const ResizeParams& p, const double* x, FunctionRef<void(int64_t, double)> store) {
  const int64_t r = int64_t(p.x_shape.size());
  const Shape& out_shape = p.out_shape;
  const std::vector<int64_t>& st = p.st;
  const std::vector<std::vector<ResizeTaps>>& taps = p.taps;
  int64_t total = 1;
  for (int64_t d : out_shape) total *= d;  // checked by MakeResizeTaps
  if (total == 0) return;                  // the tables are empty too
  std::vector<int64_t> pos(static_cast<size_t>(r), 0);
  // value(a, base): interpolation over axes [a, r) at the chosen output position.
  std::function<double(int64_t, int64_t)> value = [&](int64_t a, int64_t base) -> double {
    if (a == r) return x[size_t(base)];
    const ResizeTaps& t = taps[size_t(a)][size_t(pos[size_t(a)])];
    if (t.extrapolate) return p.extrapolation;
    double acc = 0;
    for (size_t k = 0; k < t.w.size(); ++k) acc += t.w[k] * value(a + 1, base + t.idx[k] * st[size_t(a)]);
    return acc;
  };
  for (int64_t o = 0; o < total; ++o) {
    store(o, value(0, 0));
    for (int64_t k = r - 1; k >= 0; --k) {
      if (++pos[size_t(k)] < out_shape[size_t(k)]) break;
      pos[size_t(k)] = 0;
    }
  }
}

double ResizeIntegerOutput(double v, double lo, double hi) {
  const double rv = math::RoundEvenD(v);
  return rv < lo ? lo : rv > hi ? hi : rv;
}

}  // namespace ref
}  // namespace onemodel::impl
