// The reference (oracle) pooling operators: MaxPool, AveragePool and LpPool and their
// global forms (ONNX Operators.md), the definition of their bits. Per channel and output
// position, the window's taps in row-major kernel order (exact-contract section 3: one
// accumulator per output, folding in index order), padding taps skipped:
//  - max: from -inf, v replaces acc when v is NaN and acc is not, else when neither is NaN
//    and v > acc (the first NaN sticks; of equal values, +0 and -0 included, the first
//    stays); the index output is the chosen tap's flat offset;
//  - average: acc = acc + v from -0.0, then one division by the count: the taps inside the
//    input, plus with count_include_pad the padding taps within the pads (not those past
//    them that ceil_mode adds); no tap counted: NaN;
//  - Lp: acc = acc + |v|^p from -0.0 (p 2: |v| * |v|, p 1: |v|, else math::Pow), then
//    sqrt (p 2), acc (p 1) or math::Pow(acc, 1 / p).
// ops/conv/pool.cpp parses the node into PoolParams and runs PoolF32 (its reference row) or the
// faster rows; ref/conv.h holds the pooling planes' kernels of the dispatch table.
#pragma once

#include <cstdint>
#include <vector>

#include "ref/conv.h"

namespace onemodel::impl {
namespace ref {

enum class PoolKind : uint8_t { kMax, kAverage, kLp };

// A pooling node's validated parameters: its kind, whether it is a global pool, the
// window's geometry (a global pool's window is the whole input, no pads, one output per
// channel), count_include_pad, storage_order (column-major indices), Lp's p, the input
// and output spatial sizes and the input's strides, row-major (in_st) and column-major
// (col_st).
struct PoolParams {
  PoolKind kind = PoolKind::kMax;
  bool global = false;
  ConvGeometry g;
  bool include_pad = false, col_major = false;
  float p = 2.0f;
  int64_t in_sp = 0, out_sp = 0;
  std::vector<int64_t> in_st, col_st;
};

// The definition itself over NC channels: x holds NC input planes of in_sp floats, y
// receives NC output planes of out_sp floats; idx (not null: MaxPool's indices) receives
// each output's chosen tap as nc * in_sp + its offset in the plane (row- or column-major
// by col_major; -1 as the offset when the window has no tap inside the input).
void PoolF32(const PoolParams& p, int64_t NC, const float* x, float* y, int64_t* idx);

}  // namespace ref
}  // namespace onemodel::impl
