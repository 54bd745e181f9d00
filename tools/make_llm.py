#!/usr/bin/python3
"""Llama/Qwen2-shaped decoder-only ONNX models with seeded weights, for decoding tests and
tools/bench_llm.mjs (issue 34):

  make_llm.py [--size tiny|qwen0.5b] [--layout genai|plain] [--weights fp32|q4]
              [--seed N] [--layers N] [--max-positions N] [--accuracy-level N] OUT.onnx

writes OUT.onnx and OUT.json (the shapes, the layout and the input/output names a decoding
loop needs: tools/lib/llm.mjs reads it).

Sizes: tiny (2 layers, hidden 64, 4 heads, 2 KV heads, head dim 16, intermediate 128,
vocabulary 512, lm_head its own matrix) and qwen0.5b (Qwen2.5-0.5B's shapes: 24 layers,
hidden 896, 14 heads, 2 KV heads, head dim 64, intermediate 4864, vocabulary 151936, rope
theta 1e6, RMSNorm epsilon 1e-6, lm_head tied to the embedding as in Qwen2.5-0.5B, which
keeps the fp32 file under protobuf's 2 GB). Both have Qwen2's q/k/v biases.

Layouts (the same weights for a given seed, so both give the same tokens up to rounding):
- genai: what ONNX Runtime GenAI's model builder writes for the CPU: SimplifiedLayerNormalization
  (default domain) then SkipSimplifiedLayerNormalization (com.microsoft) carrying the
  residual, q/k/v projections with bias Adds, com.microsoft.GroupQueryAttention with
  do_rotary=1 and cos/sin caches [max_pos, head_dim / 2], seqlens_k = ReduceSum(attention_mask)
  - 1 as int32 and total_sequence_length = Shape(attention_mask)[1] as an int32 scalar, the
  present caches the past plus the new rows (no shared buffer); SiLU MLP; final norm;
  lm_head. Opset 21 and com.microsoft 1.
- plain: what optimum's exports (transformers.js's models) look like: a position_ids
  input, RMSNorm as Pow/ReduceMean/Add/Sqrt/Div/Mul, rotary from position_ids (Gather of
  cos/sin tables, rotate-half with Slice/Neg/Concat), attention as Concat(past, new) ->
  present, repeat-kv (Unsqueeze/Expand/Reshape), MatMul, scale, causal and padding mask
  Add, Softmax, MatMul. Opset 17.
IO of both: input_ids [B, S] int64, attention_mask [B, T] int64, (plain: position_ids
[B, S] int64), past_key_values.{i}.key/.value [B, kv_heads, P, head_dim] float; outputs
logits [B, S, vocab], present.{i}.key/.value [B, kv_heads, T, head_dim].

Weights: fp32 (MatMul) or q4: every linear layer and lm_head as com.microsoft.MatMulNBits,
bits 4, block_size 32, asymmetric block-wise min/max with packed uint8 zero points, laid
out as ONNX Runtime's MatMulNBits quantizer writes them (B [N, blocks, 16], scales and zero
points 1-D); the embedding stays float (Gather). accuracy_level is left out (ONNX Runtime
then computes in float, as OneModel does) unless --accuracy-level is given: the GenAI
builder writes 4 for the CPU, with which ONNX Runtime quantizes activations to int8.

Scaling: the embedding is small (std 0.02, as trained models have) and each projection has
std about 1/sqrt(fan_in), so the stream after each RMSNorm is O(1) and logits are set by
the layers rather than by the current token's own embedding (with a tied lm_head a large
embedding makes every greedy step repeat the input token).
"""
import argparse
import json
import math
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

MS = "com.microsoft"
SIZES = {
    "tiny": dict(layers=2, hidden=64, heads=4, kv_heads=2, head_dim=16, intermediate=128, vocab=512,
                 rope_theta=10000.0, eps=1e-6, max_positions=2048, tied=False),
    "qwen0.5b": dict(layers=24, hidden=896, heads=14, kv_heads=2, head_dim=64, intermediate=4864, vocab=151936,
                     rope_theta=1000000.0, eps=1e-6, max_positions=32768, tied=True),
}
BLOCK = 32
PROTOBUF_LIMIT = 2**31 - 1


