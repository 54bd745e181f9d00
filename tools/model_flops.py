#!/usr/bin/python3
"""Prints a model's multiply-add work: GFLOP=<x> (2 FLOP per multiply-add) of its Conv,
ConvInteger, QLinearConv, ConvTranspose, MatMul, MatMulInteger, QLinearMatMul and Gemm
nodes, the shapes from ONNX shape inference with the graph inputs fixed to the given
arrays' shapes (NAME=FILE.npy ...; other symbolic dimensions 1). Used by tools/bench.mjs
for GFLOP/s; other operators are not counted.
  /usr/bin/python3 tools/model_flops.py MODEL [NAME=FILE.npy ...]"""
import sys

import numpy as np
import onnx
from onnx import shape_inference


def main():
    model = onnx.load(sys.argv[1], load_external_data=False)
    shapes = {}
    for arg in sys.argv[2:]:
        name, path = arg.split('=', 1)
        shapes[name] = np.load(path, mmap_mode='r').shape
    inits = {t.name for t in model.graph.initializer}
    for inp in model.graph.input:
        if inp.name in inits:
            continue
        dims = inp.type.tensor_type.shape.dim
        want = shapes.get(inp.name)
        for i, d in enumerate(dims):
            v = want[i] if want is not None and i < len(want) else (d.dim_value or 1)
            d.Clear()
            d.dim_value = int(v)
    model = shape_inference.infer_shapes(model, data_prop=True)
    known = {}
    for vi in list(model.graph.value_info) + list(model.graph.input) + list(model.graph.output):
        dims = vi.type.tensor_type.shape.dim
        if all(d.HasField('dim_value') for d in dims):
            known[vi.name] = [d.dim_value for d in dims]
    for t in model.graph.initializer:
        known[t.name] = list(t.dims)
    macs = 0
    for n in model.graph.node:
        ins = [known.get(i) for i in n.input]
        out = known.get(n.output[0]) if n.output else None
        if n.op_type in ('Conv', 'ConvInteger', 'QLinearConv', 'ConvTranspose'):
            w = ins[3] if n.op_type == 'QLinearConv' else ins[1]
            if out is None or w is None:
                continue
            if n.op_type == 'ConvTranspose':
                x = ins[0]
                if x is None:
                    continue
                macs += int(np.prod(x)) * int(np.prod(w[1:]))
            else:
                macs += int(np.prod(out)) * int(np.prod(w[1:]))
        elif n.op_type in ('MatMul', 'MatMulInteger', 'QLinearMatMul', 'Gemm'):
            a = ins[0]
            if out is None or not a or len(out) < 1:
                continue
            k = a[-1]
            if n.op_type == 'Gemm':
                trans_a = any(at.name == 'transA' and at.i for at in n.attribute)
                k = a[0] if trans_a else a[-1]
            macs += int(np.prod(out)) * int(k)
            if 'ONEMODEL_FLOPS_DEBUG' in __import__('os').environ:
                print(n.op_type, n.name, ins[:2], out, file=sys.stderr)
    print(f'GFLOP={2 * macs / 1e9:.4f}')


if __name__ == '__main__':
    main()
