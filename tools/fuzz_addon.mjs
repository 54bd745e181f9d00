// Fuzzes the npm package's native engine (the N-API addon) in node: the committed graphs
// of testdata/graphs, mutated (bytes flipped, overwritten, cut, inserted, copied over
// other places), loaded and run with their .npy inputs through the package's API. A crash
// takes the whole node process down, which is what this looks for: the input under test
// is written to build/fuzz-addon/current.onnx before each try, so after a crash it is
// the finding. Every failure must be a OneModelError with a `code` other than
// 'internal'; anything else is a finding too (written to build/fuzz-addon/finding-N.onnx).
//   node tools/fuzz_addon.mjs [--runs N] [--seed S]     (defaults: 2000 runs, seed 1)
// Prints one line: `fuzz-addon: N runs (seed S), K loaded, R ran, E typed errors, F findings`
// and exits 1 when F > 0. tests/js/engines.mjs calls fuzzAddon() for 400 runs in its own
// process (a crash fails that test file); longer runs are by hand.
import { readFileSync, readdirSync, writeFileSync, mkdirSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import * as ort from '../js/index.node.mjs';
import { engineInfo } from '../js/index.node.mjs';
import { readNpy } from './lib/npy.mjs';

const G = 'testdata/graphs';
const OUT = 'build/fuzz-addon';

// xorshift32: the same mutants for the same seed on every machine.
let state = 1;
const rand = () => { state ^= state << 13; state >>>= 0; state ^= state >>> 17; state ^= state << 5; state >>>= 0; return state; };
const below = (n) => rand() % n;

function loadNpy(path) {
  const t = readNpy(path);
  return new ort.Tensor(t.type, t.data, t.dims);
}

const loadSeeds = () => readdirSync(G).filter((f) => f.endsWith('.onnx')).sort().map((f) => {
  const g = f.slice(0, -5);
  const feeds = Object.fromEntries(readFileSync(`${G}/${g}.inputs`, 'utf8').trim().split('\n')
    .map((l) => l.split('=')).map(([k, v]) => [k, loadNpy(`${G}/${v}`)]));
  return { g, bytes: new Uint8Array(readFileSync(`${G}/${f}`)), feeds };
});

function mutate(src) {
  let b = Uint8Array.from(src);
  for (let n = 1 + below(4); n > 0; --n) {
    const at = below(b.length);
    switch (below(6)) {
      case 0: b[at] ^= 1 << below(8); break;  // a bit flipped
      case 1: b[at] = [0, 1, 0x7f, 0x80, 0xff][below(5)]; break;  // an interesting byte
      case 2: b = b.subarray(0, at); break;  // cut short
      case 3: {  // bytes inserted
        const ins = Uint8Array.from({ length: 1 + below(8) }, () => below(256));
        const c = new Uint8Array(b.length + ins.length);
        c.set(b.subarray(0, at)); c.set(ins, at); c.set(b.subarray(at), at + ins.length);
        b = c;
        break;
      }
      case 4: {  // a run copied over another place
        const from = below(b.length), len = Math.min(1 + below(32), b.length - Math.max(from, at));
        if (len > 0) b.copyWithin(at, from, from + len);
        break;
      }
      default: {  // a varint made large
        b[at] |= 0x80;
        if (at + 1 < b.length) b[at + 1] = 0xff;
      }
    }
    if (b.length === 0) break;
  }
  return b;
}

// Runs `runs` mutants of seed `seed` through the package's current engine; returns the
// counts and the summary line.
export async function fuzzAddon({ runs = 2000, seed: rngSeed = 1 } = {}) {
  state = (rngSeed >>> 0) || 1;
  mkdirSync(OUT, { recursive: true });
  const seeds = loadSeeds();
  const info = engineInfo();
  let loaded = 0, ran = 0, typed = 0, findings = 0;
  for (let k = 0; k < runs; ++k) {
    const seed = seeds[below(seeds.length)];
    const bytes = mutate(seed.bytes);
    writeFileSync(`${OUT}/current.onnx`, bytes);
    try {
      // Small limits keep a mutant that declares a huge tensor from taking the machine.
      const s = await ort.InferenceSession.create(bytes, { extra: { onemodel: { limits: { maxTensorBytes: 2 ** 28, maxSessionBytes: 2 ** 30 } } } });
      ++loaded;
      try {
        const feeds = Object.fromEntries(s.inputNames.filter((n) => seed.feeds[n]).map((n) => [n, seed.feeds[n]]));
        await s.run(feeds, { extra: { onemodel: { timeLimitMs: 2000 } } });
        ++ran;
      } finally {
        await s.release();
      }
    } catch (e) {
      if (e?.name === 'OneModelError' && typeof e.code === 'string' && e.code !== 'internal') {
        ++typed;
      } else if (e?.code === 'missing_input') {
        ++typed;  // onnxruntime-common's own check of the feeds (a mutant renamed an input)
      } else {
        writeFileSync(`${OUT}/finding-${findings}.onnx`, bytes);
        console.error(`finding ${findings} (from ${seed.g}, run ${k}): ${e?.code ?? ''} ${e?.stack ?? e}`);
        ++findings;
      }
    }
  }
  const line = `fuzz-addon: ${runs} runs (seed ${rngSeed}, engine ${info.engine}), ${loaded} loaded, ${ran} ran, ${typed} typed errors, ${findings} findings`;
  return { loaded, ran, typed, findings, line };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const args = process.argv.slice(2);
  const opt = (name, dflt) => { const i = args.indexOf(name); return i >= 0 ? Number(args[i + 1]) : dflt; };
  ort.env.onemodel.engine = process.env.ONEMODEL_ENGINE ?? 'native';
  const r = await fuzzAddon({ runs: opt('--runs', 2000), seed: opt('--seed', 1) });
  console.log(r.line);
  process.exit(r.findings ? 1 : 0);
}
