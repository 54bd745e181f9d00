#!/usr/bin/python3
"""The project's own int8 quantiser (python3-onnx 1.12 + numpy), in two styles.

    /usr/bin/python3 tools/quantize.py qdq IN.onnx OUT.onnx --onemodel BIN --calib NAME=A.npy,B.npy ...
    /usr/bin/python3 tools/quantize.py dynamic IN.onnx OUT.onnx

qdq (static, ONNX Runtime's "QDQ format"): every Conv, Gemm and MatMul gets
  - its activation input through QuantizeLinear -> DequantizeLinear, uint8 asymmetric
    per tensor, with the range (min and max, widened to include 0) observed over the
    calibration inputs; the observation runs the model through OneModel's exact mode
    (`onemodel hash --save`), with every such activation added as a graph output;
  - its weight as an int8 initializer, symmetric per output channel (zero point 0,
    range [-127, 127]), through DequantizeLinear;
  - its bias, when it has one, as int32 with scale s_x * s_w[c], through DequantizeLinear.
dynamic (ONNX Runtime's "dynamic quantisation" with MatMulInteger): every MatMul whose
second input is a 2-D float initializer becomes
  DynamicQuantizeLinear(A) -> MatMulInteger(A_q, W_q, A_zp, 0) -> Cast(float)
  -> Mul(A_scale * W_scale[n])
  with W int8 symmetric per output column. Activations are quantised at run time, so no
  calibration is needed.
Rounding is numpy's round-half-to-even; the output is the same bytes for the same input.
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def safe_file_name(name):
    """onemodel hash --save's file name for an output (cli.cpp SafeFileName)."""
    r = "".join(c if (c.isascii() and (c.isalnum() or c in "._-")) else "_" for c in name)
    return "_" + r if (not r or r[0] == ".") else r


class Graph:
    def __init__(self, model):
        self.model = model
        self.g = model.graph
        self.inits = {t.name: t for t in self.g.initializer}
        self.used = {n for node in self.g.node for n in list(node.input) + list(node.output)}
        self.used |= set(self.inits) | {i.name for i in self.g.input}
        self.new_nodes = []

    def unique(self, base):
        name, k = base, 0
        while name in self.used:
            k += 1
            name = f"{base}_{k}"
        self.used.add(name)
        return name

    def add_init(self, base, array):
        name = self.unique(base)
        self.g.initializer.append(numpy_helper.from_array(np.ascontiguousarray(array), name))
        self.inits[name] = self.g.initializer[-1]
        return name

    def weight(self, name):
        t = self.inits.get(name)
        return None if t is None or t.data_type != TensorProto.FLOAT else numpy_helper.to_array(t)


def quant_weight(w, axis):
    """int8 symmetric per channel along axis: (q, scale)."""
    red = tuple(i for i in range(w.ndim) if i != axis)
    amax = np.max(np.abs(w), axis=red).astype(np.float32)
    scale = np.where(amax > 0, amax / np.float32(127.0), np.float32(1.0)).astype(np.float32)
    shape = [1] * w.ndim
    shape[axis] = -1
    q = np.clip(np.round(w / scale.reshape(shape)), -127, 127).astype(np.int8)
    return q, scale


def targets(g):
    """(node, activation input, weight, weight channel axis, bias index or None)."""
    out = []
    for node in g.g.node:
        if node.op_type not in ("Conv", "Gemm", "MatMul") or len(node.input) < 2:
            continue
        w = g.weight(node.input[1])
        if w is None:
            continue
        if node.op_type == "Conv":
            axis = 0
        elif node.op_type == "Gemm":
            tb = next((a.i for a in node.attribute if a.name == "transB"), 0)
            axis = 0 if tb else 1
            if any(a.name == "transA" and a.i for a in node.attribute):
                continue
        else:
            if w.ndim != 2:
                continue
            axis = 1
        bias = 2 if node.op_type in ("Conv", "Gemm") and len(node.input) > 2 and g.weight(node.input[2]) is not None else None
        out.append((node, node.input[0], w, axis, bias))
    return out


