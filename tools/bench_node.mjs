#!/usr/bin/env node
// The npm package in node on its native engine (the N-API addon), side by side in one
// run with the same engine's CLI (`onemodel bench`, no JS in between) and
// onnxruntime-node, at 1 and 2 threads (never part of the tests). Medians of --runs timed
// runs after 3 warm-ups each; the three are interleaved per round so that a slow minute
// of the machine falls on all of them. Prints the CPU, then a markdown table with the
// ratios docs/performance.md records.
//   node tools/bench_node.mjs [--runs N] [--threads "1 2"] [--only a,b] [--models DIR]
// Needs `npm install`, tools/prepare.sh (the models) and the native build (tools/build.sh native).
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { readNpy } from './lib/npy.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
let runs = 20, modelsDir = path.join(ROOT, 'models'), threads = [1, 2];
let only = ['mobilenet_v3_large', 'crnn', 'resnet50'];
for (let i = 0; i < args.length; ++i) {
  if (args[i] === '--runs') runs = Number(args[++i]);
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

// onnxruntime-node first (it holds 'cpu'); OneModel asked for by its own name, on its
// native engine; each session's handler checked to be the backend meant.
const peer = await import('onnxruntime-node');
const ours = await import(path.join(ROOT, 'js/index.node.mjs'));
ours.env.onemodel.engine = 'native';
const engine = ours.engineInfo();
log(`OneModel engine: ${JSON.stringify(engine)}`);

function feedsFor(ort, inputs) {
  const f = {};
  for (const [name, file] of Object.entries(inputs)) { const t = readNpy(file); f[name] = new ort.Tensor(t.type, t.data, t.dims); }
  return f;
}
async function session(ort, file, t) {
  const mine = ort === ours;
  const s = await ort.InferenceSession.create(file, { executionProviders: [mine ? 'onemodel' : 'cpu'], intraOpNumThreads: t, interOpNumThreads: 1 });
  if (('onemodelEngine' in s.handler) !== mine) throw new Error(`bench_node: ${mine ? 'OneModel' : 'onnxruntime-node'} did not get the session`);
  return s;
}
async function timeRuns(s, feeds, n) {
  const out = [];
  for (let r = 0; r < n; ++r) { const t0 = performance.now(); await s.run(feeds); out.push(performance.now() - t0); }
  return out;
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
  const inputs = Object.fromEntries(fs.readFileSync(list, 'utf8').trim().split('\n').map((l) => l.split('=')).map(([k, v]) => [k, path.join(modelsDir, v)]));
  for (const t of threads) {
    const a = await session(ours, file, t), b = await session(peer, file, t);
    const fa = feedsFor(ours, inputs), fb = feedsFor(peer, inputs);
    await timeRuns(a, fa, 3); await timeRuns(b, fb, 3);
    const ta = [], tb = [], tc = [];
    const rounds = 4, per = Math.max(1, Math.ceil(runs / rounds));
    for (let r = 0; r < rounds; ++r) {
      ta.push(...await timeRuns(a, fa, per));
      tb.push(...await timeRuns(b, fb, per));
      tc.push(timeCli(file, inputs, t, per));
    }
    await a.release(); await b.release();
    const row = { name, t, api: median(ta), ort: median(tb), cli: median(tc) };
    rows.push(row);
    log(`${name} ${t}t: package ${row.api.toFixed(2)} ms, CLI ${row.cli.toFixed(2)} ms, onnxruntime-node ${row.ort.toFixed(2)} ms`);
  }
}

console.log(`CPU: ${field('model name')} (family ${field('cpu family')}, model ${field('model')}), ${fs.readFileSync('/proc/cpuinfo', 'utf8').match(/^processor/gm).length} CPUs; node ${process.version}; OneModel native engine ${engine.target}, exact mode.`);
console.log(`Medians of ${runs} runs after 3 warm-ups, in 4 interleaved rounds (CLI: the median of its 4 rounds' medians).`);
console.log('');
console.log('| model | threads | npm package (native) | `onemodel bench` | package / bench | onnxruntime-node 1.30 | package / ORT-node |');
console.log('|---|---|---|---|---|---|---|');
for (const r of rows) {
  console.log(`| ${r.name} | ${r.t} | ${r.api.toFixed(2)} ms | ${r.cli.toFixed(2)} ms | ${(r.api / r.cli).toFixed(3)} | ${r.ort.toFixed(2)} ms | ${(r.api / r.ort).toFixed(2)} |`);
}
