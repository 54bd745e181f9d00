#!/usr/bin/env node
// The headless-Chromium golden row: serves the repository on localhost, opens a page in
// Debian's Chromium (playwright-core, executablePath /usr/bin/chromium) that loads the
// npm package's browser entry (js/browser.mjs) and the wasm build, hands it each model's
// files and the node cases in memory, and runs `golden` in the page. Prints the same
// lines as `onemodel golden` on stdout; progress on stderr.
//   node tools/golden_browser.mjs [--simd on|off] [--threads N] [--models DIR ...] [--cases DIR ...] [--only a,b]
// --threads N (above 1): the SIMD128 + threads flavour with N - 1 Web Workers; the page is
// served cross-origin isolated (COOP and COEP headers), as shared memory requires.
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
let simd = 'on', only = null, threads = 1;
const modelDirs = [], casesDirs = [];
for (let i = 0; i < args.length; ++i) {
  if (args[i] === '--simd') simd = args[++i];
  else if (args[i] === '--threads') threads = Number(args[++i]);
  else if (args[i] === '--models') modelDirs.push(path.resolve(args[++i]));
  else if (args[i] === '--cases') casesDirs.push(path.resolve(args[++i]));
  else if (args[i] === '--only') only = new Set(args[++i].split(','));
  else { console.error(`golden_browser: unknown argument ${args[i]}`); process.exit(2); }
}

// Jobs for the page: one per model (its .onnx, .inputs and the files those name), then
// one for all node cases. Paths in the page are the served URLs' paths.
const roots = new Map();  // url prefix -> folder
const jobs = [];
modelDirs.forEach((dir, k) => {
  const prefix = `/m${k}`;
  roots.set(prefix, dir);
  for (const f of fs.readdirSync(dir).sort()) {
    if (!f.endsWith('.onnx')) continue;
    const stem = f.slice(0, -5);
    if (only && !only.has(stem)) continue;
    const files = [`${prefix}/${f}`];
    const list = path.join(dir, `${stem}.inputs`);
    if (fs.existsSync(list)) {
      files.push(`${prefix}/${stem}.inputs`);
      for (const line of fs.readFileSync(list, 'utf8').split('\n')) {
        const eq = line.indexOf('=');
        if (eq > 0) files.push(`${prefix}/${line.slice(eq + 1)}`);
      }
    }
    jobs.push({ label: stem, args: ['golden', '--models', prefix, '--only', stem], files });
  }
});
casesDirs.forEach((casesDir, k) => {
  const prefix = `/cases${k}`;
  roots.set(prefix, casesDir);
  const files = [];
  for (const c of fs.readdirSync(casesDir).sort()) {
    const d = path.join(casesDir, c);
    if (!fs.existsSync(path.join(d, 'model.onnx'))) continue;
    const walk = (rel) => {
      for (const e of fs.readdirSync(path.join(casesDir, rel))) {
        const r = `${rel}/${e}`;
        if (fs.statSync(path.join(casesDir, r)).isDirectory()) walk(r);
        else files.push(`${prefix}/${r}`);
      }
    };
    walk(c);
  }
  jobs.push({ label: `node cases ${path.basename(casesDir)}`, args: ['golden', '--cases', prefix], files });
});
roots.set('/js', path.join(ROOT, 'js'));
roots.set('/wasm', path.join(ROOT, 'build/wasm'));

// Cross-origin isolation for every response: the page gets SharedArrayBuffer.
const ISOLATED = { 'cross-origin-opener-policy': 'same-origin', 'cross-origin-embedder-policy': 'require-corp' };
const server = http.createServer((req, res) => {
  for (const [k, v] of Object.entries(ISOLATED)) res.setHeader(k, v);
  const url = decodeURIComponent(new URL(req.url, 'http://x').pathname);
  if (url === '/') {
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end('<!doctype html><meta charset="utf-8"><title>OneModel golden</title><body>golden row</body>');
    return;
  }
  for (const [prefix, dir] of roots) {
    if (!url.startsWith(prefix + '/')) continue;
    const file = path.join(dir, url.slice(prefix.length + 1));
    if (!file.startsWith(dir) || !fs.existsSync(file)) break;
    const type = file.endsWith('.mjs') || file.endsWith('.js') ? 'text/javascript' : file.endsWith('.wasm') ? 'application/wasm' : 'application/octet-stream';
    res.writeHead(200, { 'content-type': type, 'content-length': fs.statSync(file).size });
    fs.createReadStream(file).pipe(res);
    return;
  }
  res.writeHead(404);
  res.end('not found');
});
await new Promise((r) => server.listen(0, '127.0.0.1', r));
const port = server.address().port;

const { chromium } = await import('playwright-core');
const browser = await chromium.launch({ executablePath: process.env.CHROMIUM || '/usr/bin/chromium', headless: true,
  args: ['--no-sandbox', '--js-flags=--max-old-space-size=8192'] });
let code = 0;
try {
  const page = await browser.newPage();
  page.on('pageerror', (e) => process.stderr.write(`[page error] ${e.message}\n`));
  page.on('console', (m) => { if (m.type() === 'log') process.stderr.write(m.text()); });  // the module's live stderr
  await page.goto(`http://127.0.0.1:${port}/`);
  const flavour = await page.evaluate(async ([simdArg, threadsArg]) => {
    const { loadOneModel } = await import('/js/browser.mjs');
    window.om = await loadOneModel({ baseUrl: '/wasm', simd: simdArg, threads: threadsArg });
    return `${window.om.flavour}, ${window.om.threads} thread(s), crossOriginIsolated ${crossOriginIsolated}`;
  }, [simd, threads]);
  process.stderr.write(`[browser] Chromium ${browser.version()}, wasm ${flavour}\n`);
  for (const job of jobs) {
    const t0 = Date.now();
    const r = await page.evaluate(async (j) => {
      const files = new Map();
      for (const f of j.files) {
        const resp = await fetch(f);
        if (!resp.ok) throw new Error(`fetch ${f}: ${resp.status}`);
        files.set(f, new Uint8Array(await resp.arrayBuffer()));
      }
      return window.om.run(j.args, files);
    }, job);
    process.stdout.write(r.stdout);
    process.stderr.write(`[browser] ${job.label}: ${((Date.now() - t0) / 1000).toFixed(1)} s in the page${r.code ? `, exit ${r.code}` : ''}\n`);
    if (r.code) code = 1;
  }
} catch (e) {
  process.stderr.write(`[browser] ${e.message}\n`);
  code = 1;
} finally {
  await browser.close();
  server.close();
}
process.exit(code);
