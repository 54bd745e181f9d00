// Conv: every algorithm of ops/conv/conv.h (reference ref::ConvF32; kernels ConvDirectF32, DepthwiseConvF32,
// ConvPlaneF32, MulAddStridedF32 and the GEMM) on 1-D, 2-D and 3-D geometries: padding, strides, dilation,
// groups, signed zero results at padded positions, non-finite weights, fused activations.
#include "tests/catch.h"

#include <string>
#include <vector>

#include "tests/ops/op_test.h"
#include "tests/test_util.h"

namespace onemodel::impl {
namespace test {
namespace {

std::vector<OpCase> ConvCases() {
  std::vector<OpCase> cases;
  {
    SplitMix64 rng(101);
    struct G {
      int64_t C, H, W, M, K, S, P, D, group;
    };
    const G geos[] = {
        {3, 17, 19, 8, 3, 1, 1, 1, 1},
        {6, 12, 11, 16, 3, 2, 1, 1, 2},
        {4, 15, 15, 9, 3, 1, 2, 2, 1},
        {5, 9, 30, 12, 1, 1, 0, 1, 1},
        {8, 10, 10, 5, 5, 2, 2, 1, 1},
        {16, 7, 7, 33, 3, 1, 1, 1, 1},
        {4, 8, 8, 8, 1, 2, 0, 1, 1},
        {8, 6, 6, 16, 3, 1, 1, 1, 4},
        // Many output channels at few positions (Y^T = col^T W^T with W^T packed): 3x3
        // padded at 7x7, 1x1 at 16x16 (256 positions: column blocks over 2 threads) and
        // 1x1 stride 2; 70 and 96 channels leave partial tiles of columns.
        {16, 7, 7, 70, 3, 1, 1, 1, 1},
        {24, 16, 16, 64, 1, 1, 0, 1, 1},
        {12, 13, 13, 96, 1, 2, 0, 1, 1},
        // Few input channels (a first layer; the direct kernel): 3x3 and 7x7 stride 2.
        {3, 20, 33, 16, 3, 2, 1, 1, 1},
        {3, 23, 26, 8, 7, 2, 3, 1, 1},
        // The transposed product reading its input in place (GemmPackedIndirectF32, 64+
        // channels, more than one tap): stride 2 with dilation 2; 1332 positions (two
        // blocks of positions, 66 channels: a partial tile of columns); a first layer of
        // 64 channels, 7x7 stride 2.
        {8, 9, 11, 64, 3, 2, 1, 2, 1},
        {4, 36, 37, 66, 3, 1, 1, 1, 1},
        {3, 21, 24, 64, 7, 2, 3, 1, 1},
    };
    for (const G& g : geos) {
      const int64_t Cg = g.C / g.group;
      const Shape xs{2, g.C, g.H, g.W};
      for (int kind : {0, 1, 2, 3}) {
        // Kinds 2 and 3 (-0.0 inputs) with positive weights: zero results whose sign only
        // the reference fold (padding taps skipped) gets right.
        const auto w = kind >= 2 ? Positive(rng, g.M * Cg * g.K * g.K) : Values(rng, g.M * Cg * g.K * g.K, 0);
        const auto x = Values(rng, 2 * g.C * g.H * g.W, kind);
        for (bool bias : {false, true}) {
          std::vector<Init> inits{{"W", {g.M, Cg, g.K, g.K}, w}};
          if (bias) inits.push_back({"B", {g.M}, Values(rng, g.M, 0)});
          const std::string m =
              OneOp("Conv", xs, inits,
                    {Ints("kernel_shape", {g.K, g.K}), Ints("strides", {g.S, g.S}), Ints("pads", {g.P, g.P, g.P, g.P}),
                     Ints("dilations", {g.D, g.D}), Int("group", g.group)});
          cases.push_back(XCase("Conv C" + std::to_string(g.C) + " M" + std::to_string(g.M) + " K" +
                                    std::to_string(g.K) + " S" + std::to_string(g.S) + " P" + std::to_string(g.P) +
                                    " D" + std::to_string(g.D) + " g" + std::to_string(g.group) + " kind " +
                                    std::to_string(kind) + (bias ? " bias" : ""),
                                m, xs, x));
        }
      }
    }
    // Non-finite weights (the GEMM path is not exact for them: 0 * inf at a padding tap).
    auto w = Values(rng, 8 * 3 * 9, 0);
    w[5] = U2F(0x7F800000u);
    const Shape xs{1, 3, 9, 9};
    cases.push_back(XCase("Conv with an infinite weight",
                          OneOp("Conv", xs, {{"W", {8, 3, 3, 3}, w}}, {Ints("pads", {1, 1, 1, 1})}), xs,
                          Values(rng, 243, 1)));
    // The same with more input channels (past the direct kernel: the GEMM path must refuse).
    auto w8 = Values(rng, 8 * 8 * 9, 0);
    w8[77] = U2F(0xFF800000u);
    const Shape xs8{1, 8, 9, 9};
    cases.push_back(XCase("Conv with an infinite weight, 8 channels",
                          OneOp("Conv", xs8, {{"W", {8, 8, 3, 3}, w8}}, {Ints("pads", {1, 1, 1, 1})}), xs8,
                          Values(rng, 648, 1)));
    // 1-D, depthwise (the plane path) and asymmetric padding.
    const Shape x1{2, 6, 40};
    cases.push_back(
        XCase("Conv 1-D",
              OneOp("Conv", x1, {{"W", {8, 6, 5}, Values(rng, 240, 0)}}, {Ints("pads", {2, 1}), Ints("strides", {2})}),
              x1, Values(rng, 480, 1)));
    for (int64_t s : {1, 2}) {
      for (int64_t k : {3, 5}) {
        const Shape xs2{2, 6, 23, 37};
        cases.push_back(
            XCase("Conv depthwise k" + std::to_string(k) + " s" + std::to_string(s),
                  OneOp("Conv", xs2, {{"W", {6, 1, k, k}, Values(rng, 6 * k * k, 0)}, {"B", {6}, Values(rng, 6, 0)}},
                        {Ints("pads", {k / 2, k / 2, k / 2, k / 2}), Ints("strides", {s, s}), Int("group", 6)}),
                  xs2, Values(rng, 2 * 6 * 23 * 37, 2)));
      }
    }
    // Tall planes (several row strips of the channel-lane kernel), 20 channels (a partial
    // lane block), dilation.
    const Shape xtall{1, 20, 90, 75};
    for (int64_t s : {1, 2})
      cases.push_back(XCase(
          "Conv depthwise tall s" + std::to_string(s),
          OneOp("Conv", xtall, {{"W", {20, 1, 3, 3}, Values(rng, 180, 0)}},
                {Ints("pads", {2, 2, 2, 2}), Ints("strides", {s, s}), Ints("dilations", {2, 2}), Int("group", 20)}),
          xtall, Values(rng, 20 * 90 * 75, s == 1 ? 2 : 1)));
    const Shape xd{1, 8, 13, 14};
    cases.push_back(XCase("Conv depthwise",
                          OneOp("Conv", xd, {{"W", {8, 1, 3, 3}, Values(rng, 72, 0)}},
                                {Ints("pads", {1, 1, 1, 1}), Ints("strides", {2, 2}), Int("group", 8)}),
                          xd, Values(rng, 8 * 13 * 14, 2)));
  }
  {
    SplitMix64 rng(203);
    const Shape se{1, 40, 1, 1};
    cases.push_back(
        XCase("Conv 1x1 on a 1x1 plane (matrix-vector)",
              OneOp("Conv", se, {{"W", {96, 40, 1, 1}, Values(rng, 96 * 40, 1)}, {"B", {96}, Values(rng, 96, 0)}}, {}),
              se, Values(rng, 40, 1)));
  }
  {
    SplitMix64 rng(606);
    // Conv -> Relu / HardSwish (fused at every ISA but ref) and, as a control, the same
    // with the Conv output also a graph output (not fused). Four convolutions: 3x3 with
    // padding from 4 channels (the direct kernel, the epilogue in its tiles) and from 8
    // (im2col and GEMM: the zero fix-up, then the epilogue), 1x1 (the epilogue in the GEMM
    // tiles) and depthwise (the epilogue in the channel-lane kernel). -0.0 inputs with positive
    // weights make zero results; a bias of -0.0 keeps their sign up to the activation.
    struct Cv {
      const char* name;
      Shape w;
      int64_t group;
      int64_t pad;
    };
    const Cv convs[] = {{"3x3", {8, 4, 3, 3}, 1, 1},
                        {"3x3 8 channels", {8, 8, 3, 3}, 1, 1},
                        {"1x1", {8, 4, 1, 1}, 1, 0},
                        {"3x3 64 outputs", {64, 8, 3, 3}, 1, 1},
                        {"depthwise", {4, 1, 3, 3}, 4, 1}};
    for (const Cv& cv : convs)
      for (const std::string act : {"Relu", "HardSwish"})
        for (bool also_output : {false, true})
          for (int kind : {0, 2, 3}) {
            const int64_t C = cv.w[1] * cv.group;
            const Shape xs{1, C, 11, 13};
            const int64_t nw = cv.w[0] * cv.w[1] * cv.w[2] * cv.w[3], M = cv.w[0];
            onnx::ModelProto m;
            REQUIRE(m.ParseFromString(OneOp("Conv", xs,
                                            {{"W", cv.w, kind >= 2 ? Positive(rng, nw) : Values(rng, nw, 0)},
                                             {"B", {M}, std::vector<float>(size_t(M), kind == 3 ? -0.0f : 0.25f)}},
                                            {Ints("pads", {cv.pad, cv.pad, cv.pad, cv.pad}), Int("group", cv.group)})));
            auto* g = m.mutable_graph();
            g->mutable_node(0)->set_output(0, "C");
            auto* relu = g->add_node();
            relu->set_op_type(act);
            relu->add_input("C");
            relu->add_output("Y");
            if (also_output) g->add_output()->set_name("C");
            // Y first: CheckAgainstOracle compares the first output.
            cases.push_back(XCase(std::string("Conv ") + cv.name + "+" + act +
                                      (also_output ? " (Conv output kept)" : "") + " kind " + std::to_string(kind),
                                  m.SerializeAsString(), xs, Values(rng, C * 11 * 13, kind)));
          }
  }
  {
    SplitMix64 rng(1301);
    auto count = [](const Shape& s) {
      int64_t n = 1;
      for (int64_t d : s) n *= d;
      return n;
    };
    struct C3 {
      Shape x, w;
      std::vector<Attr> attrs;
      const char* what;
    };
    const C3 convs[] = {
        {{2, 4, 6, 7, 8}, {8, 4, 3, 3, 3}, {Ints("pads", {1, 1, 1, 1, 1, 1})}, "3x3x3 pad 1"},
        {{1, 6, 7, 9, 10},
         {8, 3, 2, 3, 3},
         {Int("group", 2), Ints("strides", {2, 1, 2}), Ints("dilations", {1, 2, 1}), Ints("pads", {0, 2, 1, 1, 0, 1})},
         "grouped, strided, dilated, uneven pads"},
        {{1, 5, 4, 5, 6}, {7, 5, 1, 1, 1}, {}, "1x1x1"},
        {{1, 3, 5, 5, 5},
         {4, 3, 3, 3, 3},
         {Str("auto_pad", "SAME_UPPER"), Ints("strides", {2, 2, 2})},
         "SAME_UPPER stride 2"},
    };
    // Kinds 2 and 3 (runs of -0.0, all -0.0) give zero results whose sign the padding
    // taps' fix-up must get right; their bias is -0.0, which keeps that sign. With kind 3
    // the weights are positive: every term is -0.0, so the reference's sums are -0.0 and a
    // padding tap's +0.0 would make them +0.0.
    for (const C3& c : convs) {
      for (int kind : {0, 1, 2, 3}) {
        const auto w = kind == 3 ? Positive(rng, count(c.w)) : Values(rng, count(c.w), 0);
        const std::vector<Init> inits = {{"W", c.w, w}, {"B", {c.w[0]}, Values(rng, c.w[0], kind >= 2 ? 3 : 0)}};
        cases.push_back(XCase(std::string("Conv 3-D ") + c.what + " kind " + std::to_string(kind),
                              OneOp("Conv", c.x, inits, c.attrs), c.x, Values(rng, count(c.x), kind)));
      }
    }
  }
  {
    // Conv -> Add (-> Relu): the residual Add taken into the Conv (at every ISA but ref),
    // on every path that finishes results: the row-major GEMM in column blocks (1x1, 400
    // positions: blocks over the threads at 3), the transposed 1x1 product's tiles (64
    // channels at 7x7; 160 at 6x6: groups of channels over the threads), the in-place
    // transposed product (3x3 padded, 64 channels), im2col with the signed-zero fix-up,
    // depthwise, the direct kernel, a strided 1x1. Per
    // geometry: Add(conv, Z) then Relu; Add(Z, conv) alone, -0.0 bias and Z with runs of
    // -0.0; the Conv's own Relu first, all -0.0 input with positive weights (every result a
    // zero whose sign the Add keeps); Z made after the Conv by a second Conv (resnet's
    // downsampling branch, the fused node moves to the Add's place), specials in X and Z.
    // Controls: the Conv output also a graph output (not fused), and a Z that broadcasts
    // (the Add and Relu run as nodes).
    SplitMix64 rng(4409);
    struct R {
      const char* name;
      int64_t C, H, W, M, K, S, P, group;
    };
    const R geos[] = {
        {"1x1 400 positions", 16, 20, 20, 32, 1, 1, 0, 1}, {"1x1 64 channels 7x7", 16, 7, 7, 64, 1, 1, 0, 1},
        {"3x3 64 channels", 8, 9, 9, 64, 3, 1, 1, 1},      {"3x3 16 channels", 8, 12, 12, 16, 3, 1, 1, 1},
        {"depthwise", 16, 10, 11, 16, 3, 1, 1, 16},        {"direct", 3, 16, 16, 8, 3, 1, 1, 1},
        {"1x1 stride 2", 8, 14, 14, 16, 1, 2, 0, 1},       {"1x1 160 channels 6x6", 16, 6, 6, 160, 1, 1, 0, 1}};
    auto doubles = [](const std::vector<float>& v) { return std::vector<double>(v.begin(), v.end()); };
    for (const R& g : geos) {
      const int64_t Cg = g.C / g.group, OH = (g.H + 2 * g.P - g.K) / g.S + 1, OW = (g.W + 2 * g.P - g.K) / g.S + 1;
      const Shape xs{2, g.C, g.H, g.W}, ys{2, g.M, OH, OW};
      const int64_t nw = g.M * Cg * g.K * g.K;
      const std::vector<TAttr> attrs = {AInts("kernel_shape", {g.K, g.K}), AInts("strides", {g.S, g.S}),
                                        AInts("pads", {g.P, g.P, g.P, g.P}), AI("group", g.group)};
      for (int variant = 0; variant < 6; ++variant) {
        const int kind = variant == 2 ? 3 : variant == 1 ? 2 : variant == 3 ? 1 : 0;
        std::vector<TInit> inits = {
            {"W", F, {g.M, Cg, g.K, g.K}, doubles(kind == 3 ? Positive(rng, nw) : Values(rng, nw, 0))},
            {"B",
             F,
             {g.M},
             variant == 1 || variant == 2 ? std::vector<double>(size_t(g.M), -0.0) : doubles(Values(rng, g.M, 0))},
            {"Z", F, variant == 5 ? Shape{g.M, 1, 1} : ys,
             doubles(Values(rng, variant == 5 ? g.M : Count(ys), kind == 3 ? 3 : kind))}};
        std::vector<TNode> nodes = {{"Conv", {"X", "W", "B"}, {"c"}, attrs}};
        std::string conv_out = "c", z = "Z";
        if (variant == 2) {
          nodes.push_back({"Relu", {"c"}, {"cr"}});
          conv_out = "cr";
        }
        if (variant == 3) {  // Z from a second Conv of X, made after the first
          inits.push_back({"W2", F, {g.M, Cg, g.K, g.K}, doubles(Values(rng, nw, 1))});
          nodes.push_back({"Conv", {"X", "W2"}, {"d"}, attrs});
          z = "d";
        }
        nodes.push_back({"Add",
                         variant == 1 ? std::vector<std::string>{z, conv_out} : std::vector<std::string>{conv_out, z},
                         {"s"}});
        if (variant != 1) nodes.push_back({"Relu", {"s"}, {"Y"}});
        const std::string out = variant == 1 ? "s" : "Y";
        std::vector<std::string> outs = {out};
        if (variant == 4) outs.push_back("c");  // the control: not fused
        static const char* const kWhat[] = {"Add(conv, Z)+Relu",         "Add(Z, conv), -0.0 bias",
                                            "Relu, Add, Relu, all -0.0", "Z from a later Conv, specials",
                                            "Conv output kept",          "Z broadcast"};
        cases.push_back(XCase(std::string("Conv ") + g.name + " residual " + kWhat[variant],
                              TypedGraph(xs, inits, nodes, outs, {"Z"}), xs,
                              Values(rng, Count(xs),
                                     kind == 3      ? 3
                                     : kind == 2    ? 2
                                     : variant == 3 ? 1
                                                    : 0)));
      }
    }
  }
  {
    // ONNX Runtime's FusedConv: every activation, with and without Z, specials in X.
    SplitMix64 rng(2207);
    const auto F = onnx::TensorProto::FLOAT;
    const Shape xs{2, 3, 9, 8};
    struct Act {
      const char* name;
      std::vector<float> params;
    };
    const Act acts[] = {{"Relu", {}},
                        {"Tanh", {}},
                        {"Sigmoid", {}},
                        {"LeakyRelu", {0.2f}},
                        {"Clip", {-0.5f, 0.75f}},
                        {"HardSigmoid", {0.3f, 0.4f}},
                        {"", {}}};
    for (const Act& a : acts)
      for (bool z : {false, true}) {
        std::vector<TInit> inits = {{"W", F, {4, 3, 3, 3}, Floats(rng, 108, -0.5f, 0.5f)},
                                    {"B", F, {4}, Floats(rng, 4, -1.0f, 1.0f)}};
        std::vector<std::string> in = {"X", "W", "B"};
        if (z) {
          inits.push_back({"Z", F, {2, 4, 9, 8}, Floats(rng, 576, -1.0f, 1.0f)});
          in.push_back("Z");
        }
        std::vector<TAttr> attrs = {AInts("pads", {1, 1, 1, 1})};
        if (*a.name) attrs.push_back(AS("activation", a.name));
        if (!a.params.empty()) attrs.push_back(AFs("activation_params", a.params));
        cases.push_back(XCase(std::string("FusedConv ") + (*a.name ? a.name : "no activation") + (z ? " with Z" : ""),
                              TypedGraph(xs, inits, {{"com.microsoft.FusedConv", in, {"Y"}, attrs}}, {"Y"}), xs,
                              Values(rng, Count(xs), 1, -2.0f, 2.0f)));
      }
  }
  return cases;
}

const bool kConvRegistered = RegisterFamily({"conv", {"Conv", "com.microsoft.FusedConv"}, &ConvCases});

}  // namespace

TEST_CASE("ops/conv: every case at every algorithm equals the oracle", "[ops][exact_paths]") { RunFamily("conv"); }

}  // namespace test
}  // namespace onemodel::impl
