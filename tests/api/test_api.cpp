// The public C++ API, tested through include/onemodel/onemodel.h alone (this target
// cannot see src/): element types, views, symbolic dimensions, requested outputs,
// every error code a caller can cause, moved and destroyed sessions, concurrency.
// Run from the repository root (the committed golden graphs are read from testdata/).
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <new>
#include <sstream>
#include <thread>

#include "../catch_run.h"
#include "onemodel/onemodel.h"
#include "onnx_writer.h"

using onemodel::ElementType;
using onemodel::ErrorCode;
using onemodel::NamedValue;
using onemodel::Session;
using onemodel::SessionOptions;
using onemodel::Tensor;
using onemodel::Value;
namespace ow = onnx_writer;

// ---- the largest heap request while counting (operator new of this binary) ----
static std::atomic<bool> g_counting{false};
static std::atomic<size_t> g_largest{0};
static void* Counted(std::size_t n) {
  if (g_counting.load(std::memory_order_relaxed)) {
    size_t prev = g_largest.load();
    while (n > prev && !g_largest.compare_exchange_weak(prev, n)) {}
  }
  void* p = std::malloc(n ? n : 1);
  if (!p) throw std::bad_alloc();
  return p;
}
// ThreadSanitizer's runtime defines operator new and delete itself: the test that counts
// allocations ([allocs]) is left out of the TSan row (tools/test.sh counts it skipped).
#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define ONEMODEL_TEST_TSAN 1
#endif
#endif
#if !defined(ONEMODEL_TEST_TSAN)
void* operator new(std::size_t n) { return Counted(n); }
void* operator new[](std::size_t n) { return Counted(n); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
// The nothrow forms too (std::stable_sort's buffer uses them), so every new pairs with
// this file's delete.
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  try {
    return Counted(n);
  } catch (...) {
    return nullptr;
  }
}
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept {
  try {
    return Counted(n);
  } catch (...) {
    return nullptr;
  }
}
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }
#endif

namespace {

// The ISA cap the row runs (ONEMODEL_ISA, as the suite's rows set it; "" = best).
SessionOptions RowOptions() {
  SessionOptions o;
  if (const char* e = std::getenv("ONEMODEL_ISA")) o.isa = e;
  return o;
}

Session FromModel(const ow::Model& m, SessionOptions o = RowOptions()) {
  const std::string b = m.Bytes();
  return Session::FromBytes(b.data(), b.size(), o, "test model");
}

// A one-node model: op(inputs) -> outputs, every value of elem_type with shape dims.
ow::Model OneNode(const std::string& op, int elem_type, const std::vector<ow::Dim>& dims, int n_in = 1,
                  int64_t opset = 21) {
  ow::Model m;
  m.opset = opset;
  ow::Node n{op, {}, {"y"}, {}, ""};
  for (int k = 0; k < n_in; ++k) {
    const std::string name = "x" + std::to_string(k);
    n.inputs.push_back(name);
    m.inputs.push_back(ow::ValueInfo(name, ow::TensorType(elem_type, dims)));
  }
  m.nodes.push_back(n);
  m.outputs.push_back(ow::ValueInfo("y", ow::TensorType(elem_type, dims)));
  return m;
}

template <typename F>
ErrorCode CodeOf(F&& f) {
  try {
    f();
  } catch (const onemodel::Error& e) {
    return e.code();
  }
  FAIL("no onemodel::Error was thrown");
  return ErrorCode::kInternal;
}

template <typename F>
std::string MessageOf(F&& f) {
  try {
    f();
  } catch (const onemodel::Error& e) {
    return e.what();
  }
  return "(no error)";
}

// The committed golden line of a graph output: testdata/graphs/golden-exact.txt.
std::string CommittedHash(const std::string& key) {
  std::ifstream f("testdata/graphs/golden-exact.txt");
  REQUIRE(f.good());
  std::string name, hash;
  while (f >> name >> hash) {
    if (name == key) return hash;
  }
  FAIL("no committed hash for " << key);
  return "";
}

Tensor Floats(std::vector<float> v, std::vector<int64_t> shape) { return Tensor::FromVector(v, std::move(shape)); }

std::vector<float> AsFloats(const Value& v) {
  const Tensor& t = v.tensor();
  return std::vector<float>(t.data<float>(), t.data<float>() + t.size());
}

}  // namespace

