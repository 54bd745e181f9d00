// The runtime's paths against the oracle, beside the operators' own tests (tests/ops):
// elementwise chains and the other passes, constant folding against feeds, the memory
// plan (steady runs, concurrent runs, held slices), prepared state across shape changes,
// steady-state allocations, and typed errors for outputs too large to allocate.
#include "tests/catch.h"

#include <cmath>
#include <cstring>
#include <map>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "core/error.h"
#include "core/random.h"
#include "onnx/import.h"
#include "onnx/onnx.pb.h"
#include "passes/passes.h"
#include "ref/math.h"
#include "ref/softmax.h"
#include "runtime/dispatch.h"
#include "runtime/session.h"
#include "tests/ops/op_test.h"
#include "tests/model_proto.h"
#include "tests/test_util.h"

namespace onemodel::impl {
namespace test {

TEST_CASE("an output too large to allocate is a typed error naming its node, at every ISA", "[exact_paths]") {
  const Shape xs{1, 1};
  const std::string bytes = OneOp("Expand", xs, {{"shape", {3}, {1048576.0f, 1048576.0f, 1048576.0f}, true}}, {});
  for (const std::string& isa : {std::string("ref"), std::string(IsaName(ActiveIsa()))}) {
    SessionOptions o;
    o.isa = isa;
    Session s = Session::FromBytes(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), o, "expand");
    std::vector<float> x(1, 1.0f);
    try {
      s.Run({{"X", Input(xs, x)}});
      FAIL("a 2^60-element output was allocated at " << isa);
    } catch (const Error& e) {
      INFO(e.what());
      CHECK(e.code() == ErrorCode::kOutOfRange);
      CHECK(std::string(e.what()).find("Expand node (output 'Y') output") != std::string::npos);
    }
  }
}

TEST_CASE("every NaN leaving a session is the canonical quiet NaN; a fed buffer is never written", "[exact_paths]") {
  // Min and Max of NaNs with other signs and payloads (x86's and wasm's min/max give
  // different ones), and Identity handing back the feed itself.
  auto bits = [](uint32_t u) {
    float f;
    std::memcpy(&f, &u, 4);
    return f;
  };
  const Shape xs{6};
  const std::vector<float> nans = {
      bits(0xFFC00000u), bits(0x7FC00001u), bits(0xFF800001u), 1.0f, bits(0x7FA00000u), -0.0f};
  const std::vector<float> other = {2.0f, bits(0xFFC00000u), 3.0f, bits(0xFFC12345u), -1.0f, 0.0f};
  for (const std::string op : {"Min", "Max", "Identity"}) {
    const std::string bytes = op == "Identity" ? OneOp(op, xs, {}, {}) : OneOp(op, xs, {{"B", xs, other}}, {});
    for (const std::string& isa : {std::string("ref"), std::string(IsaName(ActiveIsa()))}) {
      INFO(op << " at " << isa);
      SessionOptions o;
      o.isa = isa;
      Session s = Session::FromBytes(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), o, "nans");
      std::vector<float> x = nans;
      const std::vector<Value> out =
          s.Run({{"X", Value::FromTensor(Tensor::Borrow(DType::kFloat, xs, nullptr, x.data()))}});
      const float* y = out[0].tensor.data<float>();
      for (size_t i = 0; i < 6; ++i) {
        uint32_t u;
        std::memcpy(&u, &y[i], 4);
        if (std::isnan(y[i])) CHECK(u == 0x7FC00000u);
      }
      CHECK(std::memcmp(x.data(), nans.data(), 24) == 0);  // the fed buffer as it was
      if (op == "Identity") CHECK(std::isnan(y[0]));
    }
  }
}

TEST_CASE("exact paths: a fed weight replaces its initializer, never a tensor derived from it", "[exact_paths]") {
  // B is an initializer and also a graph input: runs without B use the initializer (and
  // the session keeps B transposed for the kernels); a run that feeds B must use the fed
  // values, and a later run without it the initializer again.
  SplitMix64 rng(707);
  const Shape as{2, 40};
  onnx::ModelProto m;
  REQUIRE(m.ParseFromString(OneOp("Gemm", as, {{"B", {30, 40}, Values(rng, 1200, 1)}}, {Int("transB", 1)})));
  auto* in = m.mutable_graph()->add_input();
  in->set_name("B");
  auto* tt = in->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(onnx::TensorProto::FLOAT);
  tt->mutable_shape()->add_dim()->set_dim_value(30);
  tt->mutable_shape()->add_dim()->set_dim_value(40);
  const std::string bytes = m.SerializeAsString();
  const auto x = Values(rng, 80, 1), fed = Values(rng, 1200, 1);
  auto session = [&](const std::string& isa) {
    SessionOptions o;
    o.isa = isa;
    return Session::FromBytes(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), o, "fed weight");
  };
  Session oracle = session("ref"), s = session(IsaName(ActiveIsa()));
  const Tensor want_init = oracle.Run({{"X", Input(as, x)}})[0].tensor;
  const Tensor want_fed = oracle.Run({{"X", Input(as, x)}, {"B", Input({30, 40}, fed)}})[0].tensor;
  REQUIRE(DiffF32(want_init.data<float>(), want_fed.data<float>(), 60) != "");  // the feed matters
  for (int r = 0; r < 2; ++r) {
    const Tensor a = s.Run({{"X", Input(as, x)}})[0].tensor;
    CHECK(DiffF32(want_init.data<float>(), a.data<float>(), 60) == "");
    const Tensor b = s.Run({{"X", Input(as, x)}, {"B", Input({30, 40}, fed)}})[0].tensor;
    CHECK(DiffF32(want_fed.data<float>(), b.data<float>(), 60) == "");
  }
}

namespace {
// A graph of float nodes over inputs X (shape xs) and, when ys is not empty, Y; scalar
// or vector initializers; every listed output is a graph output.
struct GNode {
  std::string op;
  std::vector<std::string> in;
  std::string out;
  std::vector<Attr> attrs = {};
};
std::string Graph(const Shape& xs, const Shape& ys, const std::vector<Init>& inits, const std::vector<GNode>& nodes,
                  const std::vector<std::string>& outputs, onnx::TensorProto::DataType type = onnx::TensorProto::FLOAT,
                  onnx::TensorProto::DataType x_type = onnx::TensorProto::UNDEFINED) {
  onnx::ModelProto m = testmodel::NewModel(8, 19, "chain");
  auto* g = m.mutable_graph();
  auto add_in = [&](const char* name, const Shape& sh) { testmodel::AddTensorInput(g, name, type, sh); };
  if (x_type != onnx::TensorProto::UNDEFINED)
    testmodel::AddTensorInput(g, "X", x_type, xs);
  else
    add_in("X", xs);
  if (!ys.empty()) add_in("Y", ys);
  for (const Init& i : inits) {
    auto* t = g->add_initializer();
    t->set_name(i.name);
    for (int64_t d : i.shape) t->add_dims(d);
    t->set_data_type(type);
    for (float v : i.data) {
      if (type == onnx::TensorProto::DOUBLE)
        t->add_double_data(double(v));
      else
        t->add_float_data(v);
    }
  }
  for (const GNode& n : nodes) {
    auto* node = g->add_node();
    node->set_op_type(n.op);
    node->set_name(n.out);
    for (const auto& in : n.in) node->add_input(in);
    node->add_output(n.out);
    for (const Attr& a : n.attrs) {
      auto* pa = node->add_attribute();
      pa->set_name(a.name);
      if (a.is_int) {
        pa->set_type(onnx::AttributeProto::INT);
        pa->set_i(a.ints.at(0));
      } else if (a.is_float) {
        pa->set_type(onnx::AttributeProto::FLOAT);
        pa->set_f(a.f);
      } else {
        pa->set_type(onnx::AttributeProto::INTS);
        for (int64_t v : a.ints) pa->add_ints(v);
      }
    }
  }
  for (const auto& o : outputs) g->add_output()->set_name(o);
  return m.SerializeAsString();
}

// The same with float graph inputs of any names and shapes, and the default domain's opset.
std::string NamedGraph(const std::vector<std::pair<std::string, Shape>>& ins, const std::vector<Init>& inits,
                       const std::vector<GNode>& nodes, const std::vector<std::string>& outputs, int64_t opset = 19) {
  onnx::ModelProto m;
  const std::string base = Graph({1}, {}, inits, nodes, outputs);
  if (!m.ParseFromString(base)) return "";
  auto* g = m.mutable_graph();
  g->clear_input();
  for (const auto& [name, shape] : ins) testmodel::AddTensorInput(g, name, onnx::TensorProto::FLOAT, shape);
  for (auto& o : *m.mutable_opset_import())
    if (o.domain().empty()) o.set_version(opset);
  return m.SerializeAsString();
}

}  // namespace

