// Reference BitCast, window functions, floating-point Mod (an exact fmod), CenterCropPad,
// Unique, Einsum and Det.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>

#include "ref/math.h"
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

void Window(OpContext& ctx, int kind) {
  const int64_t n = ReadInts(ctx, ctx.in(0))[0];
  if (n < 0) throw ctx.Fail(ErrorCode::kInvalidArgument, "size must be >= 0");
  const bool periodic = ctx.attr_i("periodic", 1) != 0;
  const DType dt = DType(ctx.attr_i("output_datatype", int64_t(DType::kFloat)));
  Tensor& y = ctx.out(0, dt, {n});
  const float N = float(periodic ? n : n - 1);
  for (int64_t i = 0; i < n; ++i) {
    const float a = N == 0.0f ? 0.0f : (6.28318530717958647692f * float(i)) / N;
    float v;
    if (kind == 0)
      v = 0.5f - 0.5f * math::Cos(a);  // Hann
    else if (kind == 1)
      v = (25.0f / 46.0f) - (21.0f / 46.0f) * math::Cos(a);  // Hamming
    else
      v = (0.42f - 0.5f * math::Cos(a)) + 0.08f * math::Cos(a + a);  // Blackman
    const bool ok =
        DispatchNumeric(dt, [&]<class T>() { y.mutable_data<T>()[i] = Narrow<T>(typename Compute<T>::type(v)); });
    if (!ok) throw ctx.Fail(ErrorCode::kTypeMismatch, "unsupported output type");
  }
}

}  // namespace

void BitCast(OpContext& ctx) {
  const Tensor& x = ctx.in(0);
  const DType to = DType(ctx.attr_i("to", 0));
  if (!IsKnownDType(int32_t(to)) || to == DType::kString || x.dtype() == DType::kString) {
    throw ctx.Fail(ErrorCode::kTypeMismatch, "BitCast needs non-string types");
  }
  if (DTypeBits(to) != DTypeBits(x.dtype())) {
    throw ctx.Fail(ErrorCode::kTypeMismatch,
                   "BitCast needs types of the same width (" + DTypeName(x.dtype()) + " -> " + DTypeName(to) + ")");
  }
  Tensor& y = ctx.out(0, to, x.shape());
  if (x.nbytes()) std::memcpy(y.mutable_data<uint8_t>(), x.raw(), x.nbytes());
  if (to == DType::kBool)
    for (int64_t i = 0; i < y.numel(); ++i) y.mutable_data<uint8_t>()[i] = y.mutable_data<uint8_t>()[i] != 0;
}

void HannWindow(OpContext& ctx) { Window(ctx, 0); }
void HammingWindow(OpContext& ctx) { Window(ctx, 1); }
void BlackmanWindow(OpContext& ctx) { Window(ctx, 2); }

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

void CenterCropPad(OpContext& ctx) {
  const Tensor& x = ctx.in(0);
  const auto want = ReadInts(ctx, ctx.in(1));
  std::vector<int64_t> axes = ctx.attr_ints("axes");
  if (axes.empty())
    for (int64_t k = 0; k < x.rank(); ++k) axes.push_back(k);
  if (axes.size() != want.size()) throw ctx.Fail(ErrorCode::kShapeMismatch, "shape must have one value per axis");
  Shape s = x.shape();
  std::vector<int64_t> off(static_cast<size_t>(x.rank()), 0);  // out index + off = in index
  for (size_t i = 0; i < axes.size(); ++i) {
    const int64_t a = NormAxis(ctx, axes[i], x.rank());
    const int64_t in = x.shape()[size_t(a)], o = want[i];
    s[size_t(a)] = o;
    off[size_t(a)] = in >= o ? (in - o) / 2 : -((o - in) / 2);
  }
  Tensor& y = ctx.out(0, x.dtype(), s);
  std::vector<int64_t> st(static_cast<size_t>(x.rank()), 1);
  for (int64_t k = x.rank() - 1; k > 0; --k) st[size_t(k - 1)] = st[size_t(k)] * x.shape()[size_t(k)];
  std::vector<int64_t> pos(static_cast<size_t>(x.rank()), 0);
  for (int64_t o = 0; o < y.numel(); ++o) {
    int64_t src = 0;
    bool inside = true;
    for (int64_t k = 0; k < x.rank(); ++k) {
      const int64_t p = pos[size_t(k)] + off[size_t(k)];
      if (p < 0 || p >= x.shape()[size_t(k)]) {
        inside = false;
        break;
      }
      src += p * st[size_t(k)];
    }
    if (inside) CopyElement(x, src, y, o);
    for (int64_t k = x.rank() - 1; k >= 0; --k) {
      if (++pos[size_t(k)] < s[size_t(k)]) break;
      pos[size_t(k)] = 0;
    }
  }
}

