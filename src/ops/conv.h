// Conv's plans: the algorithms a Conv node can run and what its plan keeps (ops/conv.cpp).
#pragma once

#include "ops/algorithm_name.h"

#include <cstdint>
#include <vector>

#include "ops/conv_common.h"
#include "ops/conv_gemm.h"
#include "ops/fused.h"
#include "ref/conv.h"
#include "ref/elementwise.h"

namespace onemodel::impl {
namespace ops {

// The algorithms of a float Conv. Each gives ref::ConvF32's bits.
enum class ConvAlgo {
  kReference,    // ref::ConvF32: the oracle's loops (every plan of the oracle session)
  kTapGemm,      // 3-D and more: taps into columns, the GEMM kernel (TapGemm)
  kDirect,       // 1-D/2-D with few input channels: ConvDirectF32, epilogue in its tiles
  kIm2colGemm,   // 1-D/2-D: im2col and the GEMM kernel (ConvGemm2D)
  kDepthwise,    // one input and one output channel per group: DepthwiseConvF32
  kPlane,        // one input channel per output: ConvPlaneF32 per output plane
  kPlaneMulAdd,  // the reference's plane loops with MulAddStridedF32 inside
};
inline constexpr ConvAlgo kAllConvAlgos[] = {ConvAlgo::kReference,  ConvAlgo::kTapGemm,   ConvAlgo::kDirect,
                                             ConvAlgo::kIm2colGemm, ConvAlgo::kDepthwise, ConvAlgo::kPlane,
                                             ConvAlgo::kPlaneMulAdd};
const char* ConvAlgoName(ConvAlgo a);

// What Conv derives from its attributes and its input and weight shapes, kept per node
// (OpContext::Prepared) and remade when a shape changes.
struct ConvPlan : ConvInputs {
  int64_t group = 1, N = 0, C = 0, M = 0, Cg = 0, Mg = 0, in_sp = 0, out_sp = 0, k_sp = 0;
  ConvGeometry g;
  ConvPlane pl{};  // 1-D and 2-D
  Taps tg;         // the taps of every dimension (kTapGemm)
  Shape out_shape;
  Activation act = Activation::kNone;  // a fused activation (ops/fused.h)
  // A fused QuantizeDequantize, after the bias and activation (ops/fused.h).
  bool qdq = false;
  QdqParams qdq_params;
  // The algorithm, and the one run instead when the weights are not all finite (the
  // GEMM algorithms' condition, conv_gemm.h).
  ConvAlgo algo = ConvAlgo::kReference, fallback = ConvAlgo::kReference;
};

}  // namespace ops
}  // namespace onemodel::impl
