// The wasm flavours' one-thread speed side by side: the CLI's `bench` at one session
// thread on the SIMD128 flavour and on the SIMD128 + threads flavour (loaded with one
// worker, which this bench leaves idle), in alternating rounds, each a fresh process;
// prints each round's min_ms, then the medians of the minima and of the per-round ratio
// (threads flavour / SIMD flavour). What it shows: the threaded flavour's own costs
// (JS-based exceptions, atomics in shared memory) on one thread. Never part of the tests.
//   node tools/wasm_flavours.mjs MODEL [--rounds R] [--runs N] [-- bench args...]
// Needs tools/build.sh wasm.
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import os from 'node:os';

const argv = process.argv.slice(2);
const model = argv[0];
let rounds = 5, runs = '5', extra = [];
for (let i = 1; i < argv.length; ++i) {
  if (argv[i] === '--rounds') rounds = Number(argv[++i]);
  else if (argv[i] === '--runs') runs = argv[++i];
  else if (argv[i] === '--') { extra = argv.slice(i + 1); break; }
  else { console.error(`wasm_flavours: unknown argument ${argv[i]}`); process.exit(2); }
}
if (!model) { console.error('usage: node tools/wasm_flavours.mjs MODEL [--rounds R] [--runs N] [-- bench args...]'); process.exit(2); }
const self = fileURLToPath(import.meta.url);
if (process.env.ONEMODEL_FLAVOUR_CHILD) {
  // One measurement: load the flavour for ONEMODEL_FLAVOUR_CHILD threads, bench at 1.
  const { loadOneModel } = await import('../js/loader.mjs');
  const { module, flavour } = await loadOneModel({ threads: Number(process.env.ONEMODEL_FLAVOUR_CHILD) });
  const args = new module.StringVector();
  for (const a of ['bench', model, '--threads', '1', '--runs', runs, ...extra]) args.push_back(a);
  const r = module.runCli(args);
  const m = /min_ms=([\d.]+)/.exec(r.stdout);
  if (r.code !== 0 || !m) { process.stderr.write(r.stdout); process.exit(1); }
  process.stdout.write(`${flavour} ${m[1]}\n`);
  process.exit(0);
}
const median = (v) => { const s = [...v].sort((a, b) => a - b); const n = s.length; return n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2; };
const one = (t) => Number(execFileSync(process.execPath, [self, ...process.argv.slice(2)], {
  env: { ...process.env, ONEMODEL_FLAVOUR_CHILD: String(t) }, encoding: 'utf8' }).trim().split(' ')[1]);
console.log(`cpu: ${os.cpus()[0]?.model}; ${model}, ${rounds} rounds of ${runs} runs, 1 session thread`);
const a = [], b = [];
for (let i = 0; i < rounds; ++i) {
  a.push(one(1));
  b.push(one(2));
  console.log(`round ${i + 1}: simd ${a[i]} ms, simd-threads ${b[i]} ms`);
}
console.log(`median of minima: simd ${median(a).toFixed(2)} ms, simd-threads ${median(b).toFixed(2)} ms; median ratio ${median(b.map((x, i) => x / a[i])).toFixed(3)}`);