TEST_CASE("exact paths: elementwise chains in one pass equal the unfused oracle", "[exact_paths]") {
  SplitMix64 rng(808);
  const Shape xs{3, 5000};  // several 2048-element chunks, a partial last one
  const auto x = Values(rng, 15000, 1, -6.0f, 6.0f), y = Values(rng, 15000, 2, -3.0f, 3.0f);
  const std::vector<Init> consts = {{"c2", {}, {1.41421356f}},
                                    {"c1", {1}, {1.0f}},
                                    {"ch", {1, 1}, {0.5f}},
                                    {"cz", {}, {-0.0f}},
                                    {"v", {5000}, Values(rng, 5000, 0)}};
  // GELU as exported: x / sqrt2 -> Erf -> + 1 -> x * . -> * 0.5 (x read again, scalars of
  // rank 0 to 2).
  CheckCase(FeedsCase("GELU chain",
                      Graph(xs, {}, consts,
                            {{"Div", {"X", "c2"}, "d"},
                             {"Erf", {"d"}, "e"},
                             {"Add", {"e", "c1"}, "a"},
                             {"Mul", {"X", "a"}, "m"},
                             {"Mul", {"m", "ch"}, "Z"}},
                            {"Z"}),
                      {{"X", Input(xs, x)}}));
  // The running value on the right of Sub and Div, a second full input, every unary op,
  // HardSigmoid's attributes, a -0.0 scalar.
  CheckCase(FeedsCase("mixed chain",
                      Graph(xs, xs, consts,
                            {{"Sub", {"c1", "X"}, "s"},
                             {"Tanh", {"s"}, "t"},
                             {"Div", {"Y", "t"}, "q"},
                             {"Sigmoid", {"q"}, "g"},
                             {"Exp", {"g"}, "e"},
                             {"Mul", {"e", "Y"}, "m"},
                             {"HardSigmoid", {"m"}, "h", {Float("alpha", 0.3f), Float("beta", 0.4f)}},
                             {"Add", {"h", "cz"}, "a"},
                             {"HardSwish", {"a"}, "w"},
                             {"Relu", {"w"}, "Z"}},
                            {"Z"}),
                      {{"X", Input(xs, x)}, {"Y", Input(xs, y)}}));
  // A region whose values have several readers inside it (hardswish as x * clip(x + 3,
  // 0, 6) / 6 between scales), Clip with both bounds and with the lower one omitted.
  CheckCase(FeedsCase(
      "hardswish region",
      Graph(xs, {},
            {{"w", {}, {0.75f}}, {"b", {}, {-0.25f}}, {"three", {}, {3.0f}}, {"zero", {}, {0.0f}}, {"six", {}, {6.0f}}},
            {{"Mul", {"w", "X"}, "m"},
             {"Add", {"m", "b"}, "a"},
             {"Add", {"a", "three"}, "a3"},
             {"Clip", {"a3", "zero", "six"}, "c"},
             {"Mul", {"a", "c"}, "p"},
             {"Div", {"p", "six"}, "h"},
             {"Clip", {"h", "", "three"}, "q"},
             {"Mul", {"w", "q"}, "r"},
             {"Add", {"r", "b"}, "Z"}},
            {"Z"}),
      {{"X", Input(xs, x)}}));
  // Row operands (the output's trailing dimensions, as a bias; with and without leading
  // ones), on either side, the chunks crossing rows: the fast path in pieces.
  CheckCase(FeedsCase(
      "chain with a bias row",
      Graph(xs, {}, {consts[0], {"v", {5000}, Values(rng, 5000, 1)}, {"w", {1, 5000}, Values(rng, 5000, 0)}},
            {{"Add", {"v", "X"}, "a"}, {"Erf", {"a"}, "e"}, {"Sub", {"e", "w"}, "s"}, {"Div", {"w", "s"}, "Z"}}, {"Z"}),
      {{"X", Input(xs, x)}}));
  // A column operand (not trailing dimensions): the body runs node by node.
  CheckCase(FeedsCase("chain with a broadcast column",
                      Graph(xs, {}, {consts[0], {"col", {3, 1}, Values(rng, 3, 0)}},
                            {{"Add", {"X", "col"}, "a"}, {"Erf", {"a"}, "e"}, {"Mul", {"e", "c2"}, "Z"}}, {"Z"}),
                      {{"X", Input(xs, x)}}));
  // An intermediate that is also a graph output, and one read twice: the chain stops
  // there and every output is still produced.
  CheckCase(FeedsCase("chain cut by an output and a second reader",
                      Graph(xs, {}, consts,
                            {{"Mul", {"X", "c2"}, "m"},
                             {"Exp", {"m"}, "e"},
                             {"Tanh", {"e"}, "t"},
                             {"Add", {"t", "e"}, "a"},
                             {"Sigmoid", {"a"}, "s"},
                             {"Sub", {"s", "c1"}, "Z"}},
                            {"Z", "m"}),
                      {{"X", Input(xs, x)}}));
}

TEST_CASE("exact paths: elementwise chains that start with a Cast to float equal the unfused oracle", "[exact_paths]") {
  // MatMulInteger's int32 result -> Cast -> * scale -> + bias row -> GELU (the dynamically
  // quantised MatMul's pattern), and the other integer types and bool; then a Cast of an
  // inner float value, and a Cast from a type the chain does not convert (node by node).
  SplitMix64 rng(810);
  const Shape xs{3, 1500};  // two 1024-element chunks per row, rows crossing chunks
  const int64_t n = 4500;
  const std::vector<Init> consts = {{"s", {}, {0.0123f}},
                                    {"c2", {}, {1.41421356f}},
                                    {"one", {}, {1.0f}},
                                    {"half", {}, {0.5f}},
                                    {"v", {1500}, Values(rng, 1500, 0)}};
  const std::vector<GNode> gelu = {{"Cast", {"X"}, "f", {Int("to", 1)}},
                                   {"Mul", {"f", "s"}, "m"},
                                   {"Add", {"m", "v"}, "a"},
                                   {"Div", {"a", "c2"}, "d"},
                                   {"Erf", {"d"}, "e"},
                                   {"Add", {"e", "one"}, "e1"},
                                   {"Mul", {"a", "e1"}, "g"},
                                   {"Mul", {"g", "half"}, "Z"}};
  auto ints = [&](DType t) {
    Tensor x(t, xs);
    for (int64_t i = 0; i < n; ++i) {
      // Wide values (int32/int64 past 2^24 round to a float), the type's ends, zeros.
      const uint64_t r = rng.Next();
      const int64_t v = i % 97 == 0 ? 0 : int64_t(r % 2000001) - 1000000 + (i % 13 == 0 ? int64_t(r >> 40) : 0);
      switch (t) {
        case DType::kInt32: x.mutable_data<int32_t>()[i] = i % 101 == 0 ? INT32_MIN : int32_t(v * 977); break;
        case DType::kInt64: x.mutable_data<int64_t>()[i] = i % 101 == 0 ? INT64_MAX : v * 1000003; break;
        case DType::kInt8: x.mutable_data<int8_t>()[i] = int8_t(v); break;
        case DType::kUInt8: x.mutable_data<uint8_t>()[i] = uint8_t(v); break;
        case DType::kInt16: x.mutable_data<int16_t>()[i] = int16_t(v); break;
        case DType::kUInt16: x.mutable_data<uint16_t>()[i] = uint16_t(v); break;
        case DType::kBool: x.mutable_data<uint8_t>()[i] = uint8_t(v & 1); break;
        default: FAIL("type");
      }
    }
    return Value::FromTensor(x);
  };
  const std::pair<DType, onnx::TensorProto::DataType> types[] = {
      {DType::kInt32, onnx::TensorProto::INT32}, {DType::kInt64, onnx::TensorProto::INT64},
      {DType::kInt8, onnx::TensorProto::INT8},   {DType::kUInt8, onnx::TensorProto::UINT8},
      {DType::kInt16, onnx::TensorProto::INT16}, {DType::kUInt16, onnx::TensorProto::UINT16},
      {DType::kBool, onnx::TensorProto::BOOL}};
  for (const auto& [t, pt] : types)
    CheckCase(FeedsCase("Cast chain from " + std::string(DTypeName(t)),
                        Graph(xs, {}, consts, gelu, {"Z"}, onnx::TensorProto::FLOAT, pt), {{"X", ints(t)}}));
  // The inner Cast (float to float) and a Cast that ends the chain.
  CheckCase(FeedsCase("Cast inside a chain",
                      Graph(xs, {}, consts,
                            {{"Mul", {"X", "s"}, "m"},
                             {"Cast", {"m"}, "c", {Int("to", 1)}},
                             {"Exp", {"c"}, "e"},
                             {"Cast", {"e"}, "Z", {Int("to", 1)}}},
                            {"Z"}),
                      {{"X", Input(xs, Values(rng, size_t(n), 1, -6.0f, 6.0f))}}));
  // A double input: the Cast rounds it, the chain runs node by node.
  Tensor d(DType::kDouble, xs);
  for (int64_t i = 0; i < n; ++i) d.mutable_data<double>()[i] = double(int64_t(rng.Next() % 100000) - 50000) / 3.0;
  CheckCase(FeedsCase("Cast chain from double",
                      Graph(xs, {}, consts, gelu, {"Z"}, onnx::TensorProto::FLOAT, onnx::TensorProto::DOUBLE),
                      {{"X", Value::FromTensor(d)}}));
}

