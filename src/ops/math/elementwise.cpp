// Reference elementwise operators (ONNX Operators.md; numpy broadcasting). Narrow
// floats compute in f32 and round once (exact-contract section 2); integers wrap;
// min/max follow IEEE 754-2019 (section 5). Decisions are listed in docs/exact-mode.md.
#include <cmath>
#include <limits>
#include <type_traits>

#include "ref/data_movement.h"
#include "ref/elementwise.h"
#include "ref/math.h"
#include "ops/ops.h"
#include "ops/math/elementwise.h"
#include "ops/parallel.h"
#include "ops/util.h"

namespace onemodel::impl {
namespace ops {
namespace {

using ref::MaxIeee;
using ref::MinIeee;

// Wrapping integer arithmetic through the unsigned type.
template <class T>
T WrapAdd(T a, T b) {
  using U = std::make_unsigned_t<T>;
  return T(U(U(a) + U(b)));
}
template <class T>
T WrapSub(T a, T b) {
  using U = std::make_unsigned_t<T>;
  return T(U(U(a) - U(b)));
}
template <class T>
T WrapMul(T a, T b) {
  using U = std::make_unsigned_t<T>;
  using W = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, U>;
  return T(U(W(U(a)) * W(U(b))));
}
// Integer division truncates toward zero; x/0 is 0 and MIN/-1 wraps to MIN (decisions).
template <class T>
T IntDiv(T a, T b) {
  if (b == 0) return 0;
  if constexpr (std::is_signed_v<T>) {
    if (b == T(-1)) return T(std::make_unsigned_t<T>(0) - std::make_unsigned_t<T>(a));
  }
  return T(a / b);
}

enum class Arith { kAdd, kSub, kMul, kDiv, kMax, kMin };

template <class C>
C ApplyArith(Arith op, C a, C b) {
  if constexpr (std::is_floating_point_v<C>) {
    switch (op) {
      case Arith::kAdd: return a + b;
      case Arith::kSub: return a - b;
      case Arith::kMul: return a * b;
      case Arith::kDiv: return a / b;
      case Arith::kMax: return MaxIeee(a, b);
      case Arith::kMin: return MinIeee(a, b);
    }
  } else if constexpr (std::is_same_v<C, bool>) {
    switch (op) {
      case Arith::kMax: return a || b;
      case Arith::kMin: return a && b;
      default: return a;
    }
  } else {
    switch (op) {
      case Arith::kAdd: return WrapAdd(a, b);
      case Arith::kSub: return WrapSub(a, b);
      case Arith::kMul: return WrapMul(a, b);
      case Arith::kDiv: return IntDiv(a, b);
      case Arith::kMax: return a > b ? a : b;
      case Arith::kMin: return a < b ? a : b;
    }
  }
  return a;
}

void CheckSameType(const OpContext& ctx, const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype()) {
    throw ctx.Fail(ErrorCode::kTypeMismatch, "inputs have different element types (" + DTypeName(a.dtype()) + " and " +
                                                 DTypeName(b.dtype()) + ")");
  }
}

// A broadcast of a and b to `shape` as runs: dimensions where a and b are both present,
// only one is, or neither, are merged while the pattern holds; the innermost merged
// dimension is the run (length `run`, strides sa/sb of 0 or 1), the others are walked
// by an odometer giving each run's offsets in a and b.
struct Runs {
  int64_t run = 1, sa = 1, sb = 1, count = 1;
  Shape dims, a_st, b_st;  // outer dimensions, innermost last (inline: no heap)
  // Offsets of run r in a and b.
  void Offsets(int64_t r, int64_t* oa, int64_t* ob) const {
    *oa = 0;
    *ob = 0;
    for (size_t d = dims.size(); d-- > 0;) {
      const int64_t i = r % dims[d];
      r /= dims[d];
      *oa += i * a_st[d];
      *ob += i * b_st[d];
    }
  }
};
Runs MakeRuns(const Shape& sa, const Shape& sb, const Shape& out) {
  const size_t R = out.size();
  Shape od, ast, bst, pat;  // merged dims, with contiguous strides of a and b, and who is present
  for (size_t d = 0; d < R; ++d) {
    const int64_t da = d + sa.size() >= R ? sa[d + sa.size() - R] : 1;
    const int64_t db = d + sb.size() >= R ? sb[d + sb.size() - R] : 1;
    if (out[d] == 1) continue;
    const int64_t p = (da != 1 ? 1 : 0) | (db != 1 ? 2 : 0);
    if (!pat.empty() && pat.back() == p)
      od.back() *= out[d];
    else {
      od.push_back(out[d]);
      pat.push_back(p);
    }
  }
  Runs r;
  if (od.empty()) {
    r.run = 1;
    r.sa = r.sb = 0;
    return r;
  }
  // Strides: a's elements are laid out over the dims where it is present.
  ast.assign(od.size(), 0);
  bst.assign(od.size(), 0);
  int64_t sta = 1, stb = 1;
  for (size_t d = od.size(); d-- > 0;) {
    if (pat[d] & 1) {
      ast[d] = sta;
      sta *= od[d];
    }
    if (pat[d] & 2) {
      bst[d] = stb;
      stb *= od[d];
    }
  }
  r.run = od.back();
  r.sa = ast.back() ? 1 : 0;
  r.sb = bst.back() ? 1 : 0;
  r.dims.assign(od.begin(), od.end() - 1);
  r.a_st.assign(ast.begin(), ast.end() - 1);
  r.b_st.assign(bst.begin(), bst.end() - 1);
  for (int64_t d : r.dims) r.count *= d;
  return r;
}

// The float path: runs handed to the session's BinaryF32 kernel, split over threads. A
// run longer than 32K elements goes in pieces of 16K (operands of the same shape, or one
// a single value, are one run), so that one long run is split too; each element is
// computed alone, so the pieces change nothing in it.
void BinaryRunsF32(const OpContext& ctx, int32_t code, const Tensor& a, const Tensor& b, Tensor& out) {
  auto* kernel = ctx.kernels->BinaryF32;
  const Runs r = MakeRuns(a.shape(), b.shape(), out.shape());
  const float* pa = a.data<float>();
  const float* pb = b.data<float>();
  float* po = out.mutable_data<float>();
  constexpr int64_t kPiece = int64_t(1) << 14;
  const int64_t piece = r.run > 2 * kPiece ? kPiece : std::max<int64_t>(r.run, 1);
  const int64_t per = (r.run + piece - 1) / piece;  // pieces per run
  const int64_t grain = std::max<int64_t>(1, (int64_t(1) << 15) / piece);
  ParallelFor(ctx, r.count * per, grain, [&](int64_t u0, int64_t u1) {
    for (int64_t u = u0; u < u1; ++u) {
      const int64_t i = u / per, j0 = (u % per) * piece, len = std::min(piece, r.run - j0);
      int64_t oa, ob;
      r.Offsets(i, &oa, &ob);
      kernel(code, pa + oa + j0 * r.sa, r.sa, pb + ob + j0 * r.sb, r.sb, po + i * r.run + j0, len);
    }
  });
}

// out = a op b (broadcast), any numeric type.
Tensor Binary(const OpContext& ctx, Arith op, const Tensor& a, const Tensor& b) {
  CheckSameType(ctx, a, b);
  const Shape shape = BroadcastShapes(ctx, {a.shape(), b.shape()});
  if (a.dtype() == DType::kFloat && ctx.kernels) {
    Tensor out = ctx.NewTensor(a.dtype(), shape, false, "output");
    static constexpr int32_t kCode[] = {kBinAddF32, kBinSubF32, kBinMulF32, kBinDivF32, kBinMaxF32, kBinMinF32};
    if (out.numel()) BinaryRunsF32(ctx, kCode[int(op)], a, b, out);
    return out;
  }
  Tensor out = ctx.NewTensor(a.dtype(), shape, true, "output");
  const auto ia = BroadcastIndex(a.shape(), shape), ib = BroadcastIndex(b.shape(), shape);
  const bool ok = DispatchNumeric(a.dtype(), [&]<class T>() {
    if constexpr (std::is_same_v<T, bool>) {
      if (op != Arith::kMax && op != Arith::kMin)
        throw ctx.Fail(ErrorCode::kTypeMismatch, "bool inputs are not supported");
    }
    const T* pa = a.data<T>();
    const T* pb = b.data<T>();
    T* po = out.mutable_data<T>();
    for (size_t i = 0; i < ia.size(); ++i) po[i] = Narrow<T>(ApplyArith(op, Widen(pa[ia[i]]), Widen(pb[ib[i]])));
  });
  if (!ok) throw ctx.Fail(ErrorCode::kTypeMismatch, "element type " + DTypeName(a.dtype()) + " is not supported");
  return out;
}

void BinaryOp(OpContext& ctx, Arith op) { ctx.set_out(0, Binary(ctx, op, ctx.in(0), ctx.in(1))); }

// Variadic Max/Min/Sum: folds inputs left to right (Sum: in input order).
void Variadic(OpContext& ctx, Arith op) {
  if (ctx.num_inputs() == 0) throw ctx.Fail(ErrorCode::kMissingInput, "needs at least one input");
  Tensor acc = ctx.in(0);
  if (ctx.num_inputs() == 1) {
    Tensor copy(acc.dtype(), acc.shape());
    if (acc.nbytes()) std::memcpy(copy.mutable_data<uint8_t>(), acc.raw(), acc.nbytes());
    ctx.set_out(0, copy);
    return;
  }
  for (size_t i = 1; i < ctx.num_inputs(); ++i) acc = Binary(ctx, op, acc, ctx.in(i));
  ctx.set_out(0, acc);
}

enum class Cmp { kEq, kLt, kLe, kGt, kGe };
void Compare(OpContext& ctx, Cmp op) {
  const Tensor& a = ctx.in(0);
  const Tensor& b = ctx.in(1);
  CheckSameType(ctx, a, b);
  const Shape shape = BroadcastShapes(ctx, {a.shape(), b.shape()});
  Tensor& out = ctx.out(0, DType::kBool, shape);
  const auto ia = BroadcastIndex(a.shape(), shape), ib = BroadcastIndex(b.shape(), shape);
  uint8_t* po = out.mutable_data<uint8_t>();
  if (a.dtype() == DType::kString) {
    if (op != Cmp::kEq) throw ctx.Fail(ErrorCode::kTypeMismatch, "strings only compare for equality");
    for (size_t i = 0; i < ia.size(); ++i) po[i] = a.strings()[size_t(ia[i])] == b.strings()[size_t(ib[i])];
    return;
  }
  const bool ok = DispatchNumeric(a.dtype(), [&]<class T>() {
    const T* pa = a.data<T>();
    const T* pb = b.data<T>();
    for (size_t i = 0; i < ia.size(); ++i) {
      const auto x = Widen(pa[ia[i]]), y = Widen(pb[ib[i]]);
      bool r = false;
      switch (op) {
        case Cmp::kEq: r = x == y; break;
        case Cmp::kLt: r = x < y; break;
        case Cmp::kLe: r = x <= y; break;
        case Cmp::kGt: r = x > y; break;
        case Cmp::kGe: r = x >= y; break;
      }
      po[i] = r;
    }
  });
  if (!ok) throw ctx.Fail(ErrorCode::kTypeMismatch, "element type " + DTypeName(a.dtype()) + " is not supported");
}

enum class Logic { kAnd, kOr, kXor };
void Logical(OpContext& ctx, Logic op) {
  const Tensor& a = ctx.in(0);
  const Tensor& b = ctx.in(1);
  if (a.dtype() != DType::kBool || b.dtype() != DType::kBool)
    throw ctx.Fail(ErrorCode::kTypeMismatch, "inputs must be bool");
  const Shape shape = BroadcastShapes(ctx, {a.shape(), b.shape()});
  Tensor& out = ctx.out(0, DType::kBool, shape);
  const auto ia = BroadcastIndex(a.shape(), shape), ib = BroadcastIndex(b.shape(), shape);
  for (size_t i = 0; i < ia.size(); ++i) {
    const bool x = a.data<uint8_t>()[ia[i]] != 0, y = b.data<uint8_t>()[ib[i]] != 0;
    out.mutable_data<uint8_t>()[i] = op == Logic::kAnd ? (x && y) : op == Logic::kOr ? (x || y) : (x != y);
  }
}

template <class F>
void IntegerBinary(OpContext& ctx, F f) {
  const Tensor& a = ctx.in(0);
  const Tensor& b = ctx.in(1);
  CheckSameType(ctx, a, b);
  const Shape shape = BroadcastShapes(ctx, {a.shape(), b.shape()});
  Tensor& out = ctx.out(0, a.dtype(), shape);
  const auto ia = BroadcastIndex(a.shape(), shape), ib = BroadcastIndex(b.shape(), shape);
  const bool ok = DispatchNumeric(a.dtype(), [&]<class T>() {
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      for (size_t i = 0; i < ia.size(); ++i) out.mutable_data<T>()[i] = f(a.data<T>()[ia[i]], b.data<T>()[ib[i]]);
    } else {
      throw ctx.Fail(ErrorCode::kTypeMismatch, "inputs must be integers");
    }
  });
  if (!ok) throw ctx.Fail(ErrorCode::kTypeMismatch, "inputs must be integers");
}

// out = f(x) elementwise, same type; F receives the compute type.
template <class F>
void Unary(OpContext& ctx, F f, bool ints_ok = true) {
  const Tensor& x = ctx.in(0);
  Tensor& out = ctx.out(0, x.dtype(), x.shape());
  const bool ok = DispatchNumeric(x.dtype(), [&]<class T>() {
    if constexpr (std::is_same_v<T, bool>) {
      throw ctx.Fail(ErrorCode::kTypeMismatch, "bool input is not supported");
    } else {
      if (!kIsFloat<T> && !ints_ok) throw ctx.Fail(ErrorCode::kTypeMismatch, "input must be floating point");
      const T* px = x.data<T>();
      T* po = out.mutable_data<T>();
      for (int64_t i = 0; i < x.numel(); ++i) po[i] = Narrow<T>(f(Widen(px[i])));
    }
  });
  if (!ok) throw ctx.Fail(ErrorCode::kTypeMismatch, "element type " + DTypeName(x.dtype()) + " is not supported");
}

template <class C>
C AbsOf(C v) {
  if constexpr (std::is_same_v<C, float>)
    return U2F(F2U(v) & 0x7FFFFFFFu);
  else if constexpr (std::is_same_v<C, double>)
    return std::signbit(v) ? -v : v;
  else if constexpr (std::is_signed_v<C>)
    return v < 0 ? C(std::make_unsigned_t<C>(0) - std::make_unsigned_t<C>(v)) : v;
  else
    return v;
}
template <class C>
C NegOf(C v) {
  if constexpr (std::is_floating_point_v<C>)
    return -v;
  else
    return C(std::make_unsigned_t<C>(0) - std::make_unsigned_t<C>(v));
}
// Round half to even without libm (exact: one add of 2^23 / 2^52).
float RoundEvenF(float x) {
  const uint32_t e = (F2U(x) >> 23) & 0xFF;
  if (e >= 150) return x;
  const float a = U2F(F2U(x) & 0x7FFFFFFFu);
  const float r = e < 126 ? 0.0f : (a + 8388608.0f) - 8388608.0f;
  return U2F(F2U(r) | (F2U(x) & 0x80000000u));
}
double RoundEvenD(double x) {
  if (!(x == x) || x >= 4503599627370496.0 || x <= -4503599627370496.0) return x;
  const double a = std::signbit(x) ? -x : x;
  const double r = (a + 4503599627370496.0) - 4503599627370496.0;
  return std::signbit(x) ? -r : r;
}
float TruncF(float x) {
  const uint32_t u = F2U(x);
  const int e = int((u >> 23) & 0xFF) - 127;
  if (e >= 23) return x;
  if (e < 0) return U2F(u & 0x80000000u);
  return U2F(u & ~((1u << (23 - e)) - 1u));
}
double TruncD(double x) {
  uint64_t u;
  std::memcpy(&u, &x, 8);
  const int e = int((u >> 52) & 0x7FF) - 1023;
  if (e >= 52) return x;
  if (e < 0)
    u &= 0x8000000000000000ull;
  else
    u &= ~((uint64_t(1) << (52 - e)) - 1);
  double r;
  std::memcpy(&r, &u, 8);
  return r;
}
template <class C>
C FloorOf(C x) {
  if constexpr (std::is_same_v<C, float>) {
    const float t = TruncF(x);
    return x < t ? t - 1.0f : t;
  } else {
    const double t = TruncD(x);
    return x < t ? t - 1.0 : t;
  }
}
template <class C>
C CeilOf(C x) {
  if constexpr (std::is_same_v<C, float>) {
    const float t = TruncF(x);
    return x > t ? t + 1.0f : t;
  } else {
    const double t = TruncD(x);
    return x > t ? t + 1.0 : t;
  }
}

}  // namespace

