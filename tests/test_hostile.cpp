// Hostile models, limits, cancellation and concurrency (docs/reliability.md), through
// the public API on every test row (wasm included): each class of hostile model gives
// its typed error, never a crash, an abort or kInternal; every limit is a
// kLimitExceeded error naming it; a run is stopped by its time limit or from another
// thread; sessions run from many threads give the same bits.
#include "tests/catch.h"

#include <atomic>
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "onemodel/onemodel.h"
#ifdef __EMSCRIPTEN__
#include <emscripten.h>
#endif
#include "onnx/onnx.pb.h"
#include "tests/model_proto.h"
#include "tests/fuzz/fuzz_model_builder.h"

namespace {

using onemodel::ErrorCode;

struct Outcome {
  bool ok = false;
  ErrorCode code = ErrorCode::kInternal;
  std::string message;
};

template <typename F>
Outcome Try(F&& f) {
  Outcome r;
  try {
    f();
    r.ok = true;
  } catch (const onemodel::Error& e) {
    r.code = e.code();
    r.message = e.what();
  }
  return r;
}

Outcome LoadBytes(const std::string& bytes, const onemodel::SessionOptions& o = {}) {
  return Try([&] { onemodel::Session::FromBytes(bytes.data(), bytes.size(), o, "hostile.onnx"); });
}

#define EXPECT_ERROR(outcome, want, text)                                     \
  do {                                                                        \
    const Outcome o_ = (outcome);                                             \
    INFO("message: " << o_.message);                                          \
    REQUIRE(!o_.ok);                                                          \
    CHECK(onemodel::ErrorCodeName(o_.code) == onemodel::ErrorCodeName(want)); \
    CHECK(o_.message.find(text) != std::string::npos);                        \
  } while (0)

onnx::ModelProto Empty(int64_t opset = 18) { return onemodel::testmodel::NewModel(9, opset, "g"); }

void Input(onnx::GraphProto* g, const std::string& name, int32_t type, std::vector<int64_t> dims) {
  onemodel::testmodel::AddTensorInput(g, name, type, dims);
}

onnx::NodeProto* Node(onnx::GraphProto* g, const std::string& op, std::vector<std::string> in,
                      std::vector<std::string> out) {
  auto* n = g->add_node();
  n->set_op_type(op);
  for (auto& i : in) n->add_input(i);
  for (auto& o : out) n->add_output(o);
  return n;
}

onnx::TensorProto* Int64Init(onnx::GraphProto* g, const std::string& name, std::vector<int64_t> dims,
                             std::vector<int64_t> vals) {
  auto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::INT64);
  for (int64_t d : dims) t->add_dims(d);
  for (int64_t v : vals) t->add_int64_data(v);
  return t;
}

// A graph attribute `name` of node n holding `body`.
void GraphAttr(onnx::NodeProto* n, const std::string& name, const onnx::GraphProto& body) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::GRAPH);
  *a->mutable_g() = body;
}

// If nested `depth` deep: each level's then/else branch holds the next If; the innermost
// branches give a constant. Input c: the condition.
onnx::GraphProto NestedIf(int depth, int level = 0) {
  onnx::GraphProto g;
  g.set_name("level" + std::to_string(level));
  const std::string y = "y" + std::to_string(level);
  if (level == depth) {
    auto* n = Node(&g, "Constant", {}, {y});
    auto* a = n->add_attribute();
    a->set_name("value_float");
    a->set_type(onnx::AttributeProto::FLOAT);
    a->set_f(1.0f);
  } else {
    auto* n = Node(&g, "If", {"c"}, {y});
    const onnx::GraphProto inner = NestedIf(depth, level + 1);
    GraphAttr(n, "then_branch", inner);
    GraphAttr(n, "else_branch", inner);
  }
  g.add_output()->set_name(y);
  return g;
}

onnx::ModelProto NestedIfModel(int depth) {
  onnx::ModelProto m = Empty();
  onnx::GraphProto g = NestedIf(depth);
  g.set_name("top");
  Input(&g, "c", onnx::TensorProto::BOOL, {});
  *m.mutable_graph() = g;
  return m;
}

// The bytes of a model with If nested `depth` deep, written without recursion (the
// serialiser would recurse as deep): the message is built from the inside out, its bytes
// reversed, and each enclosing field's length is everything written so far.
std::string DeepIfBytes(int depth) {
  std::string rev;
  auto put = [&](const std::string& bytes) { rev.append(bytes.rbegin(), bytes.rend()); };
  auto varint = [](uint64_t v) {
    std::string s;
    do {
      s += char((v & 0x7F) | (v > 0x7F ? 0x80 : 0));
      v >>= 7;
    } while (v);
    return s;
  };
  auto wrap = [&](int field) {  // everything so far becomes field `field` (length-delimited)
    const uint64_t len = rev.size();
    put(std::string(1, char(field << 3 | 2)) + varint(len));
  };
  for (int level = 0; level < depth; ++level) {
    wrap(6);                                      // AttributeProto.g
    put(std::string("\xa0\x01\x05", 3));          // AttributeProto.type = GRAPH
    put(std::string("\x0a\x0bthen_branch", 13));  // AttributeProto.name
    wrap(5);                                      // NodeProto.attribute
    put(std::string("\x22\x02If", 4));            // NodeProto.op_type
    wrap(1);                                      // GraphProto.node
  }
  wrap(7);                                  // ModelProto.graph
  put(std::string("\x42\x02\x10\x12", 4));  // opset_import { version: 18 }
  put(std::string("\x08\x09", 2));          // ir_version: 9
  return std::string(rev.rbegin(), rev.rend());
}

std::string Serialize(const onnx::ModelProto& m) { return m.SerializeAsString(); }

std::string WriteModel(const std::string& dir, const std::string& name, const onnx::ModelProto& m) {
  const std::string path = dir + "/" + name;
  std::FILE* f = std::fopen(path.c_str(), "wb");
  REQUIRE(f);
  const std::string b = Serialize(m);
  std::fwrite(b.data(), 1, b.size(), f);
  std::fclose(f);
  return path;
}