namespace {
// Scaled dot-product attention as exported by PyTorch: Q [B,S,H,D], K [B,T,H,D] and
// V [B,T,H,Dv] transposed to heads, Q K^T / c + mask, Softmax, times V, back to
// [B,S,H,Dv]. scale: "div", "mul" (Mul(c, scores)) or ""; mask: its shape or none.
std::string BertAttention(int64_t B, int64_t S, int64_t T, int64_t H, int64_t D, int64_t Dv, const std::string& scale,
                          const Shape& mask, const std::vector<float>& mask_values, bool mask_first = false) {
  std::vector<GNode> n = {{"Transpose", {"Q"}, "qt", {Ints("perm", {0, 2, 1, 3})}},
                          {"Transpose", {"K"}, "kt", {Ints("perm", {0, 2, 3, 1})}},
                          {"Transpose", {"V"}, "vt", {Ints("perm", {0, 2, 1, 3})}},
                          {"MatMul", {"qt", "kt"}, "s"}};
  std::string cur = "s";
  if (scale == "div") n.push_back({"Div", {cur, "c"}, "d"}), cur = "d";
  if (scale == "mul") n.push_back({"Mul", {"c", cur}, "d"}), cur = "d";
  if (!mask.empty()) {
    n.push_back({"Add", mask_first ? std::vector<std::string>{"M", cur} : std::vector<std::string>{cur, "M"}, "a"});
    cur = "a";
  }
  n.push_back({"Softmax", {cur}, "p", {Int("axis", -1)}});
  n.push_back({"MatMul", {"p", "vt"}, "o"});
  n.push_back({"Transpose", {"o"}, "Z", {Ints("perm", {0, 2, 1, 3})}});
  std::vector<Init> inits = {{"c", {}, {scale == "div" ? 2.828427f : 0.35355339f}}};
  if (!mask.empty()) inits.push_back({"M", mask, mask_values});
  return NamedGraph({{"Q", {B, S, H, D}}, {"K", {B, T, H, D}}, {"V", {B, T, H, Dv}}}, inits, n, {"Z"});
}
}  // namespace

TEST_CASE("exact paths: attention as one node equals the unfused oracle", "[exact_paths]") {
  SplitMix64 rng(812);
  auto with_specials = [&](int64_t n, float lo, float hi) {
    std::vector<float> v = Values(rng, n, 0, lo, hi);
    // A few specials: a NaN (its query row's outputs are NaN), infinities, signed zeros.
    v[size_t(n / 3)] = std::nanf("");
    v[size_t(n / 2)] = INFINITY;
    v[size_t(n / 5)] = -INFINITY;
    for (int64_t i = 7; i < n; i += 53) v[size_t(i)] = -0.0f;
    return v;
  };
  auto feeds = [&](int64_t B, int64_t S, int64_t T, int64_t H, int64_t D, int64_t Dv) {
    return std::map<std::string, Value>{{"Q", Input({B, S, H, D}, with_specials(B * S * H * D, -3.0f, 3.0f))},
                                        {"K", Input({B, T, H, D}, Values(rng, B * T * H * D, 2, -3.0f, 3.0f))},
                                        {"V", Input({B, T, H, Dv}, with_specials(B * T * H * Dv, -2.0f, 2.0f))}};
  };
  // A padding mask [B,1,1,T] with -inf and large negative entries (BERT's), and a causal
  // [S,T] one added on the left.
  std::vector<float> pad(2 * 29, 0.0f);
  for (int64_t t = 20; t < 29; ++t) pad[size_t(t)] = -10000.0f;
  for (int64_t t = 25; t < 29; ++t) pad[size_t(29 + t)] = -INFINITY;
  std::vector<float> causal(37 * 29);
  for (int64_t i = 0; i < 37; ++i)
    for (int64_t t = 0; t < 29; ++t) causal[size_t(i * 29 + t)] = t <= i % 29 ? 0.0f : -INFINITY;
  CheckCase(FeedsCase("BERT attention with a padding mask",
                      BertAttention(2, 37, 29, 3, 8, 5, "div", {2, 1, 1, 29}, pad), feeds(2, 37, 29, 3, 8, 5)));
  CheckCase(FeedsCase("attention with a causal mask on the left, Mul(c, scores)",
                      BertAttention(1, 37, 29, 2, 16, 16, "mul", {37, 29}, causal, true), feeds(1, 37, 29, 2, 16, 16)));
  CheckCase(FeedsCase("attention without scale or mask", BertAttention(2, 5, 7, 2, 3, 4, "", {}, {}),
                      feeds(2, 5, 7, 2, 3, 4)));
  // Long rows: blocks of a few query rows each.
  CheckCase(FeedsCase("attention over 3000 keys", BertAttention(1, 9, 3000, 2, 4, 3, "div", {}, {}),
                      feeds(1, 9, 3000, 2, 4, 3)));
  // No Transposes, rank 3, and inputs it does not take (run node by node): K^T whose batch
  // broadcasts, a mask that widens the scores.
  const std::vector<GNode> plain = {{"MatMul", {"Q", "K"}, "s"},
                                    {"Div", {"s", "c"}, "d"},
                                    {"Add", {"d", "M"}, "a"},
                                    {"Softmax", {"a"}, "p", {Int("axis", 2)}},
                                    {"MatMul", {"p", "V"}, "Z"}};
  const std::vector<Init> cm = {{"c", {1}, {3.0f}}, {"M", {1, 6}, Values(rng, 6, 2)}};
  auto plain_case = [&](const std::string& what, const Shape& qs, const Shape& ks, const Shape& vs,
                        const std::vector<Init>& inits) {
    int64_t nq = 1, nk = 1, nv = 1;
    for (int64_t d : qs) nq *= d;
    for (int64_t d : ks) nk *= d;
    for (int64_t d : vs) nv *= d;
    CheckCase(FeedsCase(what, NamedGraph({{"Q", qs}, {"K", ks}, {"V", vs}}, inits, plain, {"Z"}),
                        {{"Q", Input(qs, with_specials(nq, -2.0f, 2.0f))},
                         {"K", Input(ks, Values(rng, nk, 0, -2.0f, 2.0f))},
                         {"V", Input(vs, Values(rng, nv, 0, -2.0f, 2.0f))}}));
  };
  plain_case("attention of rank 3 without Transposes", {4, 11, 7}, {4, 7, 6}, {4, 6, 9}, cm);
  plain_case("attention whose K broadcasts (node by node)", {4, 11, 7}, {1, 7, 6}, {4, 6, 9}, cm);
  plain_case("attention whose mask widens the scores (node by node)", {4, 11, 7}, {4, 7, 6}, {4, 6, 9},
             {{"c", {1}, {3.0f}}, {"M", {2, 1, 1, 6}, Values(rng, 12, 0)}});
}

TEST_CASE("passes: attention fuses where each inner value has one reader", "[exact_paths][passes]") {
  auto count = [&](const std::string& bytes, size_t* after, int64_t opset = 19) {
    Model m = ImportModel(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), "attention", "");
    const int n = FuseAttention(*m.graph, {{"", opset}});
    *after = m.graph->nodes.size();
    return n;
  };
  size_t after = 0;
  // BERT's pattern: every node, the Transposes included, in one.
  CHECK(count(BertAttention(1, 4, 4, 2, 3, 3, "div", {1, 1, 1, 4}, {0, 0, 0, -1}), &after) == 1);
  CHECK(after == 1);
  // The probabilities are an output too: nothing fuses.
  std::string b = BertAttention(1, 4, 4, 2, 3, 3, "div", {}, {});
  onnx::ModelProto m;
  REQUIRE(m.ParseFromString(b));
  m.mutable_graph()->add_output()->set_name("p");
  CHECK(count(m.SerializeAsString(), &after) == 0);
  CHECK(after == 8);
  // Q's Transpose read by another node too: it stays, the rest fuses.
  REQUIRE(m.ParseFromString(b));
  auto* g = m.mutable_graph();
  g->mutable_output()->RemoveLast();
  auto* extra = g->add_node();
  extra->set_op_type("Neg");
  extra->add_input("qt");
  extra->add_output("N");
  g->add_output()->set_name("N");
  CHECK(count(m.SerializeAsString(), &after) == 1);
  CHECK(after == 3);
  // Softmax without an axis before opset 13 (its default was 1): nothing fuses.
  const std::string old =
      NamedGraph({{"Q", {2, 3}}, {"K", {3, 4}}, {"V", {4, 5}}}, {},
                 {{"MatMul", {"Q", "K"}, "s"}, {"Softmax", {"s"}, "p"}, {"MatMul", {"p", "V"}, "Z"}}, {"Z"}, 11);
  CHECK(count(old, &after, 11) == 0);
  CHECK(count(old, &after, 13) == 1);
  CHECK(after == 1);
}

