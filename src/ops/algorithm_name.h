// The name of an algorithm enum's member from the family's list of names, in the enum's
// order (ops/<family>.h); "?" for a value past the list.
#pragma once

#include <cstddef>

namespace onemodel::impl {
namespace ops {

template <class Algo, size_t N>
constexpr const char* AlgorithmName(Algo a, const char* const (&names)[N]) {
  const size_t i = static_cast<size_t>(a);
  return i < N ? names[i] : "?";
}

}  // namespace ops
}  // namespace onemodel::impl
