#!/usr/bin/env node
// Golden rows: runs `onemodel golden` (or any command printing `<key> <hex>` lines) under
// each row's environment, saves each row's lines, and compares them line by line.
//
//   node tools/golden_hash.mjs --out DIR --row NAME='COMMAND' [--row ...] [--keep-going]
//       runs each COMMAND with bash (stdout -> DIR/NAME.txt, stderr passed through);
//       a row whose command fails is reported and counts as differing on every line.
//       --partial NAME: that row runs a subset (arm64 under qemu, the -O0 build); lines
//       it lacks are not differences, every line it has must still be equal.
//       --jobs N: run up to N rows at once (rows pinned to one thread; default 1).
//   node tools/golden_hash.mjs --merge [--table FILE.md] RESULT.txt ... | DIR ...
//       joins rows saved earlier, on this machine or others (the row name is the file
//       name; prefix files with the machine's name to keep them apart), into one table.
//
// The first row is the reference. Every line key of any row must be in every row with
// the same hash. The last line is the verdict: `ALL ROWS EQUAL (R rows, L lines)`, or
// `ROWS DIFFER (D of L lines; rows: ...)` after one `DIFF <key> <row>=<hash> ...` line
// per differing line, with exit status 1. --table writes the rows x lines table as
// markdown: lines down, rows across, each cell `=` (same as the reference) or the
// first 8 hex digits of the differing hash (`-` where the line is missing).
import fs from 'node:fs';
import path from 'node:path';
import { spawn } from 'node:child_process';

const argv = process.argv.slice(2);
let out = null, merge = false, table = null, keepGoing = false, jobs = 1;
const partial = new Set();
const rows = [];   // { name, cmd }
const files = [];
for (let i = 0; i < argv.length; ++i) {
  const a = argv[i];
  if (a === '--out') out = argv[++i];
  else if (a === '--row') {
    const s = argv[++i];
    const eq = s.indexOf('=');
    if (eq <= 0) die(`--row needs NAME=COMMAND, not '${s}'`);
    rows.push({ name: s.slice(0, eq), cmd: s.slice(eq + 1) });
  } else if (a === '--merge') merge = true;
  else if (a === '--table') table = argv[++i];
  else if (a === '--keep-going') keepGoing = true;
  else if (a === '--partial') partial.add(argv[++i]);
  else if (a === '--jobs') jobs = Math.max(1, Number(argv[++i]) || 1);
  else if (a === '-h' || a === '--help') { console.log(fs.readFileSync(new URL(import.meta.url), 'utf8').split('\n').filter((l) => l.startsWith('//')).map((l) => l.slice(3)).join('\n')); process.exit(0); }
  else if (merge) files.push(a);
  else die(`unexpected argument '${a}'`);
}

function die(msg) { console.error(`golden_hash: ${msg}`); process.exit(2); }

function parse(text, where) {
  const m = new Map();
  for (const line of text.split('\n')) {
    if (!line) continue;
    const sp = line.lastIndexOf(' ');
    if (sp <= 0) die(`${where}: not a '<key> <hash>' line: ${line}`);
    const key = line.slice(0, sp);
    if (m.has(key)) die(`${where}: line ${key} appears twice`);
    m.set(key, line.slice(sp + 1));
  }
  return m;
}

const results = [];  // { name, lines: Map, failed }
if (merge) {
  const paths = [];
  for (const f of files) {
    if (fs.statSync(f).isDirectory()) {
      for (const e of fs.readdirSync(f).sort()) if (e.endsWith('.txt')) paths.push(path.join(f, e));
    } else paths.push(f);
  }
  if (paths.length < 1) die('--merge needs saved row files');
  for (const p of paths) results.push({ name: path.basename(p, '.txt'), lines: parse(fs.readFileSync(p, 'utf8'), p), failed: false });
} else {
  if (!rows.length) die('give --row NAME=COMMAND (at least one), or --merge FILES');
  if (out) fs.mkdirSync(out, { recursive: true });
  const runRow = (r) => new Promise((resolve) => {
    const t0 = Date.now();
    process.stderr.write(`[row ${r.name}] ${r.cmd}\n`);
    const child = spawn('bash', ['-c', r.cmd], { stdio: ['ignore', 'pipe', 'inherit'] });
    const chunks = [];
    child.stdout.on('data', (c) => chunks.push(c));
    child.on('close', (status) => {
      const stdout = Buffer.concat(chunks).toString('utf8');
      const failed = status !== 0;
      const secs = ((Date.now() - t0) / 1000).toFixed(1);
      process.stderr.write(`[row ${r.name}] ${failed ? `FAILED (exit ${status})` : 'done'} in ${secs} s, ${stdout.split('\n').filter(Boolean).length} lines\n`);
      if (out) fs.writeFileSync(path.join(out, `${r.name}.txt`), stdout);
      resolve({ name: r.name, lines: failed ? new Map() : parse(stdout, r.name), failed });
    });
  });
  const done = new Array(rows.length);
  let next = 0, stop = false;
  const worker = async () => {
    while (!stop && next < rows.length) {
      const i = next++;
      done[i] = await runRow(rows[i]);
      if (done[i].failed && !keepGoing) stop = true;
    }
  };
  await Promise.all(Array.from({ length: jobs }, worker));
  for (const d of done) if (d) results.push(d);
}

// Compare: every key of any row, in first-seen order.
const keys = [];
const seen = new Set();
for (const r of results) for (const k of r.lines.keys()) if (!seen.has(k)) { seen.add(k); keys.push(k); }
const ref = results[0];
const diffs = [];
for (const k of keys) {
  const h0 = ref.lines.get(k);
  const bad = results.filter((r) => (r.lines.get(k) !== h0 || h0 === undefined) && !(partial.has(r.name) && !r.lines.has(k)));
  if (bad.length) diffs.push(k);
}
const failedRows = results.filter((r) => r.failed).map((r) => r.name);
for (const k of diffs) {
  console.log(`DIFF ${k} ${results.map((r) => `${r.name}=${r.lines.has(k) ? r.lines.get(k).slice(0, 16) : 'missing'}`).join(' ')}`);
}
if (table) {
  const short = (r, k) => (!r.lines.has(k) ? '-' : r === ref || r.lines.get(k) === ref.lines.get(k) ? '=' : r.lines.get(k).slice(0, 8));
  const md = [`| line | ${results.map((r) => r.name).join(' | ')} |`, `|---|${results.map(() => '---').join('|')}|`];
  for (const k of keys) md.push(`| ${k} | ${results.map((r) => (r === ref ? (r.lines.get(k) || '-').slice(0, 8) : short(r, k))).join(' | ')} |`);
  fs.writeFileSync(table, md.join('\n') + '\n');
}
if (!diffs.length && !failedRows.length && results.length === (merge ? results.length : rows.length)) {
  const parts = results.filter((r) => partial.has(r.name)).map((r) => `${r.name} ${r.lines.size}`);
  console.log(`ALL ROWS EQUAL (${results.length} rows, ${keys.length} lines${parts.length ? `; partial rows: ${parts.join(', ')} lines` : ''})`);
  process.exit(0);
}
const which = [...new Set([...failedRows, ...results.filter((r) => diffs.some((k) => r.lines.get(k) !== ref.lines.get(k) && !(partial.has(r.name) && !r.lines.has(k)))).map((r) => r.name)])];
if (failedRows.length) console.log(`FAILED ROWS: ${failedRows.join(' ')}`);
console.log(`ROWS DIFFER (${diffs.length} of ${keys.length} lines; rows: ${which.join(' ') || 'none ran'})`);
process.exit(1);
