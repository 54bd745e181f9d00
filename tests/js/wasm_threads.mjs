// The threaded wasm flavour (SIMD128 + pthreads) through the package's node entry:
// env.wasm.numThreads above 1 loads it, its workers are shared by every session, every
// committed graph gives the committed hashes, bad thread counts are typed errors, and the
// workers never keep node's process alive. tools/test.sh runs it in the js row.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import * as ort from '../../js/index.node.mjs';
import { engineInfo, goldenHash, wasmMemory } from '../../js/index.node.mjs';
import { readNpy } from '../../tools/lib/npy.mjs';

const G = 'testdata/graphs';
ort.env.onemodel.engine = 'wasm';
ort.env.wasm.numThreads = 3;

const committed = Object.fromEntries(readFileSync(`${G}/golden-exact.txt`, 'utf8').trim().split('\n').map((l) => l.split(' ')));
const graphs = readdirSync(G).filter((f) => f.endsWith('.onnx')).map((f) => f.slice(0, -5)).sort();
const feedsOf = (g) => Object.fromEntries(readFileSync(`${G}/${g}.inputs`, 'utf8').trim().split('\n')
  .map((l) => l.split('=')).map(([k, v]) => {
    const t = readNpy(`${G}/${v}`);
    return [k, new ort.Tensor(t.type, t.data, t.dims)];
  }));

test('numThreads 3: the threaded flavour, shared by every session, the committed hashes', async () => {
  assert.deepEqual(engineInfo(), { engine: 'wasm', reason: 'asked for', threads: 3 });
  const sessions = [];
  let compared = 0;
  for (const g of graphs) {
    // Every session stays open: they share the module's two workers (none is made per session).
    const s = await ort.InferenceSession.create(`${G}/${g}.onnx`);
    sessions.push(s);
    assert.equal(s.handler.module.onemodelFlavour, 'simd-threads');
    const r = await s.run(feedsOf(g), s.outputMetadata.filter((m) => m.isTensor && !/float8|bfloat16|float4/.test(m.type)).map((m) => m.name));
    for (const [name, t] of Object.entries(r)) {
      assert.equal(await goldenHash(t), committed[`${g}/${name}`], `${g}/${name}`);
      ++compared;
    }
  }
  const m = sessions[0].handler.module;
  assert.equal(m.PThread.unusedWorkers.length + m.PThread.runningWorkers.length, 2, 'numThreads - 1 workers in all');
  for (const s of sessions) await s.release();
  assert.ok(compared >= 53, `${compared} outputs compared`);
  const mem = await wasmMemory();
  assert.ok(mem.inUse > 0 && mem.inUse <= mem.heapSize);
});

test('numThreads that is not a whole number >= 0: a typed error, before any module loads', () => {
  const script = (n) => `import * as ort from './js/index.node.mjs';
    ort.env.onemodel.engine = 'wasm'; ort.env.wasm.numThreads = ${n};
    try { await ort.InferenceSession.create('${G}/conv_net.onnx'); console.log('loaded'); }
    catch (e) { console.log(e.code ?? 'none', e.message); }`;
  for (const n of ['-1', '1.5', "'2'"]) {
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', script(n)], { encoding: 'utf8', timeout: 60000 });
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /^invalid_argument .*numThreads must be a whole number/, `numThreads ${n}: ${r.stdout}`);
  }
});

test('the workers do not keep node alive: a script with 4 wasm threads exits by itself', () => {
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', `import * as ort from './js/index.node.mjs';
    ort.env.onemodel.engine = 'wasm'; ort.env.wasm.numThreads = 4;
    const s = await ort.InferenceSession.create('${G}/conv_net.onnx');
    console.log(s.handler.module.onemodelFlavour, s.handler.module.onemodelThreads);`], { encoding: 'utf8', timeout: 60000 });
  assert.equal(r.signal, null, 'killed by the timeout: the process did not exit');
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout.trim(), 'simd-threads 4');
});