TEST_CASE("api: every element type goes in and comes out of Identity bit for bit") {
  struct Case {
    ElementType type;
    int64_t opset;
  };
  const Case cases[] = {
      {ElementType::kFloat, 21},      {ElementType::kUInt8, 21},          {ElementType::kInt8, 21},
      {ElementType::kUInt16, 21},     {ElementType::kInt16, 21},          {ElementType::kInt32, 21},
      {ElementType::kInt64, 21},      {ElementType::kBool, 21},           {ElementType::kFloat16, 21},
      {ElementType::kDouble, 21},     {ElementType::kUInt32, 21},         {ElementType::kUInt64, 21},
      {ElementType::kBFloat16, 21},   {ElementType::kFloat8E4M3FN, 21},   {ElementType::kFloat8E4M3FNUZ, 21},
      {ElementType::kFloat8E5M2, 21}, {ElementType::kFloat8E5M2FNUZ, 21}, {ElementType::kUInt4, 21},
      {ElementType::kInt4, 21},       {ElementType::kFloat4E2M1, 23},     {ElementType::kFloat8E8M0, 24},
      {ElementType::kUInt2, 25},      {ElementType::kInt2, 25},           {ElementType::kComplex64, 21},
      {ElementType::kComplex128, 21}, {ElementType::kString, 21},
  };
  for (const Case& c : cases) {
    const std::string tname = onemodel::ElementTypeName(c.type);
    INFO("type " << tname);
    ow::Model m = OneNode("Identity", int(c.type), {2, 3}, 1, c.opset);
    m.ir_version = c.opset >= 25 ? 13 : c.opset >= 24 ? 12 : 11;
    Session s = FromModel(m);
    REQUIRE(s.inputs().size() == 1);
    CHECK(s.inputs()[0].type == c.type);
    CHECK(s.inputs()[0].shape == std::vector<int64_t>{2, 3});
    Tensor x;
    if (c.type == ElementType::kString) {
      x = Tensor::FromStrings({"a", "", "exact", "mode", "\xc3\xa9", "6"}, {2, 3});
    } else {
      x = Tensor(c.type, {2, 3});
      auto* p = static_cast<uint8_t*>(x.mutable_data());
      // Bytes valid for every type: small values (sub-byte types hold 0..3; bool 0/1).
      for (size_t i = 0; i < x.byte_size(); ++i) p[i] = uint8_t(c.type == ElementType::kBool ? i % 2 : (i * 7 + 1) % 4);
    }
    const auto out = s.Run({{"x0", x}});
    REQUIRE(out.size() == 1);
    CHECK(out[0].name == "y");
    const Tensor& y = out[0].value.tensor();
    CHECK(y.type() == c.type);
    CHECK(y.shape() == x.shape());
    if (c.type == ElementType::kString) {
      CHECK(y.strings() == x.strings());
    } else {
      REQUIRE(y.byte_size() == x.byte_size());
      CHECK(std::memcmp(y.data(), x.data(), x.byte_size()) == 0);
    }
    CHECK(onemodel::GoldenHash(out[0].value) == onemodel::GoldenHash(Value(x)));
  }
}

TEST_CASE("api: MeasureMulAddPeak times a target's multiply+add loop") {
  const onemodel::MulAddPeak p = onemodel::MeasureMulAddPeak("scalar", 1);
  CHECK(p.target == "scalar");
  CHECK(p.lanes >= 1);
  CHECK(p.gflops > 0);
  CHECK(onemodel::MeasureMulAddPeak("", 1).target == onemodel::BestTarget());
  CHECK_THROWS_AS(onemodel::MeasureMulAddPeak("scalar", 0), onemodel::Error);
  CHECK_THROWS_AS(onemodel::MeasureMulAddPeak("avx9", 1), onemodel::Error);
}

TEST_CASE("api: typed access checks the element type") {
  Tensor f = Floats({1, 2}, {2});
  CHECK(f.data<float>()[1] == 2.0f);
  CHECK(CodeOf([&] { (void)f.data<int32_t>(); }) == ErrorCode::kTypeMismatch);
  Tensor h(ElementType::kFloat16, {3});
  CHECK_NOTHROW(h.data<uint16_t>());
  CHECK(CodeOf([&] { (void)h.data<float>(); }) == ErrorCode::kTypeMismatch);
  CHECK(CodeOf([&] { (void)f.strings(); }) == ErrorCode::kTypeMismatch);
  CHECK(f.ElementAsDouble(0) == 1.0);
  CHECK(CodeOf([&] { (void)f.ElementAsDouble(2); }) == ErrorCode::kOutOfRange);
}

