// The per-target GEMV of MatMulNBits' codes (contract and layout in ref/nbits.h): lanes
// across Y's columns (W's rows), each lane one accumulator folding k in order from -0.0,
// as the reference: per k the codes of kNBitsCols columns widen to u32 lanes, convert
// exactly, minus the zero points, times the scales (one rounding: the weights' bits),
// times a[k], then added. No FMA: the vocabulary has none. Several groups run at once
// (independent accumulators), which changes no lane's order.
#include <algorithm>

#include "kernels/kernels.h"
#include "ref/nbits.h"
#include "simd/simd.h"

namespace onemodel::impl {
namespace ONEMODEL_NS {

// kGroups groups of columns at a time: their accumulators are independent chains (one
// chain each would wait on the add's latency every k); each lane still folds its k in
// order. kGroups * C = 4 chains on every width.
template <int64_t kGroups>
void NBitsGemvGroups(const float* a, int64_t K, int64_t block, const uint8_t* codes, const float* params, int64_t g,
                     float* y) {
  constexpr int64_t L = int64_t(Lanes<VF32>()), C = ref::kNBitsCols / L, P = 2 * ref::kNBitsCols;
  const int64_t blocks = (K + block - 1) / block;
  VF32 acc[kGroups][C], sc[kGroups][C], zp[kGroups][C];
  for (int64_t j = 0; j < kGroups; ++j)
    for (int64_t c = 0; c < C; ++c) acc[j][c] = Set<VF32>(-0.0f);
  for (int64_t b = 0; b < blocks; ++b) {
    for (int64_t j = 0; j < kGroups; ++j) {
      const float* pr = params + ((g + j) * blocks + b) * P;
      for (int64_t c = 0; c < C; ++c) {
        sc[j][c] = Load<VF32>(pr + c * L);
        zp[j][c] = Load<VF32>(pr + ref::kNBitsCols + c * L);
      }
    }
    const int64_t k1 = std::min(K, (b + 1) * block);
    for (int64_t k = b * block; k < k1; ++k) {
      const VF32 av = Set<VF32>(a[k]);
      for (int64_t j = 0; j < kGroups; ++j) {
        const uint8_t* ck = codes + ((g + j) * K + k) * ref::kNBitsCols;
        for (int64_t c = 0; c < C; ++c) {
          // The first L bytes of a 4L-byte load (the rest is padding or the next codes).
          const VU32 q = WidenLo(WidenLo(Load<VU8>(ck + c * L)));
          const VF32 w = Mul(Sub(CvtI32ToF32(BitCast<VI32>(q)), zp[j][c]), sc[j][c]);
          acc[j][c] = Add(acc[j][c], Mul(av, w));
        }
      }
    }
  }
  for (int64_t j = 0; j < kGroups; ++j)
    for (int64_t c = 0; c < C; ++c) Store(acc[j][c], y + (g + j) * ref::kNBitsCols + c * L);
}

void NBitsGemvF32(const float* a, int64_t K, int64_t block, const uint8_t* codes, const float* params, int64_t g0,
                  int64_t g1, float* y) {
  constexpr int64_t L = int64_t(Lanes<VF32>()), C = ref::kNBitsCols / L;
  static_assert(ref::kNBitsCols % L == 0, "a group is whole vectors");
  constexpr int64_t G = C >= 4 ? 1 : 4 / C;
  int64_t g = g0;
  for (; g + G <= g1; g += G) NBitsGemvGroups<G>(a, K, block, codes, params, g, y);
  for (; g < g1; ++g) NBitsGemvGroups<1>(a, K, block, codes, params, g, y);
}

}  // namespace ONEMODEL_NS
}  // namespace onemodel::impl