TEST_CASE("passes: fused attention in a fast session gives the unfused fast session's bits", "[exact_paths][passes]") {
  // Where the target has FMA both take the MatMul's fast twin; elsewhere both are exact.
  SplitMix64 rng(813);
  const std::string bytes = BertAttention(1, 33, 70, 2, 64, 64, "div", {}, {});
  const std::map<std::string, Value> f = {{"Q", Input({1, 33, 2, 64}, Values(rng, 33 * 128, 0, -2.0f, 2.0f))},
                                          {"K", Input({1, 70, 2, 64}, Values(rng, 70 * 128, 0, -2.0f, 2.0f))},
                                          {"V", Input({1, 70, 2, 64}, Values(rng, 70 * 128, 0, -2.0f, 2.0f))}};
  auto run = [&](bool fused, Mode mode, bool reciprocal = true) {
    SessionOptions o;
    o.isa = IsaName(ActiveIsa());
    o.mode = mode;
    if (!fused) o.disabled_passes.push_back("attention");
    if (!reciprocal) o.disabled_passes.push_back("div-reciprocal");
    Session s = Session::FromBytes(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), o, "fast attention");
    return s.Run(f)[0].tensor;
  };
  // The scale's Div is a Mul by its reciprocal in both fast sessions (div-reciprocal).
  const Tensor a = run(true, Mode::kFast), u = run(false, Mode::kFast), e = run(true, Mode::kExact);
  CHECK(DiffF32(u.data<float>(), a.data<float>(), a.numel()) == "");
  CHECK(DiffF32(run(true, Mode::kFast, false).data<float>(), run(false, Mode::kFast, false).data<float>(), a.numel()) ==
        "");
  // Without that pass: with FMA the 64- and 70-term folds (and the rows' exps) round
  // differently from exact mode's somewhere; without FMA the bits are exact mode's.
  const bool fma = MakeDispatch(ActiveIsa()).kernels.fma_f32;
  const Tensor d = run(true, Mode::kFast, false);
  CHECK((DiffF32(e.data<float>(), d.data<float>(), a.numel()) != "") == fma);
}

// Fast mode's div-reciprocal pass: Div by a constant float of one element becomes Mul by
// its reciprocal (one initializer per divisor), within (2u + u^2) |x / c| of the quotient
// computed in binary64 (and so within 3u + u^2 of exact mode's), different from exact
// mode's bits somewhere; left alone (exact mode's bits) where the divisor is 0, two
// elements, or an initializer a feed may replace (fed or not), or its reciprocal is not
// a normal float; exact sessions never rewrite.
TEST_CASE("passes: fast mode multiplies by a constant divisor's reciprocal", "[passes][fast]") {
  SplitMix64 rng(909);
  const Shape xs{4, 300};
  const std::vector<float> x = Values(rng, 1200, 1, -100.0f, 100.0f);
  const std::string bytes = Graph(xs, {1},
                                  {{"c", {}, {1.41421356f}},
                                   {"zero", {1}, {0.0f}},
                                   {"two", {300}, std::vector<float>(300, 3.0f)},
                                   {"big", {}, {1e38f}},
                                   {"Y", {1}, {2.5f}}},
                                  {{"Div", {"X", "c"}, "a"},
                                   {"Div", {"a", "c"}, "b"},
                                   {"Div", {"X", "zero"}, "z"},
                                   {"Div", {"X", "two"}, "t"},
                                   {"Div", {"X", "big"}, "g"},
                                   {"Div", {"X", "Y"}, "y"}},
                                  {"a", "b", "z", "t", "g", "y"});
  auto run = [&](Mode mode, bool feed_y) {
    SessionOptions o;
    o.isa = IsaName(ActiveIsa());
    o.mode = mode;
    o.disabled_passes = {"elementwise-chain"};  // the nodes stay visible in the plans
    Session s = Session::FromBytes(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), o, "div");
    std::map<std::string, Value> feeds = {{"X", Input(xs, x)}};
    if (feed_y) feeds["Y"] = Input({1}, {-3.0f});
    return s.Run(feeds);
  };
  for (const bool feed_y : {false, true}) {
    const auto f = run(Mode::kFast, feed_y), e = run(Mode::kExact, feed_y);
    // zero, two, big and the feedable Y stay divisions: exact mode's bits.
    for (size_t k = 2; k < 6; ++k) CHECK(DiffF32(e[k].tensor.data<float>(), f[k].tensor.data<float>(), 1200) == "");
    const double u = 0x1p-24;
    int bad = 0, checked = 0;
    // Normal results within the bound (b divides a's float again: its own quotient);
    // infinities and NaN as exact mode's.
    auto check = [&](double num, float got, float want) {
      const double q = num / double(1.41421356f);
      if (!std::isfinite(num)) {
        bad += !SameF32(got, want);
      } else if (std::fabs(q) >= 0x1p-126) {
        ++checked;
        bad += !(std::fabs(double(got) - q) <= (2 * u + u * u) * std::fabs(q));
      }
    };
    for (size_t i = 0; i < 1200; ++i) {
      check(double(x[i]), f[0].tensor.data<float>()[i], e[0].tensor.data<float>()[i]);
      check(double(f[0].tensor.data<float>()[i]), f[1].tensor.data<float>()[i], e[1].tensor.data<float>()[i]);
    }
    CHECK(bad == 0);
    CHECK(checked > 2000);
    CHECK(DiffF32(e[0].tensor.data<float>(), f[0].tensor.data<float>(), 1200) != "");
  }
}

// Fast mode's erf: a GELU (x * 0.5 * (1 + erf(x / sqrt(2)))) in a fast session on an FMA
// target takes ref::ErfFmaF32's values for its Erf, fused into a chain or not (the same
// bits either way), and its other steps are the nodes' IEEE operations: the output equals
// that sequence computed here; elsewhere, and in exact sessions, math::Erf's.
TEST_CASE("passes: a fast session's Erf nodes and chain steps take fast mode's erf", "[passes][fast]") {
  SplitMix64 rng(911);
  const Shape xs{3, 700};
  const std::vector<float> x = Values(rng, 2100, 1, -6.0f, 6.0f);
  const std::string bytes = Graph(xs, {}, {{"r", {}, {0.70710677f}}, {"one", {}, {1.0f}}, {"half", {}, {0.5f}}},
                                  {{"Mul", {"X", "r"}, "a"},
                                   {"Erf", {"a"}, "e"},
                                   {"Add", {"e", "one"}, "f"},
                                   {"Mul", {"X", "f"}, "g"},
                                   {"Mul", {"g", "half"}, "Y"}},
                                  {"Y"});
  auto run = [&](Mode mode, bool chain) {
    SessionOptions o;
    o.isa = IsaName(ActiveIsa());
    o.mode = mode;
    if (!chain) o.disabled_passes = {"elementwise-chain"};
    Session s = Session::FromBytes(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), o, "gelu");
    const Tensor t = s.Run({{"X", Input(xs, x)}})[0].tensor;
    return std::vector<float>(t.data<float>(), t.data<float>() + t.numel());
  };
  const bool fma = MakeDispatch(ActiveIsa()).kernels.fma_f32;
  std::vector<float> want(x.size()), exact(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    const float a = x[i] * 0.70710677f;
    float e = 0;
    ref::ErfFmaF32(&a, &e, 1);
    want[i] = (x[i] * ((fma ? e : math::Erf(a)) + 1.0f)) * 0.5f;
    exact[i] = (x[i] * (math::Erf(a) + 1.0f)) * 0.5f;
  }
  const std::vector<float> fused = run(Mode::kFast, true), unfused = run(Mode::kFast, false);
  CHECK(DiffF32(want.data(), fused.data(), want.size()) == "");
  CHECK(DiffF32(want.data(), unfused.data(), want.size()) == "");
  CHECK(DiffF32(exact.data(), run(Mode::kExact, true).data(), exact.size()) == "");
  CHECK((DiffF32(exact.data(), fused.data(), exact.size()) != "") == fma);
}