// Y = W + X, X float[4], W an initializer read from external data `location`.
onnx::ModelProto ExternalModel(const std::string& location, const std::string& offset = "",
                               const std::string& length = "") {
  onnx::ModelProto m = Empty();
  auto* g = m.mutable_graph();
  Input(g, "X", onnx::TensorProto::FLOAT, {4});
  auto* w = g->add_initializer();
  w->set_name("W");
  w->set_data_type(onnx::TensorProto::FLOAT);
  w->add_dims(4);
  w->set_data_location(onnx::TensorProto::EXTERNAL);
  auto kv = [&](const char* k, const std::string& v) {
    auto* e = w->add_external_data();
    e->set_key(k);
    e->set_value(v);
  };
  kv("location", location);
  if (!offset.empty()) kv("offset", offset);
  if (!length.empty()) kv("length", length);
  Node(g, "Add", {"X", "W"}, {"Y"});
  g->add_output()->set_name("Y");
  return m;
}

void WriteBytes(const std::string& path, size_t n) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  REQUIRE(f);
  for (size_t i = 0; i < n; ++i) std::fputc(int(i & 0x3F), f);
  std::fclose(f);
}

// ConstantOfShape(shape) -> Y (float zeros), shape an int64[1] input.
onnx::ModelProto ConstantOfShapeModel() {
  onnx::ModelProto m = Empty();
  auto* g = m.mutable_graph();
  Input(g, "shape", onnx::TensorProto::INT64, {1});
  Node(g, "ConstantOfShape", {"shape"}, {"Y"});
  g->add_output()->set_name("Y");
  return m;
}

onemodel::Tensor Shape1(int64_t n) { return onemodel::Tensor::FromVector<int64_t>({n}, {1}); }

}  // namespace