void Unique(OpContext& ctx) {
  const Tensor& x = ctx.in(0);
  const bool sorted = ctx.attr_i("sorted", 1) != 0;
  const bool has_axis = ctx.has_attr("axis");
  // Slices: the whole flattened tensor's elements, or the slices along `axis`.
  int64_t axis = 0, outer = 1, n = x.numel(), inner = 1;
  if (has_axis) {
    axis = NormAxis(ctx, ctx.attr_i("axis", 0), x.rank());
    n = x.shape()[size_t(axis)];
    for (int64_t k = 0; k < axis; ++k) outer *= x.shape()[size_t(k)];
    for (int64_t k = axis + 1; k < x.rank(); ++k) inner *= x.shape()[size_t(k)];
  }
  std::vector<std::vector<double>> key(static_cast<size_t>(n));
  std::vector<std::vector<std::string>> skey(static_cast<size_t>(n));
  const bool str = x.dtype() == DType::kString;
  for (int64_t i = 0; i < n; ++i)
    for (int64_t b = 0; b < outer; ++b)
      for (int64_t j = 0; j < inner; ++j) {
        const int64_t idx = has_axis ? (b * n + i) * inner + j : i;
        if (str)
          skey[size_t(i)].push_back(x.strings()[size_t(idx)]);
        else
          DispatchNumeric(x.dtype(), [&]<class T>() { key[size_t(i)].push_back(double(Widen(x.data<T>()[idx]))); });
      }
  auto less = [&](int64_t a, int64_t b) {
    return str ? skey[size_t(a)] < skey[size_t(b)] : key[size_t(a)] < key[size_t(b)];
  };
  auto same = [&](int64_t a, int64_t b) {
    return str ? skey[size_t(a)] == skey[size_t(b)] : key[size_t(a)] == key[size_t(b)];
  };
  std::vector<int64_t> first;  // first occurrence of each distinct slice
  std::vector<int64_t> inverse(static_cast<size_t>(n)), counts;
  for (int64_t i = 0; i < n; ++i) {
    int64_t u = -1;
    for (size_t k = 0; k < first.size(); ++k)
      if (same(first[k], i)) {
        u = int64_t(k);
        break;
      }
    if (u < 0) {
      u = int64_t(first.size());
      first.push_back(i);
      counts.push_back(0);
    }
    inverse[size_t(i)] = u;
    counts[size_t(u)]++;
  }
  std::vector<int64_t> order(first.size());
  for (size_t k = 0; k < order.size(); ++k) order[k] = int64_t(k);
  if (sorted)
    std::stable_sort(order.begin(), order.end(),
                     [&](int64_t a, int64_t b) { return less(first[size_t(a)], first[size_t(b)]); });
  std::vector<int64_t> rank(order.size());
  for (size_t k = 0; k < order.size(); ++k) rank[size_t(order[k])] = int64_t(k);
  const int64_t u = int64_t(order.size());
  Shape ys = has_axis ? x.shape() : Shape{u};
  if (has_axis) ys[size_t(axis)] = u;
  Tensor& y = ctx.out(0, x.dtype(), ys);
  for (int64_t k = 0; k < u; ++k) {
    const int64_t src_slice = first[size_t(order[size_t(k)])];
    for (int64_t b = 0; b < outer; ++b)
      for (int64_t j = 0; j < inner; ++j) {
        if (has_axis)
          CopyElement(x, (b * n + src_slice) * inner + j, y, (b * u + k) * inner + j);
        else
          CopyElement(x, src_slice, y, k);
      }
  }
  if (ctx.wants_output(1)) {
    Tensor& t = ctx.out(1, DType::kInt64, {u});
    for (int64_t k = 0; k < u; ++k) t.mutable_data<int64_t>()[k] = first[size_t(order[size_t(k)])];
  }
  if (ctx.wants_output(2)) {
    Tensor& t = ctx.out(2, DType::kInt64, {n});
    for (int64_t i = 0; i < n; ++i) t.mutable_data<int64_t>()[i] = rank[size_t(inverse[size_t(i)])];
  }
  if (ctx.wants_output(3)) {
    Tensor& t = ctx.out(3, DType::kInt64, {u});
    for (int64_t k = 0; k < u; ++k) t.mutable_data<int64_t>()[k] = counts[size_t(order[size_t(k)])];
  }
}

