// The reference (oracle) Cast and CastLike (ONNX Operators.md, Cast): the project's
// conversion routines, the definition of Cast's bits. Every conversion rounds once
// (exact-contract section 2): narrow float targets go through binary32 with round-to-odd
// from wider sources, so the final round-to-nearest-even is the only rounding that shows.
// Float -> integer truncates toward zero, NaN -> 0, and saturates (section 5); integer ->
// integer wraps (two's complement), the 4- and 2-bit types included, as ONNX's reference
// does. ops/tensor/cast.cpp validates the node (strings and complex numbers are not
// converted) and runs Cast as its family's reference row.
#pragma once

#include <cstdint>
#include <limits>
#include <type_traits>

#include "core/minifloat.h"
#include "core/tensor.h"

namespace onemodel::impl {
namespace ref {

// Cast's float -> integer conversion (exact-contract section 5): truncated toward zero,
// NaN -> 0, saturated to T's range; never an out-of-range conversion.
template <class T>
T FloatToIntSat(double d) {
  if (d != d) return 0;
  constexpr double lo = double(std::numeric_limits<T>::min());
  constexpr double hi_excl = double(std::numeric_limits<T>::max()) + 1.0;  // exact: a power of two
  if (d >= hi_excl) return std::numeric_limits<T>::max();
  if (d <= lo - 1.0 || (std::is_unsigned_v<T> && d <= -1.0)) return std::numeric_limits<T>::min();
  return T(d);  // truncates toward zero
}

// A Cast node's options: saturate (float 8-bit targets and E8M0; float16 and bfloat16
// never saturate) and the E8M0 rounding mode (round_mode).
struct CastParams {
  bool saturate = true;
  E8M0Round round = E8M0Round::kUp;
};

// out[i] = x[i] converted to out's type, element by element (x and out of one shape,
// neither string nor complex): the source read exactly (a binary64, or an integer's sign
// and magnitude), then
//  - float, double: the value rounded once to nearest even (integers by C++'s conversion);
//  - bool: value != 0;
//  - 8- to 64-bit integers: floats by FloatToIntSat, integers wrapped to the width;
//  - int4, uint4, int2, uint2: to int64 (floats by FloatToIntSat), the low bits kept,
//    the signed types sign-extended into their byte;
//  - E8M0, float16, bfloat16 and the 8-bit floats: to binary32 once (round to odd from
//    binary64 or from integers wider than 24 bits), then F32ToE8M0 / F32ToMini.
void Cast(const CastParams& p, const Tensor& x, Tensor& out);

}  // namespace ref
}  // namespace onemodel::impl