TEST_CASE("hostile models: each class gives its typed error", "[hostile]") {
  SECTION("empty, truncated and random bytes; a model without a graph") {
    EXPECT_ERROR(LoadBytes(""), ErrorCode::kInvalidModel, "empty");
    const std::string good = Serialize(NestedIfModel(1));
    EXPECT_ERROR(LoadBytes(good.substr(0, good.size() / 2)), ErrorCode::kInvalidModel, "truncated");
    EXPECT_ERROR(LoadBytes(std::string(64, '\xff')), ErrorCode::kInvalidModel, "not an ONNX model");
    onnx::ModelProto m = Empty();
    m.clear_graph();
    EXPECT_ERROR(LoadBytes(Serialize(m)), ErrorCode::kInvalidModel, "no graph");
  }
  SECTION("a cycle, and a subgraph that reads its own node's output") {
    onnx::ModelProto m = Empty();
    auto* g = m.mutable_graph();
    Node(g, "Relu", {"b"}, {"a"});
    Node(g, "Relu", {"a"}, {"b"});
    g->add_output()->set_name("a");
    EXPECT_ERROR(LoadBytes(Serialize(m)), ErrorCode::kGraphCycle, "cycle");
    onnx::ModelProto s = Empty();
    auto* sg = s.mutable_graph();
    Input(sg, "c", onnx::TensorProto::BOOL, {});
    auto* n = Node(sg, "If", {"c"}, {"y"});
    onnx::GraphProto body;
    body.set_name("self");
    Node(&body, "Identity", {"y"}, {"t"});
    body.add_output()->set_name("t");
    GraphAttr(n, "then_branch", body);
    GraphAttr(n, "else_branch", body);
    sg->add_output()->set_name("y");
    EXPECT_ERROR(LoadBytes(Serialize(s)), ErrorCode::kGraphCycle, "reads its own output");
  }
  SECTION("If nested 10 000 deep, and past max_graph_depth") {
    EXPECT_ERROR(LoadBytes(DeepIfBytes(10000)), ErrorCode::kInvalidModel, "deeper than protobuf's limit");
    onemodel::SessionOptions o;
    o.max_graph_depth = 8;
    EXPECT_ERROR(LoadBytes(Serialize(NestedIfModel(12)), o), ErrorCode::kLimitExceeded, "max_graph_depth (8)");
    CHECK(LoadBytes(Serialize(NestedIfModel(8)), o).ok);
  }
  SECTION("dims whose product overflows, negative dims, a huge initializer without data") {
    onnx::ModelProto m = Empty();
    auto* t = Int64Init(m.mutable_graph(), "W", {int64_t(1) << 40, int64_t(1) << 40}, {});
    Node(m.mutable_graph(), "Identity", {"W"}, {"Y"});
    m.mutable_graph()->add_output()->set_name("Y");
    EXPECT_ERROR(LoadBytes(Serialize(m)), ErrorCode::kOutOfRange, "too large");
    t->clear_dims();
    t->add_dims(-1);
    t->add_dims(3);
    EXPECT_ERROR(LoadBytes(Serialize(m)), ErrorCode::kInvalidModel, "negative dimension");
    t->clear_dims();
    t->add_dims(1 << 14);
    t->add_dims(1 << 14);  // 2 GiB of int64 declared, no value given: refused before allocating
    EXPECT_ERROR(LoadBytes(Serialize(m)), ErrorCode::kInvalidModel, "int64_data holds 0 values");
    // At run time: ConstantOfShape asked for 2^62 x 2^62 elements, or a negative size.
    onnx::ModelProto c = Empty();
    auto* cg = c.mutable_graph();
    Input(cg, "shape", onnx::TensorProto::INT64, {2});
    Node(cg, "ConstantOfShape", {"shape"}, {"Y"});
    cg->add_output()->set_name("Y");
    const std::string cb = Serialize(c);
    onemodel::Session s = onemodel::Session::FromBytes(cb.data(), cb.size());
    const int64_t big = int64_t(1) << 62;
    EXPECT_ERROR(Try([&] {
                   s.Run({{"shape", onemodel::Tensor::FromVector<int64_t>({big, big}, {2})}});
                 }),
                 ErrorCode::kOutOfRange, "too large");
    const Outcome neg = Try([&] { s.Run({{"shape", onemodel::Tensor::FromVector<int64_t>({3, -5}, {2})}}); });
    INFO(neg.message);
    CHECK(!neg.ok);
    CHECK(neg.code != ErrorCode::kInternal);
    CHECK(neg.message.find("negative") != std::string::npos);
    // Sizes computed from input values: Tile's repeats and Pad's pads past 2^63.
    for (const char* op : {"Tile", "Pad"}) {
      INFO(op);
      onnx::ModelProto t = Empty();
      auto* tg = t.mutable_graph();
      Input(tg, "X", onnx::TensorProto::FLOAT, {3, 2});
      Input(tg, "R", onnx::TensorProto::INT64, {std::string(op) == "Tile" ? 2 : 4});
      Node(tg, op, {"X", "R"}, {"Y"});
      tg->add_output()->set_name("Y");
      const std::string tb = Serialize(t);
      onemodel::Session ts = onemodel::Session::FromBytes(tb.data(), tb.size());
      const onemodel::Tensor x(onemodel::ElementType::kFloat, {3, 2});
      const onemodel::Tensor r = std::string(op) == "Tile"
                                     ? onemodel::Tensor::FromVector<int64_t>({big, 1}, {2})
                                     : onemodel::Tensor::FromVector<int64_t>({big, 0, big, 0}, {4});
      EXPECT_ERROR(Try([&] { ts.Run({{"X", x}, {"R", r}}); }), ErrorCode::kOutOfRange, "overflows 64 bits");
    }
  }
  SECTION("a string tensor whose length runs past the end of its message") {
    // ModelProto { graph { initializer { dims: 1, data_type: STRING, name: "s",
    // string_data: <claims 1000 bytes, holds 3> } } }: every enclosing length is honest.
    std::string tensor = std::string("\x08\x01\x10\x08\x42\x01s\x32\xe8\x07", 10) + "abc";
    std::string graph = std::string("\x2a") + char(tensor.size()) + tensor;
    std::string model = std::string("\x08\x09\x42\x02\x10\x12\x3a", 7) + char(graph.size()) + graph;
    EXPECT_ERROR(LoadBytes(model), ErrorCode::kInvalidModel, "truncated or corrupt");
  }
  SECTION("duplicate names") {
    onnx::ModelProto m = Empty();
    auto* g = m.mutable_graph();
    Input(g, "X", onnx::TensorProto::FLOAT, {2});
    Node(g, "Relu", {"X"}, {"Y"});
    Node(g, "Neg", {"X"}, {"Y"});
    g->add_output()->set_name("Y");
    EXPECT_ERROR(LoadBytes(Serialize(m)), ErrorCode::kInvalidModel, "produced twice");
    onnx::ModelProto d = Empty();
    auto* dg = d.mutable_graph();
    Int64Init(dg, "W", {1}, {1});
    Int64Init(dg, "W", {1}, {2});
    Node(dg, "Identity", {"W"}, {"Y"});
    dg->add_output()->set_name("Y");
    EXPECT_ERROR(LoadBytes(Serialize(d)), ErrorCode::kInvalidModel, "initializer 'W' is defined twice");
    onnx::ModelProto i = Empty();
    auto* ig = i.mutable_graph();
    Input(ig, "X", onnx::TensorProto::FLOAT, {2});
    Input(ig, "X", onnx::TensorProto::FLOAT, {3});
    Node(ig, "Relu", {"X"}, {"Y"});
    ig->add_output()->set_name("Y");
    EXPECT_ERROR(LoadBytes(Serialize(i)), ErrorCode::kInvalidModel, "input 'X' is declared twice");
  }
  SECTION("an unknown operator, and a node naming more outputs than its operator gives") {
    onnx::ModelProto m = Empty();
    auto* g = m.mutable_graph();
    Input(g, "X", onnx::TensorProto::FLOAT, {2});
    Node(g, "NoSuchOp", {"X"}, {"Y"});
    g->add_output()->set_name("Y");
    EXPECT_ERROR(LoadBytes(Serialize(m)), ErrorCode::kUnsupportedOp, "NoSuchOp");
    onnx::ModelProto r = Empty();
    auto* rg = r.mutable_graph();
    Input(rg, "X", onnx::TensorProto::FLOAT, {2});
    Node(rg, "Relu", {"X"}, {"Y", "Z"});
    rg->add_output()->set_name("Z");
    const std::string rb = Serialize(r);
    onemodel::Session s = onemodel::Session::FromBytes(rb.data(), rb.size());
    const Outcome o = Try([&] { s.Run({{"X", onemodel::Tensor(onemodel::ElementType::kFloat, {2})}}); });
    INFO(o.message);
    CHECK(!o.ok);
    CHECK(o.code == ErrorCode::kInvalidModel);
  }
}

