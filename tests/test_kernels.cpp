// Kernel tests: every kernel of the dispatch table on the target under test, bitwise
// against its reference kernel: lengths 1 .. 4L+3 and one large, specials included.
#include "tests/catch.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <limits>
#include <vector>

#include "core/error.h"
#include "core/exact.h"
#include "core/random.h"
#include "core/threadpool.h"
#include "ref/conv.h"
#include "ref/gemm.h"
#include "ref/elementwise.h"
#include "ref/softmax.h"
#include "ref/winograd.h"
#include "ref/transpose.h"
#include "ref/math.h"
#include "ref/nbits.h"
#include "ref/reduce.h"
#include "runtime/dispatch.h"
#include "tests/test_util.h"

namespace onemodel::impl {
namespace test {
namespace {
// Every length from 0 to 4L+3 (tails of every vector width), then one large length.
std::vector<size_t> Lengths(size_t large) {
  std::vector<size_t> v;
  for (size_t n = 0; n <= 4 * kCanonicalLanes + 3; ++n) v.push_back(n);
  v.push_back(large);
  return v;
}
}  // namespace

// The tables a GEMM test runs: the active ISA's, and on the AVX-512 targets both tile
// widths (the session takes one of them by the core's measured width).
std::vector<Dispatch> GemmDispatches() {
  std::vector<Dispatch> v{MakeDispatch(ActiveIsa())};
  if (v[0].gemm_tile_bits) {
    v.push_back(MakeDispatch(ActiveIsa(), Avx512Tiles::k256));
    v.push_back(MakeDispatch(ActiveIsa(), Avx512Tiles::k512));
  }
  return v;
}

TEST_CASE("kernels: SumF32 equals the canonical L-lane reference", "[kernels]") {
  const Dispatch d = MakeDispatch(ActiveIsa());
  REQUIRE(d.kernels.SumF32 != nullptr);
  SplitMix64 rng(7);
  const std::vector<size_t> lengths = Lengths(100003);
  for (size_t n : lengths) {
    for (int variant = 0; variant < 3; ++variant) {
      // Guard floats around the input catch reads past the end (they are NaN bombs).
      std::vector<float> buf(n + 32, U2F(0x7FC0DEADu));
      float* x = buf.data() + 16;
      for (size_t i = 0; i < n; ++i) {
        if (variant == 0)
          x[i] = rng.Uniform(-1.0f, 1.0f);
        else if (variant == 1)
          x[i] = rng.Uniform(-1.0f, 1.0f) * float(1u << (rng.NextU32() % 30));
        else
          x[i] =
              (rng.NextU32() % 4 == 0) ? F32Specials()[rng.NextU32() % F32Specials().size()] : rng.Uniform(-8.0f, 8.0f);
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

namespace {
// Fills x with values of one of three kinds: plain, wide-range, or with specials mixed in
// (NaN, +-0, +-inf, subnormals, ties: the corpus of test_util).
void Fill(SplitMix64& rng, float* x, size_t n, int variant) {
  for (size_t i = 0; i < n; ++i) {
    if (variant == 0)
      x[i] = rng.Uniform(-1.0f, 1.0f);
    else if (variant == 1)
      x[i] = rng.Uniform(-1.0f, 1.0f) * float(1u << (rng.NextU32() % 30));
    else
      x[i] = (rng.NextU32() % 5 == 0) ? F32Specials()[rng.NextU32() % F32Specials().size()] : rng.Uniform(-4.0f, 4.0f);
  }
}
constexpr uint32_t kGuard = 0x7FC0DEADu;  // a NaN written around outputs: must survive
}  // namespace

// Each GEMM test runs the exact kernel against its reference and fast mode's FMA twin
// against the twin's reference (ref/gemm.h: the same fold with fused steps).
TEST_CASE("kernels: GemmF32 and GemmFmaF32 equal their reference folds for every shape and layout", "[kernels][gemm]") {
  for (const Dispatch& d : GemmDispatches())
    for (const bool fma : {false, true}) {
      auto kernel = [&](auto... args) { fma ? d.kernels.GemmFmaF32(args...) : d.kernels.GemmF32(args...); };
      auto* reference = fma ? &ref::GemmFmaF32 : &ref::GemmF32;
      REQUIRE((d.kernels.GemmF32 && d.kernels.GemmFmaF32 && d.kernels.GemmBiasActF32 && d.kernels.GemmBiasActFmaF32 &&
               d.kernels.GemmPackedF32 && d.kernels.GemmPackedFmaF32 && d.kernels.GemmPackedIndirectF32 &&
               d.kernels.GemmPackedIndirectFmaF32));
      SplitMix64 rng(21);
      // Sizes around every tile and block edge: register tiles (4, 8 rows; 8, 16, 32, 64
      // columns), the K block (256) and the N block (512).
      const int64_t ms[] = {1, 2, 3, 4, 5, 7, 8, 9, 13, 17};
      const int64_t ns[] = {1, 3, 7, 8, 9, 15, 16, 17, 31, 33, 64, 65};
      const int64_t ks[] = {0, 1, 2, 5, 16, 31};
      int cases = 0;
      auto run = [&](int64_t M, int64_t N, int64_t K, bool ta, bool tb, int64_t ldc_pad, int variant) {
        std::vector<float> a(size_t(std::max<int64_t>(M * K, 1))), b(size_t(std::max<int64_t>(K * N, 1)));
        Fill(rng, a.data(), a.size(), variant);
        Fill(rng, b.data(), b.size(), variant);
        const int64_t ldc = N + ldc_pad;
        std::vector<float> want(size_t(M * ldc), U2F(kGuard)), got(size_t(M * ldc), U2F(kGuard));
        const int64_t a_rs = ta ? 1 : K, a_cs = ta ? M : 1, b_rs = tb ? 1 : N, b_cs = tb ? K : 1;
        reference(M, N, K, a.data(), a_rs, a_cs, b.data(), b_rs, b_cs, want.data(), ldc);
        kernel(M, N, K, a.data(), a_rs, a_cs, b.data(), b_rs, b_cs, got.data(), ldc);
        ++cases;
        for (size_t i = 0; i < want.size(); ++i) {
          // Padding columns keep their guard bits exactly.
          const bool pad = int64_t(i) % ldc >= N;
          if (pad ? F2U(got[i]) != kGuard : !SameF32(want[i], got[i])) {
            FAIL_CHECK(IsaName(d.isa) << (fma ? " fma" : "") << " M=" << M << " N=" << N << " K=" << K << " ta=" << ta
                                      << " tb=" << tb << " ldc=" << ldc << " variant " << variant << " at " << i
                                      << ": want 0x" << std::hex << F2U(want[i]) << " got 0x" << F2U(got[i]));
            return;
          }
        }
      };
      for (int64_t M : ms)
        for (int64_t N : ns)
          for (int64_t K : ks)
            run(M, N, K, (M + N) % 2 == 1, (N + K) % 3 == 0, (M % 3 == 0) ? 3 : 0, int((M + N + K) % 3));
      // Across the K block (256) and the N block (512), every layout and input kind.
      for (bool ta : {false, true})
        for (bool tb : {false, true})
          for (int variant = 0; variant < 3; ++variant) {
            run(11, 530, 300, ta, tb, 0, variant);
            run(37, 77, 513, ta, tb, 5, variant);
          }
      run(64, 1024, 600, false, false, 0, 0);  // a large one
      // Few rows against a transposed B across its k blocks (64) and output blocks (4 vectors).
      for (int64_t M : {1, 2, 3, 5, 7})
        for (int variant = 0; variant < 3; ++variant) run(M, 131, 200, M % 2 == 0, true, M == 3 ? 2 : 0, variant);
      INFO(cases << " shapes");
      // Signed zeros: a fold of -0.0 products starts at -0.0 and stays -0.0; K = 0 gives -0.0.
      std::vector<float> z(16, -0.0f), one(16, 1.0f), c(4, 0.0f);
      kernel(2, 2, 4, z.data(), 4, 1, one.data(), 2, 1, c.data(), 2);
      for (float v : c) CHECK(F2U(v) == 0x80000000u);
      kernel(2, 2, 0, z.data(), 4, 1, one.data(), 2, 1, c.data(), 2);
      for (float v : c) CHECK(F2U(v) == 0x80000000u);
    }
}

TEST_CASE("ref: FusedMulAddF32 rounds once: halfway cases and specials", "[kernels][gemm]") {
  const float h = 1.0f + 0x1p-12f;  // h * h = 1 + 2^-11 + 2^-24: halfway between two floats
  // Plus 2^-60: double's sum is the halfway value itself (2^-60 is under its half ulp), which
  // a second rounding would take to even; the one rounding goes up.
  CHECK(F2U(ref::FusedMulAddF32(h, h, 0x1p-60f)) == F2U(1.0f + 0x1p-11f + 0x1p-23f));
  CHECK(F2U(ref::FusedMulAddF32(h, h, -0x1p-60f)) == F2U(1.0f + 0x1p-11f));
  CHECK(F2U(ref::FusedMulAddF32(-h, h, -0x1p-60f)) == F2U(-(1.0f + 0x1p-11f + 0x1p-23f)));
  CHECK(F2U(ref::FusedMulAddF32(h, h, 0.0f)) == F2U(1.0f + 0x1p-11f));  // an exact tie: to even
  const float big = std::numeric_limits<float>::max(), inf = std::numeric_limits<float>::infinity();
  CHECK(F2U(ref::FusedMulAddF32(big, 2.0f, -big)) == F2U(big));  // no overflow in between
  CHECK(ref::FusedMulAddF32(big, big, 0.0f) == inf);
  CHECK(std::isnan(ref::FusedMulAddF32(inf, 0.0f, 1.0f)));
  CHECK(std::isnan(ref::FusedMulAddF32(inf, 1.0f, -inf)));
  CHECK(std::isnan(ref::FusedMulAddF32(std::nanf(""), 1.0f, 1.0f)));
  CHECK(ref::FusedMulAddF32(1.0f, 1.0f, -inf) == -inf);
  CHECK(F2U(ref::FusedMulAddF32(-0.0f, 1.0f, 0.0f)) == F2U(0.0f));
  CHECK(F2U(ref::FusedMulAddF32(-0.0f, 1.0f, -0.0f)) == F2U(-0.0f));
  CHECK(F2U(ref::FusedMulAddF32(1.0f, -1.0f, 1.0f)) == F2U(0.0f));
  // Subnormal results: 2^-150 is half the smallest subnormal (a tie: to +0); 1.5 * 2^-150
  // rounds up to it; 2^-149 * 3 - 2^-148 is exact.
  CHECK(F2U(ref::FusedMulAddF32(0x1p-75f, 0x1p-75f, 0.0f)) == F2U(0.0f));
  CHECK(F2U(ref::FusedMulAddF32(0x1p-75f, 0x1.8p-75f, 0.0f)) == F2U(0x1p-149f));
  CHECK(F2U(ref::FusedMulAddF32(0x1p-149f, 3.0f, -0x1p-148f)) == F2U(0x1p-149f));
}

// The C library's fmaf as a second oracle where it is correctly rounded (glibc, musl, the
// wasm and qemu rows); mingw-w64's is not, so the Windows row leaves this out ([libm_fma]).
TEST_CASE("ref: FusedMulAddF32 equals the C library's fmaf on random and near-halfway operands",
          "[kernels][gemm][libm_fma]") {
  SplitMix64 rng(0xf3a);
  auto any = [&] {
    uint32_t u = uint32_t(rng.Next());
    u = (u & 0x807fffffu) | (uint32_t(100 + rng.Next() % 56) << 23);  // exponents 2^-27 .. 2^28
    return U2F(u);
  };
  // 50000 operands: the check costs little natively, and under qemu (the cross rows) the
  // assertion is made once per mismatch, not once per operand.
  int mismatches = 0;
  for (int i = 0; i < 50000; ++i) {
    const float a = any(), b = any();
    // c near -a*b or tiny beside it: cancellation and the halfway cases.
    float c = any();
    if (i % 3 == 0) c = -(a * b) * (1.0f + float(int(rng.Next() % 7) - 3) * 0x1p-23f);
    if (i % 3 == 1) c = std::ldexp(c, -30);
    const float want = std::fma(a, b, c), got = ref::FusedMulAddF32(a, b, c);
    if (F2U(got) != F2U(want) && ++mismatches <= 5) {
      INFO(a << " * " << b << " + " << c);
      CHECK(F2U(got) == F2U(want));
    }
  }
  CHECK(mismatches == 0);
}

// The twins really fuse: A = [1 + 2^-11, 1 + 2^-12], B = [-1, 1 + 2^-12]^T folds to
// -(1 + 2^-11) + (1 + 2^-12)^2 = 2^-24 with one rounding per step, and to +0.0 when the
// product 1 + 2^-11 + 2^-24 is rounded first (a tie, to even). Every path: few rows, the
// register tiles (rows padded to 16, columns to 40, K padded with zero terms), packed.
TEST_CASE("kernels: the GEMM twins fuse each multiply-add, the exact kernels do not", "[kernels][gemm]") {
  const float a0 = 1.0f + 0x1p-11f, a1 = 1.0f + 0x1p-12f;
  for (const Dispatch& d : GemmDispatches())
    for (int64_t M : {1, 16})
      for (int64_t N : {1, 40})
        for (int64_t K : {2, 300}) {
          std::vector<float> a(size_t(M * K), 0.0f), b(size_t(K * N), 0.0f);
          for (int64_t m = 0; m < M; ++m) {
            a[size_t(m * K)] = a0;
            a[size_t(m * K + 1)] = a1;
          }
          for (int64_t n = 0; n < N; ++n) {
            b[size_t(n)] = -1.0f;
            b[size_t(N + n)] = a1;
          }
          std::vector<float> exact(size_t(M * N)), fused(size_t(M * N)), want(size_t(M * N));
          std::vector<float> packed(size_t(ref::GemmPackedFloats(K, N)));
          d.kernels.GemmPackBF32(K, N, b.data(), N, 1, packed.data());
          ref::GemmFmaF32(M, N, K, a.data(), K, 1, b.data(), N, 1, want.data(), N);
          for (float v : want) REQUIRE(v == 0x1p-24f);
          for (int path = 0; path < 2; ++path) {
            if (path == 0) {
              d.kernels.GemmF32(M, N, K, a.data(), K, 1, b.data(), N, 1, exact.data(), N);
              d.kernels.GemmFmaF32(M, N, K, a.data(), K, 1, b.data(), N, 1, fused.data(), N);
            } else {
              d.kernels.GemmPackedF32(M, N, K, a.data(), K, 1, packed.data(), 0, N, exact.data(), N, nullptr,
                                      Activation::kNone);
              d.kernels.GemmPackedFmaF32(M, N, K, a.data(), K, 1, packed.data(), 0, N, fused.data(), N, nullptr,
                                         Activation::kNone);
            }
            INFO(IsaName(d.isa) << " M=" << M << " N=" << N << " K=" << K << " path " << path);
            for (size_t i = 0; i < exact.size(); ++i) {
              CHECK(F2U(exact[i]) == 0u);
              CHECK(fused[i] == 0x1p-24f);
            }
          }
        }
}

TEST_CASE("kernels: MulAddStridedF32 and MaxStepStridedF32 equal their references", "[kernels]") {
  const Dispatch d = MakeDispatch(ActiveIsa());
  REQUIRE(d.kernels.MulAddStridedF32 != nullptr);
  REQUIRE(d.kernels.MaxStepStridedF32 != nullptr);
  SplitMix64 rng(33);
  const std::vector<size_t> lengths = Lengths(10007);
  for (int64_t stride : {1, 2, 3}) {
    for (size_t n : lengths) {
      for (int variant = 0; variant < 3; ++variant) {
        // Exactly the elements the call may read (the sanitizer rows catch a read past them).
        std::vector<float> x(n ? (n - 1) * size_t(stride) + 1 : 1), acc0(n + 8);
        Fill(rng, x.data(), x.size(), variant);
        Fill(rng, acc0.data(), n, variant);
        for (size_t i = n; i < acc0.size(); ++i) acc0[i] = U2F(kGuard);
        const float w = variant == 2 ? F32Specials()[n % F32Specials().size()] : rng.Uniform(-2.0f, 2.0f);
        std::vector<float> want = acc0, got = acc0;
        ref::MulAddStridedF32(want.data(), x.data(), stride, w, int64_t(n));
        d.kernels.MulAddStridedF32(got.data(), x.data(), stride, w, int64_t(n));
        INFO(IsaName(d.isa) << " MulAdd stride " << stride << " n=" << n << " variant " << variant);
        CHECK(DiffF32(want.data(), got.data(), want.size()) == "");
        for (size_t i = n; i < got.size(); ++i) CHECK(F2U(got[i]) == kGuard);
        want = acc0;
        got = acc0;
        ref::MaxStepStridedF32(want.data(), x.data(), stride, int64_t(n));
        d.kernels.MaxStepStridedF32(got.data(), x.data(), stride, int64_t(n));
        INFO("MaxStep");
        // Max keeps the first of equal values: +0 and -0 are told apart bitwise.
        for (size_t i = 0; i < n; ++i) {
          if (!SameF32(want[i], got[i])) {
            FAIL_CHECK("at " << i << ": want 0x" << std::hex << F2U(want[i]) << " got 0x" << F2U(got[i]));
            break;
          }
        }
      }
    }
  }
  // MaxStep: the first NaN sticks; -0 stays before +0 and +0 before -0.
  float acc[4] = {-0.0f, 0.0f, U2F(0x7FC00000u), 1.0f};
  const float x[4] = {0.0f, -0.0f, 5.0f, U2F(0x7FC00001u)};
  d.kernels.MaxStepStridedF32(acc, x, 1, 4);
  CHECK(F2U(acc[0]) == 0x80000000u);
  CHECK(F2U(acc[1]) == 0x00000000u);
  CHECK(IsNaN(acc[2]));
  CHECK(IsNaN(acc[3]));
}

TEST_CASE("kernels: BinaryF32 equals its reference for every op and broadcast", "[kernels]") {
  const Dispatch d = MakeDispatch(ActiveIsa());
  REQUIRE(d.kernels.BinaryF32 != nullptr);
  SplitMix64 rng(45);
  const std::vector<size_t> lengths = Lengths(4099);
  for (int32_t op = kBinAddF32; op <= kBinLastF32; ++op)
    for (int64_t sa : {0, 1})
      for (int64_t sb : {0, 1})
        for (size_t n : lengths)
          for (int variant = 0; variant < 3; ++variant) {
            std::vector<float> a(std::max<size_t>(n, 1)), b(std::max<size_t>(n, 1));
            Fill(rng, a.data(), a.size(), variant);
            Fill(rng, b.data(), b.size(), variant);
            std::vector<float> want(n + 4, U2F(kGuard)), got(n + 4, U2F(kGuard));
            ref::BinaryF32(op, a.data(), sa, b.data(), sb, want.data(), int64_t(n));
            d.kernels.BinaryF32(op, a.data(), sa, b.data(), sb, got.data(), int64_t(n));
            const std::string diff = DiffF32(want.data(), got.data(), want.size());
            if (!diff.empty()) {
              FAIL_CHECK(IsaName(d.isa) << " op " << op << " sa=" << sa << " sb=" << sb << " n=" << n << " variant "
                                        << variant << ": " << diff);
            }
          }
  // In place (out aliasing a).
  std::vector<float> a(100), b(100);
  Fill(rng, a.data(), a.size(), 2);
  Fill(rng, b.data(), b.size(), 2);
  std::vector<float> want(100), got = a;
  ref::BinaryF32(kBinDivF32, a.data(), 1, b.data(), 1, want.data(), 100);
  d.kernels.BinaryF32(kBinDivF32, got.data(), 1, b.data(), 1, got.data(), 100);
  CHECK(DiffF32(want.data(), got.data(), 100) == "");
}

TEST_CASE("kernels: BinaryF32 Pow equals math::Pow on every pairing of special bases and exponents",
          "[kernels][math]") {
  const Dispatch d = MakeDispatch(ActiveIsa());
  REQUIRE(d.kernels.BinaryF32 != nullptr);
  // Bases: specials, negatives, values near 1 (tiny logarithms), extremes. Exponents:
  // odd and even integers (signs of negative bases), halves (NaN for negative bases),
  // +-0, +-inf, NaN, exponents that overflow or underflow binary64 (ScaleBD's branches).
  std::vector<float> bases(F32Specials().begin(), F32Specials().end());
  for (float v : {-2.0f, -0.5f, -1.0f, 1.0f, 0.5f, 2.0f, 10.0f, -3.0f, 1.0000001f, 0.99999994f, -1.0000001f, 3.4e38f,
                  -3.4e38f, 1e-38f, 1e-45f, -1e-45f, 0.1f, 7.0f, 123.456f})
    bases.push_back(v);
  std::vector<float> exps(F32Specials().begin(), F32Specials().end());
  for (float v : {0.0f,         -0.0f, 1.0f,    -1.0f,    2.0f,    -2.0f,      3.0f,    -3.0f,       0.5f,
                  -0.5f,        1.5f,  1030.0f, -1030.0f, 1074.0f, -1075.0f,   1023.5f, 16777215.0f, 16777216.0f,
                  -16777215.0f, 1e10f, -1e10f,  127.0f,   -149.0f, 0.3333333f, 200.0f,  -200.0f,     2.5f})
    exps.push_back(v);
  SplitMix64 rng(91);
  for (int i = 0; i < 200; ++i) exps.push_back(rng.Uniform(-40.0f, 40.0f));
  std::vector<float> a, b;
  for (float x : bases)
    for (float y : exps) {
      a.push_back(x);
      b.push_back(y);
    }
  std::vector<float> want(a.size()), got(a.size());
  ref::BinaryF32(kBinPowF32, a.data(), 1, b.data(), 1, want.data(), int64_t(a.size()));
  for (size_t i = 0; i < a.size(); ++i) REQUIRE(SameF32(want[i], math::Pow(a[i], b[i])));
  d.kernels.BinaryF32(kBinPowF32, a.data(), 1, b.data(), 1, got.data(), int64_t(a.size()));
  INFO(IsaName(d.isa));
  CHECK(DiffF32(want.data(), got.data(), want.size()) == "");
  // Pow by a broadcast 2 (the squaring path): squares that are binary32 ties (odd m in
  // [2^12, 2^12.5): m^2 has 25 significant bits), squares at the normal range's ends,
  // zeros, subnormals, specials, random values; every length for the tails.
  std::vector<float> sq(F32Specials().begin(), F32Specials().end());
  for (int m = 4097; m < 5793; m += 2)
    for (float scale : {1.0f, 0x1p-40f, 0x1p20f, -0x1p-70f}) sq.push_back(float(m) * scale);
  for (float e : {1.0842022e-19f, 1.3043817e19f, 1.0f})
    for (int d = -40; d <= 40; ++d) sq.push_back(U2F(uint32_t(int64_t(F2U(e)) + d)));
  for (int i = 0; i < 5000; ++i) sq.push_back(i % 2 ? U2F(rng.NextU32()) : rng.Uniform(-100.0f, 100.0f));
  const float two = 2.0f;
  std::vector<float> sq_want(sq.size()), sq_got(sq.size());
  ref::BinaryF32(kBinPowF32, sq.data(), 1, &two, 0, sq_want.data(), int64_t(sq.size()));
  d.kernels.BinaryF32(kBinPowF32, sq.data(), 1, &two, 0, sq_got.data(), int64_t(sq.size()));
  CHECK(DiffF32(sq_want.data(), sq_got.data(), sq.size()) == "");
  size_t ties_not_square = 0;  // the cases the squaring alone would get wrong
  for (size_t i = 0; i < sq.size(); ++i) ties_not_square += !SameF32(sq_want[i], float(double(sq[i]) * double(sq[i])));
  CHECK(ties_not_square > 0);
  for (size_t n = 0; n < 70; ++n) {
    std::vector<float> w(n + 2, U2F(kGuard)), g(n + 2, U2F(kGuard));
    ref::BinaryF32(kBinPowF32, sq.data() + 100, 1, &two, 0, w.data(), int64_t(n));
    d.kernels.BinaryF32(kBinPowF32, sq.data() + 100, 1, &two, 0, g.data(), int64_t(n));
    CHECK(DiffF32(w.data(), g.data(), w.size()) == "");
  }
  // A few known answers, so that the reference itself is pinned too.
  CHECK(math::Pow(-2.0f, 3.0f) == -8.0f);
  CHECK(math::Pow(-0.0f, -3.0f) == -std::numeric_limits<float>::infinity());
  CHECK(F2U(math::Pow(-0.0f, 3.0f)) == 0x80000000u);
  CHECK(math::Pow(-1.0f, std::numeric_limits<float>::infinity()) == 1.0f);
  CHECK(IsNaN(math::Pow(-8.0f, 1.0f / 3.0f)));
}

TEST_CASE("kernels: UnaryF32 equals its reference for every op", "[kernels]") {
  const Dispatch d = MakeDispatch(ActiveIsa());
  REQUIRE(d.kernels.UnaryF32 != nullptr);
  SplitMix64 rng(57);
  const std::vector<size_t> lengths = Lengths(4099);
  const float params[][2] = {
      {-1.0f, 1.0f}, {0.0f, 6.0f}, {0.2f, 0.5f}, {-0.0f, 0.0f}, {U2F(0x7FC00000u), 2.0f}, {1.6732632f, 1.0507010f},
      {3.0f, -0.5f}};
  for (int32_t op = kUnReluF32; op <= kUnLastF32; ++op)
    for (const auto& p : params)
      for (size_t n : lengths)
        for (int variant = 0; variant < 3; ++variant) {
          std::vector<float> x(std::max<size_t>(n, 1));
          Fill(rng, x.data(), x.size(), variant);
          std::vector<float> want(n + 4, U2F(kGuard)), got(n + 4, U2F(kGuard));
          ref::UnaryF32(op, p[0], p[1], x.data(), want.data(), int64_t(n));
          d.kernels.UnaryF32(op, p[0], p[1], x.data(), got.data(), int64_t(n));
          const std::string diff = DiffF32(want.data(), got.data(), want.size());
          if (!diff.empty())
            FAIL_CHECK(IsaName(d.isa) << " op " << op << " p " << p[0] << "," << p[1] << " n=" << n << ": " << diff);
        }
}

namespace {
// Inputs for the function kernels: specials, every float within 64 ulps of each
// branch threshold of the references, and random bit patterns (`count` of them).
std::vector<float> FunctionInputs(size_t count) {
  std::vector<float> v(F32Specials().begin(), F32Specials().end());
  const float edges[] = {0.0f,
                         1.0f,
                         2.0f,
                         4.0f,
                         0.625f,
                         9.0f,
                         88.72283935546875f,
                         -103.97208404541015625f,
                         0.5f,
                         1.17549435e-38f,
                         87.0f,
                         -87.0f,
                         126.0f,
                         -126.0f,
                         2.414213562373095f,
                         0.4142135623730950f,
                         88.0f,
                         1.0e4f,
                         20.0f};
  for (float e : edges)
    for (float sgn : {1.0f, -1.0f})
      for (int d = -64; d <= 64; ++d) v.push_back(U2F(uint32_t(int64_t(F2U(e * sgn)) + d)));
  SplitMix64 rng(77);
  for (size_t i = 0; i < count; ++i) {
    const uint32_t u = rng.NextU32();
    // Half of them in [-16, 16], where the polynomials and branches are.
    v.push_back(i % 2 ? U2F(u) : rng.Uniform(-16.0f, 16.0f));
  }
  return v;
}
}  // namespace

TEST_CASE(
    "kernels: MathF32 (Exp, Tanh, Sigmoid, Erf, Log, inverse and hyperbolic functions) equals the scalar functions",
    "[kernels][math]") {
  const Dispatch d = MakeDispatch(ActiveIsa());
  REQUIRE(d.kernels.MathF32 != nullptr);
  std::vector<float> x = FunctionInputs(100000);
  // For Log: positive values around its branch at sqrt(1/2), near 1, subnormals.
  SplitMix64 rng(77);
  for (int i = 0; i < 20000; ++i) x.push_back(rng.Uniform(0.0f, 4.0f));
  for (int i = 0; i < 2000; ++i) x.push_back(U2F(rng.NextU32() & 0x007FFFFFu));
  for (int i = -2000; i < 2000; ++i) x.push_back(U2F(F2U(0.707106781186547524f) + uint32_t(i)));
  for (int i = -2000; i < 2000; ++i) x.push_back(U2F(F2U(1.0f) + uint32_t(i)));
  // For Sin, Cos, Tan: around every multiple of pi/4 up to 64 of them (octant edges),
  // large arguments up to and past 2^63 pi/4 (where the octant is 0 by definition).
  for (int k = -64; k <= 64; ++k)
    for (int d = -8; d <= 8; ++d) x.push_back(U2F(uint32_t(int64_t(F2U(float(k) * 0.785398163f)) + d)));
  for (float e = 1.0f; e < 3e38f; e *= 1.9f) {
    x.push_back(e);
    x.push_back(-e * 1.37f);
  }
  for (int d = -64; d <= 64; ++d) x.push_back(U2F(uint32_t(int64_t(F2U(7.2440162e18f)) + d)));
  // Whole vectors inside one range, where the kernels skip by AllTrue what no lane needs
  // (Exp's scaling and specials inside [-87, 88], its edges; Erf's ranges |x| <= 1,
  // 1 < |x| < 2, 2 <= |x| < 4), then the same values shuffled into mixed vectors.
  const float ranges[][2] = {{-87.0f, 88.0f}, {-87.5f, -86.5f}, {87.5f, 88.5f}, {-1.0f, 1.0f},
                             {1.0f, 2.0f},    {-2.0f, -1.0f},   {2.0f, 4.0f},   {-4.0f, 4.0f}};
  const size_t ranged = x.size();
  for (const auto& r : ranges)
    for (int i = 0; i < 4096; ++i) x.push_back(rng.Uniform(r[0], r[1]));
  for (float e : {-87.0f, 88.0f, 1.0f, 2.0f, -1.0f, -2.0f})
    for (int k = -32; k < 32; ++k) x.push_back(U2F(uint32_t(int64_t(F2U(e)) + k)));
  for (size_t i = ranged; i < x.size(); i += 3) x.push_back(x[i]);
  std::vector<float> want(x.size()), got(x.size());
  const char* names[] = {"Exp",  "Tanh", "Sigmoid", "Erf",   "Log",   "Atan", "Asin", "Acos",
                         "Sinh", "Cosh", "Asinh",   "Acosh", "Atanh", "Sin",  "Cos",  "Tan"};
  static_assert(sizeof(names) / sizeof(names[0]) == size_t(kMathLastF32) + 1, "a name per op");
  for (int32_t op = kMathExpF32; op <= kMathLastF32; ++op) {
    ref::MathF32(op, x.data(), want.data(), int64_t(x.size()));
    d.kernels.MathF32(op, x.data(), got.data(), int64_t(x.size()));
    INFO(IsaName(d.isa) << " " << names[op]);
    CHECK(DiffF32(want.data(), got.data(), x.size()) == "");
    // Tails: every length below a few vectors.
    for (size_t n = 0; n < 4 * kCanonicalLanes + 3; ++n) {
      std::vector<float> w(n + 2, U2F(kGuard)), g(n + 2, U2F(kGuard));
      ref::MathF32(op, x.data() + 1000, w.data(), int64_t(n));
      d.kernels.MathF32(op, x.data() + 1000, g.data(), int64_t(n));
      CHECK(DiffF32(w.data(), g.data(), w.size()) == "");
    }
  }
}

TEST_CASE("kernels: MathF64 (binary64 Exp and Log) equals the scalar functions", "[kernels][math]") {
  const Dispatch d = MakeDispatch(ActiveIsa());
  REQUIRE(d.kernels.MathF64 != nullptr);
  auto bits = [](uint64_t u) {
    double v;
    std::memcpy(&v, &u, 8);
    return v;
  };
  std::vector<double> x;
  SplitMix64 rng(78);
  // Any bit pattern; Exp's range and its overflow and underflow edges; Log's branch at
  // sqrt(1/2), values near 1, subnormals; specials.
  for (int i = 0; i < 40000; ++i) x.push_back(bits((uint64_t(rng.NextU32()) << 32) | rng.NextU32()));
  for (int i = 0; i < 40000; ++i)
    x.push_back(double(rng.Uniform(-760.0f, 760.0f)) * (1.0 + double(rng.Uniform(0.0f, 1e-3f))));
  for (double e : {709.782712893384, -745.1332191019412, 709.0, -708.0, -744.0, 0.34657359027997264})
    for (int k = -64; k <= 64; ++k) {
      uint64_t u;
      std::memcpy(&u, &e, 8);
      x.push_back(bits(u + uint64_t(int64_t(k))));
    }
  for (int i = 0; i < 20000; ++i) x.push_back(double(rng.Uniform(0.0f, 4.0f)));
  for (int i = 0; i < 4000; ++i) x.push_back(bits((uint64_t(rng.NextU32()) << 20) & 0x000FFFFFFFFFFFFFull));
  for (double c : {0.70710678118654752440, 1.0})
    for (int k = -2000; k <= 2000; ++k) {
      uint64_t u;
      std::memcpy(&u, &c, 8);
      x.push_back(bits(u + uint64_t(int64_t(k))));
    }
  for (uint64_t u : {0x0ull, 0x8000000000000000ull, 0x7FF0000000000000ull, 0xFFF0000000000000ull, 0x7FF8000000000000ull,
                     0xFFF8000000000001ull, 0x7FF0000000000001ull, 0x0000000000000001ull, 0x000FFFFFFFFFFFFFull,
                     0x0010000000000000ull, 0x7FEFFFFFFFFFFFFFull, 0xBFF0000000000000ull})
    x.push_back(bits(u));
  auto diff = [](const std::vector<double>& want, const std::vector<double>& got) -> std::string {
    for (size_t i = 0; i < want.size(); ++i) {
      uint64_t a, b;
      std::memcpy(&a, &want[i], 8);
      std::memcpy(&b, &got[i], 8);
      const bool na = (a & 0x7FFFFFFFFFFFFFFFull) > 0x7FF0000000000000ull,
                 nb = (b & 0x7FFFFFFFFFFFFFFFull) > 0x7FF0000000000000ull;
      if (a == b || (na && nb)) continue;
      char buf[96];
      std::snprintf(buf, sizeof buf, "element %zu: want %016llx got %016llx", i, static_cast<unsigned long long>(a),
                    static_cast<unsigned long long>(b));
      return buf;
    }
    return "";
  };
  std::vector<double> want(x.size()), got(x.size());
  for (int32_t op = kMathExpF64; op <= kMathLastF64; ++op) {
    ref::MathF64(op, x.data(), want.data(), int64_t(x.size()));
    d.kernels.MathF64(op, x.data(), got.data(), int64_t(x.size()));
    INFO(IsaName(d.isa) << (op == kMathExpF64 ? " ExpD" : " LogD"));
    CHECK(diff(want, got) == "");
    // Tails: every length below a few vectors, nothing written past them.
    for (size_t n = 0; n < 4 * kCanonicalLanes + 3; ++n) {
      std::vector<double> w(n + 2, 1234.5), g(n + 2, 1234.5);
      ref::MathF64(op, x.data() + 1000, w.data(), int64_t(n));
      d.kernels.MathF64(op, x.data() + 1000, g.data(), int64_t(n));
      CHECK(diff(w, g) == "");
    }
  }
}

// Every float, for the record (docs/exact-mode.md): not part of the suite (a minute or
// two per function natively). Run: build/native/onemodel_tests --isa avx512
// "[.exhaustive]"; ONEMODEL_EXHAUSTIVE_FROM=k starts at MathF32 op k (13: Sin, Cos, Tan).
TEST_CASE("kernels: MathF32 over all 2^32 inputs", "[.exhaustive]") {
  const Dispatch d = MakeDispatch(ActiveIsa());
  const size_t block = size_t(1) << 20;
  std::vector<float> x(block), want(block), got(block);
  const char* from = std::getenv("ONEMODEL_EXHAUSTIVE_FROM");
  for (int32_t op = from ? std::atoi(from) : kMathExpF32; op <= kMathLastF32; ++op) {
    uint64_t bad = 0;
    for (uint64_t base = 0; base < (uint64_t(1) << 32); base += block) {
      for (size_t i = 0; i < block; ++i) x[i] = U2F(uint32_t(base + i));
      ref::MathF32(op, x.data(), want.data(), int64_t(block));
      d.kernels.MathF32(op, x.data(), got.data(), int64_t(block));
      for (size_t i = 0; i < block; ++i) bad += !SameF32(want[i], got[i]);
    }
    INFO("op " << op << " at " << IsaName(d.isa));
    CHECK(bad == 0);
  }
}

// Pow by 2 on every float (the squaring path's guard, docs/exact-mode.md): not part of
// the suite (minutes natively). Run: build/native/onemodel_tests --isa avx512
// "kernels: Pow by 2 over all 2^32 inputs".
TEST_CASE("kernels: Pow by 2 over all 2^32 inputs", "[.exhaustive]") {
  const Dispatch d = MakeDispatch(ActiveIsa());
  const size_t block = size_t(1) << 20;
  const float two = 2.0f;
  std::vector<float> x(block), want(block), got(block);
  uint64_t bad = 0;
  for (uint64_t base = 0; base < (uint64_t(1) << 32); base += block) {
    for (size_t i = 0; i < block; ++i) x[i] = U2F(uint32_t(base + i));
    ref::BinaryF32(kBinPowF32, x.data(), 1, &two, 0, want.data(), int64_t(block));
    d.kernels.BinaryF32(kBinPowF32, x.data(), 1, &two, 0, got.data(), int64_t(block));
    for (size_t i = 0; i < block; ++i) bad += !SameF32(want[i], got[i]);
  }
  INFO("at " << IsaName(d.isa));
  CHECK(bad == 0);
}

// The exact kernel and its fast twin against their references, bitwise: every length
// to 4L+3 and a large one, 1 to 9 rows (the interleaved groups and the rows after them),
// each scale (none, Div, Div by a power of two, Mul, a negative one) and mask (none, one
// value, a row shared by every row, one row per row, a strided row: the reference's
// loops), values plain, wide (underflowing exps), with specials, and with -inf and
// -10000 masks (whole rows of -inf too), in place and not.
TEST_CASE("kernels: SoftmaxRowsF32 and SoftmaxRowsFmaF32 equal their references", "[kernels]") {
  const Dispatch d = MakeDispatch(ActiveIsa());
  REQUIRE((d.kernels.SoftmaxRowsF32 && d.kernels.SoftmaxRowsFmaF32));
  SplitMix64 rng(88);
  std::vector<size_t> lengths = Lengths(1000);
  lengths.push_back(30001);
  struct Scale {
    int32_t op;
    float c;
  };
  const Scale scales[] = {{-1, 1.0f},           {kBinDivF32, 5.65685415f}, {kBinDivF32, 8.0f},
                          {kBinMulF32, 0.125f}, {kBinDivF32, -3.0f},       {kBinMulF32, 1e30f}};
  int cases = 0;
  for (const bool fma : {false, true})
    for (size_t n : lengths)
      for (int64_t rows : {1, 2, 3, 4, 5, 9}) {
        if (n > 1000 && rows > 2) continue;
        const int variant = int(rng.NextU32() % 5);
        const Scale sc = scales[rng.NextU32() % 6];
        const int mask_kind = int(rng.NextU32() % 5);  // none, one value, shared row, per row, strided
        const size_t total = size_t(rows) * n;
        std::vector<float> x(std::max<size_t>(total, 1));
        Fill(rng, x.data(), x.size(), variant % 3);
        if (variant == 3)
          for (float& v : x) v = v * 40.0f;
        std::vector<float> mask(std::max<size_t>(2 * total + 2, 2), 0.0f);
        for (float& m : mask) {
          const uint32_t k = rng.NextU32() % 8;
          m = k == 0 ? -__builtin_inff() : k == 1 ? -10000.0f : k == 2 ? -0.0f : rng.Uniform(-2.0f, 2.0f);
        }
        if (variant == 4 && rows > 1)
          for (size_t j = 0; j < 2 * n && j < mask.size(); ++j) mask[j] = -__builtin_inff();  // rows of -inf
        const float* pm = mask_kind ? mask.data() : nullptr;
        const int64_t mrs = mask_kind == 3 ? int64_t(n) : mask_kind == 4 ? int64_t(2 * n) : 0;
        const int64_t ms = mask_kind == 1 ? 0 : mask_kind == 4 ? 2 : 1;
        std::vector<float> want(total + 2, U2F(kGuard)), got(total + 2, U2F(kGuard));
        auto* reference = fma ? &ref::SoftmaxRowsFmaF32 : &ref::SoftmaxRowsF32;
        auto kernel = [&](const float* in, float* out) {
          if (fma)
            d.kernels.SoftmaxRowsFmaF32(in, out, rows, int64_t(n), sc.op, sc.c, pm, mrs, ms);
          else
            d.kernels.SoftmaxRowsF32(in, out, rows, int64_t(n), sc.op, sc.c, pm, mrs, ms);
        };
        reference(x.data(), want.data(), rows, int64_t(n), sc.op, sc.c, pm, mrs, ms);
        const bool in_place = rng.NextU32() % 2;
        if (in_place) {
          std::copy(x.begin(), x.begin() + std::ptrdiff_t(total), got.begin());
          kernel(got.data(), got.data());
        } else {
          kernel(x.data(), got.data());
        }
        ++cases;
        const std::string diff = DiffF32(want.data(), got.data(), want.size());
        if (!diff.empty())
          FAIL_CHECK(IsaName(d.isa) << (fma ? " fma" : " exact") << " n=" << n << " rows " << rows << " variant "
                                    << variant << " scale " << sc.op << " mask " << mask_kind << ": " << diff);
      }
  CHECK(cases > 500);
}

// The 8-bit product's epilogue against its reference, bitwise: 1 to 9 rows, every width to
// 4L+3 and a large one, ldc past the width (the columns after it must stay), the zero
// point per column or one, with and without the float conversion and the bias; sums
// over the whole uint32 range (wrapping terms, int32 values past 2^24 that round, ties),
// specials among the multipliers and biases.
TEST_CASE("kernels: FinishDotSumsI32 equals its reference", "[kernels]") {
  const Dispatch d = MakeDispatch(ActiveIsa());
  REQUIRE(d.kernels.FinishDotSumsI32 != nullptr);
  SplitMix64 rng(31);
  int cases = 0;
  for (size_t w : Lengths(1000))
    for (int64_t rows : {1, 2, 3, 8, 9})
      for (int form = 0; form < 6; ++form) {
        const bool per_column = form % 2, to_float = form >= 2, bias = form >= 4;
        const int64_t ldc = int64_t(w) + 3;
        std::vector<uint32_t> c(static_cast<size_t>(rows * ldc)), rt(static_cast<size_t>(rows)), zb(w + 1), zc(w + 1);
        std::vector<float> mult(w + 1), bs(w + 1);
        for (auto& v : c)
          v = rng.NextU32() % 4 == 0 ? (rng.NextU32() % 2 ? 16777217u + rng.NextU32() % 64 : rng.NextU32())
                                     : rng.NextU32() % 4000;
        for (auto& v : rt) v = rng.NextU32() % 3 == 0 ? rng.NextU32() : rng.NextU32() % 300;
        for (auto& v : zb) v = rng.NextU32() % 256;
        for (auto& v : zc) v = rng.NextU32() % 3 == 0 ? rng.NextU32() : rng.NextU32() % 50000;
        Fill(rng, mult.data(), mult.size(), rng.NextU32() % 3);
        Fill(rng, bs.data(), bs.size(), rng.NextU32() % 3);
        const uint32_t zb0 = rng.NextU32() % 256;
        std::vector<uint32_t> want = c, got = c;
        ref::FinishDotSumsI32(want.data(), ldc, rows, int64_t(w), rt.data(), per_column ? zb.data() : nullptr, zb0,
                              zc.data(), to_float ? mult.data() : nullptr, bias ? bs.data() : nullptr);
        d.kernels.FinishDotSumsI32(got.data(), ldc, rows, int64_t(w), rt.data(), per_column ? zb.data() : nullptr, zb0,
                                   zc.data(), to_float ? mult.data() : nullptr, bias ? bs.data() : nullptr);
        ++cases;
        const std::string diff = to_float ? DiffF32(reinterpret_cast<const float*>(want.data()),
                                                    reinterpret_cast<const float*>(got.data()), want.size())
                                          : DiffBytes(reinterpret_cast<const uint8_t*>(want.data()),
                                                      reinterpret_cast<const uint8_t*>(got.data()), 4 * want.size(), 4);
        if (!diff.empty())
          FAIL_CHECK(IsaName(d.isa) << " w=" << w << " rows " << rows << " form " << form << ": " << diff);
      }
  CHECK(cases > 300);
}

// Fast mode's erf against its reference, bitwise: every length to 4L+3 and a large one,
// values over [-6, 6] with the range edges (+-1, +-4 and their neighbours) and specials.
TEST_CASE("kernels: ErfFmaF32 equals its reference", "[kernels]") {
  const Dispatch d = MakeDispatch(ActiveIsa());
  REQUIRE(d.kernels.ErfFmaF32 != nullptr);
  SplitMix64 rng(41);
  const float edges[] = {1.0f, 4.0f, 0.99999994f, 1.0000001f, 3.9999998f, 4.0000005f};
  for (size_t n : Lengths(5000))
    for (int variant = 0; variant < 3; ++variant) {
      std::vector<float> x(std::max<size_t>(n, 1));
      Fill(rng, x.data(), x.size(), variant == 2 ? 2 : 0);
      for (float& v : x) {
        if (variant == 0) v = v * 6.0f;
        if (variant == 1) v = (rng.NextU32() % 2 ? 1.0f : -1.0f) * edges[rng.NextU32() % 6];
      }
      std::vector<float> want(n + 2, U2F(kGuard)), got(n + 2, U2F(kGuard));
      ref::ErfFmaF32(x.data(), want.data(), int64_t(n));
      d.kernels.ErfFmaF32(x.data(), got.data(), int64_t(n));
      const std::string diff = DiffF32(want.data(), got.data(), want.size());
      if (!diff.empty()) FAIL_CHECK(IsaName(d.isa) << " n=" << n << " variant " << variant << ": " << diff);
    }
}

// Its stated bound (ref/softmax.h): relative error at most 3.63 u where erf's float is
// normal (measured exhaustively over [0, 4]; here a million values over [-5, 5] and both
// range edges), odd, +-1 at the infinities, NaN kept.
TEST_CASE("kernels: fast mode's erf is within its bound", "[kernels]") {
  SplitMix64 rng(43);
  std::vector<float> xs;
  for (int i = 0; i < 1000000; ++i)
    xs.push_back(i % 3 ? rng.Uniform(-5.0f, 5.0f) : std::ldexp(rng.Uniform(-1.0f, 1.0f), -int(rng.NextU32() % 60)));
  for (float e : {1.0f, 4.0f})
    for (int dd = -50; dd <= 50; ++dd) xs.push_back(U2F(uint32_t(int64_t(F2U(e)) + dd)));
  std::vector<float> y(xs.size());
  ref::ErfFmaF32(xs.data(), y.data(), int64_t(xs.size()));
  double worst = 0;
  int odd = 0;
  for (size_t i = 0; i < xs.size(); ++i) {
    const double e = std::erf(double(xs[i]));
    if (std::fabs(e) >= 0x1p-126) worst = std::max(worst, std::fabs(double(y[i]) - e) / std::fabs(e));
    float neg = 0;
    const float mx = -xs[i];
    ref::ErfFmaF32(&mx, &neg, 1);
    odd += F2U(neg) != (F2U(y[i]) ^ 0x80000000u);
  }
  INFO("worst relative error " << worst / 0x1p-24 << " u");
  CHECK(worst <= 3.63 * 0x1p-24);
  CHECK(worst > 1.0 * 0x1p-24);  // the check reaches the approximation's error
  CHECK(odd == 0);
  const float sp[] = {__builtin_inff(), -__builtin_inff(), __builtin_nanf(""), 0.0f, -0.0f};
  float out[5];
  ref::ErfFmaF32(sp, out, 5);
  CHECK(out[0] == 1.0f);
  CHECK(out[1] == -1.0f);
  CHECK(std::isnan(out[2]));
  CHECK(F2U(out[3]) == 0u);
  CHECK(F2U(out[4]) == 0x80000000u);
}

// The fast exp's stated bound (ref/softmax.h): relative error at most 1.42 u on [-87, 0]
// (checked here on a million values spread over the range, both ends and the points where
// n changes; exhaustively it was measured at 1.41 u), +0 below -87 and at -inf, NaN kept.
TEST_CASE("kernels: the softmax's fast exp is within its bound", "[kernels]") {
  SplitMix64 rng(17);
  std::vector<float> us{0.0f, -0.0f, -87.0f, -1e-30f, -1e-7f, -0.34657359f, -0.34657362f, -86.99999f};
  for (int k = 1; k <= 125; ++k) {
    const float h = (float(k) - 0.5f) * 0.693147181f;
    for (int dd = -3; dd <= 3; ++dd) us.push_back(-U2F(uint32_t(int64_t(F2U(h)) + dd)));
  }
  for (int i = 0; i < 1000000; ++i)
    us.push_back(i % 2 ? -87.0f * rng.Uniform(0.0f, 1.0f)
                       : -std::ldexp(rng.Uniform(0.5f, 1.0f), -int(rng.NextU32() % 40)));
  double worst = 0;
  for (float u : us) {
    const double e = std::exp(double(u));
    const double rel = std::fabs(double(ref::ExpFmaNonPositiveF32(u)) - e) / e;
    worst = std::max(worst, rel);
  }
  INFO("worst relative error " << worst / std::ldexp(1.0, -24) << " u");
  CHECK(worst <= 1.42 * std::ldexp(1.0, -24));
  CHECK(worst > 0.3 * std::ldexp(1.0, -24));  // the check reaches the polynomial's error
  for (float u : {-87.01f, -100.0f, -1e30f, -__builtin_inff()}) CHECK(F2U(ref::ExpFmaNonPositiveF32(u)) == 0u);
  CHECK(std::isnan(ref::ExpFmaNonPositiveF32(__builtin_nanf(""))));
  CHECK(ref::ExpFmaNonPositiveF32(0.0f) == 1.0f);
}

// Both rows within the bound of the softmax computed in binary64 from the rows' own
// pre-steps values t (the Div or Mul and the mask, as the nodes compute them in float):
// with m the row's maximum and a_j = |t_j - m|, each output is within
// ((a_j + sum_k p_k a_k) + ceil(n / L) + 12) u of p_j relative (the rounding of t - m
// moves the exp's argument by u a_j; the exp's own 1.42 u and the division's or the
// reciprocal's and product's roundings; the canonical sum's chain of ceil(n / L) + log2 L
// additions), plus 2e-38 absolute (exps cut below -87 in the fast row).
TEST_CASE("kernels: SoftmaxRowsF32 and SoftmaxRowsFmaF32 are within the stated bound of binary64", "[kernels]") {
  const Dispatch d = MakeDispatch(ActiveIsa());
  SplitMix64 rng(5);
  const double u = std::ldexp(1.0, -24);
  for (const bool fma : {false, true})
    for (size_t n : {size_t(1), size_t(7), size_t(64), size_t(128), size_t(301), size_t(4096)})
      for (int variant = 0; variant < 3; ++variant) {
        const int64_t rows = 5;
        std::vector<float> x(size_t(rows) * n), mask(n), y(x.size());
        for (float& v : x) v = variant == 0 ? rng.Uniform(-8.0f, 8.0f) : rng.Uniform(-60.0f, 60.0f);
        for (float& m : mask) m = rng.NextU32() % 4 == 0 ? (variant == 2 ? -__builtin_inff() : -10000.0f) : 0.0f;
        const float c = 5.65685415f;
        (fma ? d.kernels.SoftmaxRowsFmaF32 : d.kernels.SoftmaxRowsF32)(x.data(), y.data(), rows, int64_t(n), kBinDivF32,
                                                                       c, mask.data(), 0, 1);
        for (int64_t r = 0; r < rows; ++r) {
          std::vector<double> t(n), p(n);
          double m = -INFINITY, s = 0, wa = 0;
          for (size_t j = 0; j < n; ++j) m = std::max(m, t[j] = double(x[size_t(r) * n + j] / c + mask[j]));
          for (size_t j = 0; j < n; ++j) s += p[j] = std::exp(t[j] - m);
          for (size_t j = 0; j < n; ++j) {
            p[j] /= s;
            if (p[j] > 0) wa += p[j] * std::fabs(t[j] - m);
          }
          const double chain = double((n + kCanonicalLanes - 1) / kCanonicalLanes + 12);
          for (size_t j = 0; j < n; ++j) {
            const double a = std::isinf(t[j]) ? 0.0 : std::fabs(t[j] - m);
            const double bound = (a + wa + chain) * u * p[j] + 2e-38;
            const double got = double(y[size_t(r) * n + j]);
            if (!(std::fabs(got - p[j]) <= bound))
              FAIL_CHECK((fma ? "fma" : "exact") << " n=" << n << " variant " << variant << " row " << r << " j " << j
                                                 << ": " << got << " vs " << p[j] << " bound " << bound);
          }
        }
      }
}

TEST_CASE("kernels: ConvPlaneF32 equals the reference fold for every geometry", "[kernels]") {
  const Dispatch d = MakeDispatch(ActiveIsa());
  REQUIRE(d.kernels.ConvPlaneF32 != nullptr);
  SplitMix64 rng(99);
  int cases = 0;
  for (int64_t K : {1, 2, 3, 5})
    for (int64_t S : {1, 2, 3})
      for (int64_t D : {1, 2})
        for (int64_t P : {0, 1, 2})
          for (int64_t IW : {1, 5, 17, 40, 67}) {
            const int64_t IH = 3 + IW % 7, KH = K, KW = K;
            const int64_t OH = (IH + 2 * P - D * (KH - 1) - 1) / S + 1, OW = (IW + 2 * P - D * (KW - 1) - 1) / S + 1;
            if (OH <= 0 || OW <= 0) continue;
            const Conv2DGeometry g{IH, IW, OH, OW, KH, KW, S, S, D, D, P, P};
            const int variant = int(IW + K + S) % 3;
            std::vector<float> x(size_t(IH * IW)), w(size_t(KH * KW));
            Fill(rng, x.data(), x.size(), variant);
            Fill(rng, w.data(), w.size(), variant == 2 ? 0 : variant);
            std::vector<float> want(size_t(OH * OW) + 3, U2F(kGuard)), got(size_t(OH * OW) + 3, U2F(kGuard));
            ref::ConvPlaneF32(x.data(), w.data(), want.data(), g);
            d.kernels.ConvPlaneF32(x.data(), w.data(), got.data(), g);
            ++cases;
            const std::string diff = DiffF32(want.data(), got.data(), want.size());
            if (!diff.empty())
              FAIL_CHECK(IsaName(d.isa) << " K" << K << " S" << S << " D" << D << " P" << P << " IW" << IW << ": "
                                        << diff);
          }
  // Signed zeros: -0.0 inputs and positive weights fold to -0.0 at every position,
  // padded or not (padding taps are skipped, never added as +0.0).
  std::vector<float> x(7 * 9, -0.0f), w(9, 0.5f), y(7 * 9, 1.0f);
  const Conv2DGeometry g{7, 9, 7, 9, 3, 3, 1, 1, 1, 1, 1, 1};
  d.kernels.ConvPlaneF32(x.data(), w.data(), y.data(), g);
  for (float v : y) CHECK(F2U(v) == 0x80000000u);
  INFO(cases << " geometries");
}

TEST_CASE("kernels: GemmBiasActF32 and its FMA twin equal the reference fold, bias and activation", "[kernels][gemm]") {
  for (const Dispatch& d : GemmDispatches())
    for (const bool fma : {false, true}) {
      auto kernel = [&](auto... args) {
        fma ? d.kernels.GemmBiasActFmaF32(args...) : d.kernels.GemmBiasActF32(args...);
      };
      auto* reference = fma ? &ref::GemmBiasActFmaF32 : &ref::GemmBiasActF32;
      REQUIRE((d.kernels.GemmF32 && d.kernels.GemmFmaF32 && d.kernels.GemmBiasActF32 && d.kernels.GemmBiasActFmaF32 &&
               d.kernels.GemmPackedF32 && d.kernels.GemmPackedFmaF32 && d.kernels.GemmPackedIndirectF32 &&
               d.kernels.GemmPackedIndirectFmaF32));
      SplitMix64 rng(23);
      int cases = 0;
      // Every GEMM path: K = 0, few rows (B in place, B transposed), register tiles with
      // partial rows and columns, several K blocks (the epilogue only after the last).
      auto run = [&](int64_t M, int64_t N, int64_t K, bool tb, bool with_bias, Activation act, int variant) {
        std::vector<float> a(size_t(std::max<int64_t>(M * K, 1))), b(size_t(std::max<int64_t>(K * N, 1))),
            bias(static_cast<size_t>(M));
        Fill(rng, a.data(), a.size(), variant);
        Fill(rng, b.data(), b.size(), variant);
        Fill(rng, bias.data(), bias.size(), 2);  // specials and signed zeros in the bias
        const int64_t ldc = N + 2;
        std::vector<float> want(size_t(M * ldc), U2F(kGuard)), got(size_t(M * ldc), U2F(kGuard));
        const int64_t b_rs = tb ? 1 : N, b_cs = tb ? K : 1;
        const float* bp = with_bias ? bias.data() : nullptr;
        reference(M, N, K, a.data(), K, 1, b.data(), b_rs, b_cs, want.data(), ldc, bp, act);
        kernel(M, N, K, a.data(), K, 1, b.data(), b_rs, b_cs, got.data(), ldc, bp, act);
        ++cases;
        const std::string diff = DiffF32(want.data(), got.data(), want.size());
        if (!diff.empty())
          FAIL_CHECK(IsaName(d.isa) << (fma ? " fma" : "") << " M=" << M << " N=" << N << " K=" << K << " tb=" << tb
                                    << " bias=" << with_bias << " act=" << int(act) << ": " << diff);
      };
      for (Activation act : {Activation::kNone, Activation::kRelu, Activation::kHardSwish})
        for (bool with_bias : {false, true})
          for (int variant = 0; variant < 3; ++variant) {
            for (int64_t M : {1, 3, 4, 9, 17})
              for (int64_t N : {1, 7, 16, 33})
                for (int64_t K : {0, 5, 31}) run(M, N, K, (M + N) % 2 == 0 && M < 4, with_bias, act, variant);
            run(13, 70, 300, false, with_bias, act, variant);  // K blocks
            run(2, 131, 200, true, with_bias, act, variant);   // few rows, transposed B, k blocks
          }
      INFO(cases << " shapes");
    }
}

TEST_CASE("kernels: SumPlanesF32 folds each plane in order like the reference", "[kernels]") {
  const Dispatch d = MakeDispatch(ActiveIsa());
  REQUIRE(d.kernels.SumPlanesF32 != nullptr);
  SplitMix64 rng(41);
  int cases = 0;
  // Plane counts around the lane groups (one, four), lengths around the transposed
  // block (whole, partial, shorter than one), values with specials and wide ranges
  // (an order other than the plane's own would round differently).
  for (int64_t planes : {1, 3, 16, 17, 64, 70, 130})
    for (int64_t n : {0, 1, 5, 16, 49, 196})
      for (int variant = 0; variant < 3; ++variant) {
        std::vector<float> x(static_cast<size_t>(std::max<int64_t>(planes * n, 1)));
        Fill(rng, x.data(), x.size(), variant);
        std::vector<float> want(static_cast<size_t>(planes) + 1, U2F(kGuard)),
            got(static_cast<size_t>(planes) + 1, U2F(kGuard));
        ref::SumPlanesF32(x.data(), planes, n, want.data());
        d.kernels.SumPlanesF32(x.data(), planes, n, got.data());
        ++cases;
        const std::string diff = DiffF32(want.data(), got.data(), want.size());
        if (!diff.empty())
          FAIL_CHECK(IsaName(d.isa) << " planes=" << planes << " n=" << n << " variant=" << variant << ": " << diff);
      }
  INFO(cases << " shapes");
}

TEST_CASE("kernels: GemmPackedF32 and its FMA twin with GemmPackBF32's layout equal the reference", "[kernels][gemm]") {
  for (const Dispatch& d : GemmDispatches())
    for (const bool fma : {false, true}) {
      auto kernel = [&](auto... args) { fma ? d.kernels.GemmPackedFmaF32(args...) : d.kernels.GemmPackedF32(args...); };
      auto* reference = fma ? &ref::GemmBiasActFmaF32 : &ref::GemmBiasActF32;
      REQUIRE((d.kernels.GemmF32 && d.kernels.GemmFmaF32 && d.kernels.GemmBiasActF32 && d.kernels.GemmBiasActFmaF32 &&
               d.kernels.GemmPackedF32 && d.kernels.GemmPackedFmaF32 && d.kernels.GemmPackedIndirectF32 &&
               d.kernels.GemmPackedIndirectFmaF32));
      SplitMix64 rng(29);
      int cases = 0;
      // B packed once (plain and transposed layouts), then column ranges of it: whole, from
      // 64 or 512 (block edges), ending inside a panel; K across the k block; epilogues.
      for (int64_t N : {1, 17, 64, 130, 600})
        for (int64_t K : {0, 3, 40, 300})
          for (bool tb : {false, true}) {
            const int variant = int(N + K) % 3;
            std::vector<float> b(size_t(std::max<int64_t>(K * N, 1)));
            Fill(rng, b.data(), b.size(), variant);
            const int64_t b_rs = tb ? 1 : N, b_cs = tb ? K : 1;
            std::vector<float> packed(size_t(std::max<int64_t>(ref::GemmPackedFloats(K, N), 1)), U2F(kGuard));
            d.kernels.GemmPackBF32(K, N, b.data(), b_rs, b_cs, packed.data());
            for (int64_t M : {1, 5, 33}) {
              std::vector<float> a(size_t(std::max<int64_t>(M * K, 1))), bias(static_cast<size_t>(M));
              Fill(rng, a.data(), a.size(), variant);
              Fill(rng, bias.data(), bias.size(), 2);
              for (int64_t n_begin : {int64_t(0), int64_t(64), int64_t(512)}) {
                if (n_begin >= N) continue;
                for (int64_t n_end : {N, std::min<int64_t>(N, n_begin + 70)}) {
                  const int e = int(M + N + K + n_begin) % 3;
                  const float* bp = e ? bias.data() : nullptr;
                  const Activation act = e == 2   ? Activation::kHardSwish
                                         : e == 1 ? Activation::kRelu
                                                  : Activation::kNone;
                  const int64_t w = n_end - n_begin, ldc = w + 1;
                  std::vector<float> want(size_t(M * ldc), U2F(kGuard)), got(size_t(M * ldc), U2F(kGuard));
                  reference(M, w, K, a.data(), K, 1, b.data() + n_begin * b_cs, b_rs, b_cs, want.data(), ldc, bp, act);
                  kernel(M, N, K, a.data(), K, 1, packed.data(), n_begin, n_end, got.data(), ldc, bp, act);
                  ++cases;
                  const std::string diff = DiffF32(want.data(), got.data(), want.size());
                  if (!diff.empty())
                    FAIL_CHECK(IsaName(d.isa) << (fma ? " fma" : "") << " M=" << M << " N=" << N << " K=" << K << " tb="
                                              << tb << " cols [" << n_begin << ", " << n_end << "): " << diff);
                }
              }
            }
          }
      INFO(cases << " products");
    }
}

TEST_CASE("kernels: GemmPackedIndirectF32 and its FMA twin equal the reference on offsets into A", "[kernels][gemm]") {
  for (const Dispatch& d : GemmDispatches())
    for (const bool fma : {false, true}) {
      auto kernel = [&](auto... args) {
        fma ? d.kernels.GemmPackedIndirectFmaF32(args...) : d.kernels.GemmPackedIndirectF32(args...);
      };
      auto* reference = fma ? &ref::GemmFmaF32 : &ref::GemmF32;
      REQUIRE((d.kernels.GemmF32 && d.kernels.GemmFmaF32 && d.kernels.GemmBiasActF32 && d.kernels.GemmBiasActFmaF32 &&
               d.kernels.GemmPackedF32 && d.kernels.GemmPackedFmaF32 && d.kernels.GemmPackedIndirectF32 &&
               d.kernels.GemmPackedIndirectFmaF32));
      SplitMix64 rng(31);
      int cases = 0;
      // A as a convolution reads its input: row_off[m] a position (rows m apart by 3 or a
      // row's width), k_off[k] a channel (plane apart) and tap; rows around the tile
      // heights, column ranges as for GemmPackedF32, K across the k block; specials in A;
      // the epilogue (per-column bias, activations).
      for (int64_t M : {1, 5, 6, 7, 49, 50})
        for (int64_t N : {1, 17, 64, 130})
          for (int64_t K : {0, 9, 300}) {
            const int variant = int(M + N + K) % 3;
            const int64_t plane = 3 * M + 11;
            std::vector<int64_t> row_off(static_cast<size_t>(M)), k_off(static_cast<size_t>(std::max<int64_t>(K, 1)));
            for (int64_t m = 0; m < M; ++m) row_off[size_t(m)] = (m / 7) * 9 + (m % 7) * (1 + variant % 2);
            for (int64_t k = 0; k < K; ++k) k_off[size_t(k)] = (k / 9) * plane + (k % 9 / 3) * 9 + k % 3;
            const int64_t span = (K ? *std::max_element(k_off.begin(), k_off.begin() + K) : 0) +
                                 *std::max_element(row_off.begin(), row_off.end()) + 1;
            std::vector<float> a(static_cast<size_t>(span)), b(static_cast<size_t>(std::max<int64_t>(K * N, 1)));
            std::vector<float> bias(static_cast<size_t>(N));
            Fill(rng, a.data(), a.size(), variant);
            Fill(rng, b.data(), b.size(), 2);
            Fill(rng, bias.data(), bias.size(), 2);
            // The same A laid out row-major, for the reference GEMM.
            std::vector<float> dense(size_t(std::max<int64_t>(M * K, 1)));
            for (int64_t m = 0; m < M; ++m)
              for (int64_t k = 0; k < K; ++k)
                dense[size_t(m * K + k)] = a[size_t(row_off[size_t(m)] + k_off[size_t(k)])];
            std::vector<float> packed(size_t(std::max<int64_t>(ref::GemmPackedFloats(K, N), 1)), U2F(kGuard));
            d.kernels.GemmPackBF32(K, N, b.data(), N, 1, packed.data());
            for (int64_t n_begin : {int64_t(0), int64_t(64)}) {
              if (n_begin >= N) continue;
              for (int64_t n_end : {N, std::min<int64_t>(N, n_begin + 70)}) {
                const int64_t w = n_end - n_begin, ldc = w + 1;
                const int e = int(M + N + K + n_begin + n_end) % 3;
                const float* bp = e ? bias.data() : nullptr;
                const Activation act = e == 2 ? Activation::kHardSwish : e == 1 ? Activation::kRelu : Activation::kNone;
                std::vector<float> want(size_t(M * ldc), U2F(kGuard)), got(size_t(M * ldc), U2F(kGuard));
                reference(M, w, K, dense.data(), K, 1, b.data() + n_begin, N, 1, want.data(), ldc);
                for (int64_t m = 0; m < M; ++m) {  // the epilogue: + bias[n], then act
                  float* c = want.data() + m * ldc;
                  if (bp)
                    for (int64_t n = 0; n < w; ++n) c[n] = c[n] + bp[n_begin + n];
                  ref::EpilogueF32(c, w, nullptr, act);
                }
                kernel(M, N, K, a.data(), row_off.data(), k_off.data(), packed.data(), n_begin, n_end, got.data(), ldc,
                       bp, act);
                ++cases;
                const std::string diff = DiffF32(want.data(), got.data(), want.size());
                if (!diff.empty())
                  FAIL_CHECK(IsaName(d.isa) << (fma ? " fma" : "") << " M=" << M << " N=" << N << " K=" << K
                                            << " cols [" << n_begin << ", " << n_end << "): " << diff);
              }
            }
          }
      INFO(cases << " products");
    }
}

TEST_CASE("kernels: GemmI16PairsI32 equals the reference's wrapping int32 sums", "[kernels][gemm][int8]") {
  const Dispatch d = MakeDispatch(ActiveIsa());
  REQUIRE(d.kernels.GemmI16PairsI32 != nullptr);
  SplitMix64 rng(37);
  int cases = 0;
  // Shapes around the tile (4 rows, 2 vectors of columns) and the lane counts; padded
  // row strides; operands over the whole int16 range (sums that wrap, the pair
  // -32768 * -32768 twice) and over the 8-bit range the operators use.
  for (int64_t M : {1, 3, 4, 7, 13})
    for (int64_t N : {1, 5, 8, 17, 40, 67})
      for (int64_t K2 : {0, 1, 3, 64, 257})
        for (int range : {0, 1}) {
          if (K2 == 257 && M > 4) continue;  // keep the test quick
          const int64_t lda = 2 * K2 + (M % 2) * 6, ldb = 2 * N + (N % 3) * 2;
          std::vector<int16_t> a(size_t(std::max<int64_t>(M * lda, 1))), b(size_t(std::max<int64_t>(K2 * ldb, 1)));
          auto val = [&] {
            if (range == 0) return int16_t(int32_t(rng.NextU32() % 511) - 255);
            const uint32_t u = rng.NextU32();
            return u % 5 == 0 ? int16_t(-32768) : int16_t(u >> 16);
          };
          for (auto& v : a) v = val();
          for (auto& v : b) v = val();
          std::vector<int32_t> want(size_t(M * (N + 1)), 0x5A5A5A5A), got(want);
          ref::GemmI16PairsI32(M, N, K2, a.data(), lda, b.data(), ldb, want.data(), N + 1);
          d.kernels.GemmI16PairsI32(M, N, K2, a.data(), lda, b.data(), ldb, got.data(), N + 1);
          ++cases;
          if (want != got) {
            size_t i = 0;
            while (want[i] == got[i]) ++i;
            FAIL_CHECK(IsaName(d.isa) << " M=" << M << " N=" << N << " K2=" << K2 << " range " << range
                                      << ": first difference at " << i << ": " << want[i] << " vs " << got[i]);
          }
        }
  // The wrap itself: four pairs of -32768 * -32768 sum to 2^33, which is 0 modulo 2^32.
  std::vector<int16_t> a(8, int16_t(-32768)), b(8, int16_t(-32768));
  int32_t c = 1;
  d.kernels.GemmI16PairsI32(1, 1, 4, a.data(), 8, b.data(), 2, &c, 1);
  CHECK(c == 0);
  INFO(cases << " products");
}

TEST_CASE("kernels: GemmU8S8I32 equals the reference's wrapping int32 sums", "[kernels][gemm][int8]") {
  const Dispatch d = MakeDispatch(ActiveIsa());
  REQUIRE(d.kernels.GemmU8S8I32 != nullptr);
  SplitMix64 rng(41);
  int cases = 0;
  // Shapes around both tiles (4 x 2 and 8 x 3 vectors of columns) and the lane counts;
  // padded row strides; the extremes of both operands (255 * -128) in runs long enough
  // for the int32 sums to wrap, and random bytes.
  for (int64_t M : {1, 3, 4, 8, 9, 17})
    for (int64_t N : {1, 5, 8, 16, 17, 32, 48, 50, 80, 97})
      for (int64_t K4 : {0, 1, 3, 64, 300})
        for (int range : {0, 1}) {
          if (K4 == 300 && M > 8) continue;  // keep the test quick
          const int64_t lda = 4 * K4 + (M % 2) * 5, ldb = 4 * N + (N % 3) * 4;
          std::vector<uint8_t> a(size_t(std::max<int64_t>(M * lda, 1)));
          std::vector<int8_t> b(size_t(std::max<int64_t>(K4 * ldb, 1)));
          for (auto& v : a) v = range == 0 ? uint8_t(rng.NextU32()) : (rng.NextU32() % 4 ? 255 : 0);
          for (auto& v : b) v = range == 0 ? int8_t(rng.NextU32()) : (rng.NextU32() % 4 ? -128 : 127);
          std::vector<int32_t> want(size_t(M * (N + 1)), 0x5A5A5A5A), got(want);
          ref::GemmU8S8I32(M, N, K4, a.data(), lda, b.data(), ldb, want.data(), N + 1);
          d.kernels.GemmU8S8I32(M, N, K4, a.data(), lda, b.data(), ldb, got.data(), N + 1);
          ++cases;
          if (want != got) {
            size_t i = 0;
            while (want[i] == got[i]) ++i;
            FAIL_CHECK(IsaName(d.isa) << " M=" << M << " N=" << N << " K4=" << K4 << " range " << range
                                      << ": first difference at " << i << ": " << want[i] << " vs " << got[i]);
          }
        }
  // The wrap itself: 2^17 products of 255 * -128 sum to -4278190080, which is 16777216
  // modulo 2^32.
  const int64_t K4 = 32768;
  std::vector<uint8_t> a(size_t(4 * K4), 255);
  std::vector<int8_t> b(size_t(4 * K4), -128);
  int32_t c = 1;
  d.kernels.GemmU8S8I32(1, 1, K4, a.data(), 4 * K4, b.data(), 4, &c, 1);
  CHECK(c == int32_t(uint32_t(uint64_t(4 * K4) * uint64_t(uint32_t(-32640)))));
  CHECK(d.kernels.native_dot_u8s8 == (d.isa == Isa::kAvx512Vnni || d.isa == Isa::kAvxVnni));
  // The derived targets (their base's kernels with the 8-bit dot product: kernels/target.cpp)
  // list their own integer GEMM, the float kernels of their base.
  if (d.isa == Isa::kAvxVnni || d.isa == Isa::kAvx512Vnni || d.isa == Isa::kNeonDot) {
    const Dispatch base = MakeDispatch(Isa(int(d.isa) - 1));
    CHECK(d.kernels.GemmU8S8I32 != base.kernels.GemmU8S8I32);
    CHECK(d.kernels.GemmI16PairsI32 != base.kernels.GemmI16PairsI32);
    CHECK(d.kernels.SumF32 == base.kernels.SumF32);
  }
  INFO(cases << " products");
}

TEST_CASE("kernels: DequantTransposeI32F32 equals the reference epilogue, specials included", "[kernels][gemm][int8]") {
  const Dispatch d = MakeDispatch(ActiveIsa());
  REQUIRE(d.kernels.DequantTransposeI32F32 != nullptr);
  SplitMix64 rng(43);
  int cases = 0;
  // Rows and channels around every target's lanes (whole blocks, edges of both); sums of
  // every magnitude (wrapping differences included); scales and biases with specials
  // (variant 2); with and without bias, relu and a quantisation (unsigned and signed).
  for (int64_t M : {1, 3, 4, 15, 16, 17, 33, 64, 70})
    for (int64_t rows : {1, 4, 5, 16, 19, 32})
      for (int variant = 0; variant < 3; ++variant)
        for (int flags = 0; flags < 12; ++flags) {
          const int64_t lda = M + 3, ldy = rows + 2;
          std::vector<int32_t> c(static_cast<size_t>(rows * lda)), sub(static_cast<size_t>(M));
          std::vector<float> scale(static_cast<size_t>(M)), bias(static_cast<size_t>(M));
          for (auto& v : c) v = variant == 1 ? int32_t(rng.NextU32()) : int32_t(rng.NextU32() % 200001) - 100000;
          for (auto& v : sub) v = variant == 1 ? int32_t(rng.NextU32()) : int32_t(rng.NextU32() % 2001) - 1000;
          Fill(rng, scale.data(), scale.size(), variant);
          for (auto& v : scale) v *= 0.001f;
          Fill(rng, bias.data(), bias.size(), variant);
          if (variant == 0) c[0] = sub[0];  // a zero difference: +0 times a negative scale
          const ref::QdqArgs u8{0.05f, 7, 0, 255, 0.05f, 7}, s8{0.0625f, -3, -128, 127, 0.03f, 2};
          const ref::QdqArgs* q = flags / 4 == 1 ? &u8 : flags / 4 == 2 ? &s8 : nullptr;
          std::vector<uint32_t> want(static_cast<size_t>(M * ldy), kGuard), got(want);
          const float* b = flags & 1 ? bias.data() : nullptr;
          const int32_t relu = (flags >> 1) & 1;
          ref::DequantTransposeI32F32(rows, M, c.data(), lda, sub.data(), scale.data(), b, relu, q,
                                      reinterpret_cast<float*>(want.data()), ldy);
          d.kernels.DequantTransposeI32F32(rows, M, c.data(), lda, sub.data(), scale.data(), b, relu, q,
                                           reinterpret_cast<float*>(got.data()), ldy);
          ++cases;
          for (size_t i = 0; i < want.size(); ++i) {
            float w, g;
            std::memcpy(&w, &want[i], 4);
            std::memcpy(&g, &got[i], 4);
            if (want[i] != got[i] && !(w != w && g != g && want[i] != kGuard && got[i] != kGuard)) {
              FAIL_CHECK(IsaName(d.isa) << " M=" << M << " rows=" << rows << " variant " << variant << " flags "
                                        << flags << ": element " << i << ": " << w << " vs " << g);
              break;
            }
          }
        }
  CHECK(cases == 9 * 6 * 3 * 12);
}

TEST_CASE("kernels: QuantizeTransposeF32U8 equals the reference quantisation, specials included", "[kernels][int8]") {
  const Dispatch d = MakeDispatch(ActiveIsa());
  REQUIRE(d.kernels.QuantizeTransposeF32U8 != nullptr);
  SplitMix64 rng(47);
  int cases = 0;
  for (int64_t rows : {1, 4, 7, 16, 20, 48})
    for (int64_t cols : {1, 5, 16, 33, 64})
      for (int variant = 0; variant < 3; ++variant)
        for (int sign = 0; sign < 2; ++sign) {
          const int64_t ss = cols + 3, ds = rows + 5;
          std::vector<float> x(static_cast<size_t>(rows * ss));
          Fill(rng, x.data(), x.size(), variant);
          for (auto& v : x) v *= 60.0f;  // past both ends of the byte range
          const float scale = sign ? 0.5f : 0.37f;
          const int32_t zp = sign ? -5 : 117, lo = sign ? -128 : 0, hi = sign ? 127 : 255;
          std::vector<uint8_t> want(static_cast<size_t>(cols * ds), 0xA5), got(want);
          ref::QuantizeTransposeF32U8(x.data(), ss, rows, cols, scale, zp, lo, hi, want.data(), ds);
          d.kernels.QuantizeTransposeF32U8(x.data(), ss, rows, cols, scale, zp, lo, hi, got.data(), ds);
          ++cases;
          if (want != got) {
            size_t i = 0;
            while (want[i] == got[i]) ++i;
            FAIL_CHECK(IsaName(d.isa) << " rows=" << rows << " cols=" << cols << " variant " << variant << " sign "
                                      << sign << ": byte " << i << ": " << int(want[i]) << " vs " << int(got[i]));
          }
        }
  CHECK(cases == 6 * 5 * 3 * 2);
}

TEST_CASE("kernels: NBitsGemmF32 equals the reference fold, rows of A and specials included", "[kernels]") {
  const Dispatch d = MakeDispatch(ActiveIsa());
  REQUIRE(d.kernels.NBitsGemmF32 != nullptr);
  SplitMix64 rng(97);
  constexpr int64_t G = ref::kNBitsCols;
  int cases = 0;
  // Both code layouts (two codes a byte, one); K odd (a lone last k), off the block and
  // vector sizes; groups from 0 and from 1; codes of every byte value, scales, zero points
  // and A with specials in variant 2; one row (decoding: a group in parts of 4 vectors)
  // and several (16 columns at a time: tiles of rows, their halves and a rest).
  for (int64_t code_bits : {4, 8})
    for (int64_t K : {1, 5, 16, 33, 100, 257})
      for (int64_t block : {16, 32, 128})
        for (int variant = 0; variant < 3; ++variant)
          for (int64_t groups : {2, 3})
            for (int64_t rows : {1, 2, 3, 8, 15}) {
              const int64_t blocks = (K + block - 1) / block, lda = K + 3, ldy = groups * G + 5;
              const int64_t bytes = groups * ref::NBitsGroupBytes(K, code_bits);
              std::vector<uint8_t> codes(size_t(bytes + ref::kNBitsPad), 0xA5);
              for (int64_t i = 0; i < bytes; ++i) codes[size_t(i)] = uint8_t(rng.NextU32());
              std::vector<float> params(static_cast<size_t>(groups * blocks * 2 * G)),
                  a(static_cast<size_t>(rows * lda));
              Fill(rng, params.data(), params.size(), variant);
              Fill(rng, a.data(), a.size(), variant);
              for (int64_t g0 : {0, 1}) {
                std::vector<float> want(size_t(rows * ldy), U2F(kGuard)), got(want);
                ref::NBitsGemmF32(a.data(), lda, rows, K, block, codes.data(), code_bits, params.data(), g0, groups,
                                  want.data(), ldy);
                d.kernels.NBitsGemmF32(a.data(), lda, rows, K, block, codes.data(), code_bits, params.data(), g0,
                                       groups, got.data(), ldy);
                ++cases;
                for (size_t i = 0; i < want.size(); ++i) {
                  const int64_t col = int64_t(i) % ldy;
                  const bool untouched = col < g0 * G || col >= groups * G;
                  if (untouched ? F2U(got[i]) != kGuard : !SameF32(want[i], got[i])) {
                    FAIL_CHECK(IsaName(d.isa)
                               << " code_bits=" << code_bits << " K=" << K << " block=" << block << " variant "
                               << variant << " rows=" << rows << " g0=" << g0 << " at " << i << ": want 0x" << std::hex
                               << F2U(want[i]) << " got 0x" << F2U(got[i]));
                    break;
                  }
                }
              }
            }
  INFO(cases << " products");
}

TEST_CASE("kernels: RangeF32 equals the reference's fold from +0", "[kernels]") {
  const Dispatch d = MakeDispatch(ActiveIsa());
  SplitMix64 rng(43);
  int cases = 0;
  // Random values with specials (NaN, infinities, signed zeros), all-positive and
  // all-negative inputs, and zeros of both signs only (the result's zero is +0).
  for (int64_t n : {0, 1, 3, 15, 16, 17, 63, 64, 65, 67, 1000})
    for (int variant = 0; variant < 6; ++variant) {
      std::vector<float> x(static_cast<size_t>(n));
      Fill(rng, x.data(), x.size(), variant % 3);
      for (float& v : x) {
        if (variant == 3) v = std::fabs(v);
        if (variant == 4) v = -std::fabs(v);
        if (variant == 5) v = (rng.NextU32() & 1) ? -0.0f : 0.0f;
      }
      float want_lo = 1, want_hi = 1, got_lo = 2, got_hi = 2;
      ref::RangeF32(x.data(), n, &want_lo, &want_hi);
      d.kernels.RangeF32(x.data(), n, &got_lo, &got_hi);
      ++cases;
      CHECK(F2U(want_lo) == F2U(got_lo));
      CHECK(F2U(want_hi) == F2U(got_hi));
    }
  const float xs[] = {-0.0f, std::numeric_limits<float>::quiet_NaN(), 3.0f, -2.0f, 0.0f};
  float lo = 1, hi = 1;
  ref::RangeF32(xs, 5, &lo, &hi);
  CHECK(lo == -2.0f);
  CHECK(hi == 3.0f);
  ref::RangeF32(xs, 2, &lo, &hi);
  CHECK(F2U(lo) == 0u);  // +0, not the -0 input
  CHECK(F2U(hi) == 0u);
  INFO(cases << " ranges");
}

TEST_CASE("kernels: QuantizeF32 equals the reference rounding and saturation", "[kernels]") {
  const Dispatch d = MakeDispatch(ActiveIsa());
  REQUIRE(d.kernels.QuantizeF32 != nullptr);
  SplitMix64 rng(41);
  int cases = 0;
  // uint8 and int8 with zero points at and inside the range ends; scales small, large,
  // negative, subnormal and zero (x / 0: infinities and NaN); inputs with specials (NaN,
  // infinities, signed zeros, ties like 2.5 * scale) and random values around the range.
  struct P {
    int32_t lo, hi, zp;
    float scale;
  };
  const P params[] = {{0, 255, 0, 0.02f},    {0, 255, 128, 0.5f},     {0, 255, 255, 1.0f},
                      {-128, 127, 0, 0.25f}, {-128, 127, -128, 3.0f}, {-128, 127, 5, -0.1f},
                      {0, 255, 7, 1e-40f},   {-128, 127, 1, 0.0f},    {0, 255, 3, 1e30f}};
  for (const P& p : params)
    for (int64_t n : {1, 3, 15, 16, 17, 63, 64, 65, 67, 1000}) {
      std::vector<float> x(static_cast<size_t>(n));
      const int variant = int(n + p.zp) % 3;
      Fill(rng, x.data(), x.size(), variant);
      for (size_t i = 0; i < x.size(); i += 5) x[i] = (float(int(rng.NextU32() % 600) - 300) + 0.5f) * p.scale;  // ties
      std::vector<uint8_t> want(size_t(n) + 4, 0xA5), got(size_t(n) + 4, 0xA5);
      ref::QuantizeF32(x.data(), n, p.scale, p.zp, p.lo, p.hi, want.data());
      d.kernels.QuantizeF32(x.data(), n, p.scale, p.zp, p.lo, p.hi, got.data());
      ++cases;
      if (want != got) {
        size_t i = 0;
        while (want[i] == got[i]) ++i;
        FAIL_CHECK(IsaName(d.isa) << " lo " << p.lo << " zp " << p.zp << " scale " << p.scale << " n " << n
                                  << ": element " << i << " x=" << x[i] << ": " << int(want[i]) << " vs "
                                  << int(got[i]));
      }
    }
  // The formula itself on a few values: ties to even, NaN to the zero point, saturation.
  const float xs[] = {2.5f, 3.5f, -2.5f, std::numeric_limits<float>::quiet_NaN(), 1e9f, -1e9f, -0.0f};
  uint8_t y[7];
  ref::QuantizeF32(xs, 7, 1.0f, 10, 0, 255, y);
  const uint8_t expect[7] = {12, 14, 8, 10, 255, 0, 10};
  for (int i = 0; i < 7; ++i) CHECK(int(y[i]) == int(expect[i]));
  INFO(cases << " runs");
}

TEST_CASE("kernels: QuantDequantF32 equals the reference's quantisation then dequantisation", "[kernels]") {
  const Dispatch d = MakeDispatch(ActiveIsa());
  REQUIRE(d.kernels.QuantDequantF32 != nullptr);
  SplitMix64 rng(47);
  int cases = 0;
  // Q's parameters as in the QuantizeF32 test (zero points at the range ends, negative,
  // subnormal, zero and huge scales); DQ's scale and zero point the same or different
  // (negative, zero, NaN scales: the product's signs and specials), with ties and specials
  // in x; the guard past n must survive.
  struct P {
    int32_t lo, hi, zp;
    float scale;
    int32_t dq_zp;
    float dq_scale;
  };
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const P params[] = {
      {0, 255, 0, 0.02f, 0, 0.02f},    {0, 255, 128, 0.5f, 128, 0.5f},     {0, 255, 255, 1.0f, 3, -2.0f},
      {-128, 127, 0, 0.25f, 0, 0.25f}, {-128, 127, -128, 3.0f, 127, 0.0f}, {-128, 127, 5, -0.1f, -7, 1e-38f},
      {0, 255, 7, 1e-40f, 7, 1e30f},   {-128, 127, 1, 0.0f, 1, nan},       {0, 255, 3, 1e30f, 0, -0.0f}};
  for (const P& p : params)
    for (int64_t n : {1, 3, 15, 16, 17, 31, 32, 33, 63, 64, 65, 1000}) {
      std::vector<float> x(static_cast<size_t>(n));
      Fill(rng, x.data(), x.size(), int(n + p.zp) % 3);
      for (size_t i = 0; i < x.size(); i += 5) x[i] = (float(int(rng.NextU32() % 600) - 300) + 0.5f) * p.scale;  // ties
      std::vector<float> want(size_t(n) + 4, U2F(kGuard)), got(size_t(n) + 4, U2F(kGuard));
      ref::QuantDequantF32(x.data(), n, p.scale, p.zp, p.lo, p.hi, p.dq_scale, p.dq_zp, want.data());
      d.kernels.QuantDequantF32(x.data(), n, p.scale, p.zp, p.lo, p.hi, p.dq_scale, p.dq_zp, got.data());
      ++cases;
      for (size_t i = 0; i < want.size(); ++i)
        if (F2U(want[i]) != F2U(got[i]) && !(want[i] != want[i] && got[i] != got[i] && i < size_t(n))) {
          FAIL_CHECK(IsaName(d.isa) << " lo " << p.lo << " zp " << p.zp << " scale " << p.scale << " n " << n
                                    << ": element " << i << " x=" << (i < x.size() ? x[i] : 0.0f) << ": 0x" << std::hex
                                    << F2U(want[i]) << " vs 0x" << F2U(got[i]));
          break;
        }
    }
  // The reference is QuantizeF32's byte, read as its type, minus dq_zp, times dq_scale.
  const float xs[] = {2.5f, 3.5f, -2.5f, nan, 1e9f, -1e9f, -0.0f};
  float y[7];
  ref::QuantDequantF32(xs, 7, 1.0f, -3, -128, 127, 0.5f, 1, y);
  const float expect[7] = {-1.0f, 0.0f, -3.0f, -2.0f, 63.0f, -64.5f, -2.0f};
  for (int i = 0; i < 7; ++i) CHECK(F2U(y[i]) == F2U(expect[i]));
  ref::QuantDequantF32(xs, 1, 1.0f, 0, 0, 255, -1.0f, 2, y);
  CHECK(F2U(y[0]) == 0x80000000u);  // (2 - 2) * -1: float(0) * -1 is -0
  INFO(cases << " runs");
}

TEST_CASE("kernels: Transpose32 moves every bit as the reference", "[kernels]") {
  const Dispatch d = MakeDispatch(ActiveIsa());
  REQUIRE(d.kernels.Transpose32 != nullptr);
  SplitMix64 rng(43);
  int cases = 0;
  // Shapes around the lane counts and the 4 x 4 tile blocks, strides wider than the
  // block (sub-matrices), every 32-bit pattern (NaN payloads, subnormals) as data.
  for (int64_t rows : {1, 3, 4, 7, 8, 15, 16, 17, 33, 64, 65, 100})
    for (int64_t cols : {1, 2, 4, 5, 8, 9, 16, 31, 32, 63, 64, 70}) {
      const int64_t ss = cols + int64_t(rng.NextU32() % 3), ds = rows + int64_t(rng.NextU32() % 3);
      std::vector<uint32_t> src(size_t(rows * ss)), want(size_t(cols * ds), 0xDEADBEEFu), got = want;
      for (uint32_t& v : src) v = rng.NextU32();
      ref::Transpose32(src.data(), ss, want.data(), ds, rows, cols);
      d.kernels.Transpose32(src.data(), ss, got.data(), ds, rows, cols);
      ++cases;
      if (want != got)
        FAIL_CHECK(IsaName(d.isa) << " rows " << rows << " cols " << cols << " ss " << ss << " ds " << ds);
    }
  // The contract itself on a 2 x 3 block.
  const uint32_t a[6] = {1, 2, 3, 4, 5, 6};
  uint32_t t[6] = {};
  ref::Transpose32(a, 3, t, 2, 2, 3);
  const uint32_t expect[6] = {1, 4, 2, 5, 3, 6};
  for (int i = 0; i < 6; ++i) CHECK(t[i] == expect[i]);
  INFO(cases << " shapes");
}

// Winograd F(4x4, 3x3) transforms: every geometry's partial tiles (outputs not multiples
// of 4, pads 0 to 2 and asymmetric, inputs narrower than a tile), channel counts around
// the lane counts, tile-row and channel ranges; the outputs' guard values untouched; the
// finite flag false exactly when an input value read is not finite.
TEST_CASE("kernels: WinogradF4InputF32 and WinogradF4OutputF32 equal their references", "[kernels]") {
  const Dispatch d = MakeDispatch(ActiveIsa());
  SplitMix64 rng(103);
  int cases = 0;
  for (int64_t C : {1, 3, 16, 17, 35})
    for (int64_t IW : {1, 3, 6, 13, 29})
      for (int64_t PH : {0, 1, 2})
        for (int64_t PW : {0, 1}) {
          const int64_t IH = 2 + (IW + C) % 9, OH = IH + 2 * PH - 2, OW = IW + 2 * PW - 2;
          if (OH <= 0 || OW <= 0) continue;
          const Conv2DGeometry g{IH, IW, OH, OW, 3, 3, 1, 1, 1, 1, PH, PW};
          const int64_t TW = ref::WinogradTileCols(g), TH = ref::WinogradTileRows(g);
          const int variant = int(IW + C + PH) % 3;
          std::vector<float> x(size_t(C * IH * IW));
          Fill(rng, x.data(), x.size(), variant == 2 ? 0 : variant);  // finite (variant 2 has specials)
          // Input: rows [ty0, ty1) and channels [c0, c1) into V (ld C + 2, guard values around).
          const int64_t ty0 = TH > 1 ? 1 : 0, ty1 = TH, c0 = C > 3 ? 1 : 0, c1 = C, T = (ty1 - ty0) * TW, ld = C + 2,
                        mat = T * ld + 3;
          std::vector<float> want(size_t(36 * mat), U2F(kGuard)), got(want.size(), U2F(kGuard));
          const bool fw = ref::WinogradF4InputF32(x.data(), IH * IW, g, ty0, ty1, c0, c1, want.data(), ld, mat);
          const bool fg = d.kernels.WinogradF4InputF32(x.data(), IH * IW, g, ty0, ty1, c0, c1, got.data(), ld, mat);
          ++cases;
          CHECK(fw);
          CHECK(fg == fw);
          std::string diff = DiffF32(want.data(), got.data(), want.size());
          if (!diff.empty())
            FAIL_CHECK(IsaName(d.isa) << " input C" << C << " " << IH << "x" << IW << " pads " << PH << "," << PW
                                      << ": " << diff);
          // Output: from random sums (specials among them), channels [c0, c1), bias and activations.
          std::vector<float> m(size_t(36 * mat)), bias(static_cast<size_t>(C));
          Fill(rng, m.data(), m.size(), variant);
          Fill(rng, bias.data(), bias.size(), 2);
          const int e = int(IW + C + PW) % 4;
          const float* bp = e == 1 || e == 2 ? bias.data() : nullptr;
          const Activation act = e == 2 ? Activation::kRelu : e == 3 ? Activation::kHardSwish : Activation::kNone;
          std::vector<float> yw(size_t(C * OH * OW) + 3, U2F(kGuard)), yg(yw.size(), U2F(kGuard));
          ref::WinogradF4OutputF32(m.data(), ld, mat, g, ty0, ty1, c0, c1, bp, act, yw.data(), OH * OW);
          d.kernels.WinogradF4OutputF32(m.data(), ld, mat, g, ty0, ty1, c0, c1, bp, act, yg.data(), OH * OW);
          diff = DiffF32(yw.data(), yg.data(), yw.size());
          if (!diff.empty()) FAIL_CHECK(IsaName(d.isa) << " output C" << C << " " << OH << "x" << OW << ": " << diff);
        }
  // The finite flag: one inf or NaN read anywhere (a padding-free corner too) clears it;
  // values the tiles do not read do not.
  const Conv2DGeometry g{9, 10, 7, 8, 3, 3, 1, 1, 1, 1, 0, 0};
  for (float bad : {INFINITY, -INFINITY, NAN})
    for (int64_t at : {int64_t(0), int64_t(2 * 90 + 8 * 10 + 9)}) {
      std::vector<float> x(3 * 90, 1.0f), v(size_t(36 * 8 * 3));
      x[size_t(at)] = bad;
      CHECK(!ref::WinogradF4InputF32(x.data(), 90, g, 0, 2, 0, 3, v.data(), 3, 8 * 3));
      CHECK(!d.kernels.WinogradF4InputF32(x.data(), 90, g, 0, 2, 0, 3, v.data(), 3, 8 * 3));
    }
  INFO(cases << " geometries");
}

TEST_CASE("kernels: DepthwiseConvF32 equals the reference planes for every geometry", "[kernels]") {
  const Dispatch d = MakeDispatch(ActiveIsa());
  REQUIRE(d.kernels.DepthwiseConvF32 != nullptr);
  SplitMix64 rng(101);
  int cases = 0;
  // Channel counts around the lane counts (4, 8, 16); planes from 1 x 1 to tall ones that
  // take several row strips; kernels, strides, dilations, pads (also larger than the
  // kernel, so whole output rows have no tap).
  for (int64_t channels : {1, 3, 8, 17, 33})
    for (int64_t K : {1, 3, 5})
      for (int64_t S : {1, 2, 3})
        for (int64_t D : {1, 2})
          for (int64_t P : {0, 1, 2, 6})
            for (int64_t IW : {1, 7, 14, 40, 113}) {
              const int64_t IH = IW == 113 ? 61 : 2 + (IW + channels) % 9, KH = K, KW = K == 5 ? 3 : K;
              const int64_t OH = (IH + 2 * P - D * (KH - 1) - 1) / S + 1, OW = (IW + 2 * P - D * (KW - 1) - 1) / S + 1;
              if (OH <= 0 || OW <= 0) continue;
              if (IW == 113 && (channels > 8 || D == 2 || P == 6)) continue;  // keep the test quick
              const Conv2DGeometry g{IH, IW, OH, OW, KH, KW, S, S, D, D, P, P};
              const int variant = int(IW + K + S + channels) % 3;
              std::vector<float> x(size_t(channels * IH * IW)), w(size_t(channels * KH * KW));
              Fill(rng, x.data(), x.size(), variant);
              Fill(rng, w.data(), w.size(), variant);  // specials in weights too: no finiteness needed
              const size_t out = size_t(channels * OH * OW);
              std::vector<float> want(out + 3, U2F(kGuard)), got(out + 3, U2F(kGuard)),
                  bias(static_cast<size_t>(channels));
              Fill(rng, bias.data(), bias.size(), 2);
              // The epilogue: none, bias, bias + Relu, HardSwish alone, by geometry.
              const int e = int(IW + K + P + channels) % 4;
              const float* bp = e == 1 || e == 2 ? bias.data() : nullptr;
              const Activation act = e == 2 ? Activation::kRelu : e == 3 ? Activation::kHardSwish : Activation::kNone;
              ref::DepthwiseConvF32(x.data(), w.data(), want.data(), channels, g, 0, OH, bp, act);
              // Whole planes, or bands of rows (as threads take them): 2 or 3 ranges, the
              // last one past OH (clamped), never touching rows outside them.
              const int64_t parts = 1 + int64_t(IW + S + P) % 3;
              for (int64_t k = 0; k < parts; ++k)
                d.kernels.DepthwiseConvF32(x.data(), w.data(), got.data(), channels, g, OH * k / parts,
                                           k + 1 == parts ? OH + 2 : OH * (k + 1) / parts, bp, act);
              ++cases;
              const std::string diff = DiffF32(want.data(), got.data(), want.size());
              if (!diff.empty())
                FAIL_CHECK(IsaName(d.isa) << " C" << channels << " K" << K << " S" << S << " D" << D << " P" << P
                                          << " IW" << IW << ": " << diff);
            }
  // Signed zeros: -0.0 inputs and positive weights fold to -0.0 everywhere (padding taps
  // are skipped, never added as +0.0).
  std::vector<float> x(3 * 7 * 9, -0.0f), w(3 * 9, 0.5f), y(3 * 7 * 9, 1.0f);
  const Conv2DGeometry g{7, 9, 7, 9, 3, 3, 1, 1, 1, 1, 1, 1};
  d.kernels.DepthwiseConvF32(x.data(), w.data(), y.data(), 3, g, 0, 7, nullptr, Activation::kNone);
  for (float v : y) CHECK(F2U(v) == 0x80000000u);
  // A band writes its rows and nothing else.
  std::fill(y.begin(), y.end(), 1.0f);
  d.kernels.DepthwiseConvF32(x.data(), w.data(), y.data(), 3, g, 2, 5, nullptr, Activation::kNone);
  for (size_t i = 0; i < y.size(); ++i) {
    const int64_t row = int64_t(i) % (7 * 9) / 9;
    CHECK(F2U(y[i]) == (row >= 2 && row < 5 ? 0x80000000u : F2U(1.0f)));
  }
  INFO(cases << " geometries");
}

TEST_CASE("kernels: ConvDirectF32 equals the reference fold for every geometry and row range", "[kernels]") {
  for (const Dispatch& d : GemmDispatches()) {
    REQUIRE(d.kernels.ConvDirectF32 != nullptr);
    SplitMix64 rng(131);
    int cases = 0;
    // Input channels 1-5, output channels around the tile (4) and lanes; kernels, strides
    // (3 takes the reference path), dilations, pads (also past the kernel: rows and columns
    // without taps); widths around the vector and tile widths; row ranges that start and
    // end inside the plane; a plane stride larger than the plane.
    for (int64_t Cg : {1, 3, 5})
      for (int64_t Mg : {1, 4, 7, 16})
        for (int64_t K : {1, 3, 7})
          for (int64_t S : {1, 2, 3})
            for (int64_t D : {1, 2})
              for (int64_t P : {0, 1, 3, 8})
                for (int64_t IW : {1, 9, 24, 71}) {
                  if ((Mg + K + IW) % 2 && D == 2) continue;  // keep the test quick
                  const int64_t IH = 3 + (IW + Cg + K) % 7, KH = K, KW = K == 7 ? 5 : K;
                  const int64_t OH = (IH + 2 * P - D * (KH - 1) - 1) / S + 1,
                                OW = (IW + 2 * P - D * (KW - 1) - 1) / S + 1;
                  if (OH <= 0 || OW <= 0) continue;
                  const Conv2DGeometry g{IH, IW, OH, OW, KH, KW, S, S, D, D, P, P};
                  const int64_t in_sp = IH * IW + (Cg % 2) * 5;
                  const int variant = int(IW + K + S + Cg + Mg) % 3;
                  std::vector<float> x(size_t(Cg * in_sp)), w(size_t(Mg * Cg * KH * KW)), bias(static_cast<size_t>(Mg));
                  Fill(rng, x.data(), x.size(), variant);
                  Fill(rng, w.data(), w.size(), variant);  // specials in weights too
                  Fill(rng, bias.data(), bias.size(), 2);
                  const int e = int(IW + K + P + Mg) % 4;
                  const float* bp = e == 1 || e == 2 ? bias.data() : nullptr;
                  const Activation act = e == 2   ? Activation::kRelu
                                         : e == 3 ? Activation::kHardSwish
                                                  : Activation::kNone;
                  const size_t out = size_t(Mg * OH * OW);
                  // The whole plane, then a range of rows inside it (rows outside stay guards).
                  for (const auto& rows : {std::pair<int64_t, int64_t>{0, OH}, {OH / 3, OH - OH / 4}}) {
                    std::vector<float> want(out + 3, U2F(kGuard)), got(out + 3, U2F(kGuard));
                    ref::ConvDirectF32(x.data(), in_sp, w.data(), want.data(), Cg, Mg, g, rows.first, rows.second, bp,
                                       act);
                    d.kernels.ConvDirectF32(x.data(), in_sp, w.data(), got.data(), Cg, Mg, g, rows.first, rows.second,
                                            bp, act);
                    ++cases;
                    const std::string diff = DiffF32(want.data(), got.data(), want.size());
                    if (!diff.empty())
                      FAIL_CHECK(IsaName(d.isa)
                                 << " C" << Cg << " M" << Mg << " K" << K << " S" << S << " D" << D << " P" << P
                                 << " IW" << IW << " rows [" << rows.first << ", " << rows.second << "): " << diff);
                  }
                }
    // The reference fold against a direct sum for one output (the oracle's own order), and
    // signed zeros: -0.0 inputs with positive weights fold to -0.0 (padding taps skipped).
    {
      std::vector<float> x(2 * 5 * 6), w(3 * 2 * 9);
      for (size_t i = 0; i < x.size(); ++i) x[i] = float(int(i % 7) - 3) * 0.25f;
      for (size_t i = 0; i < w.size(); ++i) w[i] = float(int(i % 5) - 2) * 0.5f;
      const Conv2DGeometry g{5, 6, 5, 6, 3, 3, 1, 1, 1, 1, 1, 1};
      std::vector<float> y(3 * 30);
      d.kernels.ConvDirectF32(x.data(), 30, w.data(), y.data(), 2, 3, g, 0, 5, nullptr, Activation::kNone);
      // Output (m=2, oh=0, ow=0): taps kh 1..2, kw 1..2 of each channel, exact in binary.
      float acc = -0.0f;
      for (int c = 0; c < 2; ++c)
        for (int kh = 1; kh < 3; ++kh)
          for (int kw = 1; kw < 3; ++kw)
            acc = acc + x[size_t(c * 30 + (kh - 1) * 6 + (kw - 1))] * w[size_t(2 * 18 + c * 9 + kh * 3 + kw)];
      CHECK(F2U(y[2 * 30]) == F2U(acc));
      std::vector<float> xz(2 * 30, -0.0f), wz(3 * 2 * 9, 0.5f), yz(3 * 30, 1.0f);
      d.kernels.ConvDirectF32(xz.data(), 30, wz.data(), yz.data(), 2, 3, g, 0, 5, nullptr, Activation::kNone);
      for (float v : yz) CHECK(F2U(v) == 0x80000000u);
    }
    INFO(cases << " geometries");
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
  for (Isa i : {Isa::kSse41, Isa::kAvx2, Isa::kAvxVnni, Isa::kAvx512, Isa::kAvx512Vnni, Isa::kNeon, Isa::kNeonDot,
                Isa::kWasm128}) {
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
}  // namespace onemodel::impl
