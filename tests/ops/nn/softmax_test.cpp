// Softmax (ops/nn/softmax.h; reference ref::Softmax in src/ref/softmax.cpp, kernels SoftmaxRowsF32 and
// its fast twin SoftmaxRowsFmaF32 in src/kernels/softmax.cpp): rows of every length around the lane counts, with
// specials (NaN, infinities, -0.0), along the last axis (the row algorithm) and along
// others, in the opset-13 form and the older flattened form; LogSoftmax and Hardmax share
// the layout.
#include "tests/catch.h"

#include <cmath>
#include <string>
#include <vector>

#include "core/error.h"
#include "runtime/dispatch.h"
#include "runtime/session.h"
#include "tests/ops/op_test.h"
#include "tests/test_util.h"

namespace onemodel::impl {
namespace test {
namespace {

std::vector<OpCase> SoftmaxCases() {
  std::vector<OpCase> cases;
  SplitMix64 rng(515);
  for (int kind : {0, 1, 2}) {
    const std::string k = " kind " + std::to_string(kind);
    for (int64_t n : {1, 7, 16, 33, 96, 1000}) {
      const Shape xs{3, 5, n};
      cases.push_back(XCase("Softmax rows of " + std::to_string(n) + k, OneOp("Softmax", xs, {}, {Int("axis", -1)}), xs,
                            Values(rng, Count(xs), kind, -20.0f, 20.0f)));
    }
    const Shape xl{3, 17, 96};
    const auto x = Values(rng, Count(xl), kind, -3.0f, 3.0f);
    cases.push_back(XCase("Softmax middle axis" + k, OneOp("Softmax", xl, {}, {Int("axis", 1)}), xl, x));
    cases.push_back(XCase("Softmax first axis" + k, OneOp("Softmax", xl, {}, {Int("axis", 0)}), xl, x));
    cases.push_back(
        XCase("Softmax opset 11 over the trailing block" + k, OneOp("Softmax", xl, {}, {Int("axis", 1)}, 11), xl, x));
    cases.push_back(XCase("LogSoftmax" + k, OneOp("LogSoftmax", xl, {}, {Int("axis", -1)}), xl, x));
    cases.push_back(XCase("Hardmax" + k, OneOp("Hardmax", xl, {}, {Int("axis", -1)}), xl, x));
  }
  return cases;
}

const bool kSoftmaxRegistered = RegisterFamily({"softmax", {"Softmax", "LogSoftmax", "Hardmax"}, &SoftmaxCases});

}  // namespace

TEST_CASE("ops/softmax: every case at every algorithm equals the oracle", "[ops][exact_paths]") {
  RunFamily("softmax");
}

// The fast row "rows-fma": a fast session plans it exactly where the target has a hardware
// FMA (elsewhere exact mode's row and bits), every output within the stated bound of the
// binary64 softmax (tests/test_kernels.cpp has the bound's terms; here the rows are at
// most 300 wide with |x| <= 30, so 100 u relative covers them), the same bits at 1, 2, 3
// and 7 threads, some output different from exact mode's where it runs; an exact session
// refuses it by name.
TEST_CASE("ops/softmax: the fast row rows-fma", "[ops][fast]") {
  SplitMix64 rng(516);
  const Shape xs{6, 40, 300};
  const std::vector<float> x = Values(rng, Count(xs), 0, -30.0f, 30.0f);
  const std::string model = OneOp("Softmax", xs, {}, {Int("axis", -1)});
  auto run = [&](Mode mode, int threads, const std::string& force, std::string* row) {
    SessionOptions o;
    o.mode = mode;
    o.isa = IsaName(ActiveIsa());
    o.threads = threads;
    if (!force.empty()) o.algorithms["Softmax"] = force;
    Session s = Session::FromBytes(reinterpret_cast<const uint8_t*>(model.data()), model.size(), o, "softmax fast");
    const auto out = s.Run({{"X", Input(xs, x)}});
    for (const NodePlan& p : s.plans())
      if (p.op_type == "Softmax" && row) *row = p.row;
    return std::vector<float>(out[0].tensor.data<float>(), out[0].tensor.data<float>() + out[0].tensor.numel());
  };
  const bool fma = MakeDispatch(ActiveIsa()).kernels.fma_f32;
  std::string row;
  const std::vector<float> fast = run(Mode::kFast, 1, "", &row), exact = run(Mode::kExact, 1, "", nullptr);
  CHECK(row == (fma ? "rows-fma" : "rows"));
  CHECK((DiffF32(exact.data(), fast.data(), fast.size()) != "") == fma);
  for (int threads : {2, 3, 7})
    CHECK(DiffF32(fast.data(), run(Mode::kFast, threads, "", nullptr).data(), fast.size()) == "");
  const int64_t n = xs.back();
  int bad = 0;
  for (const auto* y : {&fast, &exact})
    for (size_t r = 0; r < x.size() / size_t(n); ++r) {
      double m = -INFINITY, s = 0;
      for (int64_t j = 0; j < n; ++j) m = std::max(m, double(x[r * size_t(n) + size_t(j)]));
      for (int64_t j = 0; j < n; ++j) s += std::exp(double(x[r * size_t(n) + size_t(j)]) - m);
      for (int64_t j = 0; j < n; ++j) {
        const double p = std::exp(double(x[r * size_t(n) + size_t(j)]) - m) / s;
        bad += !(std::fabs(double((*y)[r * size_t(n) + size_t(j)]) - p) <= 100 * 0x1p-24 * p + 2e-38);
      }
    }
  CHECK(bad == 0);
  // Forced on any target (its loops are the reference's where there is no FMA): the fast
  // session's bits wherever it is chosen, within the bound elsewhere too (checked above
  // through the same kernel).
  std::string forced_row;
  const std::vector<float> forced = run(Mode::kFast, 2, "rows-fma", &forced_row);
  CHECK(forced_row == "rows-fma");
  if (fma) CHECK(DiffF32(fast.data(), forced.data(), fast.size()) == "");
  try {
    run(Mode::kExact, 1, "rows-fma", nullptr);
    FAIL("forcing rows-fma in an exact session was accepted");
  } catch (const Error& e) {
    CHECK(e.code() == ErrorCode::kInvalidArgument);
    CHECK(std::string(e.what()).find("'rows-fma' is fast and this session is exact") != std::string::npos);
  }
}

}  // namespace test
}  // namespace onemodel::impl
