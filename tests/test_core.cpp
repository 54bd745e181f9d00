// Core tests: SHA-256 (FIPS 180-4 vectors), narrow floats against an independent
// enumeration, the golden hash format, tensors' size checks, the thread pool and the
// floating-point environment guard, per-thread objects.
#include "tests/catch.h"

#include <algorithm>
#include <atomic>
#include <cfenv>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "core/error.h"
#include "core/fpenv.h"
#include "core/golden.h"
#include "core/minifloat.h"
#include "core/npy.h"
#include "core/per_thread.h"
#include "core/random.h"
#include "core/scratch.h"
#include "core/sha256.h"
#include "core/tensor.h"
#include "core/threadpool.h"
#include "tests/test_util.h"

namespace onemodel::impl {
namespace test {

TEST_CASE("sha256: FIPS 180-4 test vectors", "[core][sha256]") {
  CHECK(Sha256Hex("abc", 3) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(Sha256Hex("", 0) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  const std::string two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
  CHECK(Sha256Hex(two.data(), two.size()) == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  const std::string four =
      "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrst"
      "u";
  CHECK(Sha256Hex(four.data(), four.size()) == "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
  Sha256 million;
  const std::string a1000(1000, 'a');
  for (int i = 0; i < 1000; ++i) million.Update(a1000.data(), a1000.size());
  CHECK(million.HexDigest() == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  // Split updates at every boundary give the same digest as one update.
  std::string msg(200, 'x');
  for (size_t i = 0; i < msg.size(); ++i) msg[i] = char(i * 31 + 7);
  const std::string whole = Sha256Hex(msg.data(), msg.size());
  for (size_t cut = 0; cut <= msg.size(); cut += 13) {
    Sha256 s;
    s.Update(msg.data(), cut);
    s.Update(msg.data() + cut, msg.size() - cut);
    CHECK(s.HexDigest() == whole);
  }
}

namespace {
// Independent reference for F32ToMini: enumerate every finite non-negative code, pick
// the nearest value (ties to the even code); one virtual code past the largest finite
// stands for "overflowed".
struct RefTable {
  std::vector<std::pair<double, uint32_t>> vals;  // finite non-negative codes by value
  uint32_t maxcode = 0;
};
RefTable MakeRefTable(const MiniFormat& f) {
  RefTable t;
  const uint32_t sign = 1u << (f.ebits + f.mbits);
  for (uint32_t c = 0; c < sign; ++c) {
    const float v = MiniToF32(c, f);
    if (IsNaN(v) || std::isinf(v)) continue;
    t.vals.push_back({double(v), c});
    t.maxcode = std::max(t.maxcode, c);
  }
  std::sort(t.vals.begin(), t.vals.end());
  const double top = double(MiniToF32(t.maxcode, f)), below = double(MiniToF32(t.maxcode - 1, f));
  t.vals.push_back({top + (top - below), t.maxcode + 1});  // virtual overflow code
  return t;
}
uint32_t RefMini(float x, const MiniFormat& f, bool saturate, const RefTable& t) {
  const auto& vals = t.vals;
  const uint32_t maxcode = t.maxcode;
  const uint32_t sign = 1u << (f.ebits + f.mbits);
  const uint32_t nan = MiniCanonicalNaN(f);
  if (IsNaN(x)) return nan;
  const bool neg = std::signbit(x);
  const double a = std::fabs(double(x));
  uint32_t code;
  if (std::isinf(x)) {
    code = maxcode + 1;
  } else {
    auto it = std::lower_bound(vals.begin(), vals.end(), std::make_pair(a, 0u),
                               [](const auto& p, const auto& q) { return p.first < q.first; });
    if (it == vals.end()) {
      code = maxcode + 1;
    } else if (it->first == a || it == vals.begin()) {
      code = it->second;
    } else {
      const auto lo = *(it - 1), hi = *it;
      const double dl = a - lo.first, dh = hi.first - a;
      code = dl < dh ? lo.second : dh < dl ? hi.second : ((lo.second & 1) ? hi.second : lo.second);
    }
  }
  const uint32_t s = neg ? sign : 0;
  if (code > maxcode) {
    if (saturate || f.special == MiniFormat::Special::kNone) return s | maxcode;
    if (f.special == MiniFormat::Special::kIeee) return s | (((1u << f.ebits) - 1) << f.mbits);
    return nan;
  }
  if (code == 0 && f.special == MiniFormat::Special::kFNUZ) return 0;
  return s | code;
}
}  // namespace

TEST_CASE("minifloat: conversions equal an independent enumeration, ties and specials included", "[core][minifloat]") {
  const MiniFormat* formats[] = {&kFloat16,    &kBFloat16,       &kFloat8E4M3FN, &kFloat8E4M3FNUZ,
                                 &kFloat8E5M2, &kFloat8E5M2FNUZ, &kFloat4E2M1};
  SplitMix64 rng(42);
  for (const MiniFormat* f : formats) {
    std::vector<float> xs = F32Specials();
    const uint32_t sign = 1u << (f->ebits + f->mbits);
    // Every code, every midpoint between neighbours (ties), and just either side.
    for (uint32_t c = 0; c + 1 < sign; ++c) {
      const float v = MiniToF32(c, *f), w = MiniToF32(c + 1, *f);
      if (IsNaN(v) || IsNaN(w) || std::isinf(w)) continue;
      const float mid = float((double(v) + double(w)) / 2);
      for (float x : {v, mid, std::nextafter(mid, 0.0f), std::nextafter(mid, 1e30f)}) {
        xs.push_back(x);
        xs.push_back(-x);
      }
    }
    for (int i = 0; i < 4000; ++i) xs.push_back(U2F(rng.NextU32()));
    for (int i = 0; i < 4000; ++i) xs.push_back(rng.Uniform(-1.0f, 1.0f) * float(1 << (rng.NextU32() % 20)));
    const RefTable table = MakeRefTable(*f);
    for (bool sat : {true, false}) {
      size_t bad = 0;
      for (float x : xs) {
        const uint32_t want = RefMini(x, *f, sat, table), got = F32ToMini(x, *f, sat);
        if (want != got && bad++ < 5) {
          FAIL_CHECK("format e" << f->ebits << "m" << f->mbits << " bias " << f->bias << " sat " << sat << " x=0x"
                                << std::hex << F2U(x) << " want 0x" << want << " got 0x" << got);
        }
      }
      CHECK(bad == 0);
    }
  }
  // Widening is exact: every float16 code round-trips (NaNs to the canonical NaN).
  for (uint32_t c = 0; c < 65536; ++c) {
    const uint16_t back = F32ToHalf(HalfToF32(uint16_t(c)));
    if (MiniIsNaN(c, kFloat16))
      CHECK(back == 0x7E00);
    else if (back != c)
      FAIL_CHECK("float16 0x" << std::hex << c << " -> 0x" << back);
  }
  CHECK(F32ToBF16(U2F(0x3F808000u)) == 0x3F80);  // tie, even stays
  CHECK(F32ToBF16(U2F(0x3F818000u)) == 0x3F82);  // tie, odd rounds up
  CHECK(HalfToF32(0x0001) == U2F(0x33800000u));  // smallest f16 subnormal = 2^-24
}

TEST_CASE("minifloat: float8e8m0 follows onnx.numpy_helper.to_float8e8m0", "[core][minifloat]") {
  CHECK(F32ToE8M0(1.0f, true, E8M0Round::kUp) == 127);
  CHECK(F32ToE8M0(1.5f, true, E8M0Round::kUp) == 128);
  CHECK(F32ToE8M0(1.5f, true, E8M0Round::kDown) == 127);
  CHECK(F32ToE8M0(1.5f, true, E8M0Round::kNearest) == 128);
  CHECK(F32ToE8M0(1.25f, true, E8M0Round::kNearest) == 127);
  CHECK(F32ToE8M0(std::numeric_limits<float>::infinity(), true, E8M0Round::kUp) == 0xFF);
  CHECK(F32ToE8M0(U2F(0x7F7FFFFFu), true, E8M0Round::kUp) == 0xFE);
  CHECK(F32ToE8M0(U2F(0x7F7FFFFFu), false, E8M0Round::kUp) == 0xFF);
  CHECK(E8M0ToF32(127) == 1.0f);
  CHECK(IsNaN(E8M0ToF32(0xFF)));
}

TEST_CASE("golden: serialisation follows exact-contract section 8", "[core][golden]") {
  // One FLOAT tensor of shape [2] holding 1.0 and a non-canonical NaN.
  Tensor t(DType::kFloat, {2});
  float* p = t.mutable_data<float>();
  p[0] = 1.0f;
  p[1] = U2F(0xFFC12345u);
  std::vector<uint8_t> bytes;
  auto le = [&](uint64_t v, int n) {
    for (int k = 0; k < n; ++k) bytes.push_back(uint8_t(v >> (8 * k)));
  };
  le(1, 8);
  le(1, 8);
  le(2, 8);
  le(0x3F800000u, 4);
  le(0x7FC00000u, 4);
  CHECK(GoldenHash({t}) == Sha256Hex(bytes.data(), bytes.size()));
  // Several outputs hash the concatenation.
  Tensor b(DType::kBool, {3});
  b.mutable_data<uint8_t>()[1] = 7;  // any non-zero bool serialises as 1
  le(9, 8);
  le(1, 8);
  le(3, 8);
  bytes.push_back(0);
  bytes.push_back(1);
  bytes.push_back(0);
  CHECK(GoldenHash({t, b}) == Sha256Hex(bytes.data(), bytes.size()));
  // Strings: int64 length then bytes. int4: packed low nibble first.
  Tensor s(DType::kString, {2});
  s.mutable_strings()[0] = "ab";
  std::vector<uint8_t> sb;
  auto le2 = [&](uint64_t v) {
    for (int k = 0; k < 8; ++k) sb.push_back(uint8_t(v >> (8 * k)));
  };
  le2(8);
  le2(1);
  le2(2);
  le2(2);
  sb.push_back('a');
  sb.push_back('b');
  le2(0);
  CHECK(GoldenHash({s}) == Sha256Hex(sb.data(), sb.size()));
  Tensor q(DType::kInt4, {3});
  q.mutable_data<int8_t>()[0] = -1;
  q.mutable_data<int8_t>()[1] = 2;
  q.mutable_data<int8_t>()[2] = 5;
  std::vector<uint8_t> qb;
  for (uint64_t v : {22ull, 1ull, 3ull})
    for (int k = 0; k < 8; ++k) qb.push_back(uint8_t(v >> (8 * k)));
  qb.push_back(0x2F);
  qb.push_back(0x05);
  CHECK(GoldenHash({q}) == Sha256Hex(qb.data(), qb.size()));
  CHECK(GoldenSkipMarker() == Sha256Hex("onemodel:skipped", 16));
  // Canonical NaN for float16 too.
  Tensor h(DType::kFloat16, {1});
  h.mutable_data<uint16_t>()[0] = 0xFE01;
  Tensor h2(DType::kFloat16, {1});
  h2.mutable_data<uint16_t>()[0] = 0x7E00;
  CHECK(GoldenHash({h}) == GoldenHash({h2}));
}

TEST_CASE("byte order: swaps, and .npy files of either order read as the host's values", "[core][endian]") {
  uint8_t b[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  SwapBytesInPlace(b, 2, 4);
  CHECK(std::vector<uint8_t>(b, b + 8) == std::vector<uint8_t>{4, 3, 2, 1, 8, 7, 6, 5});
  SwapBytesInPlace(b, 1, 8);
  CHECK(std::vector<uint8_t>(b, b + 8) == std::vector<uint8_t>{5, 6, 7, 8, 1, 2, 3, 4});
  SwapBytesInPlace(b, 4, 2);
  CHECK(std::vector<uint8_t>(b, b + 8) == std::vector<uint8_t>{6, 5, 8, 7, 2, 1, 4, 3});
  uint16_t probe = 0x0102;
  uint8_t first = 0;
  std::memcpy(&first, &probe, 1);
  CHECK(kLittleEndian == (first == 0x02));

  // A (2,) float32 array as numpy writes it with '<f4' and with '>f4' (values 1.5, -2).
  auto npy = [](const char* descr, bool big) {
    std::string header = std::string("{'descr': '") + descr + "', 'fortran_order': False, 'shape': (2,), }";
    while ((10 + header.size() + 1) % 64) header += ' ';
    header += '\n';
    std::vector<uint8_t> f = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, uint8_t(header.size()), 0};
    f.insert(f.end(), header.begin(), header.end());
    for (float v : {1.5f, -2.0f})
      for (int k = 0; k < 4; ++k) f.push_back(uint8_t(F2U(v) >> (8 * (big ? 3 - k : k))));
    return f;
  };
  const std::vector<uint8_t> le = npy("<f4", false), be = npy(">f4", true);
  for (const auto* file : {&le, &be}) {
    Tensor t = ParseNpy(file->data(), file->size(), "x.npy");
    REQUIRE(t.numel() == 2);
    CHECK(t.data<float>()[0] == 1.5f);
    CHECK(t.data<float>()[1] == -2.0f);
  }
  // Written little-endian on every host: the same bytes as numpy's '<f4' file.
  CHECK(SerializeNpy(ParseNpy(be.data(), be.size(), "x.npy")) == le);
}

TEST_CASE("shape: the inline small vector behaves as std::vector, inline and spilled", "[core][shape]") {
  // Every operation against a std::vector doing the same, through the inline limit and
  // past it, including a source aliasing the shape itself.
  SplitMix64 rng(41);
  for (int trial = 0; trial < 2000; ++trial) {
    Shape s;
    std::vector<int64_t> v;
    for (int step = 0; step < 24; ++step) {
      const uint32_t op = rng.NextU32() % 9;
      const int64_t x = int64_t(rng.NextU32() % 100) - 50;
      const size_t at = v.empty() ? 0 : rng.NextU32() % (v.size() + 1);
      switch (op) {
        case 0:
          s.push_back(x);
          v.push_back(x);
          break;
        case 1:
          s.insert(s.begin() + at, x);
          v.insert(v.begin() + long(at), x);
          break;
        case 2:
          s.insert(s.begin() + at, 3, x);
          v.insert(v.begin() + long(at), 3, x);
          break;
        case 3: {  // a range from the shape itself
          const Shape copy = s;
          s.insert(s.begin() + at, s.begin(), s.end());
          v.insert(v.begin() + long(at), copy.begin(), copy.end());
          break;
        }
        case 4:
          if (!v.empty() && at < v.size()) {
            s.erase(s.begin() + at);
            v.erase(v.begin() + long(at));
          }
          break;
        case 5:
          s.resize(at + 1, x);
          v.resize(at + 1, x);
          break;
        case 6: {
          Shape moved(std::move(s));
          s = moved;
          break;
        }
        case 7:
          s.assign(s.begin() + (at ? at - 1 : 0), s.end());
          v.assign(v.begin() + long(at ? at - 1 : 0), v.end());
          break;
        default:
          if (!v.empty()) {
            s.pop_back();
            v.pop_back();
          }
          break;
      }
      if (v.size() > 40) {
        s.clear();
        v.clear();
      }
      REQUIRE(s.size() == v.size());
      REQUIRE(std::equal(s.begin(), s.end(), v.begin()));
      REQUIRE(s == v);
      REQUIRE(std::vector<int64_t>(s) == v);
    }
  }
  const Shape a{1, 2, 3}, b = std::vector<int64_t>{1, 2, 4};
  CHECK(a < b);
  CHECK(a != b);
  CHECK(Shape(8, 7).size() == 8);  // past the inline storage
  CHECK(ShapeToString(Shape{2, 3, 4, 5, 6, 7, 8}) == "[2,3,4,5,6,7,8]");
}

TEST_CASE("tensor: absurd sizes are typed errors, not crashes", "[core][tensor]") {
  CHECK_THROWS_AS(Tensor(DType::kFloat, {-1, 3}), Error);
  try {
    Tensor(DType::kFloat, {int64_t(1) << 40, int64_t(1) << 30}, "input 'x'");
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.code() == ErrorCode::kOutOfRange);
    CHECK(std::string(e.what()).find("input 'x'") != std::string::npos);
  }
  CHECK_THROWS_AS(Tensor(DType(99), {1}), Error);
  Tensor z(DType::kFloat, {0, 5});
  CHECK(z.numel() == 0);
}

TEST_CASE("threadpool: chunks cover the range once, for any thread count", "[core][threads]") {
  for (int threads : {1, 2, 3, 7}) {
    ThreadPool pool(threads);
    for (int64_t n : {int64_t(0), int64_t(1), int64_t(5), int64_t(1000), int64_t(12345)}) {
      std::vector<std::atomic<int>> hits(size_t(n > 0 ? n : 1));
      for (auto& h : hits) h = 0;
      pool.ParallelFor(n, 16, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) hits[size_t(i)]++;
      });
      for (int64_t i = 0; i < n; ++i) REQUIRE(hits[size_t(i)] == 1);
    }
    CHECK_THROWS_AS(pool.ParallelFor(100, 1,
                                     [](int64_t b, int64_t e) {
                                       if (b > 10 || e > 90) throw Error(ErrorCode::kInternal, "boom");
                                     }),
                    Error);
  }
}

namespace {
std::atomic<int> g_probes_made{0}, g_probes_intact{0}, g_probes_broken{0};
// A per-thread object whose destructor checks that its own storage still holds it.
struct Probe {
  static constexpr uint64_t kMagic = 0x6f6e656d6f64656cull;
  uint64_t magic = kMagic;
  ScratchVector<uint32_t> data;
  Probe() : data(4096) {
    for (size_t i = 0; i < data.size(); ++i) data[i] = uint32_t(i * 2654435761u);
    g_probes_made++;
  }
  ~Probe() {
    bool ok = magic == kMagic && data.size() == 4096 && reinterpret_cast<uintptr_t>(data.data()) % kCacheLine == 0;
    for (size_t i = 0; ok && i < data.size(); ++i) ok = data[i] == uint32_t(i * 2654435761u);
    (ok ? g_probes_intact : g_probes_broken)++;
  }
};
Probe& ProbeSiteA() { return ONEMODEL_PER_THREAD(Probe); }
Probe& ProbeSiteB() { return ONEMODEL_PER_THREAD(Probe); }
}  // namespace

// Native only (std::thread). MinGW-w64's `thread_local` destructors ran on storage its
// emulated TLS had already freed (core/per_thread.h); this checks the property on every
// native row, the windows row under wine included, with the heap churned meanwhile.
TEST_CASE("per-thread objects: one per thread and site, destroyed at the thread's exit intact",
          "[core][threads][native_only]") {
  Probe* main_a = &ProbeSiteA();
  CHECK(main_a == &ProbeSiteA());
  CHECK(&ProbeSiteB() != main_a);
  const int made = g_probes_made, intact = g_probes_intact;
  std::atomic<int> wrong{0};
  for (int round = 0; round < 6; ++round) {
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
      threads.emplace_back([&] {
        Probe* a = &ProbeSiteA();
        Probe* b = &ProbeSiteB();
        if (a == main_a || b == main_a || a == b || a != &ProbeSiteA() || b != &ProbeSiteB()) wrong++;
        std::vector<std::vector<char>> churn;
        for (int i = 0; i < 64; ++i) churn.emplace_back(size_t(16 + 24 * i), char(i));
      });
    }
    for (auto& th : threads) th.join();
  }
  CHECK(wrong == 0);
  CHECK(g_probes_made - made == 6 * 4 * 2);
  CHECK(g_probes_intact - intact == 6 * 4 * 2);
  CHECK(g_probes_broken == 0);
}

// Native only: wasm has no flush-to-zero mode, nor has s390x ([ftz]: tools/test.sh reports
// it as skipped there).
TEST_CASE("fpenv: a host's flush-to-zero is undone while OneModel computes", "[core][fpenv][native_only][ftz]") {
  REQUIRE(SetFlushToZeroForTesting(true));
  volatile float tiny = U2F(0x00800000u);  // smallest normal
  volatile float half = 0.5f;
  {
    FpEnvGuard g;
    CHECK(g.corrected());
    const float sub = tiny * half;  // a subnormal, kept under gradual underflow
    CHECK(F2U(sub) == 0x00400000u);
  }
  const float flushed = tiny * half;  // the host's mode is back
  CHECK(F2U(flushed) == 0u);
  SetFlushToZeroForTesting(false);
}

// Every row: no excess precision (32-bit x86's x87 unit would keep 80 bits), and 64-bit
// integers convert to floats with one rounding (i686 converts through the x87 unit).
TEST_CASE("arithmetic: binary32/binary64 without excess precision, 64-bit integers rounded once", "[core][x87]") {
  volatile float big = 3e38f, ten = 10.0f;
  CHECK(std::isinf(big * ten / ten));  // 3e38 again with excess precision
  volatile double bigd = 1e308, tend = 10.0;
  CHECK(std::isinf(bigd * tend / tend));
  volatile uint64_t all = ~uint64_t(0), above_tie = (uint64_t(1) << 63) + (uint64_t(1) << 39) + 1;
  CHECK(float(all) == 18446744073709551616.0f);
  // 2^63 + 2^39 + 1: just above a tie of binary32 (rounds up to 2^63 + 2^40); through
  // binary64 first it would round twice, to 2^63.
  CHECK(float(above_tie) == 9223373136366403584.0f);
  volatile uint64_t d_above_tie = (uint64_t(1) << 63) + (uint64_t(1) << 10) + 1;
  CHECK(double(d_above_tie) == 9223372036854777856.0);
  volatile int64_t neg = -((int64_t(1) << 62) + (int64_t(1) << 38) + 1);
  CHECK(float(neg) == -4611686568183201792.0f);
}

#if defined(__i386__)
// i686: a host that set the x87 unit to double precision (as some systems do) would round
// those conversions twice; FpEnvGuard sets extended precision while OneModel computes.
TEST_CASE("fpenv: a host's x87 precision control is undone while OneModel computes", "[core][fpenv][x87]") {
  uint16_t saved;
  __asm__ __volatile__("fnstcw %0" : "=m"(saved));
  const uint16_t double_precision = uint16_t((saved & ~0x0300) | 0x0200);
  __asm__ __volatile__("fldcw %0" : : "m"(double_precision));
  volatile uint64_t above_tie = (uint64_t(1) << 63) + (uint64_t(1) << 39) + 1;
  {
    FpEnvGuard g;
    CHECK(g.corrected());
    CHECK(float(above_tie) == 9223373136366403584.0f);
  }
  const float twice = float(above_tie);  // the host's precision is back: rounded twice
  __asm__ __volatile__("fldcw %0" : : "m"(saved));
  CHECK(twice == 9223372036854775808.0f);
}
#endif

// Native only: wasm has one rounding mode.
TEST_CASE("fpenv: a host's rounding mode is undone while OneModel computes", "[core][fpenv][native_only]") {
  volatile float one = 1.0f;
  volatile float tiny = U2F(0x30800000u);  // 2^-30: 1 + tiny rounds to 1 only to nearest (or down)
  const int saved = std::fegetround();
  REQUIRE(std::fesetround(FE_UPWARD) == 0);
  {
    FpEnvGuard g;
    CHECK(g.corrected());
    const float sum = one + tiny;
    CHECK(F2U(sum) == 0x3F800000u);
  }
  const float up = one + tiny;  // the host's mode is back
  CHECK(F2U(up) == 0x3F800001u);
  std::fesetround(saved);
}

}  // namespace test
}  // namespace onemodel::impl
