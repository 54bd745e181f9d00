// The attention family (Attention: ops/nn/attention.cpp) and its table. The definition of
// Attention's bits is ref::AttentionF32 (ref/attention.h).
#pragma once

#include "ops/family.h"
#include "ref/attention.h"

namespace onemodel::impl {
namespace ops {

// What an Attention row runs on: Q, K and V as f32 heads (ref::AttentionParams' layouts,
// the past in front of K and V), Y and the optional scores output (null: not wanted).
struct AttentionData {
  const float* q = nullptr;
  const float* k = nullptr;
  const float* v = nullptr;
  Tensor* y = nullptr;
  Tensor* qk = nullptr;
};
using AttentionRun = void (*)(const OpContext& ctx, const ref::AttentionParams& p, const AttentionData& d);
// Rows: reference (ref::AttentionF32), gemm (per batch and head, the scores and the
// weighted sum as GEMMs, the softmax rows by the session's kernels).
const FamilyTable<ref::AttentionParams, AttentionRun>& AttentionTable();

}  // namespace ops
}  // namespace onemodel::impl
