// The ONNX ModelProto pieces every hand-built test model starts with (the suite, the
// operator tests and the fuzz harnesses build their graphs with the generated onnx.pb.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "onnx/onnx.pb.h"

namespace onemodel::testmodel {

// A model of the given IR version importing the default domain at `opset`, with an empty
// graph named `graph_name`.
inline onnx::ModelProto NewModel(int64_t ir_version, int64_t opset, const std::string& graph_name) {
  onnx::ModelProto m;
  m.set_ir_version(ir_version);
  auto* os = m.add_opset_import();
  os->set_domain("");
  os->set_version(opset);
  m.mutable_graph()->set_name(graph_name);
  return m;
}

// Sets node's type from `op`: "Op" in the default domain, "domain.Op" in another (the
// model then imports that domain at version 1, once).
inline void SetOpType(onnx::ModelProto& m, onnx::NodeProto* node, const std::string& op) {
  const size_t dot = op.rfind('.');
  if (dot == std::string::npos) {
    node->set_op_type(op);
    return;
  }
  const std::string domain = op.substr(0, dot);
  node->set_domain(domain);
  node->set_op_type(op.substr(dot + 1));
  for (const auto& o : m.opset_import())
    if (o.domain() == domain) return;
  auto* os = m.add_opset_import();
  os->set_domain(domain);
  os->set_version(1);
}

// Adds a tensor graph input; a negative dimension is the symbolic dimension "N".
inline onnx::ValueInfoProto* AddTensorInput(onnx::GraphProto* g, const std::string& name, int32_t elem_type,
                                            const std::vector<int64_t>& dims) {
  auto* vi = g->add_input();
  vi->set_name(name);
  auto* tt = vi->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(elem_type);
  auto* shape = tt->mutable_shape();
  for (int64_t d : dims) {
    if (d < 0)
      shape->add_dim()->set_dim_param("N");
    else
      shape->add_dim()->set_dim_value(d);
  }
  return vi;
}

}  // namespace onemodel::testmodel