// Einsum: each output element sums, over the contracted letters (in order of first
// appearance, row-major), the product of the operands' elements, one accumulator from
// -0.0 left to right; products multiply operands left to right.
// An Einsum equation resolved against its inputs: each input's term (ellipses replaced by
// upper-case letters for the broadcast dimensions), the output's letters, the contracted
// letters (in order of first appearance) and every letter's size.
namespace {

struct EinsumSpec {
  std::vector<std::string> terms;
  std::string out, contracted;
  std::map<char, int64_t> dim;
};

EinsumSpec ParseEinsum(const OpContext& ctx) {
  EinsumSpec sp;
  std::vector<std::string>& terms = sp.terms;
  std::map<char, int64_t>& dim = sp.dim;
  std::string& out = sp.out;
  std::string& contracted = sp.contracted;
  std::string eq = ctx.attr_s("equation", "");
  eq.erase(std::remove(eq.begin(), eq.end(), ' '), eq.end());
  const size_t arrow = eq.find("->");
  std::string lhs = eq.substr(0, arrow);
  for (size_t st = 0;;) {
    const size_t c = lhs.find(',', st);
    terms.push_back(lhs.substr(st, c == std::string::npos ? std::string::npos : c - st));
    if (c == std::string::npos) break;
    st = c + 1;
  }
  if (terms.size() != ctx.num_inputs()) throw ctx.Fail(ErrorCode::kInvalidModel, "equation and inputs disagree");
  // Ellipsis: replace by upper-case letters standing for the broadcast dimensions.
  int64_t ell = 0;
  for (size_t t = 0; t < terms.size(); ++t) {
    const size_t p = terms[t].find("...");
    if (p != std::string::npos) ell = std::max<int64_t>(ell, ctx.in(t).rank() - int64_t(terms[t].size() - 3));
  }
  std::string ell_letters;
  for (int64_t k = 0; k < ell; ++k) ell_letters += char('A' + k);
  for (size_t t = 0; t < terms.size(); ++t) {
    const size_t p = terms[t].find("...");
    if (p == std::string::npos) continue;
    const int64_t here = ctx.in(t).rank() - int64_t(terms[t].size() - 3);
    terms[t] = terms[t].substr(0, p) + ell_letters.substr(size_t(ell - here)) + terms[t].substr(p + 3);
  }
  std::string letters;
  for (size_t t = 0; t < terms.size(); ++t) {
    const Tensor& x = ctx.in(t);
    if (int64_t(terms[t].size()) != x.rank())
      throw ctx.Fail(ErrorCode::kShapeMismatch, "term '" + terms[t] + "' does not match input rank");
    for (size_t k = 0; k < terms[t].size(); ++k) {
      const char c = terms[t][k];
      const int64_t d = x.shape()[k];
      if (!dim.count(c)) {
        dim[c] = d;
        letters += c;
      } else if (dim[c] != d) {
        if (dim[c] == 1)
          dim[c] = d;
        else if (d != 1)
          throw ctx.Fail(ErrorCode::kShapeMismatch, std::string("dimension of '") + c + "' differs");
      }
    }
  }
  if (arrow != std::string::npos) {
    out = eq.substr(arrow + 2);
    const size_t p = out.find("...");
    if (p != std::string::npos) out = out.substr(0, p) + ell_letters + out.substr(p + 3);
  } else {
    out = ell_letters;
    std::string once;
    for (char c : letters) {
      if (c >= 'A' && c <= 'Z') continue;
      int cnt = 0;
      for (const auto& t : terms) cnt += int(std::count(t.begin(), t.end(), c));
      if (cnt == 1) once += c;
    }
    std::sort(once.begin(), once.end());
    out += once;
  }
  for (char c : letters)
    if (out.find(c) == std::string::npos) contracted += c;
  return sp;
}

}  // namespace

