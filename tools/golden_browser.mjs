#!/usr/bin/env node
// The browser golden rows: serves the repository on localhost, opens a page that loads the
// npm package's browser entry (js/browser.mjs) and the wasm build, hands it each model's
// files and the node cases in memory, and runs `golden` in the page. Prints the same
// lines as `onemodel golden` on stdout; progress on stderr.
//   node tools/golden_browser.mjs [--browser chromium|firefox] [--tier default|baseline|ion]
//        [--simd on|off] [--relaxed off|detect] [--threads N] [--models DIR ...] [--cases DIR ...]
//        [--only a,b]
// chromium: Debian's Chromium (/usr/bin/chromium) driven by playwright-core. firefox:
// Debian's Firefox ESR (/usr/bin/firefox-esr, SpiderMonkey) with no driver: it is started
// headless on a fresh profile with the page's URL; the page fetches its jobs, runs them in
// order and posts each result back to this script's server, then posts /done. --tier
// (firefox only): SpiderMonkey's wasm compilers, both (default), the baseline compiler
// only, or the optimising one (Ion) only, through the profile's prefs.
// --threads N (above 1): the SIMD128 + threads flavour with N - 1 Web Workers; the page is
// served cross-origin isolated (COOP and COEP headers), as shared memory requires.
// --relaxed (default off): detect loads the SIMD128 + relaxed SIMD flavour at one thread
// where the browser validates relaxed SIMD (exact mode's bits must not change there).
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { serveStatic } from './lib/static_files.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
let simd = 'on', only = null, threads = 1, browserName = 'chromium', tier = 'default', relaxed = 'off';
const modelDirs = [], casesDirs = [];
for (let i = 0; i < args.length; ++i) {
  if (args[i] === '--simd') simd = args[++i];
  else if (args[i] === '--relaxed') relaxed = args[++i];
  else if (args[i] === '--browser') browserName = args[++i];
  else if (args[i] === '--tier') tier = args[++i];
  else if (args[i] === '--threads') threads = Number(args[++i]);
  else if (args[i] === '--models') modelDirs.push(path.resolve(args[++i]));
  else if (args[i] === '--cases') casesDirs.push(path.resolve(args[++i]));
  else if (args[i] === '--only') only = new Set(args[++i].split(','));
  else { console.error(`golden_browser: unknown argument ${args[i]}`); process.exit(2); }
}
if (!['chromium', 'firefox'].includes(browserName)) { console.error(`golden_browser: --browser chromium|firefox, not ${browserName}`); process.exit(2); }
if (!['default', 'baseline', 'ion'].includes(tier) || (tier !== 'default' && browserName !== 'firefox')) {
  console.error(`golden_browser: --tier default|baseline|ion (firefox only), not ${tier}`);
  process.exit(2);
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
let onPost = null;  // firefox: (path, body) for the page's posts
const server = http.createServer((req, res) => {
  for (const [k, v] of Object.entries(ISOLATED)) res.setHeader(k, v);
  const url = decodeURIComponent(new URL(req.url, 'http://x').pathname);
  if (req.method === 'POST' && onPost) {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => { res.writeHead(204); res.end(); onPost(url, Buffer.concat(chunks).toString('utf8')); });
    return;
  }
  if (url === '/jobs.json') {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ simd, threads, relaxed, jobs }));
    return;
  }
  if (url === '/post.html') {
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end(POST_PAGE);
    return;
  }
  if (url === '/') {
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end('<!doctype html><meta charset="utf-8"><title>OneModel golden</title><body>golden row</body>');
    return;
  }
  serveStatic(res, url, roots);
});
await new Promise((r) => server.listen(0, '127.0.0.1', r));
const port = server.address().port;

// The page Firefox opens: it runs every job and posts its result (and its errors) back.
const POST_PAGE = `<!doctype html><meta charset="utf-8"><title>OneModel golden</title><body>golden row
<script type="module">
const post = (where, body) => fetch(where, { method: 'POST', body: typeof body === 'string' ? body : JSON.stringify(body) });
window.addEventListener('error', (e) => post('/error', String(e.message)));
window.addEventListener('unhandledrejection', (e) => post('/error', String(e.reason && e.reason.stack || e.reason)));
try {
  const { simd, threads, relaxed, jobs } = await (await fetch('/jobs.json')).json();
  const { loadOneModel } = await import('/js/browser.mjs');
  const om = await loadOneModel({ baseUrl: '/wasm', simd, threads, relaxed });
  await post('/flavour', \`\${navigator.userAgent}, wasm \${om.flavour}, \${om.threads} thread(s), crossOriginIsolated \${crossOriginIsolated}\`);
  for (const j of jobs) {
    const t0 = performance.now();
    const files = new Map();
    for (const f of j.files) {
      const resp = await fetch(f);
      if (!resp.ok) throw new Error(\`fetch \${f}: \${resp.status}\`);
      files.set(f, new Uint8Array(await resp.arrayBuffer()));
    }
    const r = await om.run(j.args, files);
    await post('/result', { label: j.label, stdout: r.stdout, code: r.code, seconds: (performance.now() - t0) / 1000 });
  }
  await post('/done', '');
} catch (e) {
  await post('/error', String(e && e.stack || e));
}
</script>`;

