#!/usr/bin/python3
"""ONNX Runtime's contrib operators as ONNX node-case folders (tools/contrib_cases.sh).

  contrib_cases.py make DIR    one folder per case: model.onnx (onnx's helper, domain
                               com.microsoft), test_data_set_0/input_*.pb, the inputs as
                               ort_in/<i>.npy for tools/contrib_cases.mjs, and `tolerance`
  contrib_cases.py finish DIR  turns ONNX Runtime's outputs (ort_out/<i>.npy, written by
                               tools/contrib_cases.mjs) into test_data_set_0/output_*.pb;
                               a case ONNX Runtime refused (ort_error.txt) keeps no
                               expected outputs: `onemodel cases` then fails it unless
                               OneModel refuses it too (see docs/contrib-operators.md)

Inputs come from a fixed seed, so the folders are the same on every machine; the expected
outputs are onnxruntime-node 1.30's (CPU, one thread). Weights are initializers, so both
runtimes see them as constants, as in exported models.
"""
import os
import shutil
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

MS = "com.microsoft"
F32 = TensorProto.FLOAT
F16 = TensorProto.FLOAT16
rng = np.random.default_rng(2026)

# Tolerances (rtol, atol) per operator, against ONNX Runtime's outputs: its erf, tanh and
# exp are polynomials of its own and its sums run in another order (docs/contrib-operators.md).
TOL = {
    "Gelu": (1e-4, 1e-6), "FastGelu": (1e-4, 1e-6), "BiasGelu": (1e-4, 1e-6), "QuickGelu": (1e-4, 1e-6),
    "SkipLayerNormalization": (1e-4, 1e-5), "SkipSimplifiedLayerNormalization": (1e-4, 1e-5),
    "SimplifiedLayerNormalization": (1e-4, 1e-5), "FusedMatMul": (1e-4, 1e-5), "MatMulNBits": (1e-4, 1e-4),
    "GatherBlockQuantized": (1e-6, 1e-7), "RotaryEmbedding": (1e-5, 1e-6),
    "EmbedLayerNormalization": (1e-4, 1e-5), "FusedConv": (1e-4, 1e-5), "MatMulIntegerToFloat": (1e-5, 1e-5),
    "DynamicQuantizeMatMul": (1e-4, 2e-3),
    # QOperator outputs are 8-bit: one quantum (ONNX Runtime uses lookup tables and fixed point).
    "QLinearAdd": (0, 1), "QLinearMul": (0, 1), "QLinearSigmoid": (0, 1), "QLinearLeakyRelu": (0, 1),
    "QLinearGlobalAveragePool": (0, 1), "QLinearConcat": (0, 1),
    "GroupQueryAttention": (1e-5, 1e-5), "MultiHeadAttention": (1e-5, 1e-5), "Attention": (1e-5, 1e-5),
}
F16_TOL = (2e-3, 2e-3)  # float16 outputs: one half-precision step (ONNX Runtime rounds at other points)


def vals(shape, lo=-2.0, hi=2.0, dtype=np.float32):
    return rng.uniform(lo, hi, size=shape).astype(dtype)


def case(name, op, inputs, inits, outputs, attrs=None, domain=MS, opset=17, tol_op=None):
    """inputs: [(name, array)] fed; inits: [(name, array)] initializers (None: an omitted
    optional input, by position in `order`); outputs: [(name, elem_type)]."""
    return dict(name=name, op=op, inputs=inputs, inits=inits, outputs=outputs, attrs=attrs or {},
                domain=domain, opset=opset, tol=TOL[tol_op or op])


