// One-node ONNX models for the harnesses (built with the generated onnx.pb.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "onnx/onnx.pb.h"
#include "tests/model_proto.h"

namespace onemodel::fuzz {

struct InputSpec {
  std::string name;
  int32_t elem_type;          // onnx::TensorProto::DataType
  std::vector<int64_t> dims;  // -1: a symbolic dimension "N"
};

inline onnx::ModelProto OneNodeModel(const std::string& op, const std::vector<InputSpec>& inputs,
                                     const std::vector<std::string>& outputs, int64_t opset = 21) {
  onnx::ModelProto m = testmodel::NewModel(10, opset, "g");
  auto* g = m.mutable_graph();
  auto* n = g->add_node();
  n->set_op_type(op);
  for (const InputSpec& in : inputs) {
    n->add_input(in.name);
    testmodel::AddTensorInput(g, in.name, in.elem_type, in.dims);
  }
  for (const std::string& o : outputs) {
    n->add_output(o);
    g->add_output()->set_name(o);
  }
  return m;
}

}  // namespace onemodel::fuzz
