// The family tables of MatMul and Gemm (ops/math/matmul.cpp). Their definitions are
// ref::MatMul and ref::Gemm (ref/gemm.h), the oracle's typed loops for every numeric
// element type; the float rows run the session's GEMM kernels (src/kernels/gemm.cpp),
// whose every output folds k in order from -0.0 as ref::GemmF32 does.
#pragma once

#include <cstdint>

#include "core/tensor.h"
#include "ops/family.h"
#include "ref/gemm.h"

namespace onemodel::impl {
namespace ops {

// A MatMul node: A and B (batches broadcast: ia and ib give each output batch's A and B
// batch), M, N, K, and the output (every element written by the row).
struct MatMulParams {
  const Tensor* a = nullptr;
  const Tensor* b = nullptr;
  Tensor* out = nullptr;
  int64_t batches = 0, M = 0, N = 0, K = 0;
  const int64_t* ia = nullptr;
  const int64_t* ib = nullptr;
  bool b_2d = false;  // B has no batch dimensions (a weight: packed once per session)
  bool fma = false;   // the session's GEMM twins run on hardware FMA (KernelTable::fma_f32)
};
using MatMulRun = void (*)(const OpContext&, const MatMulParams&);
// Rows: "reference" (ref::MatMul), "gemm-fma" (fast: "gemm" on the kernels' fused
// multiply-add twins, chosen where they run on hardware FMA), "gemm" (float: the GEMM
// kernels, a constant 2-D B packed once, many small products over the threads whole).
const FamilyTable<MatMulParams, MatMulRun>& MatMulTable();

// A Gemm node: its parameters, A, B, C (null: none) and the output.
struct GemmNode {
  ref::GemmParams p;
  const Tensor* a = nullptr;
  const Tensor* b = nullptr;
  const Tensor* c = nullptr;
  Tensor* out = nullptr;
  bool fma = false;  // as MatMulParams::fma
};
using GemmRun = void (*)(const OpContext&, const GemmNode&);
// Rows: "reference" (ref::Gemm), "gemm-fma" (fast: "gemm" with the fused multiply-add
// twins), "gemm" (float: the sums by the GEMM kernels, a constant B packed or transposed
// once per session, then alpha and beta * C as the reference).
const FamilyTable<GemmNode, GemmRun>& GemmTable();

}  // namespace ops
}  // namespace onemodel::impl
