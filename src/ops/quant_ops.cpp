// Reference quantisation operators. Quantise: q = saturate(round_half_even(x / scale)
// + zero_point), computed in f32 (the division rounds once, the rounding is exact, the
// integer add is exact), then clamped to the target range (float8 targets: converted
// with the saturate attribute). Integer products accumulate exactly in int32 (wrap).
// Requantisation (QLinear*) multiplies the int32 sum by the f32 multiplier
// a_scale * b_scale / y_scale in binary64, then rounds half to even and saturates.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "core/index.h"
#include "core/minifloat.h"
#include "ref/gemm.h"
#include "ref/math.h"
#include "ops/ops.h"
#include "ops/algorithm.h"
#include "ops/quant.h"
#include "ops/parallel.h"
#include "ops/util.h"

namespace onemodel::impl {
namespace ops {
namespace {

double Get(const Tensor& t, int64_t i) { return ElementAsDouble(t, i); }
bool IsIntType(DType t) {
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

// Index into scale / zero point for element i of x: per tensor, per axis or blocked.
std::vector<int64_t> ParamIndex(const OpContext& ctx, const Tensor& x, const Tensor& scale) {
  std::vector<int64_t> idx(static_cast<size_t>(x.numel()), 0);
  if (scale.numel() == 0) throw ctx.Fail(ErrorCode::kShapeMismatch, "the scale is empty");
  if (scale.numel() <= 1 && scale.rank() <= 1) return idx;
  const int64_t axis = NormAxis(ctx, ctx.attr_i("axis", 1), x.rank());
  const int64_t block = ctx.attr_i("block_size", 0);
  int64_t inner = 1;
  for (int64_t k = axis + 1; k < x.rank(); ++k) inner *= x.shape()[size_t(k)];
  const int64_t dim = x.shape()[size_t(axis)];
  if (block <= 0) {
    if (scale.rank() != 1 || scale.shape()[0] != dim)
      throw ctx.Fail(ErrorCode::kShapeMismatch, "per-axis scale must have one value per slice");
    for (int64_t i = 0; i < x.numel(); ++i) idx[size_t(i)] = (i / inner) % dim;
    return idx;
  }
  // Blocked: scale has x's shape with the axis divided (rounded up) by block_size.
  if (scale.rank() != x.rank()) throw ctx.Fail(ErrorCode::kShapeMismatch, "blocked scale must have the input's rank");
  for (int64_t k = 0; k < x.rank(); ++k) {
    const int64_t d = x.shape()[size_t(k)], want = k == axis ? (d + block - 1) / block : d;
    if (scale.shape()[size_t(k)] != want)
      throw ctx.Fail(ErrorCode::kShapeMismatch,
                     "blocked scale must have the input's shape, the axis divided by block_size");
  }
  std::vector<int64_t> xs(size_t(x.rank()), 1), ss(size_t(x.rank()), 1);
  for (int64_t k = x.rank() - 1; k > 0; --k) {
    xs[size_t(k - 1)] = xs[size_t(k)] * x.shape()[size_t(k)];
    ss[size_t(k - 1)] = ss[size_t(k)] * scale.shape()[size_t(k)];
  }
  for (int64_t i = 0; i < x.numel(); ++i) {
    int64_t rem = i, off = 0;
    for (int64_t k = 0; k < x.rank(); ++k) {
      int64_t p = rem / xs[size_t(k)];
      rem %= xs[size_t(k)];
      if (k == axis) p /= block;
      off += p * ss[size_t(k)];
    }
    idx[size_t(i)] = off;
  }
  return idx;
}

bool Is8Bit(const Tensor& t) { return t.dtype() == DType::kUInt8 || t.dtype() == DType::kInt8; }
int32_t Elem8(const Tensor& t, int64_t i) {
  return t.dtype() == DType::kUInt8 ? int32_t(t.data<uint8_t>()[i]) : int32_t(t.data<int8_t>()[i]);
}

// B [K, N] minus its zero point (scalar or per column) as int16 in pairs of k, the layout
// of the integer GEMM kernel (ref/blas.h, GemmI16PairsI32): K2 = ceil(K / 2) rows of 2N.
Tensor PairsB(const Tensor& b, const Tensor* bzp, int64_t K, int64_t N) {
  const int64_t K2 = (K + 1) / 2;
  Tensor t(DType::kInt16, Shape{K2, 2 * N}, "integer GEMM operand");
  int16_t* p = t.mutable_data<int16_t>();
  std::vector<int32_t> z(static_cast<size_t>(N), 0);
  if (bzp)
    for (int64_t n = 0; n < N; ++n) z[size_t(n)] = int32_t(Get(*bzp, bzp->numel() > 1 ? n : 0));
  for (int64_t k = 0; k < K; ++k)
    for (int64_t n = 0; n < N; ++n) p[(k / 2) * 2 * N + 2 * n + k % 2] = int16_t(Elem8(b, k * N + n) - z[size_t(n)]);
  return t;  // an odd K's last row of pairs keeps its zeros
}

// B [K, N] for GemmU8S8I32: b' = b as int8 (int8 B) or b - 128 (uint8 B), in quads of k,
// in panels of kQuadPanel columns: panel p holds columns [48p, 48p + 48) as K4 = ceil(K / 4)
// rows of 4 * 48 bytes (an incomplete last quad, and the last panel's missing columns,
// zeros); after the panels, the N column sums of b' as int32. Zero points are not folded
// in (IntMatMulDot). A panel is contiguous: B's rows at a stride of 4N bytes would fall
// in a few cache sets when 4N is a multiple of 4 KiB.
constexpr int64_t kQuadPanel = 48;
int64_t QuadPanelsBytes(int64_t K, int64_t N) {
  return (N + kQuadPanel - 1) / kQuadPanel * ((K + 3) / 4) * 4 * kQuadPanel;
}
Tensor QuadsB(const Tensor& b, int64_t K, int64_t N) {
  const int64_t K4 = (K + 3) / 4, panels = QuadPanelsBytes(K, N);
  Tensor t(DType::kInt8, Shape{panels + 4 * N}, "integer GEMM operand");
  int8_t* q = t.mutable_data<int8_t>();
  std::fill(q, q + panels, int8_t(0));
  std::vector<uint32_t> sums(static_cast<size_t>(N), 0);
  const int32_t shift = b.dtype() == DType::kUInt8 ? 128 : 0;
  for (int64_t k = 0; k < K; ++k)
    for (int64_t n = 0; n < N; ++n) {
      const int32_t v = Elem8(b, k * N + n) - shift;
      const int64_t p = n / kQuadPanel, c = n % kQuadPanel;
      q[(p * K4 + k / 4) * 4 * kQuadPanel + 4 * c + k % 4] = int8_t(v);
      sums[size_t(n)] += uint32_t(v);
    }
  std::memcpy(q + panels, sums.data(), size_t(N) * sizeof(uint32_t));
  return t;
}

// The [M, K] x [K, N] product on GemmU8S8I32 (8-bit A and 2-D B, as the pairs path).
// With a = a' + ca (a' = a as uint8, or a + 128 for int8 A: ca = -128) and b = b' + cb,
// (a - za)(b - zb) = (a' - Za)(b' - Zb) for Za = za - ca, Zb = zb - cb, and
// sum_k (a' - Za)(b' - Zb) = sum a'b' - Zb sum a' - Za sum b' + K Za Zb: the kernel's
// raw sums, then the row and column sums, all modulo 2^32 (the reference's wrap).
void IntMatMulDot(const OpContext& ctx, const Tensor& a, const Tensor& b, const Tensor* azp, const Tensor* bzp,
                  int64_t M, int64_t K, int64_t N, int32_t* out, size_t b_in) {
  const int64_t K4 = (K + 3) / 4, rows = a.numel() / K;
  const Tensor* bq = ctx.ConstDerived(b_in, "B quads", [&](const Tensor& t) { return QuadsB(t, K, N); });
  Tensor local;
  if (!bq) {
    local = QuadsB(b, K, N);
    bq = &local;
  }
  const int8_t* quads = bq->data<int8_t>();
  const uint8_t* sums_bytes = reinterpret_cast<const uint8_t*>(quads + QuadPanelsBytes(K, N));
  thread_local std::vector<uint32_t> zb_buf, cs_buf, za_buf, ra_buf;
  std::vector<uint32_t>& Zb = zb_buf;
  std::vector<uint32_t>& cs = cs_buf;
  std::vector<uint32_t>& Za = za_buf;
  std::vector<uint32_t>& ra = ra_buf;
  Zb.assign(size_t(N), 0);
  cs.resize(size_t(N));
  std::memcpy(cs.data(), sums_bytes, size_t(N) * sizeof(uint32_t));
  const int32_t cb = b.dtype() == DType::kUInt8 ? 128 : 0, ca = a.dtype() == DType::kInt8 ? -128 : 0;
  for (int64_t n = 0; n < N; ++n) Zb[size_t(n)] = uint32_t(int32_t(bzp ? Get(*bzp, bzp->numel() > 1 ? n : 0) : 0) - cb);
  bool zb_uniform = true;
  for (int64_t n = 1; n < N; ++n) zb_uniform &= Zb[size_t(n)] == Zb[0];
  Za.assign(size_t(M), 0);
  for (int64_t m = 0; m < M; ++m) Za[size_t(m)] = uint32_t(int32_t(azp ? Get(*azp, azp->numel() > 1 ? m : 0) : 0) - ca);
  ra.resize(size_t(rows));
  // A' in place when it is uint8 with whole quads per row; else copied, padded with zeros.
  const bool in_place = a.dtype() == DType::kUInt8 && K % 4 == 0;
  const int64_t lda = in_place ? K : 4 * K4;
  thread_local std::vector<uint8_t> a8_buf;
  std::vector<uint8_t>& a8 = a8_buf;
  if (!in_place && a8.size() < size_t(rows * lda)) a8.resize(size_t(rows * lda));
  const uint8_t* a_raw =
      a.dtype() == DType::kUInt8 ? a.data<uint8_t>() : reinterpret_cast<const uint8_t*>(a.data<int8_t>());
  const uint8_t flip = a.dtype() == DType::kInt8 ? 0x80 : 0;
  const uint8_t* ap = in_place ? a_raw : a8.data();
  auto* kernel = ctx.kernels->GemmU8S8I32;
  ParallelFor(ctx, (rows + 7) / 8, 1, [&](int64_t t0, int64_t t1) {
    const int64_t r0 = t0 * 8, r1 = std::min(rows, t1 * 8);
    for (int64_t r = r0; r < r1; ++r) {
      const uint8_t* src = a_raw + r * K;
      uint32_t s = 0;
      if (in_place) {
        for (int64_t k = 0; k < K; ++k) s += src[k];
      } else {
        uint8_t* dst = a8.data() + r * lda;
        for (int64_t k = 0; k < K; ++k) s += (dst[k] = uint8_t(src[k] ^ flip));
        for (int64_t k = K; k < lda; ++k) dst[k] = 0;
      }
      ra[size_t(r)] = s;
    }
    // Per panel of columns, the kernel's raw sums, then the zero points' terms while the
    // panel's block of C is still in cache.
    for (int64_t n0 = 0; n0 < N; n0 += kQuadPanel) {
      const int64_t n1 = std::min(N, n0 + kQuadPanel);
      kernel(r1 - r0, n1 - n0, K4, ap + r0 * lda, lda, quads + n0 * 4 * K4, 4 * kQuadPanel, out + r0 * N + n0, N);
      for (int64_t r = r0; r < r1; ++r) {
        uint32_t* c = reinterpret_cast<uint32_t*>(out + r * N);
        const uint32_t za = Za[size_t(r % M)], t = uint32_t(K) * za - ra[size_t(r)];
        if (zb_uniform) {  // one zero point for B: the row's term is one number
          const uint32_t rt = t * Zb[0];
          for (int64_t n = n0; n < n1; ++n) c[n] += rt - za * cs[size_t(n)];
        } else {
          for (int64_t n = n0; n < n1; ++n) c[n] += t * Zb[size_t(n)] - za * cs[size_t(n)];
        }
      }
    }
  });
}

// The int32 sum of (a - azp)(b - bzp) products of an [M, K] x [K, N] product, wrapping,
// written to output(shape) (a buffer of the product's shape, contents undefined).
// b_in, bzp_in: the node's input indices of b and its zero point (for constant layouts).
void IntMatMul(const OpContext& ctx, const Tensor& a, const Tensor& b, const Tensor* azp, const Tensor* bzp,
               FunctionRef<int32_t*(const Shape&)> output, size_t b_in, size_t bzp_in) {
  Shape sa = a.shape(), sb = b.shape();
  if (sa.empty() || sb.empty()) throw ctx.Fail(ErrorCode::kShapeMismatch, "A and B must have rank >= 1");
  if (!Is8Bit(a) || !Is8Bit(b) || (azp && azp->dtype() != a.dtype()) || (bzp && bzp->dtype() != b.dtype()))
    throw ctx.Fail(ErrorCode::kTypeMismatch, "A and B must be 8-bit integers, each zero point of its operand's type");
  // Vector kernel tables, 8-bit operands and a 2-D B (a weight): the integer GEMM kernel
  // on the operands minus their zero points as int16 (exact), B laid out in pairs once
  // per session when it and its zero point are constants. Sums modulo 2^32 do not
  // depend on the order of the terms: the reference's bits.
  const bool pairs_fit = Is8Bit(a) && Is8Bit(b) && sa.size() >= 2 && sb.size() == 2 && sa.back() == sb[0] &&
                         (!azp || azp->numel() == 1 || (azp->rank() == 1 && azp->numel() == sa[sa.size() - 2])) &&
                         (!bzp || bzp->numel() == 1 || (bzp->rank() == 1 && bzp->numel() == sb[1]));
  // On dot-product instructions the raw operands go in quads (IntMatMulDot), else in pairs.
  const MatMulIntegerAlgo fast =
      ctx.kernels->native_dot_u8s8 ? MatMulIntegerAlgo::kU8S8Dot : MatMulIntegerAlgo::kI16Pairs;
  const MatMulIntegerAlgo algo =
      ChooseAlgorithm(ctx, kAllMatMulIntegerAlgos, MatMulIntegerAlgoName, pairs_fit ? fast : kAllMatMulIntegerAlgos[0],
                      [&](MatMulIntegerAlgo x) { return x == MatMulIntegerAlgo::kReference || pairs_fit; });
  if (algo != MatMulIntegerAlgo::kReference) {  // both fast paths: [..., M, K] x [K, N]
    const int64_t M = sa[sa.size() - 2], K = sa.back(), N = sb[1], K2 = (K + 1) / 2, lda = 2 * K2;
    Shape out_shape(sa.begin(), sa.end() - 1);
    out_shape.push_back(N);
    const int64_t total = CheckedNumElements(out_shape, sizeof(int32_t), "MatMulInteger output");
    int32_t* out = output(out_shape);
    if (total == 0) return;
    if (K == 0) {
      std::fill(out, out + total, 0);
      return;
    }
    if (algo == MatMulIntegerAlgo::kU8S8Dot) {
      IntMatMulDot(ctx, a, b, azp, bzp, M, K, N, out, b_in);
      return;
    }
    const int64_t rows = a.numel() / K;  // A's rows over every batch
    const Tensor* bp = nullptr;
    if (!bzp || ctx.IsConstInput(bzp_in))
      bp = ctx.ConstDerived(b_in, "B pairs", [&](const Tensor& t) { return PairsB(t, bzp, K, N); });
    Tensor local;
    if (!bp) {
      local = PairsB(b, bzp, K, N);
      bp = &local;
    }
    thread_local std::vector<int32_t> za_buf;  // A's zero points per row (reused)
    std::vector<int32_t>& za = za_buf;
    za.assign(static_cast<size_t>(M), 0);
    if (azp)
      for (int64_t m = 0; m < M; ++m) za[size_t(m)] = int32_t(Get(*azp, azp->numel() > 1 ? m : 0));
    // Scratch kept per calling thread (no allocation per run once it has grown); the
    // workers below reach it through this reference, not their own thread_local.
    thread_local std::vector<int16_t> a16_buf;
    std::vector<int16_t>& a16 = a16_buf;
    if (a16.size() < size_t(rows * lda)) a16.resize(size_t(rows * lda));
    ParallelFor(ctx, rows, std::max<int64_t>(1, 16384 / lda), [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) {
        const int32_t z = za[size_t(r % M)];
        for (int64_t k = 0; k < K; ++k) a16[size_t(r * lda + k)] = int16_t(Elem8(a, r * K + k) - z);
        if (K < lda) a16[size_t(r * lda + K)] = 0;  // an odd K's pad column
      }
    });
    const int16_t* pb = bp->data<int16_t>();
    auto* kernel = ctx.kernels->GemmI16PairsI32;
    ParallelFor(ctx, (rows + 3) / 4, 1, [&](int64_t t0, int64_t t1) {
      const int64_t r0 = t0 * 4, r1 = std::min(rows, t1 * 4);
      kernel(r1 - r0, N, K2, a16.data() + r0 * lda, lda, pb, 2 * N, out + r0 * N, N);
    });
    return;
  }
  const bool a1 = sa.size() == 1, b1 = sb.size() == 1;
  if (a1) sa.insert(sa.begin(), 1);
  if (b1) sb.push_back(1);
  const int64_t M = sa[sa.size() - 2], K = sa.back(), N = sb.back();
  if (sb[sb.size() - 2] != K) throw ctx.Fail(ErrorCode::kShapeMismatch, "A and B do not agree on K");
  const Shape ba(sa.begin(), sa.end() - 2), bb(sb.begin(), sb.end() - 2);
  const Shape batch = BroadcastShapes(ctx, {ba, bb});
  Shape out_shape = batch;
  if (!a1) out_shape.push_back(M);
  if (!b1) out_shape.push_back(N);
  const auto ia = BroadcastIndex(ba, batch), ib = BroadcastIndex(bb, batch);
  int32_t* result = output(out_shape);
  std::fill(result, result + ia.size() * size_t(M * N), 0);
  // Operands minus their zero points, read once. Integer sums modulo 2^32 do not depend
  // on the order of the terms, so the loops run row by row (k outer, n inner).
  auto centred = [&ctx](const Tensor& t, const Tensor* zp, int64_t rows, int64_t cols, bool zp_per_row) {
    if (zp && zp->numel() != 1 && zp->numel() != (zp_per_row ? rows : cols)) {
      throw ctx.Fail(ErrorCode::kShapeMismatch, "a zero point must be a scalar or hold one value per " +
                                                    std::string(zp_per_row ? "row of A" : "column of B"));
    }
    std::vector<uint32_t> v(static_cast<size_t>(t.numel()));
    std::vector<int64_t> z(static_cast<size_t>(zp_per_row ? rows : cols), 0);
    for (size_t i = 0; i < z.size(); ++i) z[i] = zp ? int64_t(Get(*zp, zp->numel() > 1 ? int64_t(i) : 0)) : 0;
    for (int64_t i = 0; i < t.numel(); ++i) {
      const int64_t r = (i / cols) % rows, c = i % cols;
      v[size_t(i)] = uint32_t(int64_t(Get(t, i)) - z[size_t(zp_per_row ? r : c)]);
    }
    return v;
  };
  const std::vector<uint32_t> av = centred(a, azp, M, K, true), bv = centred(b, bzp, K, N, false);
  for (size_t bi = 0; bi < ia.size(); ++bi) {
    uint32_t* out = reinterpret_cast<uint32_t*>(result) + bi * size_t(M * N);
    for (int64_t m = 0; m < M; ++m) {
      const uint32_t* arow = av.data() + ia[bi] * M * K + m * K;
      uint32_t* orow = out + m * N;
      for (int64_t k = 0; k < K; ++k) {
        const uint32_t x = arow[k];
        const uint32_t* brow = bv.data() + ib[bi] * K * N + k * N;
        for (int64_t n = 0; n < N; ++n) orow[n] += x * brow[n];
      }
    }
  }
}

// round_half_even(v) + zp, saturated to the integer type t.
int64_t SatRound(double v, double zp, DType t) {
  double lo, hi;
  IntRange(t, &lo, &hi);
  if (v != v) return int64_t(zp < lo ? lo : zp > hi ? hi : zp);
  double r = math::RoundEvenD(v);
  r = r + zp;
  r = r < lo ? lo : r > hi ? hi : r;
  return int64_t(r);
}

}  // namespace

// Whether the parameters go per tensor or per axis (not blocked, shapes agreeing): then
// runs of *inner consecutive elements share a scale and zero point, run r taking
// parameter r % *dim (per tensor: one run of the whole tensor, *dim = 1).
bool ParamRuns(const OpContext& ctx, const Tensor& x, const Tensor& scale, int64_t* inner, int64_t* dim) {
  if (scale.numel() == 0) return false;  // the general path reports it
  if (scale.numel() <= 1 && scale.rank() <= 1) {
    *inner = std::max<int64_t>(x.numel(), 1);
    *dim = 1;
    return true;
  }
  if (ctx.attr_i("block_size", 0) > 0 || x.rank() == 0) return false;
  const int64_t axis = NormAxis(ctx, ctx.attr_i("axis", 1), x.rank());
  *dim = x.shape()[size_t(axis)];
  if (scale.rank() != 1 || scale.shape()[0] != *dim) return false;  // the general path reports it
  *inner = 1;
  for (int64_t k = axis + 1; k < x.rank(); ++k) *inner *= x.shape()[size_t(k)];
  return *inner > 0;
}

// The session's 8-bit quantisation kernel (fast paths run with vector kernel tables only).
void Quantize8(const OpContext& ctx, const float* x, int64_t n, float scale, int32_t zp, DType t, uint8_t* y) {
  const int32_t lo = t == DType::kInt8 ? -128 : 0, hi = t == DType::kInt8 ? 127 : 255;
  ctx.kernels->QuantizeF32(x, n, scale, zp, lo, hi, y);
}

void QuantizeLinear(OpContext& ctx) {
  const Tensor& x = ctx.in(0);
  const Tensor& scale = ctx.in(1);
  const Tensor* zp = ctx.has_input(2) ? &ctx.in(2) : nullptr;
  if (zp && zp->numel() != scale.numel())
    throw ctx.Fail(ErrorCode::kShapeMismatch, "the zero point must hold as many values as the scale");
  DType out_t = zp ? zp->dtype() : DType::kUInt8;
  if (ctx.has_attr("output_dtype") && ctx.attr_i("output_dtype", 0) != 0) out_t = DType(ctx.attr_i("output_dtype", 2));
  const bool saturate = ctx.attr_i("saturate", 1) != 0;
  // float to 8 bits with float scales, per tensor or per axis: the quantisation kernel on
  // each run of elements that share their parameters (the same formula as below).
  int64_t inner = 0, dim = 0;
  // (A layout ParamRuns does not take runs the reference.)
  const bool runs_fit = x.dtype() == DType::kFloat && scale.dtype() == DType::kFloat &&
                        (out_t == DType::kUInt8 || out_t == DType::kInt8) && (!zp || zp->numel() == scale.numel());
  if (UseAlgorithm(ctx, kAllQuantizeAlgos, QuantizeAlgoName, QuantizeAlgo::kRuns, runs_fit) &&
      ParamRuns(ctx, x, scale, &inner, &dim)) {
    Tensor& y = ctx.out_uninit(0, out_t, x.shape());
    const float* xp = x.data<float>();
    const float* sp = scale.data<float>();
    uint8_t* yp = y.mutable_data<uint8_t>();
    for (int64_t i0 = 0, r = 0; i0 < x.numel(); i0 += inner, ++r) {
      const int64_t j = r % dim;
      Quantize8(ctx, xp + i0, inner, sp[j], zp ? int32_t(Get(*zp, j)) : 0, out_t, yp + i0);
    }
    return;
  }
  const auto idx = ParamIndex(ctx, x, scale);
  Tensor& y = ctx.out(0, out_t, x.shape());
  const MiniFormat* mf = MiniFormatOf(out_t);
  if (!mf && !IsIntType(out_t)) throw ctx.Fail(ErrorCode::kTypeMismatch, "unsupported output type " + DTypeName(out_t));
  for (int64_t i = 0; i < x.numel(); ++i) {
    const float xv = float(Get(x, i)), sv = float(Get(scale, idx[size_t(i)]));
    const float q = xv / sv;
    if (mf) {
      const float z = zp ? float(Get(*zp, idx[size_t(i)])) : 0.0f;
      y.mutable_data<uint8_t>()[i] = uint8_t(F32ToMini(q + z, *mf, saturate));
    } else {
      const double z = zp ? Get(*zp, idx[size_t(i)]) : 0.0;
      PutInt(y, i, SatRound(double(math::RoundEven(q)), z, out_t));
    }
  }
}

void DequantizeLinear(OpContext& ctx) {
  const Tensor& x = ctx.in(0);
  const Tensor& scale = ctx.in(1);
  const Tensor* zp = ctx.has_input(2) ? &ctx.in(2) : nullptr;
  if (zp && zp->numel() != scale.numel())
    throw ctx.Fail(ErrorCode::kShapeMismatch, "the zero point must hold as many values as the scale");
  if (zp) ctx.RequireInputType(*zp, x.dtype(), "the zero point");
  DType out_t = scale.dtype();
  if (ctx.has_attr("output_dtype") && ctx.attr_i("output_dtype", 0) != 0) out_t = DType(ctx.attr_i("output_dtype", 1));
  // 8-bit integers to float with float scales, per tensor or per axis: the same
  // expression in a typed loop (the difference is exact in int32 and in f32).
  int64_t inner = 0, dim = 0;
  const bool runs_fit =
      out_t == DType::kFloat && scale.dtype() == DType::kFloat && Is8Bit(x) && (!zp || zp->numel() == scale.numel());
  if (UseAlgorithm(ctx, kAllDequantizeAlgos, DequantizeAlgoName, DequantizeAlgo::kRuns, runs_fit) &&
      ParamRuns(ctx, x, scale, &inner, &dim)) {
    Tensor& y = ctx.out_uninit(0, out_t, x.shape());
    float* yp = y.mutable_data<float>();
    const float* sp = scale.data<float>();
    for (int64_t i0 = 0, r = 0; i0 < x.numel(); i0 += inner, ++r) {
      const int64_t j = r % dim, len = inner;
      const int32_t z = zp ? int32_t(Get(*zp, j)) : 0;
      const float sv = sp[j];
      if (x.dtype() == DType::kUInt8) {
        const uint8_t* xp = x.data<uint8_t>() + i0;
        for (int64_t i = 0; i < len; ++i) yp[i0 + i] = float(int32_t(xp[i]) - z) * sv;
      } else {
        const int8_t* xp = x.data<int8_t>() + i0;
        for (int64_t i = 0; i < len; ++i) yp[i0 + i] = float(int32_t(xp[i]) - z) * sv;
      }
    }
    return;
  }
  const auto idx = ParamIndex(ctx, x, scale);
  Tensor& y = ctx.out(0, out_t, x.shape());
  for (int64_t i = 0; i < x.numel(); ++i) {
    const double z = zp ? Get(*zp, idx[size_t(i)]) : 0.0;
    const float d = IsIntType(x.dtype()) ? float(int64_t(Get(x, i)) - int64_t(z)) : float(Get(x, i) - z);
    PutFloat(y, i, d * float(Get(scale, idx[size_t(i)])));
  }
}

void DynamicQuantizeLinear(OpContext& ctx) {
  const Tensor& x = ctx.in(0);
  float mn = 0.0f, mx = 0.0f;
  const bool kernel = UseAlgorithm(ctx, kAllDynamicQuantizeAlgos, DynamicQuantizeAlgoName, DynamicQuantizeAlgo::kKernel,
                                   x.dtype() == DType::kFloat);
  if (kernel) {
    ctx.kernels->RangeF32(x.data<float>(), x.numel(), &mn, &mx);
  } else {
    for (int64_t i = 0; i < x.numel(); ++i) {
      const float v = float(Get(x, i));
      if (v < mn) mn = v;
      if (v > mx) mx = v;
    }
  }
  const float scale = (mx - mn) / 255.0f;
  const float zpf = scale == 0.0f ? 0.0f : 0.0f - mn / scale;
  const int64_t zp = SatRound(double(math::RoundEven(zpf)), 0.0, DType::kUInt8);
  Tensor& y = ctx.out(0, DType::kUInt8, x.shape());
  if (kernel && scale != 0.0f) {
    // q = x / scale, then the 8-bit quantisation kernel (the loop below, lane by lane).
    Quantize8(ctx, x.data<float>(), x.numel(), scale, int32_t(zp), DType::kUInt8, y.mutable_data<uint8_t>());
  } else {
    for (int64_t i = 0; i < x.numel(); ++i) {
      const float q = scale == 0.0f ? 0.0f : float(Get(x, i)) / scale;
      y.mutable_data<uint8_t>()[i] = uint8_t(SatRound(double(math::RoundEven(q)), double(zp), DType::kUInt8));
    }
  }
  ctx.out(1, DType::kFloat, {}).mutable_data<float>()[0] = scale;
  ctx.out(2, DType::kUInt8, {}).mutable_data<uint8_t>()[0] = uint8_t(zp);
}

void MatMulInteger(OpContext& ctx) {
  IntMatMul(
      ctx, ctx.in(0), ctx.in(1), ctx.has_input(2) ? &ctx.in(2) : nullptr, ctx.has_input(3) ? &ctx.in(3) : nullptr,
      [&](const Shape& s) { return ctx.out_uninit(0, DType::kInt32, s).mutable_data<int32_t>(); }, 1, 3);
}

void QLinearMatMul(OpContext& ctx) {
  const Tensor& a = ctx.in(0);
  const Tensor& b = ctx.in(3);
  Shape s;
  thread_local std::vector<int32_t> acc;  // reused: no allocation per run
  IntMatMul(
      ctx, a, b, &ctx.in(2), &ctx.in(5),
      [&](const Shape& shape) {
        s = shape;
        acc.resize(size_t(ProductOf(shape)));
        return acc.data();
      },
      3, 5);
  const float m = float(float(Get(ctx.in(1), 0)) * float(Get(ctx.in(4), 0))) / float(Get(ctx.in(6), 0));
  const Tensor& yzp = ctx.in(7);
  Tensor& y = ctx.out(0, yzp.dtype(), s);
  for (size_t i = 0; i < acc.size(); ++i) {
    PutInt(y, int64_t(i), SatRound(double(acc[i]) * double(m), Get(yzp, 0), yzp.dtype()));
  }
}

}  // namespace ops
}  // namespace onemodel::impl
