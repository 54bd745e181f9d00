// Greedy decoding of a decoder-only model with a KV cache through onnxruntime-common's API,
// so the same loop runs on onnxruntime-node, onnxruntime-web and OneModel's package
// (tools/bench_llm.mjs, tests/js/llm_test.mjs). The model is one tools/make_llm.py writes,
// or any with the same IO: input_ids and attention_mask [B, T] (int64), position_ids when
// the model has it, past_key_values.{i}.key/.value -> present.{i}.key/.value, logits.
//
// The cache is never copied by this loop: each run's present.* Tensors are fed back as the
// next run's past_key_values.* as they are; attention_mask is a view of one preallocated
// row of ones; with `preallocate`, the decode steps' logits go to one Tensor given in
// `fetches`, filled in place (onnxruntime-node and OneModel do; onnxruntime-web 1.30 leaves
// such a Tensor unwritten, which the first step detects and reports).
import { readFileSync } from 'node:fs';

// MODEL.json beside MODEL.onnx (tools/make_llm.py): layers, kv_heads, head_dim, vocab, ...
export function readConfig(modelPath) {
  return JSON.parse(readFileSync(modelPath.replace(/\.onnx$/, '') + '.json', 'utf8'));
}

// n token ids in [0, vocab) from a seed (a 32-bit LCG: the same prompt in every engine).
export function promptIds(n, vocab, seed = 1) {
  const ids = [];
  let s = seed >>> 0;
  for (let i = 0; i < n; ++i) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    ids.push(s % vocab);
  }
  return ids;
}

// The index of the largest logit of the last position (the first one on ties).
export function argmaxLast(logits) {
  const v = logits.dims[logits.dims.length - 1];
  const d = logits.data;
  const base = d.length - v;
  let best = 0, bestV = d[base];
  for (let i = 1; i < v; ++i) if (d[base + i] > bestV) { bestV = d[base + i]; best = i; }
  return best;
}

// Yields {step, token, ms} for step 0 (the prefill: the whole prompt in one run, the past
// empty [1, kv_heads, 0, head_dim]) and then `steps` decode steps of one token each; ms is
// the step's wall time (feeds, run, argmax). `cfg` needs kv_heads, head_dim and vocab.
export async function* greedy(ort, session, cfg, prompt, steps, { preallocate = false } = {}) {
  const names = session.inputNames;
  const pastNames = names.filter((n) => n.startsWith('past_key_values.'));
  const presentOf = (n) => n.replace(/^past_key_values\./, 'present.');
  const hasPositions = names.includes('position_ids');
  const total = prompt.length + steps;
  const ones = new BigInt64Array(total).fill(1n);
  const int64 = (values, dims) => new ort.Tensor('int64', BigInt64Array.from(values, BigInt), dims);

  const empty = new ort.Tensor('float32', new Float32Array(0), [1, cfg.kv_heads, 0, cfg.head_dim]);
  let past = Object.fromEntries(pastNames.map((n) => [n, empty]));
  let fetches;
  if (preallocate) {
    fetches = { logits: new ort.Tensor('float32', new Float32Array(cfg.vocab), [1, 1, cfg.vocab]) };
    for (const n of pastNames) fetches[presentOf(n)] = null;
  }

  let ids = prompt, length = 0;  // length: tokens in the cache
  for (let step = 0; step <= steps; ++step) {
    const t0 = performance.now();
    const s = ids.length;
    const feeds = {
      input_ids: int64(ids, [1, s]),
      attention_mask: new ort.Tensor('int64', ones.subarray(0, length + s), [1, length + s]),
      ...past,
    };
    if (hasPositions) feeds.position_ids = int64(Array.from({ length: s }, (_, i) => length + i), [1, s]);
    const pre = step > 0 && fetches;
    if (pre && step === 1) fetches.logits.data.fill(NaN);
    const out = pre ? await session.run(feeds, fetches) : await session.run(feeds);
    if (pre && step === 1 && Number.isNaN(fetches.logits.data[0])) {
      throw new Error('the engine left the preallocated logits unwritten (onnxruntime-web 1.30 does so for cpu Tensors in fetches): run without preallocate');
    }
    const token = argmaxLast(out.logits);
    past = {};
    for (const n of pastNames) past[n] = out[presentOf(n)];
    length += s;
    ids = [token];
    yield { step, token, ms: performance.now() - t0 };
  }
}

// Runs greedy() to the end: {tokens (steps + 1 of them), prefillMs, stepMs[]}.
export async function generate(ort, session, cfg, prompt, steps, options) {
  const tokens = [], stepMs = [];
  let prefillMs = 0;
  for await (const { step, token, ms } of greedy(ort, session, cfg, prompt, steps, options)) {
    tokens.push(token);
    if (step === 0) prefillMs = ms; else stepMs.push(ms);
  }
  return { tokens, prefillMs, stepMs };
}
