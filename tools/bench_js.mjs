#!/usr/bin/env node
// The JS API's cost, side by side in one run (never part of the tests):
// - per-call overhead of session.run on a tiny model (Relu of 4 floats): OneModel's JS
//   API vs onnxruntime-web (wasm, 1 thread) vs OneModel's own `bench` (the node CLI on
//   the same wasm build, no JS API in between);
// - mobilenet_v3_large and crnn (their stored inputs): the same three.
// Medians of --runs timed runs after a warm-up. Prints the CPU, then a markdown table.
//   node tools/bench_js.mjs [--runs N] [--models DIR]
// Needs `npm install` and tools/prepare.sh (the models); the wasm build (tools/build.sh wasm).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { readNpy } from './lib/npy.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
let runs = 20, modelsDir = path.join(ROOT, 'models');
for (let i = 0; i < args.length; ++i) {
  if (args[i] === '--runs') runs = Number(args[++i]);
  else if (args[i] === '--models') modelsDir = path.resolve(args[++i]);
  else { console.error(`bench_js: unknown argument ${args[i]}`); process.exit(2); }
}
const median = (v) => { const s = [...v].sort((a, b) => a - b); const n = s.length; return n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2; };
const log = (s) => process.stderr.write(`[bench_js] ${s}\n`);
const cpu = fs.readFileSync('/proc/cpuinfo', 'utf8');
const field = (k) => (new RegExp(`^${k}\\s*:\\s*(.*)$`, 'm').exec(cpu) || [])[1];

// The tiny model: Relu of float[4], written as ONNX bytes here.
const { oneNode } = await import(path.join(ROOT, 'tests/js/onnx_writer.mjs'));
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'om-benchjs-'));
const tiny = path.join(tmp, 'tiny.onnx');
fs.writeFileSync(tiny, oneNode('Relu', 1, [4]));
const tinyInput = path.join(tmp, 'x.npy');
{
  let h = "{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }";
  h += ' '.repeat(118 - h.length) + '\n';
  fs.writeFileSync(tinyInput, Buffer.concat([Buffer.from('\x93NUMPY\x01\x00', 'latin1'), Buffer.from([h.length, 0]), Buffer.from(h, 'latin1'),
    Buffer.from(new Float32Array([-1, 0.5, 2, -3]).buffer)]));
}

// Both packages share node_modules' onnxruntime-common, hence one backend registry:
// onnxruntime-web is imported first so that it holds 'wasm', and OneModel is asked for by
// its own name. Each session's handler is checked to be the backend meant.
const web = await import('onnxruntime-web');
web.env.wasm.numThreads = 1;  // OneModel's wasm build is single-threaded
const ours = await import(path.join(ROOT, 'js/index.node.mjs'));

async function timeApi(ort, file, feeds, n, warm = 3) {
  const mine = ort === ours;
  const s = await ort.InferenceSession.create(file, { executionProviders: [mine ? 'onemodel' : 'wasm'] });
  if (('onemodelEngine' in s.handler) !== mine) throw new Error(`bench_js: ${mine ? 'OneModel' : 'onnxruntime-web'} did not get the session`);
  for (let k = 0; k < warm; ++k) await s.run(feeds);
  const t = [];
  for (let r = 0; r < n; ++r) { const t0 = performance.now(); await s.run(feeds); t.push(performance.now() - t0); }
  await s.release();
  return median(t);
}
function timeCli(file, inputs, n) {
  const a = [path.join(ROOT, 'js/bin/onemodel.mjs'), '--simd', 'on', 'bench', file, '--runs', String(n)];
  for (const [name, f] of Object.entries(inputs)) a.push('--input', `${name}=${f}`);
  const out = execFileSync('node', a, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  return Number(/median_ms=([0-9.]+)/.exec(out.trim().split('\n').pop())[1]);
}
function feedsFor(ort, inputs) {
  const f = {};
  for (const [name, file] of Object.entries(inputs)) { const t = readNpy(file); f[name] = new ort.Tensor(t.type, t.data, t.dims); }
  return f;
}

const TINY_RUNS = 20000;
const rows = [];
{
  const inputs = { x0: tinyInput };
  // Many calls after a long warm-up: the JIT settles, the per-call cost shows.
  const n = TINY_RUNS;
  const r = { name: 'tiny (Relu, 4 floats)', unit: 'us' };
  r.api = (await timeApi(ours, tiny, feedsFor(ours, inputs), n, 2000)) * 1000;
  r.web = (await timeApi(web, tiny, feedsFor(web, inputs), n, 2000)) * 1000;
  r.cli = timeCli(tiny, inputs, n) * 1000;
  rows.push(r);
  log(`${r.name}: API ${r.api.toFixed(1)} us, onnxruntime-web ${r.web.toFixed(1)} us, CLI bench ${r.cli.toFixed(1)} us`);
}
for (const name of ['mobilenet_v3_large', 'crnn']) {
  const file = path.join(modelsDir, `${name}.onnx`);
  const list = path.join(modelsDir, `${name}.inputs`);
  if (!fs.existsSync(file) || !fs.existsSync(list)) { log(`${name}: not prepared (tools/prepare.sh), skipped`); continue; }
  const inputs = Object.fromEntries(fs.readFileSync(list, 'utf8').trim().split('\n').map((l) => l.split('=')).map(([k, v]) => [k, path.join(modelsDir, v)]));
  const r = { name, unit: 'ms' };
  r.api = await timeApi(ours, file, feedsFor(ours, inputs), runs);
  r.web = await timeApi(web, file, feedsFor(web, inputs), runs);
  r.cli = timeCli(file, inputs, runs);
  rows.push(r);
  log(`${name}: API ${r.api.toFixed(2)} ms, onnxruntime-web ${r.web.toFixed(2)} ms, CLI bench ${r.cli.toFixed(2)} ms`);
}
fs.rmSync(tmp, { recursive: true, force: true });

console.log(`CPU: ${field('model name')} (family ${field('cpu family')}, model ${field('model')}); node ${process.version}; wasm SIMD128, 1 thread.`);
console.log(`Medians of ${runs} runs after 3 warm-ups (tiny: ${TINY_RUNS} runs after 2000).`);
console.log('');
console.log('| model | OneModel JS API | OneModel `bench` (same wasm) | API / bench | onnxruntime-web 1.30 | API / ORT-web |');
console.log('|---|---|---|---|---|---|');
for (const r of rows) {
  const f = (x) => `${x.toFixed(r.unit === 'us' ? 1 : 2)} ${r.unit}`;
  console.log(`| ${r.name} | ${f(r.api)} | ${f(r.cli)} | ${(r.api / r.cli).toFixed(3)} | ${f(r.web)} | ${(r.api / r.web).toFixed(2)} |`);
}
