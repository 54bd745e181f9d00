// One-node ONNX models for the harnesses (built with the generated onnx.pb.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "onnx/onnx.pb.h"

namespace onemodel::fuzz {

struct InputSpec {
  std::string name;
  int32_t elem_type;          // onnx::TensorProto::DataType
  std::vector<int64_t> dims;  // -1: a symbolic dimension "N"
};

inline onnx::ModelProto OneNodeModel(const std::string& op, const std::vector<InputSpec>& inputs,
                                     const std::vector<std::string>& outputs, int64_t opset = 21) {
  onnx::ModelProto m;
  m.set_ir_version(10);
  auto* os = m.add_opset_import();
  os->set_domain("");
  os->set_version(opset);
  auto* g = m.mutable_graph();
  g->set_name("g");
  auto* n = g->add_node();
  n->set_op_type(op);
  for (const InputSpec& in : inputs) {
    n->add_input(in.name);
    auto* vi = g->add_input();
    vi->set_name(in.name);
    auto* tt = vi->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(in.elem_type);
    auto* shape = tt->mutable_shape();
    for (int64_t d : in.dims) {
      if (d < 0)
        shape->add_dim()->set_dim_param("N");
      else
        shape->add_dim()->set_dim_value(d);
    }
  }
  for (const std::string& o : outputs) {
    n->add_output(o);
    g->add_output()->set_name(o);
  }
  return m;
}

}  // namespace onemodel::fuzz
