// The algorithms of the quantisation family (ops/quant_ops.cpp). Integer sums are exact modulo 2^32, so
// any order gives the reference's bits; the float steps are the reference's, lane by lane. The first of each
// is the reference, every plan of the oracle session (ops/algorithm.h).
#pragma once

#include "ops/algorithm_name.h"

namespace onemodel::impl {
namespace ops {

enum class MatMulIntegerAlgo {
  kReference,  // the definition's loops
  kI16Pairs,   // 8-bit operands minus zero points as int16 pairs through GemmI16PairsI32
  kU8S8Dot,    // raw operands as u8 x s8 quads through GemmU8S8I32, zero points applied after
};
inline constexpr MatMulIntegerAlgo kAllMatMulIntegerAlgos[] = {
    MatMulIntegerAlgo::kReference, MatMulIntegerAlgo::kI16Pairs, MatMulIntegerAlgo::kU8S8Dot};
inline const char* MatMulIntegerAlgoName(MatMulIntegerAlgo a) {
  static constexpr const char* kNames[] = {"reference", "i16-pairs", "u8s8-dot"};
  return AlgorithmName(a, kNames);
}

enum class QuantizeAlgo {
  kReference,  // element by element
  kRuns,       // runs that share their parameters through the QuantizeF32 kernel
};
inline constexpr QuantizeAlgo kAllQuantizeAlgos[] = {QuantizeAlgo::kReference, QuantizeAlgo::kRuns};
inline const char* QuantizeAlgoName(QuantizeAlgo a) {
  static constexpr const char* kNames[] = {"reference", "runs"};
  return AlgorithmName(a, kNames);
}

enum class DequantizeAlgo {
  kReference,  // element by element
  kRuns,       // runs that share their parameters in a typed loop
};
inline constexpr DequantizeAlgo kAllDequantizeAlgos[] = {DequantizeAlgo::kReference, DequantizeAlgo::kRuns};
inline const char* DequantizeAlgoName(DequantizeAlgo a) {
  static constexpr const char* kNames[] = {"reference", "runs"};
  return AlgorithmName(a, kNames);
}

enum class DynamicQuantizeAlgo {
  kReference,  // element by element
  kKernel,     // the range scan in one loop, then the QuantizeF32 kernel
};
inline constexpr DynamicQuantizeAlgo kAllDynamicQuantizeAlgos[] = {DynamicQuantizeAlgo::kReference,
                                                                   DynamicQuantizeAlgo::kKernel};
inline const char* DynamicQuantizeAlgoName(DynamicQuantizeAlgo a) {
  static constexpr const char* kNames[] = {"reference", "kernel"};
  return AlgorithmName(a, kNames);
}

}  // namespace ops
}  // namespace onemodel::impl
