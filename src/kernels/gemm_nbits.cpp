// The per-target GEMV of MatMulNBits' codes (contract and layout in ref/nbits.h): lanes
// across Y's columns (W's rows), each lane one accumulator folding k in order from -0.0,
// as the reference: per k the codes of kNBitsCols columns widen to u32 lanes, convert
// exactly, minus the zero points, times the scales (one rounding: the weights' bits),
// times a[k], then added. No FMA: the vocabulary has none.
#include <algorithm>

#include "kernels/kernels.h"
#include "ref/nbits.h"
#include "simd/simd.h"

namespace onemodel::impl {
namespace ONEMODEL_NS {

void NBitsGemvF32(const float* a, int64_t K, int64_t block, const uint8_t* codes, const float* params, int64_t g0,
                  int64_t g1, float* y) {
  constexpr int64_t L = int64_t(Lanes<VF32>()), C = ref::kNBitsCols / L, P = 2 * ref::kNBitsCols;
  static_assert(ref::kNBitsCols % L == 0, "a group is whole vectors");
  const int64_t blocks = (K + block - 1) / block;
  for (int64_t g = g0; g < g1; ++g) {
    VF32 acc[C], sc[C], zp[C];
    for (int64_t c = 0; c < C; ++c) acc[c] = Set<VF32>(-0.0f);
    for (int64_t b = 0; b < blocks; ++b) {
      const float* pr = params + (g * blocks + b) * P;
      for (int64_t c = 0; c < C; ++c) {
        sc[c] = Load<VF32>(pr + c * L);
        zp[c] = Load<VF32>(pr + ref::kNBitsCols + c * L);
      }
      const int64_t k1 = std::min(K, (b + 1) * block);
      for (int64_t k = b * block; k < k1; ++k) {
        const VF32 av = Set<VF32>(a[k]);
        const uint8_t* ck = codes + (g * K + k) * ref::kNBitsCols;
        for (int64_t c = 0; c < C; ++c) {
          // The first L bytes of a 4L-byte load (the rest is padding or the next codes).
          const VU32 q = WidenLo(WidenLo(Load<VU8>(ck + c * L)));
          const VF32 w = Mul(Sub(CvtI32ToF32(BitCast<VI32>(q)), zp[c]), sc[c]);
          acc[c] = Add(acc[c], Mul(av, w));
        }
      }
    }
    for (int64_t c = 0; c < C; ++c) Store(acc[c], y + g * ref::kNBitsCols + c * L);
  }
}

}  // namespace ONEMODEL_NS
}  // namespace onemodel::impl
