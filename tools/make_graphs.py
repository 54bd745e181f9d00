#!/usr/bin/python3
"""Writes the five small committed test graphs of the golden rows into testdata/graphs/.

    /usr/bin/python3 tools/make_graphs.py [OUT_DIR]

Built with onnx.helper (python3-onnx 1.12) and seeded numpy weights, so the files are
the same bytes on every run. Each graph GRAPH.onnx has its inputs in GRAPH.inputs
(`NAME=FILE.npy`, the .npy beside it), read by `onemodel golden --models testdata/graphs`;
their output hashes are recorded in testdata/graphs/golden-exact.txt.

- conv_net: Conv+BatchNormalization+Relu, strided and dilated Conv, depthwise Conv with
  HardSwish, MaxPool, AveragePool, GlobalAveragePool, Gemm, Softmax.
- qdq_conv_net: QuantizeLinear/DequantizeLinear around two Convs with per-channel int8
  weights and int32 biases (ONNX Runtime's QDQ format), an Add of the two branches, and
  a QLinearConv and ConvInteger on the quantised input.
- transformer_block: pre-LN block with LayerNormalization, the Attention operator
  (opset 23, 4 heads, causal), Gelu (opset 20), residual Adds, and a ReduceSum of each
  token's features (a contiguous canonical-order sum: the dispatched kernel).
- lstm_if: a bidirectional LSTM whose final state picks an If branch (Tanh or Sigmoid of
  a MatMul), the branch chosen by the data.
- special_values: the transcendental and rounding operators fed +-0, +-inf, NaN,
  subnormals, the largest and smallest normals, and values near each function's edges.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 23
IR = 10
FLOAT8E4M3FN = 17  # TensorProto.FLOAT8E4M3FN (ONNX 1.14+; python3-onnx 1.12 predates it)


def init(name, a):
    return numpy_helper.from_array(np.ascontiguousarray(a), name)


def model(nodes, inputs, outputs, inits, name):
    g = helper.make_graph(nodes, name, inputs, outputs, inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="onemodel-make_graphs")
    m.ir_version = IR
    return m


def vi(name, dtype, shape):
    return helper.make_tensor_value_info(name, dtype, shape)


def conv_net(rng):
    f = lambda *s: (rng.standard_normal(s) * 0.3).astype(np.float32)
    inits = [
        init("w1", f(8, 3, 3, 3)), init("b1", f(8)),
        init("bn_scale", (1 + 0.1 * rng.standard_normal(8)).astype(np.float32)), init("bn_bias", f(8)),
        init("bn_mean", f(8)), init("bn_var", (0.5 + rng.random(8)).astype(np.float32)),
        init("w2", f(16, 8, 3, 3)), init("b2", f(16)),
        init("w3", f(16, 1, 3, 3)), init("b3", f(16)),
        init("w4", f(16, 16, 1, 1)),
        init("wf", f(10, 16)), init("bf", f(10)),
    ]
    n = helper.make_node
    nodes = [
        n("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
        n("BatchNormalization", ["c1", "bn_scale", "bn_bias", "bn_mean", "bn_var"], ["bn1"], epsilon=1e-5),
        n("Relu", ["bn1"], ["r1"]),
        n("MaxPool", ["r1"], ["p1"], kernel_shape=[2, 2], strides=[2, 2]),
        n("Conv", ["p1", "w2", "b2"], ["c2"], pads=[2, 2, 2, 2], dilations=[2, 2], strides=[2, 2]),
        n("Conv", ["c2", "w3", "b3"], ["c3"], pads=[1, 1, 1, 1], group=16),
        n("HardSwish", ["c3"], ["h3"]),
        n("AveragePool", ["h3"], ["a3"], kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[1, 1], count_include_pad=0),
        n("Conv", ["a3", "w4"], ["c4"]),
        n("GlobalAveragePool", ["c4"], ["g"]),
        n("Flatten", ["g"], ["fl"]),
        n("Gemm", ["fl", "wf", "bf"], ["logits"], transB=1),
        n("Softmax", ["logits"], ["probs"], axis=-1),
    ]
    return model(nodes, [vi("x", TensorProto.FLOAT, [1, 3, 32, 32])],
                 [vi("probs", TensorProto.FLOAT, [1, 10]), vi("c4", TensorProto.FLOAT, None)], inits, "conv_net"), \
        {"x": (rng.standard_normal((1, 3, 32, 32))).astype(np.float32)}


def qdq_conv_net(rng):
    def qw(w):
        s = (np.max(np.abs(w), axis=(1, 2, 3)) / 127).astype(np.float32)
        return np.clip(np.round(w / s[:, None, None, None]), -127, 127).astype(np.int8), s
    w1 = (rng.standard_normal((8, 3, 3, 3)) * 0.3).astype(np.float32)
    w2 = (rng.standard_normal((8, 3, 1, 1)) * 0.3).astype(np.float32)
    q1, s1 = qw(w1)
    q2, s2 = qw(w2)
    xs = np.float32(4.0 / 255)
    inits = [
        init("x_scale", np.array(xs, np.float32)), init("x_zp", np.array(128, np.uint8)),
        init("w1_q", q1), init("w1_s", s1), init("w1_zp", np.zeros(8, np.int8)),
        init("b1_q", rng.integers(-500, 500, 8).astype(np.int32)), init("b1_s", (xs * s1).astype(np.float32)),
        init("b1_zp", np.zeros(8, np.int32)),
        init("w2_q", q2), init("w2_s", s2), init("w2_zp", np.zeros(8, np.int8)),
        init("y_scale", np.array(0.05, np.float32)), init("y_zp", np.array(100, np.uint8)),
        init("w1_zp_u8", np.array(0, np.int8)), init("w1_s_t", np.array(float(s1.max()), np.float32)),
        init("w1_q_t", np.clip(np.round(w1 / s1.max()), -127, 127).astype(np.int8)),
        init("xi_zp", np.array(128, np.uint8)),
    ]
    n = helper.make_node
    nodes = [
        n("QuantizeLinear", ["x", "x_scale", "x_zp"], ["xq"]),
        n("DequantizeLinear", ["xq", "x_scale", "x_zp"], ["xd"]),
        n("DequantizeLinear", ["w1_q", "w1_s", "w1_zp"], ["w1d"], axis=0),
        n("DequantizeLinear", ["b1_q", "b1_s", "b1_zp"], ["b1d"], axis=0),
        n("DequantizeLinear", ["w2_q", "w2_s", "w2_zp"], ["w2d"], axis=0),
        n("Conv", ["xd", "w1d", "b1d"], ["c1"], pads=[1, 1, 1, 1]),
        n("Relu", ["c1"], ["r1"]),
        n("Conv", ["xd", "w2d"], ["c2"]),
        n("Add", ["r1", "c2"], ["s"]),
        n("QuantizeLinear", ["s", "y_scale", "y_zp"], ["sq"]),
        n("DequantizeLinear", ["sq", "y_scale", "y_zp"], ["y"]),
        n("QLinearConv", ["xq", "x_scale", "x_zp", "w1_q_t", "w1_s_t", "w1_zp_u8", "y_scale", "y_zp"], ["qlc"], pads=[1, 1, 1, 1]),
        n("ConvInteger", ["xq", "w1_q_t", "xi_zp", "w1_zp_u8"], ["ci"], pads=[1, 1, 1, 1]),
    ]
    return model(nodes, [vi("x", TensorProto.FLOAT, [1, 3, 16, 16])],
                 [vi("y", TensorProto.FLOAT, None), vi("qlc", TensorProto.UINT8, None), vi("ci", TensorProto.INT32, None)],
                 inits, "qdq_conv_net"), {"x": (rng.standard_normal((1, 3, 16, 16)) * 0.2).astype(np.float32)}


def transformer_block(rng):
    d, h, ff, s = 64, 4, 256, 16
    f = lambda *sh: (rng.standard_normal(sh) * (1 / np.sqrt(sh[0]))).astype(np.float32)
    inits = [
        init("ln1_g", (1 + 0.1 * rng.standard_normal(d)).astype(np.float32)), init("ln1_b", (0.1 * rng.standard_normal(d)).astype(np.float32)),
        init("wq", f(d, d)), init("wk", f(d, d)), init("wv", f(d, d)), init("wo", f(d, d)),
        init("ln2_g", (1 + 0.1 * rng.standard_normal(d)).astype(np.float32)), init("ln2_b", (0.1 * rng.standard_normal(d)).astype(np.float32)),
        init("w_up", f(d, ff)), init("b_up", (0.1 * rng.standard_normal(ff)).astype(np.float32)),
        init("w_down", f(ff, d)), init("b_down", (0.1 * rng.standard_normal(d)).astype(np.float32)),
        init("last_axis", np.array([-1], np.int64)),
    ]
    n = helper.make_node
    nodes = [
        n("LayerNormalization", ["x", "ln1_g", "ln1_b"], ["a"], axis=-1, epsilon=1e-5),
        n("MatMul", ["a", "wq"], ["q"]), n("MatMul", ["a", "wk"], ["k"]), n("MatMul", ["a", "wv"], ["v"]),
        n("Attention", ["q", "k", "v"], ["att"], q_num_heads=h, kv_num_heads=h, is_causal=1),
        n("MatMul", ["att", "wo"], ["o"]),
        n("Add", ["x", "o"], ["x1"]),
        n("LayerNormalization", ["x1", "ln2_g", "ln2_b"], ["m"], axis=-1, epsilon=1e-5),
        n("MatMul", ["m", "w_up"], ["u0"]), n("Add", ["u0", "b_up"], ["u"]),
        n("Gelu", ["u"], ["g"]),
        n("MatMul", ["g", "w_down"], ["dn0"]), n("Add", ["dn0", "b_down"], ["dn"]),
        n("Add", ["x1", "dn"], ["y"]),
        n("ReduceSum", ["y", "last_axis"], ["token_sums"], keepdims=0),
    ]
    return model(nodes, [vi("x", TensorProto.FLOAT, [1, s, d])],
                 [vi("y", TensorProto.FLOAT, [1, s, d]), vi("token_sums", TensorProto.FLOAT, [1, s])], inits,
                 "transformer_block"), {"x": rng.standard_normal((1, s, d)).astype(np.float32)}


def lstm_if(rng):
    T, B, I, H = 6, 1, 8, 16
    f = lambda *sh: (rng.standard_normal(sh) * 0.3).astype(np.float32)
    inits = [init("W", f(2, 4 * H, I)), init("R", f(2, 4 * H, H)), init("B", f(2, 8 * H)),
             init("wm", f(H, H)), init("zero", np.array(0.0, np.float32))]
    n = helper.make_node
    then_g = helper.make_graph([n("MatMul", ["h_last", "wm"], ["t0"]), n("Tanh", ["t0"], ["t_out"])], "then", [],
                               [vi("t_out", TensorProto.FLOAT, None)])
    else_g = helper.make_graph([n("MatMul", ["h_last", "wm"], ["e0"]), n("Sigmoid", ["e0"], ["e_out"])], "else", [],
                               [vi("e_out", TensorProto.FLOAT, None)])
    nodes = [
        n("LSTM", ["x", "W", "R", "B"], ["Y", "Y_h", "Y_c"], hidden_size=H, direction="bidirectional"),
        n("ReduceMean", ["Y_h"], ["mean"], keepdims=0),
        n("Greater", ["mean", "zero"], ["cond"]),
        n("Flatten", ["Y_h"], ["h_flat"], axis=2),
        n("Gather", ["h_flat", "idx0"], ["h_last"], axis=0),
        n("If", ["cond"], ["z"], then_branch=then_g, else_branch=else_g),
    ]
    inits.append(init("idx0", np.array(1, np.int64)))
    return model(nodes, [vi("x", TensorProto.FLOAT, [T, B, I])],
                 [vi("Y", TensorProto.FLOAT, None), vi("Y_c", TensorProto.FLOAT, None), vi("z", TensorProto.FLOAT, None)],
                 inits, "lstm_if"), {"x": rng.standard_normal((T, B, I)).astype(np.float32)}


def special_values(rng):
    fi = np.finfo(np.float32)
    edge = [0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0,
            float(fi.tiny), -float(fi.tiny), float(fi.tiny) / 8, -float(fi.tiny) / 8, 1e-45, -1e-45,
            float(fi.max), -float(fi.max), 88.72, 88.73, -87.33, -103.98, -104.0, 9.0, -9.0, 15.0, -15.0,
            1e-8, -1e-8, 3.1415927, -3.1415927, 1.5707964, 1e4, -1e4, 1e30, 0.99999994, 1.0000001, 2.5, 3.5, -2.5]
    x = np.array(edge + list(rng.uniform(-20, 20, 86)), dtype=np.float32).reshape(4, 32)
    n = helper.make_node
    unary = ["Exp", "Log", "Tanh", "Sigmoid", "Erf", "Sin", "Cos", "Tan", "Atan", "Sinh", "Cosh", "Asinh",
             "Sqrt", "Reciprocal", "Softplus", "Softsign", "Round", "Floor", "Ceil", "Abs", "Neg", "Sign",
             "Elu", "Selu", "Mish", "HardSigmoid", "Relu", "IsNaN"]
    nodes, outs = [], []
    for op in unary:
        nodes.append(n(op, ["x"], [op.lower()]))
        outs.append(vi(op.lower(), TensorProto.BOOL if op == "IsNaN" else TensorProto.FLOAT, [4, 32]))
    clipped = n("Clip", ["x", "lo", "hi"], ["clipped"])
    nodes += [clipped,
              n("Asin", ["clipped"], ["asin"]), n("Acos", ["clipped"], ["acos"]), n("Atanh", ["clipped"], ["atanh"]),
              n("Gelu", ["x"], ["gelu_tanh"], approximate="tanh"), n("Gelu", ["x"], ["gelu"]),
              n("Pow", ["x", "p"], ["pow"]), n("Pow", ["p2", "x"], ["pow2x"]),
              n("Div", ["x", "x_rev"], ["div"]), n("Mod", ["x", "x_rev"], ["fmod"], fmod=1),
              n("Max", ["x", "x_rev"], ["max"]), n("Min", ["x", "x_rev"], ["min"]),
              n("Cast", ["x"], ["to_f16"], to=TensorProto.FLOAT16), n("Cast", ["x"], ["to_i32"], to=TensorProto.INT32),
              n("Cast", ["x"], ["to_f8"], to=FLOAT8E4M3FN, saturate=1),
              n("Softmax", ["x"], ["softmax"], axis=-1), n("LogSoftmax", ["x"], ["logsoftmax"], axis=-1)]
    outs += [vi(o, TensorProto.FLOAT, [4, 32]) for o in ("asin", "acos", "atanh", "gelu_tanh", "gelu", "pow", "pow2x", "div", "fmod", "max", "min")]
    outs += [vi("to_f16", TensorProto.FLOAT16, [4, 32]), vi("to_i32", TensorProto.INT32, [4, 32]),
             vi("to_f8", FLOAT8E4M3FN, [4, 32]), vi("softmax", TensorProto.FLOAT, [4, 32]),
             vi("logsoftmax", TensorProto.FLOAT, [4, 32])]
    inits = [init("lo", np.array(-1.0, np.float32)), init("hi", np.array(1.0, np.float32)),
             init("p", np.array(1.5, np.float32)), init("p2", np.array(2.0, np.float32)),
             init("x_rev", x[::-1, ::-1].copy())]
    return model(nodes, [vi("x", TensorProto.FLOAT, [4, 32])], outs, inits, "special_values"), {"x": x}


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "testdata", "graphs")
    os.makedirs(out, exist_ok=True)
    for i, make in enumerate([conv_net, qdq_conv_net, transformer_block, lstm_if, special_values]):
        rng = np.random.default_rng(1000 + i)
        m, inputs = make(rng)
        name = make.__name__
        onnx.save(m, os.path.join(out, name + ".onnx"))
        lines = []
        for k, v in inputs.items():
            f = f"{name}.{k}.npy"
            np.save(os.path.join(out, f), v)
            lines.append(f"{k}={f}\n")
        with open(os.path.join(out, name + ".inputs"), "w") as fh:
            fh.writelines(lines)


if __name__ == "__main__":
    main()