void BroadcastBinaryF32(const OpContext& ctx, int32_t code, const Tensor& a, const Tensor& b, Tensor& out) {
  if (out.numel()) BinaryRunsF32(ctx, code, a, b, out);
}

void Add(OpContext& ctx) { BinaryOp(ctx, Arith::kAdd); }
void Sub(OpContext& ctx) { BinaryOp(ctx, Arith::kSub); }
void Mul(OpContext& ctx) { BinaryOp(ctx, Arith::kMul); }
void Div(OpContext& ctx) { BinaryOp(ctx, Arith::kDiv); }
void Max(OpContext& ctx) { Variadic(ctx, Arith::kMax); }
void Min(OpContext& ctx) { Variadic(ctx, Arith::kMin); }
void Sum(OpContext& ctx) { Variadic(ctx, Arith::kAdd); }
void Equal(OpContext& ctx) { Compare(ctx, Cmp::kEq); }
void Less(OpContext& ctx) { Compare(ctx, Cmp::kLt); }
void LessOrEqual(OpContext& ctx) { Compare(ctx, Cmp::kLe); }
void Greater(OpContext& ctx) { Compare(ctx, Cmp::kGt); }
void GreaterOrEqual(OpContext& ctx) { Compare(ctx, Cmp::kGe); }
void And(OpContext& ctx) { Logical(ctx, Logic::kAnd); }
void Or(OpContext& ctx) { Logical(ctx, Logic::kOr); }
void Xor(OpContext& ctx) { Logical(ctx, Logic::kXor); }

