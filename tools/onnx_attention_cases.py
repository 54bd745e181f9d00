#!/usr/bin/python3
"""The Attention node cases of onnx's main branch beyond ONNX 1.22, as node-case folders:
onnx_attention_cases.py DIR (tools/contrib_cases.sh runs it into build/contrib-cases).

onnx's generators (attention.py among the backend's node-case generators at
onnx/onnx@f754691) take their expected outputs from the main branch's Python reference,
which onnx 1.12 (Debian's, the only one here) does not have. So this tool builds the
generators' nodes (names, attributes, input slots, shapes, dtypes and opsets: 23, 24 and
25, the one with left_window_size / right_window_size) on inputs from a fixed seed, and
computes the expected outputs with its own binary64 reading of Operators.md's Attention:

- scores: (Q * sqrt(scale)) times (K * sqrt(scale)) transposed, scale 1 / sqrt(head size)
  by default; query head h reads key/value head h / (q heads / kv heads);
- softcap c > 0: c * tanh(score / c), before any bias;
- the bias: a float attn_mask is added; a boolean one, causal masking, the window bounds
  and nonpad_kv_seqlen each disallow keys (-inf). A mask shorter than the keys is padded
  as disallowed. Causal masking and the windows are bottom-right: query i sits at
  p = i + offset, offset the past length, or nonpad_kv_seqlen[b] - q length (an external
  cache), else 0; causal keeps j <= p, the windows p - left <= j <= p + right;
- softmax of each row; a row with no allowed key is all zeros (Y's row is then 0 too);
- qk_matmul_output mode 0: the scores, 1: softcapped, 2: with the bias, 3: the softmax.

Each output is rounded once to the inputs' type, as OneModel's exact mode rounds float16.
The spec's function body rounds the scores and the probabilities to float16 on the way
(ONNX Runtime 1.30 rounds on the way too: one float16 ulp from these values in 4 of 64
and 3 of 32 Y elements; onnx's reference rounds the scaled Q and K and the scores, not the
probabilities), all within ONNX's rtol 1e-3.
softmax_precision (FLOAT over float16, DOUBLE over float) is never narrower than the
inputs, so binary64 throughout covers it. ONNX Runtime 1.30 refuses the opset-25 cases
(left_window_size is not in its Attention schema); onnx's main-branch reference agrees
with every case here within 1e-7 (float) and one float16 ulp.
"""
import os
import sys

import numpy as np
from onnx import TensorProto, helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from onnx_main_cases import expect  # noqa: E402

INS = ("Q", "K", "V", "attn_mask", "past_key", "past_value", "nonpad_kv_seqlen")
OUTS = ("Y", "present_key", "present_value", "qk_matmul_output")


