// The dispatch table: plain data, filled with the reference kernels, then upgraded to
// the best target this build has and this CPU runs, capped by the session's ISA option.
#pragma once

#include <string>
#include <vector>

#include "kernels/kernels.h"

namespace onemodel::impl {

// In upgrade order. kRef is the oracle (reference kernels); kScalar the vector kernels
// on the scalar backend.
// kAvxVnni is AVX2 with the VEX-encoded 8-bit dot products (vpdpbusd, AVX-VNNI);
// kAvx512Vnni AVX-512 with its EVEX-encoded ones (AVX512_VNNI).
enum class Isa { kRef, kScalar, kSse41, kAvx2, kAvxVnni, kAvx512, kAvx512Vnni, kNeon, kNeonDot, kWasm128 };

const char* IsaName(Isa isa);
// Parses "ref", "scalar", "sse41", "avx2", "avxvnni", "avx512", "avx512vnni", "neon", "neondot",
// "wasm128";
// throws kInvalidArgument listing the valid names otherwise.
Isa ParseIsa(const std::string& name);

// Targets compiled into this build, in upgrade order (always starts ref, scalar).
std::vector<Isa> CompiledIsas();
// True when this CPU (or wasm engine) can run the target. Defined by the platform
// layer: native/cpu.cpp (cpuid + xgetbv, getauxval) or wasm/platform.cpp.
bool CpuSupports(Isa isa);
// A one-line description of the CPU features the platform layer detected.
std::string CpuDescription();

// The GEMM and direct-convolution tiles of the AVX-512 targets: 512-bit vectors (GEMM
// 6 x 64 tiles) or the AVX2 kernels' 256-bit ones. kAuto takes 512-bit tiles where the core runs 512-bit
// arithmetic at full width (Avx512FullWidth); cores that split it in two 256-bit halves
// (AMD Zen 4) run the 256-bit tiles faster. The bits are the same either way; the tests
// run both.
enum class Avx512Tiles { kAuto, k256, k512 };

struct Dispatch {
  Isa isa = Isa::kRef;
  KernelTable kernels;
  const LaneBench* lane_bench = nullptr;  // null for kRef
  int gemm_tile_bits = 0;                 // the AVX-512 targets: 256 or 512; 0 elsewhere
};

// Returns the table for the best target at or below `cap`. Asking for a target this
// build lacks or this CPU cannot run is a kUnsupportedIsa error naming it.
Dispatch MakeDispatch(Isa cap, Avx512Tiles tiles = Avx512Tiles::kAuto);
// Whether this core's 512-bit multiply+add rate is at least 1.5x its 256-bit rate,
// measured once per process (about 10 ms, the register-only loops of LaneBench);
// *ratio receives the measured ratio. False where AVX-512 is not compiled or supported.
bool Avx512FullWidth(double* ratio = nullptr);
// The target's register-only multiply+add rate in FLOP per second: the best of `reps`
// timings of LaneBench::muladd_loop(iters).
double MulAddRate(const LaneBench& b, int64_t iters, int reps);
// The best target this build has and this CPU runs.
Isa BestIsa();
// The chosen target and each kernel's provider, one line each.
std::string DescribeDispatch(const Dispatch& d);

}  // namespace onemodel::impl
