// Fast mode's float GEMM rows: "gemm-fma" (MatMul, Gemm), "im2col-gemm-fma" and
// "tap-gemm-fma" (Conv), on the GEMM kernels' fused multiply-add twins (ref/gemm.h). Small
// graphs run in an exact and a fast session at the target under test:
//  - automatic planning takes the rows exactly where the kernels run on hardware FMA
//    (KernelTable::fma_f32); elsewhere a fast session gives exact mode's bits;
//  - every output is within the stated bound of the sum computed here in binary64:
//    |y - s| <= gamma_{K+1} * (sum |a_k b_k| + |bias|), gamma_n = n u / (1 - n u), u = 2^-24
//    (docs/graph-passes.md), and so is exact mode's (the bound is not loose for it);
//  - MatMul and Gemm's sums equal, bit for bit, a k-order fused fold computed here (ref::FusedMulAddF32) (the
//    twins keep the exact fold's order); on FMA targets some output differs from exact
//    mode's (the twins really fuse);
//  - the bits do not depend on the thread count (1, 2, 3, 7);
//  - forced, the rows run on every target within the bound.
#include "tests/catch.h"

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "core/random.h"
#include "ref/gemm.h"
#include "runtime/dispatch.h"
#include "runtime/session.h"
#include "tests/ops/op_test.h"
#include "tests/test_util.h"

