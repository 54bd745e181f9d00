// Conv's family table: the algorithms a Conv node can run and what its plan keeps
// (ops/conv/conv.cpp).
#pragma once

#include <cstdint>
#include <vector>

#include "ops/conv/conv_common.h"
#include "ops/conv/conv_gemm.h"
#include "ops/family.h"
#include "ops/fused/fused.h"
#include "ref/conv.h"
#include "ref/elementwise.h"

namespace onemodel::impl {
namespace ops {

// The rows of Conv's table (ConvTable), by index. Each is exact (ref::ConvF32's bits)
// but the fast rows: kQdqU8S8 (conv_int8.h), first so that fast sessions take it where it
// fits, and the GEMM rows' fused multiply-add twins, each just before its exact twin.
enum class ConvAlgo {
  kReference,      // "reference": ref::ConvF32, the oracle's loops
  kQdqU8S8,        // "qdq-u8s8" (fast): input on a quantisation grid, int8 weights, GemmU8S8I32
  kWinogradF4,     // "winograd-f4x4" (fast): 3x3 stride 1 by Winograd F(4x4, 3x3) (conv_winograd.h)
  kTapGemmFma,     // "tap-gemm-fma" (fast): kTapGemm on the GEMM kernels' FMA twins
  kTapGemm,        // "tap-gemm": 3-D and more, taps into columns, the GEMM kernel (TapGemm)
  kDirect,         // "direct": 1-D/2-D with few input channels, ConvDirectF32, epilogue in its tiles
  kIm2colGemmFma,  // "im2col-gemm-fma" (fast): kIm2colGemm on the GEMM kernels' FMA twins
  kIm2colGemm,     // "im2col-gemm": 1-D/2-D, im2col and the GEMM kernel (ConvGemm2D)
  kDepthwise,      // "depthwise": one input and one output channel per group, DepthwiseConvF32
  kPlane,          // "plane": one input channel per output, ConvPlaneF32 per output plane
  kPlaneMulAdd,    // "plane-muladd": the reference's plane loops with MulAddStridedF32 inside
};

// What Conv derives from its attributes and its input and weight shapes, kept per node
// (OpContext::Prepared) and remade when a shape changes.
struct ConvPlan : ConvInputs {
  int64_t group = 1, N = 0, C = 0, M = 0, Cg = 0, Mg = 0, in_sp = 0, out_sp = 0, k_sp = 0;
  ConvGeometry g;
  ConvPlane pl{};  // 1-D and 2-D
  Taps tg;         // the taps of every dimension (kTapGemm)
  Shape out_shape;
  Activation act = Activation::kNone;  // a fused activation (Node::fusion, graph/graph.h)
  // A fused QuantizeDequantize, after the bias and activation (Node::fusion).
  bool qdq = false;
  QdqParams qdq_params;
  // The grid the input lies on (Node::fusion, set by a fast pass): the fast row's condition.
  bool in_grid = false;
  QuantGrid grid;
  bool native_dot = false;  // the session's GemmU8S8I32 is one instruction per quad (VNNI)
  bool prepack = false;     // the session keeps derived weights (OpContext::prepack)
  bool fma = false;         // the session's GEMM twins run on hardware FMA (KernelTable::fma_f32)
  // The algorithm, the one run instead when the weights are not all finite (the GEMM
  // algorithms' condition, conv_gemm.h: an exact row that is not a GEMM), and the one the
  // integer row gives way to when the weights are not constant int8 values (conv_int8.h:
  // the row planned without it).
  ConvAlgo algo = ConvAlgo::kReference, fallback = ConvAlgo::kReference, instead = ConvAlgo::kReference;
};

// One run of a planned row (ops/conv/conv.cpp); the row returns whether it applied the bias
// and activation itself.
struct ConvRun;
using ConvRunFn = bool (*)(const ConvRun&);
const FamilyTable<ConvPlan, ConvRunFn>& ConvTable();

}  // namespace ops
}  // namespace onemodel::impl
