// The operator families' tables (ops/family.h): every operator type with a table belongs
// to a registered family of oracle tests (whose test fails unless each exact row ran on
// one of its cases: op_test.cpp), every table starts with its exact reference row and
// names only kernels of the kernel list; and the planner's rules, shown on a test family
// with a fast row: exact sessions never plan it, fast sessions do where it fits.
#include "tests/catch.h"

#include <cmath>
#include <cstring>
#include <set>
#include <sstream>
#include <string>

#include "core/error.h"
#include "ops/family.h"
#include "runtime/dispatch.h"
#include "runtime/session.h"
#include "tests/model_proto.h"
#include "tests/ops/op_test.h"
#include "tests/test_util.h"

namespace onemodel::impl {
namespace test {

TEST_CASE("ops: every operator type with a table has a family of oracle tests", "[ops]") {
  std::set<std::string> claimed;
  for (const OpFamily& f : Families()) claimed.insert(f.op_types.begin(), f.op_types.end());
  std::set<std::string> kernels;
#define ONEMODEL_KERNEL(name, ret, params) kernels.insert(#name);
#include "kernels/kernels.inc"
#undef ONEMODEL_KERNEL
  std::set<std::string> op_types;
  for (const ops::FamilyInfo& t : ops::Families()) {
    INFO("table " << t.family);
    REQUIRE(!t.rows.empty());
    CHECK(t.rows[0].name == "reference");
    CHECK(t.rows[0].exactness == ops::Exactness::kExact);
    for (const std::string& op : t.op_types) {
      INFO(op << " has a table but no family in tests/ops claims it, or two tables claim it");
      CHECK(claimed.count(op) == 1);
      CHECK(op_types.insert(op).second);
    }
    for (const ops::RowInfo& row : t.rows) {
      std::stringstream names(row.kernels);
      std::string k;
      while (std::getline(names, k, ',')) {
        k.erase(0, k.find_first_not_of(' '));
        INFO("row " << row.name << " names kernel '" << k << "', which kernels.inc does not list");
        CHECK(kernels.count(k) == 1);
      }
    }
  }
}

// --- A test family: y = x * x - 1 ("reference" and "vector" round twice, exact; "fused"
// rounds once, a fast row for 8+ elements). ---
namespace {

struct TripleParams {
  int64_t n = 0;
};
using TripleRun = void (*)(const TripleParams&, const float*, float*);

void TripleRef(const TripleParams& p, const float* x, float* y) {
  for (int64_t i = 0; i < p.n; ++i) y[i] = x[i] * x[i] - 1.0f;
}
void TripleFused(const TripleParams& p, const float* x, float* y) {
  for (int64_t i = 0; i < p.n; ++i) y[i] = std::fma(x[i], x[i], -1.0f);
}
bool FitsVector(const TripleParams& p) { return p.n >= 4; }
bool FitsFused(const TripleParams& p) { return p.n >= 8; }

constexpr const char* kTripleOps[] = {"ai.onemodel.test.Triple"};
constexpr ops::AlgorithmRow<TripleParams, TripleRun> kTripleRows[] = {
    {"reference", ops::Exactness::kExact, "", nullptr, nullptr, TripleRef},
    {"fused", ops::Exactness::kFast, "", FitsFused, nullptr, TripleFused},
    {"vector", ops::Exactness::kExact, "SumF32", FitsVector, nullptr, TripleRef},
};
constexpr ops::FamilyTable<TripleParams, TripleRun> kTripleTable{"triple", kTripleOps, kTripleRows};

void Triple(OpContext& ctx) {
  const Tensor& x = ctx.in(0);
  const TripleParams p{x.numel()};
  Tensor& y = ctx.out_uninit(0, DType::kFloat, x.shape());
  ops::PlanRow(ctx, kTripleTable, p).run(p, x.data<float>(), y.mutable_data<float>());
}

const bool kTripleRegistered = RegisterOp("ai.onemodel.test", "Triple", &Triple);

std::string TripleModel(int64_t n) {
  onnx::ModelProto m = testmodel::NewModel(8, 19, "triple");
  auto* os = m.add_opset_import();
  os->set_domain("ai.onemodel.test");
  os->set_version(1);
  auto* g = m.mutable_graph();
  testmodel::AddTensorInput(g, "X", onnx::TensorProto::FLOAT, {n});
  auto* node = g->add_node();
  node->set_op_type("Triple");
  node->set_domain("ai.onemodel.test");
  node->set_name("triple");
  node->add_input("X");
  node->add_output("Y");
  g->add_output()->set_name("Y");
  return m.SerializeAsString();
}

// The row the node planned, and whether the output is the exact reference's.
struct Planned {
  std::string row;
  bool fast_row = false;
  bool exact_bits = false;
};
Planned PlanTriple(int64_t n, Mode mode, const std::string& isa, const std::string& forced = "") {
  const std::string bytes = TripleModel(n);
  SessionOptions o;
  o.mode = mode;
  o.isa = isa;
  if (!forced.empty()) o.algorithms["ai.onemodel.test.Triple"] = forced;
  Session s = Session::FromBytes(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), o, "triple");
  std::vector<float> x(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) x[size_t(i)] = 1.0f + float(i + 1) * 0x1p-13f;  // x * x - 1 rounds twice
  const auto out = s.Run({{"X", Input({n}, x)}});
  std::vector<float> want(static_cast<size_t>(n));
  TripleRef({n}, x.data(), want.data());
  Planned p;
  const auto plans = s.plans();
  REQUIRE(plans.size() == 1);
  CHECK(plans[0].family == "triple");
  CHECK(plans[0].node == "triple");
  p.row = plans[0].row;
  p.fast_row = plans[0].fast;
  p.exact_bits = std::memcmp(out[0].tensor.data<float>(), want.data(), size_t(n) * sizeof(float)) == 0;
  return p;
}

}  // namespace

TEST_CASE("ops: exact sessions never plan a fast row; fast sessions do where it fits", "[ops]") {
  REQUIRE(kTripleRegistered);
  const std::string isa = IsaName(ActiveIsa());
  // Exact sessions: the best exact row that fits, the oracle's reference at ISA ref.
  for (int64_t n : {2, 5, 9, 64}) {
    INFO(n << " elements");
    const Planned e = PlanTriple(n, Mode::kExact, isa);
    CHECK(e.row == (n >= 4 ? "vector" : "reference"));
    CHECK(!e.fast_row);
    CHECK(e.exact_bits);
    CHECK(PlanTriple(n, Mode::kExact, "ref").row == "reference");
    CHECK(PlanTriple(n, Mode::kFast, "ref").row == "reference");
  }
  // Fast sessions: the fast row where it fits (it comes first), else the exact rows.
  CHECK(PlanTriple(2, Mode::kFast, isa).row == "reference");
  CHECK(PlanTriple(5, Mode::kFast, isa).row == "vector");
  const Planned f = PlanTriple(64, Mode::kFast, isa);
  CHECK(f.row == "fused");
  CHECK(f.fast_row);
  CHECK(!f.exact_bits);  // one rounding instead of two: the row really ran
  // Forcing: a fast row in an exact session is refused by name, as is one that does not fit.
  auto refused = [&](int64_t n, Mode mode, const std::string& algo, const std::string& why) {
    try {
      PlanTriple(n, mode, isa, algo);
      FAIL("forcing " << algo << " was accepted");
    } catch (const Error& e) {
      INFO(e.what());
      CHECK(e.code() == ErrorCode::kInvalidArgument);
      CHECK(std::string(e.what()).find(why) != std::string::npos);
    }
  };
  refused(64, Mode::kExact, "fused", "is fast and this session is exact");
  refused(5, Mode::kFast, "fused", "does not fit");
  refused(64, Mode::kFast, "winograd", "unknown algorithm 'winograd' (this operator has: reference, fused, vector)");
  CHECK(PlanTriple(64, Mode::kFast, isa, "vector").row == "vector");
  CHECK(PlanTriple(64, Mode::kExact, isa, "reference").row == "reference");
}

}  // namespace test
}  // namespace onemodel::impl
