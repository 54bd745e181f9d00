// ConvTranspose: its plans (the reference loops, the patch GEMM, stride phases by taps).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>

#include "ops/conv/conv_transpose.h"
#include "core/per_thread.h"
#include "core/scratch.h"

#include "ops/conv/conv_common.h"
#include "ops/conv/conv_gemm.h"
#include "ops/fused/fused.h"
#include "ops/ops.h"
#include "ref/conv.h"
#include "ref/conv_transpose.h"
#include "ref/elementwise.h"
#include "ref/gemm.h"
#include "ref/math.h"

namespace onemodel::impl {
namespace ops {

// What ConvTranspose derives from its attributes and its input and weight shapes, kept
// per node (OpContext::Prepared): the reference's geometry, and the vector rows' extras.
struct ConvTPrep : ConvInputs, ConvTransposeGeometry {
  std::vector<int64_t> kst, ost;  // the kernel's and the output's row-major strides
  Shape out_shape;
  bool patch = false;  // the patch algorithm's geometry (RunPatchGemm)
  size_t row = 0;      // the planned row of ConvTransposeTable
  // The stride phases' stride-1 convolutions (see ConvTranspose).
  struct Phase {
    std::vector<int64_t> r, j0;
    Taps tg;
    std::vector<int64_t> kt;  // tap t's kernel position
    int64_t T = 0, P = 0;
  };
  std::vector<Phase> phases;
};

// One run of a planned row: the plan, the inputs as floats, the bias (null: none), y.
struct ConvTRun {
  OpContext& ctx;
  const ConvTPrep& P;
  const F32View& xv;
  const F32View& wv;
  const float* bias;
  Tensor& y;
};

namespace {

// The stride phases: per dimension, the outputs o with o + pad = j * stride + r take the
// kernel positions k with k * dilation = r (mod stride), each from input
// j - (k * dilation - r) / stride.
void MakePhases(ConvTPrep* pp) {
  ConvTPrep& P = *pp;
  const int64_t D = P.D;
  const std::vector<int64_t>&kernel = P.kernel, &in = P.in, &stride = P.stride, &dil = P.dil, &out = P.out, &pb = P.pb;
  const size_t Du = size_t(D);
  auto floor_div = [](int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); };
  for (int64_t ph = 0, phases = ProductOf(stride); ph < phases; ++ph) {
    ConvTPrep::Phase f;
    f.r.assign(Du, 0);
    f.j0.assign(Du, 0);
    int64_t rest = ph;
    for (size_t d = Du; d-- > 0;) {
      f.r[d] = rest % stride[d];
      rest /= stride[d];
    }
    f.tg = Taps{in, {}, std::vector<int64_t>(Du, 1), {}};
    std::vector<std::vector<int64_t>> ks(Du);  // the phase's kernel positions per dimension
    bool none = false;
    for (size_t d = 0; d < Du; ++d) {
      f.j0[d] = floor_div(pb[d] - f.r[d] + stride[d] - 1, stride[d]);
      const int64_t n_d = floor_div(out[d] - 1 + pb[d] - f.r[d], stride[d]) - f.j0[d] + 1;
      none |= n_d <= 0;
      f.tg.out.push_back(std::max<int64_t>(n_d, 0));
      std::vector<int64_t> b;
      for (int64_t k = 0; k < kernel[d]; ++k) {
        if (k * dil[d] % stride[d] != f.r[d]) continue;
        ks[d].push_back(k);
        b.push_back(f.j0[d] - (k * dil[d] - f.r[d]) / stride[d]);
      }
      f.tg.b.push_back(std::move(b));
    }
    if (none) continue;  // no output in this phase
    f.T = 1;
    f.P = 1;
    for (size_t d = 0; d < Du; ++d) {
      f.T *= int64_t(ks[d].size());
      f.P *= f.tg.out[d];
    }
    f.kt.assign(static_cast<size_t>(f.T), 0);
    for (int64_t t = 0; t < f.T; ++t) {
      int64_t tt = t, k = 0;
      for (size_t d = Du; d-- > 0;) {
        const int64_t nt = int64_t(ks[d].size());
        k += ks[d][size_t(tt % nt)] * P.kst[d];
        tt /= nt;
      }
      f.kt[size_t(t)] = k;
    }
    P.phases.push_back(std::move(f));
  }
}

std::shared_ptr<ConvTPrep> MakeConvTPrep(const OpContext& ctx, const Tensor& x, const Tensor& w) {
  auto pp = std::make_shared<ConvTPrep>();
  ConvTPrep& P = *pp;
  P.Set(ctx, x, w);
  const int64_t group = P.group = ctx.attr_i("group", 1);
  const int64_t D = P.D = x.rank() - 2;
  if (D < 1) throw ctx.Fail(ErrorCode::kShapeMismatch, "input must have rank >= 3");
  if (w.rank() != x.rank())
    throw ctx.Fail(ErrorCode::kShapeMismatch,
                   "weight " + ShapeToString(w.shape()) + " and input " + ShapeToString(x.shape()) + " differ in rank");
  const int64_t C = P.C = x.shape()[1];
  P.N = x.shape()[0];
  if (group <= 0 || C % group || w.shape()[0] != C)
    throw ctx.Fail(ErrorCode::kShapeMismatch, "weight and input channels disagree");
  P.Mg = w.shape()[1];
  P.M = P.Mg * group;
  P.Cg = C / group;
  std::vector<int64_t>& kernel = P.kernel;
  std::vector<int64_t>& in = P.in;
  std::vector<int64_t>& stride = P.stride;
  std::vector<int64_t>& dil = P.dil;
  kernel = KernelShape(ctx, w);
  in.assign(x.shape().begin() + 2, x.shape().end());
  stride = ctx.attr_ints("strides", std::vector<int64_t>(size_t(D), 1));
  dil = ctx.attr_ints("dilations", std::vector<int64_t>(size_t(D), 1));
  const auto opad = ctx.attr_ints("output_padding", std::vector<int64_t>(size_t(D), 0));
  const auto pads = ctx.attr_ints("pads", std::vector<int64_t>(size_t(2 * D), 0));
  if (int64_t(kernel.size()) != D || int64_t(stride.size()) != D || int64_t(dil.size()) != D ||
      int64_t(opad.size()) != D || int64_t(pads.size()) != 2 * D)
    throw ctx.Fail(ErrorCode::kInvalidModel,
                   "kernel_shape, strides, dilations, output_padding or pads have the wrong length");
  for (int64_t d = 0; d < D; ++d)
    if (stride[size_t(d)] <= 0 || dil[size_t(d)] <= 0)
      throw ctx.Fail(ErrorCode::kInvalidModel, "strides and dilations must be positive");
  const auto out_shape_attr = ctx.attr_ints("output_shape");
  if (!out_shape_attr.empty() && int64_t(out_shape_attr.size()) < D)
    throw ctx.Fail(ErrorCode::kInvalidModel, "output_shape has fewer values than spatial dimensions");
  const std::string ap = ctx.attr_s("auto_pad", "NOTSET");
  std::vector<int64_t>& out = P.out;
  std::vector<int64_t>& pb = P.pb;
  std::vector<int64_t>& pe = P.pe;
  out.assign(static_cast<size_t>(D), 0);
  pb.assign(static_cast<size_t>(D), 0);
  pe.assign(static_cast<size_t>(D), 0);
  for (int64_t d = 0; d < D; ++d) {
    const size_t i = size_t(d);
    const int64_t ek = (kernel[i] - 1) * dil[i] + 1;
    const int64_t full = stride[i] * (in[i] - 1) + opad[i] + ek;
    if (!out_shape_attr.empty() && ap != "SAME_UPPER" && ap != "SAME_LOWER") {
      // As ONNX's reference: explicit pads (default 0) and the requested size.
      pb[i] = pads[i];
      pe[i] = pads[i + size_t(D)];
      out[i] = out_shape_attr[out_shape_attr.size() - size_t(D) + i];
    } else if (ap == "SAME_UPPER" || ap == "SAME_LOWER") {
      const int64_t want =
          !out_shape_attr.empty() ? out_shape_attr[out_shape_attr.size() - size_t(D) + i] : in[i] * stride[i];
      const int64_t total = full - want;
      if (ap == "SAME_UPPER") {
        pb[i] = total / 2;
        pe[i] = total - total / 2;
      } else {
        pb[i] = total - total / 2;
        pe[i] = total / 2;
      }
      out[i] = want;
    } else {
      if (ap == "VALID") {
        pb[i] = pe[i] = 0;
      } else {
        pb[i] = pads[i];
        pe[i] = pads[i + size_t(D)];
      }
      out[i] = full - pb[i] - pe[i];
    }
  }
  P.out_shape = Shape{P.N, P.M};
  P.out_shape.insert(P.out_shape.end(), out.begin(), out.end());
  P.in_sp = ProductOf(in);
  P.out_sp = ProductOf(out);
  P.k_sp = ProductOf(kernel);
  P.in_st.assign(size_t(D), 1);
  P.kst.assign(size_t(D), 1);
  P.ost.assign(size_t(D), 1);
  for (int64_t d = D - 1; d > 0; --d) {
    P.in_st[size_t(d - 1)] = P.in_st[size_t(d)] * in[size_t(d)];
    P.kst[size_t(d - 1)] = P.kst[size_t(d)] * kernel[size_t(d)];
    P.ost[size_t(d - 1)] = P.ost[size_t(d)] * out[size_t(d)];
  }
  P.patch = true;
  for (int64_t d = 0; d < D && P.patch; ++d) {
    const size_t i = size_t(d);
    P.patch = kernel[i] == stride[i] && dil[i] == 1 && pb[i] == 0 && out[i] == in[i] * stride[i];
  }
  MakePhases(&P);
  P.row = PlanIndex(ctx, ConvTransposeTable(), P);
  return pp;
}

// Patch deconvolution (kernel == stride, no padding or dilation, out = in * stride):
// every output takes exactly one kernel position, from every input channel, so for
// each kernel position the outputs are a 1x1 convolution: a GEMM whose K is the input
// channels in order, the reference's fold.
void RunPatchGemm(OpContext& ctx, const ConvTPrep& P, const F32View& xv, const F32View& wv, const float* bias,
                  Tensor& y) {
  const int64_t group = P.group, D = P.D, N = P.N, C = P.C, M = P.M, Mg = P.Mg, Cg = P.Cg, in_sp = P.in_sp,
                out_sp = P.out_sp, k_sp = P.k_sp;
  const std::vector<int64_t>& kernel = P.kernel;
  const std::vector<int64_t>& in = P.in;
  const std::vector<int64_t>& stride = P.stride;
  const std::vector<int64_t>& out = P.out;
  const std::vector<int64_t>& in_st = P.in_st;
  const std::vector<int64_t>& kst = P.kst;
  const std::vector<int64_t>& ost = P.ost;
  // The products before they are scattered: the calling thread's buffer, reused (by
  // reference, so that the workers below read this thread's, not their own).
  auto& tmp_tl = ONEMODEL_PER_THREAD(ScratchVector<float>);
  ScratchVector<float>& tmp = tmp_tl;
  if (tmp.size() < size_t(Mg * in_sp)) tmp.resize(size_t(Mg * in_sp));
  for (int64_t n = 0; n < N; ++n)
    for (int64_t grp = 0; grp < group; ++grp)
      for (int64_t k = 0; k < k_sp; ++k) {
        // A(m, c) = w[c][m][k]; B = the group's input channels; C = tmp[m][p].
        const float* A = wv.data() + (grp * Cg * Mg) * k_sp + k;
        ParallelGemmF32(ctx, Mg, in_sp, Cg, A, k_sp, Mg * k_sp, xv.data() + (n * C + grp * Cg) * in_sp, in_sp, 1,
                        tmp.data(), in_sp);
        // Input position p lands on output p * stride + k (per dimension).
        if (D == 2 && y.dtype() == DType::kFloat) {
          const int64_t kh = k / kernel[1], kw = k % kernel[1], OW = out[1];
          float* py = y.mutable_data<float>();
          ParallelFor(ctx, Mg, 1, [&](int64_t b, int64_t e) {
            for (int64_t ml = b; ml < e; ++ml) {
              const int64_t m = grp * Mg + ml;
              const float bv = bias ? bias[size_t(m)] : 0.0f;
              const float* src = tmp.data() + ml * in_sp;
              float* dst = py + (n * M + m) * out_sp;
              for (int64_t ih = 0; ih < in[0]; ++ih) {
                float* drow = dst + (ih * stride[0] + kh) * OW + kw;
                const float* srow = src + ih * in[1];
                if (!bias)
                  for (int64_t iw = 0; iw < in[1]; ++iw) drow[iw * stride[1]] = srow[iw];
                else
                  for (int64_t iw = 0; iw < in[1]; ++iw) drow[iw * stride[1]] = srow[iw] + bv;
              }
            }
          });
          continue;
        }
        for (int64_t p = 0; p < in_sp; ++p) {
          int64_t o = 0, rest = p, kr = k;
          for (int64_t d = 0; d < D; ++d) {
            const size_t i = size_t(d);
            const int64_t pi = rest / in_st[i], ki = kr / kst[i];
            rest %= in_st[i];
            kr %= kst[i];
            o += (pi * stride[i] + ki) * ost[i];
          }
          for (int64_t ml = 0; ml < Mg; ++ml) {
            const int64_t m = grp * Mg + ml;
            float r = tmp[size_t(ml * in_sp + p)];
            if (bias) r = r + bias[size_t(m)];
            StoreF32(y, (n * M + m) * out_sp + o, r);
          }
        }
      }
}

// Any other geometry, by stride phases: per dimension, the outputs o with
// o + pad = j * stride + r (r in [0, stride)) take exactly the kernel positions k with
// k * dilation = r (mod stride), each from input j - (k * dilation - r) / stride. Per
// phase that is a stride-1 convolution over j with those taps, in the reference's
// row-major kernel order (TapGemm; its zero fix-up covers taps past the input's
// edges); the bias after the full sum.
void RunPhaseTaps(OpContext& ctx, const ConvTPrep& P, const F32View& xv, const F32View& wv, const float* bias,
                  Tensor& y) {
  const int64_t group = P.group, D = P.D, N = P.N, C = P.C, M = P.M, Mg = P.Mg, Cg = P.Cg, in_sp = P.in_sp,
                out_sp = P.out_sp, k_sp = P.k_sp;
  const std::vector<int64_t>& stride = P.stride;
  const std::vector<int64_t>& pb = P.pb;
  const std::vector<int64_t>& ost = P.ost;
  // The products before they are scattered: the calling thread's buffer, reused (by
  // reference, so that the workers below read this thread's, not their own).
  auto& tmp_tl = ONEMODEL_PER_THREAD(ScratchVector<float>);
  ScratchVector<float>& tmp = tmp_tl;
  const size_t Du = size_t(D);
  float* yd = y.dtype() == DType::kFloat ? y.mutable_data<float>() : nullptr;
  auto& wp_own = ONEMODEL_PER_THREAD(ScratchVector<float>);
  for (size_t ph = 0; ph < P.phases.size(); ++ph) {
    const ConvTPrep::Phase& f = P.phases[ph];
    const std::vector<int64_t>& r = f.r;
    const std::vector<int64_t>& j0 = f.j0;
    const Taps& tg = f.tg;
    const std::vector<int64_t>& kt = f.kt;
    const int64_t T = f.T, P = f.P;
    // The phase's weights as every group's rows: row ml, column (c, t) is
    // w[grp * Cg + c][ml][kt[t]]; made once per session for a constant weight.
    auto permute = [&](float* wp) {
      for (int64_t grp = 0; grp < group; ++grp)
        for (int64_t ml = 0; ml < Mg; ++ml)
          for (int64_t c = 0; c < Cg; ++c)
            for (int64_t t = 0; t < T; ++t)
              wp[((grp * Mg + ml) * Cg + c) * T + t] = wv.data()[((grp * Cg + c) * Mg + ml) * k_sp + kt[size_t(t)]];
    };
    char key[32];
    std::snprintf(key, sizeof key, "phase %zu", ph);
    const Tensor* wp_const = ctx.ConstDerived(1, key, [&](const Tensor&) {
      Tensor t =
          Tensor::Uninitialized(DType::kFloat, Shape{std::max<int64_t>(group * Mg * Cg * T, 1)}, "phase weights");
      permute(t.mutable_data<float>());
      return t;
    });
    const float* wp_all = wp_const ? wp_const->data<float>() : nullptr;
    if (!wp_all) {
      if (wp_own.size() < size_t(group * Mg * Cg * T)) wp_own.resize(size_t(group * Mg * Cg * T));
      permute(wp_own.data());
      wp_all = wp_own.data();
    }
    if (tmp.size() < size_t(Mg * P)) tmp.resize(size_t(Mg * P));
    for (int64_t grp = 0; grp < group; ++grp) {
      const float* wp = wp_all + grp * Mg * Cg * T;
      for (int64_t n = 0; n < N; ++n) {
        TapGemm(ctx, tg, xv.data() + (n * C + grp * Cg) * in_sp, Cg, in_sp, wp, Mg, tmp.data());
        ParallelFor(ctx, Mg, 1, [&](int64_t b0, int64_t b1) {
          for (int64_t ml = b0; ml < b1; ++ml) {
            const int64_t m = grp * Mg + ml;
            const float* src = tmp.data() + ml * P;
            const int64_t base = (n * M + m) * out_sp;
            // Rows of the last dimension: output (j + j0) * stride + r - pad.
            const size_t L = Du - 1;
            const int64_t nl = tg.out[L], sl = stride[L], ol0 = j0[L] * sl + r[L] - pb[L];
            for (int64_t p0 = 0; p0 < P; p0 += nl) {
              int64_t q = p0 / nl, o = ol0;
              for (size_t d = L; d-- > 0;) {
                o += ((q % tg.out[d] + j0[d]) * stride[d] + r[d] - pb[d]) * ost[d];
                q /= tg.out[d];
              }
              const float* sr = src + p0;
              if (yd && !bias) {
                for (int64_t j = 0; j < nl; ++j) yd[base + o + j * sl] = sr[j];
              } else if (yd) {
                const float bv = bias[size_t(m)];
                for (int64_t j = 0; j < nl; ++j) yd[base + o + j * sl] = sr[j] + bv;
              } else {
                for (int64_t j = 0; j < nl; ++j)
                  StoreF32(y, base + o + j * sl, !bias ? sr[j] : sr[j] + bias[size_t(m)]);
              }
            }
          }
        });
      }
    }
  }
}

// The reference (ref::ConvTransposeF32) into f32, then y's element type.
void RunReference(const ConvTRun& r) {
  const ConvTPrep& P = r.P;
  if (r.y.dtype() == DType::kFloat) {
    ref::ConvTransposeF32(P, r.xv.data(), r.wv.data(), r.bias, r.y.mutable_data<float>());
    return;
  }
  std::vector<float> y(size_t(P.N * P.M * P.out_sp));
  ref::ConvTransposeF32(P, r.xv.data(), r.wv.data(), r.bias, y.data());
  for (size_t i = 0; i < y.size(); ++i) StoreF32(r.y, int64_t(i), y[i]);
}
void RunPatch(const ConvTRun& r) { RunPatchGemm(r.ctx, r.P, r.xv, r.wv, r.bias, r.y); }
void RunPhases(const ConvTRun& r) { RunPhaseTaps(r.ctx, r.P, r.xv, r.wv, r.bias, r.y); }

bool PatchFits(const ConvTPrep& p) { return p.patch; }
bool PhasesChosen(const ConvTPrep& p) { return p.Mg >= 4 && p.Cg * p.k_sp >= 4; }

constexpr const char* kConvTransposeOps[] = {"ConvTranspose"};
constexpr AlgorithmRow<ConvTPrep, ConvTRunFn> kConvTransposeRows[] = {
    {"reference", Exactness::kExact, "", nullptr, nullptr, RunReference},
    {"patch-gemm", Exactness::kExact, "GemmF32, GemmBiasActF32", PatchFits, nullptr, RunPatch},
    {"phase-taps", Exactness::kExact, "GemmF32, GemmBiasActF32", nullptr, PhasesChosen, RunPhases},
};
constexpr size_t kPhaseTapsRow = 2;

}  // namespace

const FamilyTable<ConvTPrep, ConvTRunFn>& ConvTransposeTable() {
  static constexpr FamilyTable<ConvTPrep, ConvTRunFn> kTable{"conv_transpose", kConvTransposeOps, kConvTransposeRows};
  return kTable;
}

void ConvTranspose(OpContext& ctx) {
  const Tensor& x = ctx.in(0);
  const Tensor& w = ctx.in(1);
  const auto prep = PreparedConv<ConvTPrep>(ctx, x, w, [&] { return MakeConvTPrep(ctx, x, w); });
  const ConvTPrep& P = *prep;
  const F32View xv(ctx, x), wv(ctx, w);
  std::optional<F32View> bias_view;
  const float* bias = ConvBias(ctx, P.M, &bias_view);
  Tensor& y = ctx.out_uninit(0, x.dtype(), P.out_shape);  // every element is written
  size_t row = P.row;
  if (row == kPhaseTapsRow && !FiniteWeights(ctx, wv)) row = 0;  // TapGemm's condition (conv_gemm.h)
  ConvTransposeTable().rows[row].run(ConvTRun{ctx, P, xv, wv, bias, y});
}

}  // namespace ops
}  // namespace onemodel::impl
