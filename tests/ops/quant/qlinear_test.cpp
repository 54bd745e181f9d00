// ONNX Runtime's QOperator-format operators (ops/quant/qlinear.cpp): values worked by
// hand from the definition (DequantizeLinear -> the float operator -> QuantizeLinear), the
// same bits at every ISA cap and thread count, and typed errors. The contrib cases
// (tools/contrib_cases.py) check them against ONNX Runtime.
#include "tests/catch.h"

#include <cstdint>
#include <string>
#include <vector>

#include "core/error.h"
#include "runtime/session.h"
#include "tests/ops/op_test.h"
#include "tests/test_util.h"

namespace onemodel::impl {
namespace test {
namespace {

Value U8Tensor(const Shape& s, const std::vector<uint8_t>& v) {
  Tensor t(DType::kUInt8, s);
  for (size_t i = 0; i < v.size(); ++i) t.mutable_data<uint8_t>()[i] = v[i];
  return Value::FromTensor(t);
}

std::vector<uint8_t> RunU8(const std::string& model, const std::map<std::string, Value>& feeds,
                           const std::string& isa = "", int threads = 1) {
  SessionOptions o;
  if (!isa.empty()) o.isa = isa;
  o.threads = threads;
  Session s = Session::FromBytes(reinterpret_cast<const uint8_t*>(model.data()), model.size(), o, "q.onnx");
  const std::vector<Value> out = s.Run(feeds);
  const Tensor& y = out[0].tensor;
  REQUIRE(y.dtype() == DType::kUInt8);
  return std::vector<uint8_t>(y.data<uint8_t>(), y.data<uint8_t>() + y.numel());
}

// A graph whose only node is `op` over the fed uint8 input "Q" and initializers.
std::string QGraph(const std::string& op, const Shape& qs, std::vector<TInit> inits, std::vector<std::string> in,
                   std::vector<TAttr> attrs = {}) {
  // TypedGraph feeds a float "X"; the uint8 feed is an initializer listed as fed.
  inits.push_back({"Q", U8, qs, std::vector<double>(size_t(Count(qs)), 0.0)});
  return TypedGraph({1}, inits, {{op, in, {"Y"}, attrs}}, {"Y"}, {"Q"});
}

}  // namespace

TEST_CASE("ops/qlinear: values from the definition, the same at every target", "[ops][int8]") {
  // QLinearAdd: a = (q - 100) * 0.5, b = (20 - 10) * 0.25 = 2.5, c = round((a + b) / 1) + 5.
  const std::string add = QGraph("com.microsoft.QLinearAdd", {5},
                                 {{"as", F, {}, {0.5}},
                                  {"az", U8, {}, {100}},
                                  {"B", U8, {1}, {20}},
                                  {"bs", F, {}, {0.25}},
                                  {"bz", U8, {}, {10}},
                                  {"cs", F, {}, {1.0}},
                                  {"cz", U8, {}, {5}}},
                                 {"Q", "as", "az", "B", "bs", "bz", "cs", "cz"});
  const std::map<std::string, Value> feeds = {{"X", Input({1}, {0.0f})}, {"Q", U8Tensor({5}, {100, 101, 102, 0, 255})}};
  // 2.5 -> 2 (half to even) + 5; 3.0 -> 8; 3.5 -> 4 + 5; -47.5 -> -48 + 5 < 0 -> 0; 80 -> 85.
  const std::vector<uint8_t> want = {7, 8, 9, 0, 85};
  CHECK(RunU8(add, feeds) == want);
  for (const char* isa : {"ref", "scalar"})
    for (int threads : {1, 3}) CHECK(RunU8(add, feeds, isa, threads) == want);
  // QLinearConcat along axis 1: [2, 1] (scale 1, zero 0) and [2, 2] (scale 2, zero 1) into
  // scale 0.5, zero 10.
  const std::string concat = QGraph("com.microsoft.QLinearConcat", {2, 1},
                                    {{"ys", F, {}, {0.5}},
                                     {"yz", U8, {}, {10}},
                                     {"s1", F, {}, {1.0}},
                                     {"z1", U8, {}, {0}},
                                     {"Q2", U8, {2, 2}, {1, 2, 3, 4}},
                                     {"s2", F, {}, {2.0}},
                                     {"z2", U8, {}, {1}}},
                                    {"ys", "yz", "Q", "s1", "z1", "Q2", "s2", "z2"}, {AI("axis", 1)});
  // Row 0: 3 -> 3 / 0.5 + 10 = 16; (1 - 1) * 2 = 0 -> 10; (2 - 1) * 2 = 2 -> 14.
  // Row 1: 200 -> 410 saturates to 255; (3 - 1) * 2 = 4 -> 18; (4 - 1) * 2 = 6 -> 22.
  CHECK(RunU8(concat, {{"X", Input({1}, {0.0f})}, {"Q", U8Tensor({2, 1}, {3, 200})}}) ==
        std::vector<uint8_t>{16, 10, 14, 255, 18, 22});
}

TEST_CASE("ops/qlinear: inputs that do not fit are typed errors", "[ops][int8]") {
  const std::string bad_scale = QGraph("com.microsoft.QLinearSigmoid", {4},
                                       {{"xs", F, {2}, {0.1, 0.2}}, {"ys", F, {}, {0.1}}}, {"Q", "xs", "", "ys"});
  const std::map<std::string, Value> feeds = {{"X", Input({1}, {0.0f})}, {"Q", U8Tensor({4}, {1, 2, 3, 4})}};
  try {
    Session s = Session::FromBytes(reinterpret_cast<const uint8_t*>(bad_scale.data()), bad_scale.size(), {}, "q.onnx");
    s.Run(feeds);
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.code() == ErrorCode::kShapeMismatch);
    CHECK(std::string(e.what()).find("scale must be one value") != std::string::npos);
  }
}

}  // namespace test
}  // namespace onemodel::impl
