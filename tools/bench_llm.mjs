#!/usr/bin/env node
// LLM decoding speed and memory, side by side in one run (issue 34; never part of the tests):
// one decoder-only model (tools/make_llm.py), greedy decoding with the KV cache fed back
// (tools/lib/llm.mjs), on each engine present:
//   ort-node  onnxruntime-node, native CPU, intraOpNumThreads --threads (default 1)
//   ort-web   onnxruntime-web in node, wasm SIMD, numThreads 1
//   onemodel  OneModel's JS package (js/index.node.mjs), wasm (SIMD128 where validated)
//   native    a command given with --native (below)
// Each engine runs in a process of its own (its memory alone, no shared backend registry).
// Per engine: load time; prefill tokens/s for a prompt of --prompt tokens; decode tokens/s
// over --steps steps of one token; medians over --rounds rounds after --warmup rounds, each
// round a fresh generation; RSS growth from before the engine is imported (after loading,
// and the peak over the rounds); OneModel's wasmMemory(). Prints the CPU first, then a
// markdown table with ratios against ort-node and whether each engine's tokens are
// ort-node's. An engine that fails is a row saying why.
//
//   node tools/bench_llm.mjs [--model FILE.onnx] [--prompt 32] [--steps 32] [--rounds 3]
//        [--warmup 1] [--threads 1] [--engines ort-node,ort-web,onemodel] [--native CMD]
//        [--json OUT.json]
//
// --model defaults to build/llm/qwen0.5b-genai-q4.onnx; a missing model named
// <size>-<layout>-<weights>.onnx (tiny|qwen0.5b, genai|plain, fp32|q4) is made first with
// tools/make_llm.py (/usr/bin/python3 with onnx and numpy; the 0.5B one takes a minute and
// 3.5 GB of memory).
//
// --native CMD: a native OneModel row; default 'build/native/onemodel generate' when that
// build exists (src/cli/generate.cpp), `--native none`: no native row. CMD runs in sh with {model}, {prompt_ids} (comma-separated),
// {steps} (decode steps), {new_tokens} (steps + 1: the prefill's token and one per step),
// {rounds}, {warmup}, {all_rounds} (warmup + rounds) and {threads} replaced; without any
// placeholder, ` {model} --ids {prompt_ids} --steps {new_tokens} --rounds {all_rounds}
// --threads {threads} --json` is appended. Its stdout's last JSON line is read:
// {"prefill_ms": the prompt's run, "decode_ms_per_token": a decode run (each a median over
// the rounds), "tokens": [the new tokens, the prefill's first], "rss_bytes": the peak
// resident set size, "load_ms": optional}.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn, execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { readConfig, promptIds, generate } from './lib/llm.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const ENGINES = ['ort-node', 'ort-web', 'onemodel'];
const opt = {
  model: path.join(ROOT, 'build/llm/qwen0.5b-genai-q4.onnx'), prompt: 32, steps: 32, rounds: 3, warmup: 1,
  threads: 1, engines: ENGINES.join(','), native: null, json: null, worker: null,
};
const argv = process.argv.slice(2);
if (argv.includes('--help') || argv.includes('-h')) {
  const text = fs.readFileSync(fileURLToPath(import.meta.url), 'utf8').split('\n');
  console.log(text.slice(1, text.findIndex((l) => l.startsWith('import'))).map((l) => l.replace(/^\/\/ ?/, '')).join('\n'));
  process.exit(0);
}
for (let i = 0; i < argv.length; ++i) {
  const k = argv[i].replace(/^--/, '');
  if (!(k in opt) || i + 1 >= argv.length) { console.error(`bench_llm: unknown argument or missing value: ${argv[i]}`); process.exit(2); }
  const v = argv[++i];
  opt[k] = typeof opt[k] === 'number' ? Number(v) : v;
}
for (const k of ['prompt', 'steps', 'rounds', 'threads']) {
  if (!Number.isInteger(opt[k]) || opt[k] < 1) { console.error(`bench_llm: --${k} takes a whole number >= 1`); process.exit(2); }
}
if (!Number.isInteger(opt.warmup) || opt.warmup < 0) { console.error('bench_llm: --warmup takes a whole number >= 0'); process.exit(2); }
const median = (v) => { const s = [...v].sort((a, b) => a - b); const n = s.length; return n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2; };
const log = (s) => process.stderr.write(`[bench_llm] ${s}\n`);