TEST_CASE("exact paths: Flatten and Reshape share a buffer the run made, never a feed's", "[exact_paths]") {
  // r = Relu(X) is flattened (a view of r's buffer) and also read by Neg; r, the view and
  // Neg's result are outputs. Outputs kept from the first run must not change when the
  // second run (which follows a memory plan) reuses memory; a view of a feed is a copy.
  SplitMix64 rng(811);
  const Shape xs{4, 3, 50};
  const auto x1 = Values(rng, 600, 0), x2 = Values(rng, 600, 1);
  const std::string bytes = Graph(xs, {}, {},
                                  {{"Relu", {"X"}, "r"},
                                   {"Flatten", {"r"}, "F", {Int("axis", 1)}},
                                   {"Neg", {"r"}, "N"},
                                   {"Flatten", {"X"}, "G", {Int("axis", 2)}}},
                                  {"F", "N", "r", "G"});
  auto session = [&](const std::string& isa) {
    SessionOptions o;
    o.isa = isa;
    return Session::FromBytes(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), o, "views");
  };
  Session oracle = session("ref"), s = session(IsaName(ActiveIsa()));
  const auto want1 = oracle.Run({{"X", Input(xs, x1)}}), want2 = oracle.Run({{"X", Input(xs, x2)}});
  std::vector<float> fed = x1;
  const auto got1 = s.Run({{"X", Value::FromTensor(Tensor::Borrow(DType::kFloat, xs, nullptr, fed.data()))}});
  CHECK(got1[3].tensor.raw() != static_cast<const void*>(fed.data()));  // G is a copy of the feed
  // F is a view of r (one buffer), unless r held a NaN (made canonical in a copy).
  const auto nans = std::count_if(x1.begin(), x1.end(), [](float v) { return std::isnan(v); });
  if (nans == 0 && IsaName(ActiveIsa()) != std::string("ref")) CHECK(got1[0].tensor.raw() == got1[2].tensor.raw());
  for (int r = 0; r < 3; ++r) {
    const auto got2 = s.Run({{"X", Input(xs, x2)}});
    for (size_t k = 0; k < 4; ++k) {
      INFO("output " << k << ", run " << r + 2);
      CHECK(got2[k].tensor.shape() == want2[k].tensor.shape());
      CHECK(DiffF32(want2[k].tensor.data<float>(), got2[k].tensor.data<float>(), 600) == "");
      CHECK(DiffF32(want1[k].tensor.data<float>(), got1[k].tensor.data<float>(), 600) == "");
    }
  }
}

TEST_CASE("exact paths: an elementwise chain on doubles runs its nodes one by one", "[exact_paths]") {
  SplitMix64 rng(809);
  const Shape xs{4, 100};
  const auto xv = Values(rng, 400, 1, -3.0f, 3.0f);
  Tensor t(DType::kDouble, xs);
  for (size_t i = 0; i < xv.size(); ++i) t.mutable_data<double>()[i] = double(xv[i]);
  CheckCase(FeedsCase(
      "double chain",
      Graph(xs, {}, {{"c", {}, {0.75f}}}, {{"Mul", {"X", "c"}, "m"}, {"Exp", {"m"}, "e"}, {"Add", {"e", "c"}, "Z"}},
            {"Z"}, onnx::TensorProto::DOUBLE),
      {{"X", Value::FromTensor(t)}}));
}

TEST_CASE("passes: elementwise chains form where every inner value has one reader", "[exact_paths][passes]") {
  const Shape xs{2, 8};
  const std::vector<Init> c = {{"c", {}, {2.0f}}};
  auto count = [&](const std::vector<GNode>& nodes, const std::vector<std::string>& outs, size_t* nodes_after) {
    const std::string b = Graph(xs, {}, c, nodes, outs);
    Model m = ImportModel(reinterpret_cast<const uint8_t*>(b.data()), b.size(), "chain", "");
    const int n = FuseElementwiseChains(*m.graph);
    *nodes_after = m.graph->nodes.size();
    return n;
  };
  size_t after = 0;
  // GELU: one chain of five.
  CHECK(count({{"Div", {"X", "c"}, "d"},
               {"Erf", {"d"}, "e"},
               {"Add", {"e", "c"}, "a"},
               {"Mul", {"X", "a"}, "m"},
               {"Mul", {"m", "c"}, "Z"}},
              {"Z"}, &after) == 1);
  CHECK(after == 1);
  // m is a graph output, so Mul stays; e has two readers, both in the region, so
  // Exp -> Tanh -> Add -> Sigmoid -> Sub is one region.
  CHECK(count({{"Mul", {"X", "c"}, "m"},
               {"Exp", {"m"}, "e"},
               {"Tanh", {"e"}, "t"},
               {"Add", {"t", "e"}, "a"},
               {"Sigmoid", {"a"}, "s"},
               {"Sub", {"s", "c"}, "Z"}},
              {"Z", "m"}, &after) == 1);
  CHECK(after == 2);
  // A region with a value read twice inside it (x * clip(x + 3, 0, 6) / 6): one node.
  CHECK(count({{"Add", {"X", "c"}, "a"},
               {"Clip", {"a", "c", "c"}, "k"},
               {"Mul", {"a", "k"}, "m"},
               {"Div", {"m", "c"}, "Z"}},
              {"Z"}, &after) == 1);
  CHECK(after == 1);
  // The same with the shared value also read after the region: Add stays outside.
  CHECK(count({{"Add", {"X", "c"}, "a"},
               {"Clip", {"a", "c", "c"}, "k"},
               {"Mul", {"a", "k"}, "m"},
               {"Div", {"m", "c"}, "d"},
               {"Neg", {"d"}, "n"},
               {"Add", {"n", "a"}, "Z"}},
              {"Z"}, &after) >= 1);
  CHECK(after == 4);
  // A Cast to float joins a chain; a Cast to another type does not.
  CHECK(count({{"Cast", {"X"}, "f", {Int("to", 1)}}, {"Mul", {"f", "c"}, "m"}, {"Relu", {"m"}, "Z"}}, {"Z"}, &after) ==
        1);
  CHECK(after == 1);
  CHECK(count({{"Mul", {"X", "c"}, "m"}, {"Cast", {"m"}, "i", {Int("to", 6)}}, {"Cast", {"i"}, "Z", {Int("to", 1)}}},
              {"Z"}, &after) == 0);
  CHECK(after == 3);
  // Not chainable ops break chains; a lone node is left as it is.
  CHECK(count({{"Exp", {"X"}, "e"}, {"Neg", {"e"}, "n"}, {"Exp", {"n"}, "Z"}}, {"Z"}, &after) == 0);
  CHECK(after == 3);
}

TEST_CASE("passes: a QuantizeLinear -> DequantizeLinear pair fuses where the quantised tensor has one reader",
          "[exact_paths][passes]") {
  const Shape xs{2, 8};
  const std::vector<Init> c = {{"s", {}, {0.5f}}};
  auto count = [&](const std::vector<GNode>& nodes, const std::vector<std::string>& outs, size_t* nodes_after) {
    const std::string b = Graph(xs, {}, c, nodes, outs);
    Model m = ImportModel(reinterpret_cast<const uint8_t*>(b.data()), b.size(), "qdq", "");
    const int n = FuseQuantizeDequantize(*m.graph);
    *nodes_after = m.graph->nodes.size();
    if (n) CHECK(m.graph->nodes.back().op_type == "QuantizeDequantize");
    return n;
  };
  size_t after = 0;
  CHECK(count({{"QuantizeLinear", {"X", "s"}, "q"}, {"DequantizeLinear", {"q", "s"}, "Z"}}, {"Z"}, &after) == 1);
  CHECK(after == 1);
  // The quantised tensor is an output, or has a second reader: nothing fuses.
  CHECK(count({{"QuantizeLinear", {"X", "s"}, "q"}, {"DequantizeLinear", {"q", "s"}, "Z"}}, {"Z", "q"}, &after) == 0);
  CHECK(after == 2);
  CHECK(count({{"QuantizeLinear", {"X", "s"}, "q"},
               {"DequantizeLinear", {"q", "s"}, "a"},
               {"DequantizeLinear", {"q", "s"}, "b"},
               {"Add", {"a", "b"}, "Z"}},
              {"Z"}, &after) == 0);
  CHECK(after == 4);
  // A DequantizeLinear of something else stays.
  CHECK(count({{"Relu", {"X"}, "r"}, {"DequantizeLinear", {"r", "s"}, "Z"}}, {"Z"}, &after) == 0);
}