void Einsum(OpContext& ctx) {
  EinsumSpec sp = ParseEinsum(ctx);
  const std::vector<std::string>& terms = sp.terms;
  std::map<char, int64_t>& dim = sp.dim;
  const std::string& out = sp.out;
  const std::string& contracted = sp.contracted;
  Shape os;
  for (char c : out) os.push_back(dim[c]);
  const Tensor& x0 = ctx.in(0);
  Tensor& y = ctx.out(0, x0.dtype(), os);
  std::vector<std::vector<double>> vals(ctx.num_inputs());
  for (size_t t = 0; t < ctx.num_inputs(); ++t) {
    const Tensor& x = ctx.in(t);
    vals[t].resize(static_cast<size_t>(x.numel()));
    DispatchNumeric(x.dtype(), [&]<class T>() {
      for (int64_t i = 0; i < x.numel(); ++i) vals[t][size_t(i)] = double(Widen(x.data<T>()[i]));
    });
  }
  std::map<char, int64_t> at;
  auto offset = [&](size_t t) {
    const Tensor& x = ctx.in(t);
    int64_t off = 0;
    for (size_t k = 0; k < terms[t].size(); ++k) off = off * x.shape()[k] + (x.shape()[k] == 1 ? 0 : at[terms[t][k]]);
    return off;
  };
  int64_t csize = 1;
  for (char c : contracted) csize *= dim[c];
  const bool is_float = IsFloatDType(x0.dtype());
  for (int64_t o = 0; o < y.numel(); ++o) {
    int64_t rem = o;
    for (size_t k = out.size(); k-- > 0;) {
      at[out[k]] = rem % dim[out[k]];
      rem /= dim[out[k]];
    }
    float facc = -0.0f;
    double dacc = -0.0;
    int64_t iacc = 0;
    for (int64_t ci = 0; ci < csize; ++ci) {
      int64_t r2 = ci;
      for (size_t k = contracted.size(); k-- > 0;) {
        at[contracted[k]] = r2 % dim[contracted[k]];
        r2 /= dim[contracted[k]];
      }
      if (x0.dtype() == DType::kDouble) {
        double p = vals[0][size_t(offset(0))];
        for (size_t t = 1; t < terms.size(); ++t) p = p * vals[t][size_t(offset(t))];
        dacc = dacc + p;
      } else if (is_float) {
        float p = float(vals[0][size_t(offset(0))]);
        for (size_t t = 1; t < terms.size(); ++t) p = p * float(vals[t][size_t(offset(t))]);
        facc = facc + p;
      } else {
        int64_t p = int64_t(vals[0][size_t(offset(0))]);
        for (size_t t = 1; t < terms.size(); ++t)
          p = int64_t(uint64_t(p) * uint64_t(int64_t(vals[t][size_t(offset(t))])));
        iacc = int64_t(uint64_t(iacc) + uint64_t(p));
      }
    }
    DispatchNumeric(x0.dtype(), [&]<class T>() {
      using C = typename Compute<T>::type;
      if constexpr (std::is_same_v<C, double>)
        y.mutable_data<T>()[o] = dacc;
      else if constexpr (std::is_floating_point_v<C>)
        y.mutable_data<T>()[o] = Narrow<T>(C(facc));
      else
        y.mutable_data<T>()[o] = T(iacc);
    });
  }
}

