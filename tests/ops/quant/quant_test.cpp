// The integer and quantisation operators (ops/quant/quant.h, ops/quant/int_conv.h): dynamic quantisation,
// MatMulInteger, ConvInteger, QDQ convolution, QLinearMatMul and QLinearConv.
#include "tests/catch.h"

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "tests/ops/op_test.h"
#include "tests/test_util.h"

namespace onemodel::impl {
namespace test {
namespace {

std::vector<OpCase> QuantCases() {
  std::vector<OpCase> cases;
  {
    SplitMix64 rng(909);
    const auto U8 = onnx::TensorProto::UINT8, I8 = onnx::TensorProto::INT8, F = onnx::TensorProto::FLOAT;
    // Dynamic quantisation of a transformer's linear layer: DynamicQuantizeLinear, then
    // MatMulInteger against int8 or uint8 weights (scalar and per-column zero points, odd
    // K), Cast to float and the scales; the int32 product and the quantised X are outputs.
    for (bool w_signed : {true, false})
      for (bool per_col : {false, true})
        for (int kind : {0, 1}) {
          const int64_t K = 23, N = 19;
          const Shape xs{2, 37, K};
          const std::vector<TInit> inits = {
              {"W", w_signed ? I8 : U8, {K, N}, Ints8(rng, K * N, w_signed)},
              {"Wz", w_signed ? I8 : U8, per_col ? Shape{N} : Shape{},
               per_col ? Ints8(rng, N, w_signed) : std::vector<double>{w_signed ? 3.0 : 130.0}},
              {"Ws", F, {}, {0.0125}}};
          const std::vector<TNode> nodes = {{"DynamicQuantizeLinear", {"X"}, {"Xq", "Xs", "Xz"}},
                                            {"MatMulInteger", {"Xq", "W", "Xz", "Wz"}, {"P"}},
                                            {"Cast", {"P"}, {"Pf"}, {AI("to", 1)}},
                                            {"Mul", {"Pf", "Xs"}, {"Q"}},
                                            {"Mul", {"Q", "Ws"}, {"Y"}}};
          cases.push_back(FeedsCase(std::string("dynamic quantised MatMul ") + (w_signed ? "int8" : "uint8") +
                                        (per_col ? " per column" : "") + " kind " + std::to_string(kind),
                                    TypedGraph(xs, inits, nodes, {"Y", "P", "Xq"}),
                                    {{"X", Input(xs, Values(rng, 2 * 37 * K, kind, -3.0f, 5.0f))}}));
        }
    // The same layer as tools/quantize.py and ONNX Runtime's dynamic quantiser write it:
    // Mul(X scale, W scale) once, the product times that, then the bias: the exact pass
    // makes one onemodel.DynamicQuantMatMul of it (passes.h). W int8 and uint8, with its
    // zero point absent, scalar or per column; the W scale scalar or per column; a bias
    // on either side of the Add or none; K 64 (A read in place by the dot-product row) and
    // 23; A of rank 2 and 3; specials in X (an infinity makes the scale infinite: NaN and
    // infinite products). A W scale of rank 2 runs the body node by node.
    for (int variant = 0; variant < 8; ++variant) {
      const bool w_signed = variant % 2 == 0, per_col = variant % 4 >= 2, bias = variant != 3;
      const int64_t K = variant < 4 ? 64 : 23, N = 37;
      const Shape xs = variant % 3 == 0 ? Shape{41, K} : Shape{3, 13, K};
      const Shape ws_shape = variant == 7 ? Shape{1, N} : per_col ? Shape{N} : Shape{};
      std::vector<TInit> inits = {{"W", w_signed ? I8 : U8, {K, N}, Ints8(rng, K * N, w_signed)},
                                  {"Ws", F, ws_shape, Floats(rng, Count(ws_shape), 0.001f, 0.05f)},
                                  {"B", F, {N}, Floats(rng, N, -1.0f, 1.0f)}};
      const int zp_kind = variant % 3;  // 0 none, 1 scalar, 2 per column
      if (zp_kind)
        inits.push_back({"Wz", w_signed ? I8 : U8, zp_kind == 2 ? Shape{N} : Shape{},
                         zp_kind == 2 ? Ints8(rng, N, w_signed) : std::vector<double>{w_signed ? -2.0 : 128.0}});
      std::vector<TNode> nodes = {
          {"DynamicQuantizeLinear", {"X"}, {"Xq", "Xs", "Xz"}},
          {"MatMulInteger",
           zp_kind ? std::vector<std::string>{"Xq", "W", "Xz", "Wz"} : std::vector<std::string>{"Xq", "W", "Xz"},
           {"P"}},
          {"Cast", {"P"}, {"Pf"}, {AI("to", 1)}},
          {"Mul", variant % 2 ? std::vector<std::string>{"Ws", "Xs"} : std::vector<std::string>{"Xs", "Ws"}, {"S"}},
          {"Mul",
           variant % 4 == 1 ? std::vector<std::string>{"S", "Pf"} : std::vector<std::string>{"Pf", "S"},
           {bias ? "Q" : "Y"}}};
      if (bias)
        nodes.push_back(
            {"Add", variant % 2 ? std::vector<std::string>{"B", "Q"} : std::vector<std::string>{"Q", "B"}, {"Y"}});
      std::vector<float> x = Values(rng, Count(xs), variant == 5 ? 1 : 0, -3.0f, 5.0f);
      if (variant == 6) x[7] = INFINITY;
      cases.push_back(FeedsCase("dynamic quantised linear layer, variant " + std::to_string(variant),
                                TypedGraph(xs, inits, nodes, {"Y"}), {{"X", Input(xs, x)}}));
    }
    // A wide B and few rows (the layers of a transformer at short sequences): at 2 and 3
    // threads the product splits by panels of columns (B's bytes more than twice A's, two
    // panels per thread), at 7 by rows. K = 64 reads A in place, K = 62 copies it.
    for (int64_t K : {64, 62})
      for (bool per_col : {false, true}) {
        const int64_t N = 300;
        const Shape xs{2, 20, K};
        const std::vector<TInit> inits = {
            {"W", I8, {K, N}, Ints8(rng, K * N, true)},
            {"Wz", I8, per_col ? Shape{N} : Shape{}, per_col ? Ints8(rng, N, true) : std::vector<double>{-5.0}}};
        const std::vector<TNode> nodes = {{"DynamicQuantizeLinear", {"X"}, {"Xq", "Xs", "Xz"}},
                                          {"MatMulInteger", {"Xq", "W", "Xz", "Wz"}, {"P"}}};
        cases.push_back(FeedsCase("MatMulInteger by columns, K " + std::to_string(K) + (per_col ? " per column" : ""),
                                  TypedGraph(xs, inits, nodes, {"P"}),
                                  {{"X", Input(xs, Values(rng, size_t(2 * 20 * K), 0, -3.0f, 5.0f))}}));
      }
    // DynamicQuantizeLinear on 120K elements: its range in parts over the threads (3 at
    // 3 and 7 threads), the minimum in the last part and the maximum in the first; finite
    // values, specials, and non-negative values with -0.0 and NaNs (the range's zero
    // must stay +0; a NaN never replaces).
    for (int variant : {0, 1, 2}) {
      const Shape xs{3, 40000};
      std::vector<float> x = Values(rng, 120000, variant == 1 ? 1 : 0, variant == 2 ? 0.0f : -3.0f, 5.0f);
      if (variant == 2)
        for (size_t i = 0; i < x.size(); i += 997) x[i] = i % 2 ? -0.0f : std::numeric_limits<float>::quiet_NaN();
      x[5] = 7.5f;
      x[119990] = variant == 2 ? -0.0f : -4.25f;
      const std::vector<TNode> nodes = {{"DynamicQuantizeLinear", {"X"}, {"Xq", "Xs", "Xz"}}};
      cases.push_back(FeedsCase("DynamicQuantizeLinear in parts, variant " + std::to_string(variant),
                                TypedGraph(xs, {}, nodes, {"Xq", "Xs", "Xz"}), {{"X", Input(xs, x)}}));
    }
    // MatMulInteger's other operand kinds: int8 A (QuantizeLinear to int8) with a zero
    // point per row against uint8 B, and uint8 A with K a multiple of 4 (the dot path reads
    // A in place) against int8 B with a zero point per column.
    for (bool a_signed : {true, false}) {
      const int64_t M = 6, K = a_signed ? 30 : 32, N = 21;
      const Shape xs{M, K};
      const std::vector<TInit> inits = {{"s", F, {}, {0.03}},
                                        {"z", a_signed ? I8 : U8, {}, {a_signed ? -7.0 : 131.0}},
                                        {"W", a_signed ? U8 : I8, {K, N}, Ints8(rng, K * N, !a_signed)},
                                        {"Az", a_signed ? I8 : U8, a_signed ? Shape{M} : Shape{},
                                         a_signed ? Ints8(rng, M, true) : std::vector<double>{129.0}},
                                        {"Wz", a_signed ? U8 : I8, a_signed ? Shape{} : Shape{N},
                                         a_signed ? std::vector<double>{250.0} : Ints8(rng, N, true)}};
      const std::vector<TNode> nodes = {{"QuantizeLinear", {"X", "s", "z"}, {"Xq"}},
                                        {"MatMulInteger", {"Xq", "W", "Az", "Wz"}, {"P"}},
                                        {"Cast", {"P"}, {"Y"}, {AI("to", 1)}}};
      cases.push_back(
          FeedsCase(std::string("MatMulInteger ") + (a_signed ? "int8 A, zero point per row" : "uint8 A, K 32"),
                    TypedGraph(xs, inits, nodes, {"Y", "P"}), {{"X", Input(xs, Values(rng, M * K, 1, -4.0f, 4.0f))}}));
    }
    // QDQ convolution: X quantised (per tensor) and dequantised, the weight dequantised per
    // output channel (constant: folded once per session), a float Conv with bias, then
    // quantised again (int8) and dequantised; also QuantizeLinear per axis.
    {
      const Shape xs{1, 6, 13, 15};
      const int64_t M = 8, Cg = 3;
      const std::vector<TInit> inits = {{"xs", F, {}, {0.05}},
                                        {"xz", U8, {}, {128}},
                                        {"W", I8, {M, Cg, 3, 3}, Ints8(rng, M * Cg * 9, true)},
                                        {"ws", F, {M}, Floats(rng, M, 0.001f, 0.02f)},
                                        {"wz", I8, {M}, std::vector<double>(size_t(M), 0.0)},
                                        {"B", F, {M}, Floats(rng, M, -0.5f, 0.5f)},
                                        {"ys", F, {}, {0.1}},
                                        {"yz", I8, {}, {-3}},
                                        {"cs", F, {6}, Floats(rng, 6, 0.01f, 0.1f)},
                                        {"cz", U8, {6}, Ints8(rng, 6, false)}};
      const std::vector<TNode> nodes = {
          {"QuantizeLinear", {"X", "xs", "xz"}, {"Xq"}},
          {"DequantizeLinear", {"Xq", "xs", "xz"}, {"Xd"}},
          {"DequantizeLinear", {"W", "ws", "wz"}, {"Wd"}, {AI("axis", 0)}},
          {"Conv", {"Xd", "Wd", "B"}, {"C"}, {AInts("pads", {1, 1, 1, 1}), AInts("strides", {2, 1}), AI("group", 2)}},
          {"QuantizeLinear", {"C", "ys", "yz"}, {"Cq"}},
          {"DequantizeLinear", {"Cq", "ys", "yz"}, {"Y"}},
          {"QuantizeLinear", {"X", "cs", "cz"}, {"Xc"}, {AI("axis", 1)}},
          {"DequantizeLinear", {"Xc", "cs", "cz"}, {"Xcd"}, {AI("axis", 1)}}};
      for (int kind : {0, 1})
        cases.push_back(FeedsCase("QDQ Conv kind " + std::to_string(kind),
                                  TypedGraph(xs, inits, nodes, {"Y", "Cq", "Xcd", "Xc"}),
                                  {{"X", Input(xs, Values(rng, 6 * 13 * 15, kind, -8.0f, 8.0f))}}));
    }
    // QuantizeLinear -> DequantizeLinear pairs (one node each at the vector ISAs, the
    // quantised tensor never stored): uint8 and int8, DQ's parameters equal to Q's or not,
    // no zero points (uint8, 0); a per-axis pair (fused, run node by node); a pair whose
    // quantised tensor is also an output (not fused). Specials in X (kind 1).
    {
      const Shape xs{2, 5, 9, 11};
      const std::vector<TInit> inits = {{"s1", F, {}, {0.05}},
                                        {"z1", U8, {}, {128}},
                                        {"s2", F, {}, {0.03}},
                                        {"z2", I8, {}, {-5}},
                                        {"s3", F, {}, {0.07}},
                                        {"z3", I8, {}, {3}},
                                        {"s4", F, {}, {0.1}},
                                        {"cs", F, {5}, Floats(rng, 5, 0.01f, 0.1f)},
                                        {"cz", U8, {5}, Ints8(rng, 5, false)}};
      const std::vector<TNode> nodes = {{"QuantizeLinear", {"X", "s1", "z1"}, {"Q1"}},
                                        {"DequantizeLinear", {"Q1", "s1", "z1"}, {"A"}},
                                        {"QuantizeLinear", {"A", "s2", "z2"}, {"Q2"}},
                                        {"DequantizeLinear", {"Q2", "s3", "z3"}, {"B"}},
                                        {"QuantizeLinear", {"B", "s4"}, {"Q3"}},
                                        {"DequantizeLinear", {"Q3", "s4"}, {"C"}},
                                        {"QuantizeLinear", {"C", "cs", "cz"}, {"Q4"}, {AI("axis", 1)}},
                                        {"DequantizeLinear", {"Q4", "cs", "cz"}, {"D"}, {AI("axis", 1)}},
                                        {"QuantizeLinear", {"X", "s2", "z2"}, {"Q5"}},
                                        {"DequantizeLinear", {"Q5", "s2", "z2"}, {"E"}}};
      for (int kind : {0, 1})
        cases.push_back(FeedsCase("QuantizeLinear -> DequantizeLinear pairs kind " + std::to_string(kind),
                                  TypedGraph(xs, inits, nodes, {"D", "E", "Q5", "B"}),
                                  {{"X", Input(xs, Values(rng, Count(xs), kind, -9.0f, 9.0f))}}));
    }
    // QDQ convolutions with their output quantisation fused into the Conv (the quantised
    // tensors read once): 3x3 with padding and a HardSwish (the padded zeros' fix-up runs
    // before the quantisation), a 1x1 with a Relu, a depthwise 3x3 without activation,
    // then a Conv whose output is read twice (not fused). -0.0 inputs (kind 2) and
    // specials (kind 1).
    {
      const Shape xs{1, 4, 10, 12};
      const std::vector<TInit> inits = {{"xs", F, {}, {0.04}},
                                        {"xz", U8, {}, {120}},
                                        {"W1", F, {8, 4, 3, 3}, Floats(rng, 8 * 4 * 9, -0.5f, 0.5f)},
                                        {"B1", F, {8}, Floats(rng, 8, -0.2f, 0.2f)},
                                        {"s1", F, {}, {0.02}},
                                        {"z1", I8, {}, {-4}},
                                        {"W2", F, {8, 8, 1, 1}, Floats(rng, 64, -0.5f, 0.5f)},
                                        {"s2", F, {}, {0.03}},
                                        {"z2", U8, {}, {7}},
                                        {"W3", F, {8, 1, 3, 3}, Floats(rng, 72, 0.05f, 0.5f)},
                                        {"s3", F, {}, {0.05}},
                                        {"z3", I8, {}, {2}},
                                        {"W4", F, {3, 8, 1, 1}, Floats(rng, 24, -0.5f, 0.5f)}};
      const std::vector<TNode> nodes = {{"QuantizeLinear", {"X", "xs", "xz"}, {"Xq"}},
                                        {"DequantizeLinear", {"Xq", "xs", "xz"}, {"Xd"}},
                                        {"Conv", {"Xd", "W1", "B1"}, {"C1"}, {AInts("pads", {1, 1, 1, 1})}},
                                        {"HardSwish", {"C1"}, {"H1"}},
                                        {"QuantizeLinear", {"H1", "s1", "z1"}, {"Q1"}},
                                        {"DequantizeLinear", {"Q1", "s1", "z1"}, {"D1"}},
                                        {"Conv", {"D1", "W2"}, {"C2"}},
                                        {"Relu", {"C2"}, {"R2"}},
                                        {"QuantizeLinear", {"R2", "s2", "z2"}, {"Q2"}},
                                        {"DequantizeLinear", {"Q2", "s2", "z2"}, {"D2"}},
                                        {"Conv", {"D2", "W3"}, {"C3"}, {AI("group", 8), AInts("pads", {1, 1, 1, 1})}},
                                        {"QuantizeLinear", {"C3", "s3", "z3"}, {"Q3"}},
                                        {"DequantizeLinear", {"Q3", "s3", "z3"}, {"D3"}},
                                        {"Conv", {"D3", "W4"}, {"C4"}},
                                        {"QuantizeLinear", {"C4", "s3", "z3"}, {"Q4"}},
                                        {"DequantizeLinear", {"Q4", "s3", "z3"}, {"D4"}},
                                        {"Add", {"D4", "C4"}, {"Y"}}};
      for (int kind : {0, 1, 2})
        cases.push_back(FeedsCase("QDQ convolutions, quantisation fused, kind " + std::to_string(kind),
                                  TypedGraph(xs, inits, nodes, {"Y", "D2"}),
                                  {{"X", Input(xs, Values(rng, Count(xs), kind, -6.0f, 6.0f))}}));
    }
    // ConvInteger after dynamic quantisation: uint8 weights with per-channel zero points,
    // padding, stride, dilation, groups; 1-D too.
    for (int variant = 0; variant < 3; ++variant) {
      const Shape xs = variant == 2 ? Shape{2, 4, 29} : Shape{2, 4, 11, 12};
      const int64_t M = 6, Cg = variant == 1 ? 2 : 4, group = variant == 1 ? 2 : 1, ks = variant == 2 ? 1 : 3;
      const Shape wsh = variant == 2 ? Shape{M, Cg, 5} : Shape{M, Cg, 3, 3};
      const int64_t nw = M * Cg * (variant == 2 ? 5 : 9);
      (void)ks;
      const std::vector<TInit> inits = {{"W", U8, wsh, Ints8(rng, nw, false)}, {"Wz", U8, {M}, Ints8(rng, M, false)}};
      std::vector<TAttr> attrs = {AI("group", group)};
      if (variant == 0) {
        attrs.push_back(AInts("pads", {1, 2, 1, 0}));
        attrs.push_back(AInts("dilations", {1, 2}));
      }
      if (variant == 1) {
        attrs.push_back(AInts("pads", {1, 1, 1, 1}));
        attrs.push_back(AInts("strides", {2, 2}));
      }
      if (variant == 2) {
        attrs.push_back(AInts("pads", {2, 2}));
        attrs.push_back(AInts("strides", {2}));
      }
      const std::vector<TNode> nodes = {{"DynamicQuantizeLinear", {"X"}, {"Xq", "Xs", "Xz"}},
                                        {"ConvInteger", {"Xq", "W", "Xz", "Wz"}, {"P"}, attrs},
                                        {"Cast", {"P"}, {"Y"}, {AI("to", 1)}}};
      int64_t n = 1;
      for (int64_t d : xs) n *= d;
      cases.push_back(FeedsCase("ConvInteger variant " + std::to_string(variant),
                                TypedGraph(xs, inits, nodes, {"Y", "P"}),
                                {{"X", Input(xs, Values(rng, n, 0, -2.0f, 2.0f))}}));
    }
    // QLinearMatMul and QLinearConv between QuantizeLinear and DequantizeLinear.
    {
      const Shape xs{5, 33};
      const std::vector<TInit> inits = {
          {"as", F, {}, {0.02}}, {"az", U8, {}, {100}}, {"B", I8, {33, 21}, Ints8(rng, 33 * 21, true)},
          {"bs", F, {}, {0.01}}, {"bz", I8, {}, {2}},   {"ys", F, {}, {0.05}},
          {"yz", U8, {}, {120}}};
      const std::vector<TNode> nodes = {{"QuantizeLinear", {"X", "as", "az"}, {"Xq"}},
                                        {"QLinearMatMul", {"Xq", "as", "az", "B", "bs", "bz", "ys", "yz"}, {"Yq"}},
                                        {"DequantizeLinear", {"Yq", "ys", "yz"}, {"Y"}}};
      cases.push_back(FeedsCase("QLinearMatMul", TypedGraph(xs, inits, nodes, {"Y", "Yq"}),
                                {{"X", Input(xs, Values(rng, 5 * 33, 1, -2.0f, 2.0f))}}));
      const Shape cs{1, 3, 10, 9};
      const std::vector<TInit> cinits = {
          {"as", F, {}, {0.02}}, {"az", U8, {}, {100}}, {"W", U8, {4, 3, 3, 3}, Ints8(rng, 108, false)},
          {"ws", F, {}, {0.01}}, {"wz", U8, {}, {128}}, {"ys", F, {}, {0.05}},
          {"yz", U8, {}, {120}}};
      const std::vector<TNode> cnodes = {
          {"QuantizeLinear", {"X", "as", "az"}, {"Xq"}},
          {"QLinearConv", {"Xq", "as", "az", "W", "ws", "wz", "ys", "yz"}, {"Yq"}, {AInts("pads", {1, 1, 1, 1})}},
          {"DequantizeLinear", {"Yq", "ys", "yz"}, {"Y"}}};
      cases.push_back(FeedsCase("QLinearConv", TypedGraph(cs, cinits, cnodes, {"Y", "Yq"}),
                                {{"X", Input(cs, Values(rng, 270, 0, -2.0f, 2.0f))}}));
    }
  }
  {
    // ONNX Runtime's DynamicQuantizeMatMul (A fed, specials in it) and MatMulIntegerToFloat
    // (after QuantizeLinear): per-column and scalar scales, zero points, bias.
    SplitMix64 rng(4409);
    const auto F = onnx::TensorProto::FLOAT, U8 = onnx::TensorProto::UINT8, I8 = onnx::TensorProto::INT8;
    const Shape xs{3, 7, 40};
    for (bool per_col : {false, true})
      for (int kind : {0, 1}) {
        const Shape bs = per_col ? Shape{24} : Shape{};
        const std::vector<TInit> inits = {{"B", I8, {40, 24}, Ints8(rng, 40 * 24, true)},
                                          {"bs", F, bs, Floats(rng, per_col ? 24 : 1, 0.001f, 0.05f)},
                                          {"bz", I8, bs, std::vector<double>(per_col ? 24 : 1, 3.0)},
                                          {"bias", F, {24}, Floats(rng, 24, -1.0f, 1.0f)},
                                          {"as", F, {}, {0.03}},
                                          {"az", U8, {}, {110}}};
        const std::vector<TNode> nodes = {
            {"com.microsoft.DynamicQuantizeMatMul", {"X", "B", "bs", "bz", per_col ? "bias" : ""}, {"Y"}},
            {"QuantizeLinear", {"X", "as", "az"}, {"Xq"}},
            {"com.microsoft.MatMulIntegerToFloat", {"Xq", "B", "as", "bs", "az", "bz", per_col ? "" : "bias"}, {"Y2"}}};
        cases.push_back(FeedsCase(
            std::string("DynamicQuantizeMatMul and MatMulIntegerToFloat") +
                (per_col ? ", per-column scales" : ", scalar scales") + ", kind " + std::to_string(kind),
            TypedGraph(xs, inits, nodes, {"Y", "Y2"}), {{"X", Input(xs, Values(rng, Count(xs), kind, -2.0f, 2.0f))}}));
      }
  }
  return cases;
}

const bool kQuantRegistered =
    RegisterFamily({"quant",
                    {"ConvInteger", "QLinearConv", "MatMulInteger", "QLinearMatMul", "QuantizeLinear",
                     "DequantizeLinear", "DynamicQuantizeLinear", "com.microsoft.MatMulIntegerToFloat",
                     "com.microsoft.DynamicQuantizeMatMul", "onemodel.DynamicQuantMatMul"},
                    &QuantCases});

}  // namespace

TEST_CASE("ops/quant: every case at every algorithm equals the oracle", "[ops][exact_paths][int8]") {
  RunFamily("quant");
}

}  // namespace test
}  // namespace onemodel::impl