TEST_CASE("hostile models: external data that leaves the model's folder, by each route", "[hostile]") {
  namespace fs = std::filesystem;
  const fs::path base = fs::temp_directory_path() / ("onemodel-hostile-" + std::to_string(std::random_device{}()));
  const fs::path dir = base / "model", outside = base / "outside";
  fs::create_directories(dir);
  fs::create_directories(outside);
  WriteBytes((dir / "w.bin").string(), 16);
  WriteBytes((outside / "secret.bin").string(), 16);
  auto load = [&](const onnx::ModelProto& m) {
    const std::string path = WriteModel(dir.string(), "m.onnx", m);
    return Try([&] { onemodel::Session s(path); });
  };
  CHECK(load(ExternalModel("w.bin")).ok);
  CHECK(load(ExternalModel("./w.bin")).ok);
  EXPECT_ERROR(load(ExternalModel("../outside/secret.bin")), ErrorCode::kInvalidModel, "'..' component");
  EXPECT_ERROR(load(ExternalModel((outside / "secret.bin").string())), ErrorCode::kInvalidModel, "is absolute");
  EXPECT_ERROR(load(ExternalModel("")), ErrorCode::kInvalidModel, "without a location");
  std::error_code ec;
  fs::create_symlink(outside / "secret.bin", dir / "link.bin", ec);
  REQUIRE(!ec);
  EXPECT_ERROR(load(ExternalModel("link.bin")), ErrorCode::kInvalidModel, "outside the model's folder");
  fs::create_directory_symlink(outside, dir / "sub", ec);
  REQUIRE(!ec);
  EXPECT_ERROR(load(ExternalModel("sub/secret.bin")), ErrorCode::kInvalidModel, "outside the model's folder");
#ifdef __EMSCRIPTEN__
  // Emscripten's file system layer has no link(): node's fs makes the hard link.
  EM_ASM({ require('fs').linkSync(UTF8ToString($0), UTF8ToString($1)); }, (outside / "secret.bin").c_str(),
         (dir / "hard.bin").c_str());
#else
  fs::create_hard_link(outside / "secret.bin", dir / "hard.bin", ec);
  REQUIRE(!ec);
#endif
  EXPECT_ERROR(load(ExternalModel("hard.bin")), ErrorCode::kInvalidModel, "hard link");
  EXPECT_ERROR(load(ExternalModel("w.bin", "17")), ErrorCode::kInvalidModel, "past the end");
  EXPECT_ERROR(load(ExternalModel("w.bin", "8", "16")), ErrorCode::kInvalidModel, "past the end");
  EXPECT_ERROR(load(ExternalModel("w.bin", "-4")), ErrorCode::kInvalidModel, "not a number >= 0");
  EXPECT_ERROR(load(ExternalModel("w.bin", "", "8")), ErrorCode::kInvalidModel, "needs 16");
  EXPECT_ERROR(load(ExternalModel(".")), ErrorCode::kInvalidModel, "not a regular file");
  fs::remove_all(base, ec);
}

// Y of ExternalModel for X = 0: W's four floats.
std::vector<float> RunW(const onemodel::Session& s) {
  const auto out = s.Run({{"X", onemodel::Tensor::FromVector<float>({0, 0, 0, 0}, {4})}});
  const float* y = out[0].value.tensor().data<float>();
  return std::vector<float>(y, y + 4);
}

