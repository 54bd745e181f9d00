// Convolution algorithms on the GEMM kernels (vector sessions only): im2col for 1-D and
// 2-D, and "taps" for any number of dimensions (3-D convolution, ConvTranspose by stride
// phases). Both keep the reference's fold (ref::ConvF32); docs/graph-passes.md and the
// comments below give the argument.
#pragma once

#include <cstdint>
#include <vector>

#include "ops/conv/conv_common.h"

namespace onemodel::impl {
namespace ops {

// Convolution as GEMM: per image and group, Y[Mg x P] = W[Mg x Kg] * col[Kg x P] with
// col's row (c, kh, kw) in the reference's fold order, so each output folds channel
// then kernel position from -0.0 exactly as the plane loops do -- except that col holds
// +0.0 at padding taps where the reference skips the tap. With finite weights such a
// term is +-0, and adding a zero leaves any nonzero accumulator unchanged, so the two
// folds stay bitwise equal until both are zeros of possibly different sign; then they
// stay zeros or take the same next term. Hence the results differ at most in the sign
// of a zero result, and only at positions with a padding tap: those zeros are
// recomputed here by the reference fold. Columns go in blocks so col stays small.
// relu: a fused Relu follows (the bias first); it maps both zeros to +0, so then the
// fix-up is not needed: with a nonzero bias the zero's sign is lost in the sum anyway.
// wt: null, or the weight transposed ([Cg*KH*KW, M], from OpContext::ConstDerived), used
// when there is one output position: the product is then a row times wt's rows.
// packed_wt: null, or (group 1) the weight transposed and packed for the GEMM kernel
// (PackedConstB of W^T: Kg x M): then each column block is computed as
// Y^T[np x M] = col^T[np x Kg] * W^T and transposed into Y. Every output folds the same
// products (a * b is b * a bitwise) in the same k order from -0.0, so the bits are the
// same; for a 1x1 kernel the epilogue then follows each tile's transpose. With
// more than one kernel tap col^T is not built: GemmPackedIndirectF32 reads each
// position's terms from the input in place (from a copy with zero borders when some tap
// is padding: the same +0.0 terms as col's), applies the epilogue per output channel as
// below, and blocks of positions are transposed into Y while in L2.
// bias (null: none) and act: the epilogue. When no zero needs
// the fix-up (no padding tap anywhere, or a fused Relu), the GEMM kernel applies it to
// each finished tile (GemmBiasActF32) and this returns true; otherwise it returns false
// and the caller applies it after the fix-up.
// res: a fused residual Add (res.z: Z at y's offsets, with z_first and post; its bias
// and act are not read), applied after the epilogue in the same places and under the
// same condition (true returned: epilogue and residual both applied).
// fma: fast rows' products, on the GEMM kernels' fused multiply-add twins (ref/gemm.h;
// the fix-up's recomputed zeros keep the exact fold).
bool ConvGemm2D(const OpContext& ctx, const ConvPlane& pl, const float* x, const float* w, const float* wt,
                const float* packed_wt, int64_t N, int64_t C, int64_t M, int64_t group, int64_t in_sp, float* y,
                bool relu, const float* bias, Activation act, const ConvFinish& res, bool fma = false);

// Convolution as "taps" in any number of dimensions (3-D convolution, ConvTranspose by
// stride phases): output position o (a multi-index over out) reads, for tap t (a
// multi-index over the per-dimension offset lists b, row-major: the reference's kernel
// order), input coordinate i_d = a_d * o_d + b_d[t_d] of every channel; a coordinate
// outside the input is a padding tap, which the reference skips.
struct Taps {
  std::vector<int64_t> in, out, a;
  std::vector<std::vector<int64_t>> b;
};

// Y[Mg x P] = W[Mg x Kg] * col[Kg x P] for the Cg channels at x (in_sp apart), W row-major

// tap from -0.0, the reference's order, with +0.0 at padding taps where the reference
// skips them. As in ConvGemm2D (finite weights), that can change only the sign of a zero
// result at a position with a padding tap; those zeros are recomputed by the reference
// fold. No bias or activation (the caller's, after the full sum). Column blocks keep col
// near 1 MB; col rows and the GEMM go to the threads.
// fma: as ConvGemm2D's.
void TapGemm(const OpContext& ctx, const Taps& tg, const float* x, int64_t Cg, int64_t in_sp, const float* w,
             int64_t Mg, float* y, bool fma = false);

}  // namespace ops
}  // namespace onemodel::impl
