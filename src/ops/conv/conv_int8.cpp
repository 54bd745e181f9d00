// Fast mode's integer convolution (conv_int8.h).
#include "ops/conv/conv_int8.h"
#include "core/per_thread.h"
#include "core/scratch.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "ops/ops.h"
#include "ops/parallel.h"

namespace onemodel::impl {
namespace ops {

namespace {

// The packed weights (a uint8 tensor kept per session): a header word (1: on an int8
// grid, 0: not), M float scales, M int32 sums of each channel's codes, then the codes as
// GemmU8S8I32's B: quads of k for each output channel, k = (kh * KW + kw) * C4 + c (the
// order of the im2col rows of an NHWC input whose C channels are padded to C4, a multiple
// of 4, with zero codes), the output channels padded with zero codes to Mp,
// a multiple of 16 (every target's tiles then load whole vectors).
struct Int8Weights {
  bool ok = false;
  const float* scale = nullptr;
  const int32_t* sum = nullptr;
  const int8_t* quads = nullptr;
};

int64_t PaddedChannels(int64_t M) { return (M + 15) / 16 * 16; }
// The input channels of a position's bytes: C padded to quads (a network's first layer:
// 3 -> 4; the padding bytes meet zero codes).
int64_t Quads(int64_t C) { return (C + 3) / 4 * 4; }
int64_t PackedBytes(int64_t M, int64_t K) { return 4 + 8 * M + K * PaddedChannels(M); }

// The codes of one output channel's weights w[0..K) at scale s: q = RoundEven(w / s)
// when every q * s is w within 2^-18 of the largest weight amax (the rounding of a
// dequantisation), else false (at the first weight that is not).
bool Codes(const float* w, int64_t K, float s, float amax, int8_t* q) {
  for (int64_t k = 0; k < K; ++k) {
    const float v = s > 0.0f ? std::nearbyint(w[k] / s) : 0.0f;
    if (!(std::fabs(v) <= 127.0f) || std::fabs(v * s - w[k]) > std::ldexp(amax, -18)) return false;
    q[k] = int8_t(v);
  }
  return true;
}

// The scale of one channel: its largest weight is c * s for the code c of largest
// magnitude (127 where the quantiser used the whole range, less for a channel of a
// per-tensor scale or one that does not reach it); the first c from 127 down whose
// scale amax / c makes every weight a code. 0 when none does.
float ChannelScale(const float* w, int64_t K, float amax, int8_t* q) {
  if (amax == 0.0f) return Codes(w, K, 0.0f, amax, q) ? 1.0f : 0.0f;
  for (int c = 127; c >= 1; --c)
    if (Codes(w, K, amax / float(c), amax, q)) return amax / float(c);
  return 0.0f;
}

Tensor PackWeights(const Tensor& wt, int64_t M, int64_t C, int64_t KH, int64_t KW) {
  const int64_t K = C * KH * KW, KP = Quads(C) * KH * KW;
  Tensor out(DType::kUInt8, Shape{PackedBytes(M, KP)}, "int8 convolution weights");
  uint8_t* base = out.mutable_data<uint8_t>();
  const float* w = wt.data<float>();
  bool finite = true;
  for (int64_t i = 0; i < M * K; ++i) finite = finite && std::isfinite(w[i]);
  uint32_t ok_word = finite ? 1u : 0u;
  std::memcpy(base, &ok_word, 4);
  if (!finite) return out;
  float* scale = reinterpret_cast<float*>(base + 4);
  int32_t* sum = reinterpret_cast<int32_t*>(base + 4 + 4 * M);
  int8_t* quads = reinterpret_cast<int8_t*>(base + 4 + 8 * M);
  const int64_t Mp = PaddedChannels(M);
  std::memset(quads, 0, size_t(KP * Mp));
  std::vector<int8_t> q(static_cast<size_t>(K));
  for (int64_t m = 0; m < M; ++m) {
    const float* wm = w + m * K;
    float amax = 0.0f;
    for (int64_t k = 0; k < K; ++k) amax = std::max(amax, std::fabs(wm[k]));
    const float s = ChannelScale(wm, K, amax, q.data());
    if (s == 0.0f) {
      ok_word = 0;
      std::memcpy(base, &ok_word, 4);
      return out;
    }
    scale[m] = s;
    int32_t total = 0;
    // ONNX's weight order is [m][c][kh][kw]; the rows' order is (kh, kw, c).
    for (int64_t c = 0; c < C; ++c)
      for (int64_t t = 0; t < KH * KW; ++t) {
        const int64_t k = t * Quads(C) + c;
        const int8_t v = q[size_t(c * KH * KW + t)];
        quads[(k / 4) * 4 * Mp + 4 * m + k % 4] = v;
        total += v;
      }
    sum[m] = total;
  }
  return out;
}

Int8Weights WeightsView(const Tensor* t, int64_t M) {
  Int8Weights v;
  if (t == nullptr) return v;
  const uint8_t* base = t->data<uint8_t>();
  uint32_t ok = 0;
  std::memcpy(&ok, base, 4);
  v.ok = ok == 1;
  v.scale = reinterpret_cast<const float*>(base + 4);
  v.sum = reinterpret_cast<const int32_t*>(base + 4 + 4 * M);
  v.quads = reinterpret_cast<const int8_t*>(base + 4 + 8 * M);
  return v;
}

const Tensor* Packed(const OpContext& ctx, const ConvPlan& p) {
  return ctx.ConstDerived(1, "W int8 NHWC quads",
                          [&](const Tensor& w) { return PackWeights(w, p.M, p.C, p.pl.KH, p.pl.KW); });
}

// The input image's bytes, NHWC: q - lo of each value (its grid's integer), positions
// [p0, p1) of the plane.
void QuantizeRows(const OpContext& ctx, const ConvPlan& p, const float* x, int64_t p0, int64_t p1, uint8_t* xq) {
  const QuantGrid& g = p.grid;
  const int64_t C4 = Quads(p.C);
  ctx.kernels->QuantizeTransposeF32U8(x + p0, p.in_sp, p.C, p1 - p0, g.scale, g.zp - g.lo, 0, g.hi - g.lo, xq + p0 * C4,
                                      C4);
}

// The im2col rows (K bytes each, padding taps = the grid's zero) of output positions
// [o0, o0 + rows) from the NHWC bytes xq.
void Im2colRows(const ConvPlan& p, const uint8_t* xq, int64_t o0, int64_t rows, uint8_t zero, uint8_t* col) {
  const Conv2DGeometry& pl = p.pl;
  const int64_t C = Quads(p.C), K = C * pl.KH * pl.KW;
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t o = o0 + r, oh = o / pl.OW, ow = o % pl.OW;
    uint8_t* row = col + r * K;
    for (int64_t kh = 0; kh < pl.KH; ++kh) {
      const int64_t ih = oh * pl.SH - pl.PH + kh * pl.DH;
      for (int64_t kw = 0; kw < pl.KW; ++kw) {
        const int64_t iw = ow * pl.SW - pl.PW + kw * pl.DW;
        uint8_t* dst = row + (kh * pl.KW + kw) * C;
        const bool pad = ih < 0 || ih >= pl.IH || iw < 0 || iw >= pl.IW;
        if (C == 4) {  // a first layer's quad: one word, not a call
          if (pad)
            std::memset(dst, zero, 4);
          else
            std::memcpy(dst, xq + (ih * pl.IW + iw) * 4, 4);
        } else if (pad) {
          std::memset(dst, zero, size_t(C));
        } else {
          std::memcpy(dst, xq + (ih * pl.IW + iw) * C, size_t(C));
        }
      }
    }
  }
}

bool Pointwise(const ConvPlan& p) {
  const Conv2DGeometry& pl = p.pl;
  return pl.KH == 1 && pl.KW == 1 && pl.SH == 1 && pl.SW == 1 && pl.PH == 0 && pl.PW == 0 && pl.IH == pl.OH &&
         pl.IW == pl.OW;
}

}  // namespace

bool ConvInt8Fits(const ConvPlan& p) {
  return p.in_grid && p.grid.hi - p.grid.lo <= 255 && p.grid.lo <= p.grid.zp && p.grid.zp <= p.grid.hi &&
         p.g.dims == 2 && p.group == 1 && p.M >= 1 && Quads(p.C) * p.pl.KH * p.pl.KW <= 65536 &&
         (p.act == Activation::kNone || p.act == Activation::kRelu);
}

bool ConvInt8Chosen(const ConvPlan& p) { return p.native_dot && Quads(p.C) * p.pl.KH * p.pl.KW >= 64; }

bool ConvInt8Ready(const OpContext& ctx, const ConvPlan& p, const Tensor& w) {
  return w.dtype() == DType::kFloat && WeightsView(Packed(ctx, p), p.M).ok;
}

void RunConvInt8(const OpContext& ctx, const ConvPlan& p, const float* x, const float* bias, float* y) {
  const Int8Weights wq = WeightsView(Packed(ctx, p), p.M);
  const int64_t C = Quads(p.C), M = p.M, Mp = PaddedChannels(M), K = C * p.pl.KH * p.pl.KW, K4 = K / 4, P = p.out_sp;
  const uint8_t zero = uint8_t(p.grid.zp - p.grid.lo);
  // Per output channel: the zero point's share of the sum, and the combined scale.
  auto& sub_buf = ONEMODEL_PER_THREAD(ScratchVector<int32_t>);
  auto& scale_buf = ONEMODEL_PER_THREAD(ScratchVector<float>);
  auto& xq_buf = ONEMODEL_PER_THREAD(ScratchVector<uint8_t>);
  ScratchVector<int32_t>& sub = sub_buf;
  ScratchVector<float>& scale = scale_buf;
  ScratchVector<uint8_t>& xq = xq_buf;
  sub.resize(size_t(M));
  scale.resize(size_t(M));
  for (int64_t m = 0; m < M; ++m) {
    sub[size_t(m)] = int32_t(zero) * wq.sum[m];
    scale[size_t(m)] = p.grid.scale * wq.scale[m];
  }
  // Padding channels' bytes are never written: zero codes make them count for nothing,
  // and the buffer starts zeroed so they are never uninitialised.
  xq.resize(size_t(p.in_sp * C));
  ref::QdqArgs qdq;
  if (p.qdq) {
    const QdqParams& q = p.qdq_params;
    qdq = ref::QdqArgs{q.scale, q.zp, q.lo, q.hi, q.dq_scale, q.dq_zp};
  }
  const int threads = ctx.pool ? ctx.pool->threads() : 1;
  // Rows of output positions per chunk: their im2col bytes within 256 KiB and their int32
  // sums within 128 KiB (both stay in L2 for the epilogue), a multiple of 16, and enough
  // chunks for every thread.
  int64_t R = std::clamp<int64_t>(std::min(262144 / K, 32768 / Mp) / 16 * 16, 16, 1024);
  R = std::min(R, std::max<int64_t>(16, (P / (2 * threads) + 15) / 16 * 16));
  const int64_t chunks = (P + R - 1) / R;
  const bool pointwise = Pointwise(p);
  for (int64_t n = 0; n < p.N; ++n) {
    const float* xn = x + n * p.C * p.in_sp;
    float* yn = y + n * M * P;
    ParallelFor(ctx, (p.in_sp + 63) / 64, std::max<int64_t>(1, 64 / C), [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) QuantizeRows(ctx, p, xn, i * 64, std::min(p.in_sp, i * 64 + 64), xq.data());
    });
    ParallelFor(ctx, chunks, 1, [&](int64_t b, int64_t e) {
      auto& col = ONEMODEL_PER_THREAD(std::vector<uint8_t>);
      auto& acc = ONEMODEL_PER_THREAD(std::vector<int32_t>);
      acc.resize(size_t(R * Mp));
      if (!pointwise) col.resize(size_t(R * K));
      for (int64_t i = b; i < e; ++i) {
        const int64_t o0 = i * R, rows = std::min(R, P - o0);
        const uint8_t* a = xq.data() + o0 * C;
        if (!pointwise) {
          Im2colRows(p, xq.data(), o0, rows, zero, col.data());
          a = col.data();
        }
        ctx.kernels->GemmU8S8I32(rows, Mp, K4, a, K, wq.quads, 4 * Mp, acc.data(), Mp);
        ctx.kernels->DequantTransposeI32F32(rows, M, acc.data(), Mp, sub.data(), scale.data(), bias,
                                            p.act == Activation::kRelu ? 1 : 0, p.qdq ? &qdq : nullptr, yn + o0, P);
      }
    });
  }
}

}  // namespace ops
}  // namespace onemodel::impl