TEST_CASE("api: tensors have value semantics; a write never reaches a copy or a session") {
  Tensor a = Floats({1, 2, 3}, {3});
  Tensor b = a;
  b.mutable_data<float>()[0] = 9;
  CHECK(a.data<float>()[0] == 1);
  CHECK(b.data<float>()[0] == 9);
  // An output that is the model's own weight (Identity of an initializer): writing it
  // must not change the next run's output.
  ow::Model m;
  m.inputs.push_back(ow::ValueInfo("x", ow::TensorType(1, {1})));
  float w[2] = {5, 6};
  m.initializers.push_back({"w", 1, {2}, std::string(reinterpret_cast<const char*>(w), sizeof w)});
  m.nodes.push_back({"Identity", {"w"}, {"y"}, {}, ""});
  m.nodes.push_back({"Identity", {"x"}, {"z"}, {}, ""});
  m.outputs.push_back(ow::ValueInfo("y", ow::TensorType(1, {2})));
  m.outputs.push_back(ow::ValueInfo("z", ow::TensorType(1, {1})));
  Session s = FromModel(m);
  auto out1 = s.Run({{"x", Floats({1}, {1})}});
  out1[0].value.tensor().mutable_data<float>()[0] = -1;
  const auto out2 = s.Run({{"x", Floats({1}, {1})}});
  CHECK(AsFloats(out2[0].value) == std::vector<float>{5, 6});
}

TEST_CASE("api: views are read in place, never copied, and no output points into one", "[allocs]") {
  // 6 M floats (24 MiB, a size nothing else in this binary allocates) of which Slice
  // reads the last two: if the view were copied, a 24 MiB request would be seen in Run.
  const int64_t n = 6 * 1024 * 1024;
  std::vector<float> mem(size_t(n), 0.5f);
  ow::Model m;
  m.opset = 18;
  m.inputs.push_back(ow::ValueInfo("x", ow::TensorType(1, {n})));
  const int64_t starts[1] = {n - 2}, ends[1] = {n};
  m.initializers.push_back({"starts", 7, {1}, std::string(reinterpret_cast<const char*>(starts), 8)});
  m.initializers.push_back({"ends", 7, {1}, std::string(reinterpret_cast<const char*>(ends), 8)});
  m.nodes.push_back({"Slice", {"x", "starts", "ends"}, {"s"}, {}, ""});
  m.nodes.push_back({"Identity", {"x"}, {"same"}, {}, ""});
  m.outputs.push_back(ow::ValueInfo("s", ow::TensorType(1, {2})));
  m.outputs.push_back(ow::ValueInfo("same", ow::TensorType(1, {n})));
  Session s = FromModel(m);
  Tensor view = Tensor::View(ElementType::kFloat, {n}, mem.data(), mem.size() * sizeof(float));
  CHECK(view.is_view());
  CHECK(view.data() == mem.data());
  g_largest = 0;
  g_counting = true;
  const auto out = s.Run({{"x", view}}, {"s"});
  g_counting = false;
  CHECK(g_largest.load() < size_t(n) * sizeof(float));
  CHECK(AsFloats(out[0].value) == std::vector<float>{0.5f, 0.5f});
  // Identity of a view: the output is the caller's bytes, in memory of its own.
  const auto out2 = s.Run({{"x", view}}, {"same"});
  const Tensor& same = out2[0].value.tensor();
  CHECK(same.data() != mem.data());
  CHECK(!same.is_view());
  mem[0] = 7;  // the caller reuses its memory: the output keeps what it was
  CHECK(same.data<float>()[0] == 0.5f);
  CHECK(view.data<float>()[0] == 7);  // the view is the caller's memory
  CHECK(CodeOf([&] { Tensor::View(ElementType::kFloat, {4}, mem.data(), 15); }) == ErrorCode::kInvalidArgument);
  CHECK(CodeOf([&] { Tensor::View(ElementType::kString, {1}, mem.data(), 32); }) == ErrorCode::kInvalidArgument);
}