def quantize_q4(w_nk):
    """w_nk [N, K] float32 -> (B [N, blocks, 16] uint8, scales [N * blocks] float32,
    zero points [N * ceil(blocks / 2)] uint8): per block of 32 along K, the range
    [min(x, 0), max(x, 0)] over 15 steps, codes round(x / scale) + zp clipped to 0..15,
    two codes per byte (the lower k in the low nibble), rows of zero points padded to bytes."""
    n, k = w_nk.shape
    blocks = -(-k // BLOCK)
    out_b = np.empty((n, blocks, BLOCK // 2), np.uint8)
    out_s = np.empty((n, blocks), np.float32)
    zrow = (blocks + 1) // 2
    out_z = np.empty((n, zrow), np.uint8)
    step = max(1, (1 << 22) // max(k, 1))  # rows per chunk: ~16 MB of floats at a time
    for r0 in range(0, n, step):
        w = w_nk[r0:r0 + step].astype(np.float32)
        if k % BLOCK:
            w = np.pad(w, ((0, 0), (0, blocks * BLOCK - k)))
        w = w.reshape(w.shape[0], blocks, BLOCK)
        lo = np.minimum(w.min(axis=2), 0.0)
        hi = np.maximum(w.max(axis=2), 0.0)
        scale = ((hi - lo) / 15.0).astype(np.float32)
        scale[scale == 0] = 1.0
        zp = np.clip(np.round(-lo / scale), 0, 15)
        q = np.clip(np.round(w / scale[:, :, None]) + zp[:, :, None], 0, 15).astype(np.uint8)
        out_b[r0:r0 + step] = q[:, :, 0::2] | (q[:, :, 1::2] << 4)
        out_s[r0:r0 + step] = scale
        zq = zp.astype(np.uint8)
        if blocks % 2:
            zq = np.pad(zq, ((0, 0), (0, 1)))
        out_z[r0:r0 + step] = zq[:, 0::2] | (zq[:, 1::2] << 4)
    return out_b, out_s.reshape(-1), out_z.reshape(-1)


class Graph:
    def __init__(self, weights, accuracy_level):
        self.nodes, self.inits = [], []
        self.weights, self.accuracy_level = weights, accuracy_level

    def init(self, name, array):
        self.inits.append(numpy_helper.from_array(np.ascontiguousarray(array), name))
        return name

    def const(self, name, value, dtype):
        return self.init(name, np.array(value, dtype))

    def node(self, op, inputs, name, outputs=1, domain="", **attrs):
        outs = [f"{name}/out{i}" if outputs > 1 else f"{name}/out" for i in range(outputs)] \
            if isinstance(outputs, int) else outputs
        self.nodes.append(helper.make_node(op, inputs, outs, name=name, domain=domain or None, **attrs))
        return outs[0] if len(outs) == 1 else outs

    def linear(self, x, w_kn, name, bias=None, w_nk=None):
        """x @ W (+ bias): W given as [K, N] (w_kn) or as [N, K] (w_nk, the embedding)."""
        if self.weights == "fp32":
            w = self.init(f"{name}.weight", w_kn if w_kn is not None else w_nk.T)
            y = self.node("MatMul", [x, w], f"{name}/MatMul")
        else:
            n, k = (w_kn.shape[1], w_kn.shape[0]) if w_kn is not None else w_nk.shape
            b, s, z = quantize_q4(w_kn.T if w_kn is not None else w_nk)
            attrs = dict(K=k, N=n, bits=4, block_size=BLOCK)
            if self.accuracy_level is not None:
                attrs["accuracy_level"] = self.accuracy_level
            ins = [x, self.init(f"{name}.weight_Q4", b), self.init(f"{name}.weight_scales", s),
                   self.init(f"{name}.weight_zp", z)]
            y = self.node("MatMulNBits", ins, f"{name}/MatMulNBits", domain=MS, **attrs)
        if bias is not None:
            y = self.node("Add", [y, self.init(f"{name}.bias", bias)], f"{name}/Add")
        return y


def draw_weights(cfg, rng):
    """All weights, drawn in a fixed order (so every layout and weight type of one seed is
    the same model). Matrices are [in, out]."""
    H, D, I = cfg["hidden"], cfg["head_dim"], cfg["intermediate"]
    nq, nkv = cfg["heads"] * D, cfg["kv_heads"] * D
    normal = lambda shape, std: (rng.standard_normal(shape, dtype=np.float32) * np.float32(std))
    norm_w = lambda: (1.0 + rng.standard_normal(H, dtype=np.float32) * np.float32(0.1)).astype(np.float32)
    w = {"embed": normal((cfg["vocab"], H), 0.02), "layers": []}
    for _ in range(cfg["layers"]):
        w["layers"].append(dict(
            ln1=norm_w(),
            q=normal((H, nq), 1.5 / math.sqrt(H)), q_bias=normal(nq, 0.5),
            k=normal((H, nkv), 1.5 / math.sqrt(H)), k_bias=normal(nkv, 0.5),
            v=normal((H, nkv), 1.0 / math.sqrt(H)), v_bias=normal(nkv, 0.1),
            o=normal((nq, H), 1.0 / math.sqrt(nq)),
            ln2=norm_w(),
            gate=normal((H, I), 1.0 / math.sqrt(H)), up=normal((H, I), 1.0 / math.sqrt(H)),
            down=normal((I, H), 1.0 / math.sqrt(I))))
    w["norm"] = norm_w()
    w["lm_head"] = None if cfg["tied"] else normal((H, cfg["vocab"]), 2.0 / math.sqrt(H))
    return w


def rope_tables(cfg):
    """cos and sin of pos * theta^(-2i/D) for i < D/2: [max_positions, D/2]."""
    D = cfg["head_dim"]
    inv = 1.0 / (cfg["rope_theta"] ** (np.arange(0, D, 2, dtype=np.float64) / D))
    ang = np.arange(cfg["max_positions"], dtype=np.float64)[:, None] * inv[None, :]
    return np.cos(ang).astype(np.float32), np.sin(ang).astype(np.float32)


def lm_head(g, cfg, w, x):
    if w["lm_head"] is not None:
        return g.linear(x, w["lm_head"], "lm_head")
    if g.weights == "q4":  # tied: the embedding quantized as lm_head's own weight, as ORT's quantizer does
        return g.linear(x, None, "lm_head", w_nk=w["embed"])
    emb_t = g.node("Transpose", ["model.embed_tokens.weight"], "lm_head/Transpose", perm=[1, 0])
    return g.node("MatMul", [x, emb_t], "lm_head/MatMul")


def mlp(g, L, p, x):
    gate = g.linear(x, L["gate"], f"{p}.mlp.gate_proj")
    act = g.node("Mul", [gate, g.node("Sigmoid", [gate], f"{p}.mlp.act/Sigmoid")], f"{p}.mlp.act/Mul")
    up = g.linear(x, L["up"], f"{p}.mlp.up_proj")
    return g.linear(g.node("Mul", [act, up], f"{p}.mlp/Mul"), L["down"], f"{p}.mlp.down_proj")


def build_genai(g, cfg, w):
    eps, n = cfg["eps"], cfg["layers"]
    cos, sin = rope_tables(cfg)
    g.init("cos_cache", cos)
    g.init("sin_cache", sin)
    # The attention mask's reformatting, as the builder writes it for GroupQueryAttention.
    s = g.node("ReduceSum", ["attention_mask", g.const("one_axis", [1], np.int64)], "attn_mask/ReduceSum", keepdims=0)
    s = g.node("Sub", [s, g.const("one_i64", 1, np.int64)], "attn_mask/Sub")
    seqlens_k = g.node("Cast", [s], "attn_mask/Cast_seqlens", to=TensorProto.INT32)
    shape = g.node("Shape", ["attention_mask"], "attn_mask/Shape")
    total = g.node("Gather", [shape, g.const("index_1", 1, np.int64)], "attn_mask/Gather", axis=0)
    total = g.node("Cast", [total], "attn_mask/Cast_total", to=TensorProto.INT32)
    x = g.node("Gather", [g.init("model.embed_tokens.weight", w["embed"]), "input_ids"], "embed/Gather")
    normed = g.node("SimplifiedLayerNormalization", [x, g.init("model.layers.0.input_layernorm.weight", w["layers"][0]["ln1"])],
                    "model.layers.0/input_layernorm", axis=-1, epsilon=eps, stash_type=1)
    residual = x
    for i, L in enumerate(w["layers"]):
        p = f"model.layers.{i}"
        q = g.linear(normed, L["q"], f"{p}.attn.q_proj", L["q_bias"])
        k = g.linear(normed, L["k"], f"{p}.attn.k_proj", L["k_bias"])
        v = g.linear(normed, L["v"], f"{p}.attn.v_proj", L["v_bias"])
        attn = g.node("GroupQueryAttention",
                      [q, k, v, f"past_key_values.{i}.key", f"past_key_values.{i}.value", seqlens_k, total,
                       "cos_cache", "sin_cache"],
                      f"{p}.attn/GroupQueryAttention", outputs=[f"{p}.attn/out", f"present.{i}.key", f"present.{i}.value"],
                      domain=MS, num_heads=cfg["heads"], kv_num_heads=cfg["kv_heads"], do_rotary=1,
                      rotary_interleaved=0, local_window_size=-1)[0]
        o = g.linear(attn, L["o"], f"{p}.attn.o_proj")
        normed, residual = g.node("SkipSimplifiedLayerNormalization",
                                  [o, residual, g.init(f"{p}.post_attention_layernorm.weight", L["ln2"])],
                                  f"{p}/post_attention_layernorm", outputs=[f"{p}/post_ln/out", "", "", f"{p}/post_ln/sum"],
                                  domain=MS, epsilon=eps)[::3]
        m = mlp(g, L, p, normed)
        last = i + 1 == n
        gamma = g.init("model.norm.weight", w["norm"]) if last else \
            g.init(f"model.layers.{i + 1}.input_layernorm.weight", w["layers"][i + 1]["ln1"])
        nm = "model.norm" if last else f"model.layers.{i + 1}/input_layernorm"
        outs = [f"{nm}/out"] if last else [f"{nm}/out", "", "", f"{nm}/sum"]  # the final norm: output 0 only
        normed = g.node("SkipSimplifiedLayerNormalization", [m, residual, gamma], nm, outputs=outs, domain=MS, epsilon=eps)
        if not last:
            normed, residual = normed[::3]
    return lm_head(g, cfg, w, normed)


def rms_norm(g, x, weight, name, eps):
    sq = g.node("Pow", [x, "two_f32"], f"{name}/Pow")
    mean = g.node("ReduceMean", [sq], f"{name}/ReduceMean", axes=[-1], keepdims=1)
    root = g.node("Sqrt", [g.node("Add", [mean, "eps_f32"], f"{name}/Add")], f"{name}/Sqrt")
    inv = g.node("Div", ["one_f32", root], f"{name}/Div")
    return g.node("Mul", [weight, g.node("Mul", [x, inv], f"{name}/Mul")], f"{name}/Mul_weight")


def build_plain(g, cfg, w):
    D, nh, nkv = cfg["head_dim"], cfg["heads"], cfg["kv_heads"]
    g.const("two_f32", 2.0, np.float32)
    g.const("one_f32", 1.0, np.float32)
    g.const("eps_f32", cfg["eps"], np.float32)
    cos, sin = rope_tables(cfg)
    g.init("rope.cos", np.concatenate([cos, cos], axis=1))  # [max_pos, D]: rotate-half's tables
    g.init("rope.sin", np.concatenate([sin, sin], axis=1))
    i64 = lambda name, v: g.const(name, v, np.int64)
    # Rotary tables for these positions: [B, 1, S, D].
    cos_p = g.node("Unsqueeze", [g.node("Gather", ["rope.cos", "position_ids"], "rope/Gather_cos"), i64("axes_1", [1])], "rope/Unsqueeze_cos")
    sin_p = g.node("Unsqueeze", [g.node("Gather", ["rope.sin", "position_ids"], "rope/Gather_sin"), "axes_1"], "rope/Unsqueeze_sin")
    # The additive mask [B, 1, S, T]: key j is seen by query s when j <= P + s and attention_mask[b, j] is 1.
    T = g.node("Gather", [g.node("Shape", ["attention_mask"], "mask/Shape_T"), i64("index_1", 1)], "mask/T", axis=0)
    S = g.node("Gather", [g.node("Shape", ["input_ids"], "mask/Shape_S"), "index_1"], "mask/S", axis=0)
    P = g.node("Sub", [T, S], "mask/P")
    qpos = g.node("Unsqueeze", [g.node("Range", [P, T, i64("one_i64", 1)], "mask/Range_q"), "axes_1"], "mask/qpos")
    kpos = g.node("Range", [i64("zero_i64", 0), T, "one_i64"], "mask/Range_k")
    causal = g.node("LessOrEqual", [kpos, qpos], "mask/causal")
    pad = g.node("Cast", [g.node("Unsqueeze", ["attention_mask", i64("axes_1_2", [1, 2])], "mask/Unsqueeze")], "mask/pad",
                 to=TensorProto.BOOL)
    allowed = g.node("And", [causal, pad], "mask/And")
    mask = g.node("Where", [allowed, g.const("zero_f32", 0.0, np.float32),
                            g.const("min_f32", np.finfo(np.float32).min, np.float32)], "mask/Where")
    half = D // 2
    for name, v in (("half_start", [0]), ("half_mid", [half]), ("half_end", [D]), ("last_axis", [-1])):
        i64(name, v)
    scale = g.const("attn_scale", 1.0 / math.sqrt(D), np.float32)
    heads_q = i64("shape_q", [0, 0, nh, D])
    heads_kv = i64("shape_kv", [0, 0, nkv, D])
    merge = i64("shape_merge", [0, 0, nh * D])
    rep = nh // nkv
    if rep > 1:
        i64("expand_rep", [1, 1, rep, 1, 1])
        i64("shape_rep", [0, nh, -1, D])
        i64("axes_2", [2])

    def rotate(x, name):  # x [B, N, S, D]: x * cos + rotate_half(x) * sin
        x1 = g.node("Slice", [x, "half_start", "half_mid", "last_axis"], f"{name}/Slice_1")
        x2 = g.node("Slice", [x, "half_mid", "half_end", "last_axis"], f"{name}/Slice_2")
        rot = g.node("Concat", [g.node("Neg", [x2], f"{name}/Neg"), x1], f"{name}/Concat", axis=-1)
        return g.node("Add", [g.node("Mul", [x, cos_p], f"{name}/Mul_cos"), g.node("Mul", [rot, sin_p], f"{name}/Mul_sin")],
                      f"{name}/Add")

    def split_heads(x, shape, name):
        return g.node("Transpose", [g.node("Reshape", [x, shape], f"{name}/Reshape")], f"{name}/Transpose", perm=[0, 2, 1, 3])

    def repeat_kv(x, name):
        if rep == 1:
            return x
        e = g.node("Expand", [g.node("Unsqueeze", [x, "axes_2"], f"{name}/Unsqueeze"), "expand_rep"], f"{name}/Expand")
        return g.node("Reshape", [e, "shape_rep"], f"{name}/Reshape")

    x = g.node("Gather", [g.init("model.embed_tokens.weight", w["embed"]), "input_ids"], "embed/Gather")
    for i, L in enumerate(w["layers"]):
        p = f"model.layers.{i}"
        h = rms_norm(g, x, g.init(f"{p}.input_layernorm.weight", L["ln1"]), f"{p}/input_layernorm", cfg["eps"])
        q = rotate(split_heads(g.linear(h, L["q"], f"{p}.attn.q_proj", L["q_bias"]), heads_q, f"{p}.attn/q"), f"{p}.attn/q_rot")
        k = rotate(split_heads(g.linear(h, L["k"], f"{p}.attn.k_proj", L["k_bias"]), heads_kv, f"{p}.attn/k"), f"{p}.attn/k_rot")
        v = split_heads(g.linear(h, L["v"], f"{p}.attn.v_proj", L["v_bias"]), heads_kv, f"{p}.attn/v")
        k = g.node("Concat", [f"past_key_values.{i}.key", k], f"{p}.attn/Concat_k", outputs=[f"present.{i}.key"], axis=2)
        v = g.node("Concat", [f"past_key_values.{i}.value", v], f"{p}.attn/Concat_v", outputs=[f"present.{i}.value"], axis=2)
        kt = g.node("Transpose", [repeat_kv(k, f"{p}.attn/repeat_k")], f"{p}.attn/Transpose_k", perm=[0, 1, 3, 2])
        scores = g.node("Mul", [g.node("MatMul", [q, kt], f"{p}.attn/MatMul_qk"), scale], f"{p}.attn/Mul_scale")
        probs = g.node("Softmax", [g.node("Add", [scores, mask], f"{p}.attn/Add_mask")], f"{p}.attn/Softmax", axis=-1)
        ctx = g.node("MatMul", [probs, repeat_kv(v, f"{p}.attn/repeat_v")], f"{p}.attn/MatMul_pv")
        ctx = g.node("Reshape", [g.node("Transpose", [ctx], f"{p}.attn/Transpose_ctx", perm=[0, 2, 1, 3]), merge],
                     f"{p}.attn/Reshape_ctx")
        x = g.node("Add", [x, g.linear(ctx, L["o"], f"{p}.attn.o_proj")], f"{p}/Add_attn")
        h = rms_norm(g, x, g.init(f"{p}.post_attention_layernorm.weight", L["ln2"]), f"{p}/post_attention_layernorm", cfg["eps"])
        x = g.node("Add", [x, mlp(g, L, p, h)], f"{p}/Add_mlp")
    return lm_head(g, cfg, w, rms_norm(g, x, g.init("model.norm.weight", w["norm"]), "model.norm", cfg["eps"]))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", help="the model's path (OUT.json is written beside it)")
    ap.add_argument("--size", choices=sorted(SIZES), default="tiny")
    ap.add_argument("--layout", choices=["genai", "plain"], default="genai")
    ap.add_argument("--weights", choices=["fp32", "q4"], default="fp32")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--layers", type=int, help="override the size's layer count")
    ap.add_argument("--max-positions", type=int, help="override the rotary tables' length (tiny 2048, qwen0.5b 32768)")
    ap.add_argument("--accuracy-level", type=int, choices=[0, 1, 2, 3, 4],
                    help="MatMulNBits accuracy_level (left out by default; the GenAI builder writes 4 for CPU)")
    a = ap.parse_args()
    cfg = dict(SIZES[a.size])
    if a.layers:
        cfg["layers"] = a.layers
    if a.max_positions:
        cfg["max_positions"] = a.max_positions
    rng = np.random.default_rng(a.seed)
    w = draw_weights(cfg, rng)
    g = Graph(a.weights, a.accuracy_level)
    logits = (build_genai if a.layout == "genai" else build_plain)(g, cfg, w)
    g.nodes[-1].output[:] = ["logits"]
    del w

    n, kvh, D, V = cfg["layers"], cfg["kv_heads"], cfg["head_dim"], cfg["vocab"]
    total = "total_sequence_length"
    f32, i64 = TensorProto.FLOAT, TensorProto.INT64
    inputs = [helper.make_tensor_value_info("input_ids", i64, ["batch_size", "sequence_length"]),
              helper.make_tensor_value_info("attention_mask", i64, ["batch_size", total])]
    if a.layout == "plain":
        inputs.append(helper.make_tensor_value_info("position_ids", i64, ["batch_size", "sequence_length"]))
    outputs = [helper.make_tensor_value_info("logits", f32, ["batch_size", "sequence_length", V])]
    for i in range(n):
        for kv in ("key", "value"):
            inputs.append(helper.make_tensor_value_info(f"past_key_values.{i}.{kv}", f32,
                                                        ["batch_size", kvh, "past_sequence_length", D]))
            outputs.append(helper.make_tensor_value_info(f"present.{i}.{kv}", f32, ["batch_size", kvh, total, D]))
    graph = helper.make_graph(g.nodes, f"{a.size}-{a.layout}-{a.weights}", inputs, outputs, g.inits)
    if a.layout == "genai":
        opsets = [helper.make_opsetid("", 21), helper.make_opsetid(MS, 1)]
    else:
        opsets = [helper.make_opsetid("", 17)] + ([helper.make_opsetid(MS, 1)] if a.weights == "q4" else [])
    model = helper.make_model(graph, opset_imports=opsets, producer_name="onemodel tools/make_llm.py")
    model.ir_version = 10 if a.layout == "genai" else 8
    size = model.ByteSize()
    if size > PROTOBUF_LIMIT:
        sys.exit(f"make_llm: the model is {size} bytes, over protobuf's 2 GB; use --weights q4 or fewer --layers")
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    with open(a.out, "wb") as f:
        f.write(model.SerializeToString())
    meta = dict(size=a.size, layout=a.layout, weights=a.weights, seed=a.seed, layers=n, hidden=cfg["hidden"],
                heads=cfg["heads"], kv_heads=kvh, head_dim=D, intermediate=cfg["intermediate"], vocab=V,
                rope_theta=cfg["rope_theta"], rms_norm_eps=cfg["eps"], max_positions=cfg["max_positions"],
                tied_lm_head=cfg["tied"], accuracy_level=a.accuracy_level, opset=opsets[0].version,
                inputs=[v.name for v in inputs], outputs=[v.name for v in outputs],
                past="past_key_values.{i}.key|value", present="present.{i}.key|value",
                past_shape=["batch_size", kvh, "past_sequence_length", D], bytes=os.path.getsize(a.out))
    with open(os.path.splitext(a.out)[0] + ".json", "w") as f:
        json.dump(meta, f, indent=1)
        f.write("\n")
    print(f"make_llm: {a.out} ({meta['bytes'] / 1e6:.1f} MB, {len(g.nodes)} nodes)")


if __name__ == "__main__":
    main()
