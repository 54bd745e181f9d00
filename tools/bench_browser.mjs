#!/usr/bin/env node
// Wasm speed in a browser: OneModel's browser entry (js/browser.mjs: the SIMD128 flavour at
// 1 thread, SIMD128 + threads at more) against onnxruntime-web's wasm backend at the same
// thread counts, in headless Chromium (Debian's /usr/bin/chromium, or $CHROMIUM, driven by
// playwright-core), the page served cross-origin isolated (COOP and COEP headers) as
// shared memory requires. Each (runtime, thread count) gets a fresh page; OneModel runs its
// CLI's `bench` in the page (--runs N after its warm-up), ORT-web one warm-up run and N timed
// runs of session.run; both print medians. Exact mode; a benchmark, never part of the tests.
//   node tools/bench_browser.mjs [--only resnet50,bert_base] [--threads 1,2] [--runs N]
//        [--models DIR]
// Needs `npm install` (onnxruntime-web, playwright-core), the wasm build (tools/build.sh
// wasm) and the models (tools/prepare.sh). Prints a markdown table on stdout.
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { serveStatic } from './lib/static_files.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
let only = ['resnet50', 'bert_base'], threadList = [1, 2], runs = 10, modelsDir = path.join(ROOT, 'models');
for (let i = 0; i < args.length; ++i) {
  if (args[i] === '--only') only = args[++i].split(',');
  else if (args[i] === '--threads') threadList = args[++i].split(',').map(Number);
  else if (args[i] === '--runs') runs = Number(args[++i]);
  else if (args[i] === '--models') modelsDir = path.resolve(args[++i]);
  else { console.error(`bench_browser: unknown argument ${args[i]}`); process.exit(2); }
}
if (!threadList.every((t) => Number.isInteger(t) && t >= 1) || !(runs >= 1)) {
  console.error('bench_browser: --threads takes whole numbers >= 1, --runs a number >= 1');
  process.exit(2);
}
const ortDir = path.join(ROOT, 'node_modules/onnxruntime-web/dist');
for (const need of [path.join(ROOT, 'build/wasm/onemodel-simd.wasm'), ortDir]) {
  if (!fs.existsSync(need)) { console.error(`bench_browser: ${need} is missing (tools/build.sh wasm; npm install)`); process.exit(2); }
}

// A model's files: NAME.onnx and the inputs its NAME.inputs lists (name=path, relative to
// the models folder), as URLs under /m.
function modelJob(name) {
  const onnx = path.join(modelsDir, `${name}.onnx`);
  if (!fs.existsSync(onnx)) throw new Error(`${onnx} not found (tools/prepare.sh --only ${name})`);
  const inputs = [];
  const list = path.join(modelsDir, `${name}.inputs`);
  if (fs.existsSync(list)) {
    for (const line of fs.readFileSync(list, 'utf8').split('\n')) {
      const eq = line.indexOf('=');
      if (eq > 0) inputs.push({ name: line.slice(0, eq), url: `/m/${line.slice(eq + 1).trim()}` });
    }
  }
  return { name, model: `/m/${name}.onnx`, inputs };
}

const ISOLATED = { 'cross-origin-opener-policy': 'same-origin', 'cross-origin-embedder-policy': 'require-corp' };
const roots = new Map([['/js', path.join(ROOT, 'js')], ['/wasm', path.join(ROOT, 'build/wasm')], ['/ort', ortDir],
  ['/m', modelsDir]]);
const server = http.createServer((req, res) => {
  for (const [k, v] of Object.entries(ISOLATED)) res.setHeader(k, v);
  const url = decodeURIComponent(new URL(req.url, 'http://x').pathname);
  if (url === '/') {
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end('<!doctype html><meta charset="utf-8"><title>OneModel bench</title><body>bench</body>');
    return;
  }
  serveStatic(res, url, roots);
});
await new Promise((r) => server.listen(0, '127.0.0.1', r));
const origin = `http://127.0.0.1:${server.address().port}`;

// In the page: OneModel's CLI bench over the model's files; returns its median and flavour.
async function pageOneModel([job, threads, n]) {
  const { loadOneModel } = await import('/js/browser.mjs');
  const om = await loadOneModel({ baseUrl: '/wasm', simd: 'on', threads });
  const files = new Map();
  for (const url of [job.model, ...job.inputs.map((i) => i.url)]) {
    const resp = await fetch(url);
    if (!resp.ok) throw new Error(`fetch ${url}: ${resp.status}`);
    files.set(url, new Uint8Array(await resp.arrayBuffer()));
  }
  const argv = ['bench', job.model, '--runs', String(n), '--threads', String(threads)];
  for (const i of job.inputs) argv.push('--input', `${i.name}=${i.url}`);
  const r = om.run(argv, files);
  const m = /median_ms=([\d.]+)/.exec(r.stdout);
  if (r.code || !m) throw new Error(`onemodel bench exit ${r.code}: ${r.stderr.slice(-500)}`);
  return { ms: Number(m[1]), what: `${om.flavour}, ${om.threads} thread(s)` };
}

