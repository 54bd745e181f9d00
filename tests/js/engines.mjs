// The package's two engines in node, side by side in one process: the native addon
// (js/native.mjs) and the wasm build give the same bits as each other and as the native
// CLI; the same typed errors for hostile models; the addon runs off the event loop and
// survives mutated models. Under ONEMODEL_REQUIRE_NATIVE=1 (tools/test.sh) an addon that
// does not load is a failure, else these tests are skipped.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import * as ort from '../../js/index.node.mjs';
import { engineInfo, goldenHash } from '../../js/index.node.mjs';
import { model, oneNode, valueInfo, tensorType, countingLoop } from './onnx_writer.mjs';
import { readNpy } from '../../tools/lib/npy.mjs';
import { fuzzAddon } from '../../tools/fuzz_addon.mjs';

const G = 'testdata/graphs';
const CLI = process.env.ONEMODEL_BIN ?? 'build/native/onemodel';
ort.env.onemodel.engine = 'auto';
const native = engineInfo();
const skip = native.engine !== 'native' && process.env.ONEMODEL_REQUIRE_NATIVE !== '1' && `no native addon: ${native.reason}`;
if (!skip) assert.equal(native.engine, 'native', `the native addon did not load: ${native.reason}`);
console.log(`# engine: ${JSON.stringify(native)}`);

// Runs f with sessions made on `engine` ('native' | 'wasm').
async function on(engine, f) {
  const was = ort.env.onemodel.engine;
  ort.env.onemodel.engine = engine;
  try {
    return await f();
  } finally {
    ort.env.onemodel.engine = was;
  }
}

function loadNpy(path) {
  const t = readNpy(path);
  return new ort.Tensor(t.type, t.data, t.dims);
}

const committed = Object.fromEntries(readFileSync(`${G}/golden-exact.txt`, 'utf8').trim().split('\n').map((l) => l.split(' ')));
const graphs = readdirSync(G).filter((f) => f.endsWith('.onnx')).map((f) => f.slice(0, -5)).sort();
const feedsOf = (g) => Object.fromEntries(readFileSync(`${G}/${g}.inputs`, 'utf8').trim().split('\n')
  .map((l) => l.split('=')).map(([k, v]) => [k, loadNpy(`${G}/${v}`)]));
const bytesOf = (t) => (t.type === 'string' ? Buffer.from(JSON.stringify(t.data)) : Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength));

test('every committed graph: native and wasm give the same bytes, the native CLI\'s hashes and the committed ones', { skip }, async () => {
  const cli = spawnSync(CLI, ['golden', '--models', G], { encoding: 'utf8' });
  assert.equal(cli.status, 0, cli.stderr);
  const fromCli = Object.fromEntries(cli.stdout.trim().split('\n').filter((l) => /^\S+\/\S+ [0-9a-f]{64}$/.test(l)).map((l) => l.split(' ')));
  let compared = 0;
  for (const g of graphs) {
    const feeds = feedsOf(g);
    const results = {};
    for (const engine of ['native', 'wasm']) {
      results[engine] = await on(engine, async () => {
        const s = await ort.InferenceSession.create(`${G}/${g}.onnx`);
        // Outputs of types onnxruntime-common's Tensor lacks (float8) cannot be fetched.
        const r = await s.run(feeds, s.outputMetadata.filter((m) => m.isTensor && !/float8|bfloat16|float4/.test(m.type)).map((m) => m.name));
        await s.release();
        return r;
      });
    }
    for (const [name, t] of Object.entries(results.native)) {
      const key = `${g}/${name}`;
      const w = results.wasm[name];
      assert.deepEqual([t.type, t.dims], [w.type, w.dims], key);
      assert.ok(bytesOf(t).equals(bytesOf(w)), `${key}: native and wasm bytes differ`);
      const h = await on('native', () => goldenHash(t));
      assert.equal(h, await on('wasm', () => goldenHash(w)), `${key}: goldenHash on the two engines`);
      assert.equal(h, fromCli[key], `${key}: the native CLI's hash`);
      assert.equal(h, committed[key], `${key}: the committed hash`);
      ++compared;
    }
  }
  assert.ok(compared >= 53, `${compared} outputs compared`);
});

