// ConvInteger and QLinearConv: exact int32 sums (wrapping), so any order gives the same bits.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>

#include "ops/conv_common.h"
#include "ops/conv_gemm.h"
#include "ops/fused.h"
#include "ops/ops.h"
#include "ops/algorithm.h"
#include "ops/int_conv.h"
#include "ref/conv.h"
#include "ref/elementwise.h"
#include "ref/gemm.h"
#include "ref/math.h"

namespace onemodel::impl {
namespace ops {

namespace {
// Integer convolution: int32 sums (wrapping) of (x - x_zp) * (w - w_zp), channel outer,
// kernel position inner; padding taps contribute nothing. w_zp may be per output channel.
// IntConv's 1-D/2-D path on the integer GEMM kernel (GemmI16PairsI32): per image and
// group, Y[Mg x P] = W[Mg x Kg] * col[Kg x P] on the operands minus their zero points as
// int16 (exact), col built block by block in the kernel's pairs of k with 0 at padding
// taps (a skipped tap adds nothing: the same integer sum). The weights are laid out once
// per session when they and their zero point are constants (w_in, wzp_in: their input
// indices). int32 sums modulo 2^32 do not depend on the order of the terms.
void IntConvGemm(OpContext& ctx, const ConvPlane& pl, const Tensor& x, const Tensor& w, int64_t xz, const Tensor* wzp,
                 int64_t N, int64_t C, int64_t M, int64_t group, size_t w_in, size_t wzp_in, int32_t* acc_out) {
  const int64_t Cg = C / group, Mg = M / group, ksp = pl.KH * pl.KW, Kg = Cg * ksp, K2 = (Kg + 1) / 2, lda = 2 * K2;
  const int64_t in_sp = pl.IH * pl.IW, P = pl.OH * pl.OW;
  auto get = [](const Tensor& t, int64_t i) -> int32_t {
    return t.dtype() == DType::kInt8 ? int32_t(t.data<int8_t>()[i]) : int32_t(t.data<uint8_t>()[i]);
  };
  auto make_a = [&](const Tensor& wt) {
    Tensor t(DType::kInt16, Shape{M, lda}, "integer convolution weights");
    int16_t* a = t.mutable_data<int16_t>();
    for (int64_t m = 0; m < M; ++m) {
      const int32_t wz = wzp && wzp->numel() ? get(*wzp, wzp->numel() > 1 ? m : 0) : 0;
      for (int64_t k = 0; k < Kg; ++k) a[m * lda + k] = int16_t(get(wt, m * Kg + k) - wz);
    }
    return t;
  };
  const Tensor* wa = nullptr;
  if (!wzp || ctx.IsConstInput(wzp_in)) wa = ctx.ConstDerived(w_in, "W int16", make_a);
  Tensor local;
  if (!wa) {
    local = make_a(w);
    wa = &local;
  }
  // Reused per calling thread (no allocation per run); the workers below reach it
  // through this reference, not their own thread_local.
  thread_local std::vector<int16_t> xc_buf;
  std::vector<int16_t>& xc = xc_buf;
  if (xc.size() < size_t(x.numel())) xc.resize(size_t(x.numel()));
  ParallelFor(ctx, x.numel(), 65536, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) xc[size_t(i)] = int16_t(get(x, i) - int32_t(xz));
  });
  // Column blocks of about 1 MiB of int16 pairs, at least 64 columns.
  const int64_t pc = std::max<int64_t>(64, std::min<int64_t>(P, (int64_t(1) << 19) / std::max<int64_t>(lda, 1)));
  const int64_t blocks = (P + pc - 1) / pc;
  auto* kernel = ctx.kernels->GemmI16PairsI32;
  ParallelFor(ctx, N * group * blocks, 1, [&](int64_t b, int64_t e) {
    thread_local std::vector<int16_t> col;
    if (col.size() < size_t(lda * pc)) col.resize(size_t(lda * pc));
    for (int64_t t = b; t < e; ++t) {
      const int64_t ng = t / blocks, n = ng / group, grp = ng % group, p0 = t % blocks * pc, np = std::min(pc, P - p0);
      const int16_t* xg = xc.data() + (n * C + grp * Cg) * in_sp;
      int16_t* cb = col.data();
      std::fill(cb, cb + lda * np, int16_t(0));
      for (int64_t r = 0; r < Kg; ++r) {
        const int64_t c = r / ksp, kh = (r % ksp) / pl.KW, kw = r % pl.KW;
        const int16_t* xch = xg + c * in_sp;
        int16_t* dst = cb + (r / 2) * 2 * np + (r % 2);
        int64_t oh = p0 / pl.OW, ow = p0 % pl.OW;
        for (int64_t i = 0; i < np;) {
          const int64_t run = std::min(np - i, pl.OW - ow);  // the rest of output row oh
          const int64_t ih = oh * pl.SH - pl.PH + kh * pl.DH;
          if (ih >= 0 && ih < pl.IH) {
            const int16_t* xrow = xch + ih * pl.IW;
            for (int64_t j = 0; j < run; ++j) {
              const int64_t iw = (ow + j) * pl.SW - pl.PW + kw * pl.DW;
              if (iw >= 0 && iw < pl.IW) dst[2 * (i + j)] = xrow[iw];
            }
          }
          i += run;
          ow = 0;
          ++oh;
        }
      }
      kernel(Mg, np, K2, wa->data<int16_t>() + grp * Mg * lda, lda, cb, 2 * np, acc_out + (n * M + grp * Mg) * P + p0,
             P);
    }
  });
}

// IntConv's 1-D/2-D path on GemmU8S8I32: Y[Mg x P] = W'[Mg x Kp] * col'[Kp x P] on raw
// 8-bit values, W' = w (uint8 W) or w + 128 (int8 W: ca = -128), col' = x - 128 (uint8 X:
// cb = 128) or x (int8 X), with k running over (kh, kw, channel) and the channels padded
// to Cq quads: X' is laid out per pixel (channels innermost), so each quad of col' is one
// 32-bit word of X'. Padding taps and padded channels hold ZX = xz - cb (x - xz = 0 there,
// as a skipped tap; padded channels meet zero weights). With ZW = wz - ca:
// sum (W' - ZW)(col' - ZX) = sum W'col' - ZX rowsum W' - ZW colsum col' + Kp ZW ZX, all
// modulo 2^32 (ops/quant_ops.cpp's IntMatMulDot derives the same identity); colsum col'
// per column is the sum, over its taps, of the pixel's channel sum (or Cq*4*ZX).
void IntConvDot(OpContext& ctx, const ConvPlane& pl, const Tensor& x, const Tensor& w, int64_t xz, const Tensor* wzp,
                int64_t N, int64_t C, int64_t M, int64_t group, size_t w_in, int32_t* acc_out) {
  if (M <= 0 || N <= 0) return;  // no output channel or image: nothing to write
  const int64_t Cg = C / group, Mg = M / group, ksp = pl.KH * pl.KW, Cq = (Cg + 3) / 4, Kp = ksp * Cq * 4;
  const int64_t in_sp = pl.IH * pl.IW, P = pl.OH * pl.OW;
  const bool w_signed = w.dtype() == DType::kInt8, x_unsigned = x.dtype() == DType::kUInt8;
  // The weights as u8 rows of Kp in (kh, kw, channel) order (zeros for padded channels),
  // then their M row sums as int32.
  auto make_a = [&](const Tensor& wt) {
    Tensor t(DType::kUInt8, Shape{M * Kp + 4 * M}, "integer convolution weights");
    uint8_t* a = t.mutable_data<uint8_t>();
    std::fill(a, a + M * Kp, uint8_t(0));
    std::vector<uint32_t> sums(static_cast<size_t>(M), 0);
    const uint8_t* raw = w_signed ? reinterpret_cast<const uint8_t*>(wt.data<int8_t>()) : wt.data<uint8_t>();
    for (int64_t m = 0; m < M; ++m)
      for (int64_t c = 0; c < Cg; ++c)
        for (int64_t t = 0; t < ksp; ++t) {
          const uint8_t v = uint8_t(raw[(m * Cg + c) * ksp + t] ^ (w_signed ? 0x80 : 0));
          a[m * Kp + t * Cq * 4 + c] = v;
          sums[size_t(m)] += v;
        }
    if (M > 0) std::memcpy(a + M * Kp, sums.data(), size_t(M) * sizeof(uint32_t));
    return t;
  };
  const Tensor* wa = ctx.ConstDerived(w_in, "W u8 quads", make_a);
  Tensor local;
  if (!wa) {
    local = make_a(w);
    wa = &local;
  }
  const uint8_t* wq = wa->data<uint8_t>();
  thread_local std::vector<uint32_t> rowsum_buf, zw_buf;  // reused: no allocation per run
  std::vector<uint32_t>& rowsum = rowsum_buf;
  std::vector<uint32_t>& zw = zw_buf;
  rowsum.resize(size_t(M));
  zw.resize(size_t(M));
  std::memcpy(rowsum.data(), wq + M * Kp, size_t(M) * sizeof(uint32_t));
  for (int64_t m = 0; m < M; ++m) {
    const int32_t wz = wzp && wzp->numel() ? int32_t(ElementAsDouble(*wzp, wzp->numel() > 1 ? m : 0)) : 0;
    zw[size_t(m)] = uint32_t(wz + (w_signed ? 128 : 0));
  }
  const int8_t zx = int8_t(int32_t(xz) - (x_unsigned ? 128 : 0));
  uint32_t zx_word;  // four bytes of ZX
  std::memset(&zx_word, int(uint8_t(zx)), sizeof zx_word);
  // X' per image and group, pixel-major with Cq quads of channels (reused per calling
  // thread; the workers reach it through the reference), and each pixel's channel sum.
  thread_local std::vector<uint32_t> xt_buf, pix_buf;
  std::vector<uint32_t>& xt = xt_buf;
  std::vector<uint32_t>& pixsum = pix_buf;
  const int64_t planes = N * group;
  if (xt.size() < size_t(planes * in_sp * Cq)) xt.resize(size_t(planes * in_sp * Cq));
  if (pixsum.size() < size_t(planes * in_sp)) pixsum.resize(size_t(planes * in_sp));
  const uint8_t* xraw = x_unsigned ? x.data<uint8_t>() : reinterpret_cast<const uint8_t*>(x.data<int8_t>());
  const uint8_t flip = x_unsigned ? 0x80 : 0;
  ParallelFor(ctx, planes * pl.IH, 1, [&](int64_t b, int64_t e) {
    for (int64_t t = b; t < e; ++t) {
      const int64_t ng = t / pl.IH, ih = t % pl.IH, n = ng / group, grp = ng % group;
      const uint8_t* src = xraw + (n * C + grp * Cg) * in_sp + ih * pl.IW;
      uint8_t* dst = reinterpret_cast<uint8_t*>(xt.data() + (ng * in_sp + ih * pl.IW) * Cq);
      for (int64_t iw = 0; iw < pl.IW; ++iw) {
        uint8_t* px = dst + iw * Cq * 4;
        int32_t s = 0;
        for (int64_t c = 0; c < Cg; ++c) s += int8_t(px[c] = uint8_t(src[c * in_sp + iw] ^ flip));
        for (int64_t c = Cg; c < Cq * 4; ++c) s += int8_t(px[c] = uint8_t(zx));
        pixsum[size_t(ng * in_sp + ih * pl.IW + iw)] = uint32_t(s);
      }
    }
  });
  const uint32_t pad_sum = uint32_t(int32_t(zx) * int32_t(Cq * 4));
  // Column blocks of about 512 KiB of quads, at least 64 columns.
  const int64_t pc = std::max<int64_t>(64, std::min<int64_t>(P, (int64_t(1) << 19) / std::max<int64_t>(Kp, 1)));
  const int64_t blocks = (P + pc - 1) / pc;
  auto* kernel = ctx.kernels->GemmU8S8I32;
  ParallelFor(ctx, planes * blocks, 1, [&](int64_t b, int64_t e) {
    thread_local std::vector<uint32_t> col;
    thread_local std::vector<uint32_t> colsum;
    if (col.size() < size_t(Kp / 4 * pc)) col.resize(size_t(Kp / 4 * pc));
    if (colsum.size() < size_t(pc)) colsum.resize(size_t(pc));
    for (int64_t t = b; t < e; ++t) {
      const int64_t ng = t / blocks, n = ng / group, grp = ng % group, p0 = t % blocks * pc, np = std::min(pc, P - p0);
      const uint32_t* xg = xt.data() + ng * in_sp * Cq;
      const uint32_t* sg = pixsum.data() + ng * in_sp;
      uint32_t* cb = col.data();  // quad q of column i at cb[q * np + i]
      std::fill(colsum.begin(), colsum.begin() + np, 0u);
      for (int64_t tap = 0; tap < ksp; ++tap) {
        const int64_t kh = tap / pl.KW, kw = tap % pl.KW;
        uint32_t* dq = cb + tap * Cq * np;
        int64_t oh = p0 / pl.OW, ow = p0 % pl.OW;
        for (int64_t i = 0; i < np;) {
          const int64_t run = std::min(np - i, pl.OW - ow);  // the rest of output row oh
          const int64_t ih = oh * pl.SH - pl.PH + kh * pl.DH;
          for (int64_t j = 0; j < run; ++j) {
            const int64_t iw = (ow + j) * pl.SW - pl.PW + kw * pl.DW, col_i = i + j;
            if (ih >= 0 && ih < pl.IH && iw >= 0 && iw < pl.IW) {
              const uint32_t* px = xg + (ih * pl.IW + iw) * Cq;
              for (int64_t q = 0; q < Cq; ++q) dq[q * np + col_i] = px[q];
              colsum[size_t(col_i)] += sg[ih * pl.IW + iw];
            } else {
              for (int64_t q = 0; q < Cq; ++q) dq[q * np + col_i] = zx_word;
              colsum[size_t(col_i)] += pad_sum;
            }
          }
          i += run;
          ow = 0;
          ++oh;
        }
      }
      int32_t* y = acc_out + (n * M + grp * Mg) * P + p0;
      kernel(Mg, np, Kp / 4, wq + grp * Mg * Kp, Kp, reinterpret_cast<const int8_t*>(cb), 4 * np, y, P);
      for (int64_t m = 0; m < Mg; ++m) {
        const int64_t mm = grp * Mg + m;
        const uint32_t z = zw[size_t(mm)],
                       row = uint32_t(Kp) * z * uint32_t(int32_t(zx)) - uint32_t(int32_t(zx)) * rowsum[size_t(mm)];
        uint32_t* yr = reinterpret_cast<uint32_t*>(y + m * P);
        for (int64_t i = 0; i < np; ++i) yr[i] += row - z * colsum[size_t(i)];
      }
    }
  });
}

// The int32 sums, written to output(shape) (a buffer of the result's shape, contents
// undefined).
void IntConv(OpContext& ctx, const Tensor& x, const Tensor& w, const Tensor* xzp, const Tensor* wzp,
             FunctionRef<int32_t*(const Shape&)> output, size_t w_in, size_t wzp_in) {
  // The operator's types: X and W 8-bit, each zero point of its operand's type (ONNX's T1,
  // T2). Another type would be read as bytes, differently by the paths.
  for (const Tensor* t : {&x, &w})
    if (t->dtype() != DType::kInt8 && t->dtype() != DType::kUInt8)
      throw ctx.Fail(ErrorCode::kTypeMismatch,
                     std::string(t == &x ? "X" : "W") + " must be int8 or uint8, got " + DTypeName(t->dtype()));
  if (xzp && xzp->dtype() != x.dtype())
    throw ctx.Fail(ErrorCode::kTypeMismatch, "x_zero_point must have X's element type " + DTypeName(x.dtype()) +
                                                 ", got " + DTypeName(xzp->dtype()));
  if (wzp && wzp->dtype() != w.dtype())
    throw ctx.Fail(ErrorCode::kTypeMismatch, "w_zero_point must have W's element type " + DTypeName(w.dtype()) +
                                                 ", got " + DTypeName(wzp->dtype()));
  const int64_t group = ctx.attr_i("group", 1);
  if (w.rank() < 3 || x.rank() != w.rank())
    throw ctx.Fail(ErrorCode::kShapeMismatch, "X and W must have the same rank, at least 3");
  std::vector<int64_t> kernel = ctx.attr_ints("kernel_shape", Shape(w.shape().begin() + 2, w.shape().end()));
  const ConvGeometry g = MakeGeometry(ctx, x.shape(), kernel, false);
  const int64_t N = x.shape()[0], C = x.shape()[1], M = w.shape()[0];
  if (group <= 0 || C % group || M % group || w.shape()[1] != C / group)
    throw ctx.Fail(ErrorCode::kShapeMismatch, "input, weight and group do not agree");
  const int64_t Cg = C / group, Mg = M / group;
  auto get = [](const Tensor& t, int64_t i) -> int64_t {
    return t.dtype() == DType::kInt8 ? int64_t(t.data<int8_t>()[i]) : int64_t(t.data<uint8_t>()[i]);
  };
  const int64_t xz = xzp && xzp->numel() ? get(*xzp, 0) : 0;
  Shape out_shape{N, M};
  out_shape.insert(out_shape.end(), g.out.begin(), g.out.end());
  const int64_t in_sp = ProductOf(g.in), out_sp = ProductOf(g.out), k_sp = ProductOf(g.kernel);
  std::vector<int64_t> in_st(size_t(g.dims), 1);
  for (int64_t d = g.dims - 1; d > 0; --d) in_st[size_t(d - 1)] = in_st[size_t(d)] * g.in[size_t(d)];
  int32_t* acc_out = output(out_shape);  // the fast paths write every element
  const bool is8 = (x.dtype() == DType::kInt8 || x.dtype() == DType::kUInt8) &&
                   (w.dtype() == DType::kInt8 || w.dtype() == DType::kUInt8);
  const bool gemm_fits = g.dims <= 2 && is8 && (!wzp || wzp->numel() <= 1 || wzp->numel() == M);
  // On dot-product instructions the raw operands go in quads (IntConvDot), else in pairs.
  const IntConvAlgo fast = ctx.kernels->native_dot_u8s8 ? IntConvAlgo::kU8S8Dot : IntConvAlgo::kI16Pairs;
  const IntConvAlgo algo =
      ChooseAlgorithm(ctx, kAllIntConvAlgos, IntConvAlgoName, gemm_fits ? fast : kAllIntConvAlgos[0],
                      [&](IntConvAlgo a) { return a == IntConvAlgo::kReference || gemm_fits; });
  if (algo == IntConvAlgo::kU8S8Dot) {
    IntConvDot(ctx, MakeConvPlane(g), x, w, xz, wzp, N, C, M, group, w_in, acc_out);
    return;
  }
  if (algo == IntConvAlgo::kI16Pairs) {
    IntConvGemm(ctx, MakeConvPlane(g), x, w, xz, wzp, N, C, M, group, w_in, wzp_in, acc_out);
    return;
  }
  std::fill(acc_out, acc_out + N * M * out_sp, 0);
  // Operands minus their zero points, read once; padding taps are skipped (as padding
  // with the zero point). Sums modulo 2^32 do not depend on the order of the terms.
  std::vector<uint32_t> xc(static_cast<size_t>(x.numel())), wc(static_cast<size_t>(w.numel()));
  for (int64_t i = 0; i < x.numel(); ++i) xc[size_t(i)] = uint32_t(get(x, i) - xz);
  for (int64_t i = 0; i < w.numel(); ++i) {
    const int64_t m = i / (Cg * k_sp);
    const int64_t wz = wzp && wzp->numel() ? get(*wzp, wzp->numel() > 1 ? m : 0) : 0;
    wc[size_t(i)] = uint32_t(get(w, i) - wz);
  }
  if (g.dims <= 2) {  // as Conv's 1-D/2-D path: a plane of accumulators per output channel
    const ConvPlane pl = MakeConvPlane(g);
    std::vector<uint32_t> plane(static_cast<size_t>(pl.OH * pl.OW));
    for (int64_t n = 0; n < N; ++n)
      for (int64_t m = 0; m < M; ++m) {
        const int64_t grp = m / Mg;
        std::fill(plane.begin(), plane.end(), 0u);
        for (int64_t c = 0; c < Cg; ++c) {
          const uint32_t* xp = xc.data() + (n * C + grp * Cg + c) * in_sp;
          const uint32_t* wp = wc.data() + (m * Cg + c) * k_sp;
          ref::AccumulatePlane<uint32_t>(pl, xp, wp, plane.data());
        }
        for (int64_t o = 0; o < pl.OH * pl.OW; ++o)
          acc_out[size_t((n * M + m) * out_sp + o)] = int32_t(plane[size_t(o)]);
      }
    return;
  }
  std::vector<int64_t> tap_off, tap_k;
  for (int64_t n = 0; n < N; ++n)
    ForEachIndex(g.out, [&](int64_t o, const std::vector<int64_t>& op) {
      ref::ListTaps(g, op, in_st, &tap_off, &tap_k);
      for (int64_t m = 0; m < M; ++m) {
        const int64_t grp = m / Mg;
        uint32_t acc = 0;
        for (int64_t c = 0; c < Cg; ++c) {
          const uint32_t* xp = xc.data() + (n * C + grp * Cg + c) * in_sp;
          const uint32_t* wp = wc.data() + (m * Cg + c) * k_sp;
          for (size_t t = 0; t < tap_off.size(); ++t) acc += xp[tap_off[t]] * wp[tap_k[t]];
        }
        acc_out[size_t((n * M + m) * out_sp + o)] = int32_t(acc);
      }
    });
}
}  // namespace