def calibrate(model, names, onemodel, calib):
    """min and max of each named tensor over the calibration runs, observed by OneModel."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    outputs = {o.name for o in m.graph.output}
    for n in names:
        if n not in outputs:
            m.graph.output.append(helper.make_tensor_value_info(n, TensorProto.FLOAT, None))
    lo = {n: np.inf for n in names}
    hi = {n: -np.inf for n in names}
    runs = max(len(v) for v in calib.values())
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "calib.onnx")
        onnx.save(m, path)
        for r in range(runs):
            args = [onemodel, "hash", path, "--save", tmp]
            for name, files in calib.items():
                args += ["--input", f"{name}={files[r % len(files)]}"]
            subprocess.run(args, check=True, stdout=subprocess.DEVNULL)
            for n in names:
                x = np.load(os.path.join(tmp, safe_file_name(n) + ".npy"))
                lo[n] = min(lo[n], float(x.min()))
                hi[n] = max(hi[n], float(x.max()))
            print(f"[quantize] calibration run {r + 1}/{runs}", file=sys.stderr)
    return lo, hi


def qdq(model, onemodel, calib):
    g = Graph(model)
    tg = targets(g)
    acts = sorted({t[1] for t in tg})
    lo, hi = calibrate(model, acts, onemodel, calib)
    act_q = {}
    for a in acts:
        rmin, rmax = min(lo[a], 0.0), max(hi[a], 0.0)
        scale = np.float32((rmax - rmin) / 255.0) if rmax > rmin else np.float32(1.0)
        zp = np.uint8(np.clip(np.round(-rmin / scale), 0, 255))
        s_name = g.add_init(a + "_scale", np.array(scale, dtype=np.float32))
        z_name = g.add_init(a + "_zero_point", np.array(zp, dtype=np.uint8))
        q_name, dq_name = g.unique(a + "_quantized"), g.unique(a + "_dequantized")
        g.new_nodes.append((a, [helper.make_node("QuantizeLinear", [a, s_name, z_name], [q_name], name=g.unique(a + "_QuantizeLinear")),
                                helper.make_node("DequantizeLinear", [q_name, s_name, z_name], [dq_name], name=g.unique(a + "_DequantizeLinear"))]))
        act_q[a] = (dq_name, scale)
    for node, a, w, axis, bias in tg:
        q, scale = quant_weight(w, axis)
        wq = g.add_init(node.input[1] + "_quantized", q)
        ws = g.add_init(node.input[1] + "_scale", scale)
        wz = g.add_init(node.input[1] + "_zero_point", np.zeros(scale.shape, dtype=np.int8))
        wdq = g.unique(node.input[1] + "_dequantized")
        nodes = [helper.make_node("DequantizeLinear", [wq, ws, wz], [wdq], name=g.unique(node.input[1] + "_DequantizeLinear"), axis=axis)]
        if bias is not None:
            b = g.weight(node.input[bias])
            bscale = (act_q[a][1] * scale).astype(np.float32)
            bq = np.clip(np.round(b / bscale), -2**31, 2**31 - 1).astype(np.int32)
            bq_n = g.add_init(node.input[bias] + "_quantized", bq)
            bs_n = g.add_init(node.input[bias] + "_scale", bscale)
            bz_n = g.add_init(node.input[bias] + "_zero_point", np.zeros(bscale.shape, dtype=np.int32))
            bdq = g.unique(node.input[bias] + "_dequantized")
            nodes.append(helper.make_node("DequantizeLinear", [bq_n, bs_n, bz_n], [bdq], name=g.unique(node.input[bias] + "_DequantizeLinear"), axis=0))
            node.input[bias] = bdq
        node.input[0] = act_q[a][0]
        node.input[1] = wdq
        g.new_nodes.append((None, nodes))
    return finish(g)


def dynamic(model):
    g = Graph(model)
    for node in list(g.g.node):
        if node.op_type != "MatMul":
            continue
        w = g.weight(node.input[1])
        if w is None or w.ndim != 2:
            continue
        a, y = node.input[0], node.output[0]
        q, scale = quant_weight(w, 1)
        wq = g.add_init(node.input[1] + "_quantized", q)
        wz = g.add_init(node.input[1] + "_zero_point", np.zeros(scale.shape, dtype=np.int8))
        ws = g.add_init(node.input[1] + "_scale", scale)
        aq, as_, az = g.unique(a + "_quantized"), g.unique(a + "_scale"), g.unique(a + "_zero_point")
        yi, yf, s = g.unique(y + "_int32"), g.unique(y + "_float"), g.unique(y + "_output_scale")
        base = node.name or y
        nodes = [
            helper.make_node("DynamicQuantizeLinear", [a], [aq, as_, az], name=g.unique(base + "_DynamicQuantizeLinear")),
            helper.make_node("MatMulInteger", [aq, wq, az, wz], [yi], name=g.unique(base + "_MatMulInteger")),
            helper.make_node("Cast", [yi], [yf], name=g.unique(base + "_Cast"), to=TensorProto.FLOAT),
            helper.make_node("Mul", [as_, ws], [s], name=g.unique(base + "_scale_Mul")),
            helper.make_node("Mul", [yf, s], [y], name=g.unique(base + "_output_Mul")),
        ]
        g.new_nodes.append((node, nodes))
    return finish(g, replace=True)


def finish(g, replace=False):
    """Rebuilds the node list: QDQ pairs right after their tensor's producer (or first,
    for graph inputs); replacements in place of their node."""
    by_tensor, by_node = {}, {}
    for key, nodes in g.new_nodes:
        if isinstance(key, str):
            by_tensor[key] = nodes
        elif key is not None:
            by_node[id(key)] = nodes
    front = [n for key, nodes in g.new_nodes if key is None for n in nodes]
    inputs = {i.name for i in g.g.input} | set(g.inits)
    front += [n for t, nodes in by_tensor.items() if t in inputs for n in nodes]
    out = list(front)
    for node in g.g.node:
        if replace and id(node) in by_node:
            out += by_node[id(node)]
            continue
        out.append(node)
        for o in node.output:
            out += by_tensor.get(o, [])
    del g.g.node[:]
    g.g.node.extend(out)
    # Unused float weights go; the quantised ones replace them.
    used = {i for n in g.g.node for i in n.input} | {o.name for o in g.g.output}
    keep = [t for t in g.g.initializer if t.name in used]
    del g.g.initializer[:]
    g.g.initializer.extend(keep)
    ins = [i for i in g.g.input if i.name in used or i.name not in {t.name for t in g.model.graph.initializer}]
    del g.g.input[:]
    g.g.input.extend(ins)
    if not any(o.domain in ("", "ai.onnx") and o.version >= 13 for o in g.model.opset_import):
        sys.exit("quantize.py: the model's opset must be 13 or newer (per-channel DequantizeLinear)")
    return g.model


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("style", choices=["qdq", "dynamic"])
    ap.add_argument("inp")
    ap.add_argument("out")
    ap.add_argument("--onemodel", help="the native onemodel binary that observes activation ranges (qdq)")
    ap.add_argument("--calib", action="append", default=[], help="NAME=A.npy,B.npy: calibration inputs (qdq)")
    a = ap.parse_args()
    model = onnx.load(a.inp)
    if a.style == "qdq":
        if not a.onemodel or not a.calib:
            sys.exit("quantize.py qdq needs --onemodel and --calib")
        calib = {}
        for c in a.calib:
            name, files = c.split("=", 1)
            calib[name] = files.split(",")
        model = qdq(model, a.onemodel, calib)
    else:
        model = dynamic(model)
    model.producer_name = "onemodel-quantize"
    onnx.checker.check_model(model)
    onnx.save(model, a.out)


if __name__ == "__main__":
    main()
