// Per-target entry points: fills the kernel table with this target's kernels.
// Compiled once per target (ONEMODEL_NS names it).
#include "core/exact.h"
#include "kernels/fma_v.h"
#include "kernels/kernels.h"
#include "kernels/reduce_sum.h"
#include "kernels/transpose.h"
#include "simd/simd.h"

namespace onemodel::impl {
namespace ONEMODEL_NS {

// Every kernel of the list, defined in this file or another per-target file.
#define ONEMODEL_KERNEL(name, ret, params) ret name params;
#include "kernels/kernels.inc"
#undef ONEMODEL_KERNEL

#if defined(ONEMODEL_BASE_NS)
// A derived target (CMakeLists.txt's onemodel_per_target: avxvnni, avx512vnni, neondot):
// its base target with the 8-bit dot product. Only kernels/gemm_int.cpp is compiled for
// it; every other entry, and the lane bench, are the base target's own.
void FillKernelTable(KernelTable* table) {
  ONEMODEL_BASE_NS::FillKernelTable(table);
  table->GemmI16PairsI32 = &GemmI16PairsI32;
  table->GemmU8S8I32 = &GemmU8S8I32;
  table->DequantTransposeI32F32 = &DequantTransposeI32F32;
  table->QuantizeTransposeF32U8 = &QuantizeTransposeF32U8;
  table->native_dot_u8s8 = kNativeDotU8S8;
}

const LaneBench& GetLaneBench() { return ONEMODEL_BASE_NS::GetLaneBench(); }
#else
float SumF32(const float* x, size_t n) {
#if defined(ONEMODEL_DEMO_BROKEN_KERNEL) && defined(ONEMODEL_TARGET_AVX2)
  // The golden tools' demonstration (tools/golden_broken_demo.sh): on AVX2 only, the
  // sum's lanes are combined left to right instead of by the canonical tree, which
  // rounds differently for some inputs. Never defined in a normal build.
  alignas(64) float lanes[kCanonicalLanes] = {};
  for (size_t j = 0; j < kCanonicalLanes; ++j) lanes[j] = -0.0f;
  for (size_t i = 0; i < n; ++i) lanes[i % kCanonicalLanes] += x[i];
  float acc = -0.0f;
  for (size_t j = 0; j < kCanonicalLanes; ++j) acc += lanes[j];
  return acc;
#else
  return SumCanonicalVec<kCanonicalLanes>(x, n);
#endif
}

namespace {
constexpr int64_t kSL = int64_t(Lanes<VF32>());
// Positions [i0, n) of kG groups of kSL planes from x (plane stride n), added in order to
// the groups' accumulators (lane j of acc[g]: plane g * kSL + j): kSL positions at a time
// by a register transpose, then the rest through a transposed tile in memory. The kG
// chains are independent (the adds' latency is shared between them).
template <int kG>
void SumPlaneGroups(const float* x, int64_t n, VF32* acc) {
  int64_t i = 0;
  for (; i + kSL <= n; i += kSL) {
    for (int g = 0; g < kG; ++g) {
      VF32 v[kSL];
      for (int64_t j = 0; j < kSL; ++j) v[j] = Load<VF32>(x + (g * kSL + j) * n + i);
      TransposeSquare(v);
      for (int64_t q = 0; q < kSL; ++q) acc[g] = Add(acc[g], v[q]);
    }
  }
  if (i == n) return;
  alignas(64) float t[kSL * kSL];
  for (int g = 0; g < kG; ++g) {
    TransposeTile<kSL>(x + g * kSL * n + i, n, t, kSL, kSL, n - i);
    for (int64_t q = 0; q < n - i; ++q) acc[g] = Add(acc[g], Load<VF32>(t + q * kSL));
  }
}
}  // namespace

// Lanes across planes, each lane folding its plane in order from -0.0: ref's bits.
void SumPlanesF32(const float* x, int64_t planes, int64_t n, float* out) {
  int64_t c = 0;
  for (; c + 4 * kSL <= planes; c += 4 * kSL) {
    VF32 acc[4] = {Set<VF32>(-0.0f), Set<VF32>(-0.0f), Set<VF32>(-0.0f), Set<VF32>(-0.0f)};
    SumPlaneGroups<4>(x + c * n, n, acc);
    for (int g = 0; g < 4; ++g) Store(acc[g], out + c + g * kSL);
  }
  for (; c + kSL <= planes; c += kSL) {
    VF32 acc[1] = {Set<VF32>(-0.0f)};
    SumPlaneGroups<1>(x + c * n, n, acc);
    Store(acc[0], out + c);
  }
  for (; c < planes; ++c) {
    float acc = -0.0f;
    for (int64_t i = 0; i < n; ++i) acc = acc + x[c * n + i];
    out[c] = acc;
  }
}

#if defined(ONEMODEL_TARGET_HAS_FMA) && defined(ONEMODEL_TARGET_WASM128)
// Whether this engine's f32x4.relaxed_madd rounds once (the relaxed-SIMD proposal lets it
// multiply and add with two roundings, as V8 does on an x64 CPU without FMA3): the twins
// promise their references' fused bits, so sessions plan them only where it does. The
// operands (1 + 2^-23)(1 - 2^-23) - 1 give -2^-46 fused and 0 otherwise (volatile: the
// compiler must not fold them).
bool RelaxedMaddFuses() {
  volatile float a = 1.0f + 0x1p-23f, b = 1.0f - 0x1p-23f, c = -1.0f;
  const VF32 r = FmaMulAdd(Set<VF32>(a), Set<VF32>(b), Set<VF32>(c));
  float lanes[4];
  Store(r, lanes);
  return lanes[0] == -0x1p-46f && lanes[1] == -0x1p-46f && lanes[2] == -0x1p-46f && lanes[3] == -0x1p-46f;
}
#endif

void FillKernelTable(KernelTable* table) {
#define ONEMODEL_KERNEL(name, ret, params) table->name = &name;
#include "kernels/kernels.inc"
#undef ONEMODEL_KERNEL
  table->native_dot_u8s8 = kNativeDotU8S8;
#if defined(ONEMODEL_TARGET_HAS_FMA) && defined(ONEMODEL_TARGET_WASM128)
  table->fma_f32 = RelaxedMaddFuses();
#elif defined(ONEMODEL_TARGET_HAS_FMA)
  table->fma_f32 = true;  // kernels/gemm.cpp's kFma instances
#endif
  table->f32_lanes = int(Lanes<VF32>());
}

namespace {
float L16(const float* x, size_t n) { return SumCanonicalVec<16>(x, n); }
float L32(const float* x, size_t n) { return SumCanonicalVec<32>(x, n); }
float L64(const float* x, size_t n) { return SumCanonicalVec<64>(x, n); }
float L128(const float* x, size_t n) { return SumCanonicalVec<128>(x, n); }

// Enough independent chains to cover the multiply's and the add's latency on every pipe,
// within the register file (32 vector registers on AVX-512 and NEON, 16 elsewhere: 14
// chains and the two constants).
#if defined(ONEMODEL_TARGET_AVX512) || defined(ONEMODEL_TARGET_NEON) || defined(ONEMODEL_TARGET_NEONDOT)
constexpr int kChains = 24;
#else
constexpr int kChains = 14;
#endif
float MulAddLoop(int64_t iters) {
  VF32 acc[kChains];
#pragma GCC unroll 32
  for (int i = 0; i < kChains; ++i) acc[i] = Set<VF32>(float(i));
  const VF32 half = Set<VF32>(0.5f), one = Set<VF32>(1.0f);
  for (int64_t it = 0; it < iters; ++it) {
#pragma GCC unroll 32
    for (int i = 0; i < kChains; ++i) acc[i] = Add(Mul(acc[i], half), one);
  }
  VF32 s = acc[0];
  for (int i = 1; i < kChains; ++i) s = Add(s, acc[i]);
  return ReduceSumTree(s);
}
}  // namespace

const LaneBench& GetLaneBench() {
  static const LaneBench kBench{&L16, &L32, &L64, &L128, &MulAddLoop, kChains, int(Lanes<VF32>())};
  return kBench;
}

#endif  // ONEMODEL_BASE_NS

}  // namespace ONEMODEL_NS
}  // namespace onemodel::impl
