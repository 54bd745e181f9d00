// Reference DFT (complex, real-to-complex, inverse, complex-to-real) and STFT, in
// binary64 (as ONNX's reference, whose FFT cancels exactly where f32 would leave
// residue): each output bin is a direct sum over the input samples in index order (re
// and im, one accumulator each from -0.0); twiddles are the project's own binary64
// cos/sin of 2*pi*((j*k) mod n)/n; the inverse divides by n once; one rounding to the
// output type at the end.
#include "ref/math.h"
#include "ops/ops.h"
#include "ops/util.h"

namespace onemodel::impl {
namespace ops {
namespace {

void Twiddle(int64_t j, int64_t k, int64_t n, bool inverse, double* c, double* s) {
  const int64_t m = (j * k) % n;
  const double a = (6.283185307179586477 * double(m)) / double(n);
  *c = math::CosD(a);
  const double sn = math::SinD(a);
  *s = inverse ? sn : -sn;
}

// out[j] (j < nout) = sum_k in(k) * w(j, k), k < n; in(k) returns (re, im).
template <class Get>
void Transform(int64_t nout, int64_t n, bool inverse, Get in, float* re_out, float* im_out) {
  for (int64_t j = 0; j < nout; ++j) {
    double re = -0.0, im = -0.0;
    for (int64_t k = 0; k < n; ++k) {
      float fr, fi;
      double c, s;
      in(k, &fr, &fi);
      const double xr = fr, xi = fi;
      Twiddle(j, k, n, inverse, &c, &s);
      re = re + (xr * c - xi * s);
      im = im + (xr * s + xi * c);
    }
    if (inverse) {
      re = re / double(n);
      im = im / double(n);
    }
    re_out[j] = float(re);
    im_out[j] = float(im);
  }
}

}  // namespace

void DFT(OpContext& ctx) {
  const Tensor& x = ctx.in(0);
  const bool inverse = ctx.attr_i("inverse", 0) != 0, onesided = ctx.attr_i("onesided", 0) != 0;
  const int64_t r = x.rank();
  const int64_t ch = x.shape().back();
  if (ch != 1 && ch != 2)
    throw ctx.Fail(ErrorCode::kShapeMismatch, "the last dimension must be 1 (real) or 2 (complex)");
  int64_t axis;
  if (ctx.opset >= 20)
    axis = ctx.has_input(2) && ctx.in(2).numel() ? ReadInts(ctx, ctx.in(2))[0] : -2;
  else
    axis = ctx.attr_i("axis", 1);
  if (axis < 0) axis += r;
  if (axis < 0 || axis >= r - 1) throw ctx.Fail(ErrorCode::kInvalidArgument, "axis must be a signal axis");
  const int64_t dim = x.shape()[size_t(axis)];
  const bool irfft = onesided && inverse;
  int64_t n = irfft ? 2 * (dim - 1) : dim;
  if (ctx.has_input(1) && ctx.in(1).numel()) n = ReadInts(ctx, ctx.in(1))[0];
  if (n <= 0) throw ctx.Fail(ErrorCode::kInvalidArgument, "dft_length must be positive");
  const int64_t nout = irfft ? n : (onesided ? n / 2 + 1 : n);
  Shape os = x.shape();
  os[size_t(axis)] = nout;
  os.back() = irfft ? 1 : 2;
  Tensor& y = ctx.out(0, x.dtype(), os);
  const auto xv = ToF32(ctx, x);
  int64_t outer = 1, inner = 1;
  for (int64_t k = 0; k < axis; ++k) outer *= x.shape()[size_t(k)];
  for (int64_t k = axis + 1; k < r - 1; ++k) inner *= x.shape()[size_t(k)];
  std::vector<float> re(static_cast<size_t>(nout)), im(static_cast<size_t>(nout));
  for (int64_t b = 0; b < outer; ++b)
    for (int64_t i = 0; i < inner; ++i) {
      auto sample = [&](int64_t k, float* xr, float* xi) {
        if (k >= dim) {
          *xr = 0.0f;
          *xi = 0.0f;
          return;
        }
        const int64_t off = ((b * dim + k) * inner + i) * ch;
        *xr = xv[size_t(off)];
        *xi = ch == 2 ? xv[size_t(off + 1)] : 0.0f;
      };
      if (irfft) {  // the full spectrum from the one-sided one, by conjugate symmetry
        auto full = [&](int64_t k, float* xr, float* xi) {
          if (k < dim) {
            sample(k, xr, xi);
            return;
          }
          sample(n - k, xr, xi);
          *xi = -*xi;
        };
        Transform(nout, n, true, full, re.data(), im.data());
      } else {
        Transform(nout, n, inverse, sample, re.data(), im.data());
      }
      for (int64_t j = 0; j < nout; ++j) {
        const int64_t off = ((b * nout + j) * inner + i) * (irfft ? 1 : 2);
        StoreF32(y, off, re[size_t(j)]);
        if (!irfft) StoreF32(y, off + 1, im[size_t(j)]);
      }
    }
}

void STFT(OpContext& ctx) {
  const Tensor& x = ctx.in(0);
  const int64_t step = ReadInts(ctx, ctx.in(1))[0];
  const bool onesided = ctx.attr_i("onesided", 1) != 0;
  if (x.rank() != 3) throw ctx.Fail(ErrorCode::kShapeMismatch, "signal must be [batch, length, 1 or 2]");
  const int64_t B = x.shape()[0], L = x.shape()[1], ch = x.shape()[2];
  std::vector<float> win;
  if (ctx.has_input(2) && ctx.in(2).numel()) win = ToF32(ctx, ctx.in(2));
  int64_t fl = ctx.has_input(3) && ctx.in(3).numel() ? ReadInts(ctx, ctx.in(3))[0] : int64_t(win.size());
  if (fl <= 0 || step <= 0 || fl > L)
    throw ctx.Fail(ErrorCode::kInvalidArgument, "frame_length and frame_step must fit the signal");
  const int64_t frames = 1 + (L - fl) / step, bins = onesided ? fl / 2 + 1 : fl;
  Tensor& y = ctx.out(0, x.dtype(), {B, frames, bins, 2});
  const auto xv = ToF32(ctx, x);
  std::vector<float> re(static_cast<size_t>(bins)), im(static_cast<size_t>(bins));
  for (int64_t b = 0; b < B; ++b)
    for (int64_t f = 0; f < frames; ++f) {
      auto sample = [&](int64_t k, float* xr, float* xi) {
        const int64_t off = (b * L + f * step + k) * ch;
        const float w = win.empty() ? 1.0f : win[size_t(k)];
        *xr = xv[size_t(off)] * w;
        *xi = ch == 2 ? xv[size_t(off + 1)] * w : 0.0f;
      };
      Transform(bins, fl, false, sample, re.data(), im.data());
      for (int64_t j = 0; j < bins; ++j) {
        StoreF32(y, ((b * frames + f) * bins + j) * 2, re[size_t(j)]);
        StoreF32(y, ((b * frames + f) * bins + j) * 2 + 1, im[size_t(j)]);
      }
    }
}

namespace {

// The window functions: Hann (0), Hamming (1), Blackman (2).
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

void HannWindow(OpContext& ctx) { Window(ctx, 0); }
void HammingWindow(OpContext& ctx) { Window(ctx, 1); }
void BlackmanWindow(OpContext& ctx) { Window(ctx, 2); }

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
