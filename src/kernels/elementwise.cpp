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

}  // namespace ONEMODEL_NS
}  // namespace onemodel