def cases():
    out = []
    x = vals((2, 7, 64), -4, 4)
    b = vals((64,))
    out.append(case("gelu", "Gelu", [("X", x)], [], [("Y", F32)]))
    out.append(case("fast_gelu", "FastGelu", [("X", x)], [], [("Y", F32)]))
    out.append(case("fast_gelu_bias", "FastGelu", [("X", x)], [("bias", b)], [("Y", F32)]))
    out.append(case("bias_gelu", "BiasGelu", [("A", x)], [("B", b)], [("C", F32)]))
    out.append(case("quick_gelu", "QuickGelu", [("X", x)], [], [("Y", F32)]))
    out.append(case("quick_gelu_alpha", "QuickGelu", [("X", x)], [], [("Y", F32)], {"alpha": 1.25}))
    # Skip layer norms: every output; a skip broadcast over the batch; no bias or beta.
    h = 96
    xi = vals((2, 5, h))
    for rms in (False, True):
        op = "SkipSimplifiedLayerNormalization" if rms else "SkipLayerNormalization"
        tag = "skip_simplified_layer_norm" if rms else "skip_layer_norm"
        gamma, beta, bias = vals((h,)), vals((h,)), vals((h,))
        full = [("skip", vals((2, 5, h))), ("gamma", gamma)] + ([] if rms else [("beta", beta)]) + [("bias", bias)]
        out.append(case(tag + "_all_outputs", op, [("input", xi)], full,
                        [("output", F32), ("mean", F32), ("inv_std_var", F32), ("sum", F32)],
                        {"epsilon": 1e-5}))
        out.append(case(tag + "_skip_broadcast", op, [("input", xi)], [("skip", vals((5, h))), ("gamma", gamma)],
                        [("output", F32)]))
        out.append(case(tag + "_2d", op, [("input", xi.reshape(10, h))], [("skip", vals((10, h))), ("gamma", gamma)],
                        [("output", F32), ("mean", F32), ("inv_std_var", F32)], {"epsilon": 1e-6}))
    # float16 (ONNX Runtime's CPU registers float16 for the skip norms; Gelu is float only).
    for rms in (False, True):
        op = "SkipSimplifiedLayerNormalization" if rms else "SkipLayerNormalization"
        tag = "skip_simplified_layer_norm" if rms else "skip_layer_norm"
        h16 = lambda shape: vals(shape, dtype=np.float16)
        inits16 = [("skip", h16((2, 5, h))), ("gamma", h16((h,)))] + ([] if rms else [("beta", h16((h,)))]) + \
            [("bias", h16((h,)))]
        c = case(tag + "_float16", op, [("input", xi.astype(np.float16))], inits16,
                 [("output", F16), ("mean", F32), ("inv_std_var", F32), ("sum", F16)], {"epsilon": 1e-5})
        c["tol"] = F16_TOL
        out.append(c)
    out.append(case("simplified_layer_norm", "SimplifiedLayerNormalization", [("X", xi)], [("scale", vals((h,)))],
                    [("Y", F32), ("inv_std_var", F32)], {"epsilon": 1e-6, "axis": -1}, domain=""))
    out.append(case("simplified_layer_norm_axis1", "SimplifiedLayerNormalization", [("X", xi)],
                    [("scale", vals((5, h)))], [("Y", F32)], {"axis": 1}, domain=""))
    # FusedMatMul.
    for ta, tb, tba, tbb, alpha, sa, sb in [(0, 0, 0, 0, 0.5, (3, 8, 16), (16, 12)),
                                            (1, 1, 0, 0, 1.0, (3, 16, 8), (3, 12, 16)),
                                            (0, 0, 1, 0, 2.0, (8, 3, 16), (3, 16, 12)),
                                            (1, 0, 1, 1, 0.25, (16, 3, 8), (16, 3, 12)),
                                            (0, 1, 0, 1, 1.5, (3, 8, 16), (12, 3, 16))]:
        out.append(case(f"fused_matmul_t{ta}{tb}_b{tba}{tbb}", "FusedMatMul", [("A", vals(sa))], [("B", vals(sb))],
                        [("Y", F32)], {"transA": ta, "transB": tb, "transBatchA": tba, "transBatchB": tbb,
                                       "alpha": alpha}))
    out += nbits_cases()
    out += gather_block_cases()
    out += rotary_cases()
    out += attention_cases()
    out += more_cases()
    return out


