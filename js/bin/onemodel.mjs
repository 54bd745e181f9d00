#!/usr/bin/env node
// The node CLI: the same commands and output as the native `onemodel`, run by the wasm
// build. Extra option: --simd on|off (default: detect).
import { loadOneModel } from '../loader.mjs';

const argv = process.argv.slice(2);
let simd = 'detect';
const rest = [];
for (let i = 0; i < argv.length; i++) {
  if (argv[i] === '--simd' && i + 1 < argv.length) simd = argv[++i];
  else if (argv[i].startsWith('--simd=')) simd = argv[i].slice(7);
  else rest.push(argv[i]);
}

try {
  const { module } = await loadOneModel({ simd });
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
