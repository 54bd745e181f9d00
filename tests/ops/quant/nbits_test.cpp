// ONNX Runtime's MatMulNBits (ops/quant/nbits.h): 2, 4 and 8 bits, block sizes 16 to 128,
// K not a multiple of the block (padding codes in the last block), packed, float and absent
// zero points, 1-D and 2-D scales, g_idx, bias, float16 A, one row (GEMV) and many, and
// weights fed at run time (dequantized each run) besides constant ones (packed once).
#include "tests/catch.h"

#include <cstring>
#include <string>
#include <vector>

#include "tests/ops/op_test.h"
#include "tests/test_util.h"

namespace onemodel::impl {
namespace test {
namespace {

struct NBitsCase {
  int64_t bits, block, K, N;
  Shape a;
  int zp;  // 0 none, 1 packed uint8, 2 float
  bool g_idx, bias, scales_1d, f16, fed;
};

OpCase MakeNBitsCase(SplitMix64& rng, const NBitsCase& c) {
  const auto F = onnx::TensorProto::FLOAT;
  const auto U8 = onnx::TensorProto::UINT8;
  const int64_t blocks = (c.K + c.block - 1) / c.block, blob = c.block * c.bits / 8;
  const int64_t zp_row = (blocks * c.bits + 7) / 8;
  std::vector<double> bytes;
  for (int64_t i = 0; i < c.N * blocks * blob; ++i) bytes.push_back(double(rng.NextU32() & 255));
  std::vector<TInit> inits = {{"B", U8, {c.N, blocks, blob}, bytes},
                              {c.f16 ? "Sf" : "S", F, c.scales_1d ? Shape{c.N * blocks} : Shape{c.N, blocks},
                               Floats(rng, c.N * blocks, -0.2f, 0.2f)}};
  std::vector<std::string> in = {c.f16 ? "xh" : "X", "B", "S", "", "", ""};
  std::vector<TNode> nodes;
  if (c.f16) {
    nodes.push_back({"Cast", {"X"}, {"xh"}, {AI("to", 10)}});
    nodes.push_back({"Cast", {"Sf"}, {"S"}, {AI("to", 10)}});
  }
  if (c.zp == 1) {
    std::vector<double> z;
    for (int64_t i = 0; i < c.N * zp_row; ++i) z.push_back(double(rng.NextU32() & 255));
    inits.push_back({"Z", U8, {c.N, zp_row}, z});
    in[3] = "Z";
  } else if (c.zp == 2) {
    inits.push_back({c.f16 ? "Zf" : "Z", F, {c.N, blocks}, Floats(rng, c.N * blocks, 0.0f, float(1 << c.bits))});
    if (c.f16) nodes.push_back({"Cast", {"Zf"}, {"Z"}, {AI("to", 10)}});
    in[3] = "Z";
  }
  if (c.g_idx) {
    std::vector<double> g;
    for (int64_t k = 0; k < c.K; ++k) g.push_back(double(rng.NextU32() % uint32_t(blocks)));
    inits.push_back({"G", onnx::TensorProto::INT32, {c.K}, g});
    in[4] = "G";
  }
  if (c.bias) {
    inits.push_back({c.f16 ? "BIf" : "BI", F, {c.N}, Floats(rng, c.N, -1.0f, 1.0f)});
    if (c.f16) nodes.push_back({"Cast", {"BIf"}, {"BI"}, {AI("to", 10)}});
    in[5] = "BI";
  }
  while (!in.empty() && in.back().empty()) in.pop_back();
  const std::string out = c.f16 ? "yh" : "Y";
  nodes.push_back({"com.microsoft.MatMulNBits",
                   in,
                   {out},
                   {AI("K", c.K), AI("N", c.N), AI("bits", c.bits), AI("block_size", c.block)}});
  if (c.f16) nodes.push_back({"Cast", {"yh"}, {"Y"}, {AI("to", 1)}});
  const std::string what = "MatMulNBits bits " + std::to_string(c.bits) + ", block " + std::to_string(c.block) +
                           ", K " + std::to_string(c.K) + ", A " + ShapeToString(c.a) + ", zero points " +
                           std::to_string(c.zp) + (c.g_idx ? ", g_idx" : "") + (c.bias ? ", bias" : "") +
                           (c.scales_1d ? ", 1-D scales" : "") + (c.f16 ? ", float16" : "") +
                           (c.fed ? ", weights fed" : "");
  const auto x = Values(rng, Count(c.a), 1, -2.0f, 2.0f);
  if (!c.fed) return XCase(what, TypedGraph(c.a, inits, nodes, {"Y"}), c.a, x);
  Tensor b(DType::kUInt8, {c.N, blocks, blob});
  for (size_t i = 0; i < bytes.size(); ++i) b.mutable_data<uint8_t>()[i] = uint8_t(bytes[i]);
  return FeedsCase(what, TypedGraph(c.a, inits, nodes, {"Y"}, {"B"}),
                   {{"X", Input(c.a, x)}, {"B", Value::FromTensor(b)}});
}

std::vector<OpCase> NBitsCases() {
  SplitMix64 rng(808);
  const NBitsCase cs[] = {
      {4, 32, 96, 40, {5, 96}, 1, false, true, false, false, false},
      {4, 16, 100, 33, {2, 3, 100}, 0, false, false, true, false, false},
      {2, 64, 130, 24, {1, 130}, 1, false, true, false, false, false},
      {8, 128, 200, 17, {20, 200}, 2, false, false, false, false, false},
      {4, 32, 64, 48, {18, 64}, 1, true, true, false, false, false},
      {4, 16, 48, 20, {4, 48}, 2, false, true, false, true, false},
      {4, 32, 96, 70, {17, 96}, 1, false, true, false, false, true},
      {2, 16, 40, 9, {40}, 0, false, false, true, false, false},
      {4, 16, 37, 20, {3, 37}, 1, false, true, false, false, false},  // K odd: a lone last code
  };
  std::vector<OpCase> cases;
  for (const NBitsCase& c : cs) cases.push_back(MakeNBitsCase(rng, c));
  // GatherBlockQuantized: 4-bit codes packed in uint8 rows (an embedding table) with and
  // without zero points, indices of X's values (out-of-range ones give zeros).
  for (int64_t bits : {4, 2, 8})
    for (bool with_zp : {false, true}) {
      const int64_t rows = 11, cols = 96, per = 8 / bits, block = 32;
      const int64_t blocks = (cols + block - 1) / block, zrow = (blocks + per - 1) / per;
      std::vector<double> d, z;
      for (int64_t i = 0; i < rows * cols / per; ++i) d.push_back(double(rng.NextU32() & 255));
      for (int64_t i = 0; i < rows * zrow; ++i) z.push_back(double(rng.NextU32() & 255));
      std::vector<TInit> inits = {{"D", onnx::TensorProto::UINT8, {rows, cols / per}, d},
                                  {"S", onnx::TensorProto::FLOAT, {rows, blocks}, Floats(rng, rows * blocks, -1, 1)}};
      std::vector<std::string> in = {"D", "I", "S"};
      if (with_zp) {
        inits.push_back({"Z", onnx::TensorProto::UINT8, {rows, zrow}, z});
        in.push_back("Z");
      }
      const std::vector<TNode> nodes = {
          {"Cast", {"X"}, {"I"}, {AI("to", 7)}},
          {"com.microsoft.GatherBlockQuantized",
           in,
           {"Y"},
           {AI("bits", bits), AI("block_size", block), AI("quantize_axis", 1), AI("gather_axis", 0)}}};
      const Shape xs{2, 5};
      cases.push_back(XCase("GatherBlockQuantized bits " + std::to_string(bits) + (with_zp ? ", zero points" : ""),
                            TypedGraph(xs, inits, nodes, {"Y"}), xs, {0, 3, 10, -1, -11, 5, 11, 7, 2, -4}));
    }
  return cases;
}

const bool kNbitsRegistered = RegisterFamily({"nbits", {"com.microsoft.MatMulNBits"}, &NBitsCases});

}  // namespace

TEST_CASE("ops/nbits: every case at every algorithm equals the oracle", "[ops][exact_paths]") { RunFamily("nbits"); }

}  // namespace test
}  // namespace onemodel::impl
