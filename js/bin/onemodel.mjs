#!/usr/bin/env node
// The node CLI: the same commands and output as the native `onemodel`, run by the wasm
// build. Extra option: --simd on|off (default: detect). --threads N (or ONEMODEL_THREADS)
// above 1 runs the threaded flavour (SIMD128 + pthreads) with N - 1 Web Workers; without
// either, one thread (the single-thread flavours).
import { loadOneModel } from '../loader.mjs';

const argv = process.argv.slice(2);
let simd = 'detect';
const rest = [];
for (let i = 0; i < argv.length; i++) {
  if (argv[i] === '--simd' && i + 1 < argv.length) simd = argv[++i];
  else if (argv[i].startsWith('--simd=')) simd = argv[i].slice(7);
  else rest.push(argv[i]);
}
// The thread count decides the flavour before the module starts (its workers are made
// then); the command parses --threads again itself, with its own errors.
let threads = Number(process.env.ONEMODEL_THREADS || 1);
for (let i = 0; i < rest.length; i++) {
  const v = rest[i] === '--threads' ? rest[i + 1] : rest[i].startsWith('--threads=') ? rest[i].slice(10) : undefined;
  if (v !== undefined) threads = Number(v);
}
if (!Number.isInteger(threads) || threads < 1) threads = 1;

try {
  const { module } = await loadOneModel({ simd, threads: Math.min(threads, 1024) });
  const args = new module.StringVector();
  for (const a of rest) args.push_back(a);
  const r = module.runCli(args);
  args.delete();
  process.stdout.write(r.stdout);  // stderr was written as the command ran
  process.exitCode = r.code;
} catch (e) {
  process.stderr.write(`${e.message}\n`);
  process.exitCode = 1;
}