async function runChromium() {
  const { chromium } = await import('playwright-core');
  const browser = await chromium.launch({ executablePath: process.env.CHROMIUM || '/usr/bin/chromium', headless: true,
    args: ['--no-sandbox', '--js-flags=--max-old-space-size=8192'] });
  let code = 0;
  try {
    const page = await browser.newPage();
    page.on('pageerror', (e) => process.stderr.write(`[page error] ${e.message}\n`));
    page.on('console', (m) => { if (m.type() === 'log') process.stderr.write(m.text()); });  // the module's live stderr
    await page.goto(`http://127.0.0.1:${port}/`);
    const flavour = await page.evaluate(async ([simdArg, threadsArg, relaxedArg]) => {
      const { loadOneModel } = await import('/js/browser.mjs');
      window.om = await loadOneModel({ baseUrl: '/wasm', simd: simdArg, threads: threadsArg, relaxed: relaxedArg });
      return `${window.om.flavour}, ${window.om.threads} thread(s), crossOriginIsolated ${crossOriginIsolated}`;
    }, [simd, threads, relaxed]);
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
  }
  return code;
}

// Firefox ESR without a driver: a fresh profile (no first-run pages, no updates or
// telemetry; the wasm tiers by --tier), started headless on the page, which posts back.
async function runFirefox() {
  const exe = process.env.FIREFOX || '/usr/bin/firefox-esr';
  if (!fs.existsSync(exe)) throw new Error(`${exe} not found (apt-get install firefox-esr)`);
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'onemodel-firefox-'));
  const prefs = {
    'browser.shell.checkDefaultBrowser': false, 'browser.startup.homepage_override.mstone': 'ignore',
    'browser.aboutwelcome.enabled': false, 'startup.homepage_welcome_url': '', 'datareporting.policy.dataSubmissionEnabled': false,
    'toolkit.telemetry.reportingpolicy.firstRun': false, 'app.update.auto': false, 'app.update.enabled': false,
    'browser.tabs.remote.autostart': true, 'dom.max_script_run_time': 0, 'javascript.options.wasm_baselinejit': tier !== 'ion',
    'javascript.options.wasm_optimizingjit': tier !== 'baseline',
  };
  fs.writeFileSync(path.join(profile, 'user.js'),
    Object.entries(prefs).map(([k, v]) => `user_pref(${JSON.stringify(k)}, ${JSON.stringify(v)});`).join('\n') + '\n');
  let code = 0;
  let last = Date.now();
  const finished = new Promise((resolve) => {
    onPost = (where, body) => {
      last = Date.now();
      if (where === '/flavour') process.stderr.write(`[browser] ${body} (wasm tiers: ${tier})\n`);
      else if (where === '/result') {
        const r = JSON.parse(body);
        process.stdout.write(r.stdout);
        process.stderr.write(`[browser] ${r.label}: ${r.seconds.toFixed(1)} s in the page${r.code ? `, exit ${r.code}` : ''}\n`);
        if (r.code) code = 1;
      } else if (where === '/error') { process.stderr.write(`[page error] ${body}\n`); code = 1; resolve(); }
      else if (where === '/done') resolve();
    };
  });
  const ff = spawn(exe, ['--headless', '--no-remote', '--profile', profile, `http://127.0.0.1:${port}/post.html`],
    { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, MOZ_HEADLESS: '1' }, detached: true });
  let ffErr = '';
  ff.stderr.on('data', (d) => { ffErr = (ffErr + d).slice(-4000); });
  const exited = new Promise((resolve) => ff.on('exit', (c, sig) => resolve(`exited (${sig || c})`)));
  // Silence for 30 minutes (no job finished) is a hang.
  const watchdog = new Promise((resolve) => {
    const t = setInterval(() => { if (Date.now() - last > 30 * 60 * 1000) { clearInterval(t); resolve('no result for 30 minutes'); } }, 10000);
    finished.then(() => clearInterval(t));
  });
  const why = await Promise.race([finished.then(() => null), exited, watchdog]);
  if (why) {
    process.stderr.write(`[browser] Firefox ${why} before the page was done\n${ffErr}`);
    code = 1;
  }
  try { process.kill(-ff.pid, 'SIGTERM'); } catch { /* gone */ }
  await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
  try { process.kill(-ff.pid, 'SIGKILL'); } catch { /* gone */ }
  fs.rmSync(profile, { recursive: true, force: true });
  return code;
}

let code = 1;
try {
  code = browserName === 'firefox' ? await runFirefox() : await runChromium();
} catch (e) {
  process.stderr.write(`[browser] ${e.message}\n`);
} finally {
  server.close();
}
process.exit(code);
