// The graph IR: what an ONNX model becomes after import. Plain data; nodes are kept in
// a topological order (import sorts them; a cycle is an error).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/tensor.h"
#include "ref/elementwise.h"

namespace onemodel::impl {

struct Graph;

// A tensor type: element type and shape; dims of -1 are unknown (dim_param names kept).
struct TensorType {
  DType dtype = DType::kUndefined;
  bool has_shape = false;
  std::vector<int64_t> dims;
  std::vector<std::string> dim_params;
};

// A value's type. ONNX also has sequences, optionals and maps: `kind` says which.
struct ValueType {
  enum class Kind { kUnknown, kTensor, kSequence, kOptional, kMap, kSparseTensor };
  Kind kind = Kind::kUnknown;
  TensorType tensor;                   // kTensor, or the element of a sequence/optional
  std::shared_ptr<ValueType> element;  // kSequence / kOptional: the element type
};

struct ValueInfo {
  std::string name;
  ValueType type;
};

struct Attribute {
  enum class Type {
    kUndefined,
    kFloat,
    kInt,
    kString,
    kTensor,
    kGraph,
    kFloats,
    kInts,
    kStrings,
    kTensors,
    kGraphs,
    kSparseTensor,
    kTypeProto
  };
  std::string name;
  Type type = Type::kUndefined;
  float f = 0;
  int64_t i = 0;
  std::string s;
  Tensor t;
  std::shared_ptr<Graph> g;
  std::vector<float> floats;
  std::vector<int64_t> ints;
  std::vector<std::string> strings;
  std::vector<Tensor> tensors;
  std::vector<std::shared_ptr<Graph>> graphs;
  std::string ref_attr_name;  // inside functions: refers to the caller's attribute
};

// The 8-bit quantisation then dequantisation of one QuantDequantF32 pass, the parameters
// of ref::QuantDequantF32 (ref/elementwise.h) by name (ops/fused/fused.h QdqFastParams makes
// them from a QuantizeDequantize body).
struct QdqParams {
  float scale = 0, dq_scale = 0;
  int32_t zp = 0, dq_zp = 0, lo = 0, hi = 0;
};

// The integers a float tensor's values lie on: float(q - zp) * scale, q in [lo, hi].
struct QuantGrid {
  float scale = 0;
  int32_t zp = 0, lo = 0, hi = 0;
};

// What exact-mode passes fold into a node (passes/passes.h), read by its operator when it
// plans: a declared struct, never attributes parsed by name (a model's own attributes
// cannot set it). Conv takes both: its results go through `act`, then (qdq) the
// quantisation `qdq_params`, after the bias.
struct NodeFusion {
  Activation act = Activation::kNone;  // Relu or HardSwish
  bool qdq = false;
  QdqParams qdq_params;
  // Set by a fast pass only (passes/fast_passes.cpp): every value of input 0 is
  // float(q - grid.zp) * grid.scale for an integer q in [grid.lo, grid.hi] (the output of
  // a quantisation then dequantisation), so the node may compute on q.
  bool in_grid = false;
  QuantGrid grid;
  // A residual Add, and a Relu reading only its sum, taken into a Conv (exact: passes.h
  // FuseConvResidual): input 3 is Z and the node's result is post(conv + Z), the sum in the
  // Add's operand order (z_first: Add(Z, conv)). residual_body holds the Add (and Relu)
  // reading the Conv's result as its input 0 and Z as input 1: what runs when Z is not a
  // float tensor of the Conv result's shape.
  bool residual = false;
  bool z_first = false;
  Activation post_act = Activation::kNone;
  std::shared_ptr<const Graph> residual_body;
};

struct Node {
  std::string name, op_type, domain;
  std::vector<std::string> inputs;                           // "" marks an omitted optional input
  std::vector<std::string> outputs;                          // "" marks an omitted optional output
  std::map<std::string, Attribute, std::less<>> attributes;  // transparent: found by string_view
  NodeFusion fusion;                                         // set by the passes only

  const Attribute* attr(std::string_view n) const {
    auto it = attributes.find(n);
    return it == attributes.end() ? nullptr : &it->second;
  }
  // "Add" or "com.microsoft.Foo" plus the node name, for error messages.
  std::string Describe() const;
  // The operator type as the operator tables, `onemodel ops` and SessionOptions::algorithms
  // name it: op_type in the default domain, "domain.op_type" in any other
  // ("com.microsoft.MatMulNBits").
  std::string QualifiedType() const { return DefaultDomain() ? op_type : domain + "." + op_type; }
  // Whether QualifiedType() is q (without building it: planning runs every run).
  bool HasQualifiedType(std::string_view q) const {
    if (DefaultDomain()) return q == op_type;
    const size_t d = domain.size();
    return q.size() == d + 1 + op_type.size() && q.substr(0, d) == domain && q[d] == '.' && q.substr(d + 1) == op_type;
  }
  bool DefaultDomain() const { return domain.empty() || domain == "ai.onnx"; }
};

struct Graph {
  std::string name;
  std::vector<Node> nodes;  // topologically sorted
  std::vector<ValueInfo> inputs, outputs, value_infos;
  std::map<std::string, Tensor> initializers;
  // Names from enclosing graphs that this (sub)graph reads.
  std::vector<std::string> outer_refs;
};

// A model-local function (ONNX FunctionProto).
struct Function {
  std::string name, domain;
  std::vector<std::string> inputs, outputs, attributes;
  std::map<std::string, Attribute> attribute_defaults;
  std::vector<Node> nodes;
  std::map<std::string, int64_t> opsets;
};

struct Model {
  int64_t ir_version = 0;
  std::map<std::string, int64_t> opsets;  // domain ("" = ai.onnx) -> version
  std::string producer;
  std::shared_ptr<Graph> graph;
  std::map<std::string, Function> functions;  // key: domain + ":" + name
  std::string origin;                         // path or "<bytes>", for messages
};

}  // namespace onemodel::impl