void ConvInteger(OpContext& ctx) {
  IntConv(
      ctx, ctx.in(0), ctx.in(1), ctx.has_input(2) ? &ctx.in(2) : nullptr, ctx.has_input(3) ? &ctx.in(3) : nullptr,
      [&](const Shape& s) { return ctx.out_uninit(0, DType::kInt32, s).mutable_data<int32_t>(); }, 1, 3);
}

// y = saturate(round_half_even((acc + bias) * m) + y_zp), m = x_scale * w_scale / y_scale
// in f32, the product in binary64 (as QLinearMatMul).
void QLinearConv(OpContext& ctx) {
  const Tensor& x = ctx.in(0);
  const Tensor& w = ctx.in(3);
  Shape s;
  thread_local std::vector<int32_t> acc;  // reused: no allocation per run
  IntConv(
      ctx, x, w, &ctx.in(2), &ctx.in(5),
      [&](const Shape& shape) {
        s = shape;
        acc.resize(size_t(ProductOf(shape)));
        return acc.data();
      },
      3, 5);
  const float xs = ctx.in(1).data<float>()[0], ys = ctx.in(6).data<float>()[0];
  const Tensor& wsc = ctx.in(4);
  const Tensor& yzp = ctx.in(7);
  const int64_t yz = yzp.dtype() == DType::kInt8 ? int64_t(yzp.data<int8_t>()[0]) : int64_t(yzp.data<uint8_t>()[0]);
  const int64_t M = s[1];
  int64_t sp = 1;
  for (size_t k = 2; k < s.size(); ++k) sp *= s[k];
  Tensor& y = ctx.out(0, yzp.dtype(), s);
  const double lo = yzp.dtype() == DType::kInt8 ? -128 : 0, hi = yzp.dtype() == DType::kInt8 ? 127 : 255;
  for (size_t i = 0; i < acc.size(); ++i) {
    const int64_t m = (int64_t(i) / sp) % M;
    const float wsv = wsc.data<float>()[wsc.numel() > 1 ? m : 0];
    const float mult = float(xs * wsv) / ys;
    int64_t a = acc[i];
    if (ctx.has_input(8)) a = int64_t(int32_t(uint32_t(a) + uint32_t(ctx.in(8).data<int32_t>()[m])));
    double v = math::RoundEvenD(double(a) * double(mult)) + double(yz);
    v = v < lo ? lo : v > hi ? hi : v;
    if (yzp.dtype() == DType::kInt8)
      y.mutable_data<int8_t>()[i] = int8_t(v);
    else
      y.mutable_data<uint8_t>()[i] = uint8_t(v);
  }
}

}  // namespace ops
}  // namespace onemodel::impl
