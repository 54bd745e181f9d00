// The ms_attention family: ONNX Runtime's com.microsoft GroupQueryAttention,
// MultiHeadAttention and Attention (ops/nn/ms_attention.cpp). The definition of their bits
// is ref::MsAttentionF32 and, for Attention's input projection, ref::ProjectF32
// (ref/ms_attention.h).
#pragma once

#include "ops/family.h"
#include "ref/ms_attention.h"

namespace onemodel::impl {
namespace ops {

// What an ms_attention row computes: Attention's input projection (x [M, Din] times w
// [Din, C], plus bias[c] when bias is not null, into out [M, C]) and the attention core
// (q, k, v in ref::MsAttentionParams' layouts into y [B, S, N * Hv] and, when qk is not
// null, the scores output). Both write every element of their output.
struct MsAttentionKernels {
  void (*project)(const OpContext& ctx, int64_t M, int64_t Din, int64_t C, const float* x, const float* w,
                  const float* bias, float* out);
  void (*core)(const OpContext& ctx, const ref::MsAttentionParams& p, const float* q, const float* k, const float* v,
               float* y, float* qk);
};
using MsAttentionRun = const MsAttentionKernels*;
// Rows: reference (ref::ProjectF32, ref::MsAttentionF32), gemm (the products as the
// session's GEMMs, per batch and head; the score and softmax steps of the reference with
// the session's Exp and canonical sum).
const FamilyTable<ref::MsAttentionParams, MsAttentionRun>& MsAttentionTable();

}  // namespace ops
}  // namespace onemodel::impl
