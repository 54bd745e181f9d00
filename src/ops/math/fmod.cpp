// Floating-point Mod (Mod with fmod=1, from ops/math/elementwise.cpp's Mod): C fmod
// semantics, computed exactly by long division on the significands (no libm).
#include <cstring>

#include "ops/ops.h"
#include "ops/util.h"

namespace onemodel::impl {
namespace ops {
namespace {

// x mod y with the sign of x, exactly (the remainder is always representable): binary
// long division on the significands. No libm.
double FmodExact(double x, double y) {
  uint64_t ux, uy;
  std::memcpy(&ux, &x, 8);
  std::memcpy(&uy, &y, 8);
  const uint64_t sx = ux & 0x8000000000000000ull;
  ux &= ~0x8000000000000000ull;
  uy &= ~0x8000000000000000ull;
  if (uy == 0 || ux >= 0x7FF0000000000000ull || uy > 0x7FF0000000000000ull) return __builtin_nan("");
  if (ux < uy) return x;  // |x| < |y| (or y infinite)
  int ex = int(ux >> 52), ey = int(uy >> 52);
  uint64_t mx = ux & 0xFFFFFFFFFFFFFull, my = uy & 0xFFFFFFFFFFFFFull;
  if (ex == 0) {
    while (!(mx & (1ull << 52))) {
      mx <<= 1;
      --ex;
    }
    ++ex;
  } else {
    mx |= 1ull << 52;
  }
  if (ey == 0) {
    while (!(my & (1ull << 52))) {
      my <<= 1;
      --ey;
    }
    ++ey;
  } else {
    my |= 1ull << 52;
  }
  for (; ex > ey; --ex) {
    if (mx >= my) mx -= my;
    mx <<= 1;
  }
  if (mx >= my) mx -= my;
  double r;
  if (mx == 0) {
    uint64_t z = sx;
    std::memcpy(&r, &z, 8);
    return r;
  }
  while (!(mx & (1ull << 52))) {
    mx <<= 1;
    --ex;
  }
  uint64_t bits;
  if (ex > 0)
    bits = (uint64_t(ex) << 52) | (mx & 0xFFFFFFFFFFFFFull);
  else
    bits = mx >> (1 - ex);  // subnormal: exact, the low bits are zero
  bits |= sx;
  std::memcpy(&r, &bits, 8);
  return r;
}

}  // namespace

// Floating-point Mod (fmod=1): C fmod semantics, exact.
void ModFloat(OpContext& ctx) {
  const Tensor& a = ctx.in(0);
  const Tensor& b = ctx.in(1);
  ctx.RequireInputType(b, a.dtype(), "B");  // B is read as A's element type
  const Shape s = BroadcastShapes(ctx, {a.shape(), b.shape()});
  Tensor& out = ctx.out(0, a.dtype(), s);
  const auto ia = BroadcastIndex(a.shape(), s), ib = BroadcastIndex(b.shape(), s);
  DispatchNumeric(a.dtype(), [&]<class T>() {
    using C = typename Compute<T>::type;
    for (size_t i = 0; i < ia.size(); ++i) {
      const double r = FmodExact(double(Widen(a.data<T>()[ia[i]])), double(Widen(b.data<T>()[ib[i]])));
      out.mutable_data<T>()[i] = Narrow<T>(C(r));  // exact: the remainder fits the type
    }
  });
}

}  // namespace ops
}  // namespace onemodel::impl
