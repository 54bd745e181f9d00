// The vector-op test kit: every op of simd_ops.inc applied to fixed-size buffers,
// compiled once per target, so tests can compare each target with the scalar backend.
#pragma once

#include <cstddef>
#include <cstdint>

namespace onemodel::impl {
namespace test {

constexpr size_t kKitBytes = 512;  // each input buffer; a multiple of every vector size

// in: a, b, c (kKitBytes each); out: up to kKitBytes.
using KitFn = void (*)(const uint8_t* a, const uint8_t* b, const uint8_t* c, uint8_t* out);

struct SimdKit {
  const KitFn* fns;  // in simd_ops.inc order
  size_t count;
  // Extra entry points whose results depend on the width by definition.
  float (*reduce_sum_tree)(const float* lanes, size_t* lanes_used);          // one vector
  void (*load_store_n)(const float* src, size_t n, float fill, float* dst);  // LoadN + StoreN
  // TransposeSquare on the lanes x lanes floats at src (row-major), stored row-major.
  void (*transpose_square)(const float* src, float* dst, size_t* lanes_used);
  // AllTrue(Lt(a, b)) on one vector.
  bool (*all_true_lt)(const float* a, const float* b, size_t* lanes_used);
};

}  // namespace test
}  // namespace onemodel::impl

#define OM_DECLARE_KIT(ns)           \
  namespace onemodel::impl {         \
  namespace ns {                     \
  const test::SimdKit& GetSimdKit(); \
  }                                  \
  }
OM_DECLARE_KIT(scalar)
OM_DECLARE_KIT(sse41)
OM_DECLARE_KIT(avx2)
OM_DECLARE_KIT(avxvnni)
OM_DECLARE_KIT(avx512)
OM_DECLARE_KIT(avx512vnni)
OM_DECLARE_KIT(neon)
OM_DECLARE_KIT(neondot)
OM_DECLARE_KIT(wasm128)
#undef OM_DECLARE_KIT
