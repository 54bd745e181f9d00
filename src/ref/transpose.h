// The reference (oracle) Transpose (ONNX Operators.md): the definition of its bits, and the
// 2-D transpose kernel of the dispatch table. Data movement, no arithmetic: every bit kept.
// ops/tensor/shape_ops.cpp validates the node (perm normalised) and runs Transpose as its
// family's reference row.
#pragma once

#include <cstdint>

namespace onemodel::impl {

class Shape;
class Tensor;

namespace ref {

// A 2-D transpose of 32-bit elements (data movement, no arithmetic: every bit kept):
// dst[q * ds + j] = src[j * ss + q] for j < rows, q < cols (the Transpose operator).
void Transpose32(const uint32_t* src, int64_t ss, uint32_t* dst, int64_t ds, int64_t rows, int64_t cols);

// Transpose: out (x's type, shape s with s[i] = x's dim perm[i]; perm a permutation of
// x's axes) gets, at output position pos, x's element at the position whose axis perm[i]
// is pos[i]: for non-strings of rank >= 1, rows of the output's last axis in order, each
// element copied as its storage bytes (a contiguous row as one copy); else element by
// element in output order.
void Transpose(const Shape& perm, const Tensor& x, Tensor& out);

}  // namespace ref
}  // namespace onemodel::impl
