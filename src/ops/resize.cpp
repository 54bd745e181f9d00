// Reference Resize (and Upsample), following ONNX's reference interpolation: separable,
// the last axes first, each 1-D step a dot product of coefficients with edge-padded
// neighbours, all in binary64, rounded once to the output type at the end.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>

#include "core/limits.h"
#include "ref/math.h"
#include "ops/ops.h"
#include "ops/algorithm.h"
#include "ops/resize.h"
#include "ops/parallel.h"
#include "ops/util.h"

namespace onemodel::impl {
namespace ops {
namespace {

struct Params {
  std::string mode = "nearest", coord = "half_pixel", nearest = "round_prefer_floor";
  double cubic_a = -0.75, extrapolation = 0.0;
  bool exclude_outside = false, antialias = false;
};

double FloorD(double x) {
  const double t = double(int64_t(x));  // |x| < 2^63 here
  return x < t ? t - 1.0 : t;
}

std::vector<double> Coeffs(const Params& p, double ratio, double scale) {
  const double A = p.cubic_a;
  if (p.mode == "nearest") {
    if (ratio == 1.0) return {0, 1};
    if (p.nearest == "round_prefer_floor") return {double(ratio <= 0.5), double(ratio > 0.5)};
    if (p.nearest == "round_prefer_ceil") return {double(ratio < 0.5), double(ratio >= 0.5)};
    if (p.nearest == "floor") return {1, 0};
    return {0, 1};
  }
  if (p.mode == "linear") {
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
double Original(const Params& p, double o, double scale, int64_t in, int64_t out_int, double roi_s, double roi_e,
                bool* extrapolate) {
  const double out_w = scale * double(in);
  *extrapolate = false;
  if (p.coord == "align_corners") return out_w == 1 ? 0.0 : o * double(in - 1) / (out_w - 1);
  if (p.coord == "asymmetric") return o / scale;
  if (p.coord == "tf_crop_and_resize") {
    double x = out_w == 1 ? (roi_e - roi_s) * double(in - 1) / 2 : o * (roi_e - roi_s) * double(in - 1) / (out_w - 1);
    x += roi_s * double(in - 1);
    *extrapolate = x < 0 || x > double(in - 1);
    return x;
  }
  if (p.coord == "pytorch_half_pixel") return out_w == 1 ? -0.5 : (o + 0.5) / scale - 0.5;
  if (p.coord == "half_pixel_symmetric") {
    const double adjustment = double(out_int) / out_w;
    const double center = double(in) / 2;
    return center * (1 - adjustment) + (o + 0.5) / scale - 0.5;
  }
  return (o + 0.5) / scale - 0.5;  // half_pixel
}

// Per axis and output index: neighbour indices (clamped) and coefficients.
struct Taps {
  std::vector<int64_t> idx;
  std::vector<double> w;
  bool extrapolate = false;
};

// What Resize and Upsample derive from their attributes, the input's shape and the
// values of their roi, scales and sizes inputs (kept byte for byte to recognise them),
// kept per node (OpContext::Prepared): the output shape and every axis's taps.
struct ResizePrep : NodeState {
  Shape x_shape;
  struct Held {
    bool present = false;
    DType dtype = DType::kUndefined;
    Shape shape;
    std::vector<uint8_t> bytes;
  };
  std::vector<Held> held;  // inputs 1.. as they were
  Params p;
  Shape out_shape;
  std::vector<int64_t> st;  // the input's strides
  std::vector<std::vector<Taps>> taps;
  // The fast paths' conditions on the taps (RunResize) and the nearest path's picks:
  // per axis and output index, the chosen element's offset.
  bool nearest_ok = false, separable_ok = false;
  std::vector<std::vector<int64_t>> pick;
};

// Whether inputs 1.. are the ones prep was made for.
bool SameHeldInputs(const OpContext& ctx, const ResizePrep& prep) {
  if (prep.held.size() + 1 != std::max<size_t>(ctx.num_inputs(), 1)) return false;
  for (size_t i = 0; i < prep.held.size(); ++i) {
    const ResizePrep::Held& h = prep.held[i];
    const bool present = ctx.has_input(i + 1) && ctx.inputs[i + 1]->is_tensor();
    if (present != h.present) return false;
    if (!present) continue;
    const Tensor& t = ctx.inputs[i + 1]->tensor;
    if (t.dtype() != h.dtype || t.shape() != h.shape || t.dtype() == DType::kString || t.nbytes() != h.bytes.size() ||
        (t.nbytes() && std::memcmp(t.raw(), h.bytes.data(), t.nbytes()) != 0))
      return false;
  }
  return true;
}

// The taps of every axis (and the input's strides) for an output shape.
void MakeTaps(const Tensor& x, const Params& p, const std::vector<double>& scales_in, const Shape& out_shape,
              const std::vector<double>& roi, ResizePrep* prep) {
  const int64_t r = x.rank();
  prep->p = p;
  prep->x_shape = x.shape();
  prep->out_shape = out_shape;
  std::vector<int64_t>& st = prep->st;
  st.assign(static_cast<size_t>(r), 1);
  for (int64_t k = r - 1; k > 0; --k) st[size_t(k - 1)] = st[size_t(k)] * x.shape()[size_t(k)];
  std::vector<std::vector<Taps>>& taps = prep->taps;
  taps.assign(static_cast<size_t>(r), {});
  // The output's size is checked (and limited) before any table: then each axis's table
  // is at most the output's element count long, and an empty output needs none (one axis
  // of 0 beside one of 2^40 made a table of 2^40 taps).
  const int64_t total = CheckedNumElements(out_shape, DTypeStorageSize(x.dtype()), "the resized output");
  const RunControl* control = ThreadRunControl();  // a table of millions of taps stops with its run
  uint32_t& polls = ThreadPollCount();
  for (int64_t a = 0; a < r; ++a) {
    const int64_t in = x.shape()[size_t(a)], on = total == 0 ? 0 : out_shape[size_t(a)];
    const double sc = scales_in[size_t(a)];
    for (int64_t o = 0; o < on; ++o) {
      PollStop(control, polls);
      Taps t;
      const double xo = Original(p, double(o), sc, in, on, roi.empty() ? 0 : roi[size_t(a)],
                                 roi.empty() ? 1 : roi[size_t(a + r)], &t.extrapolate);
      const double fl = FloorD(xo);
      const bool integral = xo == fl;
      const double ratio = integral ? 1.0 : xo - fl;
      t.w = Coeffs(p, ratio, sc);
      const int64_t n = int64_t(t.w.size());
      const int64_t start = (integral ? int64_t(fl) : int64_t(fl) + 1) - n / 2;
      double sum = 0;
      for (int64_t k = 0; k < n; ++k) {
        const int64_t i = start + k;
        if (p.exclude_outside && (i < 0 || i >= in)) t.w[size_t(k)] = 0;
        sum += t.w[size_t(k)];
        t.idx.push_back(i < 0 ? 0 : i >= in ? in - 1 : i);
      }
      if (p.exclude_outside && sum != 0)
        for (double& w : t.w) w /= sum;
      taps[size_t(a)].push_back(t);
    }
  }
  // Nearest: every axis's weights one 1 and zeros, no extrapolation.
  if (p.mode == "nearest") {
    bool ok = true;
    prep->pick.assign(static_cast<size_t>(r), {});
    for (int64_t a = 0; a < r && ok; ++a)
      for (const Taps& t : taps[size_t(a)]) {
        int64_t chosen = -1, ones = 0;
        for (size_t k = 0; k < t.w.size(); ++k) {
          if (t.w[k] == 1.0) {
            ++ones;
            chosen = t.idx[k];
          } else if (t.w[k] != 0.0)
            ok = false;
        }
        if (t.extrapolate || ones != 1) ok = false;
        prep->pick[size_t(a)].push_back(chosen * st[size_t(a)]);
      }
    prep->nearest_ok = ok && r >= 1;
  }
  // Separable: no extrapolation, every axis but the last two an identity.
  if (r >= 2 && p.mode != "nearest") {
    bool ok = true;
    for (int64_t a = 0; a < r && ok; ++a)
      for (int64_t o = 0; o < int64_t(taps[size_t(a)].size()) && ok; ++o) {  // none for an empty output
        const Taps& t = taps[size_t(a)][size_t(o)];
        ok = !t.extrapolate;
        if (a >= r - 2 || !ok) continue;
        ok = out_shape[size_t(a)] == x.shape()[size_t(a)];
        int64_t ones = 0;
        for (size_t k = 0; k < t.w.size() && ok; ++k) {
          if (t.w[k] == 1.0 && t.idx[k] == o)
            ++ones;
          else
            ok = t.w[k] == 0.0;
        }
        ok = ok && ones == 1;
      }
    prep->separable_ok = ok;
  }
}

}  // namespace

// The resize itself, from its prepared taps.
void RunResize(OpContext& ctx, const ResizePrep& prep) {
  const Tensor& x = ctx.in(0);
  const int64_t r = x.rank();
  const Params& p = prep.p;
  const Shape& out_shape = prep.out_shape;
  const std::vector<int64_t>& st = prep.st;
  const std::vector<std::vector<Taps>>& taps = prep.taps;
  Tensor& y = ctx.out_uninit(0, x.dtype(), out_shape);  // every element is written; none:
  if (y.numel() == 0) return;                           // the tables are empty too (MakeTaps)
  // Nearest-neighbour fast path (float, finite inputs, no extrapolation): one weight 1 per
  // axis and zeros, so the binary64 sums below are the chosen element plus zeros, -0 made
  // +0 (0 + -0 = +0); a non-finite input times a zero weight is NaN: the general path runs.
  const bool is_float = x.dtype() == DType::kFloat;
  const ResizeAlgo algo = ChooseAlgorithm(ctx, kAllResizeAlgos, ResizeAlgoName,
                                          is_float && prep.nearest_ok     ? ResizeAlgo::kNearest
                                          : is_float && prep.separable_ok ? ResizeAlgo::kSeparable
                                                                          : ResizeAlgo::kReference,
                                          [&](ResizeAlgo r) {
                                            return r == ResizeAlgo::kReference ||
                                                   (r == ResizeAlgo::kNearest && is_float && prep.nearest_ok) ||
                                                   (r == ResizeAlgo::kSeparable && is_float && prep.separable_ok);
                                          });
  if (algo == ResizeAlgo::kNearest) {
    bool ok = true;
    const std::vector<std::vector<int64_t>>& pick = prep.pick;
    const float* px = x.data<float>();
    for (int64_t i = 0; ok && i < x.numel(); ++i) ok = std::isfinite(px[i]);
    if (ok) {
      float* py = y.mutable_data<float>();
      const int64_t inner = r ? out_shape[size_t(r - 1)] : 1, rows = inner ? y.numel() / inner : 0;
      const std::vector<int64_t>& last = pick[size_t(r - 1)];
      ParallelFor(ctx, rows, 64, [&](int64_t b, int64_t e) {
        for (int64_t row = b; row < e; ++row) {
          int64_t base = 0, rest = row;
          for (int64_t a = r - 2; a >= 0; --a) {
            const int64_t o = rest % out_shape[size_t(a)];
            rest /= out_shape[size_t(a)];
            base += pick[size_t(a)][size_t(o)];
          }
          float* dst = py + row * inner;
          for (int64_t j = 0; j < inner; ++j) dst[j] = px[base + last[size_t(j)]] + 0.0f;
        }
      });
      return;
    }
  }
  // Separable fast path (float, every input finite, no extrapolation, rank >= 2) when
  // every axis but the last two is an identity (same size, each output's taps one weight
  // 1 at its own index and zeros): there the general sum below is +0 + 0 * x' + 1 * x''
  // with finite x', which is x'' (and +0 for a zero); the last two axes' sums start at +0,
  // so their result is never -0. So each output is, in binary64, the sum over the row
  // taps of w_h * (the sum over the column taps of w_w * x), each from +0 in tap order:
  // the very operations of the general path, without the identity axes' recursion.
  if (algo == ResizeAlgo::kSeparable) {
    bool ok = true;
    const float* px = x.data<float>();
    for (int64_t i = 0; ok && i < x.numel(); ++i) ok = std::isfinite(px[i]);
    if (ok) {
      const int64_t IH = x.shape()[size_t(r - 2)], IW = x.shape()[size_t(r - 1)];
      const int64_t OH = out_shape[size_t(r - 2)], OW = out_shape[size_t(r - 1)];
      const int64_t planes = OH * OW != 0 ? y.numel() / (OH * OW) : 0;
      const std::vector<Taps>& th = taps[size_t(r - 2)];
      const std::vector<Taps>& tw = taps[size_t(r - 1)];
      float* py = y.mutable_data<float>();
      ParallelFor(ctx, planes * OH, 16, [&](int64_t b, int64_t e) {
        for (int64_t row = b; row < e; ++row) {
          const int64_t plane = row / OH, oh = row % OH;
          const float* xp = px + plane * IH * IW;
          const Taps& h = th[size_t(oh)];
          float* dst = py + row * OW;
          for (int64_t ow = 0; ow < OW; ++ow) {
            const Taps& w = tw[size_t(ow)];
            double acc = 0;
            for (size_t kh = 0; kh < h.w.size(); ++kh) {
              const float* xr = xp + h.idx[kh] * IW;
              double accw = 0;
              for (size_t kw = 0; kw < w.w.size(); ++kw) accw += w.w[kw] * double(xr[w.idx[kw]]);
              acc += h.w[kh] * accw;
            }
            dst[ow] = float(acc);
          }
        }
      });
      return;
    }
  }
  std::vector<double> xv(static_cast<size_t>(x.numel()));
  const bool ok = DispatchNumeric(x.dtype(), [&]<class T>() {
    for (int64_t i = 0; i < x.numel(); ++i) xv[size_t(i)] = double(Widen(x.data<T>()[i]));
  });
  if (!ok) throw ctx.Fail(ErrorCode::kTypeMismatch, "unsupported element type");
  std::vector<int64_t> pos(static_cast<size_t>(r), 0);
  // value(a, base): interpolation over axes [a, r) at the chosen output position.
  std::function<double(int64_t, int64_t)> value = [&](int64_t a, int64_t base) -> double {
    if (a == r) return xv[size_t(base)];
    const Taps& t = taps[size_t(a)][size_t(pos[size_t(a)])];
    if (t.extrapolate) return p.extrapolation;
    double acc = 0;
    for (size_t k = 0; k < t.w.size(); ++k) acc += t.w[k] * value(a + 1, base + t.idx[k] * st[size_t(a)]);
    return acc;
  };
  for (int64_t o = 0; o < y.numel(); ++o) {
    const double v = value(0, 0);
    DispatchNumeric(x.dtype(), [&]<class T>() {
      using C = typename Compute<T>::type;
      if constexpr (std::is_floating_point_v<C>) {
        y.mutable_data<T>()[o] = Narrow<T>(C(v));
      } else {
        // Integer outputs: round half to even and saturate (decision).
        const double rv = math::RoundEvenD(v);
        const double lo = double(std::numeric_limits<T>::lowest()), hi = double(std::numeric_limits<T>::max());
        y.mutable_data<T>()[o] = T(rv < lo ? lo : rv > hi ? hi : rv);
      }
    });
    for (int64_t k = r - 1; k >= 0; --k) {
      if (++pos[size_t(k)] < out_shape[size_t(k)]) break;
      pos[size_t(k)] = 0;
    }
  }
}

namespace {
// Remembers inputs 1.. of the node (their values decide the output shape and taps).
void HoldInputs(const OpContext& ctx, ResizePrep* prep) {
  prep->held.assign(std::max<size_t>(ctx.num_inputs(), 1) - 1, {});
  for (size_t i = 0; i < prep->held.size(); ++i) {
    ResizePrep::Held& h = prep->held[i];
    h.present = ctx.has_input(i + 1) && ctx.inputs[i + 1]->is_tensor();
    if (!h.present) continue;
    const Tensor& t = ctx.inputs[i + 1]->tensor;
    h.dtype = t.dtype();
    h.shape = t.shape();
    if (t.dtype() != DType::kString && t.nbytes())
      h.bytes.assign(static_cast<const uint8_t*>(t.raw()), static_cast<const uint8_t*>(t.raw()) + t.nbytes());
  }
}
// An output size from scales: a whole number in [0, 2^62] (an absurd scale, NaN or a
// negative one is an error, not an undefined conversion).
int64_t OutputSize(const OpContext& ctx, double v) {
  if (!(v >= 0.0) || v > 4611686018427387904.0)
    throw ctx.Fail(ErrorCode::kOutOfRange, "scales give an output size outside [0, 2^62]");
  return int64_t(v);
}

std::shared_ptr<ResizePrep> MakeResizePrep(const OpContext& ctx) {
  const Tensor& x = ctx.in(0);
  const int64_t r = x.rank();
  Params p;
  p.mode = ctx.attr_s("mode", "nearest");
  p.coord = ctx.opset < 11 ? "asymmetric" : ctx.attr_s("coordinate_transformation_mode", "half_pixel");
  p.nearest = ctx.opset < 11 ? "floor" : ctx.attr_s("nearest_mode", "round_prefer_floor");
  p.cubic_a = ctx.attr_f("cubic_coeff_a", -0.75f);
  p.exclude_outside = ctx.attr_i("exclude_outside", 0) != 0;
  p.extrapolation = ctx.attr_f("extrapolation_value", 0.0f);
  p.antialias = ctx.attr_i("antialias", 0) != 0;
  if (p.mode != "nearest" && p.mode != "linear" && p.mode != "cubic")
    throw ctx.Fail(ErrorCode::kInvalidModel, "unknown mode '" + p.mode + "'");
  std::vector<int64_t> axes = ctx.attr_ints("axes");
  if (axes.empty())
    for (int64_t k = 0; k < r; ++k) axes.push_back(k);
  for (int64_t& a : axes) a = NormAxis(ctx, a, r);
  const size_t scales_at = ctx.opset < 11 ? 1 : 2;
  std::vector<double> roi;
  if (ctx.opset >= 11 && ctx.has_input(1) && ctx.in(1).numel()) {
    const Tensor& rt = ctx.in(1);
    std::vector<double> rv(static_cast<size_t>(rt.numel()));
    DispatchNumeric(rt.dtype(), [&]<class T>() {
      for (int64_t i = 0; i < rt.numel(); ++i) rv[size_t(i)] = double(Widen(rt.data<T>()[i]));
    });
    roi.assign(size_t(2 * r), 0.0);
    for (int64_t k = 0; k < r; ++k) roi[size_t(k + r)] = 1.0;
    const size_t na = axes.size();
    for (size_t i = 0; i < na && 2 * na == rv.size(); ++i) {
      roi[size_t(axes[i])] = rv[i];
      roi[size_t(axes[i] + r)] = rv[i + na];
    }
  }
  std::vector<double> scales(static_cast<size_t>(r), 1.0);
  Shape out = x.shape();
  const bool has_scales = ctx.has_input(scales_at) && ctx.in(scales_at).numel() > 0;
  const bool has_sizes = ctx.opset >= 11 && ctx.has_input(3) && ctx.in(3).numel() > 0;
  if (has_scales) {
    const Tensor& s = ctx.in(scales_at);
    if (s.dtype() != DType::kFloat) throw ctx.Fail(ErrorCode::kTypeMismatch, "scales must be float");
    if (size_t(s.numel()) != axes.size())
      throw ctx.Fail(ErrorCode::kShapeMismatch, "scales must have one value per axis");
    for (size_t i = 0; i < axes.size(); ++i) {
      const double sc = double(s.data<float>()[i]);
      if (!(sc > 0)) throw ctx.Fail(ErrorCode::kInvalidArgument, "scales must be positive");
      scales[size_t(axes[i])] = sc;
      out[size_t(axes[i])] = OutputSize(ctx, sc * double(x.shape()[size_t(axes[i])]));
    }
  } else if (has_sizes) {
    const auto sz = ReadInts(ctx, ctx.in(3));
    if (sz.size() != axes.size()) throw ctx.Fail(ErrorCode::kShapeMismatch, "sizes must have one value per axis");
    const std::string policy = ctx.attr_s("keep_aspect_ratio_policy", "stretch");
    if (policy == "stretch") {
      for (size_t i = 0; i < axes.size(); ++i) {
        scales[size_t(axes[i])] = double(sz[i]) / double(x.shape()[size_t(axes[i])]);
        out[size_t(axes[i])] = sz[i];
      }
    } else {
      double sc = policy == "not_larger" ? 1e300 : 0;
      for (size_t i = 0; i < axes.size(); ++i) {
        const double v = double(sz[i]) / double(x.shape()[size_t(axes[i])]);
        sc = policy == "not_larger" ? (v < sc ? v : sc) : (v > sc ? v : sc);
      }
      for (size_t i = 0; i < axes.size(); ++i) {
        scales[size_t(axes[i])] = sc;
        out[size_t(axes[i])] = OutputSize(ctx, math::RoundEvenD(sc * double(x.shape()[size_t(axes[i])])));
      }
    }
  } else {
    throw ctx.Fail(ErrorCode::kMissingInput, "one of scales or sizes is required");
  }
  for (size_t k = 0; k < out.size(); ++k) {
    if (out[k] < 0) throw ctx.Fail(ErrorCode::kInvalidArgument, "an output size is negative");
    if (x.shape()[k] == 0 && out[k] > 0)
      throw ctx.Fail(ErrorCode::kInvalidArgument, "an empty axis cannot be resized to a non-empty one");
  }
  auto prep = std::make_shared<ResizePrep>();
  HoldInputs(ctx, prep.get());
  MakeTaps(x, p, scales, out, roi, prep.get());
  return prep;
}

std::shared_ptr<ResizePrep> MakeUpsamplePrep(const OpContext& ctx) {
  const Tensor& x = ctx.in(0);
  Params p;
  p.mode = ctx.attr_s("mode", "nearest");
  p.coord = "asymmetric";
  p.nearest = "floor";
  std::vector<double> scales;
  if (ctx.has_input(1)) {
    const Tensor& s = ctx.in(1);
    if (s.dtype() != DType::kFloat) throw ctx.Fail(ErrorCode::kTypeMismatch, "scales must be float");
    for (int64_t i = 0; i < s.numel(); ++i) scales.push_back(double(s.data<float>()[i]));
  } else {
    for (float f : ctx.attr_floats("scales")) scales.push_back(double(f));
  }
  if (int64_t(scales.size()) != x.rank())
    throw ctx.Fail(ErrorCode::kShapeMismatch, "scales must have one value per axis");
  Shape out = x.shape();
  for (size_t k = 0; k < out.size(); ++k) out[k] = OutputSize(ctx, scales[k] * double(out[k]));
  auto prep = std::make_shared<ResizePrep>();
  HoldInputs(ctx, prep.get());
  MakeTaps(x, p, scales, out, {}, prep.get());
  return prep;
}
}  // namespace

namespace {
// Runs the resize with the node's prepared state, made by make() for new inputs.
template <class Make>
void ResizeWith(OpContext& ctx, Make make) {
  const Tensor& x = ctx.in(0);
  const auto prep = ctx.Prepared<ResizePrep>(
      [&](const ResizePrep& pr) { return pr.x_shape == x.shape() && SameHeldInputs(ctx, pr); }, make);
  RunResize(ctx, *prep);
}
}  // namespace

void Resize(OpContext& ctx) {
  ResizeWith(ctx, [&] { return MakeResizePrep(ctx); });
}
void Upsample(OpContext& ctx) {
  ResizeWith(ctx, [&] { return MakeUpsamplePrep(ctx); });
}

}  // namespace ops
}  // namespace onemodel::impl
