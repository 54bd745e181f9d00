// The reference (oracle) normalisations, the definition of their bits: LayerNormalization,
// RMSNormalization, InstanceNormalization, GroupNormalization and BatchNormalization's
// normalising step (ONNX Operators.md; RMSNormalization: x * (1 / sqrt(mean(x^2) + eps))).
// Means and variances are sums of one contiguous run in the canonical L-lane order
// (exact-contract section 3, ref::SumCanonicalBy), divided once by the count; then
// y = (x - mean) * (1 / sqrt(var + eps)) * scale + bias, each step rounded (no fusion,
// section 2). f32 throughout: the operators (ops/nn/norm.cpp) widen narrow floats before
// and round the results once after. Vector rows of the same operators: ops/nn/norm.cpp.
#pragma once

#include <cstdint>

namespace onemodel::impl {
namespace ref {

// A LayerNormalization / RMSNormalization node: x as `outer` rows of n (the axes before
// `axis`, the axes from it), epsilon, and what the node's rows read of its inputs.
struct LayerNormParams {
  int64_t outer = 0;  // rows: the product of the dimensions before axis
  int64_t n = 0;      // row length: the product of the dimensions from axis
  float eps = 1e-5f;
  bool rms = false;                       // RMSNormalization: the mean of squares, no mean and no bias
  bool has_bias = false;                  // LayerNormalization's B given
  bool f32 = false;                       // x (and y) float
  bool stats = false;                     // LayerNormalization's Mean or InvStdDev output wanted
  int64_t scale_size = 0, bias_size = 0;  // elements of scale and bias, before broadcasting
};

// Each row o of x [outer, n]: LayerNormalization mean = Sum(x) / n, var = Sum(d * d) / n
// with d = x - mean, inv = 1 / sqrt(var + eps), y = ((x - mean) * inv) * scale (+ bias);
// RMSNormalization inv = 1 / sqrt(Sum(x * x) / n + eps), y = (x * inv) * scale (sums in
// the canonical order). scale[scale_index[i]] and bias[bias_index[i]] are element i of the
// row's scale and bias (their broadcast over the normalised axes); bias null: none. mean
// and inv_std (null: not wanted) receive each row's mean (0 for RMSNormalization) and inv.
void LayerNormF32(const LayerNormParams& p, const float* x, const float* scale, const int64_t* scale_index,
                  const float* bias, const int64_t* bias_index, float* y, float* mean, float* inv_std);

// A GroupNormalization node (InstanceNormalization: one group per channel): x [N, C, inner]
// with C channels in `groups` groups of C / groups.
struct GroupNormParams {
  int64_t N = 0, C = 0, inner = 0, groups = 1;
  float eps = 1e-5f;
  bool per_channel = true;  // scale and bias hold one value per channel, else one per group
};

// Per (n, group): mean and var over the group's channels and positions (canonical sums,
// divided by their count), inv = 1 / sqrt(var + eps), y = (((x - mean) * inv) * scale) + bias.
void GroupNormF32(const GroupNormParams& p, const float* x, const float* scale, const float* bias, float* y);

// The planes of an InstanceNormalization node or of BatchNormalization's normalising step:
// x [N, C, inner] as N * C planes of `inner` (the instance_norm family, ops/nn/norm.h).
struct PlaneNormParams {
  int64_t N = 0, C = 0, inner = 0;
  float eps = 1e-5f;
  // BatchNormalization: one mean and variance per channel, given (or the batch's, in
  // training mode); InstanceNormalization: each plane's own (GroupNormF32, C groups).
  bool channel_stats = false;
  bool f32 = false;  // x (and y) float
};

// BatchNormalization's step: inv = 1 / sqrt(var[c] + eps),
// y = (((x - mean[c]) * inv) * scale[c]) + bias[c] for every element of channel c.
void BatchNormF32(const PlaneNormParams& p, const float* x, const float* mean, const float* var, const float* scale,
                  const float* bias, float* y);

}  // namespace ref
}  // namespace onemodel::impl
