// The reference (oracle) Resize and Upsample: the definition of their bits (ONNX
// Operators.md, Resize; Upsample as Resize with asymmetric coordinates and floor
// nearest). Following ONNX's reference interpolation: separable, each output index of
// each axis mapped to an original coordinate (the coordinate transformation mode), that
// coordinate's taps (neighbour indices clamped to the axis, the mode's coefficients, in
// binary64), then every output the nested sums over the axes, the first axis outermost,
// each sum from +0 in tap order, all in binary64, rounded once to the output type at the
// end (exact-contract section 2; integer outputs: half to even, saturated, a decision of
// docs/exact-mode.md). ops/image/resize.cpp parses the node into ResizeParams and runs
// ResizeF64 (its reference row) or the faster rows on the same taps.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/function_ref.h"
#include "core/shape.h"

namespace onemodel::impl {
namespace ref {

// The interpolation (`mode`): nearest, linear or cubic.
enum class ResizeMode : uint8_t { kNearest, kLinear, kCubic };
// coordinate_transformation_mode.
enum class ResizeCoord : uint8_t {
  kHalfPixel,
  kHalfPixelSymmetric,
  kPytorchHalfPixel,
  kAlignCorners,
  kAsymmetric,
  kTfCropAndResize,
};
// nearest_mode.
enum class ResizeNearest : uint8_t { kRoundPreferFloor, kRoundPreferCeil, kFloor, kCeil };

// One output index of one axis: its neighbours' input indices (clamped into the axis)
// and their coefficients; `extrapolate`: a tf_crop_and_resize position outside the input
// (the output is extrapolation_value there).
struct ResizeTaps {
  std::vector<int64_t> idx;
  std::vector<double> w;
  bool extrapolate = false;
};

// A Resize (or Upsample) node's validated parameters: its attributes, the input's and
// output's shapes, the per-axis scales and roi ([starts..., ends...] over every axis, or
// empty: none) it derived from its inputs, and the coordinate tables MakeResizeTaps
// builds from them, the definition's own: the input's strides and every axis's taps.
struct ResizeParams {
  ResizeMode mode = ResizeMode::kNearest;
  ResizeCoord coord = ResizeCoord::kHalfPixel;
  ResizeNearest nearest = ResizeNearest::kRoundPreferFloor;
  double cubic_a = -0.75, extrapolation = 0.0;
  bool exclude_outside = false, antialias = false;
  Shape x_shape, out_shape;
  std::vector<double> scales, roi;
  std::vector<int64_t> st;                    // the input's row-major strides
  std::vector<std::vector<ResizeTaps>> taps;  // per axis, per output index
};

// Fills p->st and p->taps from p's attributes, shapes, scales and roi. The output's size
// (elements of elem_size bytes) is checked and limited first (CheckedNumElements): each
// axis's table is then at most the output's element count long, and an empty output has
// none. Per output index o of an axis of input size in: the original coordinate x(o)
// (the coordinate mode), fl = floor(x), ratio = x - fl (1 when x is whole), the mode's
// coefficients of ratio (antialiased linear and cubic when downscaling: the scaled
// kernel's, normalised by their sum), the taps from (whole ? fl : fl + 1) - n / 2 on, each
// clamped into [0, in); exclude_outside zeroes the taps outside and renormalises.
void MakeResizeTaps(ResizeParams* p, size_t elem_size);

// The definition itself: every output's binary64 value, in output (row-major) order,
// passed to store(o, v); x holds the input's elements widened exactly to binary64. Output
// position pos: value(0, 0), where value(a, base) is x[base] past the last axis, else
// extrapolation_value when pos[a]'s taps extrapolate, else the sum from +0 over the taps k
// of w[k] * value(a + 1, base + idx[k] * st[a]). Empty outputs store nothing.
void ResizeF64(const ResizeParams& p, const double* x, FunctionRef<void(int64_t, double)> store);

// An integer output's value: v rounded half to even, saturated into [lo, hi] (the integer
// type's range, exactly representable bounds or the nearest binary64).
double ResizeIntegerOutput(double v, double lo, double hi);

}  // namespace ref
}  // namespace onemodel::impl