TEST_CASE("api: symbolic dimensions and free-dimension overrides") {
  ow::Model m = OneNode("Add", 1, {"batch", 3}, 2);
  Session s = FromModel(m);
  REQUIRE(s.inputs().size() == 2);
  CHECK(s.inputs()[0].shape == std::vector<int64_t>{-1, 3});
  CHECK(s.inputs()[0].symbolic == std::vector<std::string>{"batch", ""});
  CHECK(s.inputs()[0].ToString() == "FLOAT[batch,3]");
  for (int64_t b : {1, 2, 5}) {
    std::vector<float> v(size_t(b * 3), 1.5f);
    const auto out = s.Run({{"x0", Floats(v, {b, 3})}, {"x1", Floats(v, {b, 3})}});
    CHECK(out[0].value.tensor().shape() == std::vector<int64_t>{b, 3});
    CHECK(AsFloats(out[0].value) == std::vector<float>(size_t(b * 3), 3.0f));
  }
  const std::string msg = MessageOf([&] {
    s.Run({{"x0", Floats({1, 2, 3, 4}, {1, 4})}, {"x1", Floats({1, 2, 3}, {1, 3})}});
  });
  CHECK(msg.find("shape_mismatch") == 0);
  CHECK(msg.find("'x0'") != std::string::npos);
  CHECK(msg.find("[batch,3]") != std::string::npos);
  CHECK(msg.find("[1,4]") != std::string::npos);

  SessionOptions o = RowOptions();
  o.free_dimension_overrides["batch"] = 2;
  Session fixed = FromModel(m, o);
  CHECK(fixed.inputs()[0].shape == std::vector<int64_t>{2, 3});
  CHECK_NOTHROW(
      fixed.Run({{"x0", Floats(std::vector<float>(6, 1), {2, 3})}, {"x1", Floats(std::vector<float>(6, 1), {2, 3})}}));
  CHECK(CodeOf([&] {
          fixed.Run({{"x0", Floats({1, 2, 3}, {1, 3})}, {"x1", Floats({1, 2, 3}, {1, 3})}});
        }) == ErrorCode::kShapeMismatch);
  o.free_dimension_overrides = {{"bacth", 2}};
  const std::string typo = MessageOf([&] { FromModel(m, o); });
  CHECK(typo.find("invalid_argument") == 0);
  CHECK(typo.find("'bacth'") != std::string::npos);
  CHECK(typo.find("'batch'") != std::string::npos);
}

TEST_CASE("api: requested outputs, in the order asked") {
  ow::Model m;
  m.inputs.push_back(ow::ValueInfo("a", ow::TensorType(1, {2})));
  m.inputs.push_back(ow::ValueInfo("b", ow::TensorType(1, {2})));
  m.nodes.push_back({"Add", {"a", "b"}, {"sum"}, {}, ""});
  m.nodes.push_back({"Mul", {"a", "b"}, {"prod"}, {}, ""});
  m.outputs.push_back(ow::ValueInfo("sum", ow::TensorType(1, {2})));
  m.outputs.push_back(ow::ValueInfo("prod", ow::TensorType(1, {2})));
  Session s = FromModel(m);
  const std::vector<NamedValue> feeds = {{"a", Floats({2, 3}, {2})}, {"b", Floats({4, 5}, {2})}};
  const auto all = s.Run(feeds);
  REQUIRE(all.size() == 2);
  CHECK(all[0].name == "sum");
  CHECK(all[1].name == "prod");
  const auto one = s.Run(feeds, {"prod"});
  REQUIRE(one.size() == 1);
  CHECK(one[0].name == "prod");
  CHECK(AsFloats(one[0].value) == std::vector<float>{8, 15});
  const auto both = s.Run(feeds, {"prod", "sum"});
  CHECK(both[0].name == "prod");
  CHECK(AsFloats(both[1].value) == std::vector<float>{6, 8});
  const std::string msg = MessageOf([&] { s.Run(feeds, {"diff"}); });
  CHECK(msg.find("invalid_argument") == 0);
  CHECK(msg.find("'diff'") != std::string::npos);
  CHECK(msg.find("'sum', 'prod'") != std::string::npos);
}

