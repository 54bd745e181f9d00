#!/usr/bin/env node
// examples/browser/index.html in headless Chromium (playwright-core, Debian's
// /usr/bin/chromium): serves the repository (or --root, an installed package's folder)
// on localhost, opens the page, waits for its hash, saves a screenshot, and checks that
// the page shows the hash the native CLI gives for the same input. Needs dist/
// (tools/pack.sh). One line per check, then `N passed, N failed`.
//   node tests/js/browser_page.mjs [--model URL-path] [--dims name:size,...] [--proxy] [--threads N] [--screenshot FILE]
// --threads N: env.wasm.numThreads = N on a page served cross-origin isolated (COOP and
// COEP headers): the threaded wasm build. --not-isolated: the page served without them
// (then 1 thread, the single-thread build, and a console note).
// --proxy: env.wasm.proxy = true (the run in a Web Worker): the page's 1 ms timer must
// keep ticking during runs, where without it none can.
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const args = process.argv.slice(2);
let model = '/testdata/graphs/conv_net.onnx', dims = '', proxy = false, threads = 0, isolate = true, shot = path.join(ROOT, 'build', 'test-logs', 'browser.png');
for (let i = 0; i < args.length; ++i) {
  if (args[i] === '--model') model = args[++i];
  else if (args[i] === '--dims') dims = args[++i];
  else if (args[i] === '--screenshot') shot = path.resolve(args[++i]);
  else if (args[i] === '--proxy') proxy = true;
  else if (args[i] === '--threads') threads = Number(args[++i]);
  else if (args[i] === '--not-isolated') isolate = false;
  else { console.error(`browser_page: unknown argument ${args[i]}`); process.exit(2); }
}

let passed = 0, failed = 0;
const check = (ok, what, detail = '') => {
  if (ok) { passed++; console.log(`ok   ${what}`); } else { failed++; console.log(`FAIL ${what}${detail ? `: ${detail}` : ''}`); }
};

const TYPES = { '.html': 'text/html', '.mjs': 'text/javascript', '.js': 'text/javascript', '.wasm': 'application/wasm', '.onnx': 'application/octet-stream' };
const served = new Set();  // the paths the page and its workers fetched
const server = http.createServer((req, res) => {
  served.add(new URL(req.url, 'http://x').pathname);
  const p = path.join(ROOT, decodeURIComponent(new URL(req.url, 'http://x').pathname));
  if (!p.startsWith(ROOT) || !fs.existsSync(p) || fs.statSync(p).isDirectory()) { res.writeHead(404); res.end(); return; }
  const body = fs.readFileSync(p);
  const isolated = threads && isolate ? { 'cross-origin-opener-policy': 'same-origin', 'cross-origin-embedder-policy': 'require-corp' } : {};
  res.writeHead(200, { 'content-type': TYPES[path.extname(p)] ?? 'application/octet-stream', 'content-length': body.length, ...isolated });
  res.end(body);
});
await new Promise((r) => server.listen(0, '127.0.0.1', r));
const port = server.address().port;

