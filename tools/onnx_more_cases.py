#!/usr/bin/python3
"""The other node cases of onnx's main branch beyond ONNX 1.22, as node-case folders:
onnx_more_cases.py DIR (tools/contrib_cases.sh runs it into build/contrib-cases).

Beside the SwiGLU and Celu cases (tools/onnx_main_cases.py) and the Attention ones
(tools/onnx_attention_cases.py), the backend's node-case generators at onnx/onnx@f754691
name ten cases that ONNX 1.22 does not have: reverse and bidirectional RNN, GRU and LSTM,
OneHot with out-of-range indices, ReduceMax of an empty boolean set and ScatterND max / min
with element indices. (Every name they build at run time from a prefix, such as the Cast,
Concat, Flatten, Reshape, Unsqueeze and SequenceInsert loops, is in ONNX 1.22.) Each case
here has the generator's node, attributes, inputs (all fixed values) and opset (the
operator's newest: RNN, GRU and LSTM 22, OneHot 11, ReduceMax 20, ScatterND 18); the
expected outputs are this tool's own reading of Operators.md: the recurrences in binary64,
rounded once to float32. ONNX Runtime 1.30 agrees on nine (the recurrences within 5e-7,
the others bit for bit) and refuses test_reduce_max_empty_set_bool ("ReduceMax is not
defined for empty set with bool type").

Not written anywhere: the `_expanded` cases onnx's expect adds at run time for operators
with a function body (test_swiglu, test_swiglu_alpha, test_swiglu_float16,
test_celu_float16, test_celu_bfloat16 and the new Attention cases, each with `_expanded`):
their graphs are the main branch's function bodies (C++ in its operator definitions),
which Operators.md does not give.
"""
import os
import sys

import numpy as np
from onnx import helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from onnx_main_cases import expect  # noqa: E402


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


def recurrent(op, x, w, r, direction):
    """RNN, GRU or LSTM with the default activations, no bias, zero initial states and
    layout 0: x [T, batch, in], w [dirs, gates * H, in], r [dirs, gates * H, H].
    Returns Y [T, dirs, batch, H], Y_h and (LSTM) Y_c [dirs, batch, H]."""
    x, w, r = (a.astype(np.float64) for a in (x, w, r))
    steps, batch = x.shape[:2]
    dirs, hidden = w.shape[0], r.shape[-1]
    y = np.zeros((steps, dirs, batch, hidden))
    y_h = np.zeros((dirs, batch, hidden))
    y_c = np.zeros((dirs, batch, hidden))
    for d in range(dirs):
        # direction reverse, or the second half of bidirectional, reads X from its end
        back = direction == "reverse" or d == 1
        gw = np.split(w[d], w.shape[1] // hidden)  # W[zrh] (GRU), W[iofc] (LSTM), W[i] (RNN)
        gr = np.split(r[d], r.shape[1] // hidden)
        h = np.zeros((batch, hidden))
        c = np.zeros((batch, hidden))
        for t in (range(steps - 1, -1, -1) if back else range(steps)):
            xt = x[t]
            if op == "RNN":
                h = np.tanh(xt @ gw[0].T + h @ gr[0].T)
            elif op == "GRU":
                z = sigmoid(xt @ gw[0].T + h @ gr[0].T)
                rt = sigmoid(xt @ gw[1].T + h @ gr[1].T)
                cand = np.tanh(xt @ gw[2].T + (rt * h) @ gr[2].T)  # linear_before_reset 0
                h = (1 - z) * cand + z * h
            else:
                i, o, f, g = (xt @ a.T + h @ b.T for a, b in zip(gw, gr))
                c = sigmoid(f) * c + sigmoid(i) * np.tanh(g)
                h = sigmoid(o) * np.tanh(c)
            y[t, d] = h
        y_h[d], y_c[d] = h, c
    f32 = lambda a: a.astype(np.float32)  # noqa: E731
    return f32(y), f32(y_h), f32(y_c)


def one_hot(indices, depth, values, axis):
    """off_value everywhere, on_value where the index (negative: from the end) is in range."""
    out = np.full(indices.shape + (depth,), values[0], values.dtype)
    for pos in np.ndindex(indices.shape):
        k = int(indices[pos])
        if -depth <= k < depth:
            out[pos + (k % depth,)] = values[1]
    return np.moveaxis(out, -1, axis)


def scatter_nd(data, indices, updates, reduce):
    out = data.copy()
    for pos in np.ndindex(indices.shape[:-1]):
        at = tuple(indices[pos])
        out[at] = reduce(out[at], updates[pos])
    return out


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    root = sys.argv[1]
    os.makedirs(root, exist_ok=True)
    names = []

    def add(name, node, inputs, outputs, opset):
        expect(root, name, node, inputs, outputs, opset=opset)
        names.append(name)

    x = np.array([[[1.0, 2.0]], [[3.0, 4.0]], [[5.0, 6.0]]], np.float32)  # T 3, batch 1, input 2
    # (generator's name, operator, gates, hidden size, the node's outputs)
    for prefix, op, gates, hidden, outs in (("test_simple_rnn", "RNN", 1, 4, ["", "Y_h"]),
                                            ("test_gru", "GRU", 3, 5, ["Y", "Y_h"]),
                                            ("test_lstm", "LSTM", 4, 3, ["", "Y_h", "Y_c"])):
        for direction in ("reverse", "bidirectional"):
            # reverse: every weight 0.1; bidirectional: 0.5 forward, 2.0 backward
            scale = np.array([[[0.1]]] if direction == "reverse" else [[[0.5]], [[2.0]]], np.float32)
            w = scale * np.ones((1, gates * hidden, 2), np.float32)
            r = scale * np.ones((1, gates * hidden, hidden), np.float32)
            node = helper.make_node(op, ["X", "W", "R"], outs, hidden_size=hidden, direction=direction)
            y, y_h, y_c = recurrent(op, x, w, r, direction)
            got = {"Y": y, "Y_h": y_h, "Y_c": y_c}
            add(f"{prefix}_{direction}", node, [x, w, r], [got[n] for n in outs if n], 22)

    indices = np.array([5, -6, -1], np.int64)  # depth 5: 5 and -6 are out of range
    values = np.array([1, 3], np.float32)  # off, on
    add("test_onehot_out_of_range_indices",
        helper.make_node("OneHot", ["indices", "depth", "values"], ["y"], axis=1),
        [indices, np.array(5, np.float32), values], [one_hot(indices, 5, values, 1)], 11)

    # The maximum over no values is the type's least: false.
    add("test_reduce_max_empty_set_bool",
        helper.make_node("ReduceMax", ["data", "axes"], ["reduced"], keepdims=1),
        [np.zeros((2, 0, 4), np.bool_), np.array([1], np.int64)], [np.zeros((2, 1, 4), np.bool_)], 20)

    data = np.array([[1, 2], [3, 4]], np.float32)
    indices = np.array([[0, 0], [1, 1]], np.int64)  # each index names one element
    updates = np.array([5, 1], np.float32)
    for reduction, reduce in (("max", np.maximum), ("min", np.minimum)):
        add(f"test_scatternd_{reduction}_with_element_indices",
            helper.make_node("ScatterND", ["data", "indices", "updates"], ["y"], reduction=reduction),
            [data, indices, updates], [scatter_nd(data, indices, updates, reduce)], 18)
    print(f"[onnx_more_cases] {len(names)} cases of onnx's main branch in {root}")


if __name__ == "__main__":
    main()
