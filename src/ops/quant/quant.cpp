// QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear, MatMulInteger and
// QLinearMatMul: each operator's node validated into its parameters, then the row its
// family's table plans (ops/quant/quant.h). The definitions, the reference rows, are in
// ref/quant.cpp: quantise q = saturate(round_half_even(x / scale) + zero_point) in f32,
// dequantise (x - zero_point) * scale, integer products exact in int32 (wrapping), and
// QLinearMatMul's requantisation of the int32 sums, which every row's sums go through.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "core/bits.h"
#include "core/index.h"
#include "core/minifloat.h"
#include "core/per_thread.h"
#include "ops/ops.h"
#include "ops/quant/quant.h"
#include "ops/parallel.h"
#include "ops/util.h"
#include "ref/quant.h"

namespace onemodel::impl {
namespace ops {

bool Is8Bit(const Tensor& t) { return t.dtype() == DType::kUInt8 || t.dtype() == DType::kInt8; }

// One run of a MatMulInteger row: the operands, their zero points (null: none), the int32
// output (of the node's out_shape, contents undefined), and the node's input indices of B
// and its zero point (for layouts kept per session when they are constants). to_float
// (may be null): a row that can applies it and sets *finished; others leave int32 sums.
struct IntMatMulRun {
  const OpContext& ctx;
  const Tensor& a;
  const Tensor& b;
  const Tensor* azp;
  const Tensor* bzp;
  int32_t* out;
  size_t b_in, bzp_in;
  const IntToFloat* to_float = nullptr;
  bool* finished = nullptr;
};

namespace {

double Get(const Tensor& t, int64_t i) { return ElementAsDouble(t, i); }

int32_t Elem8(const Tensor& t, int64_t i) {
  return t.dtype() == DType::kUInt8 ? int32_t(t.data<uint8_t>()[i]) : int32_t(t.data<int8_t>()[i]);
}

// B [K, N] minus its zero point (scalar or per column) as int16 in pairs of k, the layout
// of the integer GEMM kernel (ref/gemm.h, GemmI16PairsI32): K2 = ceil(K / 2) rows of 2N.
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
                  int64_t M, int64_t K, int64_t N, int32_t* out, size_t b_in, const IntToFloat* to_float) {
  const int64_t K4 = (K + 3) / 4, rows = a.numel() / K;
  const Tensor* bq = ctx.ConstDerived(b_in, "B quads", [&](const Tensor& t) { return QuadsB(t, K, N); });
  Tensor local;
  if (!bq) {
    local = QuadsB(b, K, N);
    bq = &local;
  }
  const int8_t* quads = bq->data<int8_t>();
  const uint8_t* sums_bytes = reinterpret_cast<const uint8_t*>(quads + QuadPanelsBytes(K, N));
  auto& zb_buf = ONEMODEL_PER_THREAD(std::vector<uint32_t>);
  auto& cs_buf = ONEMODEL_PER_THREAD(std::vector<uint32_t>);
  auto& za_buf = ONEMODEL_PER_THREAD(std::vector<uint32_t>);
  auto& ra_buf = ONEMODEL_PER_THREAD(std::vector<uint32_t>);
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
  // za * cs[n] per column, once, when every row of A has the same zero point (a scalar one:
  // dynamic quantisation's); else per row and block of columns.
  bool za_uniform = true;
  for (int64_t m = 1; m < M; ++m) za_uniform &= Za[size_t(m)] == Za[0];
  auto& zcs_buf = ONEMODEL_PER_THREAD(std::vector<uint32_t>);
  std::vector<uint32_t>& zcs = zcs_buf;
  if (za_uniform) {
    zcs.resize(size_t(N));
    for (int64_t n = 0; n < N; ++n) zcs[size_t(n)] = Za[0] * cs[size_t(n)];
  }
  // A' in place when it is uint8 with whole quads per row; else copied, padded with zeros.
  const bool in_place = a.dtype() == DType::kUInt8 && K % 4 == 0;
  const int64_t lda = in_place ? K : 4 * K4;
  auto& a8_buf = ONEMODEL_PER_THREAD(std::vector<uint8_t>);
  std::vector<uint8_t>& a8 = a8_buf;
  if (!in_place && a8.size() < size_t(rows * lda)) a8.resize(size_t(rows * lda));
  const uint8_t* a_raw =
      a.dtype() == DType::kUInt8 ? a.data<uint8_t>() : reinterpret_cast<const uint8_t*>(a.data<int8_t>());
  const uint8_t flip = a.dtype() == DType::kInt8 ? 0x80 : 0;
  const uint8_t* ap = in_place ? a_raw : a8.data();
  auto* kernel = ctx.kernels->GemmU8S8I32;
  auto* finish = ctx.kernels->FinishDotSumsI32;
  const float* mult = to_float ? to_float->mult : nullptr;
  const float* fbias = to_float ? to_float->bias : nullptr;
  // Rows [r0, r1): the row sums of a' (and A' copied when it is not read in place).
  auto prepare = [&](int64_t r0, int64_t r1) {
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
  };
  // Rows [r0, r1) of panels [p0, p1): per panel of columns, the kernel's raw sums, then
  // the zero points' terms while the panel's block of C is still in cache.
  auto product = [&](int64_t r0, int64_t r1, int64_t p0, int64_t p1) {
    for (int64_t n0 = p0 * kQuadPanel; n0 < std::min(N, p1 * kQuadPanel); n0 += kQuadPanel) {
      const int64_t n1 = std::min(N, n0 + kQuadPanel);
      kernel(r1 - r0, n1 - n0, K4, ap + r0 * lda, lda, quads + n0 * 4 * K4, 4 * kQuadPanel, out + r0 * N + n0, N);
      // Each row's term t = K za - (row sum of a'): the block's sums + t Zb[n] - za cs[n]
      // (FinishDotSumsI32), then with to_float their floats, the block still in cache.
      std::vector<uint32_t>& rt = ONEMODEL_PER_THREAD(std::vector<uint32_t>);
      rt.resize(size_t(r1 - r0));
      for (int64_t r = r0; r < r1; ++r) rt[size_t(r - r0)] = uint32_t(K) * Za[size_t(r % M)] - ra[size_t(r)];
      const uint32_t* zb = zb_uniform ? nullptr : Zb.data() + n0;
      const float* mj = mult ? mult + n0 : nullptr;
      const float* bj = fbias ? fbias + n0 : nullptr;
      uint32_t* c = reinterpret_cast<uint32_t*>(out + r0 * N) + n0;
      if (za_uniform) {
        finish(c, N, r1 - r0, n1 - n0, rt.data(), zb, Zb[0], zcs.data() + n0, mj, bj);
        continue;
      }
      uint32_t local[kQuadPanel];
      for (int64_t r = r0; r < r1; ++r) {
        const uint32_t za = Za[size_t(r % M)];
        for (int64_t n = n0; n < n1; ++n) local[n - n0] = za * cs[size_t(n)];
        finish(c + (r - r0) * N, N, 1, n1 - n0, rt.data() + (r - r0), zb, Zb[0], local, mj, bj);
      }
    }
  };
  // Split by rows (8 at a time), unless B's bytes are more than twice A's and there are
  // two panels per thread or more: then by panels of columns, so that each thread reads
  // its share of B instead of all of it (the integer products are bound by B's traffic
  // when A has few rows). Integer sums modulo 2^32: any split gives the same bits.
  const int threads = ctx.pool ? ctx.pool->threads() : 1;
  const int64_t panels = (N + kQuadPanel - 1) / kQuadPanel;
  if (threads > 1 && panels >= 2 * threads && K4 * 4 * N > 2 * rows * lda) {
    ParallelFor(ctx, (rows + 7) / 8, 1, [&](int64_t t0, int64_t t1) { prepare(t0 * 8, std::min(rows, t1 * 8)); });
    ParallelFor(ctx, panels, 1, [&](int64_t p0, int64_t p1) { product(0, rows, p0, p1); });
    return;
  }
  ParallelFor(ctx, (rows + 7) / 8, 1, [&](int64_t t0, int64_t t1) {
    const int64_t r0 = t0 * 8, r1 = std::min(rows, t1 * 8);
    prepare(r0, r1);
    product(r0, r1, 0, panels);
  });
}

// The reference: ref::MatMulIntegerI32 over the broadcast batches.
void RunIntMatMulReference(const MatMulIntegerNode& p, const IntMatMulRun& r) {
  const IndexTable ia = BroadcastIndex(p.a_batch, p.batch), ib = BroadcastIndex(p.b_batch, p.batch);
  ref::MatMulIntegerI32(p, ia.data(), ib.data(), r.a, r.b, r.azp, r.bzp, r.out);
}

// Both vector rows compute [..., M, K] x [K, N]: nothing when the output is empty, zeros
// when K is 0 (whether that settled the run).
bool TrivialProduct(const MatMulIntegerNode& p, int32_t* out) {
  const int64_t total = ProductOf(p.out_shape);
  if (total == 0) return true;
  if (p.K == 0) {
    std::fill(out, out + total, 0);
    return true;
  }
  return false;
}

void RunIntMatMulDot(const MatMulIntegerNode& p, const IntMatMulRun& r) {
  if (TrivialProduct(p, r.out)) return;
  IntMatMulDot(r.ctx, r.a, r.b, r.azp, r.bzp, p.M, p.K, p.N, r.out, r.b_in, r.to_float);
  if (r.to_float) *r.finished = true;
}

// The integer GEMM kernel on the operands minus their zero points as int16 (exact), B
// laid out in pairs once per session when it and its zero point are constants.
void RunIntMatMulPairs(const MatMulIntegerNode& p, const IntMatMulRun& r) {
  if (TrivialProduct(p, r.out)) return;
  const OpContext& ctx = r.ctx;
  const Tensor& a = r.a;
  const Tensor& b = r.b;
  const Tensor* azp = r.azp;
  const Tensor* bzp = r.bzp;
  int32_t* out = r.out;
  const int64_t M = p.M, K = p.K, N = p.N, K2 = (K + 1) / 2, lda = 2 * K2;
  const int64_t rows = a.numel() / K;  // A's rows over every batch
  const Tensor* bp = nullptr;
  if (!bzp || ctx.IsConstInput(r.bzp_in))
    bp = ctx.ConstDerived(r.b_in, "B pairs", [&](const Tensor& t) { return PairsB(t, bzp, K, N); });
  Tensor local;
  if (!bp) {
    local = PairsB(b, bzp, K, N);
    bp = &local;
  }
  auto& za_buf = ONEMODEL_PER_THREAD(std::vector<int32_t>);  // A's zero points per row (reused)
  std::vector<int32_t>& za = za_buf;
  za.assign(static_cast<size_t>(M), 0);
  if (azp)
    for (int64_t m = 0; m < M; ++m) za[size_t(m)] = int32_t(Get(*azp, azp->numel() > 1 ? m : 0));
  // Scratch kept per calling thread (no allocation per run once it has grown); the
  // workers below reach it through this reference, not their own thread_local.
  auto& a16_buf = ONEMODEL_PER_THREAD(std::vector<int16_t>);
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
}

// Automatic planning: the vector rows where they fit, the dot-product quads on
// dot-product instructions (IntMatMulDot), else the int16 pairs.
bool PairsFit(const MatMulIntegerNode& p) { return p.pairs_fit; }
bool PairsChosen(const MatMulIntegerNode& p) { return !p.native_dot; }
bool DotChosen(const MatMulIntegerNode& p) { return p.native_dot; }

constexpr const char* kMatMulIntegerOps[] = {"MatMulInteger", "QLinearMatMul", "com.microsoft.MatMulIntegerToFloat",
                                             "com.microsoft.DynamicQuantizeMatMul", "onemodel.DynamicQuantMatMul"};
constexpr AlgorithmRow<MatMulIntegerNode, MatMulIntegerRunFn> kMatMulIntegerRows[] = {
    {"reference", Exactness::kExact, "", nullptr, nullptr, RunIntMatMulReference},
    {"i16-pairs", Exactness::kExact, "GemmI16PairsI32", PairsFit, PairsChosen, RunIntMatMulPairs},
    {"u8s8-dot", Exactness::kExact, "GemmU8S8I32", PairsFit, DotChosen, RunIntMatMulDot},
};

// Validates a MatMulInteger product: ranks >= 1, 8-bit operands with zero points of
// their types, K agreeing, the batch dimensions broadcasting, each zero point a scalar or
// one value per row of A / column of B.
MatMulIntegerNode ParseIntMatMul(const OpContext& ctx, const Tensor& a, const Tensor& b, const Tensor* azp,
                                 const Tensor* bzp) {
  MatMulIntegerNode p;
  Shape sa = a.shape(), sb = b.shape();
  if (sa.empty() || sb.empty()) throw ctx.Fail(ErrorCode::kShapeMismatch, "A and B must have rank >= 1");
  if (!Is8Bit(a) || !Is8Bit(b) || (azp && azp->dtype() != a.dtype()) || (bzp && bzp->dtype() != b.dtype()))
    throw ctx.Fail(ErrorCode::kTypeMismatch, "A and B must be 8-bit integers, each zero point of its operand's type");
  p.pairs_fit = Is8Bit(a) && Is8Bit(b) && sa.size() >= 2 && sb.size() == 2 && sa.back() == sb[0] &&
                (!azp || azp->numel() == 1 || (azp->rank() == 1 && azp->numel() == sa[sa.size() - 2])) &&
                (!bzp || bzp->numel() == 1 || (bzp->rank() == 1 && bzp->numel() == sb[1]));
  p.native_dot = ctx.kernels->native_dot_u8s8;
  const bool a1 = sa.size() == 1, b1 = sb.size() == 1;
  if (a1) sa.insert(sa.begin(), 1);
  if (b1) sb.push_back(1);
  const int64_t M = p.M = sa[sa.size() - 2], K = p.K = sa.back(), N = p.N = sb.back();
  if (sb[sb.size() - 2] != K) throw ctx.Fail(ErrorCode::kShapeMismatch, "A and B do not agree on K");
  p.a_batch = Shape(sa.begin(), sa.end() - 2);
  p.b_batch = Shape(sb.begin(), sb.end() - 2);
  p.batch = BroadcastShapes(ctx, {p.a_batch, p.b_batch});
  p.batches = ProductOf(p.batch);
  p.out_shape = p.batch;
  if (!a1) p.out_shape.push_back(M);
  if (!b1) p.out_shape.push_back(N);
  CheckedNumElements(p.out_shape, sizeof(int32_t), "MatMulInteger output");
  for (const bool per_row : {true, false}) {
    const Tensor* zp = per_row ? azp : bzp;
    if (zp && zp->numel() != 1 && zp->numel() != (per_row ? M : N))
      throw ctx.Fail(ErrorCode::kShapeMismatch, "a zero point must be a scalar or hold one value per " +
                                                    std::string(per_row ? "row of A" : "column of B"));
  }
  return p;
}

// --- QuantizeLinear, DequantizeLinear ---

// Validates where each element of x takes its scale and zero point (QuantLayout) and
// finds its runs: the scale not empty, per tensor (one value, rank <= 1), per axis (1-D,
// one value per slice of `axis`) or blocked (x's shape with the axis divided, rounded
// up, by block_size: no runs).
void ParseLayout(const OpContext& ctx, const Tensor& x, const Tensor& scale, QuantLayout* l, QuantRuns* runs) {
  l->x_shape = x.shape();
  l->scale_shape = scale.shape();
  if (scale.numel() == 0) throw ctx.Fail(ErrorCode::kShapeMismatch, "the scale is empty");
  l->per_tensor = scale.numel() <= 1 && scale.rank() <= 1;
  if (l->per_tensor) {
    *runs = {true, std::max<int64_t>(x.numel(), 1), 1};
    return;
  }
  const int64_t axis = l->axis = NormAxis(ctx, ctx.attr_i("axis", 1), x.rank());
  const int64_t block = l->block = ctx.attr_i("block_size", 0);
  int64_t inner = 1;
  for (int64_t k = axis + 1; k < x.rank(); ++k) inner *= x.shape()[size_t(k)];
  const int64_t dim = x.shape()[size_t(axis)];
  if (block <= 0) {
    if (scale.rank() != 1 || scale.shape()[0] != dim)
      throw ctx.Fail(ErrorCode::kShapeMismatch, "per-axis scale must have one value per slice");
    *runs = {inner > 0, inner, dim};
    return;
  }
  if (scale.rank() != x.rank()) throw ctx.Fail(ErrorCode::kShapeMismatch, "blocked scale must have the input's rank");
  for (int64_t k = 0; k < x.rank(); ++k) {
    const int64_t d = x.shape()[size_t(k)], want = k == axis ? (d + block - 1) / block : d;
    if (scale.shape()[size_t(k)] != want)
      throw ctx.Fail(ErrorCode::kShapeMismatch,
                     "blocked scale must have the input's shape, the axis divided by block_size");
  }
  *runs = {};
}

// The session's 8-bit quantisation kernel (fast paths run with vector kernel tables only).
void Quantize8(const OpContext& ctx, const float* x, int64_t n, float scale, int32_t zp, DType t, uint8_t* y) {
  const int32_t lo = t == DType::kInt8 ? -128 : 0, hi = t == DType::kInt8 ? 127 : 255;
  ctx.kernels->QuantizeF32(x, n, scale, zp, lo, hi, y);
}

void RunQuantizeReference(OpContext& ctx, const QuantizeNode& p, const Tensor& x, const Tensor& scale,
                          const Tensor* zp) {
  ref::QuantizeLinear(p, x, scale, zp, ctx.out(0, p.out, x.shape()));
}

// The quantisation kernel on each run of elements that share their parameters (the same
// formula as the reference's).
void RunQuantizeRuns(OpContext& ctx, const QuantizeNode& p, const Tensor& x, const Tensor& scale, const Tensor* zp) {
  const int64_t inner = p.runs.inner, dim = p.runs.dim;
  Tensor& y = ctx.out_uninit(0, p.out, x.shape());
  const float* xp = x.data<float>();
  const float* sp = scale.data<float>();
  uint8_t* yp = y.mutable_data<uint8_t>();
  for (int64_t i0 = 0, r = 0; i0 < x.numel(); i0 += inner, ++r) {
    const int64_t j = r % dim;
    Quantize8(ctx, xp + i0, inner, sp[j], zp ? int32_t(Get(*zp, j)) : 0, p.out, yp + i0);
  }
}

bool QuantizeRunsFit(const QuantizeNode& p) { return p.runs_fit; }

constexpr const char* kQuantizeOps[] = {"QuantizeLinear"};
constexpr AlgorithmRow<QuantizeNode, QuantizeRunFn> kQuantizeRows[] = {
    {"reference", Exactness::kExact, "", nullptr, nullptr, RunQuantizeReference},
    {"runs", Exactness::kExact, "QuantizeF32", QuantizeRunsFit, nullptr, RunQuantizeRuns},
};

void RunDequantizeReference(OpContext& ctx, const DequantizeNode& p, const Tensor& x, const Tensor& scale,
                            const Tensor* zp) {
  ref::DequantizeLinear(p, x, scale, zp, ctx.out(0, p.out, x.shape()));
}

// The same expression as the reference's in a typed loop per run (the difference is
// exact in int32 and in f32).
void RunDequantizeRuns(OpContext& ctx, const DequantizeNode& p, const Tensor& x, const Tensor& scale,
                       const Tensor* zp) {
  const int64_t inner = p.runs.inner, dim = p.runs.dim;
  Tensor& y = ctx.out_uninit(0, p.out, x.shape());
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
}

bool DequantizeRunsFit(const DequantizeNode& p) { return p.runs_fit; }

constexpr const char* kDequantizeOps[] = {"DequantizeLinear"};
constexpr AlgorithmRow<DequantizeNode, DequantizeRunFn> kDequantizeRows[] = {
    {"reference", Exactness::kExact, "", nullptr, nullptr, RunDequantizeReference},
    {"runs", Exactness::kExact, "", DequantizeRunsFit, nullptr, RunDequantizeRuns},
};

// --- DynamicQuantizeLinear ---

void RunDynamicReference(OpContext& ctx, const DynamicQuantizeNode&, const Tensor& x) {
  float scale = 0.0f;
  uint8_t zp = 0;
  ref::DynamicQuantizeLinear(x, ctx.out(0, DType::kUInt8, x.shape()).mutable_data<uint8_t>(), &scale, &zp);
  ctx.out(1, DType::kFloat, {}).mutable_data<float>()[0] = scale;
  ctx.out(2, DType::kUInt8, {}).mutable_data<uint8_t>()[0] = zp;
}

void RunDynamicKernel(OpContext& ctx, const DynamicQuantizeNode&, const Tensor& x) {
  float scale = 0.0f;
  uint8_t zp = 0;
  DynamicQuantizeKernel(ctx, x, ctx.out(0, DType::kUInt8, x.shape()).mutable_data<uint8_t>(), &scale, &zp);
  ctx.out(1, DType::kFloat, {}).mutable_data<float>()[0] = scale;
  ctx.out(2, DType::kUInt8, {}).mutable_data<uint8_t>()[0] = zp;
}

bool DynamicKernelFits(const DynamicQuantizeNode& p) { return p.f32; }

constexpr const char* kDynamicQuantizeOps[] = {"DynamicQuantizeLinear"};
constexpr AlgorithmRow<DynamicQuantizeNode, DynamicQuantizeRunFn> kDynamicQuantizeRows[] = {
    {"reference", Exactness::kExact, "", nullptr, nullptr, RunDynamicReference},
    {"kernel", Exactness::kExact, "RangeF32, QuantizeF32", DynamicKernelFits, nullptr, RunDynamicKernel},
};

}  // namespace

// The int32 sum of (a - azp)(b - bzp) products of an [M, K] x [K, N] product, wrapping,
// written to output(shape) (a buffer of the product's shape, contents undefined).
// b_in, bzp_in: the node's input indices of b and its zero point (for constant layouts).
void IntMatMul(const OpContext& ctx, const Tensor& a, const Tensor& b, const Tensor* azp, const Tensor* bzp,
               FunctionRef<int32_t*(const Shape&)> output, size_t b_in, size_t bzp_in, const IntToFloat* to_float,
               bool* finished) {
  const MatMulIntegerNode p = ParseIntMatMul(ctx, a, b, azp, bzp);
  const auto& row = PlanRow(ctx, MatMulIntegerTable(), p);
  row.run(p, IntMatMulRun{ctx, a, b, azp, bzp, output(p.out_shape), b_in, bzp_in, to_float, finished});
}

// The range scan by the RangeF32 kernel, in parts over the threads (the range's fold
// from +0 gives the same values in any order, so the parts' ranges folded the same way
// give the reference's), the reference's scale and zero point, then q = x / scale
// through the 8-bit quantisation kernel (the reference's loop, lane by lane) in chunks
// over the threads; a scale of 0 has the reference's loop (whose q is 0 there, not x / 0).
void DynamicQuantizeKernel(const OpContext& ctx, const Tensor& x, uint8_t* y, float* scale_out, uint8_t* zp_out) {
  const float* px = x.data<float>();
  const int64_t n = x.numel();
  constexpr int64_t kMaxParts = 64, kGrain = 32768;
  const int threads = ctx.pool ? ctx.pool->threads() : 1;
  const int64_t parts = std::clamp<int64_t>(n / kGrain, 1, std::min<int64_t>(threads, kMaxParts));
  float los[kMaxParts] = {}, his[kMaxParts] = {};
  ParallelFor(ctx, parts, 1, [&](int64_t b, int64_t e) {
    for (int64_t k = b; k < e; ++k) {
      const int64_t i0 = n * k / parts, i1 = n * (k + 1) / parts;
      ctx.kernels->RangeF32(px + i0, i1 - i0, &los[k], &his[k]);
    }
  });
  float mn = 0.0f, mx = 0.0f;
  for (int64_t k = 0; k < parts; ++k) {
    if (los[k] < mn) mn = los[k];
    if (his[k] > mx) mx = his[k];
  }
  float scale = 0.0f;
  uint8_t zp = 0;
  ref::DynamicQuantizeScale(mn, mx, &scale, &zp);
  if (scale != 0.0f) {
    ParallelFor(ctx, n, 16384,
                [&](int64_t b, int64_t e) { Quantize8(ctx, px + b, e - b, scale, int32_t(zp), DType::kUInt8, y + b); });
  } else
    ref::DynamicQuantizeU8(x, scale, zp, y);
  *scale_out = scale;
  *zp_out = zp;
}

const FamilyTable<MatMulIntegerNode, MatMulIntegerRunFn>& MatMulIntegerTable() {
  static constexpr FamilyTable<MatMulIntegerNode, MatMulIntegerRunFn> kTable{"matmul_integer", kMatMulIntegerOps,
                                                                             kMatMulIntegerRows};
  return kTable;
}
const FamilyTable<QuantizeNode, QuantizeRunFn>& QuantizeTable() {
  static constexpr FamilyTable<QuantizeNode, QuantizeRunFn> kTable{"quantize", kQuantizeOps, kQuantizeRows};
  return kTable;
}
const FamilyTable<DequantizeNode, DequantizeRunFn>& DequantizeTable() {
  static constexpr FamilyTable<DequantizeNode, DequantizeRunFn> kTable{"dequantize", kDequantizeOps, kDequantizeRows};
  return kTable;
}
const FamilyTable<DynamicQuantizeNode, DynamicQuantizeRunFn>& DynamicQuantizeTable() {
  static constexpr FamilyTable<DynamicQuantizeNode, DynamicQuantizeRunFn> kTable{
      "dynamic_quantize", kDynamicQuantizeOps, kDynamicQuantizeRows};
  return kTable;
}

void QuantizeLinear(OpContext& ctx) {
  const Tensor& x = ctx.in(0);
  const Tensor& scale = ctx.in(1);
  const Tensor* zp = ctx.has_input(2) ? &ctx.in(2) : nullptr;
  if (zp && zp->numel() != scale.numel())
    throw ctx.Fail(ErrorCode::kShapeMismatch, "the zero point must hold as many values as the scale");
  QuantizeNode p;
  p.out = zp ? zp->dtype() : DType::kUInt8;
  if (ctx.has_attr("output_dtype") && ctx.attr_i("output_dtype", 0) != 0) p.out = DType(ctx.attr_i("output_dtype", 2));
  p.saturate = ctx.attr_i("saturate", 1) != 0;
  ParseLayout(ctx, x, scale, &p, &p.runs);
  if (!MiniFormatOf(p.out) && !ref::IsQuantInteger(p.out))
    throw ctx.Fail(ErrorCode::kTypeMismatch, "unsupported output type " + DTypeName(p.out));
  // float to 8 bits with float scales, per tensor or per axis: the runs.
  p.runs_fit = x.dtype() == DType::kFloat && scale.dtype() == DType::kFloat &&
               (p.out == DType::kUInt8 || p.out == DType::kInt8) && (!zp || zp->numel() == scale.numel()) && p.runs.fit;
  PlanRow(ctx, QuantizeTable(), p).run(ctx, p, x, scale, zp);
}

void DequantizeLinear(OpContext& ctx) {
  const Tensor& x = ctx.in(0);
  const Tensor& scale = ctx.in(1);
  const Tensor* zp = ctx.has_input(2) ? &ctx.in(2) : nullptr;
  if (zp && zp->numel() != scale.numel())
    throw ctx.Fail(ErrorCode::kShapeMismatch, "the zero point must hold as many values as the scale");
  if (zp) ctx.RequireInputType(*zp, x.dtype(), "the zero point");
  DequantizeNode p;
  p.out = scale.dtype();
  if (ctx.has_attr("output_dtype") && ctx.attr_i("output_dtype", 0) != 0) p.out = DType(ctx.attr_i("output_dtype", 1));
  ParseLayout(ctx, x, scale, &p, &p.runs);
  // 8-bit integers to float with float scales, per tensor or per axis: the runs.
  p.runs_fit = p.out == DType::kFloat && scale.dtype() == DType::kFloat && Is8Bit(x) &&
               (!zp || zp->numel() == scale.numel()) && p.runs.fit;
  PlanRow(ctx, DequantizeTable(), p).run(ctx, p, x, scale, zp);
}

void DynamicQuantizeLinear(OpContext& ctx) {
  const Tensor& x = ctx.in(0);
  const DynamicQuantizeNode p{x.dtype() == DType::kFloat};
  PlanRow(ctx, DynamicQuantizeTable(), p).run(ctx, p, x);
}

void MatMulInteger(OpContext& ctx) {
  IntMatMul(
      ctx, ctx.in(0), ctx.in(1), ctx.has_input(2) ? &ctx.in(2) : nullptr, ctx.has_input(3) ? &ctx.in(3) : nullptr,
      [&](const Shape& s) { return ctx.out_uninit(0, DType::kInt32, s).mutable_data<int32_t>(); }, 1, 3);
}

// The int32 sums by the planned row, then the reference's requantisation
// (ref::QLinearMatMulOutput).
void QLinearMatMul(OpContext& ctx) {
  const Tensor& a = ctx.in(0);
  const Tensor& b = ctx.in(3);
  Shape s;
  auto& acc = ONEMODEL_PER_THREAD(std::vector<int32_t>);  // reused: no allocation per run
  IntMatMul(
      ctx, a, b, &ctx.in(2), &ctx.in(5),
      [&](const Shape& shape) {
        s = shape;
        acc.resize(size_t(ProductOf(shape)));
        return acc.data();
      },
      3, 5);
  const Tensor& yzp = ctx.in(7);
  Tensor& y = ctx.out(0, yzp.dtype(), s);
  ref::QLinearMatMulOutput(acc.data(), int64_t(acc.size()), ctx.in(1), ctx.in(4), ctx.in(6), yzp, y);
}

}  // namespace ops
}  // namespace onemodel::impl
