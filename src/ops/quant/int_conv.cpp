// ConvInteger and QLinearConv: the node validated into its parameters (ref/quant.h's
// IntConvParams), then the int32 sums by the row the family's table plans (ops/quant/int_conv.h),
// the reference's (ref::ConvIntegerI32) or a GEMM of 8-bit operands. Sums modulo 2^32 do
// not depend on the order of their terms, so every row gives the same bits. QLinearConv
// requantises the sums as the reference does (ref::QLinearConvOutput).
// Reference src/ref/quant.cpp; kernels src/kernels/gemm_int.cpp; tests
// tests/ops/quant/quant_test.cpp.
#include "ops/quant/int_conv.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "core/per_thread.h"
#include "ops/conv/conv_common.h"
#include "ops/ops.h"
#include "ref/conv.h"
#include "ref/quant.h"

namespace onemodel::impl {
namespace ops {

// One run of an integer convolution row: X, W and W's zero point (null: none), the int32
// sums (N x M x out, contents undefined), and the node's input indices of W and its zero
// point (for the weight layouts kept per session when they are constants).
struct IntConvRun {
  OpContext& ctx;
  const Tensor& x;
  const Tensor& w;
  const Tensor* wzp;
  int32_t* acc;
  size_t w_in, wzp_in;
};

namespace {
// The i16-pairs row (1-D/2-D) on the integer GEMM kernel (GemmI16PairsI32): per image and
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
  auto& xc_buf = ONEMODEL_PER_THREAD(std::vector<int16_t>);
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
    auto& col = ONEMODEL_PER_THREAD(std::vector<int16_t>);
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

// IntConvDot's X': per image and group, quad-major: word q of pixel p (channels 4q..4q+3
// minus 128 for uint8 X, the lowest first; ZX past Cg) at xt[(ng * Cq + q) * in_sp + p],
// so that a column block's rows are runs copied from X' rows; and each pixel's channel
// sum (of the Cq * 4 bytes, as int8) at pixsum[ng * in_sp + p].
void QuadMajorInput(OpContext& ctx, const Tensor& x, int8_t zx, int64_t N, int64_t C, int64_t group, int64_t in_sp,
                    std::vector<uint32_t>& xt, std::vector<uint32_t>& pixsum) {
  const int64_t Cg = C / group, Cq = (Cg + 3) / 4, planes = N * group;
  const bool x_unsigned = x.dtype() == DType::kUInt8;
  if (xt.size() < size_t(planes * Cq * in_sp)) xt.resize(size_t(planes * Cq * in_sp));
  if (pixsum.size() < size_t(planes * in_sp)) pixsum.resize(size_t(planes * in_sp));
  const uint8_t* xraw = x_unsigned ? x.data<uint8_t>() : reinterpret_cast<const uint8_t*>(x.data<int8_t>());
  const uint8_t flip = x_unsigned ? 0x80 : 0;
  ParallelFor(ctx, planes * Cq, 1, [&](int64_t b, int64_t e) {
    for (int64_t t = b; t < e; ++t) {
      const int64_t ng = t / Cq, q = t % Cq, n = ng / group, grp = ng % group;
      const uint8_t* src = xraw + (n * C + grp * Cg + 4 * q) * in_sp;
      // A quad is its four bytes in memory order (the GEMM reads them as byte lanes), on
      // hosts of either byte order.
      uint8_t* dst = reinterpret_cast<uint8_t*>(xt.data() + t * in_sp);
      if (4 * q + 4 <= Cg) {
        for (int64_t i = 0; i < in_sp; ++i)
          for (int64_t j = 0; j < 4; ++j) dst[4 * i + j] = uint8_t(src[j * in_sp + i] ^ flip);
      } else {
        for (int64_t i = 0; i < in_sp; ++i)
          for (int64_t j = 0; j < 4; ++j)
            dst[4 * i + j] = 4 * q + j < Cg ? uint8_t(src[j * in_sp + i] ^ flip) : uint8_t(zx);
      }
    }
  });
  ParallelFor(ctx, planes, 1, [&](int64_t b, int64_t e) {
    for (int64_t ng = b; ng < e; ++ng) {
      const int64_t n = ng / group, grp = ng % group;
      const uint8_t* src = xraw + (n * C + grp * Cg) * in_sp;
      uint32_t* sum = pixsum.data() + ng * in_sp;
      std::fill(sum, sum + in_sp, uint32_t(int32_t(zx) * int32_t(Cq * 4 - Cg)));
      for (int64_t c = 0; c < Cg; ++c)
        for (int64_t i = 0; i < in_sp; ++i) sum[i] += uint32_t(int32_t(int8_t(uint8_t(src[c * in_sp + i] ^ flip))));
    }
  });
}

// The u8s8-dot row (1-D/2-D) on GemmU8S8I32: Y[Mg x P] = W'[Mg x Kp] * col'[Kp x P] on raw
// 8-bit values, W' = w (uint8 W) or w + 128 (int8 W: ca = -128), col' = x - 128 (uint8 X:
// cb = 128) or x (int8 X), with k running over (kh, kw, channel) and the channels padded
// to Cq quads: X' is laid out per pixel (channels innermost), so each quad of col' is one
// 32-bit word of X'. Padding taps and padded channels hold ZX = xz - cb (x - xz = 0 there,
// as a skipped tap; padded channels meet zero weights). With ZW = wz - ca:
// sum (W' - ZW)(col' - ZX) = sum W'col' - ZX rowsum W' - ZW colsum col' + Kp ZW ZX, all
// modulo 2^32 (ops/quant/quant.cpp's IntMatMulDot derives the same identity); colsum col'
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
  auto& rowsum_buf = ONEMODEL_PER_THREAD(std::vector<uint32_t>);
  auto& zw_buf = ONEMODEL_PER_THREAD(std::vector<uint32_t>);  // reused: no allocation per run
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
  // X' and the pixel sums (QuadMajorInput), reused per calling thread (the workers reach
  // them through the references).
  auto& xt_buf = ONEMODEL_PER_THREAD(std::vector<uint32_t>);
  auto& pix_buf = ONEMODEL_PER_THREAD(std::vector<uint32_t>);
  std::vector<uint32_t>& xt = xt_buf;
  std::vector<uint32_t>& pixsum = pix_buf;
  const int64_t planes = N * group;
  QuadMajorInput(ctx, x, zx, N, C, group, in_sp, xt, pixsum);
  const uint32_t pad_sum = uint32_t(int32_t(zx) * int32_t(Cq * 4));
  // Column blocks of about 512 KiB of quads, at least 64 columns.
  const int64_t pc = std::max<int64_t>(64, std::min<int64_t>(P, (int64_t(1) << 19) / std::max<int64_t>(Kp, 1)));
  const int64_t blocks = (P + pc - 1) / pc;
  auto* kernel = ctx.kernels->GemmU8S8I32;
  ParallelFor(ctx, planes * blocks, 1, [&](int64_t b, int64_t e) {
    auto& col = ONEMODEL_PER_THREAD(std::vector<uint32_t>);
    auto& colsum = ONEMODEL_PER_THREAD(std::vector<uint32_t>);
    if (col.size() < size_t(Kp / 4 * pc)) col.resize(size_t(Kp / 4 * pc));
    if (colsum.size() < size_t(pc)) colsum.resize(size_t(pc));
    for (int64_t t = b; t < e; ++t) {
      const int64_t ng = t / blocks, n = ng / group, grp = ng % group, p0 = t % blocks * pc, np = std::min(pc, P - p0);
      const uint32_t* xg = xt.data() + ng * Cq * in_sp;
      const uint32_t* sg = pixsum.data() + ng * in_sp;
      uint32_t* cb = col.data();  // quad q of column i at cb[q * np + i]
      std::fill(colsum.begin(), colsum.begin() + np, 0u);
      for (int64_t tap = 0; tap < ksp; ++tap) {
        const int64_t kh = tap / pl.KW, kw = tap % pl.KW;
        uint32_t* dq = cb + tap * Cq * np;
        int64_t oh = p0 / pl.OW, ow = p0 % pl.OW;
        for (int64_t i = 0; i < np;) {
          const int64_t run = std::min(np - i, pl.OW - ow);  // the rest of output row oh
          const int64_t ih = oh * pl.SH - pl.PH + kh * pl.DH, iw0 = ow * pl.SW - pl.PW + kw * pl.DW;
          // The run's columns [j0, j1) read input pixels (ih, iw0 + j * SW); the others are
          // padding taps.
          int64_t j0 = run, j1 = run;
          if (ih >= 0 && ih < pl.IH) {
            j0 = iw0 >= 0 ? 0 : std::min(run, (-iw0 + pl.SW - 1) / pl.SW);
            j1 = iw0 >= pl.IW ? 0 : std::min(run, (pl.IW - 1 - iw0) / pl.SW + 1);
          }
          if (j0 >= j1) j0 = j1 = run;
          // The input pixel of column j in [j0, j1): first + (j - j0) * SW.
          const int64_t first = j1 > j0 ? ih * pl.IW + iw0 + j0 * pl.SW : 0;
          for (int64_t q = 0; q < Cq; ++q) {
            uint32_t* d = dq + q * np + i;
            const uint32_t* xr = xg + q * in_sp + first;
            std::fill(d, d + j0, zx_word);
            if (pl.SW == 1) {
              if (j1 > j0) std::memcpy(d + j0, xr, size_t(j1 - j0) * sizeof(uint32_t));
            } else {
              for (int64_t j = j0; j < j1; ++j) d[j] = xr[(j - j0) * pl.SW];
            }
            std::fill(d + j1, d + run, zx_word);
          }
          uint32_t* cs = colsum.data() + i;
          for (int64_t j = 0; j < j0; ++j) cs[j] += pad_sum;
          for (int64_t j = j0; j < j1; ++j) cs[j] += sg[first + (j - j0) * pl.SW];
          for (int64_t j = j1; j < run; ++j) cs[j] += pad_sum;
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

void RunIntConvReference(const IntConvNode& p, const IntConvRun& r) { ref::ConvIntegerI32(p, r.x, r.w, r.wzp, r.acc); }
void RunIntConvPairs(const IntConvNode& p, const IntConvRun& r) {
  IntConvGemm(r.ctx, MakeConvPlane(p.g), r.x, r.w, p.x_zero, r.wzp, p.N, p.C, p.M, p.group, r.w_in, r.wzp_in, r.acc);
}
void RunIntConvDot(const IntConvNode& p, const IntConvRun& r) {
  IntConvDot(r.ctx, MakeConvPlane(p.g), r.x, r.w, p.x_zero, r.wzp, p.N, p.C, p.M, p.group, r.w_in, r.acc);
}

// Automatic planning: the GEMM rows for 1-D and 2-D, the raw operands in quads on
// dot-product instructions (IntConvDot), else in pairs (IntConvGemm).
bool GemmFits(const IntConvNode& p) { return p.gemm_fits; }
bool PairsChosen(const IntConvNode& p) { return !p.native_dot; }
bool DotChosen(const IntConvNode& p) { return p.native_dot; }

constexpr const char* kIntConvOps[] = {"ConvInteger", "QLinearConv"};
constexpr AlgorithmRow<IntConvNode, IntConvRunFn> kIntConvRows[] = {
    {"reference", Exactness::kExact, "", nullptr, nullptr, RunIntConvReference},
    {"i16-pairs", Exactness::kExact, "GemmI16PairsI32", GemmFits, PairsChosen, RunIntConvPairs},
    {"u8s8-dot", Exactness::kExact, "GemmU8S8I32", GemmFits, DotChosen, RunIntConvDot},
};

// Validates an integer convolution: X and W 8-bit of the same rank >= 3, each zero point
// of its operand's type (ONNX's T1, T2: another type would be read as bytes, differently
// by the rows), W's zero points a scalar or one per output channel, the geometry from
// the attributes, input, weight and group agreeing.
IntConvNode ParseIntConv(const OpContext& ctx, const Tensor& x, const Tensor& w, const Tensor* xzp, const Tensor* wzp) {
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
  IntConvNode p;
  const int64_t group = p.group = ctx.attr_i("group", 1);
  if (w.rank() < 3 || x.rank() != w.rank())
    throw ctx.Fail(ErrorCode::kShapeMismatch, "X and W must have the same rank, at least 3");
  p.g = MakeGeometry(ctx, x.shape(), KernelShape(ctx, w), false);
  const ConvGeometry& g = p.g;
  const int64_t N = p.N = x.shape()[0], C = p.C = x.shape()[1], M = p.M = w.shape()[0];
  if (group <= 0 || C % group || M % group || w.shape()[1] != C / group)
    throw ctx.Fail(ErrorCode::kShapeMismatch, "input, weight and group do not agree");
  if (wzp && wzp->numel() > 1 && wzp->numel() != M)
    throw ctx.Fail(ErrorCode::kShapeMismatch, "w_zero_point must be a scalar or hold one value per output channel");
  p.Cg = C / group;
  p.Mg = M / group;
  p.x_zero = !xzp || !xzp->numel()          ? 0
             : xzp->dtype() == DType::kInt8 ? int64_t(xzp->data<int8_t>()[0])
                                            : int64_t(xzp->data<uint8_t>()[0]);
  p.out_shape = Shape{N, M};
  p.out_shape.insert(p.out_shape.end(), g.out.begin(), g.out.end());
  p.in_sp = ProductOf(g.in);
  p.out_sp = ProductOf(g.out);
  p.k_sp = ProductOf(g.kernel);
  p.in_st.assign(size_t(g.dims), 1);
  for (int64_t d = g.dims - 1; d > 0; --d) p.in_st[size_t(d - 1)] = p.in_st[size_t(d)] * g.in[size_t(d)];
  p.gemm_fits = g.dims <= 2;  // X and W 8-bit, W's zero points a scalar or one per channel: checked above
  p.native_dot = ctx.kernels->native_dot_u8s8;
  return p;
}

}  // namespace

const FamilyTable<IntConvNode, IntConvRunFn>& IntConvTable() {
  static constexpr FamilyTable<IntConvNode, IntConvRunFn> kTable{"int_conv", kIntConvOps, kIntConvRows};
  return kTable;
}

void ConvInteger(OpContext& ctx) {
  const Tensor& x = ctx.in(0);
  const Tensor& w = ctx.in(1);
  const Tensor* wzp = ctx.has_input(3) ? &ctx.in(3) : nullptr;
  const IntConvNode p = ParseIntConv(ctx, x, w, ctx.has_input(2) ? &ctx.in(2) : nullptr, wzp);
  const auto& row = PlanRow(ctx, IntConvTable(), p);
  int32_t* acc = ctx.out_uninit(0, DType::kInt32, p.out_shape).mutable_data<int32_t>();  // every row writes it all
  row.run(p, IntConvRun{ctx, x, w, wzp, acc, 1, 3});
}

// The int32 sums by the planned row, then the reference's requantisation
// (ref::QLinearConvOutput): y = saturate(round_half_even((acc + bias) * m) + y_zp),
// m = x_scale * w_scale / y_scale in f32, the product in binary64 (as QLinearMatMul).
void QLinearConv(OpContext& ctx) {
  const Tensor& x = ctx.in(0);
  const Tensor& w = ctx.in(3);
  const Tensor& wsc = ctx.in(4);
  const Tensor& yzp = ctx.in(7);
  IntConvNode p = ParseIntConv(ctx, x, w, &ctx.in(2), &ctx.in(5));
  if (wsc.numel() != 1 && wsc.numel() != p.M)
    throw ctx.Fail(ErrorCode::kShapeMismatch, "w_scale must be a scalar or hold one value per output channel");
  const int32_t* bias = ctx.has_input(8) ? ctx.in(8).data<int32_t>() : nullptr;
  if (bias && ctx.in(8).numel() != p.M)
    throw ctx.Fail(ErrorCode::kShapeMismatch, "B must hold one value per output channel");
  p.x_scale = ctx.in(1).data<float>()[0];
  p.y_scale = ctx.in(6).data<float>()[0];
  p.y_signed = yzp.dtype() == DType::kInt8;
  p.y_zero = p.y_signed ? int64_t(yzp.data<int8_t>()[0]) : int64_t(yzp.data<uint8_t>()[0]);
  const auto& row = PlanRow(ctx, IntConvTable(), p);
  auto& acc = ONEMODEL_PER_THREAD(std::vector<int32_t>);  // reused: no allocation per run
  acc.resize(size_t(ProductOf(p.out_shape)));
  row.run(p, IntConvRun{ctx, x, w, &ctx.in(5), acc.data(), 3, 5});
  Tensor& y = ctx.out(0, yzp.dtype(), p.out_shape);
  ref::QLinearConvOutput(p, acc.data(), wsc.data<float>(), wsc.numel(), bias, y);
}

}  // namespace ops
}  // namespace onemodel::impl