test('intraOpNumThreads 1, 2, 3, 7 and 16: the same bits; concurrent runs of one session', { skip }, async () => {
  for (const g of ['conv_net', 'transformer_block']) {
    const feeds = feedsOf(g);
    for (const threads of [1, 2, 3, 7, 16]) {
      const s = await ort.InferenceSession.create(`${G}/${g}.onnx`, { intraOpNumThreads: threads });
      const runs = await Promise.all(Array.from({ length: 4 }, () => s.run(feeds)));
      for (const r of runs) {
        for (const [name, t] of Object.entries(r)) assert.equal(await goldenHash(t), committed[`${g}/${name}`], `${g}/${name} at ${threads} threads`);
      }
      await s.release();
    }
  }
  await assert.rejects(ort.InferenceSession.create(`${G}/conv_net.onnx`, { intraOpNumThreads: -1 }), (e) => e.code === 'invalid_argument');
});

test('a native run leaves the event loop free: timers fire while it runs', { skip }, async () => {
  const s = await ort.InferenceSession.create(countingLoop());
  const v0 = new ort.Tensor('float32', new Float32Array([0]), [1]);
  const big = new ort.Tensor('int64', new BigInt64Array([10n ** 15n]), []);
  let ticks = 0;
  const timer = setInterval(() => { ++ticks; }, 1);
  let ticksAtEnd = -1;
  const run = s.run({ M: big, v0 }, { extra: { onemodel: { timeLimitMs: 200 } } }).catch((e) => e);
  // The loop turns while the run is under way: a timer set now fires before it ends.
  await new Promise((resolve) => setTimeout(resolve, 20));
  const during = ticks;
  const e = await run;
  ticksAtEnd = ticks;
  clearInterval(timer);
  assert.equal(e.code, 'cancelled', String(e));
  assert.ok(during > 0 && ticksAtEnd >= during, `timer ticks while the run was under way: ${during}`);
  await s.release();
});