if (opt.worker) {
  try {
    await worker(opt.worker);
  } catch (e) {
    process.stdout.write(JSON.stringify({ engine: opt.worker, ok: false, error: `${e.code ? `${e.code}: ` : ''}${e.message}` }) + '\n');
    process.exit(1);
  }
} else {
  await main();
}

// One engine, in this process: prints one JSON line.
async function worker(engine) {
  const rss0 = process.memoryUsage().rss;
  let peak = rss0;
  const sample = () => { peak = Math.max(peak, process.memoryUsage().rss); };
  const cfg = readConfig(opt.model);
  const prompt = promptIds(opt.prompt, cfg.vocab);
  let ort, options, preallocate = true;
  if (engine === 'ort-node') {
    ort = await import('onnxruntime-node');
    options = { intraOpNumThreads: opt.threads, interOpNumThreads: 1 };
  } else if (engine === 'ort-web') {
    ort = await import('onnxruntime-web');
    ort.env.wasm.numThreads = 1;
    ort.env.wasm.simd = true;
    options = { executionProviders: ['wasm'] };
    preallocate = false;  // onnxruntime-web 1.30 leaves a preallocated cpu Tensor unwritten (tools/lib/llm.mjs)
  } else if (engine === 'onemodel') {
    ort = await import(pathToFileURL(path.join(ROOT, 'js/index.node.mjs')).href);
    options = { executionProviders: ['onemodel'] };
  } else {
    throw new Error(`unknown engine ${engine}`);
  }
  let t0 = performance.now();
  const session = await ort.InferenceSession.create(opt.model, options);
  const loadMs = performance.now() - t0;
  if (engine === 'onemodel' && !('onemodelEngine' in session.handler)) throw new Error('OneModel did not get the session');
  sample();
  const rssLoad = process.memoryUsage().rss - rss0;
  const prefill = [], decode = [];
  let tokens = null, stable = true;
  for (let r = 0; r < opt.warmup + opt.rounds; ++r) {
    const g = await generate(ort, session, cfg, prompt, opt.steps, { preallocate });
    sample();
    if (tokens && g.tokens.join() !== tokens.join()) stable = false;
    tokens = g.tokens;
    if (r < opt.warmup) continue;
    prefill.push(g.prefillMs);
    decode.push(g.stepMs.reduce((a, b) => a + b, 0) / g.stepMs.length);
    log(`${engine}: round ${r - opt.warmup + 1}/${opt.rounds}: prefill ${g.prefillMs.toFixed(1)} ms, decode ${decode.at(-1).toFixed(2)} ms/token`);
  }
  const result = {
    engine, ok: true, version: ort.env?.versions?.[engine === 'onemodel' ? 'onemodel' : engine === 'ort-web' ? 'web' : 'node'] ?? '',
    load_ms: loadMs, prefill_ms: median(prefill), decode_ms_per_token: median(decode), tokens, stable,
    rss_load_bytes: rssLoad, rss_peak_bytes: peak - rss0, preallocate,
  };
  if (engine === 'onemodel') {
    const { wasmMemory } = await import(pathToFileURL(path.join(ROOT, 'js/index.node.mjs')).href);
    result.wasm = await wasmMemory();
  }
  await session.release();
  process.stdout.write(JSON.stringify(result) + '\n');
  process.exit(0);
}

// Runs a child and collects its stdout; its stderr goes to ours as it comes (and is kept).
function runChild(cmd, args, shell = false) {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { cwd: ROOT, shell, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '', err = '';
    child.stdout.on('data', (d) => { out += d; });
    child.stderr.on('data', (d) => { err += d; process.stderr.write(d); });
    child.on('close', (code, signal) => resolve({ code, signal, out, err }));
  });
}

function lastJson(text) {
  const lines = text.trim().split('\n').reverse();
  for (const l of lines) { try { const v = JSON.parse(l); if (v && typeof v === 'object') return v; } catch { /* not JSON */ } }
  return null;
}