def more_cases():
    out = []
    i32 = lambda v: np.array(v, np.int32)
    # EmbedLayerNormalization (BERT's embeddings).
    B, S, H, V, P = 2, 7, 32, 50, 16
    ids = rng.integers(0, V, size=(B, S)).astype(np.int32)
    seg = rng.integers(0, 2, size=(B, S)).astype(np.int32)
    mask = np.ones((B, S), np.int32)
    mask[1, 5:] = 0
    tabs = [("word_embedding", vals((V, H))), ("position_embedding", vals((P, H)))]
    for name, with_seg, with_mask, with_pos in [("embed_layer_norm", True, True, False),
                                                ("embed_layer_norm_no_segment", False, False, False),
                                                ("embed_layer_norm_position_ids", True, True, True)]:
        named = [("input_ids", ids), ("segment_ids", seg) if with_seg else ("", None)] + tabs + \
                [("segment_embedding", vals((2, H))) if with_seg else ("", None), ("gamma", vals((H,))),
                 ("beta", vals((H,))), ("mask", mask) if with_mask else ("", None)]
        if with_pos:
            named.append(("position_ids", np.array([[s + 2 for s in range(S)]] * B, np.int32)))
        outputs = [("output", F32), ("mask_index", TensorProto.INT32)] + ([("embedding_sum", F32)] if with_pos else [])
        out.append(attention_case(name, "EmbedLayerNormalization", named, outputs, {"epsilon": 1e-12},
                                  fed=("input_ids", "segment_ids", "mask", "position_ids")))
    # FusedConv.
    for act, params, z in [("Relu", None, False), ("Tanh", None, False), ("Sigmoid", None, True),
                           ("LeakyRelu", [0.2], False), ("Clip", [-0.5, 0.75], False), ("HardSigmoid", [0.3, 0.4], True),
                           ("", None, True)]:
        x = vals((2, 3, 9, 8))
        named = [("X", x), ("W", vals((4, 3, 3, 3), -0.5, 0.5)), ("B", vals((4,)))]
        if z:
            named.append(("Z", vals((2, 4, 9, 8))))
        attrs = {"pads": [1, 1, 1, 1]}
        if act:
            attrs["activation"] = act
        if params:
            attrs["activation_params"] = params
        out.append(attention_case("fused_conv_" + (act.lower() or "none") + ("_z" if z else ""), "FusedConv", named,
                                  [("Y", F32)], attrs, fed=("X", "Z")))
    # MatMulIntegerToFloat and DynamicQuantizeMatMul.
    u8 = lambda shape: rng.integers(0, 256, size=shape).astype(np.uint8)
    # int8 weights of 7 bits, as ONNX Runtime's quantizer makes them (reduce_range): its u8 x s8
    # kernels without VNNI add pairs of products in int16 and saturate beyond that.
    s8 = lambda shape: rng.integers(-64, 64, size=shape).astype(np.int8)
    for name, a, b, bs, zps, bias in [
            ("matmul_integer_to_float", u8((3, 5, 16)), s8((16, 12)), (12,), True, True),
            ("matmul_integer_to_float_u8u8_scalar", u8((4, 16)), u8((16, 8)), (), True, False),
            ("matmul_integer_to_float_no_zero_points", u8((2, 16)), s8((16, 8)), (8,), False, True)]:
        named = [("A", a), ("B", b), ("a_scale", np.array(0.02, np.float32)),
                 ("b_scale", rng.uniform(0.001, 0.05, size=bs).astype(np.float32))]
        if zps:
            named += [("a_zero_point", np.array(rng.integers(100, 150), np.uint8)),
                      ("b_zero_point", (np.array(rng.integers(-5, 5, size=bs), np.int8) if b.dtype == np.int8 else
                                        np.array(rng.integers(120, 130, size=bs), np.uint8)))]
        else:
            named += [("", None), ("", None)]
        if bias:
            named.append(("bias", vals((b.shape[1],))))
        out.append(attention_case(name, "MatMulIntegerToFloat", named, [("Y", F32)], {}, fed=("A",)))
    for name, bshape, per_col, bias in [("dynamic_quantize_matmul", (32, 10), True, True),
                                        ("dynamic_quantize_matmul_scalar_scale", (32, 6), False, False)]:
        bs = (bshape[1],) if per_col else ()
        named = [("A", vals((3, 4, 32))), ("B", s8(bshape)), ("b_scale", rng.uniform(0.001, 0.05, size=bs).astype(np.float32)),
                 ("b_zero_point", np.zeros(bs, np.int8))]
        if bias:
            named.append(("bias", vals((bshape[1],))))
        out.append(attention_case(name, "DynamicQuantizeMatMul", named, [("Y", F32)], {}, fed=("A",)))
    # QOperator format.
    sc = lambda v: np.array(v, np.float32)
    for op, dt in [("QLinearAdd", np.uint8), ("QLinearMul", np.uint8), ("QLinearAdd", np.int8)]:
        lo, hi = (0, 256) if dt == np.uint8 else (-128, 128)
        a = rng.integers(lo, hi, size=(2, 3, 8)).astype(dt)
        b = rng.integers(lo, hi, size=(3, 8)).astype(dt)
        z = lambda v: np.array(v if dt == np.uint8 else v - 128, dt)
        named = [("A", a), ("A_scale", sc(0.05)), ("A_zero_point", z(120)), ("B", b), ("B_scale", sc(0.03)),
                 ("B_zero_point", z(130)), ("C_scale", sc(0.08 if op == "QLinearAdd" else 0.3)), ("C_zero_point", z(128))]
        out.append(attention_case(f"{op.lower()}_{np.dtype(dt).name}_broadcast", op, named, [("C", TensorProto.UINT8 if dt == np.uint8 else TensorProto.INT8)],
                                  {}, fed=("A", "B")))
    for op, attrs in [("QLinearSigmoid", {}), ("QLinearLeakyRelu", {"alpha": 0.1})]:
        x = rng.integers(0, 256, size=(4, 33)).astype(np.uint8)
        named = [("X", x), ("X_scale", sc(0.06)), ("X_zero_point", np.array(128, np.uint8)), ("Y_scale", sc(0.004)),
                 ("Y_zero_point", np.array(0 if op == "QLinearSigmoid" else 100, np.uint8))]
        out.append(attention_case(op.lower(), op, named, [("Y", TensorProto.UINT8)], attrs, fed=("X",)))
    for last in (0, 1):
        x = rng.integers(0, 256, size=(2, 5, 6, 3) if last else (2, 3, 5, 6)).astype(np.uint8)
        named = [("X", x), ("x_scale", sc(0.05)), ("x_zero_point", np.array(110, np.uint8)), ("y_scale", sc(0.02)),
                 ("y_zero_point", np.array(90, np.uint8))]
        out.append(attention_case("qlinear_global_average_pool" + ("_channels_last" if last else ""),
                                  "QLinearGlobalAveragePool", named, [("Y", TensorProto.UINT8)], {"channels_last": last},
                                  fed=("X",)))
    x1 = rng.integers(0, 256, size=(2, 3, 4)).astype(np.uint8)
    x2 = rng.integers(0, 256, size=(2, 5, 4)).astype(np.uint8)
    named = [("Y_scale", sc(0.04)), ("Y_zero_point", np.array(128, np.uint8)), ("X1", x1), ("X1_scale", sc(0.03)),
             ("X1_zero_point", np.array(120, np.uint8)), ("X2", x2), ("X2_scale", sc(0.05)),
             ("X2_zero_point", np.array(135, np.uint8))]
    out.append(attention_case("qlinear_concat", "QLinearConcat", named, [("Y", TensorProto.UINT8)], {"axis": 1},
                              fed=("X1", "X2")))
    return out


