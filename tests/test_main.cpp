// Test entry: `onemodel_tests [--isa ISA] [catch2 options]`. Prints the row (target and
// build) first so every row of tools/test.sh names itself.
#include "tests/catch.h"
#include "tests/catch_run.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <new>
#include <sstream>
#include <string>
#include <vector>

#include "core/error.h"
#include "tests/test_util.h"

// The test binary's global operator new: malloc, counted while a test asks
// (StartCountingAllocations). The library itself never replaces it.
namespace {
std::atomic<bool> g_counting{false};
std::atomic<long> g_allocations{0};
void* CountedNew(std::size_t n) {
  if (g_counting.load(std::memory_order_relaxed)) g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
}  // namespace
// ThreadSanitizer's runtime defines operator new and delete itself: the tests that count
// allocations ([allocs]) are left out of the TSan row (tools/test.sh counts them skipped).
#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define ONEMODEL_TEST_TSAN 1
#endif
#endif
#if !defined(ONEMODEL_TEST_TSAN)
void* operator new(std::size_t n) { return CountedNew(n); }
void* operator new[](std::size_t n) { return CountedNew(n); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
// The nothrow forms too (std::stable_sort's buffer uses them), so every new pairs with
// this file's delete.
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  try {
    return CountedNew(n);
  } catch (...) {
    return nullptr;
  }
}
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept {
  try {
    return CountedNew(n);
  } catch (...) {
    return nullptr;
  }
}
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }
#endif

namespace onemodel::impl {
namespace test {
namespace {
Isa g_isa = Isa::kRef;
}
void StartCountingAllocations() {
  g_allocations.store(0);
  g_counting.store(true);
}
long StopCountingAllocations() {
  g_counting.store(false);
  return g_allocations.load();
}
Isa ActiveIsa() { return g_isa; }
void SetActiveIsa(Isa isa) { g_isa = isa; }

const std::vector<float>& F32Specials() {
  static const std::vector<float> v = [] {
    std::vector<float> s = {0.0f,
                            -0.0f,
                            1.0f,
                            -1.0f,
                            0.5f,
                            -0.5f,
                            1.5f,
                            -1.5f,
                            2.5f,
                            -2.5f,
                            3.5f,
                            -3.5f,
                            0.49999997f,
                            8388607.5f,
                            8388608.0f,
                            8388609.0f,
                            16777216.0f,
                            16777217.0f,
                            2147483520.0f,
                            2147483648.0f,
                            -2147483648.0f,
                            -2147483904.0f,
                            4294967296.0f,
                            1e10f,
                            -1e10f,
                            255.5f,
                            256.0f,
                            -128.5f,
                            65535.5f,
                            3.4028235e38f,
                            -3.4028235e38f,
                            1.17549435e-38f,
                            -1.17549435e-38f};
    s.push_back(std::numeric_limits<float>::infinity());
    s.push_back(-std::numeric_limits<float>::infinity());
    s.push_back(U2F(0x7FC00000u));  // quiet NaN
    s.push_back(U2F(0xFFC00001u));  // negative quiet NaN with payload
    s.push_back(U2F(0x7F800001u));  // signalling NaN
    s.push_back(U2F(0x00000001u));  // smallest subnormal
    s.push_back(U2F(0x80000001u));
    s.push_back(U2F(0x007FFFFFu));  // largest subnormal
    s.push_back(U2F(0x807FFFFFu));
    s.push_back(U2F(0x00400000u));
    return s;
  }();
  return v;
}

std::string DiffF32(const float* want, const float* got, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    if (!SameF32(want[i], got[i])) {
      char buf[160];
      std::snprintf(buf, sizeof buf, "first difference at element %zu: want 0x%08x (%.9g), got 0x%08x (%.9g)", i,
                    F2U(want[i]), double(want[i]), F2U(got[i]), double(got[i]));
      return buf;
    }
  }
  return "";
}

std::string DiffBytes(const uint8_t* want, const uint8_t* got, size_t n, size_t elem_size) {
  for (size_t i = 0; i < n; i += elem_size) {
    if (std::memcmp(want + i, got + i, elem_size) != 0) {
      std::ostringstream s;
      s << "first difference at element " << i / elem_size << ": want 0x";
      char h[4];
      for (size_t k = elem_size; k-- > 0;) {
        std::snprintf(h, sizeof h, "%02x", want[i + k]);
        s << h;
      }
      s << ", got 0x";
      for (size_t k = elem_size; k-- > 0;) {
        std::snprintf(h, sizeof h, "%02x", got[i + k]);
        s << h;
      }
      return s.str();
    }
  }
  return "";
}

}  // namespace test
}  // namespace onemodel::impl

int main(int argc, char** argv) {
  using namespace onemodel::impl;
  std::vector<char*> rest;
  rest.push_back(argv[0]);
  std::string isa_name;
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--isa" && i + 1 < argc)
      isa_name = argv[++i];
    else
      rest.push_back(argv[i]);
  }
  if (isa_name.empty()) {  // the test binary (not the engine) reads ONEMODEL_ISA
    if (const char* e = std::getenv("ONEMODEL_ISA")) isa_name = e;
  }
  try {
    test::SetActiveIsa(isa_name.empty() ? BestIsa() : ParseIsa(isa_name));
    (void)MakeDispatch(test::ActiveIsa());  // fails clearly if the CPU lacks it
  } catch (const Error& e) {
    std::fprintf(stderr, "onemodel_tests: %s\n", e.what());
    return 2;
  }
  std::printf("row: target=%s cpu=\"%s\"\n", IsaName(test::ActiveIsa()), CpuDescription().c_str());
  std::fflush(stdout);
  return RunCatchSession(int(rest.size()), rest.data());
}
