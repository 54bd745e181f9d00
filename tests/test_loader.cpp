// Loader and session tests: every kind of bad model or input gives a typed error
// naming the problem (natively and on wasm: this file runs on every row).
#include "tests/catch.h"

#include <cstdio>
#include <filesystem>
#include <cstring>
#include <string>
#include <vector>

#include "core/bits.h"
#include "core/error.h"
#include "passes/infer.h"
#include "onnx/import.h"
#include "onnx/onnx.pb.h"
#include "onnx/tensor_proto.h"
#include "runtime/session.h"
#include "tests/model_proto.h"

namespace onemodel::impl {
namespace test {
namespace {

// A small valid model: Y = Relu(X + W), X float[2,3], W an initializer.
onnx::ModelProto SmallModel() {
  onnx::ModelProto m = testmodel::NewModel(8, 17, "small");
  auto* g = m.mutable_graph();
  testmodel::AddTensorInput(g, "X", onnx::TensorProto::FLOAT, {2, -1});
  auto* w = g->add_initializer();
  w->set_name("W");
  w->set_data_type(onnx::TensorProto::FLOAT);
  w->add_dims(2);
  w->add_dims(3);
  for (int i = 0; i < 6; ++i) w->add_float_data(float(i) - 2.5f);
  auto* add = g->add_node();
  add->set_op_type("Add");
  add->add_input("X");
  add->add_input("W");
  add->add_output("S");
  auto* relu = g->add_node();
  relu->set_op_type("Relu");
  relu->add_input("S");
  relu->add_output("Y");
  g->add_output()->set_name("Y");
  return m;
}

std::string Bytes(const onnx::ModelProto& m) { return m.SerializeAsString(); }

// ONNX's tensor bytes are little-endian: built by shifts, so they are right on any host.
std::string LittleEndianBytes(const std::vector<uint64_t>& values, size_t width) {
  std::string b;
  for (uint64_t v : values)
    for (size_t k = 0; k < width; ++k) b += char(uint8_t(v >> (8 * k)));
  return b;
}
std::string LittleEndianFloats(const std::vector<float>& values) {
  std::vector<uint64_t> bits;
  for (float f : values) bits.push_back(F2U(f));
  return LittleEndianBytes(bits, 4);
}

ErrorCode LoadError(const std::string& bytes, std::string* msg) {
  try {
    Session::FromBytes(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), {}, "test.onnx");
  } catch (const Error& e) {
    *msg = e.what();
    return e.code();
  }
  *msg = "";
  return ErrorCode::kInternal;
}

Value FilledValue(Shape s, float v = 1.0f) {
  Tensor t(DType::kFloat, s);
  for (int64_t i = 0; i < t.numel(); ++i) t.mutable_data<float>()[i] = v;
  return Value::FromTensor(t);
}

#define EXPECT_LOAD_ERROR(bytes, code, text)    \
  do {                                          \
    std::string msg;                            \
    CHECK(LoadError(bytes, &msg) == code);      \
    INFO("message: " << msg);                   \
    CHECK(msg.find(text) != std::string::npos); \
  } while (0)

}  // namespace

TEST_CASE("loader: a valid model loads and runs", "[loader]") {
  const std::string b = Bytes(SmallModel());
  Session s = Session::FromBytes(reinterpret_cast<const uint8_t*>(b.data()), b.size());
  REQUIRE(s.inputs().size() == 1);
  auto out = s.Run({{"X", FilledValue({2, 3})}});
  REQUIRE(out.size() == 1);
  const float* y = out[0].tensor.data<float>();
  CHECK(y[0] == 0.0f);  // relu(1 - 2.5)
  CHECK(y[3] == 1.5f);  // relu(1 + 0.5)
}

TEST_CASE("loader: bad model bytes are typed errors", "[loader]") {
  const std::string good = Bytes(SmallModel());
  EXPECT_LOAD_ERROR(good.substr(0, good.size() / 2), ErrorCode::kInvalidModel, "truncated or corrupt");
  EXPECT_LOAD_ERROR(std::string("this is not a protobuf at all\xff\xff"), ErrorCode::kInvalidModel,
                    "not an ONNX model");
  EXPECT_LOAD_ERROR(std::string(), ErrorCode::kInvalidModel, "empty");
}

TEST_CASE("loader: bad tensors are typed errors", "[loader]") {
  {
    auto m = SmallModel();
    m.mutable_graph()->mutable_initializer(0)->set_dims(0, -2);
    EXPECT_LOAD_ERROR(Bytes(m), ErrorCode::kInvalidModel, "negative dimension");
  }
  {
    auto m = SmallModel();
    auto* w = m.mutable_graph()->mutable_initializer(0);
    w->set_dims(0, int64_t(1) << 40);
    w->set_dims(1, int64_t(1) << 40);
    EXPECT_LOAD_ERROR(Bytes(m), ErrorCode::kOutOfRange, "too large");
  }
  {
    auto m = SmallModel();
    auto* w = m.mutable_graph()->mutable_initializer(0);
    w->clear_float_data();
    w->set_raw_data(std::string(8, '\0'));  // 2 floats for a [2,3] shape
    EXPECT_LOAD_ERROR(Bytes(m), ErrorCode::kInvalidModel, "needs 24");
  }
  {
    auto m = SmallModel();
    m.mutable_graph()->mutable_initializer(0)->clear_float_data();
    EXPECT_LOAD_ERROR(Bytes(m), ErrorCode::kInvalidModel, "float_data holds 0 values");
  }
  {
    auto m = SmallModel();
    m.mutable_graph()->mutable_initializer(0)->set_data_type(77);
    EXPECT_LOAD_ERROR(Bytes(m), ErrorCode::kTypeMismatch, "unknown element type 77");
  }
}

TEST_CASE("loader: bad graphs are typed errors", "[loader]") {
  {
    auto m = SmallModel();
    // Add reads Y, which Relu computes from Add's output: a cycle.
    m.mutable_graph()->mutable_node(0)->set_input(0, "Y");
    EXPECT_LOAD_ERROR(Bytes(m), ErrorCode::kGraphCycle, "cycle");
  }
  {
    auto m = SmallModel();
    m.mutable_graph()->mutable_node(1)->set_op_type("FrobnicateTensor");
    EXPECT_LOAD_ERROR(Bytes(m), ErrorCode::kUnsupportedOp, "FrobnicateTensor");
  }
  {
    auto m = SmallModel();
    m.mutable_opset_import(0)->set_version(99);
    EXPECT_LOAD_ERROR(Bytes(m), ErrorCode::kUnsupportedOpset, "opset 99");
  }
  {
    auto m = SmallModel();
    m.set_ir_version(99);
    EXPECT_LOAD_ERROR(Bytes(m), ErrorCode::kUnsupportedOpset, "IR version 99");
  }
  {
    auto m = SmallModel();
    m.mutable_graph()->mutable_node(1)->set_input(0, "nowhere");
    EXPECT_LOAD_ERROR(Bytes(m), ErrorCode::kInvalidModel, "'nowhere'");
  }
}

TEST_CASE("session: bad inputs are typed errors and the session stays usable", "[loader]") {
  const std::string b = Bytes(SmallModel());
  Session s = Session::FromBytes(reinterpret_cast<const uint8_t*>(b.data()), b.size(), {}, "small.onnx");
  auto expect = [&](const std::map<std::string, Value>& feeds, ErrorCode code, const std::string& text) {
    try {
      s.Run(feeds);
      FAIL("no error");
    } catch (const Error& e) {
      CHECK(e.code() == code);
      INFO("message: " << e.what());
      CHECK(std::string(e.what()).find(text) != std::string::npos);
    }
  };
  expect({}, ErrorCode::kMissingInput, "input 'X' was not given");
  Tensor i64(DType::kInt64, {2, 3});
  expect({{"X", Value::FromTensor(i64)}}, ErrorCode::kTypeMismatch, "must be FLOAT, got INT64");
  expect({{"X", FilledValue({3, 3})}}, ErrorCode::kShapeMismatch, "must have shape [2,N], got [3,3]");
  expect({{"X", FilledValue({2, 4})}}, ErrorCode::kShapeMismatch, "cannot be broadcast");
  // A feed the model does not name is ignored (onnxruntime-node ignores it too).
  CHECK(s.Run({{"X", FilledValue({2, 3})}, {"Q", FilledValue({1})}}).size() == 1);
  // After all that, a good run still works.
  CHECK(s.Run({{"X", FilledValue({2, 3})}}).size() == 1);
}

TEST_CASE("session: a declared scalar input takes a tensor of any shape, as ONNX Runtime does", "[loader]") {
  // Exporters declare [] where session code feeds a one-element [1] tensor; onnxruntime-node
  // 1.30 runs any shape there (checked: [1], [1, 1], [2]). Other declared shapes are checked.
  onnx::ModelProto m = testmodel::NewModel(8, 17, "scalar");
  auto* g = m.mutable_graph();
  testmodel::AddTensorInput(g, "X", onnx::TensorProto::FLOAT, {});
  auto* n = g->add_node();
  n->set_op_type("Neg");
  n->add_input("X");
  n->add_output("Y");
  g->add_output()->set_name("Y");
  const std::string b = m.SerializeAsString();
  Session s = Session::FromBytes(reinterpret_cast<const uint8_t*>(b.data()), b.size(), {}, "scalar.onnx");
  for (const Shape& shape : {Shape{}, Shape{1}, Shape{1, 1}, Shape{2}}) {
    Tensor x(DType::kFloat, shape);
    for (int64_t i = 0; i < x.numel(); ++i) x.mutable_data<float>()[i] = float(i + 1);
    const std::vector<Value> out = s.Run({{"X", Value::FromTensor(x)}});
    REQUIRE(out[0].tensor.shape() == shape);
    for (int64_t i = 0; i < x.numel(); ++i) CHECK(out[0].tensor.data<float>()[i] == -float(i + 1));
  }
}

TEST_CASE("loader: model-local functions run with their attribute references resolved", "[loader]") {
  onnx::ModelProto m = SmallModel();
  auto* op2 = m.add_opset_import();
  op2->set_domain("custom");
  op2->set_version(1);
  // custom.ScaledRelu(X) = LeakyRelu(X, alpha = caller's 'slope').
  auto* f = m.add_functions();
  f->set_name("ScaledRelu");
  f->set_domain("custom");
  f->add_input("x");
  f->add_output("y");
  f->add_attribute("slope");
  auto* fo = f->add_opset_import();
  fo->set_domain("");
  fo->set_version(17);
  auto* body = f->add_node();
  body->set_op_type("LeakyRelu");
  body->add_input("x");
  body->add_output("y");
  auto* ref = body->add_attribute();
  ref->set_name("alpha");
  ref->set_ref_attr_name("slope");
  ref->set_type(onnx::AttributeProto::FLOAT);
  auto* relu = m.mutable_graph()->mutable_node(1);
  relu->set_op_type("ScaledRelu");
  relu->set_domain("custom");
  auto* a = relu->add_attribute();
  a->set_name("slope");
  a->set_type(onnx::AttributeProto::FLOAT);
  a->set_f(0.5f);
  const std::string b = Bytes(m);
  Session s = Session::FromBytes(reinterpret_cast<const uint8_t*>(b.data()), b.size());
  auto out = s.Run({{"X", FilledValue({2, 3})}});
  const float* y = out[0].tensor.data<float>();
  CHECK(y[0] == -0.75f);  // 0.5 * (1 - 2.5)
  CHECK(y[3] == 1.5f);
}

TEST_CASE("loader: external data is read from beside the model, and only from there", "[loader]") {
  const std::string dir = (std::filesystem::temp_directory_path() / "onemodel-test-external").string();
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  REQUIRE(!ec);
  onnx::ModelProto m = SmallModel();
  auto* w = m.mutable_graph()->mutable_initializer(0);
  w->clear_float_data();
  w->set_data_location(onnx::TensorProto::EXTERNAL);
  auto* loc = w->add_external_data();
  loc->set_key("location");
  loc->set_value("weights.bin");
  auto* off = w->add_external_data();
  off->set_key("offset");
  off->set_value("4");
  std::vector<float> vals = {99.0f, -2.5f, -1.5f, -0.5f, 0.5f, 1.5f, 2.5f};  // the first float is skipped
  {
    std::FILE* f = std::fopen((dir + "/weights.bin").c_str(), "wb");
    REQUIRE(f);
    const std::string le = LittleEndianFloats(vals);
    std::fwrite(le.data(), 1, le.size(), f);
    std::fclose(f);
    std::FILE* g = std::fopen((dir + "/model.onnx").c_str(), "wb");
    const std::string b = Bytes(m);
    std::fwrite(b.data(), 1, b.size(), g);
    std::fclose(g);
  }
  Session s = Session::Load(dir + "/model.onnx");
  auto out = s.Run({{"X", FilledValue({2, 3})}});
  CHECK(out[0].tensor.data<float>()[3] == 1.5f);
  // A location outside the model's folder is refused.
  loc->set_value("../weights.bin");
  const std::string b2 = Bytes(m);
  std::FILE* g = std::fopen((dir + "/evil.onnx").c_str(), "wb");
  std::fwrite(b2.data(), 1, b2.size(), g);
  std::fclose(g);
  try {
    Session::Load(dir + "/evil.onnx");
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.code() == ErrorCode::kInvalidModel);
    CHECK(std::string(e.what()).find("inside the model's folder") != std::string::npos);
  }
  // From bytes, external data has no folder: a typed error.
  const std::string b3 = Bytes(m);
  CHECK_THROWS_AS(Session::FromBytes(reinterpret_cast<const uint8_t*>(b3.data()), b3.size()), Error);
}