TEST_CASE("passes: a dynamically quantised MatMul fuses where each inner value has one reader",
          "[exact_paths][passes]") {
  SplitMix64 rng(77);
  const auto I8 = onnx::TensorProto::INT8;
  const Shape xs{4, 8};
  const std::vector<TInit> inits = {{"W", I8, {8, 5}, Ints8(rng, 40, true)},
                                    {"Ws", F, {5}, Floats(rng, 5, 0.01f, 0.1f)},
                                    {"B", F, {5}, {1, 2, 3, 4, 5}}};
  auto nodes = [](const std::string& bias_side) {
    std::vector<TNode> n = {{"DynamicQuantizeLinear", {"X"}, {"Xq", "Xs", "Xz"}},
                            {"MatMulInteger", {"Xq", "W", "Xz"}, {"P"}},
                            {"Cast", {"P"}, {"Pf"}, {AI("to", 1)}},
                            {"Mul", {"Xs", "Ws"}, {"S"}},
                            {"Mul", {"Pf", "S"}, {"Q"}},
                            {"Add", {bias_side, "Q"}, {"Y"}}};
    return n;
  };
  // Fused nodes, nodes after, and the fused node's body size.
  auto count = [&](const std::vector<TNode>& n, const std::vector<std::string>& outs,
                   const std::vector<std::string>& fed = {}) {
    const std::string b = TypedGraph(xs, inits, n, outs, fed);
    Model m = ImportModel(reinterpret_cast<const uint8_t*>(b.data()), b.size(), "dqmm", "");
    const int fused = FuseDynamicQuantMatMul(*m.graph);
    size_t body = 0;
    for (const Node& node : m.graph->nodes)
      if (node.op_type == "DynamicQuantMatMul") body = node.attr("body")->g->nodes.size();
    return std::tuple<int, size_t, size_t>{fused, m.graph->nodes.size(), body};
  };
  CHECK(count(nodes("B"), {"Y"}) == std::tuple<int, size_t, size_t>{1, 1, 6});
  // A fed bias stays outside; so does an Add of another value.
  CHECK(count(nodes("B"), {"Y"}, {"B"}) == std::tuple<int, size_t, size_t>{1, 2, 5});
  CHECK(count(nodes("X"), {"Y"}) == std::tuple<int, size_t, size_t>{1, 2, 5});
  // An inner value that is a graph output or has a second reader: nothing fuses.
  CHECK(std::get<0>(count(nodes("B"), {"Y", "Xs"})) == 0);
  CHECK(std::get<0>(count(nodes("B"), {"Y", "P"})) == 0);
  std::vector<TNode> twice = nodes("B");
  twice.push_back({"Relu", {"Pf"}, {"R"}});
  CHECK(std::get<0>(count(twice, {"Y", "R"})) == 0);
  // A Cast to another type, or a MatMulInteger without the quantiser's zero point.
  std::vector<TNode> to_double = nodes("B");
  to_double[2].attrs = {AI("to", 11)};
  CHECK(std::get<0>(count(to_double, {"Y"})) == 0);
  std::vector<TNode> no_zp = nodes("B");
  no_zp[1].in = {"Xq", "W"};
  CHECK(std::get<0>(count(no_zp, {"Y", "Xz"})) == 0);
}

TEST_CASE("passes: a Conv takes the QuantizeDequantize of its output where its input is surely float",
          "[exact_paths][passes]") {
  const Shape xs{1, 2, 4, 4};
  const std::vector<Init> c = {{"s", {}, {0.5f}}, {"w", {2, 2, 1, 1}, {1.0f, 0.5f, -0.5f, 2.0f}}};
  auto run = [&](const std::vector<GNode>& nodes, const std::vector<std::string>& outs, size_t* nodes_after) {
    const std::string b = Graph(xs, {}, c, nodes, outs);
    Model m = ImportModel(reinterpret_cast<const uint8_t*>(b.data()), b.size(), "qdq", "");
    FuseQuantizeDequantize(*m.graph);
    FuseConvActivation(*m.graph);
    const int n = FuseConvQuantizeDequantize(*m.graph);
    *nodes_after = m.graph->nodes.size();
    return n;
  };
  size_t after = 0;
  // X is a float graph input: Conv -> Relu -> Q -> DQ becomes one Conv.
  CHECK(run({{"Conv", {"X", "w"}, "c"},
             {"Relu", {"c"}, "r"},
             {"QuantizeLinear", {"r", "s"}, "q"},
             {"DequantizeLinear", {"q", "s"}, "Z"}},
            {"Z"}, &after) == 1);
  CHECK(after == 1);
  // Through a chain of convolutions from a dequantised value.
  CHECK(run({{"QuantizeLinear", {"X", "s"}, "q0"},
             {"DequantizeLinear", {"q0", "s"}, "d0"},
             {"Conv", {"d0", "w"}, "c1"},
             {"Conv", {"c1", "w"}, "c2"},
             {"QuantizeLinear", {"c2", "s"}, "q"},
             {"DequantizeLinear", {"q", "s"}, "Z"}},
            {"Z"}, &after) == 1);
  CHECK(after == 3);
  // The Conv output read twice: the pair stays a node of its own.
  CHECK(run({{"Conv", {"X", "w"}, "c"},
             {"QuantizeLinear", {"c", "s"}, "q"},
             {"DequantizeLinear", {"q", "s"}, "d"},
             {"Add", {"d", "c"}, "Z"}},
            {"Z"}, &after) == 0);
  CHECK(after == 3);
  // An input of unknown type (the output of an op that might change it): not fused.
  CHECK(run({{"Cast", {"X"}, "x", {Int("to", 1)}},
             {"Conv", {"x", "w"}, "c"},
             {"QuantizeLinear", {"c", "s"}, "q"},
             {"DequantizeLinear", {"q", "s"}, "Z"}},
            {"Z"}, &after) == 0);
}

TEST_CASE("passes: a Conv takes a residual Add (and its Relu) where its result has one reader",
          "[exact_paths][passes]") {
  const Shape xs{1, 2, 4, 4};
  const std::vector<Init> c = {{"s", {}, {0.5f}}, {"w", {2, 2, 1, 1}, {1.0f, 0.5f, -0.5f, 2.0f}}};
  Model m;
  auto run = [&](const std::vector<GNode>& nodes, const std::vector<std::string>& outs) {
    const std::string b = Graph(xs, {}, c, nodes, outs);
    m = ImportModel(reinterpret_cast<const uint8_t*>(b.data()), b.size(), "residual", "");
    FuseQuantizeDequantize(*m.graph);
    FuseConvActivation(*m.graph);
    FuseConvQuantizeDequantize(*m.graph);
    return FuseConvResidual(*m.graph);
  };
  auto ops = [&] {
    std::string o;
    for (const Node& n : m.graph->nodes) o += (o.empty() ? "" : " ") + n.op_type;
    return o;
  };
  // resnet's block: the Add's other operand is made after the Conv (the downsampling
  // branch); the fused Conv runs in the Add's place, after it, and takes the Relu.
  CHECK(run({{"Conv", {"X", "w"}, "c"}, {"Conv", {"X", "w"}, "d"}, {"Add", {"c", "d"}, "a"}, {"Relu", {"a"}, "Z"}},
            {"Z"}) == 1);
  REQUIRE(ops() == "Conv Conv");
  const Node& f = m.graph->nodes[1];
  CHECK(f.fusion.residual);
  CHECK(!f.fusion.z_first);
  CHECK(f.fusion.post_act == Activation::kRelu);
  CHECK(f.inputs == std::vector<std::string>{"X", "w", "", "d"});
  CHECK(f.outputs[0] == "Z");
  REQUIRE(f.fusion.residual_body);
  CHECK(f.fusion.residual_body->nodes.size() == 2);
  // Add(Z, conv) without a Relu; the Conv's own Relu first.
  CHECK(run({{"Conv", {"X", "w"}, "c"}, {"Relu", {"c"}, "r"}, {"Add", {"X", "r"}, "Z"}}, {"Z"}) == 1);
  CHECK(ops() == "Conv");
  CHECK(m.graph->nodes[0].fusion.z_first);
  CHECK(m.graph->nodes[0].fusion.act == Activation::kRelu);
  CHECK(m.graph->nodes[0].fusion.post_act == Activation::kNone);
  // The sum read twice: the Add is taken, the Relu stays with the other reader.
  CHECK(run({{"Conv", {"X", "w"}, "c"}, {"Add", {"c", "X"}, "a"}, {"Relu", {"a"}, "r"}, {"Add", {"a", "r"}, "Z"}},
            {"Z"}) == 1);
  CHECK(ops() == "Conv Relu Add");
  CHECK(m.graph->nodes[0].fusion.post_act == Activation::kNone);
  // The Conv's result read twice, or a graph output: nothing.
  CHECK(run({{"Conv", {"X", "w"}, "c"}, {"Add", {"c", "X"}, "a"}, {"Add", {"a", "c"}, "Z"}}, {"Z"}) == 0);
  CHECK(run({{"Conv", {"X", "w"}, "c"}, {"Add", {"c", "X"}, "Z"}}, {"Z", "c"}) == 0);
  // Add(c, c): one value twice.
  CHECK(run({{"Conv", {"X", "w"}, "c"}, {"Add", {"c", "c"}, "Z"}}, {"Z"}) == 0);
  // A Conv with a fused quantisation keeps its Add.
  CHECK(run({{"Conv", {"X", "w"}, "c"},
             {"QuantizeLinear", {"c", "s"}, "q"},
             {"DequantizeLinear", {"q", "s"}, "d"},
             {"Add", {"d", "X"}, "Z"}},
            {"Z"}) == 0);
  // Sub is not an Add.
  CHECK(run({{"Conv", {"X", "w"}, "c"}, {"Sub", {"c", "X"}, "Z"}}, {"Z"}) == 0);
}