// Det: Gaussian elimination with partial pivoting (first largest |pivot|) in binary64,
// rounded once to the output type.
void Det(OpContext& ctx) {
  const Tensor& x = ctx.in(0);
  if (x.rank() < 2 || x.shape()[size_t(x.rank() - 1)] != x.shape()[size_t(x.rank() - 2)]) {
    throw ctx.Fail(ErrorCode::kShapeMismatch, "input must be [..., M, M]");
  }
  if (!IsFloatDType(x.dtype())) throw ctx.Fail(ErrorCode::kTypeMismatch, "the input must be a float type");
  const int64_t m = x.shape().back();
  Shape s(x.shape().begin(), x.shape().end() - 2);
  Tensor& y = ctx.out(0, x.dtype(), s);
  std::vector<double> a(static_cast<size_t>(m * m));
  for (int64_t b = 0; b < y.numel(); ++b) {
    DispatchNumeric(x.dtype(), [&]<class T>() {
      for (int64_t i = 0; i < m * m; ++i) a[size_t(i)] = double(Widen(x.data<T>()[b * m * m + i]));
    });
    double det = 1.0;
    for (int64_t c = 0; c < m; ++c) {
      int64_t p = c;
      for (int64_t r = c + 1; r < m; ++r)
        if (std::fabs(a[size_t(r * m + c)]) > std::fabs(a[size_t(p * m + c)])) p = r;
      if (a[size_t(p * m + c)] == 0.0) {
        det = 0.0;
        break;
      }
      if (p != c) {
        for (int64_t k = 0; k < m; ++k) std::swap(a[size_t(p * m + k)], a[size_t(c * m + k)]);
        det = -det;
      }
      det = det * a[size_t(c * m + c)];
      for (int64_t r = c + 1; r < m; ++r) {
        const double f = a[size_t(r * m + c)] / a[size_t(c * m + c)];
        for (int64_t k = c; k < m; ++k) a[size_t(r * m + k)] = a[size_t(r * m + k)] - f * a[size_t(c * m + k)];
      }
    }
    DispatchNumeric(x.dtype(), [&]<class T>() { y.mutable_data<T>()[b] = Narrow<T>(typename Compute<T>::type(det)); });
  }
}

// TensorScatter: writes `update` into a copy of `past_cache` along `axis`, at per-batch
// offsets write_indices (0 by default), wrapping around in circular mode.
void TensorScatter(OpContext& ctx) {
  const Tensor& cache = ctx.in(0);
  const Tensor& upd = ctx.in(1);
  const std::string mode = ctx.attr_s("mode", "linear");
  if (mode != "linear" && mode != "circular")
    throw ctx.Fail(ErrorCode::kInvalidModel, "mode must be linear or circular");
  const int64_t r = cache.rank();
  const int64_t axis = NormAxis(ctx, ctx.attr_i("axis", -2), r);
  if (axis == 0) throw ctx.Fail(ErrorCode::kInvalidModel, "axis cannot be 0, the batch axis");
  if (upd.rank() != r) throw ctx.Fail(ErrorCode::kShapeMismatch, "update must have the cache's rank");
  if (upd.dtype() != cache.dtype())
    throw ctx.Fail(ErrorCode::kTypeMismatch, "update must have the cache's element type");
  for (int64_t k = 0; k < r; ++k) {
    if (k != axis && upd.shape()[size_t(k)] != cache.shape()[size_t(k)])
      throw ctx.Fail(ErrorCode::kShapeMismatch, "update and cache differ off the axis");
  }
  const int64_t B = cache.shape()[0];
  std::vector<int64_t> wi(static_cast<size_t>(B), 0);
  if (ctx.has_input(2)) wi = ReadInts(ctx, ctx.in(2));
  if (int64_t(wi.size()) != B) throw ctx.Fail(ErrorCode::kShapeMismatch, "write_indices must hold one index per batch");
  Tensor out(cache.dtype(), cache.shape());
  for (int64_t i = 0; i < cache.numel(); ++i) CopyElement(cache, i, out, i);
  const int64_t maxlen = cache.shape()[size_t(axis)], len = upd.shape()[size_t(axis)];
  int64_t outer = 1, inner = 1;
  for (int64_t k = 0; k < axis; ++k) outer *= cache.shape()[size_t(k)];
  for (int64_t k = axis + 1; k < r; ++k) inner *= cache.shape()[size_t(k)];
  const int64_t per_batch = outer / std::max<int64_t>(B, 1);
  for (int64_t o = 0; o < outer; ++o) {
    const int64_t b = per_batch ? o / per_batch : 0;
    for (int64_t s = 0; s < len; ++s) {
      int64_t pos = 0;
      if (__builtin_add_overflow(wi[size_t(b)], s, &pos))
        throw ctx.Fail(ErrorCode::kInvalidArgument, "write index out of range");
      if (mode == "circular" && maxlen > 0) pos = ((pos % maxlen) + maxlen) % maxlen;
      if (pos < 0 || pos >= maxlen) throw ctx.Fail(ErrorCode::kInvalidArgument, "write index out of range");
      for (int64_t j = 0; j < inner; ++j)
        CopyElement(upd, (o * len + s) * inner + j, out, (o * maxlen + pos) * inner + j);
    }
  }
  ctx.set_out(0, out);
}

