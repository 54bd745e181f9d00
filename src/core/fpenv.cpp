// Floating-point control state (see fpenv.h).
#include "core/fpenv.h"

#if defined(__x86_64__) || defined(__i386__) || defined(_M_X64)
#include <xmmintrin.h>
#define ONEMODEL_FPENV_X86 1
#elif defined(__aarch64__)
#define ONEMODEL_FPENV_ARM64 1
#elif !defined(__EMSCRIPTEN__)
#include <cfenv>
#define ONEMODEL_FPENV_GENERIC 1
#endif

namespace onemodel::impl {
namespace {

#if defined(ONEMODEL_FPENV_X86)
// MXCSR: exception masks set (0x1F80), round to nearest, FTZ (bit 15) and DAZ (bit 6) off.
constexpr uint32_t kExactMxcsr = 0x1F80;
constexpr uint32_t kControlMask = 0xFFC0 | 0x40;  // control bits, not the sticky flags
uint64_t Read() { return _mm_getcsr(); }
void Write(uint64_t v) { _mm_setcsr(uint32_t(v)); }
uint64_t Exact(uint64_t cur) { return (cur & ~uint64_t(kControlMask)) | kExactMxcsr; }
bool IsExact(uint64_t cur) { return (cur & kControlMask) == kExactMxcsr; }
#elif defined(ONEMODEL_FPENV_ARM64)
// FPCR: RMode (bits 22-23) = 0 (nearest), FZ (bit 24) = 0, AHP/DN (25/26) untouched.
uint64_t Read() {
  uint64_t v;
  __asm__ __volatile__("mrs %0, fpcr" : "=r"(v));
  return v;
}
void Write(uint64_t v) { __asm__ __volatile__("msr fpcr, %0" : : "r"(v)); }
constexpr uint64_t kMask = (3ull << 22) | (1ull << 24) | (1ull << 19);  // RMode, FZ, FZ16
uint64_t Exact(uint64_t cur) { return cur & ~kMask; }
bool IsExact(uint64_t cur) { return (cur & kMask) == 0; }
#elif defined(ONEMODEL_FPENV_GENERIC)
// Other CPUs (s390x): the C rounding mode, through <cfenv>. Neither s390x's nor riscv64's
// binary floating point has a flush-to-zero mode.
uint64_t Read() { return uint64_t(std::fegetround()); }
void Write(uint64_t v) { std::fesetround(int(v)); }
uint64_t Exact(uint64_t) { return uint64_t(FE_TONEAREST); }
bool IsExact(uint64_t cur) { return int(cur) == FE_TONEAREST; }
#else
uint64_t Read() { return 0; }
void Write(uint64_t) {}
uint64_t Exact(uint64_t cur) { return cur; }
bool IsExact(uint64_t) { return true; }
#endif

}  // namespace

FpEnvGuard::FpEnvGuard() {
  saved_ = Read();
  if (!IsExact(saved_)) {
    corrected_ = true;
    Write(Exact(saved_));
  }
}

FpEnvGuard::~FpEnvGuard() {
  if (corrected_) Write(saved_);
}

bool SetFlushToZeroForTesting(bool on) {
#if defined(ONEMODEL_FPENV_X86)
  const uint32_t bits = 0x8040;
  Write(on ? (Read() | bits) : (Read() & ~uint64_t(bits)));
  return true;
#elif defined(ONEMODEL_FPENV_ARM64)
  Write(on ? (Read() | (1ull << 24)) : (Read() & ~(1ull << 24)));
  return true;
#else
  (void)on;
  return false;
#endif
}

}  // namespace onemodel::impl