// The reason a child failed: its last error-looking line.
function reason(r) {
  const lines = r.err.trim().split('\n').filter((l) => l.trim() && !l.startsWith('[bench_llm]'));
  const line = lines.find((l) => /^\s*(\w*Error\b|error:)/.test(l)) ?? lines.at(-1) ?? `exit ${r.code ?? r.signal}`;
  return line.trim().replace(/\|/g, '/').slice(0, 200);
}

function ensureModel() {
  if (fs.existsSync(opt.model)) return;
  const m = /^(tiny|qwen0\.5b)-(genai|plain)-(fp32|q4)\.onnx$/.exec(path.basename(opt.model));
  if (!m) { console.error(`bench_llm: ${opt.model} does not exist (tools/make_llm.py makes one)`); process.exit(2); }
  log(`making ${opt.model} with tools/make_llm.py`);
  execFileSync('/usr/bin/python3', [path.join(ROOT, 'tools/make_llm.py'), '--size', m[1], '--layout', m[2], '--weights', m[3], opt.model],
    { stdio: ['ignore', 'inherit', 'inherit'] });
}

function cpuLines() {
  const info = fs.readFileSync('/proc/cpuinfo', 'utf8');
  const field = (k) => (new RegExp(`^${k}\\s*:\\s*(.*)$`, 'm').exec(info) || [])[1] ?? '?';
  return `CPU: ${field('model name')} (family ${field('cpu family')}, model ${field('model')}, stepping ${field('stepping')}), ` +
    `${os.cpus().length} logical cores, load average ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}; node ${process.version}`;
}

