// Benchmarks OneModel's exact and fast modes against ONNX Runtime 1.30 side by side in one run:
// native (build/native/onemodel bench) vs onnxruntime-node at 1 and 2 threads, and
// wasm SIMD in node (js/bin/onemodel.mjs bench) vs onnxruntime-web's wasm backend at
// 1 thread and at 2 (our SIMD128 + threads flavour, ORT's env.wasm.numThreads = 2), on the
// reference models with their stored inputs; then GEMM GFLOP/s at
// 1024 x 1024 x 1024 per ISA cap. First it prints the CPU (family, model) and the
// register-only multiply+add peak per ISA (`onemodel bench-peak --all`); each model's
// GFLOP/s (tools/model_flops.py: its Conv/MatMul/Gemm work) is given as a share of the
// best ISA's peak. Medians of --runs timed runs after one warm-up; ratios are ours / ORT
// (below 1.0: we are faster). Fast mode's columns (`--mode fast`, docs/graph-passes.md
// "Fast passes"; on wasm the SIMD128 + relaxed SIMD flavour, node run with
// --experimental-wasm-relaxed-simd) follow each exact one; --no-fast leaves them out.
//   node tools/bench.mjs [--runs N] [--only a,b] [--no-wasm] [--no-gemm] [--no-fast] [--models DIR]
// --only: these models, in this order (any of tools/models.json, e.g. the int8 ones;
// default: the issue's table).
// Needs `npm install` (onnxruntime-node, onnxruntime-web) and tools/prepare.sh. Prints a
// markdown table (docs/performance.md records one); never part of the tests.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
let runs = 10, only = null, wasm = true, gemm = true, fast = true, modelsDir = path.join(ROOT, 'models');
for (let i = 0; i < args.length; ++i) {
  if (args[i] === '--runs') runs = Number(args[++i]);
  else if (args[i] === '--only') only = new Set(args[++i].split(','));
  else if (args[i] === '--no-wasm') wasm = false;
  else if (args[i] === '--no-gemm') gemm = false;
  else if (args[i] === '--no-fast') fast = false;
  else if (args[i] === '--models') modelsDir = path.resolve(args[++i]);
  else { console.error(`bench: unknown argument ${args[i]}`); process.exit(2); }
}
const MODELS = ['resnet50', 'mobilenet_v3_large', 'dbnet', 'crnn', 'bert_base', 'minilm_l6', 'whisper_encoder'];
const spec = JSON.parse(fs.readFileSync(path.join(ROOT, 'tools/models.json'), 'utf8'));
const byName = new Map(spec.models.map((m) => [m.name, m]));
const median = (v) => { const s = [...v].sort((a, b) => a - b); const n = s.length; return n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2; };
const log = (s) => process.stderr.write(`[bench] ${s}\n`);

function timeOurs(cmd, pre, file, m, threads) {
  const a = [...pre, '--threads', String(threads), 'bench', file, '--runs', String(runs)];
  for (const [name, f] of Object.entries(m.inputs)) a.push('--input', `${name}=${path.join(modelsDir, 'inputs', f)}`);
  const out = execFileSync(cmd, a, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], maxBuffer: 1 << 26 });
  const r = /median_ms=([0-9.]+)/.exec(out.trim().split('\n').pop());
  return Number(r[1]);
}

// The machine: a table read elsewhere says what it was measured on.
const cpuinfo = fs.readFileSync('/proc/cpuinfo', 'utf8');
const cpuField = (k) => (new RegExp(`^${k}\\s*:\\s*(.*)$`, 'm').exec(cpuinfo) || [])[1] || '?';
const CPU = `${cpuField('model name')} (family ${cpuField('cpu family')}, model ${cpuField('model')})`;
const OM = path.join(ROOT, 'build/native/onemodel');
const peaks = execFileSync(OM, ['bench-peak', '--all'], { encoding: 'utf8' }).trim().split('\n').map((l) => {
  const m = /target=(\S+) lanes=(\d+) gflops=([0-9.]+)/.exec(l);
  return { isa: m[1], lanes: Number(m[2]), gflops: Number(m[3]) };
});
const bestPeak = peaks.reduce((a, b) => (b.gflops > a.gflops ? b : a));
console.log(`CPU: ${CPU}, ${os.cpus().length} cores.`);
console.log('');
console.log('Register-only multiply+add peak, 1 thread (`onemodel bench-peak --all`; a separate multiply and add, exact mode\'s arithmetic):');
console.log('');
console.log('| ISA | f32 lanes | GFLOP/s |');
console.log('|---|---|---|');
for (const p of peaks) console.log(`| ${p.isa} | ${p.lanes} | ${p.gflops.toFixed(1)} |`);
console.log('');
function modelGflop(file, m) {
  try {
    const a = [path.join(ROOT, 'tools/model_flops.py'), file];
    for (const [name, f] of Object.entries(m.inputs)) a.push(`${name}=${path.join(modelsDir, 'inputs', f)}`);
    return Number(/GFLOP=([0-9.]+)/.exec(execFileSync('/usr/bin/python3', a, { encoding: 'utf8' }))[1]);
  } catch (e) { log(`${file}: no FLOP count (${e.message.split('\n')[0]})`); return NaN; }
}

