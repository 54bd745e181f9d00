// Kernel tests: every kernel of the dispatch table on the target under test, bitwise
// against its reference kernel: lengths 1 .. 4L+3 and one large, specials included.
#include "tests/catch.h"

#include <cstring>
#include <vector>

#include "core/error.h"
#include "core/exact.h"
#include "core/random.h"
#include "core/threadpool.h"
#include "ref/reduce.h"
#include "runtime/dispatch.h"
#include "tests/test_util.h"

namespace onemodel {
namespace test {

TEST_CASE("kernels: SumF32 equals the canonical L-lane reference", "[kernels]") {
  const Dispatch d = MakeDispatch(ActiveIsa());
  REQUIRE(d.kernels.SumF32 != nullptr);
  SplitMix64 rng(7);
  std::vector<size_t> lengths;
  for (size_t n = 0; n <= 4 * kCanonicalLanes + 3; ++n) lengths.push_back(n);
  lengths.push_back(100003);
  for (size_t n : lengths) {
    for (int variant = 0; variant < 3; ++variant) {
      // Guard floats around the input catch reads past the end (they are NaN bombs).
      std::vector<float> buf(n + 32, U2F(0x7FC0DEADu));
      float* x = buf.data() + 16;
      for (size_t i = 0; i < n; ++i) {
        if (variant == 0) x[i] = rng.Uniform(-1.0f, 1.0f);
        else if (variant == 1) x[i] = rng.Uniform(-1.0f, 1.0f) * float(1u << (rng.NextU32() % 30));
        else x[i] = (rng.NextU32() % 4 == 0) ? F32Specials()[rng.NextU32() % F32Specials().size()]
                                              : rng.Uniform(-8.0f, 8.0f);
      }
      const float want = ref::SumF32(x, n), got = d.kernels.SumF32(x, n);
      if (!SameF32(want, got)) {
        FAIL_CHECK(IsaName(d.isa) << " n=" << n << " variant " << variant << ": want 0x" << std::hex << F2U(want)
                                   << " got 0x" << F2U(got));
      }
    }
  }
  // Signed zeros: the identity is -0.0, so a sum of -0.0s stays -0.0 and of an empty run is -0.0.
  std::vector<float> negz(37, -0.0f);
  CHECK(F2U(d.kernels.SumF32(negz.data(), negz.size())) == 0x80000000u);
  CHECK(F2U(d.kernels.SumF32(negz.data(), 0)) == 0x80000000u);
}

TEST_CASE("kernels: results do not depend on the thread count", "[kernels][threads]") {
  const Dispatch d = MakeDispatch(ActiveIsa());
  const int64_t rows = 257;
  const size_t cols = 1000;
  std::vector<float> x(size_t(rows) * cols);
  SplitMix64 rng(11);
  for (float& v : x) v = rng.Uniform(-100.0f, 100.0f);
  std::vector<float> want(static_cast<size_t>(rows));
  for (int64_t r = 0; r < rows; ++r) want[size_t(r)] = ref::SumF32(x.data() + size_t(r) * cols, cols);
  for (int threads : {1, 2, 3, 7}) {
    ThreadPool pool(threads);
    std::vector<float> got(static_cast<size_t>(rows), 0.0f);
    pool.ParallelFor(rows, 1, [&](int64_t b, int64_t e) {
      for (int64_t r = b; r < e; ++r) got[size_t(r)] = d.kernels.SumF32(x.data() + size_t(r) * cols, cols);
    });
    INFO("threads " << threads);
    CHECK(DiffF32(want.data(), got.data(), want.size()) == "");
  }
}

TEST_CASE("dispatch: ISA names and errors", "[dispatch]") {
  CHECK(ParseIsa("avx2") == Isa::kAvx2);
  try {
    (void)ParseIsa("avx9");
    FAIL("no error for avx9");
  } catch (const Error& e) {
    CHECK(e.code() == ErrorCode::kInvalidArgument);
    CHECK(std::string(e.what()).find("unknown ISA 'avx9'") != std::string::npos);
  }
  bool found_unsupported = false;
  for (Isa i : {Isa::kSse41, Isa::kAvx2, Isa::kAvx512, Isa::kNeon, Isa::kNeonDot, Isa::kWasm128}) {
    bool compiled = false;
    for (Isa c : CompiledIsas()) compiled |= c == i;
    if (!compiled || !CpuSupports(i)) {
      found_unsupported = true;
      try {
        (void)MakeDispatch(i);
        FAIL("no error for " << IsaName(i));
      } catch (const Error& e) {
        CHECK(e.code() == ErrorCode::kUnsupportedIsa);
        CHECK(std::string(e.what()).find(IsaName(i)) != std::string::npos);
      }
    }
  }
  CHECK(found_unsupported);  // every build lacks some target (x64 has no neon, ...)
  CHECK(MakeDispatch(Isa::kRef).isa == Isa::kRef);
}

}  // namespace test
}  // namespace onemodel