TEST_CASE("api: an ONNX Runtime contrib node runs and plans through its family") {
  // com.microsoft FusedMatMul with transB: Y = A B^T, [2, 3] x [4, 3]^T.
  ow::Model m;
  m.inputs.push_back(ow::ValueInfo("a", ow::TensorType(1, {2, 3})));
  m.inputs.push_back(ow::ValueInfo("b", ow::TensorType(1, {4, 3})));
  m.nodes.push_back({"FusedMatMul", {"a", "b"}, {"y"}, {{"transB", 1}}, "com.microsoft"});
  m.outputs.push_back(ow::ValueInfo("y", ow::TensorType(1, {2, 4})));
  Session s = FromModel(m);
  const auto out =
      s.Run({{"a", Floats({1, 2, 3, 4, 5, 6}, {2, 3})}, {"b", Floats({1, 0, 0, 0, 1, 0, 0, 0, 1, 1, 1, 1}, {4, 3})}});
  CHECK(AsFloats(out[0].value) == std::vector<float>{1, 2, 3, 6, 4, 5, 6, 15});
  const auto plans = s.plans();
  REQUIRE(plans.size() == 1);
  CHECK(plans[0].op_type == "com.microsoft.FusedMatMul");
  CHECK(plans[0].family == "matmul");
  CHECK(!plans[0].algorithm.empty());
  CHECK(!plans[0].fast);
}

// Fast mode through the public API: Div by a constant then Softmax. An exact session plans
// no fast row; a fast session may (Softmax's rows-fma where the target has FMA), its
// outputs within the softmax bound of binary64, and its div-reciprocal pass can be left
// out by name (the division then stays a division, and the outputs differ). At ISA ref
// (the oracle) no pass runs and fast mode gives exact mode's bits.
TEST_CASE("api: fast mode's rows and passes, and leaving a fast pass out") {
  ow::Model m;
  m.inputs.push_back(ow::ValueInfo("x", ow::TensorType(1, {2, 200})));
  const float three = 3.0f;
  m.initializers.push_back({"c", 1, {}, std::string(reinterpret_cast<const char*>(&three), sizeof three)});
  m.nodes.push_back({"Div", {"x", "c"}, {"t"}, {}, ""});
  m.nodes.push_back({"Softmax", {"t"}, {"y"}, {{"axis", -1}}, ""});
  m.outputs.push_back(ow::ValueInfo("y", ow::TensorType(1, {2, 200})));
  std::vector<float> xv(400);
  for (size_t i = 0; i < xv.size(); ++i) xv[i] = float(int(i * 37 % 101) - 50) * 0.173f;
  auto run = [&](onemodel::Mode mode, std::vector<std::string> disabled, bool* any_fast) {
    SessionOptions o = RowOptions();
    o.mode = mode;
    o.disabled_passes = std::move(disabled);
    Session s = FromModel(m, o);
    const auto out = s.Run({{"x", Floats(xv, {2, 200})}});
    *any_fast = false;
    for (const auto& p : s.plans()) {
      *any_fast = *any_fast || p.fast;
      if (p.op_type == "Softmax") CHECK(p.fast == (p.algorithm == "rows-fma"));
    }
    return AsFloats(out[0].value);
  };
  bool fast_rows = false;
  const std::vector<float> exact = run(onemodel::Mode::kExact, {}, &fast_rows);
  CHECK(!fast_rows);
  const std::vector<float> fast = run(onemodel::Mode::kFast, {}, &fast_rows);
  const std::vector<float> no_recip = run(onemodel::Mode::kFast, {"div-reciprocal"}, &fast_rows);
  if (RowOptions().isa == "ref")
    CHECK(fast == exact);  // the oracle runs the model's own graph: no pass, no fast row
  else
    CHECK(fast != no_recip);  // 1/3 is not a float: the product rounds differently somewhere
  for (const auto* y : {&exact, &fast, &no_recip})
    for (int r = 0; r < 2; ++r) {
      double mx = -1e30, s = 0;
      for (int j = 0; j < 200; ++j) mx = std::max(mx, double(xv[size_t(r * 200 + j)]) / 3.0);
      for (int j = 0; j < 200; ++j) s += std::exp(double(xv[size_t(r * 200 + j)]) / 3.0 - mx);
      for (int j = 0; j < 200; ++j) {
        const double p = std::exp(double(xv[size_t(r * 200 + j)]) / 3.0 - mx) / s;
        CHECK(std::fabs(double((*y)[size_t(r * 200 + j)]) - p) <= 1e-5 * p);
      }
    }
}

