#!/usr/bin/env node
// The npm package in node on its native engine (the N-API addon), side by side in one
// run with the same engine's CLI (`onemodel bench`, no JS in between) and
// onnxruntime-node, at 1 and 2 threads (never part of the tests). Medians of --runs timed
// runs, in 4 rounds interleaving the three (each engine in a new process per round) so
// that a slow minute of the machine falls on all of them. Prints the CPU, then a markdown table with the
// ratios docs/performance.md records.
//   node tools/bench_node.mjs [--runs N] [--warmup W] [--threads "1 2"] [--only a,b] [--models DIR]
// W warm-up runs (default 40) before the timed ones in each process: in node an output's
// buffer goes back to the engine only when V8 collects its ArrayBuffer, so until the first
// collection every run's outputs are fresh pages (page faults); the CLI frees them at once.
// Needs `npm install`, tools/prepare.sh (the models) and the native build (tools/build.sh native).
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { readNpy } from './lib/npy.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
let runs = 20, warmup = 40, modelsDir = path.join(ROOT, 'models'), threads = [1, 2];
let only = ['mobilenet_v3_large', 'crnn', 'resnet50'];
for (let i = args[0] === '--worker' ? 5 : 0; i < args.length; ++i) {
  if (args[i] === '--runs') runs = Number(args[++i]);
  else if (args[i] === '--warmup') warmup = Number(args[++i]);
  else if (args[i] === '--models') modelsDir = path.resolve(args[++i]);
  else if (args[i] === '--threads') threads = args[++i].trim().split(/\s+/).map(Number);
  else if (args[i] === '--only') only = args[++i].split(',');
  else { console.error(`bench_node: unknown argument ${args[i]}`); process.exit(2); }
}
const median = (v) => { const s = [...v].sort((a, b) => a - b); const n = s.length; return n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2; };
const log = (s) => process.stderr.write(`[bench_node] ${s}\n`);
const cpu = fs.readFileSync('/proc/cpuinfo', 'utf8');
const field = (k) => (new RegExp(`^${k}\\s*:\\s*(.*)$`, 'm').exec(cpu) || [])[1];
const CLI = path.join(ROOT, 'build/native/onemodel');

// Each engine runs in its own process (onnxruntime-node's worker threads spin after its
// runs and would take the CPUs from a run of the other in the same process): this file
// with --worker ours|ort MODEL THREADS N prints N run times as JSON. OneModel is asked for
// by its own name, on its native engine; each session's handler is checked.
function feedsFor(ort, inputs) {
  const f = {};
  for (const [name, file] of Object.entries(inputs)) { const t = readNpy(file); f[name] = new ort.Tensor(t.type, t.data, t.dims); }
  return f;
}
const inputsOf = (name) => Object.fromEntries(fs.readFileSync(path.join(modelsDir, `${name}.inputs`), 'utf8').trim().split('\n')
  .map((l) => l.split('=')).map(([k, v]) => [k, path.join(modelsDir, v)]));
if (args[0] === '--worker') {
  const [, who, name, t, n] = args;
  const mine = who === 'ours';
  const ort = mine ? await import(path.join(ROOT, 'js/index.node.mjs')) : await import('onnxruntime-node');
  if (mine) ort.env.onemodel.engine = 'native';
  const s = await ort.InferenceSession.create(path.join(modelsDir, `${name}.onnx`),
    { executionProviders: [mine ? 'onemodel' : 'cpu'], intraOpNumThreads: Number(t), interOpNumThreads: 1 });
  if (('onemodelEngine' in s.handler) !== mine) throw new Error(`bench_node: ${mine ? 'OneModel' : 'onnxruntime-node'} did not get the session`);
  const feeds = feedsFor(ort, inputsOf(name));
  for (let k = 0; k < warmup; ++k) await s.run(feeds);
  const out = [];
  for (let r = 0; r < Number(n); ++r) { const t0 = performance.now(); await s.run(feeds); out.push(performance.now() - t0); }
  console.log(JSON.stringify({ times: out, engine: mine ? ort.engineInfo() : null }));
  process.exit(0);
}
let engine = null;
function timeWorker(who, name, t, n) {
  const out = execFileSync(process.execPath, [fileURLToPath(import.meta.url), '--worker', who, name, String(t), String(n), '--models', modelsDir, '--warmup', String(warmup)],
    { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  const r = JSON.parse(out.trim().split('\n').pop());
  if (r.engine) engine = r.engine;
  return r.times;
}
function timeCli(file, inputs, t, n) {
  const a = ['--threads', String(t), 'bench', file, '--runs', String(n)];
  for (const [name, f] of Object.entries(inputs)) a.push('--input', `${name}=${f}`);
  const out = execFileSync(CLI, a, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  return Number(/median_ms=([0-9.]+)/.exec(out.trim().split('\n').pop())[1]);
}

const rows = [];
for (const name of only) {
  const file = path.join(modelsDir, `${name}.onnx`);
  const list = path.join(modelsDir, `${name}.inputs`);
  if (!fs.existsSync(file) || !fs.existsSync(list)) { log(`${name}: not prepared (tools/prepare.sh), skipped`); continue; }
  const inputs = inputsOf(name);
  for (const t of threads) {
    const ta = [], tb = [], tc = [];
    const rounds = 4, per = Math.max(1, Math.ceil(runs / rounds));
    for (let r = 0; r < rounds; ++r) {
      ta.push(...timeWorker('ours', name, t, per));
      tb.push(...timeWorker('ort', name, t, per));
      tc.push(timeCli(file, inputs, t, per));
    }
    const row = { name, t, api: median(ta), ort: median(tb), cli: median(tc) };
    rows.push(row);
    log(`${name} ${t}t: package ${row.api.toFixed(2)} ms, CLI ${row.cli.toFixed(2)} ms, onnxruntime-node ${row.ort.toFixed(2)} ms`);
  }
}

console.log(`CPU: ${field('model name')} (family ${field('cpu family')}, model ${field('model')}), ${cpu.match(/^processor/gm).length} CPUs; node ${process.version}; OneModel native engine ${engine?.target}, exact mode.`);
console.log(`Medians of ${runs} runs in 4 interleaved rounds, each round a new process per engine after ${warmup} warm-up runs (CLI: the median of its rounds' medians, its own warm-up).`);
console.log('');
console.log('| model | threads | npm package (native) | `onemodel bench` | package / bench | onnxruntime-node 1.30 | package / ORT-node |');
console.log('|---|---|---|---|---|---|---|');
for (const r of rows) {
  console.log(`| ${r.name} | ${r.t} | ${r.api.toFixed(2)} ms | ${r.cli.toFixed(2)} ms | ${(r.api / r.cli).toFixed(3)} | ${r.ort.toFixed(2)} ms | ${(r.api / r.ort).toFixed(2)} |`);
}
