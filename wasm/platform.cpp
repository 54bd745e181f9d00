// The wasm platform layer (the engine's, beside native/cpu.cpp): which targets the
// engine runs is fixed by which .wasm the JS loader picked (it feature-detects SIMD128
// before loading), so it is static here.
#include <string>

#include "runtime/dispatch.h"

namespace onemodel::impl {

bool CpuSupports(Isa isa) {
  switch (isa) {
    case Isa::kRef:
    case Isa::kScalar: return true;
#if defined(ONEMODEL_HAVE_WASM128)
    case Isa::kWasm128: return true;
#endif
    default: return false;
  }
}

std::string CpuDescription() {
#if defined(ONEMODEL_HAVE_WASM128) && defined(ONEMODEL_WASM_RELAXED)
  // The simd-relaxed flavour: whether the engine's relaxed madd fuses decides fast mode's
  // twins (KernelTable::fma_f32, `onemodel targets`).
  return "wasm32 simd128 relaxed-simd";
#elif defined(ONEMODEL_HAVE_WASM128)
  return "wasm32 simd128";
#else
  return "wasm32";
#endif
}

}  // namespace onemodel::impl