TEST_CASE("api: every error code a caller can cause, with a message naming what was wrong") {
  const ow::Model good = OneNode("Relu", 1, {2});
  const std::string bytes = good.Bytes();
  // Models.
  CHECK(CodeOf([] { Session("/nonexistent/model.onnx"); }) == ErrorCode::kIo);
  CHECK(CodeOf([] { Session::FromBytes("garbage!", 8); }) == ErrorCode::kInvalidModel);
  CHECK(CodeOf([&] { Session::FromBytes(bytes.data(), bytes.size() / 2); }) == ErrorCode::kInvalidModel);
  CHECK(CodeOf([] { Session::FromBytes("", 0); }) == ErrorCode::kInvalidModel);
  const std::string unknown_op = MessageOf([] { FromModel(OneNode("FrobnicateOp", 1, {2})); });
  CHECK(unknown_op.find("unsupported_op") == 0);
  CHECK(unknown_op.find("FrobnicateOp") != std::string::npos);
  CHECK(CodeOf([] { FromModel(OneNode("Relu", 1, {2}, 1, 999)); }) == ErrorCode::kUnsupportedOpset);
  ow::Model cycle;
  cycle.inputs.push_back(ow::ValueInfo("x", ow::TensorType(1, {2})));
  cycle.nodes.push_back({"Add", {"x", "b"}, {"a"}, {}, ""});
  cycle.nodes.push_back({"Relu", {"a"}, {"b"}, {}, ""});
  cycle.outputs.push_back(ow::ValueInfo("b", ow::TensorType(1, {2})));
  CHECK(CodeOf([&] { FromModel(cycle); }) == ErrorCode::kGraphCycle);
  // Feeds.
  Session s = FromModel(good);
  const std::string missing = MessageOf([&] { s.Run({}); });
  CHECK(missing.find("missing_input") == 0);
  CHECK(missing.find("'x0'") != std::string::npos);
  const std::string type = MessageOf([&] { s.Run({{"x0", Tensor::FromVector(std::vector<int32_t>{1, 2}, {2})}}); });
  CHECK(type.find("type_mismatch") == 0);
  CHECK(type.find("FLOAT") != std::string::npos);
  CHECK(type.find("INT32") != std::string::npos);
  CHECK(CodeOf([&] { s.Run({{"x0", Floats({1, 2, 3}, {3})}}); }) == ErrorCode::kShapeMismatch);
  // A feed the model does not name is ignored, as onnxruntime-node ignores it.
  CHECK(s.Run({{"x0", Floats({1, 2}, {2})}, {"nope", Floats({1}, {1})}}).size() == 1);
  CHECK(CodeOf([&] {
          s.Run({{"x0", Floats({1, 2}, {2})}, {"x0", Floats({1, 2}, {2})}});
        }) == ErrorCode::kInvalidArgument);
  CHECK(CodeOf([&] { s.Run({{"x0", Tensor()}}); }) == ErrorCode::kInvalidArgument);
  // Options.
  SessionOptions o;
  o.threads = -1;
  CHECK(CodeOf([&] { FromModel(good, o); }) == ErrorCode::kInvalidArgument);
  o = SessionOptions();
  o.isa = "avx9";
  const std::string isa = MessageOf([&] { FromModel(good, o); });
  CHECK(isa.find("invalid_argument") == 0);
  CHECK(isa.find("avx9") != std::string::npos);
  o.isa = "";
  for (const auto& t : onemodel::CompiledTargets()) {
    if (!t.supported) {
      o.isa = t.name;
      break;
    }
  }
  bool foreign = false;
  for (const std::string name : {"neon", "avx2", "wasm128"}) {
    bool compiled = false;
    for (const auto& t : onemodel::CompiledTargets()) compiled |= t.name == name;
    if (!compiled && o.isa.empty()) {
      o.isa = name;
      foreign = true;
    }
  }
  INFO("unsupported target tried: " << o.isa << (foreign ? " (not compiled)" : " (not run by this CPU)"));
  CHECK(CodeOf([&] { FromModel(good, o); }) == ErrorCode::kUnsupportedIsa);
  o = SessionOptions();
  o.avx512_tile_bits = 300;
  const std::string tiles = MessageOf([&] { FromModel(good, o); });
  CHECK(tiles.find("invalid_argument") == 0);
  CHECK(tiles.find("avx512_tile_bits") != std::string::npos);
  for (int bits : {0, 256, 512}) {  // every width gives a session (only AVX-512 tables use it)
    o.avx512_tile_bits = bits;
    CHECK_NOTHROW(FromModel(good, o));
  }
  o = SessionOptions();
  o.disabled_passes = {"constant-folding", "no-such-pass"};
  const std::string pass = MessageOf([&] { FromModel(good, o); });
  CHECK(pass.find("'no-such-pass'") != std::string::npos);
  o = SessionOptions();
  o.free_dimension_overrides = {{"n", 1}};
  CHECK(CodeOf([&] { FromModel(good, o); }) == ErrorCode::kInvalidArgument);
  // Sizes.
  CHECK(CodeOf([] { Tensor(ElementType::kFloat, {int64_t(1) << 40, int64_t(1) << 40}); }) == ErrorCode::kOutOfRange);
  CHECK(CodeOf([] { Tensor(ElementType::kFloat, {-1}); }) == ErrorCode::kOutOfRange);
  CHECK(CodeOf([] { Tensor(ElementType(99), {1}); }) == ErrorCode::kInvalidArgument);
  CHECK(CodeOf([] { Tensor::FromVector(std::vector<float>{1, 2}, {3}); }) == ErrorCode::kInvalidArgument);
  CHECK(CodeOf([] { Tensor::FromStrings({"a"}, {2}); }) == ErrorCode::kInvalidArgument);
  // The session still works after every error above.
  CHECK(AsFloats(s.Run({{"x0", Floats({-1, 2}, {2})}})[0].value) == std::vector<float>{0, 2});
  // Error codes have stable names, and what() starts with the name.
  CHECK(std::string(onemodel::ErrorCodeName(ErrorCode::kShapeMismatch)) == "shape_mismatch");
  CHECK(std::string(onemodel::ErrorCodeName(ErrorCode::kLimitExceeded)) == "limit_exceeded");
  CHECK(std::string(onemodel::ErrorCodeName(ErrorCode::kCancelled)) == "cancelled");
  CHECK(std::string(onemodel::ErrorCodeName(ErrorCode::kOutOfMemory)) == "out_of_memory");
  CHECK(std::string(onemodel::ErrorCodeName(ErrorCode(16))) == "unknown");
  // Run options: a terminated RunOptions stops the run; Reset lets the next one through.
  onemodel::RunOptions stop;
  stop.Terminate();
  CHECK(CodeOf([&] { s.Run({{"x0", Floats({-1, 2}, {2})}}, {}, stop); }) == ErrorCode::kCancelled);
  stop.Reset();
  CHECK(AsFloats(s.Run({{"x0", Floats({-1, 2}, {2})}}, {}, stop)[0].value) == std::vector<float>{0, 2});
}

