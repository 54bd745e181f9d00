// Resize and Upsample (ONNX Operators.md): the node's attributes and its roi, scales and
// sizes inputs parsed once per node into a plan (the reference's parameters and
// coordinate tables, ref/resize.h), then the planned row of ResizeTable. The definition
// of the bits is ref::ResizeF64: separable, the last axes first, each 1-D step a dot
// product of coefficients with edge-padded neighbours, all in binary64, rounded once to
// the output type at the end.
// Reference src/ref/resize.cpp; kernels: none (the rows are scalar loops over the threads);
// tests tests/ops/image/resize_test.cpp.
#include "ops/image/resize.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "ref/math.h"
#include "ops/ops.h"
#include "ops/parallel.h"
#include "ops/util.h"

namespace onemodel::impl {
namespace ops {
namespace {

// The definition: ref::ResizeF64 on the input widened exactly to binary64, each value
// rounded once to the output type (integers: ref::ResizeIntegerOutput).
void RunReference(OpContext& ctx, const ResizePlan& plan, const Tensor& x, Tensor& y) {
  std::vector<double> xv(static_cast<size_t>(x.numel()));
  const bool ok = DispatchNumeric(x.dtype(), [&]<class T>() {
    for (int64_t i = 0; i < x.numel(); ++i) xv[size_t(i)] = double(Widen(x.data<T>()[i]));
  });
  if (!ok) throw ctx.Fail(ErrorCode::kTypeMismatch, "unsupported element type");
  DispatchNumeric(x.dtype(), [&]<class T>() {
    using C = typename Compute<T>::type;
    T* py = y.mutable_data<T>();
    ref::ResizeF64(plan.ref, xv.data(), [&](int64_t o, double v) {
      if constexpr (std::is_floating_point_v<C>) {
        py[o] = Narrow<T>(C(v));
      } else {
        // Integer outputs: round half to even and saturate (decision).
        const double lo = double(std::numeric_limits<T>::lowest()), hi = double(std::numeric_limits<T>::max());
        py[o] = T(ref::ResizeIntegerOutput(v, lo, hi));
      }
    });
  });
}

bool AllFinite(const Tensor& x) {
  bool ok = true;
  const float* px = x.data<float>();
  for (int64_t i = 0; ok && i < x.numel(); ++i) ok = std::isfinite(px[i]);
  return ok;
}

// Nearest-neighbour (float, finite inputs, no extrapolation): one weight 1 per axis and
// zeros, so the binary64 sums of the definition are the chosen element plus zeros, -0
// made +0 (0 + -0 = +0); a non-finite input times a zero weight is NaN: the reference
// runs then.
void RunNearest(OpContext& ctx, const ResizePlan& plan, const Tensor& x, Tensor& y) {
  if (!AllFinite(x)) return RunReference(ctx, plan, x, y);
  const int64_t r = x.rank();
  const Shape& out_shape = plan.ref.out_shape;
  const std::vector<std::vector<int64_t>>& pick = plan.pick;
  const float* px = x.data<float>();
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
}

// Separable (float, every input finite, no extrapolation, rank >= 2) when every axis but
// the last two is an identity (same size, each output's taps one weight 1 at its own
// index and zeros): there the definition's sum is +0 + 0 * x' + 1 * x'' with finite x',
// which is x'' (and +0 for a zero); the last two axes' sums start at +0, so their result
// is never -0. So each output is, in binary64, the sum over the row taps of w_h * (the sum
// over the column taps of w_w * x), each from +0 in tap order: the very operations of
// ref::ResizeF64, without the identity axes' recursion. Not all finite: the reference.
void RunSeparable(OpContext& ctx, const ResizePlan& plan, const Tensor& x, Tensor& y) {
  if (!AllFinite(x)) return RunReference(ctx, plan, x, y);
  const int64_t r = x.rank();
  const Shape& out_shape = plan.ref.out_shape;
  const float* px = x.data<float>();
  const int64_t IH = x.shape()[size_t(r - 2)], IW = x.shape()[size_t(r - 1)];
  const int64_t OH = out_shape[size_t(r - 2)], OW = out_shape[size_t(r - 1)];
  const int64_t planes = OH * OW != 0 ? y.numel() / (OH * OW) : 0;
  const std::vector<ref::ResizeTaps>& th = plan.ref.taps[size_t(r - 2)];
  const std::vector<ref::ResizeTaps>& tw = plan.ref.taps[size_t(r - 1)];
  float* py = y.mutable_data<float>();
  ParallelFor(ctx, planes * OH, 16, [&](int64_t b, int64_t e) {
    for (int64_t row = b; row < e; ++row) {
      const int64_t plane = row / OH, oh = row % OH;
      const float* xp = px + plane * IH * IW;
      const ref::ResizeTaps& h = th[size_t(oh)];
      float* dst = py + row * OW;
      for (int64_t ow = 0; ow < OW; ++ow) {
        const ref::ResizeTaps& w = tw[size_t(ow)];
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
}

bool NearestFits(const ResizePlan& p) { return p.is_float && p.nearest_ok; }
bool SeparableFits(const ResizePlan& p) { return p.is_float && p.separable_ok; }

constexpr const char* kResizeOps[] = {"Resize", "Upsample"};
constexpr AlgorithmRow<ResizePlan, ResizeRun> kResizeRows[] = {
    {"reference", Exactness::kExact, "", nullptr, nullptr, RunReference},
    {"nearest", Exactness::kExact, "", NearestFits, nullptr, RunNearest},
    {"separable", Exactness::kExact, "", SeparableFits, nullptr, RunSeparable},
};

}  // namespace

const FamilyTable<ResizePlan, ResizeRun>& ResizeTable() {
  static constexpr FamilyTable<ResizePlan, ResizeRun> kTable{"resize", kResizeOps, kResizeRows};
  return kTable;
}

namespace {

// What Resize and Upsample derive from their attributes, the input's shape and type and
// the values of their roi, scales and sizes inputs (kept byte for byte to recognise
// them), kept per node (OpContext::Prepared): the plan and its row of ResizeTable.
struct ResizePrep : NodeState {
  DType x_dtype = DType::kUndefined;
  struct Held {
    bool present = false;
    DType dtype = DType::kUndefined;
    Shape shape;
    std::vector<uint8_t> bytes;
  };
  std::vector<Held> held;  // inputs 1.. as they were
  ResizePlan plan;
  size_t row = 0;
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

// The reference's taps for the parameters' shapes, scales and roi, and the faster rows'
// conditions on them (ResizePlan).
void MakePlan(const Tensor& x, ResizePlan* plan) {
  ref::ResizeParams& p = plan->ref;
  p.x_shape = x.shape();
  ref::MakeResizeTaps(&p, DTypeStorageSize(x.dtype()));
  plan->is_float = x.dtype() == DType::kFloat;
  const int64_t r = x.rank();
  const std::vector<int64_t>& st = p.st;
  const std::vector<std::vector<ref::ResizeTaps>>& taps = p.taps;
  // Nearest: every axis's weights one 1 and zeros, no extrapolation.
  if (p.mode == ref::ResizeMode::kNearest) {
    bool ok = true;
    plan->pick.assign(static_cast<size_t>(r), {});
    for (int64_t a = 0; a < r && ok; ++a)
      for (const ref::ResizeTaps& t : taps[size_t(a)]) {
        int64_t chosen = -1, ones = 0;
        for (size_t k = 0; k < t.w.size(); ++k) {
          if (t.w[k] == 1.0) {
            ++ones;
            chosen = t.idx[k];
          } else if (t.w[k] != 0.0)
            ok = false;
        }
        if (t.extrapolate || ones != 1) ok = false;
        plan->pick[size_t(a)].push_back(chosen * st[size_t(a)]);
      }
    plan->nearest_ok = ok && r >= 1;
  }
  // Separable: no extrapolation, every axis but the last two an identity.
  if (r >= 2 && p.mode != ref::ResizeMode::kNearest) {
    bool ok = true;
    for (int64_t a = 0; a < r && ok; ++a)
      for (int64_t o = 0; o < int64_t(taps[size_t(a)].size()) && ok; ++o) {  // none for an empty output
        const ref::ResizeTaps& t = taps[size_t(a)][size_t(o)];
        ok = !t.extrapolate;
        if (a >= r - 2 || !ok) continue;
        ok = p.out_shape[size_t(a)] == x.shape()[size_t(a)];
        int64_t ones = 0;
        for (size_t k = 0; k < t.w.size() && ok; ++k) {
          if (t.w[k] == 1.0 && t.idx[k] == o)
            ++ones;
          else
            ok = t.w[k] == 0.0;
        }
        ok = ok && ones == 1;
      }
    plan->separable_ok = ok;
  }
}

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

// The prepared state of a plan whose parameters, output shape, scales and roi are set:
// the held inputs, the taps and the planned row.
std::shared_ptr<ResizePrep> FinishPrep(const OpContext& ctx, const Tensor& x, ResizePlan plan) {
  auto prep = std::make_shared<ResizePrep>();
  prep->x_dtype = x.dtype();
  HoldInputs(ctx, prep.get());
  prep->plan = std::move(plan);
  MakePlan(x, &prep->plan);
  prep->row = PlanIndex(ctx, ResizeTable(), prep->plan);
  return prep;
}

// An output size from scales: a whole number in [0, 2^62] (an absurd scale, NaN or a
// negative one is an error, not an undefined conversion).
int64_t OutputSize(const OpContext& ctx, double v) {
  if (!(v >= 0.0) || v > 4611686018427387904.0)
    throw ctx.Fail(ErrorCode::kOutOfRange, "scales give an output size outside [0, 2^62]");
  return int64_t(v);
}

// The interpolation of a mode name; Resize refuses other names first, Upsample (which
// does not check) interpolates any other as cubic.
ref::ResizeMode ModeOf(const std::string& m) {
  return m == "nearest"  ? ref::ResizeMode::kNearest
         : m == "linear" ? ref::ResizeMode::kLinear
                         : ref::ResizeMode::kCubic;
}
// A coordinate transformation mode by name; an unknown one is half_pixel.
ref::ResizeCoord CoordOf(const std::string& c) {
  if (c == "align_corners") return ref::ResizeCoord::kAlignCorners;
  if (c == "asymmetric") return ref::ResizeCoord::kAsymmetric;
  if (c == "tf_crop_and_resize") return ref::ResizeCoord::kTfCropAndResize;
  if (c == "pytorch_half_pixel") return ref::ResizeCoord::kPytorchHalfPixel;
  if (c == "half_pixel_symmetric") return ref::ResizeCoord::kHalfPixelSymmetric;
  return ref::ResizeCoord::kHalfPixel;
}
// A nearest mode by name; an unknown one rounds as ceil.
ref::ResizeNearest NearestOf(const std::string& n) {
  if (n == "round_prefer_floor") return ref::ResizeNearest::kRoundPreferFloor;
  if (n == "round_prefer_ceil") return ref::ResizeNearest::kRoundPreferCeil;
  if (n == "floor") return ref::ResizeNearest::kFloor;
  return ref::ResizeNearest::kCeil;
}

// Resize's roi input as [starts..., ends...] over every axis (absent or empty: none).
std::vector<double> ReadRoi(const OpContext& ctx, int64_t r, const std::vector<int64_t>& axes) {
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
  return roi;
}

// Resize's scales and output shape from its scales or sizes input.
void ReadScales(const OpContext& ctx, const Tensor& x, const std::vector<int64_t>& axes, ref::ResizeParams* p) {
  const int64_t r = x.rank();
  std::vector<double>& scales = p->scales;
  scales.assign(static_cast<size_t>(r), 1.0);
  Shape& out = p->out_shape;
  out = x.shape();
  const size_t scales_at = ctx.opset < 11 ? 1 : 2;
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
}

std::shared_ptr<ResizePrep> MakeResizePrep(const OpContext& ctx) {
  const Tensor& x = ctx.in(0);
  const int64_t r = x.rank();
  ResizePlan plan;
  ref::ResizeParams& p = plan.ref;
  const std::string mode = ctx.attr_s("mode", "nearest");
  p.mode = ModeOf(mode);
  p.coord = CoordOf(ctx.opset < 11 ? "asymmetric" : ctx.attr_s("coordinate_transformation_mode", "half_pixel"));
  p.nearest = NearestOf(ctx.opset < 11 ? "floor" : ctx.attr_s("nearest_mode", "round_prefer_floor"));
  p.cubic_a = ctx.attr_f("cubic_coeff_a", -0.75f);
  p.exclude_outside = ctx.attr_i("exclude_outside", 0) != 0;
  p.extrapolation = ctx.attr_f("extrapolation_value", 0.0f);
  p.antialias = ctx.attr_i("antialias", 0) != 0;
  if (mode != "nearest" && mode != "linear" && mode != "cubic")
    throw ctx.Fail(ErrorCode::kInvalidModel, "unknown mode '" + mode + "'");
  std::vector<int64_t> axes = ctx.attr_ints("axes");
  if (axes.empty())
    for (int64_t k = 0; k < r; ++k) axes.push_back(k);
  for (int64_t& a : axes) a = NormAxis(ctx, a, r);
  p.roi = ReadRoi(ctx, r, axes);
  ReadScales(ctx, x, axes, &p);
  return FinishPrep(ctx, x, std::move(plan));
}

std::shared_ptr<ResizePrep> MakeUpsamplePrep(const OpContext& ctx) {
  const Tensor& x = ctx.in(0);
  ResizePlan plan;
  ref::ResizeParams& p = plan.ref;
  p.mode = ModeOf(ctx.attr_s("mode", "nearest"));
  p.coord = ref::ResizeCoord::kAsymmetric;
  p.nearest = ref::ResizeNearest::kFloor;
  std::vector<double>& scales = p.scales;
  if (ctx.has_input(1)) {
    const Tensor& s = ctx.in(1);
    if (s.dtype() != DType::kFloat) throw ctx.Fail(ErrorCode::kTypeMismatch, "scales must be float");
    for (int64_t i = 0; i < s.numel(); ++i) scales.push_back(double(s.data<float>()[i]));
  } else {
    for (float f : ctx.attr_floats("scales")) scales.push_back(double(f));
  }
  if (int64_t(scales.size()) != x.rank())
    throw ctx.Fail(ErrorCode::kShapeMismatch, "scales must have one value per axis");
  Shape& out = p.out_shape;
  out = x.shape();
  for (size_t k = 0; k < out.size(); ++k) out[k] = OutputSize(ctx, scales[k] * double(out[k]));
  return FinishPrep(ctx, x, std::move(plan));
}

// Runs the resize with the node's prepared state, made by make() for new inputs.
template <class Make>
void ResizeWith(OpContext& ctx, Make make) {
  const Tensor& x = ctx.in(0);
  const auto prep = ctx.Prepared<ResizePrep>(
      [&](const ResizePrep& pr) {
        return pr.plan.ref.x_shape == x.shape() && pr.x_dtype == x.dtype() && SameHeldInputs(ctx, pr);
      },
      make);
  Tensor& y = ctx.out_uninit(0, x.dtype(), prep->plan.ref.out_shape);  // every element is written; none:
  if (y.numel() == 0) return;                                          // the tables are empty too
  ResizeTable().rows[prep->row].run(ctx, prep->plan, x, y);
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
