// The vector-op test kit for one target (compiled per target; see simd_kit.h).
#include "tests/simd_kit.h"

#include "simd/simd.h"

namespace onemodel::impl {
namespace ONEMODEL_NS {
namespace {

using test::kKitBytes;

template <class T>
struct VecOf;
template <>
struct VecOf<float> {
  using type = VF32;
};
template <>
struct VecOf<int32_t> {
  using type = VI32;
};
template <>
struct VecOf<uint32_t> {
  using type = VU32;
};
template <>
struct VecOf<int16_t> {
  using type = VI16;
};
template <>
struct VecOf<uint16_t> {
  using type = VU16;
};
template <>
struct VecOf<int8_t> {
  using type = VI8;
};
template <>
struct VecOf<uint8_t> {
  using type = VU8;
};
template <>
struct VecOf<double> {
  using type = VF64;
};
template <>
struct VecOf<uint64_t> {
  using type = VU64;
};

template <class T>
const T* P(const uint8_t* p) {
  return reinterpret_cast<const T*>(p);
}
template <class T>
T* P(uint8_t* p) {
  return reinterpret_cast<T*>(p);
}

#define OM_BIN(name, T, op)                                                   \
  void name(const uint8_t* a, const uint8_t* b, const uint8_t*, uint8_t* o) { \
    using V = typename VecOf<T>::type;                                        \
    for (size_t i = 0; i < kKitBytes / sizeof(T); i += V::kLanes)             \
      Store(op(Load<V>(P<T>(a) + i), Load<V>(P<T>(b) + i)), P<T>(o) + i);     \
  }
#define OM_UN(name, T, op)                                                                                      \
  void name(const uint8_t* a, const uint8_t*, const uint8_t*, uint8_t* o) {                                     \
    using V = typename VecOf<T>::type;                                                                          \
    for (size_t i = 0; i < kKitBytes / sizeof(T); i += V::kLanes) Store(op(Load<V>(P<T>(a) + i)), P<T>(o) + i); \
  }
#define OM_CVT(name, TIn, TOut, op)                                         \
  void name(const uint8_t* a, const uint8_t*, const uint8_t*, uint8_t* o) { \
    using VI = typename VecOf<TIn>::type;                                   \
    for (size_t i = 0; i < kKitBytes / sizeof(TIn); i += VI::kLanes)        \
      Store(op(Load<VI>(P<TIn>(a) + i)), P<TOut>(o) + i);                   \
  }
#define OM_WIDEN(name, TN, TW)                                              \
  void name(const uint8_t* a, const uint8_t*, const uint8_t*, uint8_t* o) { \
    using VN = typename VecOf<TN>::type;                                    \
    for (size_t i = 0; i < kKitBytes / 2 / sizeof(TN); i += VN::kLanes) {   \
      const VN v = Load<VN>(P<TN>(a) + i);                                  \
      Store(WidenLo(v), P<TW>(o) + i);                                      \
      Store(WidenHi(v), P<TW>(o) + i + VN::kLanes / 2);                     \
    }                                                                       \
  }
#define OM_NARROW(name, TW, TN, op)                                                         \
  void name(const uint8_t* a, const uint8_t*, const uint8_t*, uint8_t* o) {                 \
    using VW = typename VecOf<TW>::type;                                                    \
    for (size_t i = 0; i < kKitBytes / sizeof(TW); i += 2 * VW::kLanes)                     \
      Store(op(Load<VW>(P<TW>(a) + i), Load<VW>(P<TW>(a) + i + VW::kLanes)), P<TN>(o) + i); \
  }
#define OM_EVEN(name)                                                                                                 \
  void name(const uint8_t* a, const uint8_t*, const uint8_t*, uint8_t* o) {                                           \
    for (size_t i = 0; i < kKitBytes / sizeof(float); i += 2 * VF32::kLanes)                                          \
      Store(EvenLanes(Load<VF32>(P<float>(a) + i), Load<VF32>(P<float>(a) + i + VF32::kLanes)), P<float>(o) + i / 2); \
  }
#define OM_CLAMP(name)                                                                                   \
  void name(const uint8_t* a, const uint8_t* b, const uint8_t* c, uint8_t* o) {                          \
    for (size_t i = 0; i < kKitBytes / sizeof(float); i += VF32::kLanes) {                               \
      const VF32 x = Load<VF32>(P<float>(b) + i), y = Load<VF32>(P<float>(c) + i);                       \
      const VF32 x0 = IfThenElse(Eq(x, x), x, Zero<VF32>()), y0 = IfThenElse(Eq(y, y), y, Zero<VF32>()); \
      const VF32 lt = Lt(y0, x0);                                                                        \
      Store(ClampZeroNaN(Load<VF32>(P<float>(a) + i), IfThenElse(lt, y0, x0), IfThenElse(lt, x0, y0)),   \
            P<float>(o) + i);                                                                            \
    }                                                                                                    \
  }
#define OM_SELECT(name, T)                                                      \
  void name(const uint8_t* a, const uint8_t* b, const uint8_t* c, uint8_t* o) { \
    using V = typename VecOf<T>::type;                                          \
    for (size_t i = 0; i < kKitBytes / sizeof(T); i += V::kLanes) {             \
      const V x = Load<V>(P<T>(a) + i), y = Load<V>(P<T>(b) + i);               \
      Store(IfThenElse(Gt(x, y), x, Load<V>(P<T>(c) + i)), P<T>(o) + i);        \
    }                                                                           \
  }
#define OM_MADD(name)                                                                                             \
  void name(const uint8_t* a, const uint8_t* b, const uint8_t*, uint8_t* o) {                                     \
    for (size_t i = 0; i < kKitBytes / 2; i += VI16::kLanes)                                                      \
      Store(MulAddPairsI16(Load<VI16>(P<int16_t>(a) + i), Load<VI16>(P<int16_t>(b) + i)), P<int32_t>(o) + i / 2); \
  }
#define OM_DOT(name)                                                                                                 \
  void name(const uint8_t* a, const uint8_t* b, const uint8_t* c, uint8_t* o) {                                      \
    for (size_t i = 0; i < kKitBytes; i += VI8::kLanes)                                                              \
      Store(DotI8x4Acc(Load<VI32>(P<int32_t>(c) + i / 4), Load<VI8>(P<int8_t>(a) + i), Load<VI8>(P<int8_t>(b) + i)), \
            P<int32_t>(o) + i / 4);                                                                                  \
  }
#define OM_DOTU(name)                                                                                       \
  void name(const uint8_t* a, const uint8_t* b, const uint8_t* c, uint8_t* o) {                             \
    for (size_t i = 0; i < kKitBytes; i += VU8::kLanes)                                                     \
      Store(DotU8S8x4Acc(Load<VI32>(P<int32_t>(c) + i / 4), Load<VU8>(a + i), Load<VI8>(P<int8_t>(b) + i)), \
            P<int32_t>(o) + i / 4);                                                                         \
  }
#include "tests/simd_ops.inc"
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

#define OM_ENTRY(name, ...) &name,
#define OM_BIN OM_ENTRY
#define OM_UN OM_ENTRY
#define OM_CVT OM_ENTRY
#define OM_WIDEN OM_ENTRY
#define OM_NARROW OM_ENTRY
#define OM_SELECT OM_ENTRY
#define OM_EVEN OM_ENTRY
#define OM_CLAMP OM_ENTRY
#define OM_MADD OM_ENTRY
#define OM_DOT OM_ENTRY
#define OM_DOTU OM_ENTRY
const test::KitFn kFns[] = {
#include "tests/simd_ops.inc"
};

float ReduceTree(const float* lanes, size_t* used) {
  *used = VF32::kLanes;
  return ReduceSumTree(Load<VF32>(lanes));
}

void LoadStoreN(const float* src, size_t n, float fill, float* dst) {
  StoreN(LoadN<VF32>(src, n, fill), dst, VF32::kLanes);
}

void TransposeSq(const float* src, float* dst, size_t* used) {
  constexpr size_t kL = VF32::kLanes;
  *used = kL;
  VF32 v[kL];
  for (size_t j = 0; j < kL; ++j) v[j] = Load<VF32>(src + j * kL);
  TransposeSquare(v);
  for (size_t q = 0; q < kL; ++q) Store(v[q], dst + q * kL);
}

bool AllTrueLt(const float* a, const float* b, size_t* used) {
  *used = VF32::kLanes;
  return AllTrue(Lt(Load<VF32>(a), Load<VF32>(b)));
}

}  // namespace

const test::SimdKit& GetSimdKit() {
  static const test::SimdKit kKit{kFns,      sizeof(kFns) / sizeof(kFns[0]), &ReduceTree, &LoadStoreN, &TransposeSq,
                                  &AllTrueLt};
  return kKit;
}

}  // namespace ONEMODEL_NS
}  // namespace onemodel::impl