TEST_CASE("external data given in memory: by name, before the folder, copied or borrowed", "[hostile][external]") {
  namespace fs = std::filesystem;
  const std::string model = Serialize(ExternalModel("w.bin", "4"));
  const std::vector<float> file = {99, 1.5f, -2, 3.25f, 1e30f};  // the first float is skipped (offset 4)
  // External data is little-endian: the file's bytes by shifts, right on any host.
  auto bytes = std::make_shared<std::vector<uint8_t>>();
  for (float f : file) {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    for (int k = 0; k < 4; ++k) bytes->push_back(uint8_t(u >> (8 * k)));
  }
  const uint16_t probe = 1;
  const bool little_endian_host = *reinterpret_cast<const uint8_t*>(&probe) == 1;
  auto from_bytes = [&](std::vector<onemodel::ExternalData> given) {
    onemodel::SessionOptions o;
    o.external_data = std::move(given);
    return onemodel::Session::FromBytes(model.data(), model.size(), o, "m.onnx");
  };
  const std::vector<float> want = {1.5f, -2, 3.25f, 1e30f};

  SECTION("copied: the caller's bytes may change or go once the session exists") {
    std::vector<uint8_t> mine = *bytes;
    onemodel::Session s = from_bytes({{"w.bin", mine.data(), mine.size()}});
    std::fill(mine.begin(), mine.end(), uint8_t(0xFF));
    mine.clear();
    mine.shrink_to_fit();
    CHECK(RunW(s) == want);
  }
  SECTION("borrowed: with `keep`, the session holds the buffer and no copy is made") {
    auto buffer = std::make_shared<std::vector<uint8_t>>(*bytes);
    // Offset 4 is not 8-byte aligned: give the file from an aligned start plus 4 bytes so
    // W's range (at 8) is.
    buffer->insert(buffer->begin(), 4, uint8_t(0));
    onemodel::ExternalData e{"w.bin", buffer->data() + 4, buffer->size() - 4, buffer};
    // W starts 4 bytes into the file: 8 bytes into the buffer, which malloc aligned.
    {
      onemodel::Session s = from_bytes({e});
      e = {};
      CHECK(RunW(s) == want);
      if (little_endian_host) {
        CHECK(buffer.use_count() > 1);  // the session's weight borrows it
        // Changing the buffer changes the weight: it was not copied.
        reinterpret_cast<float*>(buffer->data() + 8)[0] = 7.0f;
        CHECK(RunW(s)[0] == 7.0f);
      } else {
        // A big-endian host copies and swaps (docs/exact-mode.md, "Byte order").
        (*buffer)[8] = 0xFF;
        CHECK(RunW(s)[0] == 1.5f);
      }
    }
    CHECK(buffer.use_count() == 1);  // released with the session
  }
  SECTION("names: './w.bin' and 'w.bin' are one file; the location's spelling too") {
    CHECK(RunW(from_bytes({{"./w.bin", bytes->data(), bytes->size()}})) == want);
    const std::string dotted = Serialize(ExternalModel("./w.bin", "4"));
    onemodel::SessionOptions o;
    o.external_data = {{"w.bin", bytes->data(), bytes->size()}};
    CHECK(RunW(onemodel::Session::FromBytes(dotted.data(), dotted.size(), o)) == want);
  }
  SECTION("a location not given: kInvalidModel naming it and the files given") {
    EXPECT_ERROR(Try([&] { from_bytes({}); }), ErrorCode::kInvalidModel, "external data 'w.bin' was not given");
    EXPECT_ERROR(Try([&] {
                   from_bytes({{"v.bin", bytes->data(), bytes->size()}});
                 }),
                 ErrorCode::kInvalidModel, "(the files given: 'v.bin')");
  }
  SECTION("bad entries: kInvalidArgument") {
    EXPECT_ERROR(Try([&] {
                   from_bytes({{"../w.bin", bytes->data(), bytes->size()}});
                 }),
                 ErrorCode::kInvalidArgument, "'..' component");
    EXPECT_ERROR(Try([&] {
                   from_bytes({{"/tmp/w.bin", bytes->data(), bytes->size()}});
                 }),
                 ErrorCode::kInvalidArgument, "is absolute");
    EXPECT_ERROR(Try([&] {
                   from_bytes({{"", bytes->data(), bytes->size()}});
                 }),
                 ErrorCode::kInvalidArgument, "is empty");
    EXPECT_ERROR(Try([&] { from_bytes({{"w.bin", nullptr, 8}}); }), ErrorCode::kInvalidArgument, "data is null");
    EXPECT_ERROR(Try([&] {
                   from_bytes({{"w.bin", bytes->data(), bytes->size()}, {"./w.bin", bytes->data(), bytes->size()}});
                 }),
                 ErrorCode::kInvalidArgument, "a second file named 'w.bin'");
  }
  SECTION("a range past the given bytes' end, and max_model_bytes counting them") {
    EXPECT_ERROR(Try([&] {
                   from_bytes({{"w.bin", bytes->data(), 3}});
                 }),
                 ErrorCode::kInvalidModel, "past the end of 'w.bin' (3 bytes)");
    EXPECT_ERROR(Try([&] {
                   from_bytes({{"w.bin", bytes->data(), 12}});
                 }),
                 ErrorCode::kInvalidModel, "tensor data is 8 bytes");
    onemodel::SessionOptions o;
    o.external_data = {{"w.bin", bytes->data(), bytes->size()}};
    o.max_model_bytes = model.size() + 15;
    EXPECT_ERROR(Try([&] { onemodel::Session::FromBytes(model.data(), model.size(), o); }), ErrorCode::kLimitExceeded,
                 "with its external data reaches");
  }
  SECTION("from a path: a file given in memory comes before the one on disk, the rest from the folder") {
    const fs::path dir = fs::temp_directory_path() / ("onemodel-given-" + std::to_string(std::random_device{}()));
    fs::create_directories(dir);
    WriteBytes((dir / "w.bin").string(), 20);  // bytes 0..19, not `file`
    const std::string path = WriteModel(dir.string(), "m.onnx", ExternalModel("w.bin", "4"));
    onemodel::SessionOptions o;
    CHECK(RunW(onemodel::Session(path, o)) != want);
    o.external_data = {{"w.bin", bytes->data(), bytes->size()}};
    CHECK(RunW(onemodel::Session(path, o)) == want);
    o.external_data = {{"other.bin", bytes->data(), bytes->size()}};
    CHECK(RunW(onemodel::Session(path, o)) != want);
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
}

TEST_CASE("paths: a folder is kIo, a path holding a NUL kInvalidArgument, for models and .npy files", "[hostile]") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("onemodel-paths-" + std::to_string(std::random_device{}()));
  fs::create_directories(dir / "folder.onnx");
  const onemodel::Tensor x = onemodel::Tensor::FromVector<float>({1, 2, 3}, {3});
  const std::string npy = (dir / "x.npy").string();
  onemodel::SaveNpy(npy, x);
  const std::string model = WriteModel(dir.string(), "m.onnx", ExternalModel("w.bin"));
  // The system would read each NUL path as the file before the NUL, which exists.
  const std::string nul_npy = npy + std::string("\0.bak", 5), nul_model = model + std::string("\0x", 2);
  EXPECT_ERROR(Try([&] { onemodel::Session s((dir / "folder.onnx").string()); }), ErrorCode::kIo, "not a regular file");
  EXPECT_ERROR(Try([&] { onemodel::Session s(nul_model); }), ErrorCode::kInvalidArgument, "holds a NUL");
  EXPECT_ERROR(Try([&] { onemodel::LoadNpy(dir.string()); }), ErrorCode::kIo, "not a regular file");
  EXPECT_ERROR(Try([&] { onemodel::LoadNpy(nul_npy); }), ErrorCode::kInvalidArgument, "x.npy\\0.bak");
  EXPECT_ERROR(Try([&] { onemodel::SaveNpy(nul_npy, x); }), ErrorCode::kInvalidArgument, "holds a NUL");
  const onemodel::Tensor back = onemodel::LoadNpy(npy);
  REQUIRE(back.size() == 3);
  CHECK(back.data<float>()[2] == 3.0f);
  std::error_code ec;
  fs::remove_all(dir, ec);
}