// ONNX Runtime runs in a child process per measurement (tools/lib/ort_time.mjs): its
// thread pool must not share the cores while OneModel is timed.
function timeOrtChild(backend, file, m, threads, n = runs) {
  const a = [path.join(ROOT, 'tools/lib/ort_time.mjs'), backend, file, String(threads), String(n)];
  for (const [name, f] of Object.entries(m.inputs)) a.push(`${name}=${path.isAbsolute(f) ? f : path.join(modelsDir, 'inputs', f)}`);
  const out = execFileSync('node', a, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], maxBuffer: 1 << 26 });
  return Number(/median_ms=([0-9.]+)/.exec(out)[1]);
}
const fmt = (x) => (x >= 100 ? x.toFixed(0) : x.toFixed(1));
const ratio = (a, b) => (a / b).toFixed(2);
const rows = [];
for (const name of only ? [...only] : MODELS) {
  const m = byName.get(name);
  const file = path.join(modelsDir, `${name}.onnx`);
  if (!m || !fs.existsSync(file)) { log(`${name}: not prepared, skipped`); continue; }
  const r = { name, gflop: modelGflop(file, m) };
  for (const t of [1, 2]) {
    r[`ort${t}`] = timeOrtChild('node', file, m, t);
    r[`ours${t}`] = timeOurs(path.join(ROOT, 'build/native/onemodel'), [], file, m, t);
    if (fast) r[`fast${t}`] = timeOurs(path.join(ROOT, 'build/native/onemodel'), ['--mode', 'fast'], file, m, t);
    log(`${name} ${t} thread(s): ORT ${fmt(r[`ort${t}`])} ms, ours ${fmt(r[`ours${t}`])} ms` +
        (fast ? `, fast ${fmt(r[`fast${t}`])} ms` : ''));
  }
  if (wasm) {
    const js = [path.join(ROOT, 'js/bin/onemodel.mjs'), '--simd', 'on'];
    r.web = timeOrtChild('web', file, m, 1);
    r.wasm = timeOurs('node', [...js, '--relaxed-simd', 'off'], file, m, 1);
    // Fast mode on the SIMD128 + relaxed SIMD flavour (its fused multiply-add twins), as
    // Chromium 114+ and node 22+ load it; node 20 validates relaxed SIMD only with the flag.
    // onnxruntime-web 1.30's one wasm build uses no relaxed SIMD (it validates without it).
    if (fast) r.wasmFast = timeOurs('node', ['--experimental-wasm-relaxed-simd', ...js, '--mode', 'fast'], file, m, 1);
    log(`${name} wasm: onnxruntime-web ${fmt(r.web)} ms, ours ${fmt(r.wasm)} ms` + (fast ? `, fast ${fmt(r.wasmFast)} ms` : ''));
    r.web2 = timeOrtChild('web', file, m, 2);
    r.wasm2 = timeOurs('node', [path.join(ROOT, 'js/bin/onemodel.mjs')], file, m, 2);
    log(`${name} wasm 2 threads: onnxruntime-web ${fmt(r.web2)} ms, ours ${fmt(r.wasm2)} ms`);
  }
  rows.push(r);
}
console.log(`Medians of ${runs} runs after one warm-up (ms); ratio = OneModel / ONNX Runtime 1.30 (exact, then fast mode).`);
console.log('');
console.log(`CPU: ${CPU}. GFLOP/s at 1 thread: the model's Conv/MatMul/Gemm work (tools/model_flops.py) per second, and its share of the ${bestPeak.isa} multiply+add peak (${bestPeak.gflops.toFixed(1)} GFLOP/s).`);
console.log('');
const fcol = (x, ort) => (fast && x !== undefined ? ` ${fmt(x)} | ${ratio(x, ort)} |` : '');
const fhead = (t) => (fast ? ` fast ${t} | ratio |` : '');
console.log(`| model | GFLOP | ORT 1t | ours 1t | ratio |${fhead('1t')} ours 1t GFLOP/s (share of peak) | ORT 1t GFLOP/s (share) | ORT 2t | ours 2t | ratio |${fhead('2t')} ours 2t vs 1t | ORT-web 1t | ours wasm 1t | ratio |${fhead('wasm')} ORT-web 2t | ours wasm 2t | ratio | ours wasm 2t vs 1t |`);
console.log(`|${'---|'.repeat(18 + (fast ? 6 : 0))}`);
const rate = (ms, g) => (Number.isFinite(g) ? `${(g / ms * 1e3).toFixed(1)} (${(g / ms * 1e3 / bestPeak.gflops * 100).toFixed(0)}%)` : '-');
for (const r of rows) {
  const w = r.web !== undefined ? `${fmt(r.web)} | ${fmt(r.wasm)} | ${ratio(r.wasm, r.web)} |${fcol(r.wasmFast, r.web)} ${fmt(r.web2)} | ${fmt(r.wasm2)} | ${ratio(r.wasm2, r.web2)} | ${ratio(r.wasm, r.wasm2)}x |`
    : `- | - | - |${fast ? ' - | - |' : ''} - | - | - | - |`;
  console.log(`| ${r.name} | ${Number.isFinite(r.gflop) ? r.gflop.toFixed(2) : '-'} | ${fmt(r.ort1)} | ${fmt(r.ours1)} | ${ratio(r.ours1, r.ort1)} |${fcol(r.fast1, r.ort1)} ${rate(r.ours1, r.gflop)} | ${rate(r.ort1, r.gflop)} | ${fmt(r.ort2)} | ${fmt(r.ours2)} | ${ratio(r.ours2, r.ort2)} |${fcol(r.fast2, r.ort2)} ${ratio(r.ours1, r.ours2)}x | ${w}`);
}