def to_heads(x, heads):
    """[B, S, H * D] to [B, H, S, D]."""
    b, s, hd = x.shape
    return x.reshape(b, s, heads, hd // heads).transpose(0, 2, 1, 3)


def allowed_keys(ins, b, hq, sq, skv, attrs):
    """The additive bias, [B or 1, Hq or 1, Sq, Skv] with -inf for each disallowed key."""
    bias = np.zeros((1, 1, sq, skv))
    keep = np.ones((b, 1, sq, skv), bool)
    mask = ins.get("attn_mask")
    if mask is not None:
        short = skv - mask.shape[-1]
        if short > 0:
            fill = False if mask.dtype == np.bool_ else -np.inf
            mask = np.concatenate([mask, np.full(mask.shape[:-1] + (short,), fill, mask.dtype)], -1)
        mask = mask.reshape((1,) * (4 - mask.ndim) + mask.shape)
        if mask.dtype == np.bool_:
            keep = keep & mask
        else:
            bias = bias + mask.astype(np.float64)
    nonpad = ins.get("nonpad_kv_seqlen")
    if "past_key" in ins:
        offset = np.full(b, ins["past_key"].shape[2])
    elif nonpad is not None:
        offset = nonpad - sq
    else:
        offset = np.zeros(b, np.int64)
    key = np.arange(skv)
    dist = (np.arange(sq)[None, :, None] + offset[:, None, None]) - key  # p - j: [B, Sq, Skv]
    rule = np.ones_like(dist, bool)
    if attrs.get("is_causal", 0):
        rule &= dist >= 0
    if attrs.get("left_window_size", -1) >= 0:
        rule &= dist <= attrs["left_window_size"]
    if attrs.get("right_window_size", -1) >= 0:
        rule &= -dist <= attrs["right_window_size"]
    if nonpad is not None:
        rule &= key < nonpad[:, None, None]
    keep = keep & rule[:, None]
    return np.where(keep, bias, -np.inf)


def attention(ins, attrs):
    """The node's outputs (by name) for inputs ins (by name) and attributes attrs."""
    t1 = ins["Q"].dtype
    q, k, v = (ins[n] for n in ("Q", "K", "V"))
    rank3 = q.ndim == 3
    if rank3:
        q = to_heads(q, attrs["q_num_heads"])
        k, v = (to_heads(x, attrs["kv_num_heads"]) for x in (k, v))
    if "past_key" in ins:
        k = np.concatenate([ins["past_key"], k], 2)
        v = np.concatenate([ins["past_value"], v], 2)
    out = {"present_key": k, "present_value": v}
    b, hq, sq, d = q.shape
    skv = k.shape[2]
    group = hq // k.shape[1]
    root = np.sqrt(attrs.get("scale", 1 / np.sqrt(d)))
    kx = np.repeat(k.astype(np.float64), group, axis=1) * root
    vx = np.repeat(v.astype(np.float64), group, axis=1)
    scores = (q.astype(np.float64) * root) @ kx.transpose(0, 1, 3, 2)
    capped = scores
    cap = attrs.get("softcap", 0.0)
    if cap > 0:
        capped = cap * np.tanh(scores / cap)
    bias = allowed_keys(ins, b, hq, sq, skv, attrs)
    logits = capped + bias
    empty = np.all(np.isneginf(bias), axis=-1, keepdims=True)
    empty = np.broadcast_to(empty, logits.shape[:-1] + (1,))
    top = np.where(empty, 0.0, np.max(np.where(empty, 0.0, logits), axis=-1, keepdims=True))
    e = np.exp(logits - top)
    total = e.sum(-1, keepdims=True)
    probs = np.where(empty, 0.0, e / np.where(empty, 1.0, total))
    y = probs @ vx
    if rank3:
        y = y.transpose(0, 2, 1, 3).reshape(b, sq, -1)
    out["Y"] = y.astype(t1)
    mode = attrs.get("qk_matmul_output_mode", 0)
    out["qk_matmul_output"] = (scores, capped, logits, probs)[mode].astype(t1)
    return out


def case(root, name, opset, ins, outs, **attrs):
    """Writes case name: an Attention node of opset opset on inputs ins (name: array),
    with the outputs named in outs and attributes attrs."""
    last = max(INS.index(n) for n in ins)
    node_ins = [n if n in ins else "" for n in INS[:last + 1]]
    last = max(OUTS.index(n) for n in outs)
    node_outs = [n if n in outs else "" for n in OUTS[:last + 1]]
    node = helper.make_node("Attention", node_ins, node_outs, **attrs)
    got = attention(ins, attrs)
    expect(root, name, node, [ins[n] for n in node_ins if n], [got[n] for n in node_outs if n], opset=opset)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    root = sys.argv[1]
    os.makedirs(root, exist_ok=True)
    f32, f16 = np.float32, np.float16
    names = []

    def rand(seed, dtype, *shapes):
        rng = np.random.default_rng(seed)
        return [rng.random(s).astype(dtype) for s in shapes]

    def add(name, opset, ins, outs=("Y",), **attrs):
        case(root, name, opset, ins, outs, **attrs)
        names.append(name)

    # Opsets 23 and 24: fully masked rows, bottom-right causal masks with caches.
    q, k, v = rand(100, f32, (2, 4, 1, 8), (2, 2, 8, 8), (2, 2, 8, 8))
    nonpad = np.array([8, 5], np.int64)
    add("test_attention_4d_gqa_causal_nonpad_decode", 24,
        {"Q": q, "K": k, "V": v, "nonpad_kv_seqlen": nonpad}, is_causal=1)
    q, k, v = rand(101, f16, (2, 4, 1, 8), (2, 2, 8, 8), (2, 2, 8, 8))
    add("test_attention_4d_gqa_causal_nonpad_decode_fp16", 24,
        {"Q": q, "K": k, "V": v, "nonpad_kv_seqlen": nonpad}, is_causal=1)
    q, k, v = rand(102, f32, (1, 2, 2, 8), (1, 2, 4, 8), (1, 2, 4, 8))
    add("test_attention_4d_causal_nonpad_continued_prefill", 24,
        {"Q": q, "K": k, "V": v, "nonpad_kv_seqlen": np.array([4], np.int64)}, is_causal=1)
    q, k, v, pk, pv = rand(103, f32, (2, 3, 4, 8), (2, 3, 4, 8), (2, 3, 4, 8), (2, 3, 3, 8), (2, 3, 3, 8))
    add("test_attention_4d_causal_with_past_and_present", 24,
        {"Q": q, "K": k, "V": v, "past_key": pk, "past_value": pv}, OUTS[:3], is_causal=1)
    q, k, v = rand(104, f32, (1, 2, 2, 8), (1, 2, 2, 8), (1, 2, 2, 8))
    add("test_attention_causal_boolmask_nan_robustness", 24,
        {"Q": q, "K": k, "V": v, "attn_mask": np.array([[True, False], [False, False]])}, is_causal=1)
    row0_empty = np.array([[False, False], [True, True]])
    q, k, v = rand(105, f32, (1, 2, 2, 8), (1, 2, 2, 8), (1, 2, 2, 8))
    add("test_attention_23_boolmask_fullymasked_row_nan_robustness", 23,
        {"Q": q, "K": k, "V": v, "attn_mask": row0_empty})
    q, k, v = rand(106, f32, (1, 2, 4, 8), (1, 2, 4, 8), (1, 2, 4, 8))
    add("test_attention_4d_causal_nonpad_negative_offset_structural_empty", 24,
        {"Q": q, "K": k, "V": v, "nonpad_kv_seqlen": np.array([2], np.int64)}, is_causal=1)
    q, k, v = rand(107, f32, (1, 2, 2, 8), (1, 2, 2, 8), (1, 2, 2, 8))
    for opset in (23, 24):
        add(f"test_attention_{opset}_fullymasked_qk_matmul_output_mode3_zero", opset,
            {"Q": q, "K": k, "V": v, "attn_mask": row0_empty}, ("Y", "qk_matmul_output"),
            qk_matmul_output_mode=3)
    q, k, v = rand(108, f16, (1, 2, 2, 8), (1, 2, 2, 8), (1, 2, 2, 8))
    add("test_attention_24_qk_matmul_output_mode3_softmax_precision", 24,
        {"Q": q, "K": k, "V": v, "attn_mask": row0_empty}, ("Y", "qk_matmul_output"),
        qk_matmul_output_mode=3, softmax_precision=TensorProto.FLOAT)
    # Each of is_causal, attn_mask and nonpad_kv_seqlen changes the result (onnx's generator).
    T, F = True, False
    mask = np.array([[[[T, T, T, F, F, F], [T, T, T, F, F, F], [T, F, T, T, F, F]]],
                     [[[T, T, T, T, F, F], [T, T, T, T, F, F], [T, T, F, T, T, F]]]])
    q, k, v = rand(109, f32, (2, 2, 3, 8), (2, 2, 6, 8), (2, 2, 6, 8))
    add("test_attention_4d_causal_nonpad_attn_mask_composition", 24,
        {"Q": q, "K": k, "V": v, "attn_mask": mask, "nonpad_kv_seqlen": np.array([4, 5], np.int64)},
        is_causal=1)
    q, k, v = rand(110, f32, (3, 2, 2, 8), (3, 2, 6, 8), (3, 2, 6, 8))
    add("test_attention_4d_causal_nonpad_batch_prefill", 24,
        {"Q": q, "K": k, "V": v, "nonpad_kv_seqlen": np.array([4, 5, 6], np.int64)}, is_causal=1)

    # Opset 25: left_window_size / right_window_size.
    q, k, v = rand(111, f32, (2, 3, 4, 8), (2, 3, 6, 8), (2, 3, 6, 8))
    add("test_attention_local_window", 25, {"Q": q, "K": k, "V": v}, is_causal=1, left_window_size=2)
    zero = np.zeros((1, 1, 5, 1), f32)
    add("test_attention_bidirectional_window", 25,
        {"Q": zero, "K": zero, "V": np.arange(5, dtype=f32).reshape(1, 1, 5, 1)},
        left_window_size=1, right_window_size=2)
    q, k, v = rand(112, f32, (2, 3, 4, 8), (2, 3, 6, 8), (2, 3, 6, 8))
    add("test_attention_local_window_default", 25, {"Q": q, "K": k, "V": v},
        left_window_size=-1, right_window_size=-1)
    q, k, v = rand(113, f32, (2, 3, 4, 8), (2, 3, 6, 8), (2, 3, 6, 8))
    add("test_attention_local_window_rank1_boolean_mask", 25,
        {"Q": q, "K": k, "V": v, "attn_mask": np.array([T, T, T, T, F, F])}, is_causal=1, left_window_size=2)
    q, k, v, pk, pv = rand(114, f32, (2, 3, 4, 8), (2, 3, 2, 8), (2, 3, 2, 8), (2, 3, 8, 8), (2, 3, 8, 8))
    add("test_attention_local_window_with_past", 25,
        {"Q": q, "K": k, "V": v, "past_key": pk, "past_value": pv}, OUTS[:3], is_causal=1, left_window_size=2)
    nonpad = np.array([6, 7], np.int64)
    for i, (kind, shape) in enumerate((("rank3_head", (3, 4, 8)), ("rank4_batch", (2, 1, 4, 8)),
                                       ("rank2", (1, 8)))):
        q, k, v, mask = rand(115 + i, f32, (2, 3, 4, 8), (2, 3, 8, 8), (2, 3, 8, 8), shape)
        add(f"test_attention_local_window_ext_cache_{kind}_mask", 25,
            {"Q": q, "K": k, "V": v, "attn_mask": mask, "nonpad_kv_seqlen": nonpad},
            is_causal=1, left_window_size=2)
    add("test_attention_local_window_ext_cache_float16_mask", 25,
        {"Q": np.zeros((2, 3, 4, 8), f16), "K": np.zeros((2, 3, 8, 8), f16), "V": np.ones((2, 3, 8, 8), f16),
         "attn_mask": np.zeros((1, 8), f16), "nonpad_kv_seqlen": nonpad}, is_causal=1, left_window_size=2)
    q, k, v = rand(118, f32, (2, 4, 32), (2, 6, 8), (2, 6, 6))
    add("test_attention_3d_local_window", 25, {"Q": q, "K": k, "V": v},
        q_num_heads=4, kv_num_heads=1, is_causal=1, left_window_size=2)
    q, k, v = rand(119, f32, (2, 4, 4, 8), (2, 2, 6, 8), (2, 2, 6, 6))
    mask = np.ones((2, 4, 4, 6), bool)
    mask[:, :, 0, :] = False
    add("test_attention_local_window_gqa_rank4_mask", 25,
        {"Q": q, "K": k, "V": v, "attn_mask": mask}, ("Y", "qk_matmul_output"), is_causal=1,
        left_window_size=2, softcap=2.0, softmax_precision=TensorProto.DOUBLE, qk_matmul_output_mode=3)
    print(f"[onnx_attention_cases] {len(names)} Attention cases of onnx's main branch in {root}")


if __name__ == "__main__":
    main()
