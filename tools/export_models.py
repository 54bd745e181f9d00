#!/usr/bin/python3
"""Exports the torch architectures of the reference model set with seeded weights.

Run with Debian's python (/usr/bin/python3: torch 1.13, torchvision 0.14, onnx 1.12):

    /usr/bin/python3 tools/export_models.py NAME OUT.onnx [--inputs DIR]

NAME is one of resnet50, mobilenet_v3_large, bert_base, minilm_l6, whisper_encoder,
whisper_decoder. Weights come from torch.manual_seed(0) (the architectures follow the
published ones; trained weights cannot be downloaded here), so the file is the same
bytes on every run; tools/models.json pins its SHA-256. With --inputs, the model's
stored inputs are written there as .npy (see tools/make_inputs.py for the others): the
whisper decoder's past keys and values and audio features come from running the seeded
torch encoder and decoder on the stored mel features, so the decoder step sees the
state a real transcription would give it.
"""
import argparse
import math
import os
import sys

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

OPSET = 17  # the newest opset torch 1.13 exports


def init_transformer(module, std=0.02):
    """BERT-style initialisation: N(0, std) weights, zero biases, LayerNorm 1/0."""
    for m in module.modules():
        if isinstance(m, (nn.Linear, nn.Conv1d)):
            nn.init.normal_(m.weight, std=std)
            if m.bias is not None:
                nn.init.zeros_(m.bias)
        elif isinstance(m, nn.Embedding):
            nn.init.normal_(m.weight, std=std)
        elif isinstance(m, nn.LayerNorm):
            nn.init.ones_(m.weight)
            nn.init.zeros_(m.bias)


