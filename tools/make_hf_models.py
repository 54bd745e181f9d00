#!/usr/bin/python3
"""Two tiny Hugging Face model folders with seeded weights, in the layout transformers.js
(4.x) loads offline from env.localModelPath with env.allowRemoteModels = false, for
tests/js/transformers_test.mjs and tests/js/transformers_browser.mjs (issue 34):

  make_hf_models.py OUT_DIR [--seed N]

writes
  OUT_DIR/tiny-bert/   a BERT encoder for `feature-extraction` (model_type "bert"): inputs
                       input_ids, attention_mask, token_type_ids int64 [batch, seq], output
                       last_hidden_state float [batch, seq, 32]; 2 layers, hidden 32, 4
                       heads, intermediate 64, LayerNormalization, erf GELU; a WordPiece
                       tokenizer.json (BertNormalizer, BertPreTokenizer, [CLS] $A [SEP];
                       319 tokens: the specials, letters, digits, ##pieces, common words).
  OUT_DIR/tiny-qwen2/  a decoder for `text-generation` (model_type "qwen2"):
                       tools/make_llm.py's tiny model in its plain layout (transformers.js's
                       exports: input_ids, attention_mask, position_ids,
                       past_key_values.{i}.key/.value -> logits, present.{i}.key/.value;
                       2 layers, hidden 64, 4 heads, 2 KV heads, vocabulary 512), made by
                       running make_llm.py; a byte-level BPE tokenizer.json (GPT-2/Qwen2
                       style, 256 byte tokens, 253 merges learned from a short text, 3
                       special tokens: 509 <|endoftext|> (BOS and EOS), 510, 511).
each with config.json, tokenizer.json, tokenizer_config.json (and generation_config.json
for the decoder) and
  onnx/model.onnx            fp32 (transformers.js dtype 'fp32')
  onnx/model_quantized.onnx  dtype 'q8': what transformers.js's scripts/quantize.py writes
                             for q8 (onnxruntime.quantization's ONNXQuantizer, IntegerOps,
                             weight type QInt8 since neither model has Conv or
                             GroupQueryAttention, per_channel and reduce_range off): every
                             MatMul with a 2-D float initializer as B becomes
                             DynamicQuantizeLinear(A) -> MatMulInteger(A_q, W_q, A_zp, W_zp)
                             -> Cast(float) -> Mul(., A_scale * W_scale), W int8 symmetric per
                             tensor (zero point 0, range [-127, 127]); every Gather of an
                             embedding table (a 2-D float initializer) gathers its uint8
                             asymmetric per-tensor copy then DequantizeLinear (GatherQuant).
                             make_llm.py's rotary cos/sin tables are left float (optimum's
                             exports compute them from position_ids, so real q8 files have
                             no such Gather).
  onnx/model_q4.onnx         dtype 'q4': com.microsoft MatMulNBits (bits 4, block_size 32,
                             ONNX Runtime's MatMulNBits layout) for every MatMul with a
                             constant weight: make_llm.py --weights q4 for the decoder,
                             make_llm.py's Graph.linear (the same quantiser) for the encoder.
                             The blocks are asymmetric with zero points (make_llm.py's
                             choice); transformers.js's own q4 conversion is symmetric (no
                             zero-point input).

Weights: numpy RandomState(seed) for the encoder, make_llm.py --seed for the decoder (its
projections are scaled so that greedy tokens vary). Needs python3-onnx (1.12 is enough)
and numpy; no torch, no onnxruntime.
"""
import argparse
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections import Counter

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import make_llm  # noqa: E402  (Graph, its MatMulNBits quantiser, SIZES)

BERT = dict(layers=2, hidden=32, heads=4, intermediate=64, max_positions=128, type_vocab=2, eps=1e-12)
DECODER_SIZE = "tiny"

# ----------------------------------------------------------------------------- tokenizers