void Not(OpContext& ctx) {
  const Tensor& x = ctx.in(0);
  if (x.dtype() != DType::kBool) throw ctx.Fail(ErrorCode::kTypeMismatch, "input must be bool");
  Tensor& out = ctx.out(0, DType::kBool, x.shape());
  for (int64_t i = 0; i < x.numel(); ++i) out.mutable_data<uint8_t>()[i] = !x.data<uint8_t>()[i];
}

void BitwiseAnd(OpContext& ctx) {
  IntegerBinary(ctx, [](auto a, auto b) { return decltype(a)(a & b); });
}
void BitwiseOr(OpContext& ctx) {
  IntegerBinary(ctx, [](auto a, auto b) { return decltype(a)(a | b); });
}
void BitwiseXor(OpContext& ctx) {
  IntegerBinary(ctx, [](auto a, auto b) { return decltype(a)(a ^ b); });
}
void BitwiseNot(OpContext& ctx) {
  const Tensor& x = ctx.in(0);
  Tensor& out = ctx.out(0, x.dtype(), x.shape());
  DispatchNumeric(x.dtype(), [&]<class T>() {
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      for (int64_t i = 0; i < x.numel(); ++i) out.mutable_data<T>()[i] = T(~x.data<T>()[i]);
    } else {
      throw ctx.Fail(ErrorCode::kTypeMismatch, "input must be an integer");
    }
  });
}