async function main() {
  opt.model = path.resolve(opt.model);
  ensureModel();
  const cfg = readConfig(opt.model);
  const engines = opt.engines.split(',').filter(Boolean);
  for (const e of engines) if (!ENGINES.includes(e)) { console.error(`bench_llm: unknown engine ${e} (${ENGINES.join(', ')})`); process.exit(2); }
  console.log(cpuLines());
  console.log(`model: ${path.relative(ROOT, opt.model)} (${cfg.size}, ${cfg.layout}, ${cfg.weights}${cfg.accuracy_level != null ? `, accuracy_level ${cfg.accuracy_level}` : ''}; ` +
    `${(fs.statSync(opt.model).size / 1e6).toFixed(1)} MB); prompt ${opt.prompt} tokens, ${opt.steps} decode steps, ` +
    `medians of ${opt.rounds} rounds after ${opt.warmup} warm-up; ort-node threads ${opt.threads}, wasm engines 1 thread`);
  console.log('');

  const rows = [];
  const have = (pkg) => { try { createRequire(import.meta.url).resolve(pkg); return true; } catch { return false; } };
  const common = ['--model', opt.model, '--prompt', String(opt.prompt), '--steps', String(opt.steps), '--rounds', String(opt.rounds),
    '--warmup', String(opt.warmup), '--threads', String(opt.threads)];
  for (const e of engines) {
    const pkg = { 'ort-node': 'onnxruntime-node', 'ort-web': 'onnxruntime-web' }[e];
    if (pkg && !have(pkg)) { rows.push({ engine: e, ok: false, error: `${pkg} is not installed (npm install)` }); continue; }
    log(`${e}: loading`);
    const r = await runChild(process.execPath, [fileURLToPath(import.meta.url), '--worker', e, ...common]);
    const v = lastJson(r.out);
    rows.push(v ?? { engine: e, ok: false, error: reason(r) });
  }
  if (opt.native === null && fs.existsSync(path.join(ROOT, 'build/native/onemodel'))) {
    opt.native = `${path.join(ROOT, 'build/native/onemodel')} generate`;
  }
  if (opt.native && opt.native !== 'none') {
    const ids = promptIds(opt.prompt, cfg.vocab).join(',');
    let cmd = /\{(model|prompt_ids|steps|new_tokens|rounds|warmup|all_rounds|threads)\}/.test(opt.native) ? opt.native
      : `${opt.native} {model} --ids {prompt_ids} --steps {new_tokens} --rounds {all_rounds} --threads {threads} --json`;
    const q = (s) => `'${String(s).replace(/'/g, "'\\''")}'`;
    const values = { model: q(opt.model), prompt_ids: ids, steps: opt.steps, new_tokens: opt.steps + 1, rounds: opt.rounds,
      warmup: opt.warmup, all_rounds: opt.rounds + opt.warmup, threads: opt.threads };
    cmd = cmd.replace(/\{(\w+)\}/g, (m, k) => (k in values ? String(values[k]) : m));
    log(`native: ${cmd.length > 160 ? cmd.slice(0, 160) + '...' : cmd}`);
    const r = await runChild(cmd, [], true);
    const v = lastJson(r.out);
    if (r.code === 0 && v && Number.isFinite(v.prefill_ms) && Number.isFinite(v.decode_ms_per_token)) {
      rows.push({ engine: 'native', ok: true, version: '', load_ms: v.load_ms ?? NaN, prefill_ms: v.prefill_ms,
        decode_ms_per_token: v.decode_ms_per_token, tokens: v.tokens ?? null, stable: true, rss_peak_bytes: v.rss_bytes ?? NaN });
    } else {
      rows.push({ engine: 'native', ok: false, error: r.code === 0 ? 'no JSON line {prefill_ms, decode_ms_per_token, tokens, rss_bytes} on stdout' : reason(r) });
    }
  }

  const ref = rows.find((r) => r.engine === 'ort-node' && r.ok);
  const mb = (b) => (Number.isFinite(b) ? (b / 2 ** 20).toFixed(0) : '');
  const ratio = (x, y) => (ref && Number.isFinite(x) && Number.isFinite(y) ? (x / y).toFixed(2) : '');
  console.log('| engine | load s | prefill tok/s | vs ort-node | decode tok/s | vs ort-node | RSS after load MiB | RSS peak MiB | wasm heap MiB | tokens |');
  console.log('|---|---|---|---|---|---|---|---|---|---|');
  for (const r of rows) {
    const name = r.version ? `${r.engine} ${r.version}` : r.engine;
    if (!r.ok) { console.log(`| ${name} | cannot run: ${r.error.replace(/\s+/g, ' ').replace(/\|/g, '/').slice(0, 240)} |  |  |  |  |  |  |  |  |`); continue; }
    const pre = opt.prompt / r.prefill_ms * 1000, dec = 1000 / r.decode_ms_per_token;
    const refPre = ref && opt.prompt / ref.prefill_ms * 1000, refDec = ref && 1000 / ref.decode_ms_per_token;
    let tok = 'ort-node did not run';
    if (r === ref) tok = 'the reference';
    else if (ref && r.tokens) {
      const at = r.tokens.findIndex((t, i) => t !== ref.tokens[i]);
      tok = at < 0 && r.tokens.length === ref.tokens.length ? "= ort-node's" : `differ from step ${at < 0 ? r.tokens.length : at}`;
    } else if (!r.tokens) tok = 'not given';
    if (!r.stable) tok += ' (rounds differ)';
    const heap = r.wasm ? `${mb(r.wasm.inUse)} in use / ${mb(r.wasm.heapSize)}` : '';
    console.log(`| ${name} | ${Number.isFinite(r.load_ms) ? (r.load_ms / 1000).toFixed(1) : ''} | ${pre.toFixed(1)} | ${ratio(pre, refPre)} | ` +
      `${dec.toFixed(2)} | ${ratio(dec, refDec)} | ${mb(r.rss_load_bytes)} | ${mb(r.rss_peak_bytes)} | ${heap} | ${tok} |`);
  }
  console.log('');
  console.log('RSS: the growth of the engine\'s process from before the engine was imported (native: the process\'s peak, ' +
    'rss_bytes); wasm heap: OneModel\'s wasmMemory(), malloc\'s bytes in use / the heap\'s size; vs ort-node: the ' +
    'engine\'s tokens/s over ort-node\'s (above 1: faster).');
  if (opt.json) fs.writeFileSync(opt.json, JSON.stringify({ cpu: cpuLines(), options: opt, rows }, null, 1) + '\n');
}
