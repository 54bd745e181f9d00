// ONNX Runtime's leniency through the C++ and C APIs: the rows of tools/leniency.mjs's
// table (onnxruntime-node 1.30's verdict on each feed variant) run through
// onemodel::Session and om_session_run. A row onnxruntime-node accepts must run with its
// output (shape and values); a row it refuses must fail with a typed error. Hidden tag:
// tools/test.sh's leniency row writes the table, then runs
//   ONEMODEL_LENIENCY=build/leniency onemodel_api_tests "[.leniency]"
#include <catch2/catch.hpp>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "onemodel/onemodel.h"
#include "onemodel/onemodel_c.h"

namespace {

using onemodel::ElementType;
using onemodel::NamedValue;
using onemodel::Session;
using onemodel::Tensor;

struct Feed {
  std::string name, type;
  std::vector<int64_t> dims;
};
struct Row {
  std::string model, variant;
  std::vector<Feed> feeds;
  bool ok = false;
  std::string output;  // dims:values as tools/leniency.mjs prints them
};

std::vector<std::string> Split(const std::string& s, char sep) {
  std::vector<std::string> r;
  std::stringstream in(s);
  std::string part;
  while (std::getline(in, part, sep)) r.push_back(part);
  return r;
}

std::vector<int64_t> Dims(const std::string& s) {
  std::vector<int64_t> d;
  if (s == "-") return d;
  for (const std::string& p : Split(s, 'x')) d.push_back(std::stoll(p));
  return d;
}

std::string DimsText(const std::vector<int64_t>& d) {
  std::string s;
  for (size_t i = 0; i < d.size(); ++i) s += (i ? "x" : "") + std::to_string(d[i]);
  return s.empty() ? "-" : s;
}

// A number as JavaScript's toPrecision(9) prints it (values from 1e-6 to 1e21).
std::string Value9(double v) {
  if (v == 0) return "0.00000000";
  int e = 0;
  for (double a = v < 0 ? -v : v; a >= 10; a /= 10) ++e;
  for (double a = v < 0 ? -v : v; a < 1; a *= 10) --e;
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", 8 - e > 0 ? 8 - e : 0, v);
  return buf;
}

ElementType TypeOf(const std::string& t) {
  if (t == "float32") return ElementType::kFloat;
  if (t == "float64") return ElementType::kDouble;
  if (t == "float16") return ElementType::kFloat16;
  if (t == "int32") return ElementType::kInt32;
  if (t == "int64") return ElementType::kInt64;
  FAIL("unknown type " << t);
  return ElementType::kUndefined;
}

// Values 1, 2, 3, ... in the feed's type (float16: 1, 2, 3, 4, 5, 6 repeating).
Tensor MakeTensor(const Feed& f) {
  Tensor t(TypeOf(f.type), f.dims);
  const int64_t n = t.size();
  void* p = t.mutable_data();
  for (int64_t i = 0; i < n; ++i) {
    if (f.type == "float32") static_cast<float*>(p)[i] = float(i + 1);
    if (f.type == "float64") static_cast<double*>(p)[i] = double(i + 1);
    if (f.type == "int32") static_cast<int32_t*>(p)[i] = int32_t(i + 1);
    if (f.type == "int64") static_cast<int64_t*>(p)[i] = i + 1;
    if (f.type == "float16") {
      const uint16_t h[] = {0x3c00, 0x4000, 0x4200, 0x4400, 0x4500, 0x4600};
      static_cast<uint16_t*>(p)[i] = h[i % 6];
    }
  }
  return t;
}

std::string OutputText(ElementType type, const std::vector<int64_t>& dims, const void* data, int64_t n) {
  std::string s = DimsText(dims) + ":";
  for (int64_t i = 0; i < n; ++i) {
    const double v = type == ElementType::kInt64 ? double(static_cast<const int64_t*>(data)[i])
                                                 : double(static_cast<const float*>(data)[i]);
    s += (i ? "," : "") + Value9(v);
  }
  return n ? s : s + "-";
}

std::vector<Row> ReadTable(const std::string& dir) {
  std::ifstream in(dir + "/table.txt");
  std::vector<Row> rows;
  std::string line;
  while (std::getline(in, line)) {
    const auto f = Split(line, ' ');
    if (f.size() != 5) continue;
    Row r{f[0], f[1], {}, f[3] == "ok", f[4]};
    if (f[2] != "-")
      for (const std::string& spec : Split(f[2], ';')) {
        const auto p = Split(spec, ':');
        r.feeds.push_back({p[0], p[1], Dims(p[2])});
      }
    rows.push_back(r);
  }
  return rows;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

}  // namespace

TEST_CASE("leniency: the C++ and C APIs accept what onnxruntime-node accepts, and refuse the rest", "[.leniency]") {
  const char* dir = std::getenv("ONEMODEL_LENIENCY");
  REQUIRE(dir != nullptr);  // the hidden test runs only from tools/test.sh's leniency row
  const std::vector<Row> rows = ReadTable(dir);
  REQUIRE(rows.size() >= 20);
  for (const Row& r : rows) {
    INFO(r.model << ": " << r.variant);
    const std::string bytes = ReadFile(std::string(dir) + "/" + r.model + ".onnx");
    // C++.
    Session s = Session::FromBytes(bytes.data(), bytes.size(), {}, r.model + ".onnx");
    std::vector<NamedValue> feeds;
    for (const Feed& f : r.feeds) feeds.push_back({f.name, MakeTensor(f)});
    try {
      const auto out = s.Run(feeds);
      const Tensor& y = out[0].value.tensor();
      CHECK(r.ok);
      CHECK(OutputText(y.type(), y.shape(), y.data(), y.size()) == r.output);
    } catch (const onemodel::Error& e) {
      INFO("C++ refused: " << e.what());
      CHECK(!r.ok);
    }
    // C.
    OmSession* cs = nullptr;
    REQUIRE(om_session_create_from_bytes(bytes.data(), bytes.size(), nullptr, &cs) == OM_OK);
    std::vector<OmTensor*> ts;
    std::vector<const char*> names;
    for (const Feed& f : r.feeds) {
      const Tensor t = MakeTensor(f);
      OmTensor* ct = nullptr;
      REQUIRE(om_tensor_create_copy(OmElementType(t.type()), t.shape().data(), t.shape().size(), t.data(),
                                    t.byte_size(), &ct) == OM_OK);
      ts.push_back(ct);
      names.push_back(f.name.c_str());
    }
    OmTensor* y = nullptr;
    const OmStatus st = om_session_run(cs, names.data(), ts.data(), ts.size(), nullptr, 1, &y);
    if (st == OM_OK) {
      CHECK(r.ok);
      const std::vector<int64_t> dims(om_tensor_dims(y), om_tensor_dims(y) + om_tensor_rank(y));
      CHECK(OutputText(ElementType(om_tensor_type(y)), dims, om_tensor_data(y), om_tensor_size(y)) == r.output);
    } else {
      INFO("C refused: " << om_status_name(st) << ": " << om_last_error());
      CHECK(!r.ok);
    }
    om_tensor_free(y);
    for (OmTensor* t : ts) om_tensor_free(t);
    om_session_free(cs);
  }
}