TEST_CASE("loader: tensor bytes are little-endian and become the host's values", "[loader][endian]") {
  auto load = [](onnx::TensorProto tp, const std::string& bytes, bool raw) {
    tp.add_dims(2);
    if (raw) tp.set_raw_data(bytes);
    return TensorFromProto(tp, ExternalSource{}, nullptr, "t");
  };
  onnx::TensorProto tp;
  tp.set_data_type(onnx::TensorProto::FLOAT);
  Tensor f = load(tp, LittleEndianFloats({1.5f, -2.0f}), true);
  CHECK(f.data<float>()[0] == 1.5f);
  CHECK(f.data<float>()[1] == -2.0f);
  tp.set_data_type(onnx::TensorProto::INT64);
  Tensor i64 = load(tp, LittleEndianBytes({0x0102030405060708ull, uint64_t(-3)}, 8), true);
  CHECK(i64.data<int64_t>()[0] == 0x0102030405060708ll);
  CHECK(i64.data<int64_t>()[1] == -3);
  tp.set_data_type(onnx::TensorProto::UINT16);
  Tensor u16 = load(tp, LittleEndianBytes({0xBEEF, 7}, 2), true);
  CHECK(u16.data<uint16_t>()[0] == 0xBEEF);
  CHECK(u16.data<uint16_t>()[1] == 7);
  // complex64: two little-endian floats per element (real, imaginary).
  tp.set_data_type(onnx::TensorProto::COMPLEX64);
  Tensor c = load(tp, LittleEndianFloats({1.0f, 2.0f, -3.0f, 0.25f}), true);
  CHECK(c.data<float>()[1] == 2.0f);
  CHECK(c.data<float>()[3] == 0.25f);
  // float16 in int32_data: each value is the element's bit pattern.
  onnx::TensorProto h;
  h.set_data_type(onnx::TensorProto::FLOAT16);
  h.add_int32_data(0x3C00);  // 1.0
  h.add_int32_data(0xC000);  // -2.0
  Tensor hf = load(h, "", false);
  CHECK(hf.data<uint16_t>()[0] == 0x3C00);
  CHECK(hf.data<uint16_t>()[1] == 0xC000);
  onnx::TensorProto i32;
  i32.set_data_type(onnx::TensorProto::INT32);
  i32.add_int32_data(-70000);
  i32.add_int32_data(5);
  Tensor it = load(i32, "", false);
  CHECK(it.data<int32_t>()[0] == -70000);
  CHECK(it.data<int32_t>()[1] == 5);
}