TEST_CASE("limits: each is a kLimitExceeded error naming it, and the session stays usable", "[hostile][limits]") {
  const std::string cos = Serialize(ConstantOfShapeModel());
  SECTION("max_model_bytes") {
    onemodel::SessionOptions o;
    o.max_model_bytes = 16;
    EXPECT_ERROR(LoadBytes(cos, o), ErrorCode::kLimitExceeded, "max_model_bytes (16)");
  }
  SECTION("max_tensor_bytes and max_session_bytes, before the allocation") {
    onemodel::SessionOptions o;
    o.max_tensor_bytes = 1 << 20;
    onemodel::Session s = onemodel::Session::FromBytes(cos.data(), cos.size(), o);
    EXPECT_ERROR(Try([&] {
                   s.Run({{"shape", Shape1(1 << 20)}});
                 }),
                 ErrorCode::kLimitExceeded, "max_tensor_bytes (1048576)");
    CHECK(s.Run({{"shape", Shape1(1000)}})[0].value.tensor().size() == 1000);
    onemodel::SessionOptions b;
    b.max_session_bytes = 1 << 20;
    onemodel::Session t = onemodel::Session::FromBytes(cos.data(), cos.size(), b);
    EXPECT_ERROR(Try([&] {
                   t.Run({{"shape", Shape1(1 << 19)}});
                 }),
                 ErrorCode::kLimitExceeded, "max_session_bytes (1048576)");
    {
      auto held = t.Run({{"shape", Shape1(200000)}});  // 800 kB held by the caller
      EXPECT_ERROR(Try([&] { t.Run({{"shape", Shape1(100000)}}); }), ErrorCode::kLimitExceeded, "max_session_bytes");
    }
    CHECK(t.Run({{"shape", Shape1(200000)}})[0].value.tensor().size() == 200000);  // released: fits again
  }
  SECTION("max_nodes and max_graph_depth") {
    onnx::ModelProto m = Empty();
    auto* g = m.mutable_graph();
    Input(g, "X0", onnx::TensorProto::FLOAT, {2});
    for (int i = 0; i < 10; ++i) Node(g, "Relu", {"X" + std::to_string(i)}, {"X" + std::to_string(i + 1)});
    g->add_output()->set_name("X10");
    onemodel::SessionOptions o;
    o.max_nodes = 5;
    EXPECT_ERROR(LoadBytes(Serialize(m), o), ErrorCode::kLimitExceeded, "max_nodes (5)");
    o.max_nodes = 10;
    CHECK(LoadBytes(Serialize(m), o).ok);
    o.max_graph_depth = -1;
    EXPECT_ERROR(LoadBytes(Serialize(m), o), ErrorCode::kInvalidArgument, "max_graph_depth");
  }
}

namespace {
// Loop(M, true, v): v = v + 1 per iteration, M iterations; `empty_body`: the body has no
// node (it passes v through), so only the iteration itself can notice a stop.
onnx::ModelProto CountingLoop(bool empty_body) {
  onnx::ModelProto m = Empty();
  auto* g = m.mutable_graph();
  Input(g, "M", onnx::TensorProto::INT64, {});
  Input(g, "v0", onnx::TensorProto::FLOAT, {1});
  auto* cond = g->add_initializer();
  cond->set_name("cond");
  cond->set_data_type(onnx::TensorProto::BOOL);
  cond->add_int32_data(1);
  auto* loop = Node(g, "Loop", {"M", "cond", "v0"}, {"v"});
  onnx::GraphProto body;
  body.set_name("body");
  Input(&body, "i", onnx::TensorProto::INT64, {});
  Input(&body, "c", onnx::TensorProto::BOOL, {});
  Input(&body, "v_in", onnx::TensorProto::FLOAT, {1});
  body.add_output()->set_name("c");
  if (empty_body) {
    body.add_output()->set_name("v_in");
  } else {
    auto* one = body.add_initializer();
    one->set_name("one");
    one->set_data_type(onnx::TensorProto::FLOAT);
    one->add_dims(1);
    one->add_float_data(1.0f);
    Node(&body, "Add", {"v_in", "one"}, {"v_out"});
    body.add_output()->set_name("v_out");
  }
  GraphAttr(loop, "body", body);
  g->add_output()->set_name("v");
  return m;
}
}  // namespace