namespace onemodel::impl {
namespace test::gemm_fast_test {
namespace {

double Gamma(int64_t n) {
  const double nu = double(n) * 0x1p-24;
  return nu / (1 - nu);
}

struct Case {
  std::string name, op, model;
  Shape x_shape;
  std::vector<float> x;
  std::vector<double> want, scale;  // the binary64 result and sum |terms| per output
  int64_t K = 0;                    // terms per output (the bias not counted)
  std::vector<float> fma_fold;      // MatMul, Gemm: the k-order fused fold (empty: none)
};

struct Ran {
  std::vector<float> y;
  std::string row;
};

Ran RunCase(const Case& c, Mode mode, int threads, const std::string& force = "") {
  SessionOptions o;
  o.mode = mode;
  o.isa = IsaName(ActiveIsa());
  o.threads = threads;
  if (!force.empty()) o.algorithms[c.op] = force;
  Session s = Session::FromBytes(reinterpret_cast<const uint8_t*>(c.model.data()), c.model.size(), o, c.name);
  const auto out = s.Run({{"X", Input(c.x_shape, c.x)}});
  Ran r;
  r.y.assign(out[0].tensor.data<float>(), out[0].tensor.data<float>() + out[0].tensor.numel());
  for (const NodePlan& p : s.plans())
    if (p.op_type == c.op) r.row = p.row;
  return r;
}

std::vector<double> Doubles(const std::vector<float>& v) { return std::vector<double>(v.begin(), v.end()); }

std::vector<float> Uniform(SplitMix64& rng, size_t n, float lo, float hi) {
  std::vector<float> v(n);
  for (auto& e : v) e = rng.Uniform(lo, hi);
  return v;
}

// MatMul X [M, K] by the constant B [K, N]; or Gemm (alpha, beta, C [N], transA, transB).
Case MatMulCase(int64_t M, int64_t K, int64_t N, uint64_t seed) {
  SplitMix64 rng(seed);
  Case c;
  c.name = "matmul " + std::to_string(M) + "x" + std::to_string(K) + "x" + std::to_string(N);
  c.op = "MatMul";
  c.x_shape = {M, K};
  c.x = Uniform(rng, size_t(M * K), -2.0f, 2.0f);
  const std::vector<float> b = Uniform(rng, size_t(K * N), -1.0f, 1.0f);
  c.model = TypedGraph(c.x_shape, {{"B", onnx::TensorProto::FLOAT, {K, N}, Doubles(b)}},
                       {{"MatMul", {"X", "B"}, {"Y"}}}, {"Y"});
  c.K = K;
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) {
      double s = 0, a = 0;
      float f = -0.0f;
      for (int64_t k = 0; k < K; ++k) {
        const float xa = c.x[size_t(m * K + k)], xb = b[size_t(k * N + n)];
        s += double(xa) * double(xb);
        a += std::fabs(double(xa) * double(xb));
        f = ::onemodel::impl::ref::FusedMulAddF32(xa, xb, f);
      }
      c.want.push_back(s);
      c.scale.push_back(a);
      c.fma_fold.push_back(f);
    }
  return c;
}

Case GemmCase(int64_t M, int64_t K, int64_t N, bool ta, bool tb, uint64_t seed) {
  SplitMix64 rng(seed);
  Case c;
  c.name = "gemm " + std::to_string(M) + "x" + std::to_string(K) + "x" + std::to_string(N);
  c.op = "Gemm";
  c.x_shape = ta ? Shape{K, M} : Shape{M, K};
  c.x = Uniform(rng, size_t(M * K), -2.0f, 2.0f);
  const std::vector<float> b = Uniform(rng, size_t(K * N), -1.0f, 1.0f), bias = Uniform(rng, size_t(N), -1.0f, 1.0f);
  const float alpha = 0.75f, beta = 2.0f;
  c.model = TypedGraph(
      c.x_shape,
      {{"B", onnx::TensorProto::FLOAT, tb ? Shape{N, K} : Shape{K, N}, Doubles(b)},
       {"C", onnx::TensorProto::FLOAT, {N}, Doubles(bias)}},
      {{"Gemm", {"X", "B", "C"}, {"Y"}, {AF("alpha", alpha), AF("beta", beta), AI("transA", ta), AI("transB", tb)}}},
      {"Y"});
  c.K = K;
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) {
      double s = 0, a = 0;
      float f = -0.0f;
      for (int64_t k = 0; k < K; ++k) {
        const float xa = c.x[size_t(ta ? k * M + m : m * K + k)], xb = b[size_t(tb ? n * K + k : k * N + n)];
        s += double(xa) * double(xb);
        a += std::fabs(double(xa) * double(xb));
        f = ::onemodel::impl::ref::FusedMulAddF32(xa, xb, f);
      }
      // alpha * sum + beta * C: alpha (0.75) and beta (2) scale the bound with the terms;
      // the two roundings of alpha * f and of the sum are one more term each.
      c.want.push_back(double(alpha) * s + double(beta) * double(bias[size_t(n)]));
      c.scale.push_back(double(alpha) * a + std::fabs(double(beta) * double(bias[size_t(n)])));
      c.fma_fold.push_back(alpha * f + beta * bias[size_t(n)]);
    }
  return c;
}

// Conv over X [1, C, spatial...] with weights [M, C / group, kernel...], bias, pads,
// strides and dilations equal along every axis; then Relu when relu.
struct ConvSpec {
  int64_t C, M;
  Shape in, kernel;
  int64_t pad = 0, stride = 1, dilation = 1, group = 1;
  bool relu = false;
};

Case ConvCase(const ConvSpec& p, uint64_t seed) {
  SplitMix64 rng(seed);
  const size_t D = p.in.size();
  Case c;
  c.name = "conv C=" + std::to_string(p.C) + " M=" + std::to_string(p.M) + " dims " + std::to_string(D);
  c.op = "Conv";
  c.x_shape = {1, p.C};
  c.x_shape.insert(c.x_shape.end(), p.in.begin(), p.in.end());
  int64_t in_sp = 1, k_sp = 1, out_sp = 1;
  Shape out(D);
  for (size_t d = 0; d < D; ++d) {
    out[d] = (p.in[d] + 2 * p.pad - p.dilation * (p.kernel[d] - 1) - 1) / p.stride + 1;
    in_sp *= p.in[d];
    k_sp *= p.kernel[d];
    out_sp *= out[d];
  }
  const int64_t Cg = p.C / p.group, Mg = p.M / p.group;
  c.x = Uniform(rng, size_t(p.C * in_sp), -2.0f, 2.0f);
  const std::vector<float> w = Uniform(rng, size_t(p.M * Cg * k_sp), -0.5f, 0.5f),
                           bias = Uniform(rng, size_t(p.M), -1.0f, 1.0f);
  Shape ws = {p.M, Cg};
  ws.insert(ws.end(), p.kernel.begin(), p.kernel.end());
  const std::vector<TAttr> attrs = {AInts("pads", std::vector<int64_t>(2 * D, p.pad)),
                                    AInts("strides", std::vector<int64_t>(D, p.stride)),
                                    AInts("dilations", std::vector<int64_t>(D, p.dilation)), AI("group", p.group)};
  std::vector<TNode> nodes = {{"Conv", {"X", "W", "B"}, {p.relu ? "Yc" : "Y"}, attrs}};
  if (p.relu) nodes.push_back({"Relu", {"Yc"}, {"Y"}});
  c.model = TypedGraph(
      c.x_shape,
      {{"W", onnx::TensorProto::FLOAT, ws, Doubles(w)}, {"B", onnx::TensorProto::FLOAT, {p.M}, Doubles(bias)}}, nodes,
      {"Y"});
  c.K = Cg * k_sp;
  std::vector<int64_t> o(D), t(D);
  for (int64_t m = 0; m < p.M; ++m)
    for (int64_t op = 0; op < out_sp; ++op) {
      for (int64_t r = op, d = int64_t(D) - 1; d >= 0; --d) {
        o[size_t(d)] = r % out[size_t(d)];
        r /= out[size_t(d)];
      }
      double s = 0, a = 0;
      const int64_t grp = m / Mg;
      for (int64_t ci = 0; ci < Cg; ++ci)
        for (int64_t kt = 0; kt < k_sp; ++kt) {
          int64_t off = 0;
          bool inside = true;
          for (int64_t r = kt, d = int64_t(D) - 1; d >= 0; --d) {
            t[size_t(d)] = r % p.kernel[size_t(d)];
            r /= p.kernel[size_t(d)];
          }
          for (size_t d = 0; d < D; ++d) {
            const int64_t i = o[d] * p.stride - p.pad + t[d] * p.dilation;
            inside = inside && i >= 0 && i < p.in[d];
            off = off * p.in[d] + i;
          }
          if (!inside) continue;
          const double v =
              double(c.x[size_t((grp * Cg + ci) * in_sp + off)]) * double(w[size_t((m * Cg + ci) * k_sp + kt)]);
          s += v;
          a += std::fabs(v);
        }
      s += double(bias[size_t(m)]);
      a += std::fabs(double(bias[size_t(m)]));
      c.want.push_back(p.relu ? std::max(s, 0.0) : s);
      c.scale.push_back(a);
    }
  return c;
}

std::vector<Case> Cases() {
  std::vector<Case> v;
  // MatMul: few rows (B streamed by rows), register tiles with a packed constant B across
  // the K block (256), a matrix-vector product (N = 1).
  v.push_back(MatMulCase(3, 300, 70, 1));
  v.push_back(MatMulCase(37, 513, 77, 2));
  v.push_back(MatMulCase(20, 1000, 1, 3));
  // Gemm: transposed B with C, transposed A.
  v.push_back(GemmCase(20, 300, 50, false, true, 4));
  v.push_back(GemmCase(7, 100, 40, true, false, 5));
  // Conv: 3x3 padded into 64 channels (A read in place), Relu fused; fewer channels with
  // stride 2 and dilation 2 (im2col, the epilogue in the tiles); 1x1 on few positions (the
  // transposed product); two groups; one output position; 3-D (tap-gemm-fma).
  v.push_back(ConvCase({16, 64, {14, 14}, {3, 3}, 1, 1, 1, 1, true}, 6));
  v.push_back(ConvCase({8, 24, {12, 10}, {3, 3}, 1, 2, 2, 1, false}, 7));
  v.push_back(ConvCase({64, 96, {7, 7}, {1, 1}, 0, 1, 1, 1, false}, 8));
  v.push_back(ConvCase({16, 32, {9, 9}, {3, 3}, 1, 1, 1, 2, true}, 9));
  v.push_back(ConvCase({64, 32, {3, 3}, {3, 3}, 0, 1, 1, 1, false}, 10));
  v.push_back(ConvCase({4, 8, {5, 6, 7}, {3, 3, 3}, 1, 1, 1, 1, false}, 11));
  return v;
}

const char* FmaRow(const Case& c) {
  if (c.op != "Conv") return "gemm-fma";
  return c.x_shape.size() > 4 ? "tap-gemm-fma" : "im2col-gemm-fma";
}

// Every output within the bound of the binary64 result; returns the number outside.
int OutsideBound(const Case& c, const std::vector<float>& y, const char* what) {
  REQUIRE(y.size() == c.want.size());
  int bad = 0;
  const double g = Gamma(c.K + 3);  // K terms, the bias, and Gemm's alpha and beta
  for (size_t i = 0; i < y.size(); ++i) {
    const double tol = g * c.scale[i] + 0x1p-140;
    if (!(std::fabs(double(y[i]) - c.want[i]) <= tol) && bad++ < 3)
      FAIL_CHECK(what << " element " << i << ": " << y[i] << ", want " << c.want[i] << " within " << tol);
  }
  return bad;
}

}  // namespace

