// The recurrent family (RNN, GRU and LSTM: ops/nn/rnn.cpp) and its table. The definition of
// their bits is ref/rnn.h: the cells' equations and the products' folds, run over the
// sequence by ref::RnnSequenceF32.
#pragma once

#include "ops/family.h"
#include "ref/rnn.h"

namespace onemodel::impl {
namespace ops {

// Runs the planned row on a node's parameters and data (ref::RnnData: the hidden and cell
// states updated in place, Y's f32 values written where wanted).
using RnnRun = void (*)(const OpContext& ctx, const ref::RnnParams& p, const ref::RnnData& io);
// Rows: reference (ref::RnnSequenceF32: per step and gate, the products folded from -0.0
// and each activation by the scalar function), gemm (x . W for every step at once and
// h . R per step through the GEMM kernel, activations over whole gates by MathF32).
const FamilyTable<ref::RnnParams, RnnRun>& RnnTable();

}  // namespace ops
}  // namespace onemodel::impl
