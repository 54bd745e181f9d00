// The wasm flavours' one-thread speed side by side, in alternating rounds, each a fresh
// process; prints each round's min_ms, then the medians of the minima and of the per-round
// ratio (B / A). Never part of the tests.
//   --compare threads (default): A the SIMD128 flavour, B the SIMD128 + threads flavour
//     loaded with one worker, which this bench leaves idle: the threaded flavour's own
//     costs (JS-based exceptions, atomics in shared memory) on one thread.
//   --compare relaxed: A the SIMD128 flavour, B the SIMD128 + relaxed SIMD flavour (node
//     runs with --experimental-wasm-relaxed-simd); with `-- --mode fast` fast mode's fused
//     multiply-add twins against the same fast session without them.
//   node tools/wasm_flavours.mjs MODEL [--compare threads|relaxed] [--rounds R] [--runs N] [-- bench args...]
// Needs tools/build.sh wasm.
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import os from 'node:os';

const argv = process.argv.slice(2);
const model = argv[0];
let rounds = 5, runs = '5', extra = [], compare = 'threads';
for (let i = 1; i < argv.length; ++i) {
  if (argv[i] === '--rounds') rounds = Number(argv[++i]);
  else if (argv[i] === '--compare') compare = argv[++i];
  else if (argv[i] === '--runs') runs = argv[++i];
  else if (argv[i] === '--') { extra = argv.slice(i + 1); break; }
  else { console.error(`wasm_flavours: unknown argument ${argv[i]}`); process.exit(2); }
}
if (!model || !['threads', 'relaxed'].includes(compare)) {
  console.error('usage: node tools/wasm_flavours.mjs MODEL [--compare threads|relaxed] [--rounds R] [--runs N] [-- bench args...]');
  process.exit(2);
}
const self = fileURLToPath(import.meta.url);
if (process.env.ONEMODEL_FLAVOUR_CHILD) {
  // One measurement: load the flavour (ONEMODEL_FLAVOUR_CHILD: the module's thread count,
  // or relaxed-off / relaxed-detect), bench at 1 session thread.
  const { loadOneModel } = await import('../js/loader.mjs');
  const c = process.env.ONEMODEL_FLAVOUR_CHILD;
  const { module, flavour } = await loadOneModel(c.startsWith('relaxed-') ? { threads: 1, relaxed: c.slice(8) } : { threads: Number(c) });
  const args = new module.StringVector();
  for (const a of ['bench', model, '--threads', '1', '--runs', runs, ...extra]) args.push_back(a);
  const r = module.runCli(args);
  const m = /min_ms=([\d.]+)/.exec(r.stdout);
  if (r.code !== 0 || !m) { process.stderr.write(r.stdout); process.exit(1); }
  process.stdout.write(`${flavour} ${m[1]}\n`);
  process.exit(0);
}
const median = (v) => { const s = [...v].sort((a, b) => a - b); const n = s.length; return n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2; };
const flags = compare === 'relaxed' ? ['--experimental-wasm-relaxed-simd'] : [];
const one = (t) => execFileSync(process.execPath, [...flags, self, ...process.argv.slice(2)], {
  env: { ...process.env, ONEMODEL_FLAVOUR_CHILD: String(t) }, encoding: 'utf8' }).trim().split(' ');
const [ca, cb] = compare === 'relaxed' ? ['relaxed-off', 'relaxed-detect'] : [1, 2];
console.log(`cpu: ${os.cpus()[0]?.model}; ${model}, ${rounds} rounds of ${runs} runs, 1 session thread; bench args: ${extra.join(' ') || '-'}`);
const a = [], b = [];
let na = '', nb = '';
for (let i = 0; i < rounds; ++i) {
  const x = one(ca), y = one(cb);
  [na, nb] = [x[0], y[0]];
  a.push(Number(x[1]));
  b.push(Number(y[1]));
  console.log(`round ${i + 1}: ${na} ${a[i]} ms, ${nb} ${b[i]} ms`);
}
console.log(`median of minima: ${na} ${median(a).toFixed(2)} ms, ${nb} ${median(b).toFixed(2)} ms; median ratio ${nb} / ${na} ${median(b.map((x, i) => x / a[i])).toFixed(3)}`);