TEST_CASE("api: moved and destroyed sessions") {
  Session a = FromModel(OneNode("Neg", 1, {2}));
  Session b = std::move(a);
  CHECK(AsFloats(b.Run({{"x0", Floats({1, -2}, {2})}})[0].value) == std::vector<float>{-1, 2});
  CHECK(CodeOf([&] {
          a.Run({{"x0", Floats({1, -2}, {2})}});
        }) == ErrorCode::kInvalidArgument);                                 // NOLINT: use after move
  CHECK(CodeOf([&] { (void)a.inputs(); }) == ErrorCode::kInvalidArgument);  // NOLINT
  a = std::move(b);
  CHECK(a.outputs().size() == 1);
  std::vector<NamedValue> kept;
  {
    Session c = FromModel(OneNode("Neg", 1, {2}));
    kept = c.Run({{"x0", Floats({3, 4}, {2})}});
  }  // the session is gone; its outputs stay
  CHECK(AsFloats(kept[0].value) == std::vector<float>{-3, -4});
}

TEST_CASE("api: a committed golden graph gives its committed hash on every target this CPU runs") {
  const Tensor x = onemodel::LoadNpy("testdata/graphs/conv_net.x.npy");
  const std::string want = CommittedHash("conv_net/probs");
  for (const auto& t : onemodel::CompiledTargets()) {
    if (!t.supported) continue;
    for (int threads : {1, 3}) {
      INFO("target " << t.name << ", " << threads << " threads");
      SessionOptions o;
      o.isa = t.name;
      o.threads = threads;
      Session s("testdata/graphs/conv_net.onnx", o);
      CHECK(s.target() == t.name);
      const auto out = s.Run({{"x", x}}, {"probs"});
      CHECK(onemodel::GoldenHash(out) == want);
    }
  }
  // Options that never change a bit.
  SessionOptions o = RowOptions();
  o.prepack = false;
  o.memory_plan = false;
  o.disabled_passes = {"constant-folding", "quantize-dequantize",      "dynamic-quant-matmul",
                       "conv-activation",  "conv-quantize-dequantize", "conv-residual",
                       "attention",        "elementwise-chain"};
  o.profiling = onemodel::Profiling::kByNode;
  Session s("testdata/graphs/conv_net.onnx", o);
  CHECK(onemodel::GoldenHash(s.Run({{"x", x}}, {"probs"})) == want);
  const onemodel::RunProfile p = s.last_profile();
  CHECK(!p.entries.empty());
  CHECK(p.ToString().find("[onemodel] profile: ") == 0);
}

