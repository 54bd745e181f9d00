// CPU feature detection for native builds: cpuid + xgetbv on x86-64 (the OS must save
// the wider registers, not only the CPU have them), getauxval on arm64.
#include <string>

#include "runtime/dispatch.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#define ONEMODEL_CPU_X86 1
#elif defined(__aarch64__) && defined(__linux__)
#include <asm/hwcap.h>
#include <sys/auxv.h>
#define ONEMODEL_CPU_ARM64_LINUX 1
#elif defined(__aarch64__)
#define ONEMODEL_CPU_ARM64_OTHER 1
#endif

namespace onemodel::impl {
namespace {

struct Features {
  bool sse41 = false, avx2 = false, avxvnni = false, avx512 = false, avx512vnni = false, neon = false, neondot = false;
};

#if defined(ONEMODEL_CPU_X86)
uint64_t XGetBv() {
  uint32_t lo, hi;
  __asm__ __volatile__("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return (uint64_t(hi) << 32) | lo;
}
#endif

Features Detect() {
  Features f;
#if defined(ONEMODEL_CPU_X86)
  unsigned a, b, c, d;
  if (!__get_cpuid(1, &a, &b, &c, &d)) return f;
  f.sse41 = (c >> 19) & 1;
  const bool osxsave = (c >> 27) & 1, avx = (c >> 28) & 1, fma = (c >> 12) & 1;
  uint64_t xcr0 = osxsave ? XGetBv() : 0;
  const bool ymm_saved = (xcr0 & 0x6) == 0x6;
  const bool zmm_saved = (xcr0 & 0xE6) == 0xE6;
  if (__get_cpuid_max(0, nullptr) >= 7) {
    __cpuid_count(7, 0, a, b, c, d);
    const unsigned max_subleaf = a;
    // The avx2 target is AVX2 with FMA3 (fast mode's GEMM twins; every AVX2 CPU has it).
    f.avx2 = avx && fma && ymm_saved && ((b >> 5) & 1);
    const bool f512 = (b >> 16) & 1, dq = (b >> 17) & 1, bw = (b >> 30) & 1, vl = (b >> 31) & 1;
    f.avx512 = f.avx2 && zmm_saved && f512 && dq && bw && vl;
    f.avx512vnni = f.avx512 && ((c >> 11) & 1);  // leaf 7.0 ecx: AVX512_VNNI
    if (max_subleaf >= 1) {
      __cpuid_count(7, 1, a, b, c, d);
      f.avxvnni = f.avx2 && ((a >> 4) & 1);  // leaf 7.1 eax: AVX-VNNI
    }
  }
#elif defined(ONEMODEL_CPU_ARM64_LINUX)
  const unsigned long hw = getauxval(AT_HWCAP);
  f.neon = (hw & HWCAP_ASIMD) != 0;
  f.neondot = f.neon && (hw & HWCAP_ASIMDDP) != 0;
#elif defined(ONEMODEL_CPU_ARM64_OTHER)
  f.neon = true;  // Advanced SIMD is mandatory on AArch64
#if defined(__ARM_FEATURE_DOTPROD)
  f.neondot = true;
#endif
#endif
  return f;
}

const Features& Get() {
  static const Features f = Detect();
  return f;
}

}  // namespace

bool CpuSupports(Isa isa) {
  const Features& f = Get();
  switch (isa) {
    case Isa::kRef:
    case Isa::kScalar: return true;
    case Isa::kSse41: return f.sse41;
    case Isa::kAvx2: return f.avx2;
    case Isa::kAvxVnni: return f.avxvnni;
    case Isa::kAvx512: return f.avx512;
    case Isa::kAvx512Vnni: return f.avx512vnni;
    case Isa::kNeon: return f.neon;
    case Isa::kNeonDot: return f.neondot;
    case Isa::kWasm128: return false;
  }
  return false;
}

std::string CpuDescription() {
  const Features& f = Get();
  std::string s;
#if defined(ONEMODEL_CPU_X86) && defined(__i386__)
  s = "x86 (32-bit)";
#elif defined(ONEMODEL_CPU_X86)
  s = "x86-64";
#elif defined(__aarch64__)
  s = "arm64";
#elif defined(__s390x__)
  s = "s390x (big-endian)";
#elif defined(__riscv) && __riscv_xlen == 64
  s = "riscv64";
#else
  s = "generic";
#endif
  if (f.sse41) s += " sse4.1";
  if (f.avx2) s += " avx2";
  if (f.avxvnni) s += " avx-vnni";
  if (f.avx512) s += " avx512(f,bw,dq,vl)";
  if (f.avx512vnni) s += " avx512-vnni";
  if (f.neon) s += " asimd";
  if (f.neondot) s += " asimddp";
  return s;
}

}  // namespace onemodel::impl
