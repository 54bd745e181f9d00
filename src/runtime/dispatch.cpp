// Dispatch table construction (see dispatch.h).
#include "runtime/dispatch.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "core/error.h"

namespace onemodel::impl {
namespace {

struct TargetEntry {
  Isa isa;
  void (*fill)(KernelTable*);
  const LaneBench& (*bench)();
};

const std::vector<TargetEntry>& Targets() {
  static const std::vector<TargetEntry> kTargets = {
    {Isa::kScalar, &scalar::FillKernelTable, &scalar::GetLaneBench},
#if defined(ONEMODEL_HAVE_SSE41)
    {Isa::kSse41, &sse41::FillKernelTable, &sse41::GetLaneBench},
#endif
#if defined(ONEMODEL_HAVE_AVX2)
    {Isa::kAvx2, &avx2::FillKernelTable, &avx2::GetLaneBench},
#endif
#if defined(ONEMODEL_HAVE_AVXVNNI)
    {Isa::kAvxVnni, &avxvnni::FillKernelTable, &avxvnni::GetLaneBench},
#endif
#if defined(ONEMODEL_HAVE_AVX512)
    {Isa::kAvx512, &avx512::FillKernelTable, &avx512::GetLaneBench},
#endif
#if defined(ONEMODEL_HAVE_AVX512VNNI)
    {Isa::kAvx512Vnni, &avx512vnni::FillKernelTable, &avx512vnni::GetLaneBench},
#endif
#if defined(ONEMODEL_HAVE_NEON)
    {Isa::kNeon, &neon::FillKernelTable, &neon::GetLaneBench},
#endif
#if defined(ONEMODEL_HAVE_NEONDOT)
    {Isa::kNeonDot, &neondot::FillKernelTable, &neondot::GetLaneBench},
#endif
#if defined(ONEMODEL_HAVE_WASM128)
    {Isa::kWasm128, &wasm128::FillKernelTable, &wasm128::GetLaneBench},
#endif
  };
  return kTargets;
}

void FillRef(KernelTable* t) { *t = ReferenceKernelTable(); }

}  // namespace

const char* IsaName(Isa isa) {
  switch (isa) {
    case Isa::kRef: return "ref";
    case Isa::kScalar: return "scalar";
    case Isa::kSse41: return "sse41";
    case Isa::kAvx2: return "avx2";
    case Isa::kAvxVnni: return "avxvnni";
    case Isa::kAvx512: return "avx512";
    case Isa::kAvx512Vnni: return "avx512vnni";
    case Isa::kNeon: return "neon";
    case Isa::kNeonDot: return "neondot";
    case Isa::kWasm128: return "wasm128";
  }
  return "?";
}

Isa ParseIsa(const std::string& name) {
  for (Isa i : {Isa::kRef, Isa::kScalar, Isa::kSse41, Isa::kAvx2, Isa::kAvxVnni, Isa::kAvx512, Isa::kAvx512Vnni,
                Isa::kNeon, Isa::kNeonDot, Isa::kWasm128}) {
    if (name == IsaName(i)) return i;
  }
  throw Error(ErrorCode::kInvalidArgument,
              "unknown ISA '" + name +
                  "' (valid: ref, scalar, sse41, avx2, avxvnni, avx512, avx512vnni, neon, neondot, wasm128)");
}

std::vector<Isa> CompiledIsas() {
  std::vector<Isa> v{Isa::kRef};
  for (const TargetEntry& t : Targets()) v.push_back(t.isa);
  return v;
}

double MulAddRate(const LaneBench& b, int64_t iters, int reps) {
  double best = 1e300;
  volatile float sink = 0;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    sink = b.muladd_loop(iters);
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  (void)sink;
  return double(iters) * b.muladd_chains * b.f32_lanes * 2.0 / std::max(best, 1e-9);
}

bool Avx512FullWidth(double* ratio) {
  static const double measured = [] {
#if defined(ONEMODEL_HAVE_AVX512) && defined(ONEMODEL_HAVE_AVX2)
    if (!CpuSupports(Isa::kAvx512)) return 0.0;
    MulAddRate(avx512::GetLaneBench(), 100000, 1);  // warm up (clock ramp, page-in)
    return MulAddRate(avx512::GetLaneBench(), 100000, 3) / MulAddRate(avx2::GetLaneBench(), 100000, 3);
#else
    return 0.0;
#endif
  }();
  if (ratio) *ratio = measured;
  return measured >= 1.5;
}

Dispatch MakeDispatch(Isa cap, Avx512Tiles tiles) {
  bool compiled = false;
  for (Isa i : CompiledIsas()) compiled |= (i == cap);
  if (!compiled) {
    std::string have;
    for (Isa i : CompiledIsas()) have += std::string(have.empty() ? "" : ", ") + IsaName(i);
    throw Error(ErrorCode::kUnsupportedIsa,
                std::string("ISA '") + IsaName(cap) + "' is not compiled into this build (it has: " + have + ")");
  }
  if (!CpuSupports(cap)) {
    throw Error(ErrorCode::kUnsupportedIsa,
                std::string("ISA '") + IsaName(cap) + "' is not supported by this CPU (" + CpuDescription() + ")");
  }
  Dispatch d;
  FillRef(&d.kernels);
  d.isa = Isa::kRef;
  if (cap == Isa::kRef) return d;
  for (const TargetEntry& t : Targets()) {
    if (int(t.isa) > int(cap) || !CpuSupports(t.isa)) continue;
    t.fill(&d.kernels);
    d.isa = t.isa;
    d.lane_bench = &t.bench();
  }
#if defined(ONEMODEL_HAVE_AVX512) && defined(ONEMODEL_HAVE_AVX2)
  if (d.isa == Isa::kAvx512 || d.isa == Isa::kAvx512Vnni) {
    const bool full = tiles == Avx512Tiles::k512 || (tiles == Avx512Tiles::kAuto && Avx512FullWidth());
    d.gemm_tile_bits = full ? 512 : 256;
    if (!full) {  // the AVX2 kernels' GEMM entries (one layout of packed B for all four) and direct conv
      KernelTable half;
      avx2::FillKernelTable(&half);
      d.kernels.GemmF32 = half.GemmF32;
      d.kernels.GemmBiasActF32 = half.GemmBiasActF32;
      d.kernels.GemmPackBF32 = half.GemmPackBF32;
      d.kernels.GemmPackedF32 = half.GemmPackedF32;
      d.kernels.GemmPackedIndirectF32 = half.GemmPackedIndirectF32;
      d.kernels.GemmFmaF32 = half.GemmFmaF32;
      d.kernels.GemmBiasActFmaF32 = half.GemmBiasActFmaF32;
      d.kernels.GemmPackedFmaF32 = half.GemmPackedFmaF32;
      d.kernels.GemmPackedIndirectFmaF32 = half.GemmPackedIndirectFmaF32;
      d.kernels.ConvDirectF32 = half.ConvDirectF32;
    }
  }
#else
  (void)tiles;
#endif
  return d;
}

Isa BestIsa() {
  Isa best = Isa::kRef;
  for (Isa i : CompiledIsas()) {
    if (CpuSupports(i)) best = i;
  }
  return best;
}

std::string DescribeDispatch(const Dispatch& d) {
  std::string s = std::string("[onemodel] target: ") + IsaName(d.isa) + " (cpu: " + CpuDescription() + ")\n";
  if (d.gemm_tile_bits) {
    double ratio = 0;
    Avx512FullWidth(&ratio);
    char t[160];
    std::snprintf(t, sizeof t,
                  "[onemodel] gemm tiles: %d-bit (512-bit multiply+add measured at %.2fx the 256-bit rate; "
                  "512-bit tiles from 1.5x)\n",
                  d.gemm_tile_bits, ratio);
    s += t;
  }
  s += std::string("[onemodel] fused multiply-add for fast mode's twins: ") +
       (d.kernels.fma_f32 ? "yes" : "no (fast mode plans no FMA row)") + "\n";
  KernelTable ref_table;
  FillRef(&ref_table);
  char line[96];
#define ONEMODEL_KERNEL(name, ret, params)                                  \
  std::snprintf(line, sizeof line, "[onemodel]   kernel %-24s %s\n", #name, \
                d.kernels.name == ref_table.name ? "ref" : IsaName(d.isa)); \
  s += line;
#include "kernels/kernels.inc"
#undef ONEMODEL_KERNEL
  return s;
}

}  // namespace onemodel::impl