TEST_CASE("cancellation: a time limit and Terminate stop a Loop of 10^15 trips", "[hostile][cancel]") {
  const auto big = onemodel::Tensor::FromVector<int64_t>({int64_t(1000000000000000)}, {});
  const auto v0 = onemodel::Tensor::FromVector<float>({0.0f}, {1});
  for (bool empty_body : {false, true}) {
    INFO("empty body: " << empty_body);
    const std::string bytes = Serialize(CountingLoop(empty_body));
    onemodel::Session s = onemodel::Session::FromBytes(bytes.data(), bytes.size());
    onemodel::RunOptions r;
    r.time_limit_ms = 50;
    EXPECT_ERROR(Try([&] { s.Run({{"M", big}, {"v0", v0}}, {}, r); }), ErrorCode::kCancelled, "time limit of 50 ms");
    // The session still runs (a short loop gives its count).
    const auto three = onemodel::Tensor::FromVector<int64_t>({3}, {});
    const auto out = s.Run({{"M", three}, {"v0", v0}}, {}, r);
    CHECK(out[0].value.tensor().data<float>()[0] == (empty_body ? 0.0f : 3.0f));
    // Terminated before the run: it does not start.
    onemodel::RunOptions t;
    t.Terminate();
    EXPECT_ERROR(Try([&] { s.Run({{"M", three}, {"v0", v0}}, {}, t); }), ErrorCode::kCancelled, "terminated");
    t.Reset();
    CHECK(!t.terminated());
    CHECK(s.Run({{"M", three}, {"v0", v0}}, {}, t).size() == 1);
#ifndef __EMSCRIPTEN__
    // From another thread, while the run is under way.
    onemodel::RunOptions u;
    std::thread stopper([u]() mutable {
      std::this_thread::sleep_for(std::chrono::milliseconds(30));
      u.Terminate();  // a copy: copies share the flag
    });
    EXPECT_ERROR(Try([&] { s.Run({{"M", big}, {"v0", v0}}, {}, u); }), ErrorCode::kCancelled, "terminated");
    stopper.join();
#endif
  }
  // One node whose reference loop is 10^10 taps long (a 10^5 x 10^5 pooling window over
  // padding): the time limit stops it inside the node, at the reference and the best
  // target (a window that large runs the reference loops there too). Over a constant
  // input, preparing the session tries to fold it and gives up after kFoldTimeLimitMs
  // (once for inference, once for folding), leaving it to the run, which stops.
  // kernel_shape 2^31 and negative pads are refused (kInvalidModel).
  for (const bool constant : {false, true}) {
    onnx::ModelProto m = Empty();
    auto* g = m.mutable_graph();
    if (constant) {
      auto* c = Node(g, "Constant", {}, {"X"});
      auto* a = c->add_attribute();
      a->set_name("value");
      a->set_type(onnx::AttributeProto::TENSOR);
      auto* t = a->mutable_t();
      t->set_data_type(onnx::TensorProto::FLOAT);
      for (int k = 0; k < 4; ++k) t->add_dims(1);
      t->add_float_data(1.0f);
    } else {
      Input(g, "X", onnx::TensorProto::FLOAT, {1, 1, 1, 1});
    }
    auto* n = Node(g, "AveragePool", {"X"}, {"P"});
    Node(g, "Identity", {"P"}, {"Y"});  // not a graph output: folding tries the pool
    auto ints = [&](const char* name, std::vector<int64_t> v) {
      onnx::AttributeProto* a = nullptr;
      for (auto& e : *n->mutable_attribute())
        if (e.name() == name) a = &e;
      if (!a) a = n->add_attribute();
      a->set_name(name);
      a->set_type(onnx::AttributeProto::INTS);
      a->clear_ints();
      for (int64_t x : v) a->add_ints(x);
    };
    ints("kernel_shape", {100000, 100000});
    ints("pads", {50000, 50000, 50000, 50000});
    g->add_output()->set_name("Y");
    std::vector<onemodel::NamedValue> feeds;
    if (!constant) feeds.push_back({"X", onemodel::Tensor(onemodel::ElementType::kFloat, {1, 1, 1, 1})});
    for (const char* isa : {"ref", ""}) {
      INFO("constant input " << constant << ", isa '" << isa << "'");
      const std::string pb = Serialize(m);
      onemodel::SessionOptions o;
      o.isa = isa;
      onemodel::Session p = onemodel::Session::FromBytes(pb.data(), pb.size(), o);
      CHECK(p.InferOutputs(feeds).size() == 1);  // inference's fold gives up too
      onemodel::RunOptions r;
      r.time_limit_ms = 50;
      EXPECT_ERROR(Try([&] { p.Run(feeds, {}, r); }), ErrorCode::kCancelled, "a loop inside an operator");
    }
    if (constant) continue;
    for (const auto& [name, v] : std::vector<std::pair<const char*, std::vector<int64_t>>>{
             {"kernel_shape", {int64_t(1) << 31, 1}}, {"pads", {-1, 0, 0, 0}}}) {
      ints("kernel_shape", {1, 1});
      ints("pads", {0, 0, 0, 0});
      ints(name, v);
      INFO(name);
      const std::string pb = Serialize(m);
      onemodel::Session p = onemodel::Session::FromBytes(pb.data(), pb.size());
      EXPECT_ERROR(Try([&] { p.Run(feeds); }), ErrorCode::kInvalidModel, "must be in [1, 2^31), pads in [0, 2^31)");
    }
  }
  onemodel::RunOptions bad;
  bad.time_limit_ms = -1;
  const std::string bytes = Serialize(CountingLoop(false));
  onemodel::Session s = onemodel::Session::FromBytes(bytes.data(), bytes.size());
  EXPECT_ERROR(Try([&] { s.Run({{"M", big}, {"v0", v0}}, {}, bad); }), ErrorCode::kInvalidArgument, "time_limit_ms");
}

TEST_CASE("a convolution whose kernel_shape disagrees with its weight is kShapeMismatch", "[hostile]") {
  // The kernels read W by kernel_shape: a 3x3 kernel_shape over a 3x1 weight would read
  // past it (found by the model fuzzer: a depthwise Conv). Conv (depthwise and not),
  // ConvTranspose and ConvInteger, at the reference and the best target.
  struct Case {
    const char* op;
    int32_t type;
    std::vector<int64_t> x, w;
  };
  const int32_t F = onnx::TensorProto::FLOAT, U8 = onnx::TensorProto::UINT8;
  for (const Case& c :
       {Case{"Conv", F, {1, 1, 5, 5}, {1, 1, 3, 1}}, Case{"Conv", F, {1, 2, 5, 5}, {4, 2, 3, 1}},
        Case{"ConvTranspose", F, {1, 1, 5, 5}, {1, 1, 3, 1}}, Case{"ConvInteger", U8, {1, 1, 5, 5}, {1, 1, 3, 1}}}) {
    onnx::ModelProto m = Empty();
    auto* g = m.mutable_graph();
    Input(g, "X", c.type, c.x);
    Input(g, "W", c.type, c.w);
    auto* n = Node(g, c.op, {"X", "W"}, {"Y"});
    auto* a = n->add_attribute();
    a->set_name("kernel_shape");
    a->set_type(onnx::AttributeProto::INTS);
    a->add_ints(3);
    a->add_ints(3);
    g->add_output()->set_name("Y");
    const std::string pb = Serialize(m);
    const onemodel::ElementType t = c.type == F ? onemodel::ElementType::kFloat : onemodel::ElementType::kUInt8;
    const std::vector<onemodel::NamedValue> feeds = {{"X", onemodel::Tensor(t, c.x)}, {"W", onemodel::Tensor(t, c.w)}};
    for (const char* isa : {"ref", ""}) {
      INFO(c.op << " weight " << c.w[0] << "x" << c.w[1] << "x3x1, isa '" << isa << "'");
      onemodel::SessionOptions o;
      o.isa = isa;
      onemodel::Session s = onemodel::Session::FromBytes(pb.data(), pb.size(), o);
      EXPECT_ERROR(Try([&] { s.Run(feeds); }), ErrorCode::kShapeMismatch,
                   "kernel_shape [3,3] does not match the weight");
    }
  }
}

