#!/usr/bin/env node
// transformers.js in headless Chromium on OneModel gives onnxruntime-node's results (issue
// 34): a page bundled by esbuild from @huggingface/transformers' browser build with
// `onnxruntime-web` and `onnxruntime-web/webgpu` aliased to OneModel's browser entry
// (js/index.browser.mjs: what a bundler alias or npm "overrides" of onnxruntime-web does),
// served on localhost with tools/make_hf_models.py's models and the wasm builds
// (build/wasm, as env.wasm.wasmPaths), runs tools/lib/hf_run.mjs's pipelines (tiny-bert
// feature-extraction, tiny-qwen2 text-generation; fp32, q8, q4) on transformers.js's
// default browser device ('wasm'), and, where the browser has navigator.gpu, with device
// 'webgpu' too (OneModel's CPU engine under that name). Each result is compared with
// onnxruntime-node's (tools/lib/hf_pipeline.mjs in a node process): the same token ids and
// texts, embeddings within hf_run.mjs's TOLERANCE; and with OneModel's in node (onemodel/register):
// the same bits (exact mode). One line per check, then `N passed, N failed`.
// Needs @huggingface/transformers (a devDependency), /usr/bin/python3 with onnx and numpy,
// playwright-core and /usr/bin/chromium (or CHROMIUM); without one it says so on a `skip`
// line and exits 0 with 0 passed, 0 failed.
//   node tests/js/transformers_browser.mjs [--keep DIR]   (--keep: write the bundle and models to DIR and keep them)
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { DTYPES, compareStep } from '../../tools/lib/hf_run.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const PYTHON = '/usr/bin/python3';
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
const args = process.argv.slice(2);
let keep = null;
for (let i = 0; i < args.length; ++i) {
  if (args[i] === '--keep') keep = path.resolve(args[++i]);
  else { console.error(`transformers_browser: unknown argument ${args[i]}`); process.exit(2); }
}

let passed = 0, failed = 0;
const check = (ok, what, detail = '') => {
  if (ok) { passed++; console.log(`ok   ${what}${detail ? `: ${detail}` : ''}`); } else { failed++; console.log(`FAIL ${what}${detail ? `: ${detail}` : ''}`); }
};
const finish = () => { console.log(`${passed} passed, ${failed} failed`); process.exit(failed ? 1 : 0); };
const skip = (why) => { console.log(`skip ${why}`); finish(); };

const require = createRequire(import.meta.url);
try { require.resolve('@huggingface/transformers'); } catch { skip('@huggingface/transformers is not installed (npm install: a devDependency)'); }
try { require.resolve('playwright-core'); } catch { skip('playwright-core is not installed (npm install)'); }
if (!fs.existsSync(CHROMIUM)) skip(`${CHROMIUM} not found (apt-get install chromium, or set CHROMIUM)`);
try { execFileSync(PYTHON, ['-c', 'import onnx, numpy'], { stdio: 'ignore' }); } catch {
  skip(`${PYTHON} lacks onnx or numpy (apt-get install python3-onnx python3-numpy): tools/make_hf_models.py cannot make the models`);
}
const WASM = path.join(ROOT, 'build', 'wasm');
if (!fs.existsSync(path.join(WASM, 'onemodel-simd.wasm'))) skip('build/wasm has no onemodel-simd.wasm (tools/build.sh wasm)');