TEST_CASE("BitCast: complex64 and 64-bit scalars share the little-endian layout on every host", "[loader][endian]") {
  onnx::ModelProto m = testmodel::NewModel(13, 26, "bitcast");
  auto* g = m.mutable_graph();
  testmodel::AddTensorInput(g, "C", onnx::TensorProto::COMPLEX64, {2});
  auto* n = g->add_node();
  n->set_op_type("BitCast");
  n->add_input("C");
  n->add_output("Y");
  auto* to = n->add_attribute();
  to->set_name("to");
  to->set_type(onnx::AttributeProto::INT);
  to->set_i(onnx::TensorProto::INT64);
  g->add_output()->set_name("Y");
  const std::string b = Bytes(m);
  Session s = Session::FromBytes(reinterpret_cast<const uint8_t*>(b.data()), b.size());
  Tensor c(DType::kComplex64, {2});
  const float parts[4] = {1.0f, 2.0f, -0.0f, 0.5f};
  std::memcpy(c.mutable_data<float>(), parts, sizeof(parts));
  auto out = s.Run({{"C", Value::FromTensor(c)}});
  // The real part is the low 32 bits, as on a little-endian host.
  CHECK(uint64_t(out[0].tensor.data<int64_t>()[0]) == ((uint64_t(F2U(2.0f)) << 32) | F2U(1.0f)));
  CHECK(uint64_t(out[0].tensor.data<int64_t>()[1]) == ((uint64_t(F2U(0.5f)) << 32) | F2U(-0.0f)));
}

