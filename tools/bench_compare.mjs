// Two OneModel builds side by side in one run (a change's speed against the build before
// it): each reference model timed by both native CLIs in turn, `--rounds` times, at 1 and
// 2 threads; per model each build's fastest run over all rounds (on a shared VM the
// minimum is the steadiest statistic: interference only ever adds time) and the median
// of its per-round medians, with the ratios new / old (above 1.0: the new build is
// slower). The builds alternate so that the machine's drift falls on both. Never part
// of the tests.
//   node tools/bench_compare.mjs OLD_CLI NEW_CLI [--runs N] [--rounds R] [--only a,b] [--threads 1,2|none]
//                                [--old-wasm DIR --new-wasm DIR]
// OLD_CLI / NEW_CLI: paths of `onemodel` binaries (e.g. a worktree's build/native/onemodel).
// --old-wasm / --new-wasm: two checkouts' roots; their js/bin/onemodel.mjs (SIMD build) are
// compared too, at 1 thread.
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const positional = [];
let runs = 7, rounds = 3, only = null, threads = [1, 2], oldWasm = null, newWasm = null;
const modelsDir = path.join(ROOT, 'models');
for (let i = 0; i < args.length; ++i) {
  if (args[i] === '--runs') runs = Number(args[++i]);
  else if (args[i] === '--rounds') rounds = Number(args[++i]);
  else if (args[i] === '--only') only = args[++i].split(',');
  else if (args[i] === '--threads') threads = args[++i] === 'none' ? [] : args[i].split(',').map(Number);
  else if (args[i] === '--old-wasm') oldWasm = path.resolve(args[++i]);
  else if (args[i] === '--new-wasm') newWasm = path.resolve(args[++i]);
  else if (args[i].startsWith('--')) { console.error(`bench_compare: unknown option ${args[i]}`); process.exit(2); }
  else positional.push(path.resolve(args[i]));
}
if (positional.length !== 2) {
  console.error('usage: node tools/bench_compare.mjs OLD_CLI NEW_CLI [--runs N] [--rounds R] [--only a,b] [--threads 1,2]');
  process.exit(2);
}
const [oldCli, newCli] = positional;
const MODELS = ['resnet50', 'mobilenet_v3_large', 'dbnet', 'crnn', 'bert_base', 'minilm_l6', 'whisper_encoder'];
const spec = JSON.parse(fs.readFileSync(path.join(ROOT, 'tools/models.json'), 'utf8'));
const byName = new Map(spec.models.map((m) => [m.name, m]));
const median = (v) => { const s = [...v].sort((a, b) => a - b); const n = s.length; return n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2; };
const log = (s) => process.stderr.write(`[bench_compare] ${s}\n`);

function time(cmd, pre, file, m, t) {
  const a = [...pre, '--threads', String(t), 'bench', file, '--runs', String(runs)];
  for (const [name, f] of Object.entries(m.inputs)) a.push('--input', `${name}=${path.join(modelsDir, 'inputs', f)}`);
  const out = execFileSync(cmd, a, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], maxBuffer: 1 << 26 });
  const last = out.trim().split('\n').pop();
  return { median: Number(/median_ms=([0-9.]+)/.exec(last)[1]), min: Number(/min_ms=([0-9.]+)/.exec(last)[1]) };
}

const cpu = fs.readFileSync('/proc/cpuinfo', 'utf8');
const field = (k) => (new RegExp(`^${k}\\s*:\\s*(.*)$`, 'm').exec(cpu) || [])[1];
console.log(`CPU: ${field('model name')} (family ${field('cpu family')}, model ${field('model')}); ` +
            `${runs} runs per round, ${rounds} alternating rounds; min: the fastest run, median: of the rounds' medians; ratio = new / old.`);
console.log('');
const heads = threads.map((t) => `${t}t min old / new | ratio | ${t}t median ratio`);
if (oldWasm && newWasm) heads.push('wasm min old / new | ratio | wasm median ratio');
console.log(`| model | ${heads.join(' | ')} |`);
console.log(`|---|${heads.map(() => '---|---|---|').join('')}`);
const fmt = (x) => (x >= 100 ? x.toFixed(0) : x.toFixed(2));
for (const name of only || MODELS) {
  const m = byName.get(name);
  const file = path.join(modelsDir, `${name}.onnx`);
  if (!m || !fs.existsSync(file)) { log(`${name}: not prepared, skipped`); continue; }
  const cells = [];
  const kinds = threads.map((t) => ({ label: `${t}t`, old: () => time(oldCli, [], file, m, t), new: () => time(newCli, [], file, m, t) }));
  if (oldWasm && newWasm) {
    const w = (root) => () => time('node', [path.join(root, 'js/bin/onemodel.mjs'), '--simd', 'on'], file, m, 1);
    kinds.push({ label: 'wasm', old: w(oldWasm), new: w(newWasm) });
  }
  for (const k of kinds) {
    const o = [], n = [];
    for (let r = 0; r < rounds; ++r) {
      if (r % 2 === 0) { o.push(k.old()); n.push(k.new()); } else { n.push(k.new()); o.push(k.old()); }
    }
    const mo = median(o.map((x) => x.median)), mn = median(n.map((x) => x.median));
    const lo = Math.min(...o.map((x) => x.min)), ln = Math.min(...n.map((x) => x.min));
    log(`${name} ${k.label}: min old ${fmt(lo)} new ${fmt(ln)} ms (${(ln / lo).toFixed(3)}), median ratio ${(mn / mo).toFixed(3)}`);
    cells.push(`${fmt(lo)} / ${fmt(ln)} | ${(ln / lo).toFixed(3)} | ${(mn / mo).toFixed(3)}`);
  }
  console.log(`| ${name} | ${cells.join(' | ')} |`);
}
