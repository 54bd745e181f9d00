// Declarations of the per-target kernels (inside a target namespace) and of the
// per-target entry points, generated from kernels.inc.
#pragma once

#include <cstddef>
#include <cstdint>

#include "ref/conv.h"
#include "ref/elementwise.h"
#include "ref/gemm.h"
#include "ref/winograd.h"

namespace onemodel::impl {

struct KernelTable {
#define ONEMODEL_KERNEL(name, ret, params) ret(*name) params = nullptr;
#include "kernels/kernels.inc"
#undef ONEMODEL_KERNEL
  // GemmU8S8I32 runs on single dot-product instructions (VNNI): the integer operators
  // prefer it to GemmI16PairsI32 then (the same bits either way).
  bool native_dot_u8s8 = false;
  // The GEMM kernels' fast twins (GemmFmaF32 and the others) run on hardware fused
  // multiply-adds; false: they run the reference's loops (correct, slow), and fast
  // sessions plan the exact GEMM rows instead.
  bool fma_f32 = false;
  // The float lanes of the target's vectors (1 for the reference table): NBitsGemmF32
  // shares a weight vector among 8 / (16 / lanes) rows, worth a prompt's rows from 8 on.
  int f32_lanes = 1;
};

// The oracle's table: every entry is the reference kernel ref::<name> (src/ref/).
const KernelTable& ReferenceKernelTable();

// Benchmark entry points of the L-lane sum (tools/bench_lanes.sh), per target.
struct LaneBench {
  float (*sum_l16)(const float*, size_t);
  float (*sum_l32)(const float*, size_t);
  float (*sum_l64)(const float*, size_t);
  float (*sum_l128)(const float*, size_t);
  // The register-only peak of exact mode's arithmetic (tools/bench.mjs): `chains`
  // independent chains of acc = acc * 0.5 + 1 (a multiply, then an add: 2 FLOP per lane),
  // iters steps each, no memory traffic; returns a value of the accumulators.
  float (*muladd_loop)(int64_t iters);
  int muladd_chains;
  int f32_lanes;
};

#define ONEMODEL_DECLARE_TARGET(ns)         \
  namespace ns {                            \
  void FillKernelTable(KernelTable* table); \
  const LaneBench& GetLaneBench();          \
  }
ONEMODEL_DECLARE_TARGET(scalar)
ONEMODEL_DECLARE_TARGET(sse41)
ONEMODEL_DECLARE_TARGET(avx2)
ONEMODEL_DECLARE_TARGET(avxvnni)
ONEMODEL_DECLARE_TARGET(avx512)
ONEMODEL_DECLARE_TARGET(avx512vnni)
ONEMODEL_DECLARE_TARGET(neon)
ONEMODEL_DECLARE_TARGET(neondot)
ONEMODEL_DECLARE_TARGET(wasm128)
#undef ONEMODEL_DECLARE_TARGET

}  // namespace onemodel::impl