# ---------------------------------------------------------------- BERT / MiniLM
class BertLayer(nn.Module):
    def __init__(self, hidden, heads, inter):
        super().__init__()
        self.heads = heads
        self.q = nn.Linear(hidden, hidden)
        self.k = nn.Linear(hidden, hidden)
        self.v = nn.Linear(hidden, hidden)
        self.o = nn.Linear(hidden, hidden)
        self.ln1 = nn.LayerNorm(hidden, eps=1e-12)
        self.up = nn.Linear(hidden, inter)
        self.down = nn.Linear(inter, hidden)
        self.ln2 = nn.LayerNorm(hidden, eps=1e-12)

    def split(self, x):
        b, s, h = x.shape
        return x.view(b, s, self.heads, h // self.heads).transpose(1, 2)

    def forward(self, x, bias):
        b, s, h = x.shape
        q, k, v = self.split(self.q(x)), self.split(self.k(x)), self.split(self.v(x))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(h // self.heads) + bias
        ctx = torch.matmul(torch.softmax(scores, dim=-1), v).transpose(1, 2).reshape(b, s, h)
        x = self.ln1(x + self.o(ctx))
        return self.ln2(x + self.down(F.gelu(self.up(x))))


class Bert(nn.Module):
    """BERT encoder (Devlin et al. 2019) with the pooler, as Hugging Face's BertModel."""

    def __init__(self, layers, hidden, heads, inter, vocab=30522, max_pos=512):
        super().__init__()
        self.word = nn.Embedding(vocab, hidden)
        self.pos = nn.Embedding(max_pos, hidden)
        self.token_type = nn.Embedding(2, hidden)
        self.ln = nn.LayerNorm(hidden, eps=1e-12)
        self.layers = nn.ModuleList([BertLayer(hidden, heads, inter) for _ in range(layers)])
        self.pool = nn.Linear(hidden, hidden)

    def forward(self, input_ids, attention_mask, token_type_ids):
        s = input_ids.shape[1]
        pos = torch.arange(s, dtype=torch.int64).unsqueeze(0)
        x = self.ln(self.word(input_ids) + self.pos(pos) + self.token_type(token_type_ids))
        bias = (1.0 - attention_mask[:, None, None, :].to(torch.float32)) * -10000.0
        for layer in self.layers:
            x = layer(x, bias)
        return x, torch.tanh(self.pool(x[:, 0]))


# ---------------------------------------------------------------- Whisper
def sinusoids(length, channels, max_timescale=10000):
    inc = math.log(max_timescale) / (channels // 2 - 1)
    inv = torch.exp(-inc * torch.arange(channels // 2))
    t = torch.arange(length)[:, None] * inv[None, :]
    return torch.cat([torch.sin(t), torch.cos(t)], dim=1)


class WhisperAttention(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.query = nn.Linear(d, d)
        self.key = nn.Linear(d, d, bias=False)
        self.value = nn.Linear(d, d)
        self.out = nn.Linear(d, d)

    def attend(self, q, k, v, causal):
        b, n, d = q.shape
        h = self.heads
        scale = (d // h) ** -0.25
        q = q.view(b, n, h, -1).transpose(1, 2) * scale
        k = k.view(b, k.shape[1], h, -1).permute(0, 2, 3, 1) * scale
        v = v.view(b, v.shape[1], h, -1).transpose(1, 2)
        w = torch.matmul(q, k)
        if causal and n > 1:  # only the eager prefix run (empty cache) has several queries
            w = w + torch.full((n, n), float("-inf")).triu_(1)
        return self.out(torch.matmul(torch.softmax(w, dim=-1), v).transpose(1, 2).reshape(b, n, d))


class WhisperBlock(nn.Module):
    def __init__(self, d, heads, cross):
        super().__init__()
        self.attn = WhisperAttention(d, heads)
        self.attn_ln = nn.LayerNorm(d)
        self.cross = WhisperAttention(d, heads) if cross else None
        self.cross_ln = nn.LayerNorm(d) if cross else None
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))
        self.mlp_ln = nn.LayerNorm(d)

    def forward(self, x, xa=None, past_k=None, past_v=None):
        a = self.attn_ln(x)
        k, v = self.attn.key(a), self.attn.value(a)
        if past_k is not None:
            k = torch.cat([past_k, k], dim=1)
            v = torch.cat([past_v, v], dim=1)
        x = x + self.attn.attend(self.attn.query(a), k, v, causal=past_k is not None)
        if self.cross is not None:
            c = self.cross_ln(x)
            x = x + self.cross.attend(self.cross.query(c), self.cross.key(xa), self.cross.value(xa), causal=False)
        x = x + self.mlp(self.mlp_ln(x))
        return x, k, v


class WhisperEncoder(nn.Module):
    """Whisper's audio encoder (Radford et al. 2022), small: 12 layers, width 768."""

    def __init__(self, n_mels=80, ctx=1500, d=768, heads=12, layers=12):
        super().__init__()
        self.conv1 = nn.Conv1d(n_mels, d, kernel_size=3, padding=1)
        self.conv2 = nn.Conv1d(d, d, kernel_size=3, stride=2, padding=1)
        self.register_buffer("positional_embedding", sinusoids(ctx, d))
        self.blocks = nn.ModuleList([WhisperBlock(d, heads, cross=False) for _ in range(layers)])
        self.ln_post = nn.LayerNorm(d)

    def forward(self, mel):
        x = F.gelu(self.conv2(F.gelu(self.conv1(mel)))).permute(0, 2, 1)
        x = x + self.positional_embedding
        for b in self.blocks:
            x, _, _ = b(x)
        return self.ln_post(x)


class WhisperDecoder(nn.Module):
    """Whisper's text decoder, small: one step with the self-attention cache as inputs."""

    def __init__(self, vocab=51865, ctx=448, d=768, heads=12, layers=12):
        super().__init__()
        self.token_embedding = nn.Embedding(vocab, d)
        self.positional_embedding = nn.Parameter(torch.empty(ctx, d))
        self.blocks = nn.ModuleList([WhisperBlock(d, heads, cross=True) for _ in range(layers)])
        self.ln = nn.LayerNorm(d)

    def forward(self, tokens, audio_features, *past):
        offset = past[0].shape[1]
        x = self.token_embedding(tokens) + self.positional_embedding[offset: offset + tokens.shape[1]]
        present = []
        for i, b in enumerate(self.blocks):
            x, k, v = b(x, audio_features, past[2 * i], past[2 * i + 1])
            present += [k, v]
        x = self.ln(x)
        logits = torch.matmul(x, self.token_embedding.weight.t())
        return (logits, *present)


# ---------------------------------------------------------------- export
def export(model, args, path, input_names, output_names, dynamic_axes=None):
    model.eval()
    with torch.no_grad():
        torch.onnx.export(model, args, path, opset_version=OPSET, input_names=input_names,
                          output_names=output_names, dynamic_axes=dynamic_axes or {},
                          do_constant_folding=True)


def save(dirname, name, array):
    if dirname:
        np.save(os.path.join(dirname, name + ".npy"), np.ascontiguousarray(array))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("name")
    ap.add_argument("out")
    ap.add_argument("--inputs", help="folder for the stored inputs this export derives")
    a = ap.parse_args()
    torch.manual_seed(0)
    torch.set_num_threads(1)  # the seeded weights and derived inputs do not depend on threads
    name = a.name
    if name in ("resnet50", "mobilenet_v3_large"):
        import torchvision
        model = getattr(torchvision.models, name)(weights=None)
        export(model, (torch.zeros(1, 3, 224, 224),), a.out, ["input"], ["logits"])
    elif name in ("bert_base", "minilm_l6"):
        cfg = dict(bert_base=(12, 768, 12, 3072), minilm_l6=(6, 384, 12, 1536))[name]
        model = Bert(*cfg)
        init_transformer(model)
        ids = torch.ones(1, 128, dtype=torch.int64)
        export(model, (ids, ids, torch.zeros_like(ids)), a.out,
               ["input_ids", "attention_mask", "token_type_ids"], ["last_hidden_state", "pooler_output"],
               {n: {1: "sequence"} for n in ("input_ids", "attention_mask", "token_type_ids", "last_hidden_state")})
    elif name == "whisper_encoder":
        model = WhisperEncoder()
        init_transformer(model)
        export(model, (torch.zeros(1, 80, 3000),), a.out, ["mel"], ["audio_features"])
    elif name == "whisper_decoder":
        # The encoder is built first from the same seed so that the decoder's stored
        # inputs can be derived from the encoder's output on the stored mel features.
        enc = WhisperEncoder()
        init_transformer(enc)
        model = WhisperDecoder()
        init_transformer(model)
        nn.init.normal_(model.positional_embedding, std=0.02)
        layers = len(model.blocks)
        past_names = [f"past_{kv}_{i}" for i in range(layers) for kv in ("key", "value")]
        present_names = [f"present_{kv}_{i}" for i in range(layers) for kv in ("key", "value")]
        # The traced cache length (5) differs from the stored one (3), so a cache length
        # baked into the graph as a constant would show in the comparison with torch.
        past = [torch.zeros(1, 5, 768) for _ in range(2 * layers)]
        dyn = {n: {1: "past"} for n in past_names}
        dyn.update({n: {1: "total"} for n in present_names})
        export(model, (torch.zeros(1, 1, dtype=torch.int64), torch.zeros(1, 1500, 768), *past), a.out,
               ["tokens", "audio_features", *past_names], ["logits", *present_names], dyn)
        if a.inputs:
            mel = np.load(os.path.join(a.inputs, "mel_80x3000.npy"))
            with torch.no_grad():
                enc.eval()
                model.eval()
                audio = enc(torch.from_numpy(mel))
                # Whisper's start of transcript: <|startoftranscript|> <|en|> <|transcribe|>,
                # run as a prefix; the stored step feeds <|notimestamps|>.
                prefix = torch.tensor([[50258, 50259, 50359]], dtype=torch.int64)
                empty = [torch.zeros(1, 0, 768) for _ in range(2 * layers)]
                outs = model(prefix, audio, *empty)
            save(a.inputs, "whisper_audio_features", audio.numpy())
            save(a.inputs, "whisper_tokens", np.array([[50363]], dtype=np.int64))
            for n, t in zip(past_names, outs[1:]):
                save(a.inputs, "whisper_" + n, t.numpy())
    else:
        sys.exit(f"export_models.py: unknown model '{name}'")


if __name__ == "__main__":
    main()
