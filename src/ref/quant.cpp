// The reference integer and quantisation operators (ref/quant.h).
#include "ref/quant.h"

#include <algorithm>

#include "core/index.h"
#include "core/minifloat.h"
#include "ref/math.h"

namespace onemodel::impl {
namespace ref {

namespace {

double Get(const Tensor& t, int64_t i) { return ElementAsDouble(t, i); }

void IntRange(DType t, double* lo, double* hi) {
  switch (t) {
    case DType::kInt8:
      *lo = -128;
      *hi = 127;
      break;
    case DType::kUInt8:
      *lo = 0;
      *hi = 255;
      break;
    case DType::kInt16:
      *lo = -32768;
      *hi = 32767;
      break;
    case DType::kUInt16:
      *lo = 0;
      *hi = 65535;
      break;
    case DType::kInt32:
      *lo = -2147483648.0;
      *hi = 2147483647.0;
      break;
    case DType::kUInt32:
      *lo = 0;
      *hi = 4294967295.0;
      break;
    case DType::kInt4:
      *lo = -8;
      *hi = 7;
      break;
    case DType::kUInt4:
      *lo = 0;
      *hi = 15;
      break;
    case DType::kInt2:
      *lo = -2;
      *hi = 1;
      break;
    case DType::kUInt2:
      *lo = 0;
      *hi = 3;
      break;
    default: *lo = 0; *hi = 0;
  }
}
void PutInt(Tensor& t, int64_t i, int64_t v) {
  switch (DTypeStorageSize(t.dtype())) {
    case 1: t.mutable_data<uint8_t>()[i] = uint8_t(v); break;
    case 2: t.mutable_data<uint16_t>()[i] = uint16_t(v); break;
    default: t.mutable_data<uint32_t>()[i] = uint32_t(v); break;
  }
}
void PutFloat(Tensor& t, int64_t i, float v) {
  switch (t.dtype()) {
    case DType::kFloat: t.mutable_data<float>()[i] = v; break;
    case DType::kFloat16: t.mutable_data<uint16_t>()[i] = F32ToHalf(v); break;
    case DType::kBFloat16: t.mutable_data<uint16_t>()[i] = F32ToBF16(v); break;
    case DType::kDouble: t.mutable_data<double>()[i] = v; break;
    default: break;
  }
}

}  // namespace

bool IsQuantInteger(DType t) {
  switch (t) {
    case DType::kInt8:
    case DType::kUInt8:
    case DType::kInt16:
    case DType::kUInt16:
    case DType::kInt32:
    case DType::kUInt32:
    case DType::kInt4:
    case DType::kUInt4:
    case DType::kInt2:
    case DType::kUInt2: return true;
    default: return false;
  }
}

std::vector<int64_t> QuantParamIndex(const QuantLayout& l) {
  const Shape& x = l.x_shape;
  const int64_t rank = int64_t(x.size()), numel = ProductOf(x);
  std::vector<int64_t> idx(static_cast<size_t>(numel), 0);
  if (l.per_tensor) return idx;
  const int64_t axis = l.axis, block = l.block;
  int64_t inner = 1;
  for (int64_t k = axis + 1; k < rank; ++k) inner *= x[size_t(k)];
  const int64_t dim = x[size_t(axis)];
  if (block <= 0) {
    for (int64_t i = 0; i < numel; ++i) idx[size_t(i)] = (i / inner) % dim;
    return idx;
  }
  // Blocked: the scale has x's shape with the axis divided (rounded up) by block.
  std::vector<int64_t> xs(size_t(rank), 1), ss(size_t(rank), 1);
  for (int64_t k = rank - 1; k > 0; --k) {
    xs[size_t(k - 1)] = xs[size_t(k)] * x[size_t(k)];
    ss[size_t(k - 1)] = ss[size_t(k)] * l.scale_shape[size_t(k)];
  }
  for (int64_t i = 0; i < numel; ++i) {
    int64_t rem = i, off = 0;
    for (int64_t k = 0; k < rank; ++k) {
      int64_t p = rem / xs[size_t(k)];
      rem %= xs[size_t(k)];
      if (k == axis) p /= block;
      off += p * ss[size_t(k)];
    }
    idx[size_t(i)] = off;
  }
  return idx;
}

int64_t SaturateRound(double v, double zp, DType t) {
  double lo, hi;
  IntRange(t, &lo, &hi);
  if (v != v) return int64_t(zp < lo ? lo : zp > hi ? hi : zp);
  double r = math::RoundEvenD(v);
  r = r + zp;
  r = r < lo ? lo : r > hi ? hi : r;
  return int64_t(r);
}

void QuantizeLinear(const QuantizeParams& p, const Tensor& x, const Tensor& scale, const Tensor* zero, Tensor& y) {
  const auto idx = QuantParamIndex(p);
  const MiniFormat* mf = MiniFormatOf(p.out);
  for (int64_t i = 0; i < x.numel(); ++i) {
    const float xv = float(Get(x, i)), sv = float(Get(scale, idx[size_t(i)]));
    const float q = xv / sv;
    if (mf) {
      const float z = zero ? float(Get(*zero, idx[size_t(i)])) : 0.0f;
      y.mutable_data<uint8_t>()[i] = uint8_t(F32ToMini(q + z, *mf, p.saturate));
    } else {
      const double z = zero ? Get(*zero, idx[size_t(i)]) : 0.0;
      PutInt(y, i, SaturateRound(double(math::RoundEven(q)), z, p.out));
    }
  }
}

void DequantizeLinear(const QuantLayout& l, const Tensor& x, const Tensor& scale, const Tensor* zero, Tensor& y) {
  const auto idx = QuantParamIndex(l);
  for (int64_t i = 0; i < x.numel(); ++i) {
    const double z = zero ? Get(*zero, idx[size_t(i)]) : 0.0;
    const float d = IsQuantInteger(x.dtype()) ? float(int64_t(Get(x, i)) - int64_t(z)) : float(Get(x, i) - z);
    PutFloat(y, i, d * float(Get(scale, idx[size_t(i)])));
  }
}

void DynamicQuantizeScale(float mn, float mx, float* scale, uint8_t* zero) {
  const float s = (mx - mn) / 255.0f;
  const float zpf = s == 0.0f ? 0.0f : 0.0f - mn / s;
  *scale = s;
  *zero = uint8_t(SaturateRound(double(math::RoundEven(zpf)), 0.0, DType::kUInt8));
}

void DynamicQuantizeU8(const Tensor& x, float scale, uint8_t zero, uint8_t* y) {
  for (int64_t i = 0; i < x.numel(); ++i) {
    const float q = scale == 0.0f ? 0.0f : float(Get(x, i)) / scale;
    y[i] = uint8_t(SaturateRound(double(math::RoundEven(q)), double(zero), DType::kUInt8));
  }
}

void DynamicQuantizeLinear(const Tensor& x, uint8_t* y, float* scale, uint8_t* zero) {
  float mn = 0.0f, mx = 0.0f;
  for (int64_t i = 0; i < x.numel(); ++i) {
    const float v = float(Get(x, i));
    if (v < mn) mn = v;
    if (v > mx) mx = v;
  }
  DynamicQuantizeScale(mn, mx, scale, zero);
  DynamicQuantizeU8(x, *scale, *zero, y);
}

void MatMulIntegerI32(const MatMulIntegerParams& p, const int64_t* a_batch, const int64_t* b_batch, const Tensor& a,
                      const Tensor& b, const Tensor* a_zero, const Tensor* b_zero, int32_t* y) {
  const int64_t M = p.M, K = p.K, N = p.N;
  std::fill(y, y + size_t(p.batches) * size_t(M * N), 0);
  // Operands minus their zero points, read once. Integer sums modulo 2^32 do not depend
  // on the order of the terms, so the loops run row by row (k outer, n inner).
  auto centred = [](const Tensor& t, const Tensor* zp, int64_t rows, int64_t cols, bool zp_per_row) {
    std::vector<uint32_t> v(static_cast<size_t>(t.numel()));
    std::vector<int64_t> z(static_cast<size_t>(zp_per_row ? rows : cols), 0);
    for (size_t i = 0; i < z.size(); ++i) z[i] = zp ? int64_t(Get(*zp, zp->numel() > 1 ? int64_t(i) : 0)) : 0;
    for (int64_t i = 0; i < t.numel(); ++i) {
      const int64_t r = (i / cols) % rows, c = i % cols;
      v[size_t(i)] = uint32_t(int64_t(Get(t, i)) - z[size_t(zp_per_row ? r : c)]);
    }
    return v;
  };
  const std::vector<uint32_t> av = centred(a, a_zero, M, K, true), bv = centred(b, b_zero, K, N, false);
  for (int64_t bi = 0; bi < p.batches; ++bi) {
    uint32_t* out = reinterpret_cast<uint32_t*>(y) + bi * M * N;
    for (int64_t m = 0; m < M; ++m) {
      const uint32_t* arow = av.data() + a_batch[bi] * M * K + m * K;
      uint32_t* orow = out + m * N;
      for (int64_t k = 0; k < K; ++k) {
        const uint32_t x = arow[k];
        const uint32_t* brow = bv.data() + b_batch[bi] * K * N + k * N;
        for (int64_t n = 0; n < N; ++n) orow[n] += x * brow[n];
      }
    }
  }
}

void QLinearMatMulOutput(const int32_t* acc, int64_t n, const Tensor& a_scale, const Tensor& b_scale,
                         const Tensor& y_scale, const Tensor& y_zero, Tensor& y) {
  const float m = float(float(Get(a_scale, 0)) * float(Get(b_scale, 0))) / float(Get(y_scale, 0));
  for (int64_t i = 0; i < n; ++i)
    PutInt(y, i, SaturateRound(double(acc[i]) * double(m), Get(y_zero, 0), y_zero.dtype()));
}

void ConvIntegerI32(const IntConvParams& p, const Tensor& x, const Tensor& w, const Tensor* w_zero, int32_t* y) {
  const ConvGeometry& g = p.g;
  const int64_t N = p.N, C = p.C, M = p.M, Cg = p.Cg, Mg = p.Mg, in_sp = p.in_sp, out_sp = p.out_sp, k_sp = p.k_sp;
  auto get = [](const Tensor& t, int64_t i) -> int64_t {
    return t.dtype() == DType::kInt8 ? int64_t(t.data<int8_t>()[i]) : int64_t(t.data<uint8_t>()[i]);
  };
  std::fill(y, y + N * M * out_sp, 0);
  // Operands minus their zero points, read once; padding taps are skipped (as padding
  // with the zero point). Sums modulo 2^32 do not depend on the order of the terms.
  const int64_t xz = p.x_zero;
  std::vector<uint32_t> xc(static_cast<size_t>(x.numel())), wc(static_cast<size_t>(w.numel()));
  for (int64_t i = 0; i < x.numel(); ++i) xc[size_t(i)] = uint32_t(get(x, i) - xz);
  for (int64_t i = 0; i < w.numel(); ++i) {
    const int64_t m = i / (Cg * k_sp);
    const int64_t wz = w_zero && w_zero->numel() ? get(*w_zero, w_zero->numel() > 1 ? m : 0) : 0;
    wc[size_t(i)] = uint32_t(get(w, i) - wz);
  }
  if (g.dims <= 2) {  // as Conv's 1-D/2-D loops: a plane of accumulators per output channel
    const ConvPlane pl = MakeConvPlane(g);
    std::vector<uint32_t> plane(static_cast<size_t>(pl.OH * pl.OW));
    for (int64_t n = 0; n < N; ++n)
      for (int64_t m = 0; m < M; ++m) {
        const int64_t grp = m / Mg;
        std::fill(plane.begin(), plane.end(), 0u);
        for (int64_t c = 0; c < Cg; ++c) {
          const uint32_t* xp = xc.data() + (n * C + grp * Cg + c) * in_sp;
          const uint32_t* wp = wc.data() + (m * Cg + c) * k_sp;
          AccumulatePlane<uint32_t>(pl, xp, wp, plane.data());
        }
        for (int64_t o = 0; o < pl.OH * pl.OW; ++o) y[size_t((n * M + m) * out_sp + o)] = int32_t(plane[size_t(o)]);
      }
    return;
  }
  std::vector<int64_t> tap_off, tap_k;
  for (int64_t n = 0; n < N; ++n)
    ForEachIndex(g.out, [&](int64_t o, const std::vector<int64_t>& op) {
      ListTaps(g, op, p.in_st, &tap_off, &tap_k);
      for (int64_t m = 0; m < M; ++m) {
        const int64_t grp = m / Mg;
        uint32_t acc = 0;
        for (int64_t c = 0; c < Cg; ++c) {
          const uint32_t* xp = xc.data() + (n * C + grp * Cg + c) * in_sp;
          const uint32_t* wp = wc.data() + (m * Cg + c) * k_sp;
          for (size_t t = 0; t < tap_off.size(); ++t) acc += xp[tap_off[t]] * wp[tap_k[t]];
        }
        y[size_t((n * M + m) * out_sp + o)] = int32_t(acc);
      }
    });
}

void QLinearConvOutput(const IntConvParams& p, const int32_t* acc, const float* w_scale, int64_t w_scales,
                       const int32_t* bias, Tensor& y) {
  const float xs = p.x_scale, ys = p.y_scale;
  const int64_t yz = p.y_zero, M = p.M, sp = p.out_sp, n = p.N * p.M * p.out_sp;
  const double lo = p.y_signed ? -128 : 0, hi = p.y_signed ? 127 : 255;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t m = (i / sp) % M;
    const float wsv = w_scale[w_scales > 1 ? m : 0];
    const float mult = float(xs * wsv) / ys;
    int64_t a = acc[i];
    if (bias) a = int64_t(int32_t(uint32_t(a) + uint32_t(bias[m])));
    double v = math::RoundEvenD(double(a) * double(mult)) + double(yz);
    v = v < lo ? lo : v > hi ? hi : v;
    if (p.y_signed)
      y.mutable_data<int8_t>()[i] = int8_t(v);
    else
      y.mutable_data<uint8_t>()[i] = uint8_t(v);
  }
}

}  // namespace ref
}  // namespace onemodel::impl