BERT_SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
BERT_WORDS = """the a an and or but of to in on at for with from by as is are was were be been
it this that these those he she they we you i his her their our your my me him them us not no
yes all some any one two three four five six seven eight nine ten many more most few each
every other such only same so than too very can will just should now then here there when where
why how what which who whom time year day week night morning people man woman child world life
hand part place case point way thing fact group number home water room mother father house city
name word story model engine browser server test result value answer question small large little
big long short old new good bad great high low right left first last next early late young
cat dog bird fish tree river sea sun moon star sky rain snow wind fire light dark red green blue
run runs walk talk read write play sing eat drink sleep think know see look make take give
find tell ask work seem feel try leave call keep let begin show hear turn start move live
believe bring happen stand lose pay meet include continue set learn change lead understand watch
follow stop create speak open close quick slow happy sad warm cold""".split()
BERT_PIECES = ["##s", "##es", "##ed", "##ing", "##ly", "##er", "##est", "##tion", "##ness", "##ful"]

DECODER_SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
# The byte-level BPE's training text (its merges; any text would do).
BPE_TEXT = """Once upon a time there was a small engine that ran the same model on every
computer in the world. People asked it many questions, and it answered each one with the
same numbers, whether the question came from a browser, a server or a phone. The engine
was quick and careful: it read the model, planned its memory, and ran every layer in the
order the graph gave. When the weights were quantized to eight or four bits, it still gave
the answers the reference gave, token after token. A cat sat by the window and watched the
rain. The dog ran in the green park under a blue sky, and the birds sang in the old tree
near the river. In the morning the sun rose over the sea; at night the moon and the stars
lit the dark water. She wrote a long story about a young man who walked from one city to
the next, looking for the house where his mother and father had lived. They talked about
time, about work, about the first and the last day of the year. We think, we learn, we
change; the world keeps turning. Numbers like 1, 2, 3, 10, 42 and 2048 appear in the text
too, with punctuation: commas, periods, questions? answers! and (parentheses)."""


def bert_tokenizer():
    vocab = BERT_SPECIALS + list(".,!?;:'\"-()") + [str(d) for d in range(10)] + \
        [chr(c) for c in range(ord("a"), ord("z") + 1)] + ["##" + chr(c) for c in range(ord("a"), ord("z") + 1)]
    vocab += [w for w in dict.fromkeys(BERT_WORDS) if w not in vocab] + BERT_PIECES
    ids = {t: i for i, t in enumerate(vocab)}
    added = [dict(id=ids[t], content=t, single_word=False, lstrip=False, rstrip=False, normalized=False, special=True)
             for t in BERT_SPECIALS]
    special = lambda t: {"SpecialToken": {"id": t, "type_id": 0}}
    tok = {
        "version": "1.0", "truncation": None, "padding": None, "added_tokens": added,
        "normalizer": {"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True,
                       "strip_accents": None, "lowercase": True},
        "pre_tokenizer": {"type": "BertPreTokenizer"},
        "post_processor": {
            "type": "TemplateProcessing",
            "single": [special("[CLS]"), {"Sequence": {"id": "A", "type_id": 0}}, special("[SEP]")],
            "pair": [special("[CLS]"), {"Sequence": {"id": "A", "type_id": 0}}, special("[SEP]"),
                     {"Sequence": {"id": "B", "type_id": 1}}, {"SpecialToken": {"id": "[SEP]", "type_id": 1}}],
            "special_tokens": {t: {"id": t, "ids": [ids[t]], "tokens": [t]} for t in ("[CLS]", "[SEP]")},
        },
        "decoder": {"type": "WordPiece", "prefix": "##", "cleanup": True},
        "model": {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
                  "max_input_chars_per_word": 100, "vocab": ids},
    }
    config = {"tokenizer_class": "BertTokenizer", "do_lower_case": True, "model_max_length": BERT["max_positions"],
              "cls_token": "[CLS]", "sep_token": "[SEP]", "pad_token": "[PAD]", "unk_token": "[UNK]",
              "mask_token": "[MASK]", "clean_up_tokenization_spaces": True, "strip_accents": None,
              "tokenize_chinese_chars": True}
    return tok, config, len(vocab)


