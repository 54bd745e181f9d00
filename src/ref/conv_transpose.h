// The reference (oracle) ConvTranspose, the definition of its bits (ONNX Operators.md,
// ConvTranspose; exact-contract section 3): per output, one accumulator from -0.0
// folding, input channel (outer) then kernel position (row-major), the products of the
// taps that land on it; then the bias. ops/conv/conv_transpose.cpp parses the node into the
// geometry below and runs this or one of its vector rows.
#pragma once

#include <cstdint>
#include <vector>

namespace onemodel::impl {

// A ConvTranspose node's validated geometry: D spatial dimensions, N images, C input
// and M output channels in `group` groups (Cg and Mg per group); per dimension the
// kernel, input and output sizes, strides, dilations, leading (pb) and trailing (pe)
// pads, and the input's row-major strides; the spatial sizes' products.
struct ConvTransposeGeometry {
  int64_t group = 1, D = 0, N = 0, C = 0, M = 0, Mg = 0, Cg = 0, in_sp = 0, out_sp = 0, k_sp = 0;
  std::vector<int64_t> kernel, in, stride, dil, out, pb, pe, in_st;
};

namespace ref {

// y[n][m][o] for every output: input channel ci of m's group, kernel position k; the tap
// reads input p where o + pb = p * stride + k * dilation (per dimension, when that p
// is an integer inside the input). w is C x Mg x kernel; bias (M values) may be null.
// y holds N * M * out_sp floats.
void ConvTransposeF32(const ConvTransposeGeometry& g, const float* x, const float* w, const float* bias, float* y);

}  // namespace ref
}  // namespace onemodel::impl
