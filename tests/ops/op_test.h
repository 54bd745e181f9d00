// The operator tests' framework (tests/ops/<family>_test.cpp). Each family file registers
// a table of cases: small graphs with their inputs. Its test runs every case at ISA ref
// (the oracle, one thread), then at the target under test with the plans' own choices
// (1, 2, 3 and 7 threads, three runs each) and with every algorithm of every operator of
// the graph forced in turn (SessionOptions::algorithms; 1 and 3 threads, two runs each),
// each output bitwise equal to the oracle's (NaNs: any NaN). A forced algorithm that does
// not fit a case's geometry is passed over for that case; the family's test fails unless
// every algorithm of every operator type it claims ran on at least one case
// (tests/ops/coverage_test.cpp checks every such operator type has a family).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "core/random.h"
#include "core/value.h"
#include "onnx/onnx.pb.h"

namespace onemodel::impl {
namespace test {

// --- One-node float graphs: "X" (a graph input), then initializers; output "Y". ---
struct Attr {
  std::string name;
  std::vector<int64_t> ints;
  bool is_float = false;
  float f = 0;
  std::string s;
  bool is_int = false;  // a single INT (else INTS)
};
Attr Ints(std::string n, std::vector<int64_t> v);
Attr Int(std::string n, int64_t v);
Attr Float(std::string n, float v);
Attr Str(std::string n, std::string v);

struct Init {
  std::string name;  // empty: an omitted optional input
  Shape shape;
  std::vector<float> data;
  bool int64 = false;
};
std::string OneOp(const std::string& op, const Shape& x, const std::vector<Init>& inits, const std::vector<Attr>& attrs,
                  int64_t opset = 19);

// --- Graphs of typed initializers and nodes over a float input X. ---
struct TInit {
  std::string name;
  onnx::TensorProto::DataType type;
  Shape shape;
  std::vector<double> data;
};
// Their element types the cases name most.
constexpr auto F = onnx::TensorProto::FLOAT;
constexpr auto I32 = onnx::TensorProto::INT32;
constexpr auto I64 = onnx::TensorProto::INT64;
constexpr auto U8 = onnx::TensorProto::UINT8;
struct TAttr {
  std::string name;
  int64_t i = 0;
  std::vector<int64_t> ints = {};
  std::vector<float> floats = {};
  std::string s = {};
  int kind = 0;  // 0 INT, 1 INTS, 2 STRING, 3 FLOAT, 4 FLOATS
};
TAttr AF(std::string n, float v);
TAttr AI(std::string n, int64_t v);
TAttr AInts(std::string n, std::vector<int64_t> v);
TAttr AS(std::string n, std::string v);
TAttr AFs(std::string n, std::vector<float> v);
struct TNode {
  std::string op;  // "Op", or "domain.Op" outside the default domain (testmodel::SetOpType)
  std::vector<std::string> in;
  std::vector<std::string> out;
  std::vector<TAttr> attrs = {};
};
// Every listed name is a graph output; initializers named in `fed` are graph inputs too
// (a feed may replace them, so constant folding leaves their readers alone).
std::string TypedGraph(const Shape& xs, const std::vector<TInit>& inits, const std::vector<TNode>& nodes,
                       const std::vector<std::string>& outputs, const std::vector<std::string>& fed = {},
                       int64_t opset = 21);

// --- Values. ---
// kind 0 plain, 1 with specials, 2 with runs of -0.0 (zero results whose sign the fold
// decides), 3 all -0.0.
std::vector<float> Values(SplitMix64& rng, int64_t n, int kind, float lo = -1.0f, float hi = 1.0f);
std::vector<float> Positive(SplitMix64& rng, int64_t n);
std::vector<double> Ints8(SplitMix64& rng, int64_t n, bool is_signed);
std::vector<double> Floats(SplitMix64& rng, int64_t n, float lo, float hi);
Value Input(const Shape& s, const std::vector<float>& v);
int64_t Count(const Shape& s);

// --- Cases and families. ---
struct OpCase {
  std::string what;
  std::string model;                   // serialized ModelProto
  std::map<std::string, Value> feeds;  // by input name
};
// A single-input case (feed "X"), and one with any feeds.
OpCase XCase(std::string what, std::string model, const Shape& xs, const std::vector<float>& x);
OpCase FeedsCase(std::string what, std::string model, std::map<std::string, Value> feeds);

struct OpFamily {
  std::string name;
  std::vector<std::string> op_types;  // the operator types whose algorithms it covers
  std::function<std::vector<OpCase>()> cases;
};
// Registers a family (at static initialisation: `static const bool kReg = RegisterFamily(...)`).
bool RegisterFamily(OpFamily family);
const std::vector<OpFamily>& Families();
// Runs the family's cases as the header says (Catch2 checks).
void RunFamily(const std::string& name);

// One case against the oracle at the target under test, as RunFamily does, adding every
// (operator type, algorithm) it ran forced to *ran (may be null).
void CheckCase(const OpCase& c, std::map<std::string, std::vector<std::string>>* ran = nullptr);

}  // namespace test
}  // namespace onemodel::impl
