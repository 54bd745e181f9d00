// Accuracy of the project's own functions (ref/math.h) against the C library's binary64
// functions rounded to binary32 (the higher-precision reference; libm is allowed here,
// in a test, never in a kernel). Each function is sampled over its domain with fixed
// seeds: specials, a dense grid and random bit patterns. `onemodel_tests "[.ulp]"`
// prints the table recorded in docs/exact-mode.md.
#include "tests/catch.h"

#include <cmath>
#include <cstdio>
#include <functional>
#include <vector>

#include "core/random.h"
#include "ref/math.h"
#include "tests/test_util.h"

namespace onemodel::impl {
namespace test {
namespace {

int64_t Ordered(float f) {
  const int32_t i = int32_t(F2U(f));
  return i < 0 ? int64_t(INT32_MIN) - i : i;
}
double UlpDiff(float got, float want) {
  if (IsNaN(got) && IsNaN(want)) return 0;
  if (IsNaN(got) != IsNaN(want)) return 1e9;
  if (std::isinf(want) || std::isinf(got)) return got == want ? 0 : 1e9;
  return double(std::llabs(Ordered(got) - Ordered(want)));
}

struct Fn {
  const char* name;
  std::function<float(float)> ours;
  std::function<double(double)> ref;
  float lo, hi;    // sampling range
  double max_ulp;  // the bound this test holds
};

std::vector<Fn> Functions() {
  return {
      {"exp", math::Exp, [](double x) { return std::exp(x); }, -104.0f, 89.0f, 2},
      {"log", math::Log, [](double x) { return std::log(x); }, 0.0f, 3.4e38f, 2},
      {"tanh", math::Tanh, [](double x) { return std::tanh(x); }, -10.0f, 10.0f, 3},
      {"sigmoid", math::Sigmoid, [](double x) { return 1.0 / (1.0 + std::exp(-x)); }, -90.0f, 90.0f, 3},
      {"erf", math::Erf, [](double x) { return std::erf(x); }, -5.0f, 5.0f, 4},
      {"sin", math::Sin, [](double x) { return std::sin(x); }, -8192.0f, 8192.0f, 2},
      {"cos", math::Cos, [](double x) { return std::cos(x); }, -8192.0f, 8192.0f, 2},
      {"tan", math::Tan, [](double x) { return std::tan(x); }, -100.0f, 100.0f, 4},
      {"asin", math::Asin, [](double x) { return std::asin(x); }, -1.0f, 1.0f, 3},
      {"acos", math::Acos, [](double x) { return std::acos(x); }, -1.0f, 1.0f, 3},
      {"atan", math::Atan, [](double x) { return std::atan(x); }, -1e4f, 1e4f, 3},
      {"sinh", math::Sinh, [](double x) { return std::sinh(x); }, -89.0f, 89.0f, 4},
      {"cosh", math::Cosh, [](double x) { return std::cosh(x); }, -89.0f, 89.0f, 4},
      {"asinh", math::Asinh, [](double x) { return std::asinh(x); }, -1e5f, 1e5f, 4},
      {"acosh", math::Acosh, [](double x) { return std::acosh(x); }, 1.0f, 1e5f, 4},
      {"atanh", math::Atanh, [](double x) { return std::atanh(x); }, -1.0f, 1.0f, 4},
      {"softplus", math::Softplus, [](double x) { return std::log1p(std::exp(x)); }, -30.0f, 30.0f, 4},
  };
}

// Returns (max ulp, the input where it occurs) over the function's samples.
std::pair<double, float> Measure(const Fn& f, int samples) {
  SplitMix64 rng(1234);
  double worst = 0;
  float at = 0;
  auto check = [&](float x) {
    if (!(x >= f.lo && x <= f.hi)) return;
    const float want = float(f.ref(double(x)));
    const double u = UlpDiff(f.ours(x), want);
    if (u > worst) {
      worst = u;
      at = x;
    }
  };
  for (float s : F32Specials()) check(s);
  for (int i = 0; i <= samples; ++i) check(f.lo + (f.hi - f.lo) * (float(i) / float(samples)));
  for (int i = 0; i < samples; ++i) check(U2F(rng.NextU32()));
  for (int i = 0; i < samples; ++i) check(rng.Uniform(-1.0f, 1.0f) * (f.hi > 2 ? 2.0f : f.hi));
  return {worst, at};
}

}  // namespace

TEST_CASE("math: every function is within its ulp bound of the binary64 reference", "[math]") {
  for (const Fn& f : Functions()) {
    const auto [worst, at] = Measure(f, 40000);
    INFO(f.name << ": max " << worst << " ulp at x = " << at);
    CHECK(worst <= f.max_ulp);
  }
  // pow against the C library's binary64 pow.
  SplitMix64 rng(99);
  double worst = 0;
  for (int i = 0; i < 200000; ++i) {
    const float x = rng.Uniform(0.0f, 20.0f), y = rng.Uniform(-20.0f, 20.0f);
    worst = std::max(worst, UlpDiff(math::Pow(x, y), float(std::pow(double(x), double(y)))));
  }
  INFO("pow: max " << worst << " ulp");
  CHECK(worst <= 1);
  CHECK(math::Pow(-2.0f, 3.0f) == -8.0f);
  CHECK(IsNaN(math::Pow(-2.0f, 0.5f)));
  CHECK(math::Pow(0.0f, -1.0f) == std::numeric_limits<float>::infinity());
  CHECK(math::Pow(U2F(0x7FC00000u), 0.0f) == 1.0f);
}

TEST_CASE("math: report the measured accuracy", "[.ulp]") {
  std::printf("| function | max ulp | at x | range sampled |\n| --- | --- | --- | --- |\n");
  for (const Fn& f : Functions()) {
    const auto [worst, at] = Measure(f, 1000000);
    std::printf("| %s | %.0f | %.9g | [%g, %g] |\n", f.name, worst, double(at), double(f.lo), double(f.hi));
  }
  SUCCEED();
}

}  // namespace test
}  // namespace onemodel::impl