// In the page: onnxruntime-web's wasm backend, numThreads = threads, inputs from .npy.
async function pageOrt([job, threads, n]) {
  const ort = await import('/ort/ort.wasm.min.mjs');
  ort.env.wasm.wasmPaths = '/ort/';
  ort.env.wasm.numThreads = threads;
  const DT = { '<f4': ['float32', Float32Array], '<i8': ['int64', BigInt64Array], '<i4': ['int32', Int32Array],
    '|u1': ['uint8', Uint8Array], '|i1': ['int8', Int8Array], '|b1': ['bool', Uint8Array] };
  const npy = (buf) => {
    const b = new Uint8Array(buf), dv = new DataView(buf);
    const hlen = b[6] === 1 ? dv.getUint16(8, true) : dv.getUint32(8, true), start = b[6] === 1 ? 10 : 12;
    const header = new TextDecoder('latin1').decode(b.subarray(start, start + hlen));
    const descr = /'descr':\s*'([^']+)'/.exec(header)[1];
    const dims = /'shape':\s*\(([^)]*)\)/.exec(header)[1].split(',').map((s) => s.trim()).filter(Boolean).map(Number);
    if (!DT[descr]) throw new Error(`npy dtype ${descr} not handled here`);
    const bytes = b.slice(start + hlen);
    return new ort.Tensor(DT[descr][0], new DT[descr][1](bytes.buffer, 0, bytes.length / DT[descr][1].BYTES_PER_ELEMENT), dims);
  };
  const feeds = {};
  for (const i of job.inputs) feeds[i.name] = npy(await (await fetch(i.url)).arrayBuffer());
  const model = new Uint8Array(await (await fetch(job.model)).arrayBuffer());
  const s = await ort.InferenceSession.create(model, { executionProviders: ['wasm'] });
  await s.run(feeds);
  const t = [];
  for (let r = 0; r < n; ++r) {
    const t0 = performance.now();
    await s.run(feeds);
    t.push(performance.now() - t0);
  }
  t.sort((a, b) => a - b);
  const k = t.length;
  return { ms: k % 2 ? t[(k - 1) / 2] : (t[k / 2 - 1] + t[k / 2]) / 2, what: `onnxruntime-web ${ort.env.versions.web}, numThreads ${threads}` };
}

const { chromium } = await import('playwright-core');
const browser = await chromium.launch({ executablePath: process.env.CHROMIUM || '/usr/bin/chromium', headless: true,
  args: ['--no-sandbox', '--js-flags=--max-old-space-size=8192'] });
const version = browser.version();
const rows = [];
let code = 0;
try {
  for (const name of only) {
    const job = modelJob(name);
    const row = { name };
    for (const t of threadList) {
      for (const [key, fn] of [['ort', pageOrt], ['ours', pageOneModel]]) {
        const page = await browser.newPage();
        page.on('pageerror', (e) => process.stderr.write(`[page error] ${e.message}\n`));
        await page.goto(`${origin}/`);
        if (!(await page.evaluate(() => crossOriginIsolated))) throw new Error('the page is not cross-origin isolated');
        const r = await page.evaluate(fn, [job, t, runs]);
        await page.close();
        row[`${key}${t}`] = r.ms;
        process.stderr.write(`[bench] ${name} ${r.what}: ${r.ms.toFixed(1)} ms\n`);
      }
    }
    rows.push(row);
  }
} catch (e) {
  process.stderr.write(`[bench] ${e.message}\n`);
  code = 1;
} finally {
  await browser.close();
  server.close();
}
const f = (x) => (x === undefined ? '-' : x.toFixed(1));
const ratio = (a, b) => (a === undefined || b === undefined ? '-' : (a / b).toFixed(2));
console.log(`Chromium ${version}, ${runs} runs, medians in ms; ratio = OneModel / onnxruntime-web`);
console.log(`| model | ${threadList.map((t) => `ORT-web ${t}t | ours ${t}t | ratio`).join(' | ')} | ours ${threadList[0]}t / ${threadList[threadList.length - 1]}t |`);
console.log(`|---|${threadList.map(() => '---|---|---').join('|')}|---|`);
for (const r of rows) {
  const first = r[`ours${threadList[0]}`], lastT = r[`ours${threadList[threadList.length - 1]}`];
  console.log(`| ${r.name} | ${threadList.map((t) => `${f(r[`ort${t}`])} | ${f(r[`ours${t}`])} | ${ratio(r[`ours${t}`], r[`ort${t}`])}`).join(' | ')} | ${ratio(first, lastT)}x |`);
}
process.exit(code);
