// Per-target entry points: fills the kernel table with this target's kernels.
// Compiled once per target (ONEMODEL_NS names it).
#include "core/exact.h"
#include "kernels/kernels.h"
#include "kernels/reduce_sum.h"

namespace onemodel {
namespace ONEMODEL_NS {

float SumF32(const float* x, size_t n) { return SumCanonicalVec<kCanonicalLanes>(x, n); }

void FillKernelTable(KernelTable* table) {
#define ONEMODEL_KERNEL(name, ret, params) table->name = &name;
#include "kernels/kernels.inc"
#undef ONEMODEL_KERNEL
}

namespace {
float L16(const float* x, size_t n) { return SumCanonicalVec<16>(x, n); }
float L32(const float* x, size_t n) { return SumCanonicalVec<32>(x, n); }
float L64(const float* x, size_t n) { return SumCanonicalVec<64>(x, n); }
float L128(const float* x, size_t n) { return SumCanonicalVec<128>(x, n); }
}  // namespace

const LaneBench& GetLaneBench() {
  static const LaneBench kBench{&L16, &L32, &L64, &L128};
  return kBench;
}

}  // namespace ONEMODEL_NS
}  // namespace onemodel