TEST_CASE("api: concurrent runs on one session and on several give identical bits") {
  const Tensor x = onemodel::LoadNpy("testdata/graphs/conv_net.x.npy");
  const std::string want = CommittedHash("conv_net/probs");
  SessionOptions o = RowOptions();
  o.threads = 2;
  Session shared("testdata/graphs/conv_net.onnx", o);
  std::vector<Session> own;
  for (int k = 0; k < 4; ++k) own.emplace_back("testdata/graphs/conv_net.onnx", o);
  std::atomic<int> wrong{0}, errors{0}, runs{0};
  std::vector<std::thread> threads;
  for (int k = 0; k < 4; ++k) {
    threads.emplace_back([&, k] {
      for (int r = 0; r < 25; ++r) {
        try {
          const Session& s = r % 2 ? shared : own[size_t(k)];
          if (onemodel::GoldenHash(s.Run({{"x", x}}, {"probs"})) != want) ++wrong;
          ++runs;
        } catch (...) {
          ++errors;
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  CHECK(runs == 100);
  CHECK(wrong == 0);
  CHECK(errors == 0);
}

TEST_CASE("api: models, npy files and ONNX values without a session") {
  const onemodel::ModelInfo info = onemodel::InspectModel("testdata/graphs/conv_net.onnx");
  CHECK(info.inputs.size() == 1);
  CHECK(info.inputs[0].ToString() == "FLOAT[1,3,32,32]");
  CHECK(info.outputs[0].name == "probs");
  bool has_conv = false;
  for (const auto& u : info.operators) has_conv |= u.op_type == "Conv" && u.count == 4 && u.supported;
  CHECK(has_conv);
  const Tensor x = onemodel::LoadNpy("testdata/graphs/conv_net.x.npy");
  const std::vector<uint8_t> npy = onemodel::WriteNpy(x);
  const Tensor back = onemodel::ReadNpy(npy.data(), npy.size());
  CHECK(onemodel::GoldenHash(Value(back)) == onemodel::GoldenHash(Value(x)));
  CHECK(onemodel::GoldenHash(Value(x)) == CommittedHash("input/conv_net/x"));
  CHECK(CodeOf([] { onemodel::ReadNpy("nope", 4); }) != ErrorCode::kInternal);
  CHECK(CodeOf([] { onemodel::LoadNpy("/nonexistent.npy"); }) == ErrorCode::kIo);
  // The golden input generator is deterministic and typed.
  onemodel::ValueInfo in;
  in.name = "tokens";
  in.kind = onemodel::ValueInfo::Kind::kTensor;
  in.type = ElementType::kInt64;
  in.has_shape = true;
  in.shape = {-1, 4};
  in.symbolic = {"seq", ""};
  const Tensor g1 = onemodel::MakeGoldenInput(in, {{"seq", 3}});
  CHECK(g1.shape() == std::vector<int64_t>{3, 4});
  CHECK(onemodel::GoldenHash(Value(g1)) == onemodel::GoldenHash(Value(onemodel::MakeGoldenInput(in, {{"seq", 3}}))));
}

int main(int argc, char** argv) {
  std::printf("row: api tests, target=%s cpu=\"%s\"\n",
              std::getenv("ONEMODEL_ISA") ? std::getenv("ONEMODEL_ISA") : onemodel::BestTarget().c_str(),
              onemodel::CpuDescription().c_str());
  std::fflush(stdout);
  return RunCatchSession(argc, argv);
}
