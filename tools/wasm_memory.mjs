// A session's memory on the wasm engine at several thread counts (issue: the worker pool
// must not multiply the model): for each count, a fresh node process loads the package
// with env.wasm.numThreads = N, creates a session for MODEL, runs it once on its stored
// inputs (tools/models.json), and reports the wasm memory (malloc's bytes in use and the
// memory's size: one shared memory whatever the thread count) and the process's RSS.
//   node tools/wasm_memory.mjs [--models DIR] [--threads 1,4] [MODEL ...]   (default: resnet50 bert_base)
// Prints a markdown table; not part of the tests.
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
let modelsDir = path.join(ROOT, 'models'), threads = [1, 4];
const names = [];
for (let i = 0; i < args.length; ++i) {
  if (args[i] === '--models') modelsDir = path.resolve(args[++i]);
  else if (args[i] === '--threads') threads = args[++i].split(',').map(Number);
  else if (args[i] === '--child') {
    // In the child: args[i + 1] = model path, args[i + 2] = threads, the rest NAME=FILE.
    const [file, n, ...inputs] = args.slice(i + 1);
    const ort = await import(path.join(ROOT, 'js/index.node.mjs'));
    const { readNpy } = await import(path.join(ROOT, 'tools/lib/npy.mjs'));
    ort.env.onemodel.engine = 'wasm';
    ort.env.wasm.numThreads = Number(n);
    const feeds = {};
    for (const a of inputs) {
      const eq = a.indexOf('=');
      const t = readNpy(a.slice(eq + 1));
      feeds[a.slice(0, eq)] = new ort.Tensor(t.type, t.data, t.dims);
    }
    const s = await ort.InferenceSession.create(file);
    const loaded = await ort.wasmMemory();
    await s.run(feeds);
    const ran = await ort.wasmMemory();
    const m = s.handler.module;
    console.log(JSON.stringify({ flavour: m.onemodelFlavour, threads: m.onemodelThreads, loaded, ran, rss: process.memoryUsage().rss }));
    process.exit(0);
  } else names.push(args[i]);
}
if (!names.length) names.push('resnet50', 'bert_base');
const spec = JSON.parse(fs.readFileSync(path.join(ROOT, 'tools/models.json'), 'utf8'));
const byName = new Map(spec.models.map((m) => [m.name, m]));
const cpuinfo = fs.readFileSync('/proc/cpuinfo', 'utf8');
const field = (k) => (new RegExp(`^${k}\\s*:\\s*(.*)$`, 'm').exec(cpuinfo) || [])[1] || '?';
const mib = (b) => (b / 2 ** 20).toFixed(1);
console.log(`CPU: ${field('model name')} (family ${field('cpu family')}, model ${field('model')}); node ${process.version}.`);
console.log('');
console.log('| model | threads | flavour | malloc in use after load (MiB) | after a run (MiB) | wasm memory size (MiB) | process RSS (MiB) |');
console.log('|---|---|---|---|---|---|---|');
for (const name of names) {
  const m = byName.get(name);
  const file = path.join(modelsDir, `${name}.onnx`);
  if (!m || !fs.existsSync(file)) { console.error(`[wasm_memory] ${name}: not prepared, skipped`); continue; }
  for (const n of threads) {
    const a = [fileURLToPath(import.meta.url), '--child', file, String(n)];
    for (const [k, f] of Object.entries(m.inputs)) a.push(`${k}=${path.join(modelsDir, 'inputs', f)}`);
    const r = JSON.parse(execFileSync(process.execPath, a, { encoding: 'utf8', maxBuffer: 1 << 26 }).trim().split('\n').pop());
    console.log(`| ${name} | ${r.threads} | ${r.flavour} | ${mib(r.loaded.inUse)} | ${mib(r.ran.inUse)} | ${mib(r.ran.heapSize)} | ${mib(r.rss)} |`);
  }
}