// Shifts by counts >= the width give 0 (decision; C++ leaves them undefined).
void BitShift(OpContext& ctx) {
  const bool left = ctx.attr_s("direction", "") == "LEFT";
  if (!left && ctx.attr_s("direction", "") != "RIGHT")
    throw ctx.Fail(ErrorCode::kInvalidModel, "direction must be LEFT or RIGHT");
  IntegerBinary(ctx, [left](auto a, auto b) {
    using T = decltype(a);
    using U = std::make_unsigned_t<T>;
    const U ub = U(b);
    if (ub >= sizeof(T) * 8) return T(0);
    return left ? T(U(U(a) << ub)) : T(U(U(a) >> ub));
  });
}

// Integer Mod: fmod=0 takes the divisor's sign (Python), fmod=1 the dividend's (C).
// x mod 0 is 0 (decision). Floating-point Mod (fmod=1) is an exact fmod (ops/math/fmod.cpp).
void Mod(OpContext& ctx) {
  const bool cfmod = ctx.attr_i("fmod", 0) != 0;
  const DType t = ctx.in(0).dtype();
  if (t == DType::kFloat || t == DType::kDouble || t == DType::kFloat16 || t == DType::kBFloat16) {
    if (!cfmod) throw ctx.Fail(ErrorCode::kInvalidModel, "floating-point Mod requires fmod=1");
    ModFloat(ctx);
    return;
  }
  IntegerBinary(ctx, [cfmod](auto a, auto b) {
    using T = decltype(a);
    if (b == 0) return T(0);
    if constexpr (std::is_signed_v<T>) {
      if (b == T(-1)) return T(0);
      T r = T(a % b);
      if (!cfmod && r != 0 && ((r < 0) != (b < 0))) r = T(r + b);
      return r;
    } else {
      return T(a % b);
    }
  });
}