TEST_CASE("passes: constant folding runs constant nodes once and never folds what a feed can replace",
          "[exact_paths][passes]") {
  SplitMix64 rng(929);
  const auto I8 = onnx::TensorProto::INT8, F = onnx::TensorProto::FLOAT;
  const Shape xs{4, 10};
  const auto w = Ints8(rng, 40, true), w2 = Ints8(rng, 40, true);
  const std::vector<TInit> inits = {{"W", I8, {10, 4}, w}, {"ws", F, {}, {0.03}}, {"F", I8, {10, 4}, w2}};
  // Wd = DequantizeLinear(W) is constant (folded); Fd = DequantizeLinear(F) is not: F is
  // also a graph input, so a feed may replace it.
  const std::vector<TNode> nodes = {{"DequantizeLinear", {"W", "ws"}, {"Wd"}},
                                    {"DequantizeLinear", {"F", "ws"}, {"Fd"}},
                                    {"MatMul", {"X", "Wd"}, {"A"}},
                                    {"MatMul", {"X", "Fd"}, {"B"}},
                                    {"Add", {"A", "B"}, {"Y"}}};
  const std::string bytes = TypedGraph(xs, inits, nodes, {"Y"}, {"F"});
  const Value x = Input(xs, Values(rng, 40, 0));
  CheckCase(FeedsCase("folded and fed dequantisation", bytes, {{"X", x}}));
  // Feeding F must change the result exactly as the oracle's does.
  Tensor f(DType::kInt8, Shape{10, 4});
  for (int64_t i = 0; i < 40; ++i) f.mutable_data<int8_t>()[i] = int8_t(int(i) - 20);
  CheckCase(FeedsCase("fed F", bytes, {{"X", x}, {"F", Value::FromTensor(f)}}));
  // The pass itself: one DequantizeLinear folded, the other kept.
  Model model = ImportModel(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), "folding", "");
  onemodel::impl::Graph g = *model.graph;
  CHECK(FoldConstants(g, model.opsets) == 1);
  CHECK(g.nodes.size() == 4);
  CHECK(g.initializers.count("Wd") == 1);
  CHECK(g.initializers.count("Fd") == 0);
}

namespace {
// X [N, 64] -> MatMul -> Relu -> MatMul -> Tanh -> Add X -> Sigmoid: intermediates of one
// size whose lifetimes chain, so a plan shares their bytes. N is symbolic.
std::string PlanGraph(SplitMix64& rng) {
  const auto F = onnx::TensorProto::FLOAT;
  const std::vector<TInit> inits = {{"W1", F, {64, 64}, Floats(rng, 64 * 64, -0.2f, 0.2f)},
                                    {"W2", F, {64, 64}, Floats(rng, 64 * 64, -0.2f, 0.2f)}};
  const std::vector<TNode> nodes = {{"MatMul", {"X", "W1"}, {"a"}}, {"Relu", {"a"}, {"b"}},
                                    {"MatMul", {"b", "W2"}, {"c"}}, {"Tanh", {"c"}, {"d"}},
                                    {"Add", {"d", "X"}, {"e"}},     {"Sigmoid", {"e"}, {"Y"}}};
  onnx::ModelProto m;
  m.ParseFromString(TypedGraph({1, 64}, inits, nodes, {"Y"}));
  m.mutable_graph()
      ->mutable_input(0)
      ->mutable_type()
      ->mutable_tensor_type()
      ->mutable_shape()
      ->mutable_dim(0)
      ->set_dim_param("N");
  return m.SerializeAsString();
}
Tensor Oracle(const std::string& bytes, const Value& x) {
  SessionOptions o;
  o.isa = "ref";
  o.threads = 1;
  return Session::FromBytes(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), o, "plan")
      .Run({{"X", x}})[0]
      .tensor;
}
}  // namespace

TEST_CASE("memory plan: steady runs take every intermediate from one shared arena, same bits",
          "[exact_paths][memory_plan]") {
  SplitMix64 rng(1201);
  const std::string bytes = PlanGraph(rng);
  const Value x = Input({300, 64}, Values(rng, 300 * 64, 1)), x2 = Input({7, 64}, Values(rng, 7 * 64, 0));
  const Tensor want = Oracle(bytes, x), want2 = Oracle(bytes, x2);
  for (int threads : {1, 3}) {
    SessionOptions o;
    o.threads = threads;
    Session s = Session::FromBytes(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), o, "plan");
    std::vector<Tensor> kept;  // outputs the caller keeps while later runs reuse the arena
    for (int r = 0; r < 5; ++r) {
      kept.push_back(s.Run({{"X", x}})[0].tensor);
      const MemoryPlanStats st = s.memory_plan_stats();
      INFO(threads << " threads, run " << r + 1);
      CHECK(st.runs == uint64_t(r + 1));
      if (r >= 1) {
        // Run 1 made the plan (the weights' packing, made once, is outside it), run 2 on
        // follows it.
        CHECK(st.last_replayed);
        CHECK(st.plans_built == 1);
        CHECK(st.planned_buffers >= 2);
        CHECK(st.last_from_arena == st.planned_buffers);
        CHECK(st.last_elsewhere == 1);  // the output, which outlives the run
        // [300, 64] intermediates (after fusion at least two), at most two alive at a time.
        CHECK(st.arena_bytes <= 2 * 300 * 64 * 4 + 128);
        CHECK(st.arena_bytes < st.planned_bytes);
      }
    }
    for (size_t r = 0; r < kept.size(); ++r) {
      INFO(threads << " threads, output kept from run " << r + 1);
      REQUIRE(kept[r].shape() == want.shape());
      CHECK(DiffF32(want.data<float>(), kept[r].data<float>(), size_t(want.numel())) == "");
    }
    // Other shapes make another plan; returning makes the first again; bits stay.
    const uint64_t built = s.memory_plan_stats().plans_built;
    for (int r = 0; r < 3; ++r) {
      const Tensor y = s.Run({{"X", x2}})[0].tensor;
      CHECK(DiffF32(want2.data<float>(), y.data<float>(), size_t(want2.numel())) == "");
    }
    CHECK(s.memory_plan_stats().plans_built == built + 1);
    CHECK(s.memory_plan_stats().last_replayed);
    const Tensor y = s.Run({{"X", x}})[0].tensor;
    CHECK(DiffF32(want.data<float>(), y.data<float>(), size_t(want.numel())) == "");
    CHECK(s.memory_plan_stats().plans_built == built + 2);
  }
}

// Native only: the wasm builds have no threads (std::thread cannot start there).
TEST_CASE("memory plan: concurrent runs of one session give the oracle's bits",
          "[exact_paths][memory_plan][native_only]") {
  SplitMix64 rng(1202);
  const std::string bytes = PlanGraph(rng);
  const Value x = Input({200, 64}, Values(rng, 200 * 64, 1));
  const Tensor want = Oracle(bytes, x);
  SessionOptions o;
  o.threads = 2;
  Session s = Session::FromBytes(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), o, "plan");
  std::vector<std::string> diffs(3);
  std::vector<std::thread> callers;
  for (int c = 0; c < 3; ++c) {
    callers.emplace_back([&, c] {
      for (int r = 0; r < 6; ++r) {
        const Tensor y = s.Run({{"X", x}})[0].tensor;
        const std::string d = DiffF32(want.data<float>(), y.data<float>(), size_t(want.numel()));
        if (!d.empty()) diffs[size_t(c)] = d;
      }
    });
  }
  for (auto& t : callers) t.join();
  for (const auto& d : diffs) CHECK(d == "");
  CHECK(s.memory_plan_stats().runs >= 1);
}