TEST_CASE("infer: static types and shapes, with constant folding by the reference kernels", "[loader][infer]") {
  onnx::ModelProto m = SmallModel();
  // Z = Reshape(Y, Concat(Shape(W)[1:], [-1])): a shape computed from constants folds.
  auto* g = m.mutable_graph();
  auto node = [&](const char* op, std::vector<std::string> in, const char* out) {
    auto* n = g->add_node();
    n->set_op_type(op);
    for (auto& i : in) n->add_input(i);
    n->add_output(out);
    return n;
  };
  auto* c = g->add_initializer();
  c->set_name("minus1");
  c->set_data_type(onnx::TensorProto::INT64);
  c->add_dims(1);
  c->add_int64_data(-1);
  auto* st = g->add_initializer();
  st->set_name("one");
  st->set_data_type(onnx::TensorProto::INT64);
  st->add_dims(1);
  st->add_int64_data(1);
  node("Shape", {"W"}, "ws");
  auto* sl = node("Slice", {"ws", "one", "minus1"}, "ws1");  // [3] ... ends=-1 gives []
  (void)sl;
  node("Concat", {"one", "minus1"}, "newshape")->add_attribute()->set_name("axis");
  g->mutable_node(g->node_size() - 1)->mutable_attribute(0)->set_type(onnx::AttributeProto::INT);
  node("Reshape", {"Y", "newshape"}, "Z");
  g->add_output()->set_name("Z");
  const std::string b = m.SerializeAsString();
  const Model model = ImportModel(reinterpret_cast<const uint8_t*>(b.data()), b.size(), "infer.onnx", "");
  const auto v = InferTypes(model);
  REQUIRE(v.count("Y"));
  CHECK(v.at("Y").type.dtype == DType::kFloat);
  CHECK(v.at("Y").type.dims == Shape{2, 3});  // [2,N] + [2,3] broadcasts to [2,3]
  CHECK(v.at("ws").is_constant);              // Shape of an initializer folds
  CHECK(v.at("newshape").is_constant);
  CHECK(v.at("Z").type.dims == Shape{1, 6});  // Reshape to [1,-1] of a static [2,3]
  // With X declared [2,N] and no override, Y is still [2,3] (W fixes N).
  std::map<std::string, TensorType> over;
  TensorType x;
  x.dtype = DType::kFloat;
  x.has_shape = true;
  x.dims = {2, 1};
  x.dim_params = {"", ""};
  over["X"] = x;
  CHECK(InferTypes(model, over).at("Z").type.dims == Shape{1, 6});
}

}  // namespace test
}  // namespace onemodel::impl