void Abs(OpContext& ctx) {
  Unary(ctx, [](auto v) { return AbsOf(v); });
}
void Neg(OpContext& ctx) {
  Unary(ctx, [](auto v) { return NegOf(v); });
}
void Relu(OpContext& ctx) {
  if (UnaryFastF32(ctx, kUnReluF32)) return;
  Unary(ctx, [](auto v) -> decltype(v) {
    using C = decltype(v);
    if constexpr (std::is_floating_point_v<C>) {
      if (v != v) return v;
    }
    return v > C(0) ? v : C(0);
  });
}
void Sqrt(OpContext& ctx) {
  Unary(
      ctx,
      [](auto v) -> decltype(v) {
        if constexpr (std::is_same_v<decltype(v), float>)
          return __builtin_sqrtf(v);
        else
          return __builtin_sqrt(double(v));
      },
      false);
}
void Reciprocal(OpContext& ctx) {
  Unary(
      ctx, [](auto v) { return decltype(v)(1) / v; }, false);
}
void Floor(OpContext& ctx) {
  Unary(
      ctx, [](auto v) { return FloorOf(v); }, false);
}
void Ceil(OpContext& ctx) {
  Unary(
      ctx, [](auto v) { return CeilOf(v); }, false);
}
void Round(OpContext& ctx) {
  Unary(
      ctx,
      [](auto v) -> decltype(v) {
        if constexpr (std::is_same_v<decltype(v), float>)
          return RoundEvenF(v);
        else
          return RoundEvenD(v);
      },
      false);
}
// Sign of +-0 is the zero itself, of NaN is NaN (decisions).
void Sign(OpContext& ctx) {
  Unary(ctx, [](auto v) -> decltype(v) {
    using C = decltype(v);
    if (v > C(0)) return C(1);
    if constexpr (std::is_signed_v<C> || std::is_floating_point_v<C>) {
      if (v < C(0)) return C(-1);
    }
    return v;
  });
}
void IsNaN(OpContext& ctx) {
  const Tensor& x = ctx.in(0);
  Tensor& out = ctx.out(0, DType::kBool, x.shape());
  DispatchNumeric(x.dtype(), [&]<class T>() {
    if constexpr (kIsFloat<T>) {
      for (int64_t i = 0; i < x.numel(); ++i) {
        const auto v = Widen(x.data<T>()[i]);
        out.mutable_data<uint8_t>()[i] = v != v;
      }
    } else {
      throw ctx.Fail(ErrorCode::kTypeMismatch, "input must be floating point");
    }
  });
}
void IsInf(OpContext& ctx) {
  const Tensor& x = ctx.in(0);
  const bool pos = ctx.attr_i("detect_positive", 1) != 0, neg = ctx.attr_i("detect_negative", 1) != 0;
  Tensor& out = ctx.out(0, DType::kBool, x.shape());
  DispatchNumeric(x.dtype(), [&]<class T>() {
    if constexpr (kIsFloat<T>) {
      for (int64_t i = 0; i < x.numel(); ++i) {
        const double v = double(Widen(x.data<T>()[i]));
        const double inf = std::numeric_limits<double>::infinity();
        out.mutable_data<uint8_t>()[i] = (pos && v == inf) || (neg && v == -inf);
      }
    } else {
      throw ctx.Fail(ErrorCode::kTypeMismatch, "input must be floating point");
    }
  });
}
void LeakyRelu(OpContext& ctx) {
  const float alpha = ctx.attr_f("alpha", 0.01f);
  if (UnaryFastF32(ctx, kUnLeakyReluF32, alpha)) return;
  Unary(
      ctx,
      [alpha](auto v) -> decltype(v) {
        using C = decltype(v);
        return v < C(0) ? C(alpha) * v : v;
      },
      false);
}
void ThresholdedRelu(OpContext& ctx) {
  const float alpha = ctx.attr_f("alpha", 1.0f);
  if (UnaryFastF32(ctx, kUnThresholdedReluF32, alpha)) return;
  Unary(
      ctx,
      [alpha](auto v) -> decltype(v) {
        using C = decltype(v);
        return v > C(alpha) ? v : C(0);
      },
      false);
}
void HardSigmoid(OpContext& ctx) {
  const float alpha = ctx.attr_f("alpha", 0.2f), beta = ctx.attr_f("beta", 0.5f);
  if (UnaryFastF32(ctx, kUnHardSigmoidF32, alpha, beta)) return;
  Unary(
      ctx,
      [=](auto v) -> decltype(v) {
        using C = decltype(v);
        const C y = C(alpha) * v + C(beta);  // two roundings: no contraction
        if (y != y) return y;
        return y < C(0) ? C(0) : y > C(1) ? C(1) : y;
      },
      false);
}
void HardSwish(OpContext& ctx) {
  if (UnaryFastF32(ctx, kUnHardSwishF32)) return;
  Unary(
      ctx,
      [](auto v) -> decltype(v) {
        using C = decltype(v);
        const C y = C(1.0f / 6.0f) * v + C(0.5f);
        if (y != y) return y;
        return v * (y < C(0) ? C(0) : y > C(1) ? C(1) : y);
      },
      false);
}
void PRelu(OpContext& ctx) {
  const Tensor& x = ctx.in(0);
  const Tensor& slope = ctx.in(1);
  CheckSameType(ctx, x, slope);
  const Shape shape = BroadcastShapes(ctx, {x.shape(), slope.shape()});
  if (shape != x.shape()) throw ctx.Fail(ErrorCode::kShapeMismatch, "slope must broadcast to the input's shape");
  Tensor& out = ctx.out(0, x.dtype(), shape);
  const auto is = BroadcastIndex(slope.shape(), shape);
  DispatchNumeric(x.dtype(), [&]<class T>() {
    if constexpr (std::is_same_v<T, bool>) {
      throw ctx.Fail(ErrorCode::kTypeMismatch, "bool input is not supported");
    } else {
      for (size_t i = 0; i < is.size(); ++i) {
        const auto v = Widen(x.data<T>()[i]);
        using C = decltype(v);
        const C s = Widen(slope.data<T>()[is[i]]);
        if constexpr (std::is_integral_v<C>)
          out.mutable_data<T>()[i] = Narrow<T>(v < C(0) ? WrapMul(s, v) : v);  // integers wrap, as Mul's
        else
          out.mutable_data<T>()[i] = Narrow<T>(v < C(0) ? s * v : v);
      }
    }
  });
}
void Clip(OpContext& ctx) {
  for (size_t k = 1; k <= 2 && k < ctx.num_inputs(); ++k) {
    if (ctx.has_input(k)) ctx.RequireInputType(ctx.in(k), ctx.in(0).dtype(), "min and max");
  }
  const Tensor& x = ctx.in(0);
  if (x.dtype() == DType::kFloat) {
    // The float path (UnaryF32's Clip is the loop below): bounds first, no zero-filled
    // output made in vain.
    float lo = -std::numeric_limits<float>::infinity(), hi = std::numeric_limits<float>::infinity();
    if (ctx.opset < 11) {
      lo = ctx.attr_f("min", lo);
      hi = ctx.attr_f("max", hi);
    } else {
      if (ctx.has_input(1) && ctx.in(1).numel()) lo = ctx.in(1).data<float>()[0];
      if (ctx.has_input(2) && ctx.in(2).numel()) hi = ctx.in(2).data<float>()[0];
    }
    if (UnaryFastF32(ctx, kUnClipF32, lo, hi)) return;
  }
  Tensor& out = ctx.out(0, x.dtype(), x.shape());
  DispatchNumeric(x.dtype(), [&]<class T>() {
    if constexpr (std::is_same_v<T, bool>) {
      throw ctx.Fail(ErrorCode::kTypeMismatch, "bool input is not supported");
    } else {
      using C = typename Compute<T>::type;
      C lo = std::numeric_limits<C>::lowest(), hi = std::numeric_limits<C>::max();
      if constexpr (std::is_floating_point_v<C>) {
        lo = -std::numeric_limits<C>::infinity();
        hi = -lo;
      }
      if (ctx.opset < 11) {
        lo = C(ctx.attr_f("min", float(lo)));
        hi = C(ctx.attr_f("max", float(hi)));
      } else {
        if (ctx.has_input(1) && ctx.in(1).numel()) lo = Widen(ctx.in(1).template data<T>()[0]);
        if (ctx.has_input(2) && ctx.in(2).numel()) hi = Widen(ctx.in(2).template data<T>()[0]);
      }

      for (int64_t i = 0; i < x.numel(); ++i) {
        C v = Widen(x.data<T>()[i]);
        if (v < lo) v = lo;
        if (v > hi) v = hi;
        out.mutable_data<T>()[i] = Narrow<T>(v);
      }
    }
  });
}

