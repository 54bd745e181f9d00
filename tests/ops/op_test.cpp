// The operator tests' framework (see op_test.h).
#include "tests/ops/op_test.h"

#include "tests/catch.h"

#include <algorithm>
#include <cstring>
#include <set>

#include "core/error.h"
#include "ops/family.h"
#include "runtime/dispatch.h"
#include "runtime/session.h"
#include "tests/model_proto.h"
#include "tests/test_util.h"

namespace onemodel::impl {
namespace test {

Attr Ints(std::string n, std::vector<int64_t> v) {
  Attr a;
  a.name = std::move(n);
  a.ints = std::move(v);
  return a;
}
Attr Int(std::string n, int64_t v) {
  Attr a = Ints(std::move(n), {v});
  a.is_int = true;
  return a;
}
Attr Float(std::string n, float v) {
  Attr a;
  a.name = std::move(n);
  a.is_float = true;
  a.f = v;
  return a;
}
Attr Str(std::string n, std::string v) {
  Attr a;
  a.name = std::move(n);
  a.s = std::move(v);
  return a;
}

std::string OneOp(const std::string& op, const Shape& x, const std::vector<Init>& inits, const std::vector<Attr>& attrs,
                  int64_t opset) {
  onnx::ModelProto m = testmodel::NewModel(8, opset, op);
  auto* g = m.mutable_graph();
  testmodel::AddTensorInput(g, "X", onnx::TensorProto::FLOAT, x);
  auto* node = g->add_node();
  testmodel::SetOpType(m, node, op);
  node->add_input("X");
  for (const Init& i : inits) {
    node->add_input(i.name);
    if (i.name.empty()) continue;
    auto* t = g->add_initializer();
    t->set_name(i.name);
    for (int64_t d : i.shape) t->add_dims(d);
    if (i.int64) {
      t->set_data_type(onnx::TensorProto::INT64);
      for (float v : i.data) t->add_int64_data(int64_t(v));
    } else {
      t->set_data_type(onnx::TensorProto::FLOAT);
      for (float v : i.data) t->add_float_data(v);
    }
  }
  node->add_output("Y");
  for (const Attr& a : attrs) {
    auto* pa = node->add_attribute();
    pa->set_name(a.name);
    if (a.is_float) {
      pa->set_type(onnx::AttributeProto::FLOAT);
      pa->set_f(a.f);
    } else if (!a.s.empty()) {
      pa->set_type(onnx::AttributeProto::STRING);
      pa->set_s(a.s);
    } else if (a.is_int) {
      pa->set_type(onnx::AttributeProto::INT);
      pa->set_i(a.ints[0]);
    } else {
      pa->set_type(onnx::AttributeProto::INTS);
      for (int64_t v : a.ints) pa->add_ints(v);
    }
  }
  g->add_output()->set_name("Y");
  return m.SerializeAsString();
}

TAttr AF(std::string n, float v) {
  TAttr a;
  a.name = std::move(n);
  a.floats = {v};
  a.kind = 3;
  return a;
}
TAttr AI(std::string n, int64_t v) {
  TAttr a;
  a.name = std::move(n);
  a.i = v;
  return a;
}
TAttr AInts(std::string n, std::vector<int64_t> v) {
  TAttr a;
  a.name = std::move(n);
  a.ints = std::move(v);
  a.kind = 1;
  return a;
}
TAttr AS(std::string n, std::string v) {
  TAttr a;
  a.name = std::move(n);
  a.s = std::move(v);
  a.kind = 2;
  return a;
}
TAttr AFs(std::string n, std::vector<float> v) {
  TAttr a;
  a.name = std::move(n);
  a.floats = std::move(v);
  a.kind = 4;
  return a;
}

std::string TypedGraph(const Shape& xs, const std::vector<TInit>& inits, const std::vector<TNode>& nodes,
                       const std::vector<std::string>& outputs, const std::vector<std::string>& fed, int64_t opset) {
  onnx::ModelProto m = testmodel::NewModel(8, opset, "typed");
  auto* g = m.mutable_graph();
  auto add_in = [&](const std::string& name, onnx::TensorProto::DataType t, const Shape& sh) {
    testmodel::AddTensorInput(g, name, t, sh);
  };
  add_in("X", onnx::TensorProto::FLOAT, xs);
  for (const TInit& i : inits) {
    for (const auto& f : fed)
      if (f == i.name) add_in(i.name, i.type, i.shape);
    auto* t = g->add_initializer();
    t->set_name(i.name);
    t->set_data_type(i.type);
    for (int64_t d : i.shape) t->add_dims(d);
    for (double v : i.data) {
      switch (i.type) {
        case onnx::TensorProto::FLOAT: t->add_float_data(float(v)); break;
        case onnx::TensorProto::INT64: t->add_int64_data(int64_t(v)); break;
        default: t->add_int32_data(int32_t(v)); break;  // 8-bit, bool and int32 types
      }
    }
  }
  for (const TNode& n : nodes) {
    auto* node = g->add_node();
    testmodel::SetOpType(m, node, n.op);
    node->set_name(n.out.empty() ? n.op : n.out[0]);
    for (const auto& in : n.in) node->add_input(in);
    for (const auto& o : n.out) node->add_output(o);
    for (const TAttr& a : n.attrs) {
      auto* pa = node->add_attribute();
      pa->set_name(a.name);
      if (a.kind == 0) {
        pa->set_type(onnx::AttributeProto::INT);
        pa->set_i(a.i);
      } else if (a.kind == 1) {
        pa->set_type(onnx::AttributeProto::INTS);
        for (int64_t v : a.ints) pa->add_ints(v);
      } else if (a.kind == 3) {
        pa->set_type(onnx::AttributeProto::FLOAT);
        pa->set_f(a.floats[0]);
      } else if (a.kind == 4) {
        pa->set_type(onnx::AttributeProto::FLOATS);
        for (float v : a.floats) pa->add_floats(v);
      } else {
        pa->set_type(onnx::AttributeProto::STRING);
        pa->set_s(a.s);
      }
    }
  }
  for (const auto& o : outputs) g->add_output()->set_name(o);
  return m.SerializeAsString();
}

std::vector<float> Values(SplitMix64& rng, int64_t n, int kind, float lo, float hi) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    float x = rng.Uniform(lo, hi);
    if (kind == 1 && rng.NextU32() % 7 == 0) x = F32Specials()[rng.NextU32() % F32Specials().size()];
    if (kind == 2 && (i / 13) % 3 != 0) x = -0.0f;
    if (kind == 3) x = -0.0f;
    v[size_t(i)] = x;
  }
  return v;
}
std::vector<float> Positive(SplitMix64& rng, int64_t n) {
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = rng.Uniform(0.25f, 1.0f);
  return v;
}
std::vector<double> Ints8(SplitMix64& rng, int64_t n, bool is_signed) {
  std::vector<double> v(static_cast<size_t>(n));
  for (double& x : v) x = is_signed ? double(int32_t(rng.NextU32() % 256) - 128) : double(rng.NextU32() % 256);
  return v;
}
std::vector<double> Floats(SplitMix64& rng, int64_t n, float lo, float hi) {
  std::vector<double> v(static_cast<size_t>(n));
  for (double& x : v) x = double(rng.Uniform(lo, hi));
  return v;
}
Value Input(const Shape& s, const std::vector<float>& v) {
  Tensor t(DType::kFloat, s);
  std::memcpy(t.mutable_data<float>(), v.data(), v.size() * sizeof(float));
  return Value::FromTensor(t);
}
int64_t Count(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

OpCase XCase(std::string what, std::string model, const Shape& xs, const std::vector<float>& x) {
  return OpCase{std::move(what), std::move(model), {{"X", Input(xs, x)}}};
}

OpCase FeedsCase(std::string what, std::string model, std::map<std::string, Value> feeds) {
  return OpCase{std::move(what), std::move(model), std::move(feeds)};
}

namespace {

std::vector<OpFamily>& FamilyList() {
  static std::vector<OpFamily> families;
  return families;
}

// The runs of one session: `runs` runs of the case's feeds.
std::vector<std::vector<Value>> RunSession(const OpCase& c, const std::string& isa, int threads, int runs,
                                           const std::map<std::string, std::string>& algorithms, int tile_bits = 0) {
  SessionOptions o;
  o.isa = isa;
  o.threads = threads;
  o.algorithms = algorithms;
  o.avx512_tile_bits = tile_bits;
  Session s = Session::FromBytes(reinterpret_cast<const uint8_t*>(c.model.data()), c.model.size(), o, c.what);
  std::vector<std::vector<Value>> out;
  // The second run reads what the first derived from constants (OpContext::ConstDerived);
  // the third follows the memory plan the second made (runtime/memory_plan.h).
  for (int r = 0; r < runs; ++r) out.push_back(s.Run(c.feeds));
  return out;
}

void CompareOutputs(const std::vector<Value>& want, const std::vector<Value>& got, const std::string& label) {
  REQUIRE(got.size() == want.size());
  for (size_t o = 0; o < want.size(); ++o) {
    INFO(label << ", output " << o);
    const Tensor& w = want[o].tensor;
    const Tensor& g = got[o].tensor;
    REQUIRE(g.shape() == w.shape());
    REQUIRE(g.dtype() == w.dtype());
    if (w.dtype() == DType::kFloat)
      CHECK(DiffF32(w.data<float>(), g.data<float>(), size_t(w.numel())) == "");
    else
      CHECK(std::memcmp(w.raw(), g.raw(), w.nbytes()) == 0);
  }
}

// The operator types of the case's graph that have algorithms to force.
std::vector<std::string> ForcibleOps(const OpCase& c) {
  onnx::ModelProto m;
  REQUIRE(m.ParseFromString(c.model));
  std::set<std::string> in_graph;
  for (const auto& n : m.graph().node())
    in_graph.insert(n.domain().empty() ? n.op_type() : n.domain() + "." + n.op_type());
  std::vector<std::string> ops;
  for (const auto& f : ops::Families())
    for (const std::string& op : f.op_types)
      if (in_graph.count(op)) ops.push_back(op);
  return ops;
}

}  // namespace

bool RegisterFamily(OpFamily family) {
  FamilyList().push_back(std::move(family));
  return true;
}
const std::vector<OpFamily>& Families() { return FamilyList(); }

void CheckCase(const OpCase& c, std::map<std::string, std::vector<std::string>>* ran) {
  const std::string isa = IsaName(ActiveIsa());
  const std::vector<Value> want = RunSession(c, "ref", 1, 1, {})[0];
  for (int threads : {1, 2, 3, 7}) {
    const auto got = RunSession(c, isa, threads, 3, {});
    for (size_t r = 0; r < got.size(); ++r)
      CompareOutputs(want, got[r],
                     c.what + " at " + isa + ", " + std::to_string(threads) + " threads, run " + std::to_string(r + 1));
  }
  // The AVX-512 targets' two GEMM tile widths (a session takes one by the core's width).
  if (ActiveIsa() == Isa::kAvx512 || ActiveIsa() == Isa::kAvx512Vnni)
    for (int bits : {256, 512})
      for (int threads : {1, 3}) {
        const auto got = RunSession(c, isa, threads, 2, {}, bits);
        for (size_t r = 0; r < got.size(); ++r)
          CompareOutputs(want, got[r],
                         c.what + " at " + isa + " with " + std::to_string(bits) + "-bit GEMM tiles, " +
                             std::to_string(threads) + " threads, run " + std::to_string(r + 1));
      }
  // Every exact row of each operator's family forced in turn (fast rows are not the
  // oracle's bits: exact sessions refuse them).
  for (const std::string& op : ForcibleOps(c)) {
    for (const ops::RowInfo& row : ops::FamilyOf(op)->rows) {
      if (row.exactness != ops::Exactness::kExact) continue;
      const std::string& algo = row.name;
      for (int threads : {1, 3}) {
        std::vector<std::vector<Value>> got;
        try {
          got = RunSession(c, isa, threads, 2, {{op, algo}});
        } catch (const Error& e) {
          // An algorithm the geometry cannot take is refused by name; anything else fails.
          if (e.code() == ErrorCode::kInvalidArgument &&
              std::string(e.what()).find("does not fit") != std::string::npos)
            break;
          throw;
        }
        for (size_t r = 0; r < got.size(); ++r)
          CompareOutputs(want, got[r],
                         c.what + " with " + op + " forced to " + algo + " at " + isa + ", " + std::to_string(threads) +
                             " threads, run " + std::to_string(r + 1));
        if (ran && threads == 1) (*ran)[op].push_back(algo);
      }
    }
  }
}

void RunFamily(const std::string& name) {
  const auto& fams = Families();
  const auto fam = std::find_if(fams.begin(), fams.end(), [&](const OpFamily& f) { return f.name == name; });
  REQUIRE(fam != fams.end());
  std::map<std::string, std::vector<std::string>> ran;
  for (const OpCase& c : fam->cases()) {
    INFO(c.what);
    CheckCase(c, &ran);
  }
  // Every exact row of every table the family's operator types plan with ran on at least
  // one case of one of them.
  std::set<const ops::FamilyInfo*> tables;
  for (const std::string& op : fam->op_types) {
    const ops::FamilyInfo* t = ops::FamilyOf(op);
    INFO("family " << name << ": " << op << " has no table");
    REQUIRE(t != nullptr);
    tables.insert(t);
  }
  for (const ops::FamilyInfo* t : tables)
    for (const ops::RowInfo& row : t->rows) {
      if (row.exactness != ops::Exactness::kExact) continue;
      bool covered = false;
      for (const std::string& op : t->op_types)
        for (const std::string& algo : ran[op]) covered = covered || algo == row.name;
      INFO("family " << name << ": table " << t->family << " row '" << row.name << "' ran on no case");
      CHECK(covered);
    }
}

}  // namespace test
}  // namespace onemodel::impl