// Hostile inputs: [label, model bytes, feeds or null (load only), the code both engines
// give, session options].
function hostile() {
  const good = oneNode('Relu', 1, [2]);
  const f2 = (n) => new ort.Tensor('float32', new Float32Array(n), [n]);
  const cycle = model({ nodes: [{ op: 'Relu', inputs: ['b'], outputs: ['a'] }, { op: 'Relu', inputs: ['a'], outputs: ['b'] }], inputs: [], outputs: [valueInfo('a', tensorType(1, [1]))] });
  const negative = model({
    nodes: [{ op: 'Identity', inputs: ['w'], outputs: ['y'] }], inputs: [], outputs: [valueInfo('y', tensorType(7, [3]))],
    initializers: [{ name: 'w', elemType: 7, dims: [-1, 3], raw: new Uint8Array(24) }],
  });
  const huge = model({
    nodes: [{ op: 'Identity', inputs: ['w'], outputs: ['y'] }], inputs: [], outputs: [valueInfo('y', tensorType(7, [1]))],
    initializers: [{ name: 'w', elemType: 7, dims: [2 ** 40, 2 ** 40], raw: new Uint8Array(0) }],
  });
  const cos = model({
    nodes: [{ op: 'ConstantOfShape', inputs: ['shape'], outputs: ['y'] }], inputs: [valueInfo('shape', tensorType(7, [2]))],
    outputs: [valueInfo('y', tensorType(1, ['a', 'b']))], opset: 18,
  });
  const tile = model({
    nodes: [{ op: 'Tile', inputs: ['x', 'r'], outputs: ['y'] }], inputs: [valueInfo('x', tensorType(1, [3, 2])), valueInfo('r', tensorType(7, [2]))],
    outputs: [valueInfo('y', tensorType(1, ['a', 'b']))],
  });
  const i64 = (...v) => new ort.Tensor('int64', BigInt64Array.from(v.map(BigInt)), [v.length]);
  const leaf = { nodes: [{ op: 'Identity', inputs: ['x'], outputs: ['y'] }], inputs: [], outputs: [valueInfo('y', tensorType(1, [1]))] };
  let deep = leaf;
  for (let k = 0; k < 12; ++k) {
    deep = {
      nodes: [{ op: 'If', inputs: ['c'], outputs: ['y'], graphs: { then_branch: deep, else_branch: leaf } }],
      inputs: [], outputs: [valueInfo('y', tensorType(1, [1]))],
    };
  }
  const deepModel = model({ ...deep, inputs: [valueInfo('c', tensorType(9, [])), valueInfo('x', tensorType(1, [1]))] });
  return [
    ['empty bytes', new Uint8Array(0), null, 'invalid_model'],
    ['truncated', good.subarray(0, good.length >> 1), null, 'invalid_model'],
    ['random bytes', new Uint8Array(64).fill(0xff), null, 'invalid_model'],
    ['a cycle', cycle, null, 'graph_cycle'],
    ['a negative dimension', negative, null, 'invalid_model'],
    ['dims whose product overflows', huge, null, 'out_of_range'],
    ['If nested 12 deep (maxGraphDepth 8)', deepModel, null, 'limit_exceeded', { extra: { onemodel: { limits: { maxGraphDepth: 8 } } } }],
    ['an unknown operator', oneNode('FrobnicateOp', 1, [2]), null, 'unsupported_op'],
    ['an opset from the future', oneNode('Relu', 1, [2], 1, 999), null, 'unsupported_opset'],
    ['a feed of the wrong type', good, { x0: new ort.Tensor('int32', new Int32Array(2), [2]) }, 'type_mismatch'],
    ['a feed of the wrong shape', good, { x0: f2(3) }, 'shape_mismatch'],
    ['ConstantOfShape of 2^62 x 2^62', cos, { shape: i64(2n ** 62n, 2n ** 62n) }, 'out_of_range'],
    ['Tile past 2^63 elements', tile, { x: new ort.Tensor('float32', new Float32Array(6), [3, 2]), r: i64(2n ** 62n, 1) }, 'out_of_range'],
  ];
}

test('hostile models: both engines give the same typed error, and keep working', { skip }, async () => {
  const outcome = async (bytes, feeds, options) => {
    try {
      const s = await ort.InferenceSession.create(bytes, options ?? {});
      try {
        if (feeds) await s.run(feeds);
      } finally {
        await s.release();
      }
      return 'ok';
    } catch (e) {
      return e.code ?? `no code: ${e.message}`;
    }
  };
  for (const [label, bytes, feeds, code, options] of hostile()) {
    const got = {};
    for (const engine of ['native', 'wasm']) got[engine] = await on(engine, () => outcome(bytes, feeds, options));
    assert.deepEqual(got, { native: code, wasm: code }, label);
  }
  const s = await ort.InferenceSession.create(oneNode('Neg', 1, [2]));
  assert.deepEqual(Array.from((await s.run({ x0: new ort.Tensor('float32', new Float32Array([1, -2]), [2]) })).y.data), [-1, 2]);
  await s.release();
});

test('fuzz smoke: mutated committed graphs through the addon (tools/fuzz_addon.mjs), typed errors only', { skip }, async () => {
  // In this process: a crash of the addon ends it, which fails this file.
  ort.env.onemodel.engine = 'native';
  const r = await fuzzAddon({ runs: Number(process.env.ONEMODEL_FUZZ_RUNS ?? 400), seed: 1 });
  ort.env.onemodel.engine = 'auto';
  console.log(`# ${r.line}`);
  assert.equal(r.findings, 0, r.line);
  assert.ok(r.loaded > 0 && r.typed > 0, r.line);
});