TEST_CASE("a model's own onemodel.SoftmaxAttention node with a malformed body is a typed error", "[hostile]") {
  // The fused operators are reachable from a model (domain "onemodel"). A body whose first
  // MatMul has one input must not be parsed by position: it runs node by node, and the
  // MatMul reports the missing input; a well-formed body without the Softmax's axis runs
  // node by node too (its default depends on the opset).
  for (int variant = 0; variant < 2; ++variant) {
    onnx::ModelProto m = Empty(18);
    auto* op = m.add_opset_import();
    op->set_domain("onemodel");
    op->set_version(1);
    auto* g = m.mutable_graph();
    const int32_t F = onnx::TensorProto::FLOAT;
    Input(g, "Q", F, {2, 3});
    Input(g, "K", F, {3, 4});
    Input(g, "V", F, {4, 5});
    onnx::GraphProto body;
    body.set_name("body");
    for (const char* name : {"Q", "K", "V"}) Input(&body, name, F, {});
    Node(&body, "MatMul", variant == 0 ? std::vector<std::string>{"Q"} : std::vector<std::string>{"Q", "K"}, {"s"});
    Node(&body, "Softmax", {"s"}, {"p"});
    Node(&body, "MatMul", {"p", "V"}, {"Z"});
    body.add_output()->set_name("Z");
    auto* n = Node(g, "SoftmaxAttention", {"Q", "K", "V"}, {"Z"});
    n->set_domain("onemodel");
    GraphAttr(n, "body", body);
    g->add_output()->set_name("Z");
    const std::string pb = Serialize(m);
    const std::vector<onemodel::NamedValue> feeds = {{"Q", onemodel::Tensor(onemodel::ElementType::kFloat, {2, 3})},
                                                     {"K", onemodel::Tensor(onemodel::ElementType::kFloat, {3, 4})},
                                                     {"V", onemodel::Tensor(onemodel::ElementType::kFloat, {4, 5})}};
    for (const char* isa : {"ref", ""}) {
      INFO("variant " << variant << ", isa '" << isa << "'");
      onemodel::SessionOptions o;
      o.isa = isa;
      const Outcome r = Try([&] {
        onemodel::Session s = onemodel::Session::FromBytes(pb.data(), pb.size(), o);
        s.Run(feeds);
      });
      INFO("message: " << r.message);
      if (variant == 0) {
        CHECK(!r.ok);
        CHECK(r.code != ErrorCode::kInternal);
      } else {
        CHECK(r.ok);
      }
    }
  }
}

TEST_CASE("out of memory: an allocation the system refuses is kOutOfMemory", "[hostile][oom]") {
  const std::string cos = Serialize(ConstantOfShapeModel());
  onemodel::SessionOptions o;
  o.max_tensor_bytes = 0;  // only the build's own cap
  onemodel::Session s = onemodel::Session::FromBytes(cos.data(), cos.size(), o);
#ifdef __EMSCRIPTEN__
  // 2.5 GB, then 2.5 GB more: past the 4 GiB wasm memory, a growth refused.
  onnx::ModelProto m = ConstantOfShapeModel();
  auto* g = m.mutable_graph();
  Node(g, "Neg", {"Y"}, {"Z"});
  g->add_output()->set_name("Z");
  const std::string two = Serialize(m);
  onemodel::Session t = onemodel::Session::FromBytes(two.data(), two.size(), o);
  EXPECT_ERROR(Try([&] { t.Run({{"shape", Shape1(625000000)}}); }), ErrorCode::kOutOfMemory, "cannot allocate");
#else
  // 512 GiB: under the build's cap (1 TiB), more than this machine has.
  EXPECT_ERROR(Try([&] { s.Run({{"shape", Shape1(int64_t(1) << 37)}}); }), ErrorCode::kOutOfMemory, "cannot allocate");
#endif
  CHECK(s.Run({{"shape", Shape1(10)}})[0].value.tensor().size() == 10);  // and the library keeps working
}

TEST_CASE("concurrency: 8 sessions from 8 threads, and one session from 8, give the same bits", "[threads][stress]") {
  // ONEMODEL_STRESS_RUNS runs per thread (default 25; docs/reliability.md records 1000).
  int runs = 25;
  if (const char* e = std::getenv("ONEMODEL_STRESS_RUNS")) runs = std::max(1, std::atoi(e));
  const std::string model = "testdata/graphs/transformer_block.onnx";
  REQUIRE(std::filesystem::exists(model));  // run from the repository's root
  const onemodel::Tensor x = onemodel::LoadNpy("testdata/graphs/transformer_block.x.npy");
  onemodel::SessionOptions one;
  one.threads = 1;
  const onemodel::Session first(model, one);
  const std::string name = first.inputs()[0].name;
  const std::string want = onemodel::GoldenHash(first.Run({{name, x}}));
  constexpr int kThreads = 8;
  std::vector<onemodel::Session> sessions;
  for (int i = 0; i < kThreads; ++i) sessions.emplace_back(model, one);
  std::atomic<int> differ{0}, done{0};
#ifndef __EMSCRIPTEN__
  auto work = [&](const onemodel::Session& s) {
    for (int r = 0; r < runs; ++r) {
      if (onemodel::GoldenHash(s.Run({{name, x}})) != want) ++differ;
      ++done;
    }
  };
  std::vector<std::thread> pool;
  for (int i = 0; i < kThreads; ++i) pool.emplace_back([&, i] { work(sessions[size_t(i)]); });
  for (auto& t : pool) t.join();
  pool.clear();
  onemodel::SessionOptions two;
  two.threads = 2;
  const onemodel::Session shared(model, two);
  for (int i = 0; i < kThreads; ++i) pool.emplace_back([&] { work(shared); });
  for (auto& t : pool) t.join();
  CHECK(done == 2 * kThreads * runs);
#else
  // No threads here: the 8 sessions' runs interleaved, round by round.
  for (int r = 0; r < runs; ++r)
    for (auto& s : sessions) {
      if (onemodel::GoldenHash(s.Run({{name, x}})) != want) ++differ;
      ++done;
    }
  CHECK(done == kThreads * runs);
#endif
  std::printf("[stress] %d runs (%d per thread or session), %d with a different hash\n", done.load(), runs,
              differ.load());
  CHECK(differ == 0);
}
