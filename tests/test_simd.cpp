// Vector vocabulary tests: every op of simd_ops.inc on the target under test, bitwise
// against the scalar backend, on the specials corpus and seeded random data; plus
// known-answer tests of the policies the names promise, on every target.
#include "tests/catch.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <vector>

#include "core/random.h"
#include "tests/simd_kit.h"
#include "tests/test_util.h"

namespace onemodel::impl {
namespace test {
namespace {

enum class Kind { kF32, kI32, kU32, kI16, kU16, kI8, kU8, kF64, kU64 };
template <class T>
constexpr Kind KindOf();
template <>
constexpr Kind KindOf<float>() {
  return Kind::kF32;
}
template <>
constexpr Kind KindOf<int32_t>() {
  return Kind::kI32;
}
template <>
constexpr Kind KindOf<uint32_t>() {
  return Kind::kU32;
}
template <>
constexpr Kind KindOf<int16_t>() {
  return Kind::kI16;
}
template <>
constexpr Kind KindOf<uint16_t>() {
  return Kind::kU16;
}
template <>
constexpr Kind KindOf<int8_t>() {
  return Kind::kI8;
}
template <>
constexpr Kind KindOf<uint8_t>() {
  return Kind::kU8;
}
template <>
constexpr Kind KindOf<double>() {
  return Kind::kF64;
}
template <>
constexpr Kind KindOf<uint64_t>() {
  return Kind::kU64;
}
size_t SizeOf(Kind k) {
  switch (k) {
    case Kind::kF64:
    case Kind::kU64: return 8;
    case Kind::kF32:
    case Kind::kI32:
    case Kind::kU32: return 4;
    case Kind::kI16:
    case Kind::kU16: return 2;
    default: return 1;
  }
}

struct OpInfo {
  const char* name;
  Kind in, out;
  size_t out_bytes;
  Kind c_kind;  // what buffer c holds
};

constexpr bool StrEq(const char* a, const char* b) { return *a == *b && (*a == 0 || StrEq(a + 1, b + 1)); }
// f32 results of arithmetic may be NaNs of any payload; everything else (masks, bit
// operations, sign flips) is compared bit for bit.
constexpr bool MayMakeNaN(const char* op) {
  return StrEq(op, "Add") || StrEq(op, "Sub") || StrEq(op, "Mul") || StrEq(op, "Div") || StrEq(op, "MinIeee") ||
         StrEq(op, "MaxIeee") || StrEq(op, "Sqrt") || StrEq(op, "RoundEven") || StrEq(op, "Trunc") ||
         StrEq(op, "Floor") || StrEq(op, "Ceil");
}
template <class T>
constexpr Kind OutKind(const char* op) {
  if (KindOf<T>() == Kind::kF64) return MayMakeNaN(op) ? Kind::kF64 : Kind::kU64;
  return KindOf<T>() == Kind::kF32 && !MayMakeNaN(op) ? Kind::kI32 : KindOf<T>();
}
#define OM_BIN(name, T, op) {#name, KindOf<T>(), OutKind<T>(#op), kKitBytes, KindOf<T>()},
#define OM_UN(name, T, op) {#name, KindOf<T>(), OutKind<T>(#op), kKitBytes, KindOf<T>()},
#define OM_CVT(name, TIn, TOut, op) {#name, KindOf<TIn>(), KindOf<TOut>(), kKitBytes, KindOf<TIn>()},
#define OM_WIDEN(name, TN, TW) {#name, KindOf<TN>(), KindOf<TW>(), kKitBytes, KindOf<TN>()},
#define OM_NARROW(name, TW, TN, op) {#name, KindOf<TW>(), KindOf<TN>(), kKitBytes / 2, KindOf<TW>()},
#define OM_SELECT(name, T) {#name, KindOf<T>(), OutKind<T>("Select"), kKitBytes, KindOf<T>()},
#define OM_EVEN(name) {#name, Kind::kF32, Kind::kI32, kKitBytes / 2, Kind::kF32},
#define OM_CLAMP(name) {#name, Kind::kF32, Kind::kI32, kKitBytes, Kind::kF32},
#define OM_MADD(name) {#name, Kind::kI16, Kind::kI32, kKitBytes / 2, Kind::kI16},
#define OM_DOT(name) {#name, Kind::kI8, Kind::kI32, kKitBytes, Kind::kI32},
#define OM_DOTU(name) {#name, Kind::kU8, Kind::kI32, kKitBytes, Kind::kI32},
const OpInfo kOps[] = {
#include "tests/simd_ops.inc"
};
#undef OM_BIN
#undef OM_UN
#undef OM_CVT
#undef OM_WIDEN
#undef OM_NARROW
#undef OM_SELECT
#undef OM_EVEN
#undef OM_CLAMP
#undef OM_MADD
#undef OM_DOT
#undef OM_DOTU

const SimdKit* KitFor(Isa isa) {
  switch (isa) {
    case Isa::kRef:
    case Isa::kScalar: return &scalar::GetSimdKit();
#if defined(ONEMODEL_HAVE_SSE41)
    case Isa::kSse41: return &sse41::GetSimdKit();
#endif
#if defined(ONEMODEL_HAVE_AVX2)
    case Isa::kAvx2: return &avx2::GetSimdKit();
#endif
#if defined(ONEMODEL_HAVE_AVXVNNI)
    case Isa::kAvxVnni: return &avxvnni::GetSimdKit();
#endif
#if defined(ONEMODEL_HAVE_AVX512)
    case Isa::kAvx512: return &avx512::GetSimdKit();
#endif
#if defined(ONEMODEL_HAVE_AVX512VNNI)
    case Isa::kAvx512Vnni: return &avx512vnni::GetSimdKit();
#endif
#if defined(ONEMODEL_HAVE_NEON)
    case Isa::kNeon: return &neon::GetSimdKit();
#endif
#if defined(ONEMODEL_HAVE_NEONDOT)
    case Isa::kNeonDot: return &neondot::GetSimdKit();
#endif
#if defined(ONEMODEL_HAVE_WASM128)
    case Isa::kWasm128: return &wasm128::GetSimdKit();
#endif
    default: return nullptr;
  }
}

// Boundary values for integer lanes, cast to the lane type (so they wrap into range).
const int64_t kIntEdges[] = {0,
                             1,
                             -1,
                             2,
                             -2,
                             3,
                             5,
                             -5,
                             7,
                             44,
                             127,
                             128,
                             -128,
                             -129,
                             251,
                             255,
                             256,
                             300,
                             -300,
                             32767,
                             32768,
                             -32768,
                             -32769,
                             65535,
                             65536,
                             100000,
                             -100000,
                             2147483647LL,
                             -2147483647LL - 1,
                             4294967295LL,
                             0x55555555,
                             0x2AAAAAAA};

// Binary64 specials: the f32 corpus widened, then the edges of binary64 rounding
// (integer and tie thresholds of Trunc/Floor, binary32 ties, overflow and subnormal
// edges of NarrowRoundF64ToF32), subnormals, extremes and NaN payloads.
const std::vector<double>& F64Specials() {
  static const std::vector<double> v = [] {
    std::vector<double> r;
    for (float f : F32Specials()) r.push_back(double(f));
    auto bits = [](uint64_t u) {
      double d;
      std::memcpy(&d, &u, 8);
      return d;
    };
    const double more[] = {4503599627370496.0,
                           4503599627370495.5,
                           -4503599627370495.5,
                           9007199254740992.0,
                           9007199254740993.0 + 1.0,
                           0.49999999999999994,
                           -0.49999999999999994,
                           0.5,
                           -0.5,
                           1.5,
                           -1.5,
                           2.5,
                           -2.5,
                           1e300,
                           -1e300,
                           9.2233720368547758e18,
                           -9.2233720368547758e18,
                           1.0 + 0x1p-24,
                           1.0 + 0x1p-24 + 0x1p-50,
                           1.0 + 3 * 0x1p-24,
                           3.4028235677973366e38,
                           3.4028235677973362e38,
                           -3.4028235677973366e38,
                           0x1p-150,
                           0x1p-150 + 0x1p-200,
                           0x1p-149 * 1.5,
                           -0x1p-150,
                           1.1754942807573643e-38,
                           1e-300,
                           -1e-300,
                           0.7853981633974483,
                           1e-45};
    r.insert(r.end(), std::begin(more), std::end(more));
    for (uint64_t u : {0x0000000000000001ull, 0x800FFFFFFFFFFFFFull, 0x0010000000000000ull, 0x7FEFFFFFFFFFFFFFull,
                       0x7FF0000000000000ull, 0xFFF0000000000000ull, 0x7FF8000000000000ull, 0xFFF8000000000001ull,
                       0x7FF0000000000001ull, 0x8000000000000000ull})
      r.push_back(bits(u));
    return r;
  }();
  return v;
}
std::string DiffF64(const double* want, const double* got, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    uint64_t a, b;
    std::memcpy(&a, want + i, 8);
    std::memcpy(&b, got + i, 8);
    const bool na = (a & 0x7FFFFFFFFFFFFFFFull) > 0x7FF0000000000000ull,
               nb = (b & 0x7FFFFFFFFFFFFFFFull) > 0x7FF0000000000000ull;
    if (a == b || (na && nb)) continue;
    char buf[96];
    std::snprintf(buf, sizeof buf, "lane %zu: want %016llx got %016llx", i, (unsigned long long)a,
                  (unsigned long long)b);
    return buf;
  }
  return "";
}

// Fills buf (kKitBytes) with lanes of `kind`: round r < 64 cycles the specials with an
// offset r (so every pair of specials meets), later rounds use seeded random bits.
void Fill(uint8_t* buf, Kind kind, int round, int which) {
  const size_t es = SizeOf(kind), n = kKitBytes / es;
  SplitMix64 rng(uint64_t(round) * 1000003u + uint64_t(which) * 7919u + 17u);
  const int offset = which == 0 ? 0 : (which == 1 ? round : 2 * round + 1);
  for (size_t i = 0; i < n; ++i) {
    if (kind == Kind::kF64) {
      const auto& sp = F64Specials();
      double v;
      if (round < 64)
        v = sp[(i + size_t(offset)) % sp.size()];
      else if (round % 2) {
        const uint64_t u = rng.Next();
        std::memcpy(&v, &u, 8);
      } else
        v = double(rng.Uniform(-4.0f, 4.0f)) * double(uint64_t(1) << (rng.NextU32() % 60)) + (i % 3 ? 0.5 : 0.0);
      std::memcpy(buf + i * 8, &v, 8);
    } else if (kind == Kind::kF32) {
      const auto& sp = F32Specials();
      float v;
      if (round < 64)
        v = sp[(i + size_t(offset)) % sp.size()];
      else if (round % 2)
        v = U2F(rng.NextU32());  // any bit pattern
      else
        v = rng.Uniform(-4.0f, 4.0f) * float(1u << (rng.NextU32() % 24));  // ordinary values
      std::memcpy(buf + i * 4, &v, 4);
    } else {
      const size_t ne = sizeof(kIntEdges) / sizeof(kIntEdges[0]);
      const uint64_t v = round < 64 ? uint64_t(kIntEdges[(i + size_t(offset)) % ne]) : rng.Next();
      std::memcpy(buf + i * es, &v, es);  // little-endian low bytes
    }
  }
}

constexpr int kRounds = 96;

}  // namespace

TEST_CASE("simd: every op on the target equals the scalar backend bitwise", "[simd][vs_scalar]") {
  const Isa isa = ActiveIsa();
  const SimdKit* kit = KitFor(isa);
  const SimdKit& want_kit = scalar::GetSimdKit();
  REQUIRE(kit != nullptr);
  REQUIRE(kit->count == want_kit.count);
  REQUIRE(kit->count == sizeof(kOps) / sizeof(kOps[0]));
  alignas(64) uint8_t a[kKitBytes], b[kKitBytes], c[kKitBytes], want[kKitBytes], got[kKitBytes];
  for (size_t op = 0; op < kit->count; ++op) {
    const OpInfo& info = kOps[op];
    for (int round = 0; round < kRounds; ++round) {
      Fill(a, info.in, round, 0);
      Fill(b, info.in, round, 1);
      Fill(c, info.c_kind, round, 2);
      std::memset(want, 0xA5, sizeof want);
      std::memset(got, 0x5A, sizeof got);
      want_kit.fns[op](a, b, c, want);
      kit->fns[op](a, b, c, got);
      std::string diff =
          info.out == Kind::kF32
              ? DiffF32(reinterpret_cast<float*>(want), reinterpret_cast<float*>(got), info.out_bytes / 4)
          : info.out == Kind::kF64
              ? DiffF64(reinterpret_cast<double*>(want), reinterpret_cast<double*>(got), info.out_bytes / 8)
              : DiffBytes(want, got, info.out_bytes, SizeOf(info.out));
      if (!diff.empty()) {
        FAIL_CHECK(IsaName(isa) << " " << info.name << " round " << round << ": " << diff);
        break;
      }
    }
  }
}

TEST_CASE("simd: ReduceSumTree follows the pairwise lane tree", "[simd]") {
  const SimdKit* kit = KitFor(ActiveIsa());
  REQUIRE(kit != nullptr);
  SplitMix64 rng(5);
  for (int round = 0; round < 200; ++round) {
    float lanes[16];
    for (float& v : lanes)
      v = round < 100 ? F32Specials()[rng.NextU32() % F32Specials().size()] : rng.Uniform(-1e6f, 1e6f);
    size_t n = 0;
    const float got = kit->reduce_sum_tree(lanes, &n);
    float t[16];
    std::memcpy(t, lanes, sizeof t);
    for (size_t h = n / 2; h >= 1; h /= 2)
      for (size_t j = 0; j < h; ++j) t[j] += t[j + h];
    INFO("lanes " << n << " round " << round);
    CHECK(SameF32(t[0], got));
  }
}

TEST_CASE("simd: AllTrue is true only when every lane of the mask is", "[simd]") {
  const SimdKit* kit = KitFor(ActiveIsa());
  REQUIRE(kit != nullptr);
  const float nan = U2F(0x7FC00000u);
  float a[16], b[16];
  for (int j = 0; j < 16; ++j) {
    a[j] = float(j) - 8.0f;
    b[j] = float(j) - 7.5f;
  }
  size_t n = 0;
  CHECK(kit->all_true_lt(a, b, &n));
  REQUIRE(n <= 16);
  for (size_t j = 0; j < n; ++j) {  // one false lane, in every position: false
    for (float bad : {-100.0f, a[j], nan}) {
      const float keep = b[j];
      b[j] = bad;
      INFO("lanes " << n << " lane " << j << " b " << bad);
      CHECK_FALSE(kit->all_true_lt(a, b, &n));
      b[j] = keep;
    }
  }
  CHECK(kit->all_true_lt(a, b, &n));
}

TEST_CASE("simd: TransposeSquare moves every lane's bits to its mirror position", "[simd]") {
  const SimdKit* kit = KitFor(ActiveIsa());
  REQUIRE(kit != nullptr);
  SplitMix64 rng(17);
  for (int round = 0; round < 50; ++round) {
    // Random bit patterns (NaN payloads and signed zeros included) and, in the first
    // round, each lane's own index, so a misplaced lane names itself.
    uint32_t in[256], out[256];
    for (size_t i = 0; i < 256; ++i) in[i] = round == 0 ? uint32_t(i) : rng.NextU32();
    std::memset(out, 0xA5, sizeof out);
    size_t n = 0;
    kit->transpose_square(reinterpret_cast<const float*>(in), reinterpret_cast<float*>(out), &n);
    REQUIRE(n * n <= 256);
    for (size_t q = 0; q < n; ++q)
      for (size_t j = 0; j < n; ++j) {
        INFO("lanes " << n << " round " << round << " out row " << q << " lane " << j);
        CHECK(out[q * n + j] == in[j * n + q]);
      }
  }
}

TEST_CASE("simd: LoadN/StoreN read and write only n lanes", "[simd]") {
  const SimdKit* kit = KitFor(ActiveIsa());
  REQUIRE(kit != nullptr);
  float src[16];
  for (int i = 0; i < 16; ++i) src[i] = float(i + 1);
  for (size_t n = 0; n <= 16; ++n) {
    float dst[16];
    for (float& d : dst) d = 99.0f;
    kit->load_store_n(src, n, -0.0f, dst);
    size_t lanes = 0;
    (void)kit->reduce_sum_tree(src, &lanes);
    for (size_t i = 0; i < lanes; ++i) {
      const float want = i < n && i < lanes ? src[i] : -0.0f;
      INFO("n " << n << " lane " << i);
      CHECK(F2U(dst[i]) == F2U(want));
    }
  }
}

// Known answers: the policies the names promise, checked on the target under test.
namespace {
std::vector<uint8_t> RunOp(const char* name, const std::vector<uint8_t>& a, const std::vector<uint8_t>& b = {},
                           const std::vector<uint8_t>& c = {}) {
  const SimdKit* kit = KitFor(ActiveIsa());
  std::vector<uint8_t> A(kKitBytes, 0), B(kKitBytes, 0), C(kKitBytes, 0), O(kKitBytes, 0);
  // (memcpy from an empty vector's null data is undefined even for 0 bytes)
  if (!a.empty()) std::memcpy(A.data(), a.data(), a.size());
  if (!b.empty()) std::memcpy(B.data(), b.data(), b.size());
  if (!c.empty()) std::memcpy(C.data(), c.data(), c.size());
  for (size_t i = 0; i < sizeof(kOps) / sizeof(kOps[0]); ++i) {
    if (std::strcmp(kOps[i].name, name) == 0) {
      kit->fns[i](A.data(), B.data(), C.data(), O.data());
      return O;
    }
  }
  FAIL("no op " << name);
  return O;
}
template <class T>
std::vector<uint8_t> Bytes(std::initializer_list<T> v) {
  std::vector<uint8_t> out(v.size() * sizeof(T));
  std::memcpy(out.data(), v.begin(), out.size());
  return out;
}
template <class T>
T At(const std::vector<uint8_t>& o, size_t i) {
  T t;
  std::memcpy(&t, o.data() + i * sizeof(T), sizeof t);
  return t;
}
}  // namespace

TEST_CASE("simd: narrowing i16 -> u8 saturates or truncates as named", "[simd]") {
  const auto in = Bytes<int16_t>({300, -5, 255, 256, -1, 0, 128, -32768});
  const auto sat = RunOp("NarrowSatI16ToU8", in);
  const auto trunc = RunOp("NarrowTruncI16ToU8", in);
  CHECK(int(At<uint8_t>(sat, 0)) == 255);
  CHECK(int(At<uint8_t>(sat, 1)) == 0);
  CHECK(int(At<uint8_t>(trunc, 0)) == 44);
  CHECK(int(At<uint8_t>(trunc, 1)) == 251);
  CHECK(int(At<uint8_t>(sat, 2)) == 255);
  CHECK(int(At<uint8_t>(sat, 3)) == 255);
  CHECK(int(At<uint8_t>(trunc, 3)) == 0);
  CHECK(int(At<uint8_t>(sat, 4)) == 0);
  CHECK(int(At<uint8_t>(trunc, 4)) == 255);
  CHECK(int(At<uint8_t>(sat, 7)) == 0);
  const auto s8 = RunOp("NarrowSatI16ToI8", in);
  CHECK(int(At<int8_t>(s8, 0)) == 127);
  CHECK(int(At<int8_t>(s8, 7)) == -128);
  const auto u16 = RunOp("NarrowSatU16ToU8", Bytes<uint16_t>({65535, 300, 255}));
  CHECK(int(At<uint8_t>(u16, 0)) == 255);
  CHECK(int(At<uint8_t>(u16, 1)) == 255);
  const auto i32 = RunOp("NarrowSatI32ToU16", Bytes<int32_t>({70000, -5, 65535}));
  CHECK(int(At<uint16_t>(i32, 0)) == 65535);
  CHECK(int(At<uint16_t>(i32, 1)) == 0);
  const auto t32 = RunOp("NarrowTruncI32ToI16", Bytes<int32_t>({70000, -5}));
  CHECK(int(At<int16_t>(t32, 0)) == 70000 - 65536);
  CHECK(int(At<int16_t>(t32, 1)) == -5);
}

TEST_CASE("simd: MinIeee/MaxIeee propagate NaN and order -0 < +0", "[simd]") {
  const float nan = U2F(0x7FC00000u);
  const auto a = Bytes<float>({nan, 1.0f, -0.0f, 0.0f, 2.0f});
  const auto b = Bytes<float>({1.0f, nan, 0.0f, -0.0f, -3.0f});
  const auto mn = RunOp("MinIeeeF32", a, b), mx = RunOp("MaxIeeeF32", a, b);
  CHECK(IsNaN(At<float>(mn, 0)));
  CHECK(IsNaN(At<float>(mn, 1)));
  CHECK(F2U(At<float>(mn, 2)) == 0x80000000u);
  CHECK(F2U(At<float>(mn, 3)) == 0x80000000u);
  CHECK(At<float>(mn, 4) == -3.0f);
  CHECK(IsNaN(At<float>(mx, 0)));
  CHECK(IsNaN(At<float>(mx, 1)));
  CHECK(F2U(At<float>(mx, 2)) == 0u);
  CHECK(F2U(At<float>(mx, 3)) == 0u);
  CHECK(At<float>(mx, 4) == 2.0f);
}

TEST_CASE("simd: ClampZeroNaN clamps, keeps a zero's sign and takes NaN to +0", "[simd]") {
  const float nan = U2F(0x7FC00000u), inf = std::numeric_limits<float>::infinity();
  const auto v = Bytes<float>({nan, -nan, -0.0f, 0.0f, -0.0f, 5.0f, -5.0f, 2.5f, inf, -inf, 0.0f});
  const auto lo = Bytes<float>({-1.0f, -1.0f, -1.0f, -1.0f, 0.0f, -3.0f, -3.0f, -3.0f, -3.0f, -3.0f, 0.0f});
  const auto hi = Bytes<float>({1.0f, 1.0f, 1.0f, 1.0f, 2.0f, 3.0f, 3.0f, 3.0f, 3.0f, 3.0f, -0.0f});
  const auto r = RunOp("ClampZeroNaNF32", v, lo, hi);
  const uint32_t want[] = {0u,         0u,        0x80000000u, 0u,         0x80000000u, F2U(3.0f),
                           F2U(-3.0f), F2U(2.5f), F2U(3.0f),   F2U(-3.0f), 0u};
  for (size_t i = 0; i < sizeof want / sizeof want[0]; ++i) CHECK(F2U(At<float>(r, i)) == want[i]);
}

TEST_CASE("simd: float -> int32 conversions name rounding, NaN and saturation", "[simd]") {
  const float nan = U2F(0x7FC00000u), inf = std::numeric_limits<float>::infinity();
  const auto in = Bytes<float>({nan, inf, -inf, 3e9f, -3e9f, 2.5f, -2.5f, 3.5f, -0.5f, 2147483520.0f});
  const auto tr = RunOp("CvtTruncSatF32ToI32", in), re = RunOp("CvtRoundEvenSatF32ToI32", in);
  const int32_t mx = std::numeric_limits<int32_t>::max(), mn = std::numeric_limits<int32_t>::min();
  const int32_t want_tr[] = {0, mx, mn, mx, mn, 2, -2, 3, 0, 2147483520};
  const int32_t want_re[] = {0, mx, mn, mx, mn, 2, -2, 4, 0, 2147483520};
  for (int i = 0; i < 10; ++i) {
    INFO("lane " << i);
    CHECK(At<int32_t>(tr, size_t(i)) == want_tr[i]);
    CHECK(At<int32_t>(re, size_t(i)) == want_re[i]);
  }
}

TEST_CASE("simd: rounding keeps signs and ties go to even", "[simd]") {
  const auto in = Bytes<float>({-0.3f, 0.5f, 1.5f, 2.5f, -2.5f, -0.0f, 8388609.0f, -1.5f});
  const auto r = RunOp("RoundEvenF32", in), f = RunOp("FloorF32", in), c = RunOp("CeilF32", in),
             t = RunOp("TruncF32", in);
  CHECK(F2U(At<float>(r, 0)) == 0x80000000u);
  CHECK(At<float>(r, 1) == 0.0f);
  CHECK(At<float>(r, 2) == 2.0f);
  CHECK(At<float>(r, 3) == 2.0f);
  CHECK(At<float>(r, 4) == -2.0f);
  CHECK(F2U(At<float>(r, 5)) == 0x80000000u);
  CHECK(At<float>(r, 6) == 8388609.0f);
  CHECK(At<float>(f, 0) == -1.0f);
  CHECK(F2U(At<float>(c, 0)) == 0x80000000u);
  CHECK(F2U(At<float>(t, 0)) == 0x80000000u);
  CHECK(At<float>(f, 7) == -2.0f);
  CHECK(At<float>(c, 7) == -1.0f);
}

TEST_CASE("simd: binary64 lanes round, widen and narrow as named", "[simd]") {
  const auto in = Bytes<double>({-0.3, 2.5, -2.5, 4503599627370495.5, -0.0, 1e300, 9007199254740993.0, -1.5});
  const auto t = RunOp("TruncF64", in), f = RunOp("FloorF64", in);
  const double want_t[] = {-0.0, 2.0, -2.0, 4503599627370495.0, -0.0, 1e300, 9007199254740993.0, -1.0};
  const double want_f[] = {-1.0, 2.0, -3.0, 4503599627370495.0, -0.0, 1e300, 9007199254740993.0, -2.0};
  for (size_t i = 0; i < 8; ++i) {
    INFO("lane " << i);
    CHECK(std::signbit(At<double>(t, i)) == std::signbit(want_t[i]));
    CHECK(At<double>(t, i) == want_t[i]);
    CHECK(std::signbit(At<double>(f, i)) == std::signbit(want_f[i]));
    CHECK(At<double>(f, i) == want_f[i]);
  }
  // Ties to even, overflow to infinity, subnormal results, exact widening.
  const auto n = RunOp("NarrowRoundF64ToF32", Bytes<double>({1.0 + 0x1p-24, 1.0 + 3 * 0x1p-24, 3.5e38, 0x1p-149 * 1.5,
                                                             0x1p-150, -1e-50, 0.1, 16777217.0}));
  const float want_n[] = {1.0f, 1.0f + 0x1p-22f, std::numeric_limits<float>::infinity(), 0x1p-148f, 0.0f, -0.0f,
                          0.1f, 16777216.0f};
  for (size_t i = 0; i < 8; ++i) {
    INFO("lane " << i);
    CHECK(F2U(At<float>(n, i)) == F2U(want_n[i]));
  }
  const auto w = RunOp("WidenF32", Bytes<float>({0.1f, -0.0f, 0x1p-149f, 3.4028235e38f, 1.5f, -7.0f, 1e-30f, 2.0f}));
  const double want_w[] = {double(0.1f), -0.0, 0x1p-149, double(3.4028235e38f), 1.5, -7.0, double(1e-30f), 2.0};
  for (size_t i = 0; i < 8; ++i) {
    INFO("lane " << i);
    CHECK(At<double>(w, i) == want_w[i]);
    CHECK(std::signbit(At<double>(w, i)) == std::signbit(want_w[i]));
  }
}

TEST_CASE("simd: integer dot products wrap and group lanes as documented", "[simd]") {
  std::vector<int8_t> a(64), b(64);
  for (int i = 0; i < 64; ++i) {
    a[size_t(i)] = int8_t(i % 2 ? -128 : 127 - i);
    b[size_t(i)] = int8_t(i % 3 ? -128 : i);
  }
  std::vector<uint8_t> A(64), B(64);
  std::memcpy(A.data(), a.data(), 64);
  std::memcpy(B.data(), b.data(), 64);
  const auto acc = Bytes<int32_t>({1, -1, 2147483647, 0});
  const auto o = RunOp("DotI8x4Acc", A, B, acc);
  for (int j = 0; j < 4; ++j) {
    uint32_t want = uint32_t(At<int32_t>(acc, size_t(j)));
    for (int k = 0; k < 4; ++k) want += uint32_t(int32_t(a[size_t(4 * j + k)]) * b[size_t(4 * j + k)]);
    CHECK(At<int32_t>(o, size_t(j)) == int32_t(want));
  }
  // The unsigned x signed form (vpdpbusd's): A's bytes read as 0..255.
  const auto u = RunOp("DotU8S8x4Acc", A, B, acc);
  for (int j = 0; j < 4; ++j) {
    uint32_t want = uint32_t(At<int32_t>(acc, size_t(j)));
    for (int k = 0; k < 4; ++k) want += uint32_t(int32_t(A[size_t(4 * j + k)]) * b[size_t(4 * j + k)]);
    CHECK(At<int32_t>(u, size_t(j)) == int32_t(want));
  }
  const auto m =
      RunOp("MulAddPairsI16", Bytes<int16_t>({-32768, -32768, 3, 4}), Bytes<int16_t>({-32768, -32768, 5, -6}));
  CHECK(At<int32_t>(m, 0) == std::numeric_limits<int32_t>::min());  // 2^31 wraps
  CHECK(At<int32_t>(m, 1) == 3 * 5 - 4 * 6);
}

}  // namespace test
}  // namespace onemodel::impl