if (gemm) {
  // A 1024 x 1024 x 1024 MatMul made here (B a constant), timed per ISA cap.
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'om-gemm-'));
  const file = path.join(tmp, 'gemm1024.onnx');
  execFileSync('/usr/bin/python3', ['-c', `
import numpy as np, onnx
from onnx import helper, numpy_helper, TensorProto
b = np.random.default_rng(1).standard_normal((1024, 1024)).astype(np.float32)
g = helper.make_graph([helper.make_node('MatMul', ['a', 'b'], ['y'])], 'gemm',
    [helper.make_tensor_value_info('a', TensorProto.FLOAT, [1024, 1024])],
    [helper.make_tensor_value_info('y', TensorProto.FLOAT, [1024, 1024])], [numpy_helper.from_array(b, 'b')])
m = helper.make_model(g, opset_imports=[helper.make_opsetid('', 17)]); m.ir_version = 8
onnx.save(m, '${file}')
np.save('${file}.a.npy', np.full((1024, 1024), 0.5, np.float32))`]);
  const flops = 2 * 1024 ** 3;
  const targets = execFileSync(path.join(ROOT, 'build/native/onemodel'), ['targets'], { encoding: 'utf8' });
  const isas = (/^compiled:(.*)$/m.exec(targets)[1] || '').trim().split(/\s+/).filter((e) => !e.includes('('));
  const peakOf = new Map(peaks.map((p) => [p.isa, p.gflops]));
  console.log('');
  console.log(`GEMM 1024 x 1024 x 1024 (f32), 1 thread, CPU ${CPU}; share: of the ISA's own multiply+add peak above (ONNX Runtime's: of the best, ${bestPeak.isa}).`);
  console.log('');
  // 20 timed runs (0.3-3 s each cap): the first few runs after the warm-up are up to 25%
  // slower on these VMs (seen on Zen 5), so 3 runs gave a median of the ramp; the peak
  // above is a best-of timing, so the best run's share is given beside the median's.
  console.log('| ISA cap | median ms | GFLOP/s | share of peak | best ms | best GFLOP/s | best share |');
  console.log('|---|---|---|---|---|---|---|');
  const ortMs = timeOrtChild('node', file, { inputs: { a: `${file}.a.npy` } }, 1, 20);
  for (const isa of isas) {
    const gemmRuns = isa === 'ref' ? 3 : 20;
    const out = execFileSync(path.join(ROOT, 'build/native/onemodel'), ['--isa', isa, '--threads', '1', 'bench', file, '--input', `a=${file}.a.npy`, '--runs', String(gemmRuns)], { encoding: 'utf8' });
    const ms = Number(/median_ms=([0-9.]+)/.exec(out)[1]);
    const best = Number(/min_ms=([0-9.]+)/.exec(out)[1]);
    const pk = peakOf.get(isa === 'ref' ? 'scalar' : isa);
    const share = (t) => (pk ? ((flops / t / 1e6) / pk * 100).toFixed(1) + '%' : '-');
    console.log(`| ${isa} | ${fmt(ms)} | ${(flops / ms / 1e6).toFixed(1)} | ${share(ms)} | ${fmt(best)} | ${(flops / best / 1e6).toFixed(1)} | ${share(best)} |`);
  }
  console.log(`| onnxruntime-node (its own choice) | ${fmt(ortMs)} | ${(flops / ortMs / 1e6).toFixed(1)} | ${((flops / ortMs / 1e6) / bestPeak.gflops * 100).toFixed(1)}% | - | - | - |`);
  fs.rmSync(tmp, { recursive: true, force: true });
}