// MelWeightMatrix, following ONNX's reference in binary64 (log10 and 10^x through the
// project's own binary64 log and exp).
void MelWeightMatrix(OpContext& ctx) {
  auto scalar = [&](size_t i) { return ElementAsDouble(ctx.in(i), 0); };
  const double mels_in = scalar(0), dft_in = scalar(1);
  if (!(mels_in >= 1 && mels_in < 2147483648.0 && dft_in >= 1 && dft_in < 2147483648.0))
    throw ctx.Fail(ErrorCode::kInvalidArgument, "num_mel_bins and dft_length must be in [1, 2^31)");
  const int64_t mels = int64_t(mels_in), dft = int64_t(dft_in);
  const double sr = scalar(2), lo = scalar(3), hi = scalar(4);
  const DType dt = DType(ctx.attr_i("output_datatype", int64_t(DType::kFloat)));
  const int64_t bins = dft / 2 + 1;
  const double ln10 = math::LogD(10.0);
  auto mel = [&](double hz) { return 2595.0 * (math::LogD(1.0 + hz / 700.0) / ln10); };
  const double lmel = mel(lo), hmel = mel(hi);
  const double step = (hmel - lmel) / double(mels + 2);
  std::vector<int64_t> fb(static_cast<size_t>(mels + 2));
  for (int64_t i = 0; i < mels + 2; ++i) {
    const double m = double(i) * step + lmel;
    const double hz = 700.0 * (math::ExpD((m / 2595.0) * ln10) - 1.0);
    // The bin, floored; past +-2^62 (or NaN: no bin) it is clamped (the loops below visit
    // only bins inside [0, bins)).
    double q = (double(dft + 1) * hz) / sr;
    q = q != q ? -4.6e18 : std::clamp(q, -4.6e18, 4.6e18);
    fb[size_t(i)] = int64_t(q < 0 ? -double(int64_t(-q)) - (double(int64_t(-q)) != -q ? 1 : 0) : double(int64_t(q)));
  }
  std::vector<double> w(size_t(CheckedNumElements(Shape{bins, mels}, sizeof(double), "MelWeightMatrix")), 0.0);
  for (int64_t i = 0; i < mels; ++i) {
    const int64_t l = fb[size_t(i)], c = fb[size_t(i + 1)], h = fb[size_t(i + 2)];
    if (c == l) {
      if (c >= 0 && c < bins) w[size_t(c * mels + i)] = 1;
    } else
      for (int64_t j = std::max<int64_t>(l, 0); j <= std::min(c, bins - 1); ++j)
        w[size_t(j * mels + i)] = double(j - l) / double(c - l);
    if (h > c)
      for (int64_t j = std::max<int64_t>(c, 0); j < std::min(h, bins); ++j)
        w[size_t(j * mels + i)] = double(h - j) / double(h - c);
  }
  Tensor& y = ctx.out(0, dt, {bins, mels});
  const bool ok = DispatchNumeric(dt, [&]<class T>() {
    for (size_t i = 0; i < w.size(); ++i) y.mutable_data<T>()[i] = Narrow<T>(typename Compute<T>::type(w[i]));
  });
  if (!ok) throw ctx.Fail(ErrorCode::kTypeMismatch, "unsupported output type");
}

}  // namespace ops
}  // namespace onemodel::impl