def bytes_to_unicode():
    """GPT-2's map of the 256 bytes to printable characters (what ByteLevel uses)."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("\xa1"), ord("\xac") + 1)) + list(range(ord("\xae"), ord("\xff") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(bs, map(chr, cs)))


def bpe_tokenizer(vocab_size):
    """A byte-level BPE with vocab_size tokens: the 256 bytes, merges learned greedily from
    BPE_TEXT (the most frequent pair first, ties by the pair's text), the special tokens
    last. Deterministic."""
    b2u = bytes_to_unicode()
    n_merges = vocab_size - 256 - len(DECODER_SPECIALS)
    # GPT-2's pre-tokenization (ASCII text, so the Unicode classes reduce to these).
    words = re.findall(r"'s|'t|'re|'ve|'m|'ll|'d| ?[A-Za-z]+| ?[0-9]+| ?[^\sA-Za-z0-9]+|\s+(?!\S)|\s+", BPE_TEXT)
    counts = Counter(tuple(b2u[b] for b in w.encode("utf-8")) for w in words)
    vocab = {b2u[b]: b for b in range(256)}  # byte tokens first, in byte order
    merges = []
    while len(vocab) < 256 + n_merges:
        pairs = Counter()
        for w, c in counts.items():
            for a, b in zip(w, w[1:]):
                pairs[(a, b)] += c
        if not pairs:
            sys.exit("make_hf_models: BPE_TEXT has too few pairs for the merges")
        best = min(pairs, key=lambda p: (-pairs[p], p))
        merges.append(f"{best[0]} {best[1]}")
        tok = best[0] + best[1]
        if tok not in vocab:
            vocab[tok] = len(vocab)
        merged = Counter()
        for w, c in counts.items():
            out, i = [], 0
            while i < len(w):
                if i + 1 < len(w) and (w[i], w[i + 1]) == best:
                    out.append(tok)
                    i += 2
                else:
                    out.append(w[i])
                    i += 1
            merged[tuple(out)] += c
        counts = merged
    added = []
    for t in DECODER_SPECIALS:
        added.append(dict(id=len(vocab), content=t, single_word=False, lstrip=False, rstrip=False, normalized=False,
                          special=True))
        vocab[t] = len(vocab)
    assert len(vocab) == vocab_size
    tok = {
        "version": "1.0", "truncation": None, "padding": None, "added_tokens": added,
        "normalizer": None,
        "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": True},
        "post_processor": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": True},
        "decoder": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": True},
        "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": "",
                  "end_of_word_suffix": "", "fuse_unk": False, "byte_fallback": False, "vocab": vocab, "merges": merges},
    }
    eos = DECODER_SPECIALS[0]
    config = {"tokenizer_class": "Qwen2Tokenizer", "bos_token": None, "eos_token": eos, "pad_token": eos,
              "unk_token": None, "model_max_length": 2048, "add_prefix_space": False, "errors": "replace",
              "clean_up_tokenization_spaces": False, "split_special_tokens": False}
    return tok, config, vocab[eos]

# ----------------------------------------------------------------------------- the encoder


def bert_weights(rng, vocab):
    H, I, T = BERT["hidden"], BERT["intermediate"], BERT["type_vocab"]
    normal = lambda shape, std: (rng.standard_normal(shape) * std).astype(np.float32)
    ln = lambda: (1.0 + normal(H, 0.1), normal(H, 0.1))
    w = dict(word=normal((vocab, H), 1.0), pos=normal((BERT["max_positions"], H), 0.5), type=normal((T, H), 0.5),
             ln=ln(), layers=[])
    for _ in range(BERT["layers"]):
        w["layers"].append(dict(
            q=normal((H, H), 1.5 / math.sqrt(H)), q_bias=normal(H, 0.2),
            k=normal((H, H), 1.5 / math.sqrt(H)), k_bias=normal(H, 0.2),
            v=normal((H, H), 1.0 / math.sqrt(H)), v_bias=normal(H, 0.1),
            o=normal((H, H), 1.0 / math.sqrt(H)), o_bias=normal(H, 0.1), ln1=ln(),
            up=normal((H, I), 1.0 / math.sqrt(H)), up_bias=normal(I, 0.1),
            down=normal((I, H), 1.0 / math.sqrt(I)), down_bias=normal(H, 0.1), ln2=ln()))
    return w


def build_bert(weights, w):
    """BertModel's graph as optimum exports it (opset 17), through make_llm.Graph so that
    q4 is make_llm.py's MatMulNBits."""
    H, nh = BERT["hidden"], BERT["heads"]
    D = H // nh
    g = make_llm.Graph(weights, None)
    i64 = lambda name, v: g.const(name, v, np.int64)
    f32 = lambda name, v: g.const(name, v, np.float32)

    def layer_norm(x, gamma_beta, name):
        return g.node("LayerNormalization", [x, g.init(f"{name}.weight", gamma_beta[0]), g.init(f"{name}.bias", gamma_beta[1])],
                      name, axis=-1, epsilon=BERT["eps"])

    words = g.node("Gather", [g.init("embeddings.word_embeddings.weight", w["word"]), "input_ids"], "embeddings/Gather_word")
    seq = g.node("Gather", [g.node("Shape", ["input_ids"], "embeddings/Shape"), i64("index_1", 1)], "embeddings/seq", axis=0)
    pos_ids = g.node("Unsqueeze", [g.node("Range", [i64("zero_i64", 0), seq, i64("one_i64", 1)], "embeddings/Range"),
                                   i64("axes_0", [0])], "embeddings/position_ids")
    pos = g.node("Gather", [g.init("embeddings.position_embeddings.weight", w["pos"]), pos_ids], "embeddings/Gather_pos")
    types = g.node("Gather", [g.init("embeddings.token_type_embeddings.weight", w["type"]), "token_type_ids"],
                   "embeddings/Gather_type")
    x = g.node("Add", [g.node("Add", [words, types], "embeddings/Add_type"), pos], "embeddings/Add_pos")
    x = layer_norm(x, w["ln"], "embeddings.LayerNorm")
    # The additive mask [B, 1, 1, T]: 0 where attention_mask is 1, the float minimum where 0.
    m = g.node("Cast", [g.node("Unsqueeze", ["attention_mask", i64("axes_1_2", [1, 2])], "mask/Unsqueeze")], "mask/Cast",
               to=TensorProto.FLOAT)
    mask = g.node("Mul", [g.node("Sub", [f32("one_f32", 1.0), m], "mask/Sub"), f32("min_f32", np.finfo(np.float32).min)],
                  "mask/Mul")
    heads = i64("shape_heads", [0, 0, nh, D])
    merge = i64("shape_merge", [0, 0, H])
    scale = f32("attn_scale", math.sqrt(D))
    f32("sqrt2_f32", math.sqrt(2.0))
    f32("half_f32", 0.5)
    for i, L in enumerate(w["layers"]):
        p = f"encoder.layer.{i}"
        split = lambda t, perm, n: g.node("Transpose", [g.node("Reshape", [t, heads], f"{p}.attention/{n}/Reshape")],
                                          f"{p}.attention/{n}/Transpose", perm=perm)
        q = split(g.linear(x, L["q"], f"{p}.attention.self.query", L["q_bias"]), [0, 2, 1, 3], "q")
        kt = split(g.linear(x, L["k"], f"{p}.attention.self.key", L["k_bias"]), [0, 2, 3, 1], "k")
        v = split(g.linear(x, L["v"], f"{p}.attention.self.value", L["v_bias"]), [0, 2, 1, 3], "v")
        scores = g.node("Div", [g.node("MatMul", [q, kt], f"{p}.attention/MatMul_qk"), scale], f"{p}.attention/Div")
        probs = g.node("Softmax", [g.node("Add", [scores, mask], f"{p}.attention/Add_mask")], f"{p}.attention/Softmax", axis=-1)
        ctx = g.node("MatMul", [probs, v], f"{p}.attention/MatMul_pv")
        ctx = g.node("Reshape", [g.node("Transpose", [ctx], f"{p}.attention/Transpose_ctx", perm=[0, 2, 1, 3]), merge],
                     f"{p}.attention/Reshape_ctx")
        o = g.linear(ctx, L["o"], f"{p}.attention.output.dense", L["o_bias"])
        x = layer_norm(g.node("Add", [o, x], f"{p}.attention.output/Add"), L["ln1"], f"{p}.attention.output.LayerNorm")
        h = g.linear(x, L["up"], f"{p}.intermediate.dense", L["up_bias"])
        erf = g.node("Erf", [g.node("Div", [h, "sqrt2_f32"], f"{p}.intermediate/gelu/Div")], f"{p}.intermediate/gelu/Erf")
        h = g.node("Mul", [g.node("Mul", [h, g.node("Add", [erf, "one_f32"], f"{p}.intermediate/gelu/Add")],
                                  f"{p}.intermediate/gelu/Mul"), "half_f32"], f"{p}.intermediate/gelu/Mul_half")
        o = g.linear(h, L["down"], f"{p}.output.dense", L["down_bias"])
        x = layer_norm(g.node("Add", [o, x], f"{p}.output/Add"), L["ln2"], f"{p}.output.LayerNorm")
    g.nodes[-1].output[:] = ["last_hidden_state"]
    i64t, f32t = TensorProto.INT64, TensorProto.FLOAT
    dims = ["batch_size", "sequence_length"]
    inputs = [helper.make_tensor_value_info(n, i64t, dims) for n in ("input_ids", "attention_mask", "token_type_ids")]
    outputs = [helper.make_tensor_value_info("last_hidden_state", f32t, dims + [H])]
    opsets = [helper.make_opsetid("", 17)] + ([helper.make_opsetid(make_llm.MS, 1)] if weights == "q4" else [])
    model = helper.make_model(helper.make_graph(g.nodes, f"tiny-bert-{weights}", inputs, outputs, g.inits),
                              opset_imports=opsets, producer_name="onemodel tools/make_hf_models.py")
    model.ir_version = 8
    return model

# ----------------------------------------------------------------------------- q8


def quantize_q8(model, keep_float=()):
    """transformers.js's q8 (see the module's doc): MatMul with a constant 2-D B ->
    DynamicQuantizeLinear + MatMulInteger + Cast + Mul, B int8 symmetric per tensor; Gather
    of a 2-D float initializer (not in keep_float) -> Gather of its uint8 copy +
    DequantizeLinear. Node and tensor names follow onnxruntime.quantization's."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    g = m.graph
    inits = {t.name: t for t in g.initializer}
    const_f32 = lambda n: n in inits and inits[n].data_type == TensorProto.FLOAT and len(inits[n].dims) == 2
    new_inits, done, out_nodes = [], {}, []
    add = lambda name, array: new_inits.append(numpy_helper.from_array(np.ascontiguousarray(array), name)) or name

    def weight_q(name):  # int8 symmetric per tensor, as ONNXQuantizer's QInt8 weights
        if name not in done:
            w = numpy_helper.to_array(inits[name]).astype(np.float32)
            amax = float(np.max(np.abs(w)))
            scale = np.float32(amax / 127.0 if amax > 0 else 1.0)
            q = np.clip(np.round(w / scale), -127, 127).astype(np.int8)
            done[name] = (add(f"{name}_quantized", q), add(f"{name}_scale", np.array(scale, np.float32)),
                          add(f"{name}_zero_point", np.array(0, np.int8)))
        return done[name]

    def data_q(name):  # uint8 asymmetric per tensor, as a dynamic QUInt8 "activation"
        if name not in done:
            w = numpy_helper.to_array(inits[name]).astype(np.float32)
            lo, hi = min(float(w.min()), 0.0), max(float(w.max()), 0.0)
            scale = np.float32((hi - lo) / 255.0 if hi > lo else 1.0)
            zp = np.uint8(np.clip(np.round(-lo / scale), 0, 255))
            q = np.clip(np.round(w / scale) + zp, 0, 255).astype(np.uint8)
            done[name] = (add(f"{name}_quantized", q), add(f"{name}_scale", np.array(scale, np.float32)),
                          add(f"{name}_zero_point", np.array(zp, np.uint8)))
        return done[name]

    dyn = {}  # activation -> its DynamicQuantizeLinear outputs (one per activation, as ORT shares them)
    for node in g.node:
        if node.op_type == "MatMul" and const_f32(node.input[1]):
            a, y = node.input[0], node.output[0]
            wq, ws, wz = weight_q(node.input[1])
            if a not in dyn:
                dyn[a] = (f"{a}_quantized", f"{a}_scale", f"{a}_zero_point")
                out_nodes.append(helper.make_node("DynamicQuantizeLinear", [a], list(dyn[a]), name=f"{a}_QuantizeLinear"))
            aq, as_, az = dyn[a]
            base = node.name
            out_nodes += [
                helper.make_node("MatMulInteger", [aq, wq, az, wz], [f"{y}_output_quantized"], name=f"{base}_quant"),
                helper.make_node("Mul", [as_, ws], [f"{base}_quant_scales_mul:0"], name=f"{base}_quant_scales_mul"),
                helper.make_node("Cast", [f"{y}_output_quantized"], [f"{y}_output_quantized_cast_output"],
                                 name=f"{y}_output_quantized_cast", to=TensorProto.FLOAT),
                helper.make_node("Mul", [f"{y}_output_quantized_cast_output", f"{base}_quant_scales_mul:0"], [y],
                                 name=f"{base}_quant_output_scale_mul"),
            ]
        elif node.op_type == "Gather" and const_f32(node.input[0]) and node.input[0] not in keep_float:
            dq, ds, dz = data_q(node.input[0])
            y = node.output[0]
            out_nodes += [
                helper.make_node("Gather", [dq, node.input[1]], [f"{y}_quantized"], name=f"{node.name}_quant",
                                 axis=next((a.i for a in node.attribute if a.name == "axis"), 0)),
                helper.make_node("DequantizeLinear", [f"{y}_quantized", ds, dz], [y], name=f"{y}_DequantizeLinear"),
            ]
        else:
            out_nodes.append(node)
    del g.node[:]
    g.node.extend(out_nodes)
    used = {i for n in g.node for i in n.input}
    keep = [t for t in g.initializer if t.name in used] + new_inits
    del g.initializer[:]
    g.initializer.extend(keep)
    m.producer_name = "onemodel tools/make_hf_models.py (q8)"
    onnx.checker.check_model(m)
    return m

# ----------------------------------------------------------------------------- the folders


def write_json(path, obj):
    with open(path, "w") as f:
        json.dump(obj, f, indent=1, ensure_ascii=False)
        f.write("\n")


def make_bert(out, seed):
    tok, tok_config, vocab = bert_tokenizer()
    os.makedirs(os.path.join(out, "onnx"), exist_ok=True)
    write_json(os.path.join(out, "tokenizer.json"), tok)
    write_json(os.path.join(out, "tokenizer_config.json"), tok_config)
    write_json(os.path.join(out, "config.json"), {
        "architectures": ["BertModel"], "model_type": "bert", "hidden_size": BERT["hidden"],
        "num_hidden_layers": BERT["layers"], "num_attention_heads": BERT["heads"],
        "intermediate_size": BERT["intermediate"], "hidden_act": "gelu", "max_position_embeddings": BERT["max_positions"],
        "type_vocab_size": BERT["type_vocab"], "vocab_size": vocab, "layer_norm_eps": BERT["eps"], "pad_token_id": 0,
        "hidden_dropout_prob": 0.0, "attention_probs_dropout_prob": 0.0, "initializer_range": 0.02,
        "position_embedding_type": "absolute", "use_cache": False, "torch_dtype": "float32",
        "transformers_version": "4.46.0"})
    w = bert_weights(np.random.RandomState(seed), vocab)
    fp32 = build_bert("fp32", w)
    onnx.checker.check_model(fp32)
    onnx.save(fp32, os.path.join(out, "onnx", "model.onnx"))
    onnx.save(quantize_q8(fp32), os.path.join(out, "onnx", "model_quantized.onnx"))
    q4 = build_bert("q4", w)
    onnx.checker.check_model(q4)
    onnx.save(q4, os.path.join(out, "onnx", "model_q4.onnx"))


def make_decoder(out, seed):
    cfg = make_llm.SIZES[DECODER_SIZE]
    tok, tok_config, eos = bpe_tokenizer(cfg["vocab"])
    os.makedirs(os.path.join(out, "onnx"), exist_ok=True)
    write_json(os.path.join(out, "tokenizer.json"), tok)
    write_json(os.path.join(out, "tokenizer_config.json"), tok_config)
    write_json(os.path.join(out, "config.json"), {
        "architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2", "hidden_size": cfg["hidden"],
        "num_hidden_layers": cfg["layers"], "num_attention_heads": cfg["heads"],
        "num_key_value_heads": cfg["kv_heads"], "head_dim": cfg["head_dim"], "intermediate_size": cfg["intermediate"],
        "hidden_act": "silu", "vocab_size": cfg["vocab"], "max_position_embeddings": cfg["max_positions"],
        "rope_theta": cfg["rope_theta"], "rms_norm_eps": cfg["eps"], "tie_word_embeddings": cfg["tied"],
        "bos_token_id": eos, "eos_token_id": eos, "use_cache": True, "torch_dtype": "float32",
        "transformers_version": "4.46.0"})
    write_json(os.path.join(out, "generation_config.json"), {"bos_token_id": eos, "eos_token_id": eos})
    with tempfile.TemporaryDirectory() as tmp:
        for weights, name in (("fp32", "model.onnx"), ("q4", "model_q4.onnx")):
            path = os.path.join(tmp, f"{weights}.onnx")
            subprocess.run([sys.executable, os.path.join(HERE, "make_llm.py"), "--size", DECODER_SIZE, "--layout", "plain",
                            "--weights", weights, "--seed", str(seed), path], check=True, stdout=subprocess.DEVNULL)
            shutil.copyfile(path, os.path.join(out, "onnx", name))
    fp32 = onnx.load(os.path.join(out, "onnx", "model.onnx"))
    q8 = quantize_q8(fp32, keep_float=("rope.cos", "rope.sin"))
    onnx.save(q8, os.path.join(out, "onnx", "model_quantized.onnx"))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", help="the folder that gets tiny-bert/ and tiny-qwen2/")
    ap.add_argument("--seed", type=int, default=7)
    a = ap.parse_args()
    make_bert(os.path.join(a.out, "tiny-bert"), a.seed)
    make_decoder(os.path.join(a.out, "tiny-qwen2"), a.seed)
    for name in ("tiny-bert", "tiny-qwen2"):
        files = sorted(os.path.relpath(os.path.join(d, f), a.out) for d, _, fs in os.walk(os.path.join(a.out, name)) for f in fs)
        size = sum(os.path.getsize(os.path.join(a.out, f)) for f in files)
        print(f"make_hf_models: {name}: {len(files)} files, {size / 1e6:.2f} MB")


if __name__ == "__main__":
    main()
