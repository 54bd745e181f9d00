// ConvTranspose's algorithms (ops/conv_transpose.cpp). Each gives the reference's bits:
// per output, the fold from -0.0 over input channels (outer) and kernel positions
// (row-major) of the taps that land on it, then the bias.
#pragma once

#include "ops/algorithm_name.h"

namespace onemodel::impl {
namespace ops {

enum class ConvTransposeAlgo {
  kReference,  // the definition's loops (every plan of the oracle session)
  kPatchGemm,  // kernel == stride, no pads or dilation: one 1x1 GEMM per kernel position
  kPhaseTaps,  // any geometry: per stride phase a stride-1 convolution by taps (TapGemm)
};
inline constexpr ConvTransposeAlgo kAllConvTransposeAlgos[] = {
    ConvTransposeAlgo::kReference, ConvTransposeAlgo::kPatchGemm, ConvTransposeAlgo::kPhaseTaps};
const char* ConvTransposeAlgoName(ConvTransposeAlgo a);

}  // namespace ops
}  // namespace onemodel::impl
