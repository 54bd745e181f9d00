#!/usr/bin/env node
// Serves ROOT on localhost, opens PAGE (a path under it) in headless Chromium and prints
// the page's document.body.dataset.hash once it is set (document.body.dataset.error:
// exit 1 with it). For pages a test writes (tests/js/package_test.sh).
//   node tests/js/page_hash.mjs ROOT PAGE
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';

const [root, page] = process.argv.slice(2);
if (!root || !page) { console.error('usage: page_hash.mjs ROOT PAGE'); process.exit(2); }
const ROOT = path.resolve(root);
const TYPES = { '.html': 'text/html', '.mjs': 'text/javascript', '.js': 'text/javascript', '.wasm': 'application/wasm' };
const server = http.createServer((req, res) => {
  const p = path.join(ROOT, decodeURIComponent(new URL(req.url, 'http://x').pathname));
  if (!p.startsWith(ROOT) || !fs.existsSync(p) || fs.statSync(p).isDirectory()) { res.writeHead(404); res.end(); return; }
  res.writeHead(200, { 'content-type': TYPES[path.extname(p)] ?? 'application/octet-stream' });
  res.end(fs.readFileSync(p));
});
await new Promise((r) => server.listen(0, '127.0.0.1', r));
const { chromium } = await import(process.env.PLAYWRIGHT_CORE ?? 'playwright-core');
const userDir = fs.mkdtempSync(path.join(os.tmpdir(), 'onemodel-chromium-'));
const ctx = await chromium.launchPersistentContext(userDir, {
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium', headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});
let code = 0;
try {
  const p = await ctx.newPage();
  const logs = [];
  p.on('console', (m) => logs.push(m.text()));
  p.on('pageerror', (e) => logs.push(String(e)));
  await p.goto(`http://127.0.0.1:${server.address().port}${page}`);
  await p.waitForFunction(() => document.body && (document.body.dataset.hash || document.body.dataset.error), null, { timeout: 120000 });
  const r = await p.evaluate(() => ({ hash: document.body.dataset.hash, error: document.body.dataset.error }));
  if (r.hash) console.log(r.hash);
  else { console.error(`page error: ${r.error} ${logs.join(' | ')}`); code = 1; }
} catch (e) {
  console.error(String(e.stack ?? e));
  code = 1;
} finally {
  await ctx.close();
  server.close();
  fs.rmSync(userDir, { recursive: true, force: true });
}
process.exit(code);