namespace {

// Rows of the output's last axis, each input read with its strides in the output's index
// space (0 along broadcast axes); elements copied as their storage bytes.
void WhereRows(OpContext& ctx, const WhereParams& p) {
  const Tensor &c = *p.c, &a = *p.a, &b = *p.b;
  const Shape& shape = *p.shape;
  const size_t es = p.es;
  {
    Tensor& out = ctx.out_uninit(0, a.dtype(), shape);  // every element is written
    const int64_t R = int64_t(shape.size()), n = out.numel();
    if (n == 0) return;
    auto strides = [&](const Shape& in) {
      std::vector<int64_t> st(size_t(R), 0);
      int64_t acc = 1;
      for (int64_t k = int64_t(in.size()) - 1, o = R - 1; k >= 0; --k, --o) {
        if (in[size_t(k)] != 1) st[size_t(o)] = acc;
        acc *= in[size_t(k)];
      }
      return st;
    };
    const auto stc = strides(c.shape()), sta = strides(a.shape()), stb = strides(b.shape());
    const int64_t inner = R ? shape[size_t(R - 1)] : 1, rows = n / inner;
    const int64_t jc = R ? stc[size_t(R - 1)] : 0, ja = R ? sta[size_t(R - 1)] : 0, jb = R ? stb[size_t(R - 1)] : 0;
    const uint8_t* cp = c.data<uint8_t>();
    auto run = [&]<class E>() {
      const E* ap = static_cast<const E*>(a.raw());
      const E* bp = static_cast<const E*>(b.raw());
      E* op = out.mutable_data<E>();
      ParallelFor(ctx, rows, std::max<int64_t>(1, 16384 / inner), [&](int64_t r0, int64_t r1) {
        for (int64_t row = r0; row < r1; ++row) {
          int64_t oc = 0, oa = 0, ob = 0, rest = row;
          for (int64_t k = R - 2; k >= 0; --k) {
            const int64_t ix = rest % shape[size_t(k)];
            rest /= shape[size_t(k)];
            oc += ix * stc[size_t(k)];
            oa += ix * sta[size_t(k)];
            ob += ix * stb[size_t(k)];
          }
          E* o = op + row * inner;
          for (int64_t j = 0; j < inner; ++j) o[j] = cp[oc + j * jc] ? ap[oa + j * ja] : bp[ob + j * jb];
        }
      });
    };
    struct B16 {
      uint8_t b[16];
    };  // complex128
    if (es == 1)
      run.template operator()<uint8_t>();
    else if (es == 2)
      run.template operator()<uint16_t>();
    else if (es == 4)
      run.template operator()<uint32_t>();
    else if (es == 8)
      run.template operator()<uint64_t>();
    else
      run.template operator()<B16>();
  }
}

// The definition (ref::Where): element by element through the broadcast index tables.
void WhereReference(OpContext& ctx, const WhereParams& p) {
  Tensor& out = ctx.out(0, p.a->dtype(), *p.shape);
  ref::Where(*p.c, *p.a, *p.b, out);
}

bool WhereRowsFit(const WhereParams& p) { return p.es == 1 || p.es == 2 || p.es == 4 || p.es == 8 || p.es == 16; }

constexpr const char* kWhereOps[] = {"Where"};
constexpr AlgorithmRow<WhereParams, WhereRun> kWhereRows[] = {
    {"reference", Exactness::kExact, "", nullptr, nullptr, WhereReference},
    {"rows", Exactness::kExact, "", WhereRowsFit, nullptr, WhereRows},
};

}  // namespace

const FamilyTable<WhereParams, WhereRun>& WhereTable() {
  static constexpr FamilyTable<WhereParams, WhereRun> kTable{"where", kWhereOps, kWhereRows};
  return kTable;
}

void Where(OpContext& ctx) {
  const Tensor& c = ctx.in(0);
  const Tensor& a = ctx.in(1);
  const Tensor& b = ctx.in(2);
  if (c.dtype() != DType::kBool) throw ctx.Fail(ErrorCode::kTypeMismatch, "condition must be bool");
  CheckSameType(ctx, a, b);
  const Shape shape = BroadcastShapes(ctx, {c.shape(), a.shape(), b.shape()});
  const WhereParams p{&c, &a, &b, &shape, a.dtype() == DType::kString ? 0 : DTypeStorageSize(a.dtype())};
  PlanRow(ctx, WhereTable(), p).run(ctx, p);
}

void Identity(OpContext& ctx) {
  if (!ctx.has_input(0)) throw ctx.Fail(ErrorCode::kMissingInput, "input 0 is required");
  ctx.outputs[0] = *ctx.inputs[0];
}

}  // namespace ops
}  // namespace onemodel::impl