const dir = keep ?? fs.mkdtempSync(path.join(os.tmpdir(), 'om-transformers-browser-'));
fs.mkdirSync(dir, { recursive: true });
const MODELS = path.join(dir, 'models');
let server, browser;
try {
  // The models, and onnxruntime-node's results for them.
  let t0 = Date.now();
  execFileSync(PYTHON, [path.join(ROOT, 'tools', 'make_hf_models.py'), MODELS], { stdio: ['ignore', 'ignore', 'inherit'] });
  const ref = JSON.parse(execFileSync(process.execPath, [path.join(ROOT, 'tools', 'lib', 'hf_pipeline.mjs'), '--engine', 'onnxruntime-node', '--models', MODELS],
    { encoding: 'utf8', maxBuffer: 256 << 20, stdio: ['ignore', 'pipe', 'inherit'] }).trim().split('\n').pop());
  check(ref.versions.node && !ref.versions.onemodel, `the node reference ran on onnxruntime-node ${ref.versions.node} (${Date.now() - t0} ms with the models)`);
  // OneModel in node too (onemodel/register): exact mode gives the page the same bits.
  const node = JSON.parse(execFileSync(process.execPath, [path.join(ROOT, 'tools', 'lib', 'hf_pipeline.mjs'), '--engine', 'onemodel', '--models', MODELS],
    { encoding: 'utf8', maxBuffer: 256 << 20, stdio: ['ignore', 'pipe', 'inherit'] }).trim().split('\n').pop());

  // The page: transformers.js's browser build with onnxruntime-web resolved to OneModel.
  t0 = Date.now();
  const entry = path.join(dir, 'page-entry.mjs');
  fs.writeFileSync(entry, [
    "import * as transformers from '@huggingface/transformers';",
    `import { runPipelines } from ${JSON.stringify(path.join(ROOT, 'tools', 'lib', 'hf_run.mjs'))};`,
    'const { env } = transformers;',
    'env.allowRemoteModels = false;',
    'env.allowLocalModels = true;',
    "env.localModelPath = '/models/';",
    'env.useBrowserCache = false;',
    "env.backends.onnx.wasm.wasmPaths = '/wasm/';  // OneModel's loaders and .wasm (env.backends.onnx.wasm is the onnxruntime's env.wasm)",
    'window.transformersRun = (options) => runPipelines(transformers, options);',
    "window.hasGpu = typeof navigator !== 'undefined' && 'gpu' in navigator;",
    '',
  ].join('\n'));
  const onemodelEntry = path.join(ROOT, 'js', 'index.browser.mjs');
  const aliased = new Set();
  const esbuild = await import('esbuild');
  const built = await esbuild.build({
    entryPoints: [entry], bundle: true, platform: 'browser', format: 'esm', target: 'es2022',
    outfile: path.join(dir, 'page.js'), nodePaths: [path.join(ROOT, 'node_modules')], logLevel: 'error', metafile: true,
    plugins: [{
      name: 'onnxruntime-web-to-onemodel',
      setup(b) {
        b.onResolve({ filter: /^onnxruntime-web(\/webgpu|\/wasm|\/all)?$/ }, (a) => { aliased.add(a.path); return { path: onemodelEntry }; });
      },
    }],
  });
  const inputs = Object.keys(built.metafile.inputs);
  check(aliased.size > 0 && !inputs.some((p) => p.includes('node_modules/onnxruntime-web/')),
    `the bundle has OneModel for ${[...aliased].join(', ') || 'nothing'} and no onnxruntime-web ` +
    `(${(fs.statSync(path.join(dir, 'page.js')).size / 1e6).toFixed(2)} MB, ${Date.now() - t0} ms)`);

  const roots = [['/models/', MODELS], ['/wasm/', WASM]];
  const TYPES = { '.html': 'text/html', '.js': 'text/javascript', '.mjs': 'text/javascript', '.wasm': 'application/wasm', '.json': 'application/json' };
  const served = [];
  server = http.createServer((req, res) => {
    const url = decodeURIComponent(new URL(req.url, 'http://x').pathname);
    served.push(url);
    let file = null;
    if (url === '/') {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<!doctype html><meta charset="utf-8"><title>transformers.js on OneModel</title><script type="module" src="/page.js"></script><body>transformers.js</body>');
      return;
    }
    if (url === '/favicon.ico') {
      res.writeHead(204);
      res.end();
      return;
    }
    if (url === '/page.js') file = path.join(dir, 'page.js');
    for (const [prefix, d] of roots) if (url.startsWith(prefix)) file = path.join(d, url.slice(prefix.length));
    if (!file || !file.startsWith(dir) && !file.startsWith(WASM) || !fs.existsSync(file) || fs.statSync(file).isDirectory()) {
      res.writeHead(404);
      res.end('not found');
      return;
    }
    res.writeHead(200, { 'content-type': TYPES[path.extname(file)] ?? 'application/octet-stream', 'content-length': fs.statSync(file).size });
    fs.createReadStream(file).pipe(res);
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));

  const { chromium } = await import('playwright-core');
  browser = await chromium.launch({ executablePath: CHROMIUM, headless: true,
    args: ['--no-sandbox', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'] });
  const page = await browser.newPage();
  const logs = [];
  page.on('console', (m) => logs.push(`[${m.type()}] ${m.text()}`));
  page.on('pageerror', (e) => logs.push(`[pageerror] ${e.stack ?? e}`));
  await page.goto(`http://127.0.0.1:${server.address().port}/`);
  await page.waitForFunction(() => typeof window.transformersRun === 'function', null, { timeout: 60000 });
  const hasGpu = await page.evaluate(() => window.hasGpu);
  const devices = [undefined, ...(hasGpu ? ['webgpu'] : [])];
  for (const device of devices) {
    t0 = Date.now();
    const ours = await page.evaluate((d) => window.transformersRun({ device: d }), device);
    const label = `Chromium ${browser.version()}, device ${ours.device === 'default' ? "default ('wasm')" : ours.device}`;
    check(ours.versions.onemodel && !ours.versions.web, `${label}: transformers.js ${ours.transformers} runs on OneModel ${ours.versions.onemodel} (${Date.now() - t0} ms)`,
      ours.versions.onemodel ? '' : `versions ${JSON.stringify(ours.versions)}`);
    for (const dtype of DTYPES) {
      for (const kind of ['features', 'generation']) {
        const r = compareStep(kind, ref.results[dtype][kind], ours.results[dtype][kind]);
        check(r.ok, `${label}, ${dtype} ${kind === 'features' ? 'feature-extraction' : 'text-generation'}`,
          `${r.detail}; page ${ours.results[dtype][kind].ms} ms, node onnxruntime-node ${ref.results[dtype][kind].ms} ms`);
      }
    }
    // Exact mode: the page's outputs are the bits OneModel gives in node.
    const same = [], differ = [];
    for (const dtype of DTYPES) {
      const a = ours.results[dtype], b = node.results[dtype];
      for (const kind of ['features', 'generation']) {
        const err = a[kind].error ? `the page: ${a[kind].error}` : b[kind].error ? `node (onemodel/register): ${b[kind].error}` : null;
        if (err) { differ.push(`${dtype} ${kind} (failed in ${err.split('\n')[0]})`); continue; }
        for (const key of kind === 'features' ? ['pooled', 'hidden'] : ['ids']) {
          const x = a[kind][key], y = b[kind][key];
          const equal = x.data.length === y.data.length && x.data.every((v, i) => Object.is(v, y.data[i]));
          (equal ? same : differ).push(`${dtype} ${key}`);
        }
      }
    }
    check(differ.length === 0, `${label}: the page's embeddings and tokens are bitwise OneModel's in node (exact mode)`,
      differ.length ? `different: ${differ.join(', ')}` : `${same.length} outputs`);
  }
  if (!hasGpu) console.log('note this Chromium has no navigator.gpu: transformers.js refuses device \'webgpu\' there, so only its default (\'wasm\') ran');
  if (failed) console.log(`page log:\n  ${logs.join('\n  ') || '(empty)'}\nrequests: ${served.join(' ')}`);
} catch (e) {
  check(false, 'the browser test ran', e.stack ?? String(e));
} finally {
  if (browser) await browser.close();
  if (server) server.close();
  if (!keep) fs.rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 });
}
finish();