let browser;
let userDir;
try {
  check(fs.existsSync(path.join(ROOT, 'dist', 'onemodel.browser.mjs')), 'dist/onemodel.browser.mjs exists (tools/pack.sh)');
  const { chromium } = await import('playwright-core');
  userDir = fs.mkdtempSync(path.join(os.tmpdir(), 'onemodel-chromium-'));
  // A persistent context is how playwright takes a fresh --user-data-dir.
  browser = await chromium.launchPersistentContext(userDir, {
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium', headless: true, viewport: { width: 900, height: 760 },
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync'],
  });
  const page = await browser.newPage();
  const logs = [];
  page.on('console', (m) => logs.push(m.text()));
  page.on('pageerror', (e) => logs.push(String(e)));
  const url = `http://127.0.0.1:${port}/examples/browser/index.html?model=${encodeURIComponent(model)}${dims ? `&dims=${dims}` : ''}${proxy ? '&proxy=1' : ''}${threads ? `&threads=${threads}` : ''}`;
  await page.goto(url);
  await page.waitForFunction(() => document.body.dataset.done, null, { timeout: 120000 });
  const done = await page.evaluate(() => document.body.dataset.done);
  const status = await page.textContent('#status');
  check(done === 'yes', 'the page ran the model', `${status} ${logs.join(' | ')}`);
  const ticks = Number(await page.evaluate(() => document.body.dataset.ticks));
  if (threads && !isolate) {
    check(!(await page.evaluate(() => crossOriginIsolated)), 'the page is not cross-origin isolated');
    check(status.includes('1 wasm thread(s)'), `numThreads ${threads} on such a page: 1 thread`, status);
    check(logs.some((l) => /not cross-origin isolated/.test(l)), 'a console note says why', logs.join(' | '));
    check(![...served].some((u) => u.includes('simd-threads')), 'the single-thread build was loaded', [...served].join(' '));
  } else if (threads) {
    check(await page.evaluate(() => crossOriginIsolated), 'the page is cross-origin isolated');
    check(status.includes(`${threads} wasm thread(s)`), `the wasm engine has ${threads} threads`, status);
    const got = [...served].filter((u) => /onemodel-simd-threads\.(wasm|worker\.js)$/.test(u));
    check(got.length === 2, 'the threaded build and its worker script were loaded', [...served].join(' '));
  }
  if (proxy) {
    check(/in a Web Worker/.test(status), 'the page ran in a Web Worker (env.wasm.proxy)', status);
    check(ticks >= 4, `the main thread stayed free during 20 runs in the worker (${ticks} timer ticks)`);
  } else {
    check(ticks === 0, `without the proxy a run holds the main thread (${ticks} timer ticks during 20 runs)`);
  }
  const hash = (await page.textContent('#hash')).trim();
  check(/^[0-9a-f]{64}$/.test(hash), 'the page shows a SHA-256', hash);
  fs.mkdirSync(path.dirname(shot), { recursive: true });
  await page.screenshot({ path: shot, fullPage: true });
  check(fs.statSync(shot).size > 1000, `screenshot saved (${path.relative(ROOT, shot)})`);

  // The same input natively: x[i] = ((i * 7) % 17 - 8) / 8 in the page's shape.
  const meta = JSON.parse(await page.evaluate(() => JSON.stringify([...document.querySelectorAll('#meta tr')].map((r) => r.textContent))));
  const shape = meta[0].match(/\[([^\]]*)\]/)[1].split(',').map(Number);
  const inputName = (await page.evaluate(() => document.querySelector('#meta tr td').textContent));
  const n = shape.reduce((a, b) => a * b, 1);
  const data = new Float32Array(n);
  for (let i = 0; i < n; ++i) data[i] = (((i * 7) % 17) - 8) / 8;
  let header = `{'descr': '<f4', 'fortran_order': False, 'shape': (${shape.join(', ')}${shape.length === 1 ? ',' : ''}), }`;
  header += ' '.repeat(118 - header.length) + '\n';
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'onemodel-browser-'));
  const npy = path.join(tmp, 'x.npy');
  fs.writeFileSync(npy, Buffer.concat([Buffer.from('\x93NUMPY\x01\x00', 'latin1'), Buffer.from([header.length & 255, header.length >> 8]),
    Buffer.from(header, 'latin1'), Buffer.from(data.buffer)]));
  const firstOutput = (await page.textContent('#result')).split(':')[0];
  const lines = execFileSync(path.join(ROOT, 'build', 'native', 'onemodel'), ['hash', path.join(ROOT, model), '--input', `${inputName}=${npy}`], { encoding: 'utf8' });
  const stem = path.basename(model, '.onnx');
  const native = lines.split('\n').find((l) => l.startsWith(`${stem}/${firstOutput} `))?.split(' ')[1];
  check(native === hash, `the page's hash is the native CLI's (${stem}/${firstOutput})`, `page ${hash}, native ${native}`);
  fs.rmSync(tmp, { recursive: true, force: true });
} catch (e) {
  check(false, 'the browser test ran', e.stack ?? String(e));
} finally {
  if (browser) await browser.close();
  server.close();
  // The profile only after Chromium has closed: removed while it ran, Chromium kept
  // writing into it and rmSync failed with ENOTEMPTY (seen once in CI on Zen 5).
  if (userDir) fs.rmSync(userDir, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 });
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
