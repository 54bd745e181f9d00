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

#if defined(ONEMODEL_FPENV_X86) && defined(__i386__)
// 32-bit x86: MXCSR as below in the low half, and the x87 control word in the high half:
// the compiler converts 64-bit integers to floats through the x87 unit (fild, an exact
// fadd of 2^64 for unsigned values, one rounding at the store), which rounds by its
// control word: round to nearest (RC, bits 10-11, 0) at extended precision (PC, bits
// 8-9, 3), exceptions masked (bits 0-5).
constexpr uint32_t kExactMxcsr = 0x1F80;
constexpr uint32_t kControlMask = 0xFFC0 | 0x40;
constexpr uint64_t kX87Mask = 0x0F3F, kExactX87 = 0x033F;
uint64_t Read() {
  uint16_t cw;
  __asm__ __volatile__("fnstcw %0" : "=m"(cw));
  return uint64_t(cw) << 32 | _mm_getcsr();
}
void Write(uint64_t v) {
  _mm_setcsr(uint32_t(v));
  const uint16_t cw = uint16_t(v >> 32);
  __asm__ __volatile__("fldcw %0" : : "m"(cw));
}
uint64_t Exact(uint64_t cur) {
  return (cur & ~(uint64_t(kControlMask) | kX87Mask << 32)) | kExactMxcsr | kExactX87 << 32;
}
bool IsExact(uint64_t cur) { return (cur & kControlMask) == kExactMxcsr && (cur >> 32 & kX87Mask) == kExactX87; }
#elif defined(ONEMODEL_FPENV_X86)
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
