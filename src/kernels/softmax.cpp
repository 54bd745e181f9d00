// Softmax rows (ref/softmax.h SoftmaxRowsF32 and its fast twin SoftmaxRowsFmaF32), per
// target. A row's steps form one dependency chain (the maximum, then every exp, then the
// sum, then the division), so a group of rows runs interleaved, pass by pass: the
// latencies of one row's reductions overlap the others' work. Compiled per target.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/exact.h"
#include "kernels/fma_v.h"
#include "kernels/kernels.h"
#include "kernels/math_v.h"
#include "kernels/reduce_sum.h"
#include "ref/elementwise.h"
#include "ref/softmax.h"
#include "simd/simd.h"

namespace onemodel::impl {
namespace ONEMODEL_NS {

namespace {

constexpr size_t kN = Lanes<VF32>();
constexpr size_t kL = kCanonicalLanes;
constexpr size_t kRegs = kL / kN;  // registers holding the canonical sum's lanes
// Rows interleaved: four where the register file holds their sums and exps (AVX2 and
// AVX-512: the sums take 2 and 1 registers per row), two on 128-bit targets (4 each).
constexpr int kGroup = kN >= 8 ? 4 : 2;

#if defined(ONEMODEL_TARGET_HAS_FMA)
// The fast twin's exp (ref::ExpFmaNonPositiveF32) lane by lane: n = RoundEven(u * log2(e)) by the magic constant 1.5 *
// 2^23 (adding it rounds the product to an integer, half to even, for |u * log2(e)| < 2^22; its low bits are then n's
// two's complement plus 2^22), and 2^n built from those bits. Lanes below -87 (and -inf: its n is -inf and its
// polynomial NaN) are replaced by +0 at the end; a NaN lane stays NaN.
inline VF32 ExpFmaNonPositiveV(VF32 u) {
  const VF32 magic = Set<VF32>(12582912.0f);
  const VF32 t = Add(Mul(u, Set<VF32>(1.44269504088896341f)), magic);
  const VF32 n = Sub(t, magic);
  VF32 r = FmaNegMulAdd(n, Set<VF32>(0.693147182464599609375f), u);
  r = FmaNegMulAdd(n, Set<VF32>(-1.904654299957768e-09f), r);
  const VF32 z = Mul(r, r);
  VF32 p = Set<VF32>(1.9875691500e-4f);
  p = FmaMulAdd(p, r, Set<VF32>(1.3981999507e-3f));
  p = FmaMulAdd(p, r, Set<VF32>(8.3334519073e-3f));
  p = FmaMulAdd(p, r, Set<VF32>(4.1665795894e-2f));
  p = FmaMulAdd(p, r, Set<VF32>(1.6666665459e-1f));
  p = FmaMulAdd(p, r, Set<VF32>(5.0000001201e-1f));
  p = FmaMulAdd(p, z, r);
  p = Add(p, Set<VF32>(1.0f));
  // (n + 127) << 23: t's bits are 0x4B400000 + n.
  const VI32 e = ShiftLeft<23>(Add(BitCast<VI32>(t), Set<VI32>(127 - 0x4B400000)));
  return AndNot(Lt(u, Set<VF32>(-87.0f)), Mul(p, BitCast<VF32>(e)));
}

// ref::ErfFmaF32 lane by lane: both ranges' values computed, |x| <= 1 selecting the
// first; the second's a is min(|x|, 4) (an infinity gives 1, NaN stays NaN: the first
// range's product of a NaN), its sign x's.
inline VF32 ErfFmaV(VF32 x) {
  const VF32 z = Mul(x, x);
  VF32 p = Set<VF32>(7.853861353153693e-5f);
  p = FmaMulAdd(p, z, Set<VF32>(-8.010193625184903e-4f));
  p = FmaMulAdd(p, z, Set<VF32>(5.188327685732524e-3f));
  p = FmaMulAdd(p, z, Set<VF32>(-2.685381193529856e-2f));
  p = FmaMulAdd(p, z, Set<VF32>(1.128358514861418e-1f));
  p = FmaMulAdd(p, z, Set<VF32>(-3.761262582423300e-1f));
  p = FmaMulAdd(p, z, Set<VF32>(1.128379165726710e0f));
  const VF32 small = Mul(x, p);
  const VF32 a = Abs(x);
  const VF32 c = IfThenElse(Lt(a, Set<VF32>(4.0f)), a, Set<VF32>(4.0f));
  const VF32 t = Div(Set<VF32>(1.0f), FmaMulAdd(Set<VF32>(0.3275911f), c, Set<VF32>(1.0f)));
  VF32 q = Set<VF32>(1.061405429f);
  q = FmaMulAdd(q, t, Set<VF32>(-1.453152027f));
  q = FmaMulAdd(q, t, Set<VF32>(1.421413741f));
  q = FmaMulAdd(q, t, Set<VF32>(-0.284496736f));
  q = FmaMulAdd(q, t, Set<VF32>(0.254829592f));
  q = Mul(q, t);
  const VF32 y = FmaNegMulAdd(q, ExpFmaNonPositiveV(Neg(Mul(c, c))), Set<VF32>(1.0f));
  const VF32 big = CopySignV(y, x);
  return IfThenElse(Le(a, Set<VF32>(1.0f)), small, IfThenElse(Ne(x, x), x, big));
}
#endif

template <bool kFma>
inline VF32 ExpOf(VF32 u) {
#if defined(ONEMODEL_TARGET_HAS_FMA)
  if constexpr (kFma) return ExpFmaNonPositiveV(u);
#endif
  return ExpV(u);
}

// The lane maximum of a maximum vector: NaN if any lane is; else the largest lane with
// -0 < +0, taken on keys that order the values as integers (the sign bit kept, the other
// bits flipped for negative values; the map is its own inverse).
inline float LaneMax(VF32 mv) {
  if (!AllTrue(Eq(mv, mv))) return __builtin_nanf("");
  alignas(64) uint32_t lanes[kN];
  Store(BitCast<VU32>(mv), lanes);
  auto key = [](uint32_t b) { return int32_t(b >> 31 ? b ^ 0x7FFFFFFFu : b); };
  int32_t best = key(lanes[0]);
  for (size_t j = 1; j < kN; ++j) best = std::max(best, key(lanes[j]));
  const uint32_t bits = uint32_t(key(uint32_t(best)));
  float m;
  std::memcpy(&m, &bits, sizeof m);
  return m;
}

// The elementwise steps before the softmax (ref::SoftmaxRowsF32's), on k lanes of row
// r at column i. A Div by a power of two whose reciprocal is a float is the product by
// that reciprocal: both are the correctly rounded value of the same real number.
struct PreSteps {
  int32_t op;  // kBinDivF32, kBinMulF32, or none
  VF32 c;
  const float* mask;
  int64_t mask_row_stride, mask_stride;
  VF32 operator()(VF32 v, int64_t r, int64_t i, size_t k) const {
    if (op == kBinDivF32)
      v = Div(v, c);
    else if (op == kBinMulF32)
      v = Mul(v, c);
    if (mask) {
      const float* m = mask + r * mask_row_stride;
      v = Add(v, mask_stride ? LoadN<VF32>(m + i, k, 0.0f) : Set<VF32>(m[0]));
    }
    return v;
  }
};

// G rows from row r0: x's rows to y's, pass by pass.
template <bool kFma, int G>
void SoftmaxRowGroup(const float* x, float* y, int64_t r0, int64_t n, const PreSteps& pre) {
  const VF32 ninf = Set<VF32>(-__builtin_inff());
  VF32 mx[G];
  for (int g = 0; g < G; ++g) mx[g] = ninf;
  int64_t i = 0;
  for (; i + int64_t(kN) <= n; i += int64_t(kN))
    for (int g = 0; g < G; ++g) {
      const int64_t o = (r0 + g) * n + i;
      const VF32 t = pre(Load<VF32>(x + o), r0 + g, i, kN);
      Store(t, y + o);
      mx[g] = MaxIeee(mx[g], t);
    }
  if (i < n)
    for (int g = 0; g < G; ++g) {
      const int64_t o = (r0 + g) * n + i;
      const size_t k = size_t(n - i);
      StoreN(pre(LoadN<VF32>(x + o, k, 0.0f), r0 + g, i, k), y + o, k);
      mx[g] = MaxIeee(mx[g], LoadN<VF32>(y + o, k, -__builtin_inff()));
    }
  VF32 mm[G];
  for (int g = 0; g < G; ++g) mm[g] = Set<VF32>(LaneMax(mx[g]));
  // e = exp(t - m) in place, summed in the canonical L-lane order (SumCanonicalVec's
  // registers and tail).
  VF32 acc[G][kRegs];
  for (int g = 0; g < G; ++g)
    for (size_t q = 0; q < kRegs; ++q) acc[g][q] = Set<VF32>(-0.0f);
  for (i = 0; i + int64_t(kL) <= n; i += int64_t(kL))
    for (int g = 0; g < G; ++g)
      for (size_t q = 0; q < kRegs; ++q) {
        float* p = y + (r0 + g) * n + i + int64_t(q * kN);
        const VF32 e = ExpOf<kFma>(Sub(Load<VF32>(p), mm[g]));
        Store(e, p);
        acc[g][q] = Add(acc[g][q], e);
      }
  VF32 scale[G];
  for (int g = 0; g < G; ++g) {
    float* row = y + (r0 + g) * n;
    for (int64_t j = i; j < n; j += int64_t(kN)) {
      const size_t left = size_t(n - j);
      if (left >= kN)
        Store(ExpOf<kFma>(Sub(Load<VF32>(row + j), mm[g])), row + j);
      else
        StoreN(ExpOf<kFma>(Sub(LoadN<VF32>(row + j, left, 0.0f), mm[g])), row + j, left);
    }
    const float s = detail::SumCanonicalTail<kL>(acc[g], row, size_t(i), size_t(n));
    scale[g] = Set<VF32>(kFma ? 1.0f / s : s);
  }
  // y = e / s, or e * (1 / s) in the fast twin.
  auto finish = [&](VF32 e, int g) { return kFma ? Mul(e, scale[g]) : Div(e, scale[g]); };
  for (i = 0; i + int64_t(kN) <= n; i += int64_t(kN))
    for (int g = 0; g < G; ++g) {
      float* p = y + (r0 + g) * n + i;
      Store(finish(Load<VF32>(p), g), p);
    }
  if (i < n)
    for (int g = 0; g < G; ++g) {
      float* p = y + (r0 + g) * n + i;
      StoreN(finish(LoadN<VF32>(p, size_t(n - i), 1.0f), g), p, size_t(n - i));
    }
}

template <bool kFma>
void SoftmaxRowsImpl(const float* x, float* y, int64_t rows, int64_t n, int32_t scale_op, float scale,
                     const float* mask, int64_t mask_row_stride, int64_t mask_stride) {
  PreSteps pre{scale_op, Set<VF32>(scale), mask, mask_row_stride, mask_stride};
  if (scale_op == kBinDivF32 && std::isnormal(scale)) {
    uint32_t bits;
    std::memcpy(&bits, &scale, sizeof bits);
    if ((bits & 0x007FFFFFu) == 0) pre = {kBinMulF32, Set<VF32>(1.0f / scale), mask, mask_row_stride, mask_stride};
  }
  if (scale_op != kBinDivF32 && scale_op != kBinMulF32) pre.op = -1;
  int64_t r = 0;
  for (; r + kGroup <= rows; r += kGroup) SoftmaxRowGroup<kFma, kGroup>(x, y, r, n, pre);
  for (; r < rows; ++r) SoftmaxRowGroup<kFma, 1>(x, y, r, n, pre);
}

}  // namespace

void SoftmaxRowsF32(const float* x, float* y, int64_t rows, int64_t n, int32_t scale_op, float scale, const float* mask,
                    int64_t mask_row_stride, int64_t mask_stride) {
  if (mask && mask_stride != 0 && mask_stride != 1) {
    ref::SoftmaxRowsF32(x, y, rows, n, scale_op, scale, mask, mask_row_stride, mask_stride);
    return;
  }
  SoftmaxRowsImpl<false>(x, y, rows, n, scale_op, scale, mask, mask_row_stride, mask_stride);
}

// Targets without a hardware FMA run the reference's loops (KernelTable::fma_f32 false:
// fast sessions plan the exact rows there).
void ErfFmaF32(const float* x, float* out, int64_t n) {
#if defined(ONEMODEL_TARGET_HAS_FMA)
  int64_t i = 0;
  for (; i + int64_t(kN) <= n; i += int64_t(kN)) Store(ErfFmaV(Load<VF32>(x + i)), out + i);
  if (i < n) StoreN(ErfFmaV(LoadN<VF32>(x + i, size_t(n - i), 0.0f)), out + i, size_t(n - i));
#else
  ref::ErfFmaF32(x, out, n);
#endif
}

void SoftmaxRowsFmaF32(const float* x, float* y, int64_t rows, int64_t n, int32_t scale_op, float scale,
                       const float* mask, int64_t mask_row_stride, int64_t mask_stride) {
#if defined(ONEMODEL_TARGET_HAS_FMA)
  if (!mask || mask_stride == 0 || mask_stride == 1) {
    SoftmaxRowsImpl<true>(x, y, rows, n, scale_op, scale, mask, mask_row_stride, mask_stride);
    return;
  }
#endif
  ref::SoftmaxRowsFmaF32(x, y, rows, n, scale_op, scale, mask, mask_row_stride, mask_stride);
}

}  // namespace ONEMODEL_NS
}  // namespace onemodel::impl
