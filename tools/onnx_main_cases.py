#!/usr/bin/python3
"""The node cases of onnx's main branch (opset 28) beyond ONNX 1.22, as node-case folders:
onnx_main_cases.py DIR (tools/contrib_cases.sh runs it into build/contrib-cases).

This machine has onnx 1.12 (Debian) and no package index, so the cases are written the
way onnx's own generators (swiglu.py and celu.py among the backend's node-case
generators at onnx/onnx@f754691) write them: the same names, nodes, inputs and numpy formulas for the
expected outputs, with onnx 1.12's helper for the files. bfloat16 tensors are written as
raw bits (round to nearest even from float32, as ml_dtypes does). The other cases new on
the main branch are listed in docs/contrib-operators.md with the reason they are not here.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

BF16 = 16  # TensorProto.BFLOAT16


def bf16_bits(a):
    u = np.asarray(a, np.float32).view(np.uint32).astype(np.uint64)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)


def bf16_values(bits):
    return (bits.astype(np.uint32) << 16).view(np.float32)


def tensor(name, a, bf16=False):
    if not bf16:
        return numpy_helper.from_array(a, name)
    t = TensorProto()
    t.name = name
    t.data_type = BF16
    t.dims.extend(a.shape)
    t.raw_data = a.astype(np.uint16).tobytes()
    return t


def expect(root, name, node, inputs, outputs, bf16=False, opset=28):
    """inputs / outputs: arrays (uint16 bits when bf16), one per named (non-empty) slot."""
    d = os.path.join(root, name)
    ins, outs = [n for n in node.input if n], [n for n in node.output if n]
    os.makedirs(os.path.join(d, "test_data_set_0"))
    def vi(n, a):
        t = BF16 if bf16 else onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[a.dtype]
        return helper.make_tensor_value_info(n, t, list(a.shape))
    g = helper.make_graph([node], name, [vi(n, a) for n, a in zip(ins, inputs)],
                          [vi(n, a) for n, a in zip(outs, outputs)])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)],
                          producer_name="onemodel tools/onnx_main_cases.py")
    m.ir_version = 8
    onnx.save(m, os.path.join(d, "model.onnx"))
    for kind, names, arrays in (("input", ins, inputs), ("output", outs, outputs)):
        for i, (n, a) in enumerate(zip(names, arrays)):
            with open(os.path.join(d, "test_data_set_0", f"{kind}_{i}.pb"), "wb") as f:
                f.write(tensor(n, a, bf16).SerializeToString())


def swiglu(a, b, alpha):
    return (a * (1 / (1 + np.exp(-alpha * a)))) * b


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    root = sys.argv[1]
    os.makedirs(root, exist_ok=True)
    a = np.array([[1.0, -2.0, 3.0, 4.0], [-1.0, 2.0, -3.0, 0.5]], dtype=np.float32)
    b = np.array([[0.5, 1.0, -1.0, 2.0], [2.0, -1.0, 0.5, 1.0]], dtype=np.float32)
    node = helper.make_node("SwiGLU", ["a", "b"], ["y"])
    expect(root, "test_swiglu", node, [a, b], [swiglu(a, b, 1.0)])
    expect(root, "test_swiglu_alpha", helper.make_node("SwiGLU", ["a", "b"], ["y"], alpha=0.5), [a, b],
           [swiglu(a, b, 0.5)])
    a16, b16 = a.astype(np.float16), b.astype(np.float16)
    expect(root, "test_swiglu_float16", node, [a16, b16],
           [swiglu(a16.astype(np.float32), b16.astype(np.float32), 1.0).astype(np.float16)])
    alpha = 2.0
    celu = helper.make_node("Celu", ["X"], ["Y"], alpha=alpha)
    x = np.array([-3.0, -0.5, 0.0, 0.5, 3.0], dtype=np.float16)
    y = (np.maximum(0, x) + np.minimum(0, alpha * (np.exp(x / alpha) - 1))).astype(np.float16)
    expect(root, "test_celu_float16", celu, [x], [y])
    xb = bf16_bits(np.array([-3.0, -0.5, 0.0, 0.5, 3.0], np.float32))
    # ml_dtypes rounds every ufunc's float32 result to bfloat16: the same steps here.
    r = lambda v: bf16_values(bf16_bits(v))
    xv = bf16_values(xb)
    neg = np.minimum(0, r(np.float32(alpha) * r(r(np.exp(r(xv / np.float32(alpha)))) - 1)))
    expect(root, "test_celu_bfloat16", celu, [xb], [bf16_bits(r(np.maximum(0, xv) + neg))], bf16=True)
    # OneModel computes in float32 and rounds once (docs/exact-mode.md): within two
    # bfloat16 steps of the stepwise rounding above, not within ONNX's default rtol 1e-3.
    with open(os.path.join(root, "test_celu_bfloat16", "tolerance"), "w") as f:
        f.write("1e-2 1e-7\n")
    print(f"[onnx_main_cases] 5 cases of onnx's main branch in {root}")


if __name__ == "__main__":
    main()
