// The resize family (Resize and Upsample: ops/image/resize.cpp) and its table. The definition
// of their bits is ref/resize.h: the coordinate tables (ref::MakeResizeTaps) and the
// nested binary64 sums (ref::ResizeF64), which the reference row runs.
#pragma once

#include <cstdint>
#include <vector>

#include "ops/family.h"
#include "ref/resize.h"

namespace onemodel::impl {
namespace ops {

// A Resize or Upsample node's plan: the reference's parameters and taps, and what the
// faster rows need of them (ops/image/resize.cpp MakeResizePlan).
struct ResizePlan {
  ref::ResizeParams ref;
  bool is_float = false;  // a float input (and output)
  // nearest mode, rank >= 1: every axis's taps one weight 1 and zeros, none extrapolating;
  // then `pick`, per axis and output index, the chosen element's offset in the input.
  bool nearest_ok = false;
  std::vector<std::vector<int64_t>> pick;
  // linear or cubic, rank >= 2: no extrapolation, every axis but the last two an identity.
  bool separable_ok = false;
};
// Runs the planned row: x the node's input, y its output (of the plan's output shape,
// not empty).
using ResizeRun = void (*)(OpContext& ctx, const ResizePlan& p, const Tensor& x, Tensor& y);
// Rows: reference (ref::ResizeF64), nearest (a copy of each picked element, float inputs
// with a nearest plan), separable (linear/cubic over the last two axes, rows then columns,
// float inputs). Both fall back to the reference for an input that is not all finite.
const FamilyTable<ResizePlan, ResizeRun>& ResizeTable();

}  // namespace ops
}  // namespace onemodel::impl
