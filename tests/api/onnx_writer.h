// A small ONNX model writer for the API tests (protobuf wire format by hand), so that
// the tests build their models, well-formed or not, without any internal header.
#pragma once

#include <cstdint>
#include <cstring>
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

namespace onnx_writer {

// One protobuf message being written: fields appended in order.
class Msg {
 public:
  Msg& Varint(int field, uint64_t v) {
    Key(field, 0);
    PutVarint(v);
    return *this;
  }
  Msg& Bytes(int field, const std::string& s) {
    Key(field, 2);
    PutVarint(s.size());
    buf_ += s;
    return *this;
  }
  Msg& Sub(int field, const Msg& m) { return Bytes(field, m.buf_); }
  Msg& Fixed32(int field, uint32_t v) {
    Key(field, 5);
    for (int k = 0; k < 4; ++k) buf_ += char((v >> (8 * k)) & 0xff);
    return *this;
  }
  const std::string& str() const { return buf_; }

 private:
  void Key(int field, int wire) { PutVarint(uint64_t(field) << 3 | uint64_t(wire)); }
  void PutVarint(uint64_t v) {
    while (v >= 0x80) {
      buf_ += char(v | 0x80);
      v >>= 7;
    }
    buf_ += char(v);
  }
  std::string buf_;
};

// A dimension: a size >= 0, or a symbolic name.
struct Dim {
  int64_t value = -1;
  std::string param;
  Dim(int64_t v) : value(v) {}      // NOLINT
  Dim(const char* p) : param(p) {}  // NOLINT
};

inline Msg TensorType(int elem_type, const std::vector<Dim>& dims, bool has_shape = true) {
  Msg shape;
  for (const Dim& d : dims) {
    Msg dim;
    if (d.param.empty())
      dim.Varint(1, uint64_t(d.value));
    else
      dim.Bytes(2, d.param);
    shape.Sub(1, dim);
  }
  Msg tt;
  tt.Varint(1, uint64_t(elem_type));
  if (has_shape) tt.Sub(2, shape);
  Msg type;
  type.Sub(1, tt);
  return type;
}

inline Msg ValueInfo(const std::string& name, const Msg& type) {
  Msg v;
  v.Bytes(1, name).Sub(2, type);
  return v;
}

struct Node {
  std::string op;
  std::vector<std::string> inputs, outputs;
  std::vector<std::pair<std::string, int64_t>> int_attrs;
  std::string domain;
};

struct Initializer {
  std::string name;
  int elem_type;
  std::vector<int64_t> dims;
  std::string raw;
};

struct Model {
  int64_t ir_version = 10;
  int64_t opset = 21;
  std::vector<Node> nodes;
  std::vector<Msg> inputs, outputs;
  std::vector<Initializer> initializers;

  std::string Bytes() const {
    Msg g;
    for (const Node& n : nodes) {
      Msg m;
      for (const auto& i : n.inputs) m.Bytes(1, i);
      for (const auto& o : n.outputs) m.Bytes(2, o);
      m.Bytes(4, n.op);
      for (const auto& [name, v] : n.int_attrs) {
        Msg a;
        a.Bytes(1, name).Varint(3, uint64_t(v)).Varint(20, 2);
        m.Sub(5, a);
      }
      if (!n.domain.empty()) m.Bytes(7, n.domain);
      g.Sub(1, m);
    }
    g.Bytes(2, "api_test");
    for (const Initializer& t : initializers) {
      Msg tp;
      for (int64_t d : t.dims) tp.Varint(1, uint64_t(d));
      tp.Varint(2, uint64_t(t.elem_type)).Bytes(8, t.name).Bytes(9, t.raw);
      g.Sub(5, tp);
    }
    for (const Msg& i : inputs) g.Sub(11, i);
    for (const Msg& o : outputs) g.Sub(12, o);
    Msg opset_id;
    opset_id.Bytes(1, "").Varint(2, uint64_t(opset));
    Msg model;
    model.Varint(1, uint64_t(ir_version)).Bytes(2, "onemodel-api-test").Sub(7, g).Sub(8, opset_id);
    std::vector<std::string> domains;  // every other domain the nodes use, at version 1
    for (const Node& n : nodes) {
      if (n.domain.empty() || std::find(domains.begin(), domains.end(), n.domain) != domains.end()) continue;
      domains.push_back(n.domain);
      Msg d;
      d.Bytes(1, n.domain).Varint(2, 1);
      model.Sub(8, d);
    }
    return model.str();
  }
};

}  // namespace onnx_writer
