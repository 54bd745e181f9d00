#!/usr/bin/env node
// The node CLI: the same commands and output as the native `onemodel`, run by the wasm
// build. Extra options: --simd on|off (default: detect); --relaxed-simd off|detect (default:
// ONEMODEL_WASM_RELAXED, else detect: at one thread, the SIMD128 + relaxed SIMD flavour where
// the engine validates it). --threads N (or ONEMODEL_THREADS) above 1 runs the threaded
// flavour (SIMD128 + pthreads) with N - 1 Web Workers; without either, one thread (the
// single-thread flavours). ONEMODEL_VERBOSE=1 names the flavour on stderr.
import { loadOneModel } from '../loader.mjs';

const argv = process.argv.slice(2);
let simd = 'detect';
let relaxed;
const rest = [];
for (let i = 0; i < argv.length; i++) {
  if (argv[i] === '--simd' && i + 1 < argv.length) simd = argv[++i];
  else if (argv[i].startsWith('--simd=')) simd = argv[i].slice(7);
  else if (argv[i] === '--relaxed-simd' && i + 1 < argv.length) relaxed = argv[++i];
  else if (argv[i].startsWith('--relaxed-simd=')) relaxed = argv[i].slice(15);
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
  const { module, flavour } = await loadOneModel({ simd, relaxed, threads: Math.min(threads, 1024) });
  if (process.env.ONEMODEL_VERBOSE === '1') process.stderr.write(`[onemodel] wasm flavour: ${flavour}\n`);
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
