#!/usr/bin/env node
// Greedy generation with a KV cache through OneModel's JS API (onnxruntime-web's API):
//
//   node examples/llm/generate.mjs [MODEL.onnx] [--steps 32] [--prompt 1,2,3]
//
// MODEL is a decoder-only LLM with the IO of ONNX Runtime GenAI's and optimum's exports:
// input_ids, attention_mask, (position_ids), past_key_values.{i}.key/.value -> logits,
// present.{i}.key/.value. A missing MODEL is made first with tools/make_llm.py (a tiny
// 4-bit decoder with seeded weights: the tokens are ids, there is no tokenizer).
import * as ort from '../../js/index.node.mjs';  // in an app: import * as ort from 'onemodel';
import { existsSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const args = process.argv.slice(2);
const flag = (name, fallback) => { const i = args.indexOf(name); return i < 0 ? fallback : args.splice(i, 2)[1]; };
const steps = Number(flag('--steps', 32));
const prompt = flag('--prompt', '1,2,3,4,5,6,7,8').split(',').map(Number);
const file = args[0] ?? 'build/llm/tiny-genai-q4.onnx';
if (!existsSync(file)) {
  const maker = fileURLToPath(new URL('../../tools/make_llm.py', import.meta.url));
  execFileSync('/usr/bin/python3', [maker, '--size', 'tiny', '--layout', 'genai', '--weights', 'q4', file], { stdio: 'inherit' });
}

const session = await ort.InferenceSession.create(file);
const pastNames = session.inputNames.filter((n) => n.startsWith('past_key_values.'));
const [, kvHeads, , headDim] = session.inputMetadata.find((m) => m.name === pastNames[0]).shape;
const int64 = (values) => new ort.Tensor('int64', BigInt64Array.from(values, BigInt), [1, values.length]);

// The first run sees the whole prompt and an empty cache [1, kvHeads, 0, headDim].
const empty = new ort.Tensor('float32', new Float32Array(0), [1, kvHeads, 0, headDim]);
const past = Object.fromEntries(pastNames.map((n) => [n, empty]));
let ids = prompt, cached = 0, decodeMs = 0;
const tokens = [];
for (let step = 0; step <= steps; ++step) {
  const t0 = performance.now();
  const feeds = { input_ids: int64(ids), attention_mask: int64(new Array(cached + ids.length).fill(1)), ...past };
  if (session.inputNames.includes('position_ids')) feeds.position_ids = int64(ids.map((_, i) => cached + i));
  const out = await session.run(feeds);
  // Greedy: the largest logit of the last position.
  const vocab = out.logits.dims[2];
  const last = out.logits.data.subarray(out.logits.data.length - vocab);
  let next = 0;
  for (let v = 1; v < vocab; ++v) if (last[v] > last[next]) next = v;
  // This run's present cache is the next run's past, as it is (no copy).
  for (const n of pastNames) past[n] = out[n.replace('past_key_values.', 'present.')];
  cached += ids.length;
  ids = [next];
  tokens.push(next);
  const ms = performance.now() - t0;
  if (step === 0) console.log(`prefill: ${prompt.length} tokens in ${ms.toFixed(1)} ms`); else decodeMs += ms;
}
console.log(`greedy tokens: ${tokens.join(' ')}`);
if (steps) console.log(`decode: ${steps} tokens, ${(steps / decodeMs * 1000).toFixed(1)} tokens/s`);
await session.release();
