// The normalisations' families (ops/nn/norm.cpp) and their tables. The definition of their
// bits is ref/norm.h (ref::LayerNormF32, ref::GroupNormF32, ref::BatchNormF32).
#pragma once

#include "core/shape.h"
#include "ops/family.h"
#include "ref/norm.h"

namespace onemodel::impl {
namespace ops {

// What a LayerNormalization / RMSNormalization row runs on: x as [outer, n] f32 values,
// scale and bias (bias null: none) with their shapes and the normalised axes' shape (the
// reference broadcasts them; the rows row takes only n-element ones), and the outputs
// (mean and inv_std null when not wanted).
struct LayerNormData {
  const float* x = nullptr;
  const float* scale = nullptr;
  const float* bias = nullptr;
  const Shape* scale_shape = nullptr;
  const Shape* bias_shape = nullptr;
  const Shape* norm_shape = nullptr;
  Tensor* y = nullptr;
  Tensor* mean = nullptr;
  Tensor* inv_std = nullptr;
};
using LayerNormRun = void (*)(const OpContext& ctx, const ref::LayerNormParams& p, const LayerNormData& d);
// Rows: reference (ref::LayerNormF32), rows (rows over the threads, each step one pass of
// the session's SumF32 / BinaryF32 kernels; float x, no statistics outputs, scale and bias
// of n elements).
const FamilyTable<ref::LayerNormParams, LayerNormRun>& LayerNormTable();

// What an InstanceNormalization / BatchNormalization row runs on: x [N, C, inner] as f32
// values, scale and bias (C values), BatchNormalization's per-channel mean and var (null
// for InstanceNormalization) and the output.
struct PlaneNormData {
  const float* x = nullptr;
  const float* scale = nullptr;
  const float* bias = nullptr;
  const float* mean = nullptr;
  const float* var = nullptr;
  Tensor* y = nullptr;
};
using PlaneNormRun = void (*)(const OpContext& ctx, const ref::PlaneNormParams& p, const PlaneNormData& d);
// The table "plane_norm" of InstanceNormalization and BatchNormalization. Rows: reference
// (ref::GroupNormF32 with a group per channel, or ref::BatchNormF32), planes (planes over
// the threads, each step one pass of the session's SumF32 / BinaryF32 kernels; float x).
const FamilyTable<ref::PlaneNormParams, PlaneNormRun>& InstanceNormTable();

}  // namespace ops
}  // namespace onemodel::impl