def pack_codes(codes, bits):
    """codes [..., n] (n a multiple of 8 / bits) -> bytes, the lowest bits first."""
    per = 8 // bits
    c = codes.reshape(codes.shape[:-1] + (codes.shape[-1] // per, per)).astype(np.uint32)
    byte = np.zeros(c.shape[:-1], np.uint32)
    for i in range(per):
        byte |= c[..., i] << (bits * i)
    return byte.astype(np.uint8)


def nbits_cases():
    out = []
    variants = [  # bits, block, K, N, A shape, zero points (none/packed/float), 1-D scales, g_idx, bias, f16
        (4, 32, 128, 24, (3, 128), "packed", False, False, True, False),
        (4, 16, 100, 20, (2, 3, 100), "none", True, False, False, False),
        (4, 128, 256, 16, (1, 256), "packed", False, False, True, False),
        (2, 16, 64, 12, (5, 64), "packed", False, False, False, False),
        (2, 64, 96, 10, (4, 96), "none", False, False, True, False),
        (8, 32, 80, 14, (6, 80), "packed", False, False, False, False),
        (8, 64, 64, 9, (64,), "none", True, False, True, False),
        (4, 32, 64, 16, (4, 64), "float", False, False, False, False),
        (4, 32, 96, 16, (4, 96), "none", False, True, False, False),
        (4, 32, 64, 16, (4, 64), "packed", False, False, True, True),
    ]
    for bits, block, K, N, ashape, zp, s1d, gidx, bias, f16 in variants:
        blocks = (K + block - 1) // block
        blob = block * bits // 8
        codes = rng.integers(0, 1 << bits, size=(N, blocks, block))
        B = pack_codes(codes, bits)
        ft = np.float16 if f16 else np.float32
        scales = rng.uniform(0.01, 0.2, size=(N, blocks)).astype(ft)
        inits = [("B", B.reshape(N, blocks, blob)), ("scales", scales.reshape(-1) if s1d else scales)]
        if zp == "packed":
            zrow = (blocks * bits + 7) // 8
            zc = rng.integers(0, 1 << bits, size=(N, zrow * (8 // bits)))
            inits.append(("zero_points", pack_codes(zc, bits)))
        elif zp == "float":
            inits.append(("zero_points", rng.uniform(0, (1 << bits) - 1, size=(N, blocks)).astype(ft)))
        elif gidx or bias:
            inits.append(("", None))
        if gidx:
            inits.append(("g_idx", (np.arange(K) // block).astype(np.int32)))
        elif bias:
            inits.append(("", None))
        if bias:
            inits.append(("bias", vals((N,), dtype=ft)))
        name = f"matmul_nbits_b{bits}_bs{block}_k{K}_n{N}_zp{zp}" + ("_s1d" if s1d else "") + \
               ("_gidx" if gidx else "") + ("_bias" if bias else "") + ("_f16" if f16 else "") + \
               ("_gemv" if len(ashape) == 1 or ashape[0] == 1 else "")
        out.append(case(name, "MatMulNBits", [("A", vals(ashape, dtype=ft))], inits, [("Y", F16 if f16 else F32)],
                        {"K": K, "N": N, "bits": bits, "block_size": block}))
        if f16:
            out[-1]["tol"] = F16_TOL
    return out


def gather_block_cases():
    out = []
    for bits, zp in [(4, False), (4, True), (2, True), (8, False)]:
        rows, cols, block = 13, 64, 32
        per = 8 // bits
        blocks = cols // block
        data = pack_codes(rng.integers(0, 1 << bits, size=(rows, cols)), bits)
        inits = [("data", data)]
        inputs = [("indices", np.array([[0, 5, 12], [3, -1, 7]], np.int64))]
        scales = rng.uniform(-1, 1, size=(rows, blocks)).astype(np.float32)
        inits.append(("scales", scales))
        if zp:
            zrow = (blocks + per - 1) // per
            inits.append(("zero_points", pack_codes(rng.integers(0, 1 << bits, size=(rows, zrow * per)), bits)))
        c = case(f"gather_block_quantized_b{bits}" + ("_zp" if zp else ""), "GatherBlockQuantized", inputs, inits,
                 [("Y", F32)], {"bits": bits, "block_size": block, "gather_axis": 0, "quantize_axis": 1})
        c["order"] = ["data", "indices", "scales"] + (["zero_points"] if zp else [])
        out.append(c)
    return out


def rotary_cases():
    out = []
    B, S, NH, D = 2, 5, 3, 16
    maxpos = 12
    for four, inter, pos2d, rd in [(False, False, False, 0), (False, True, True, 0), (True, False, True, 0),
                                   (True, True, False, 0), (False, False, True, 8)]:
        x = vals((B, NH, S, D) if four else (B, S, NH * D))
        half = (rd or D) // 2
        theta = rng.uniform(0, 3, size=(maxpos, half)).astype(np.float32)
        cos, sin = np.cos(theta).astype(np.float32), np.sin(theta).astype(np.float32)
        pos = rng.integers(0, maxpos, size=(B, S)).astype(np.int64) if pos2d else np.array([3], np.int64)
        attrs = {"interleaved": int(inter)}
        if rd:
            attrs.update(rotary_embedding_dim=rd, num_heads=NH)
        c = case(f"rotary_embedding_{'bnsh' if four else 'bsd'}" + ("_interleaved" if inter else "") +
                 ("_pos2d" if pos2d else "_offset") + (f"_rd{rd}" if rd else ""), "RotaryEmbedding",
                 [("input", x), ("position_ids", pos)], [("cos_cache", cos), ("sin_cache", sin)], [("output", F32)],
                 attrs)
        out.append(c)
    return out


def attention_case(name, op, named, outputs, attrs, fed=()):
    """named: [(input name or "" for an omitted one, array)] in the operator's order; the
    names in `fed` are graph inputs, the others initializers."""
    while named and not named[-1][0]:
        named = named[:-1]
    inputs = [(n, a) for n, a in named if n in fed]
    inits = [(n, a) for n, a in named if n and n not in fed]
    c = case(name, op, inputs, inits, outputs, attrs)
    c["order"] = [n for n, _ in named]
    return c


def rope_caches(rows, half):
    theta = rng.uniform(0, 3, size=(rows, half)).astype(np.float32)
    return np.cos(theta).astype(np.float32), np.sin(theta).astype(np.float32)


def attention_cases():
    out = []
    i32 = lambda v: np.array(v, np.int32)
    # GroupQueryAttention: seqlens_k and total_sequence_length fed, as exported LLMs do.
    gqa = [  # name, B, S, N, Nkv, H, past, total, seqlens, extra attrs, flags
        ("first_prompt", 2, 6, 4, 2, 16, 0, 6, [5, 5], {}, ""),
        ("first_prompt_padded", 2, 6, 4, 2, 16, 0, 6, [5, 3], {}, ""),
        ("decode_past", 2, 1, 4, 2, 16, 8, 9, [8, 5], {}, ""),
        ("rotary", 1, 5, 4, 2, 32, 0, 5, [4], {"do_rotary": 1}, "rope"),
        ("rotary_interleaved_decode_positions", 2, 1, 4, 1, 16, 6, 7, [6, 4], {"do_rotary": 1,
                                                                               "rotary_interleaved": 1}, "rope pos"),
        ("packed_qkv", 1, 4, 2, 1, 16, 3, 7, [6], {}, "packed"),
        ("local_window", 1, 9, 2, 2, 16, 0, 9, [8], {"local_window_size": 3}, ""),
        ("softcap", 1, 5, 2, 1, 16, 2, 7, [6], {"softcap": 2.0}, ""),
        ("head_sink", 1, 5, 4, 2, 16, 0, 5, [4], {}, "sink"),
        ("smooth_softmax", 1, 1, 4, 2, 16, 4, 5, [4], {"smooth_softmax": 1}, ""),
        ("attention_bias_qk_before", 1, 4, 2, 2, 16, 0, 4, [3], {"qk_output": 1}, "bias"),
        ("qk_after_softmax", 1, 3, 2, 1, 16, 2, 5, [4], {"qk_output": 2}, ""),
        ("float16", 1, 5, 4, 2, 16, 3, 8, [7], {"do_rotary": 1}, "rope f16"),
    ]
    for name, B, S, N, Nkv, H, P, total, seqlens, extra, flags in gqa:
        ft = np.float16 if "f16" in flags else np.float32
        packed = "packed" in flags
        q = vals((B, S, (N + 2 * Nkv) * H if packed else N * H), dtype=ft)
        named = [("query", q), ("key", None if packed else vals((B, S, Nkv * H), dtype=ft)),
                 ("value", None if packed else vals((B, S, Nkv * H), dtype=ft))]
        named = [(n if a is not None else "", a) for n, a in named]
        named += [("past_key", vals((B, Nkv, P, H), dtype=ft)), ("past_value", vals((B, Nkv, P, H), dtype=ft))] \
            if P else [("", None), ("", None)]
        named += [("seqlens_k", i32(seqlens)), ("total_sequence_length", i32(total))]
        if "rope" in flags:
            cos, sin = rope_caches(total + 8, H // 2)
            named += [("cos_cache", cos.astype(ft)), ("sin_cache", sin.astype(ft))]
        else:
            named += [("", None), ("", None)]
        if "pos" in flags:
            named.append(("position_ids", np.array([[sl + 1 - S + s for s in range(S)] for sl in seqlens], np.int64)))
        else:
            named.append(("", None))
        named.append(("attention_bias", vals((1, N, S, total), -1, 1, ft)) if "bias" in flags else ("", None))
        named.append(("head_sink", vals((N,), -1, 1, ft)) if "sink" in flags else ("", None))
        Tp = max(total, P)
        t = F16 if ft == np.float16 else F32
        outputs = [("output", t), ("present_key", t), ("present_value", t)]
        if extra.get("qk_output"):
            outputs.append(("output_qk", t))
        attrs = {"num_heads": N, "kv_num_heads": Nkv, **extra}
        c = attention_case("gqa_" + name, "GroupQueryAttention", named, outputs, attrs,
                           fed=("query", "seqlens_k", "total_sequence_length", "past_key", "past_value"))
        if ft == np.float16:
            c["tol"] = F16_TOL
        out.append(c)
    # MultiHeadAttention (float only on ONNX Runtime's CPU).
    mha = [  # name, B, S, L, N, H, Hv, past, mask shape, flags
        ("plain", 2, 5, 7, 2, 16, 16, 0, None, ""),
        ("bias_mask_bt", 2, 4, 6, 2, 8, 12, 0, (2, 6), "bias"),
        ("mask_lengths", 2, 4, 6, 3, 8, 8, 0, (2,), ""),
        ("mask_bst_attention_bias", 2, 3, 5, 2, 8, 8, 0, (2, 3, 5), "abias"),
        ("past_unidirectional", 2, 3, 3, 2, 8, 8, 4, None, "causal"),
        ("past_mask_bias_qk", 1, 2, 2, 2, 8, 8, 5, (1, 7), "bias qk"),
        ("cross_bnsh", 2, 4, 9, 2, 16, 16, 0, (2,), "bnsh"),
        ("unidirectional_scale", 1, 6, 6, 4, 8, 8, 0, None, "causal scale"),
    ]
    for name, B, S, L, N, H, Hv, P, mshape, flags in mha:
        D, T = N * H, P + L
        bnsh = "bnsh" in flags
        k = vals((B, N, L, H) if bnsh else (B, L, D))
        v = vals((B, N, L, Hv) if bnsh else (B, L, N * Hv))
        named = [("query", vals((B, S, D))), ("key", k), ("value", v)]
        named.append(("bias", vals((2 * D + N * Hv,), -0.5, 0.5)) if "bias" in flags else ("", None))
        if mshape is None:
            named.append(("", None))
        elif len(mshape) == 1:
            named.append(("key_padding_mask", i32([T - 1 - b for b in range(B)])))
        else:
            m = (rng.uniform(size=mshape) > 0.3).astype(np.int32)
            m[..., 0] = 1
            named.append(("key_padding_mask", m))
        named.append(("attention_bias", vals((B, 1, S, T), -1, 1)) if "abias" in flags else ("", None))
        if P:
            named += [("past_key", vals((B, N, P, H))), ("past_value", vals((B, N, P, Hv)))]
        outputs = [("output", F32)]
        if P:
            outputs += [("present_key", F32), ("present_value", F32)]
        attrs = {"num_heads": N}
        if "causal" in flags:
            attrs["unidirectional"] = 1
        if "scale" in flags:
            attrs["scale"] = 0.2
        c = attention_case("mha_" + name, "MultiHeadAttention", named, outputs, attrs,
                           fed=("query", "key", "value", "past_key", "past_value"))
        if "qk" in flags:
            c["outputs"] = outputs + ([] if P else [("", None)] * 2) + [("qk", F32)]
        out.append(c)
    # Attention (BERT and GPT-2 style, float only on ONNX Runtime's CPU).
    att = [  # name, B, S, Din, N, qkv sizes, past, mask shape, flags
        ("plain", 2, 5, 32, 2, None, 0, None, ""),
        ("mask_lengths", 2, 6, 24, 3, None, 0, (2,), ""),
        ("mask_ends_starts", 2, 6, 24, 3, None, 0, (4,), ""),
        ("mask_bt_unidirectional", 2, 4, 16, 2, None, 0, (2, 4), "causal"),
        ("past_present_unidirectional", 2, 3, 16, 2, None, 4, (2,), "causal"),
        ("qkv_hidden_sizes_mask_bst", 1, 5, 12, 2, (8, 8, 12), 0, (1, 5, 5), ""),
        ("attention_bias", 2, 4, 16, 2, None, 0, None, "abias"),
    ]
    for name, B, S, Din, N, sizes, P, mshape, flags in att:
        dq, dk, dv = sizes or (Din, Din, Din)
        T = P + S
        named = [("input", vals((B, S, Din))), ("weights", vals((Din, dq + dk + dv), -0.3, 0.3)),
                 ("bias", vals((dq + dk + dv,), -0.3, 0.3))]
        if mshape is None:
            named.append(("", None))
        elif mshape == (B,):
            named.append(("mask_index", i32([T - b for b in range(B)])))
        elif mshape == (2 * B,):
            named.append(("mask_index", i32([T - b for b in range(B)] + [b + 1 for b in range(B)])))
        else:
            m = (rng.uniform(size=mshape) > 0.3).astype(np.int32)
            m[..., 0] = 1
            named.append(("mask_index", m))
        named.append(("past", vals((2, B, N, P, dk // N))) if P else ("", None))
        named.append(("attention_bias", vals((B, N, S, T), -1, 1)) if "abias" in flags else ("", None))
        outputs = [("output", F32)] + ([("present", F32)] if P else [])
        attrs = {"num_heads": N}
        if sizes:
            attrs["qkv_hidden_sizes"] = list(sizes)
        if "causal" in flags:
            attrs["unidirectional"] = 1
        out.append(attention_case("attention_" + name, "Attention", named, outputs, attrs, fed=("input", "past")))
    return out


def build(c, d):
    order = c.get("order") or [n for n, _ in c["inputs"] + c["inits"]]
    arrays = dict(c["inputs"] + [(n, a) for n, a in c["inits"] if n])
    fed = [n for n, _ in c["inputs"]]
    graph_inputs = [helper.make_tensor_value_info(n, onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[arrays[n].dtype],
                                                  list(arrays[n].shape)) for n in fed]
    inits = [numpy_helper.from_array(a, n) for n, a in c["inits"] if n]
    outs = [helper.make_tensor_value_info(n, t, None) for n, t in c["outputs"] if n]
    node = helper.make_node(c["op"], order, [n for n, _ in c["outputs"]], domain=c["domain"], **c["attrs"])
    g = helper.make_graph([node], c["name"], graph_inputs, outs, inits)
    opsets = [helper.make_opsetid("", c["opset"])] + ([helper.make_opsetid(MS, 1)] if c["domain"] == MS else [])
    m = helper.make_model(g, opset_imports=opsets, producer_name="onemodel tools/contrib_cases.py")
    m.ir_version = 8
    os.makedirs(os.path.join(d, "test_data_set_0"))
    os.makedirs(os.path.join(d, "ort_in"))
    onnx.save(m, os.path.join(d, "model.onnx"))
    for i, n in enumerate(fed):
        t = numpy_helper.from_array(arrays[n], n)
        with open(os.path.join(d, "test_data_set_0", f"input_{i}.pb"), "wb") as f:
            f.write(t.SerializeToString())
        np.save(os.path.join(d, "ort_in", f"{i}.npy"), arrays[n])
    with open(os.path.join(d, "ort_in", "names.txt"), "w") as f:
        f.write("\n".join(fed) + "\n")
    with open(os.path.join(d, "outputs.txt"), "w") as f:
        f.write("\n".join(n for n, _ in c["outputs"] if n) + "\n")
    with open(os.path.join(d, "tolerance"), "w") as f:
        f.write(f"{c['tol'][0]:g} {c['tol'][1]:g}\n")


def finish(root):
    for name in sorted(os.listdir(root)):
        d = os.path.join(root, name)
        if not os.path.isfile(os.path.join(d, "model.onnx")):
            continue
        if os.path.exists(os.path.join(d, "ort_error.txt")):
            continue
        names = open(os.path.join(d, "outputs.txt")).read().split()
        for i, n in enumerate(names):
            a = np.load(os.path.join(d, "ort_out", f"{i}.npy"))
            with open(os.path.join(d, "test_data_set_0", f"output_{i}.pb"), "wb") as f:
                f.write(numpy_helper.from_array(a, n).SerializeToString())


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in ("make", "finish"):
        sys.exit(__doc__)
    root = sys.argv[2]
    if sys.argv[1] == "finish":
        finish(root)
        return
    shutil.rmtree(root, ignore_errors=True)
    os.makedirs(root)
    for c in cases():
        build(c, os.path.join(root, "test_ms_" + c["name"]))
    print(f"[contrib_cases] {len(os.listdir(root))} cases in {root}")


if __name__ == "__main__":
    main()
