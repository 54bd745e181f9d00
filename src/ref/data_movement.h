// The reference (oracle) data movement operators Gather, Pad and Where (ONNX Operators.md),
// the definition of their bits: no arithmetic, every output element a copy of one input
// element (its storage bytes; strings: the string) or Pad's constant, in output order.
// ops/tensor/shape_ops.cpp (Gather), ops/tensor/pad.cpp and ops/math/elementwise.cpp (Where)
// validate their nodes into these parameters (indices checked, the pad mode known) and run
// them as their families' reference rows. Transpose: ref/transpose.h.
#pragma once

#include <cstdint>
#include <vector>

#include "core/shape.h"
#include "core/tensor.h"

namespace onemodel::impl {
namespace ref {

// dst[di] = src[si] for any element type: its storage bytes, or the string.
void CopyElement(const Tensor& src, int64_t si, Tensor& dst, int64_t di);

// A Gather node's validated parameters: outer and inner sizes around the axis of size
// dim, and the n indices (each in [0, dim), negatives already wrapped) in order.
struct GatherParams {
  int64_t outer = 1, inner = 1, dim = 0;
  const int64_t* rows = nullptr;
  int64_t n = 0;
};
// out[(b * n + k) * inner + i] = x[(b * dim + rows[k]) * inner + i], element by element in
// output order (out: x's type, outer * n * inner elements).
void Gather(const GatherParams& p, const Tensor& x, Tensor& out);

// Pad's mode attribute.
enum class PadMode : uint8_t { kConstant, kEdge, kWrap, kReflect };
// A Pad node's validated parameters: its mode, the leading pad of each axis (negative: the
// axis cropped), the output's shape, and the constant of attribute `value` (opsets before
// 11: value_attr set when the attribute is given).
struct PadParams {
  PadMode mode = PadMode::kConstant;
  std::vector<int64_t> lo;
  Shape s;
  bool value_attr = false;
  float value = 0.0f;
};
// Pad: out (zero-filled, shape p.s, x's type) gets, in constant mode for a non-string x,
// the constant in every element first: cval's element 0 (input 2, of x's type; empty when
// absent), else the attribute's value as x's compute type (C++'s conversion), then Narrow
// (types DispatchNumeric does not cover keep zeros), else zeros. Then, in output order, each element
// whose every axis k reads a source index q_k (below) is x's element at those indices;
// the others keep the constant. On an axis of size d, padded position t = o - lo[k] reads
// t itself when 0 <= t < d; else none in constant mode or when d == 0; else edge: 0 or
// d - 1; wrap: t mod d (non-negative); reflect: 0 when d == 1, else t mod 2(d - 1)
// (non-negative) mirrored past d - 1.
void Pad(const PadParams& p, const Tensor& x, const Tensor& cval, Tensor& out);

// Where: out (a's type, the broadcast shape of c, a and b, numpy rules; strings: empty
// strings) gets, element by element in output order, a's broadcast element where c's
// (bool) is true, else b's.
void Where(const Tensor& c, const Tensor& a, const Tensor& b, Tensor& out);

}  // namespace ref
}  // namespace onemodel::impl