TEST_CASE("ops fast: the float GEMM rows fuse multiply-adds within their bound", "[ops][fast]") {
  const bool fma = MakeDispatch(ActiveIsa()).kernels.fma_f32;
  for (const Case& c : Cases()) {
    INFO(c.name << " at " << IsaName(ActiveIsa()));
    const Ran exact = RunCase(c, Mode::kExact, 1);
    CHECK(OutsideBound(c, exact.y, "exact") == 0);
    CHECK(std::string(exact.row).find("fma") == std::string::npos);
    const Ran fast = RunCase(c, Mode::kFast, 1);
    if (ActiveIsa() == Isa::kRef) {  // the oracle session runs the reference rows in either mode
      CHECK(fast.row == "reference");
      CHECK(std::memcmp(fast.y.data(), exact.y.data(), fast.y.size() * sizeof(float)) == 0);
      continue;
    }
    // Automatic planning takes the twins where they run on hardware FMA.
    CHECK((fast.row == FmaRow(c)) == fma);
    if (!fma) CHECK(std::memcmp(fast.y.data(), exact.y.data(), fast.y.size() * sizeof(float)) == 0);
    // Forced, on every target: within the bound, the same bits at every thread count.
    const Ran forced = RunCase(c, Mode::kFast, 1, FmaRow(c));
    CHECK(forced.row == FmaRow(c));
    CHECK(OutsideBound(c, forced.y, "fast") == 0);
    if (fma) CHECK(std::memcmp(forced.y.data(), fast.y.data(), fast.y.size() * sizeof(float)) == 0);
    if (!c.fma_fold.empty()) {
      size_t same = 0;
      for (size_t i = 0; i < forced.y.size(); ++i) same += std::memcmp(&forced.y[i], &c.fma_fold[i], 4) == 0;
      CHECK(same == forced.y.size());
    }
    if (c.K >= 64) {  // long folds: some output's rounding differs from exact mode's
      bool differs = false;
      for (size_t i = 0; i < forced.y.size(); ++i) differs = differs || std::memcmp(&forced.y[i], &exact.y[i], 4) != 0;
      CHECK(differs);
    }
    for (int threads : {2, 3, 7}) {
      const Ran t = RunCase(c, Mode::kFast, threads, FmaRow(c));
      INFO(threads << " threads");
      CHECK(std::memcmp(t.y.data(), forced.y.data(), t.y.size() * sizeof(float)) == 0);
    }
  }
}

TEST_CASE("ops fast: exact sessions refuse the float GEMM rows by name", "[ops][fast]") {
  const Case c = MatMulCase(4, 8, 4, 12);
  SessionOptions o;
  o.isa = IsaName(ActiveIsa());
  o.algorithms["MatMul"] = "gemm-fma";
  try {
    Session s = Session::FromBytes(reinterpret_cast<const uint8_t*>(c.model.data()), c.model.size(), o, c.name);
    s.Run({{"X", Input(c.x_shape, c.x)}});
    FAIL("forcing gemm-fma in an exact session was accepted");
  } catch (const Error& e) {
    INFO(e.what());
    CHECK(e.code() == ErrorCode::kInvalidArgument);
    CHECK(std::string(e.what()).find("'gemm-fma' is fast and this session is exact") != std::string::npos);
  }
}

}  // namespace test::gemm_fast_test
}  // namespace onemodel::impl
