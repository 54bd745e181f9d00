// Per-target elementwise kernels (contracts in ref/elementwise_kernels.h), written once
// on the vector vocabulary: one correctly rounded operation per lane, as the reference.
#include "kernels/kernels.h"
#include "ref/elementwise_kernels.h"
#include "simd/simd.h"

namespace onemodel {
namespace ONEMODEL_NS {
namespace {

constexpr size_t kN = Lanes<VF32>();

template <class F>
void Runs(F f, const float* a, int64_t sa, const float* b, int64_t sb, float* out, int64_t n) {
  int64_t i = 0;
  // Lanes past n are filled with 1.0 (never stored).
  if (sa && sb) {
    for (; i + int64_t(kN) <= n; i += int64_t(kN)) Store(f(Load<VF32>(a + i), Load<VF32>(b + i)), out + i);
    if (i < n) StoreN(f(LoadN<VF32>(a + i, size_t(n - i), 1.0f), LoadN<VF32>(b + i, size_t(n - i), 1.0f)), out + i, size_t(n - i));
  } else if (sa) {
    const VF32 bv = Set<VF32>(*b);
    for (; i + int64_t(kN) <= n; i += int64_t(kN)) Store(f(Load<VF32>(a + i), bv), out + i);
    if (i < n) StoreN(f(LoadN<VF32>(a + i, size_t(n - i), 1.0f), bv), out + i, size_t(n - i));
  } else if (sb) {
    const VF32 av = Set<VF32>(*a);
    for (; i + int64_t(kN) <= n; i += int64_t(kN)) Store(f(av, Load<VF32>(b + i)), out + i);
    if (i < n) StoreN(f(av, LoadN<VF32>(b + i, size_t(n - i), 1.0f)), out + i, size_t(n - i));
  } else {
    const VF32 r = f(Set<VF32>(*a), Set<VF32>(*b));
    for (; i + int64_t(kN) <= n; i += int64_t(kN)) Store(r, out + i);
    if (i < n) StoreN(r, out + i, size_t(n - i));
  }
}

}  // namespace

void BinaryF32(int32_t op, const float* a, int64_t sa, const float* b, int64_t sb, float* out, int64_t n) {
  switch (op) {
    case kBinAddF32: Runs([](VF32 x, VF32 y) { return Add(x, y); }, a, sa, b, sb, out, n); break;
    case kBinSubF32: Runs([](VF32 x, VF32 y) { return Sub(x, y); }, a, sa, b, sb, out, n); break;
    case kBinMulF32: Runs([](VF32 x, VF32 y) { return Mul(x, y); }, a, sa, b, sb, out, n); break;
    case kBinDivF32: Runs([](VF32 x, VF32 y) { return Div(x, y); }, a, sa, b, sb, out, n); break;
    case kBinMaxF32: Runs([](VF32 x, VF32 y) { return MaxIeee(x, y); }, a, sa, b, sb, out, n); break;
    case kBinMinF32: Runs([](VF32 x, VF32 y) { return MinIeee(x, y); }, a, sa, b, sb, out, n); break;
    default: break;
  }
}

void UnaryF32(int32_t op, float p0, float p1, const float* x, float* out, int64_t n) {
  const VF32 zero = Zero<VF32>(), one = Set<VF32>(1.0f), a = Set<VF32>(p0), b = Set<VF32>(p1);
  const VF32 sixth = Set<VF32>(1.0f / 6.0f), half = Set<VF32>(0.5f);
  // y clamped to [0, 1]; a NaN y stays (both compares are false).
  auto clamp01 = [&](VF32 y) { return IfThenElse(Lt(y, zero), zero, IfThenElse(Gt(y, one), one, y)); };
  auto run = [&](auto f) {
    int64_t i = 0;
    for (; i + int64_t(kN) <= n; i += int64_t(kN)) Store(f(Load<VF32>(x + i)), out + i);
    if (i < n) StoreN(f(LoadN<VF32>(x + i, size_t(n - i), 0.0f)), out + i, size_t(n - i));
  };
  switch (op) {
    case kUnReluF32: run([&](VF32 v) { return IfThenElse(Ne(v, v), v, IfThenElse(Gt(v, zero), v, zero)); }); break;
    case kUnClipF32: run([&](VF32 v) { const VF32 r = IfThenElse(Lt(v, a), a, v); return IfThenElse(Gt(r, b), b, r); }); break;
    case kUnHardSigmoidF32: run([&](VF32 v) { return clamp01(Add(Mul(a, v), b)); }); break;
    case kUnHardSwishF32: run([&](VF32 v) { return Mul(v, clamp01(Add(Mul(sixth, v), half))); }); break;
    default: break;
  }
}

}  // namespace ONEMODEL_NS
}  // namespace onemodel