namespace {
// A network of the operators that keep prepared state (Conv with its fused Relu,
// MaxPool, ConvTranspose, Resize with fed scales, an elementwise chain, Softmax) and the
// small shape and layout operators of the reference models (Shape, Gather, Unsqueeze,
// Concat, Reshape, Transpose, MatMul, LayerNormalization). X is [1, 3, H, W] with H and
// W free; S holds Resize's scales (fed, so their values may change from run to run).
std::string SteadyGraph(SplitMix64& rng) {
  const auto F = onnx::TensorProto::FLOAT, I64 = onnx::TensorProto::INT64;
  const std::vector<TInit> inits = {{"W1", F, {8, 3, 3, 3}, Floats(rng, 8 * 27, -0.5f, 0.5f)},
                                    {"B1", F, {8}, Floats(rng, 8, -0.1f, 0.1f)},
                                    {"Wt", F, {8, 4, 2, 2}, Floats(rng, 8 * 16, -0.5f, 0.5f)},
                                    {"S", F, {4}, {1.0, 1.0, 0.5, 0.5}},
                                    {"K", F, {}, {0.75}},
                                    {"K2", F, {}, {-0.25}},
                                    {"Wm", F, {4, 16}, Floats(rng, 64, -0.5f, 0.5f)},
                                    {"Ls", F, {16}, Floats(rng, 16, 0.5f, 1.5f)},
                                    {"Lb", F, {16}, Floats(rng, 16, -0.1f, 0.1f)},
                                    {"i0", I64, {}, {0}},
                                    {"four", I64, {1}, {4}},
                                    {"minus1", I64, {1}, {-1}},
                                    {"ax0", I64, {1}, {0}}};
  const std::vector<TNode> nodes = {
      {"Conv", {"X", "W1", "B1"}, {"c"}, {AInts("pads", {1, 1, 1, 1})}},
      {"Relu", {"c"}, {"cr"}},
      {"MaxPool",
       {"cr"},
       {"p"},
       {AInts("kernel_shape", {3, 3}), AInts("strides", {2, 2}), AInts("pads", {1, 1, 1, 1})}},
      {"ConvTranspose", {"p", "Wt"}, {"t"}, {AInts("strides", {2, 2})}},
      {"Resize", {"t", "", "S"}, {"r"}, {AS("mode", "linear")}},
      {"Mul", {"r", "K"}, {"m"}},
      {"Add", {"m", "K2"}, {"a"}},
      {"Tanh", {"a"}, {"e"}},
      {"Shape", {"e"}, {"sh"}},
      {"Gather", {"sh", "i0"}, {"n"}},
      {"Unsqueeze", {"n", "ax0"}, {"n1"}},
      {"Concat", {"n1", "four", "minus1"}, {"shape3"}, {AI("axis", 0)}},
      {"Reshape", {"e", "shape3"}, {"f"}},
      {"Transpose", {"f"}, {"ft"}, {AInts("perm", {0, 2, 1})}},
      {"MatMul", {"ft", "Wm"}, {"mm"}},
      {"LayerNormalization", {"mm", "Ls", "Lb"}, {"ln"}, {AI("axis", -1)}},
      {"Softmax", {"ln"}, {"Y"}, {AI("axis", -1)}}};
  onnx::ModelProto m;
  m.ParseFromString(TypedGraph({1, 3, 16, 16}, inits, nodes, {"Y"}, {"S"}));
  auto* dims = m.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape();
  dims->mutable_dim(2)->set_dim_param("H");
  dims->mutable_dim(3)->set_dim_param("W");
  return m.SerializeAsString();
}
}  // namespace

TEST_CASE("prepared state: changing shapes and shape-deciding values give a fresh session's bits", "[exact_paths]") {
  // What operators keep between runs (OpContext::Prepared: geometry, coordinate tables,
  // compiled chains) is remade when an input shape or a value that decides shapes
  // (Resize's scales) changes: each run equals a fresh session at ISA ref.
  SplitMix64 rng(1301);
  const std::string bytes = SteadyGraph(rng);
  struct Case {
    int64_t h, w;
    std::vector<float> scales;
  };
  const std::vector<Case> cases = {{16, 16, {1, 1, 0.5f, 0.5f}},   {12, 20, {1, 1, 0.5f, 0.5f}},
                                   {16, 16, {1, 1, 0.75f, 0.25f}}, {16, 16, {1, 1, 0.5f, 0.5f}},
                                   {9, 7, {1, 1, 1.0f, 0.5f}},     {16, 16, {1, 1, 0.5f, 0.5f}}};
  std::vector<Value> xs, ss;
  std::vector<Tensor> want;
  for (const Case& c : cases) {
    xs.push_back(Input({1, 3, c.h, c.w}, Values(rng, 3 * c.h * c.w, 0)));
    ss.push_back(Input({4}, c.scales));
    SessionOptions o;
    o.isa = "ref";
    o.threads = 1;
    Session fresh = Session::FromBytes(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), o, "steady");
    want.push_back(fresh.Run({{"X", xs.back()}, {"S", ss.back()}})[0].tensor);
  }
  for (int threads : {1, 3}) {
    SessionOptions o;
    o.isa = IsaName(ActiveIsa());
    o.threads = threads;
    Session s = Session::FromBytes(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), o, "steady");
    for (int pass = 0; pass < 2; ++pass)
      for (size_t i = 0; i < cases.size(); ++i) {
        INFO(threads << " threads, pass " << pass + 1 << ", case " << i + 1);
        const Tensor y = s.Run({{"X", xs[i]}, {"S", ss[i]}})[0].tensor;
        REQUIRE(y.shape() == want[i].shape());
        CHECK(DiffF32(want[i].data<float>(), y.data<float>(), size_t(y.numel())) == "");
      }
  }
}

TEST_CASE("steady state: a run takes from the heap only what it returns", "[exact_paths][memory_plan][allocs]") {
  // After the first runs (plans, prepared state, packed weights), a run of the same
  // shapes allocates the returned vector and the output's buffer and reference count,
  // nothing else (counted by the test binary's operator new, every thread). With a
  // vector kernel table (every row of the suite; the oracle, ISA ref, keeps its plain
  // loops, which may allocate).
  SplitMix64 rng(1302);
  const std::string bytes = SteadyGraph(rng);
  const Value x = Input({1, 3, 16, 16}, Values(rng, 3 * 256, 0)), sc = Input({4}, {1, 1, 0.5f, 0.5f});
  const std::map<std::string, Value> feeds = {{"X", x}, {"S", sc}};
  // The returned vector, the output's buffer (under 64 KiB: not recycled) and its
  // shared_ptr control block.
  constexpr long kPerRun = 3;
  auto session = [&](int threads) {
    SessionOptions o;
    o.isa = IsaName(ActiveIsa());
    o.threads = threads;
    return Session::FromBytes(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), o, "steady");
  };
  {
    // One thread: every chunk runs on the caller, so each run is exactly the same.
    Session s = session(1);
    for (int r = 0; r < 4; ++r) s.Run(feeds);
    for (int r = 0; r < 3; ++r) {
      StartCountingAllocations();
      std::vector<Value> out = s.Run(feeds);
      const long n = StopCountingAllocations();
      INFO("1 thread, steady run " << r + 1);
      CHECK(s.memory_plan_stats().last_replayed);
      CHECK(n <= kPerRun);
    }
  }
#ifndef __EMSCRIPTEN__
  {
    // Three threads: chunks go to whichever thread takes them, so a thread's scratch
    // buffer (ElementwiseChain's, LayerNormalization's) may grow the first time it
    // takes a chunk of some operator (the GEMM kernel's packing buffers too), however
    // many runs that takes; that growth is once per thread and buffer (a few times for
    // a buffer that grows in steps), bounded here by kGrowth, and kRuns is larger, so
    // one allocation more on every run would exceed the bound.
    constexpr int kRuns = 100;
    constexpr long kGrowth = 64;
    Session s = session(3);
    for (int r = 0; r < 4; ++r) s.Run(feeds);
    long total = 0;
    for (int r = 0; r < kRuns; ++r) {
      StartCountingAllocations();
      std::vector<Value> out = s.Run(feeds);
      total += StopCountingAllocations();
    }
    INFO("3 threads, " << kRuns << " steady runs");
    CHECK(s.memory_plan_stats().last_replayed);
    CHECK(total <= kRuns * kPerRun + kGrowth);
  }
#endif
}

TEST_CASE("memory plan: a slice still held is never handed out again", "[memory_plan]") {
  // Run 1: A and B (same size) live one after the other, so the plan gives them one
  // slice. Run 2 keeps A while B is allocated: B must come from elsewhere, A's bytes stay.
  MemoryPlanner planner(true);
  {
    std::optional<MemoryPlanner::RunScope> run;
    REQUIRE(planner.Begin("k", &run));
    { Tensor a = Tensor::Uninitialized(DType::kFloat, {256}); }
    { Tensor b = Tensor::Uninitialized(DType::kFloat, {256}); }
    run->Finish();
  }
  CHECK(planner.stats().planned_buffers == 2);
  CHECK(planner.stats().arena_bytes == 1024);
  {
    std::optional<MemoryPlanner::RunScope> run;
    REQUIRE(planner.Begin("k", &run));
    {
      Tensor a(DType::kFloat, {256});
      a.mutable_data<float>()[0] = 42.0f;
      Tensor b = Tensor::Uninitialized(DType::kFloat, {256});
      CHECK(b.raw() != a.raw());
      b.mutable_data<float>()[0] = -1.0f;
      CHECK(a.data<float>()[0] == 42.0f);
    }
    run->Finish();
  }
  CHECK(!planner.stats().last_replayed);
  CHECK(planner.stats().last_from_arena == 1);
  CHECK(planner.stats().last_elsewhere == 1);
  // The run that left the plan made a new one (A and B alive together: two slices).
  CHECK(planner.stats().plans_built == 2);
  CHECK(planner.stats().arena_bytes == 2048);
}

}  // namespace test
}  // namespace onemodel::impl
