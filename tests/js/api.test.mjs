// The JS API (node's test runner): onnxruntime-common's InferenceSession, Tensor and env
// backed by OneModel. Run from the repository root: node --test tests/js/
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync, mkdtempSync, rmSync, truncateSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import * as ort from '../../js/index.node.mjs';
import onemodel, { engineInfo, goldenHash, OneModelError, wasmMemory } from '../../js/index.node.mjs';
import * as common from 'onnxruntime-common';
import { oneNode, model, valueInfo, tensorType, countingLoop } from './onnx_writer.mjs';

// ONEMODEL_TEST_SIMD=off runs the suite on the scalar wasm build (env.wasm.simd = false);
// ONEMODEL_ENGINE=native|wasm chooses the engine (tools/test.sh runs the suite on both).
if (process.env.ONEMODEL_TEST_SIMD === 'off') ort.env.wasm.simd = false;
const WASM = engineInfo().engine === 'wasm';
console.log(`# engine: ${JSON.stringify(engineInfo())}`);
const G = 'testdata/graphs';
const committed = Object.fromEntries(readFileSync(`${G}/golden-exact.txt`, 'utf8').trim().split('\n').map((l) => l.split(' ')));

// A float32 .npy (little-endian, C order) as a Tensor.
function loadNpy(path) {
  const b = readFileSync(path);
  const headerLen = b.readUInt16LE(8);
  const header = b.subarray(10, 10 + headerLen).toString('latin1');
  assert.match(header, /'descr': '<f4'/);
  const shape = header.match(/'shape': \(([^)]*)\)/)[1].split(',').filter((s) => s.trim()).map(Number);
  const data = new Float32Array(b.buffer.slice(b.byteOffset + 10 + headerLen, b.byteOffset + b.length));
  return new ort.Tensor('float32', data, shape);
}

async function rejectsWith(promise, code, ...fragments) {
  await assert.rejects(promise, (e) => {
    assert.ok(e instanceof Error, 'an Error');
    assert.equal(e.code, code, `code of: ${e.message}`);
    for (const f of fragments) assert.ok(e.message.includes(f), `'${f}' in: ${e.message}`);
    return true;
  });
}

test('the package is onnxruntime-common with OneModel registered', () => {
  assert.equal(ort.Tensor, common.Tensor);
  assert.equal(ort.InferenceSession, common.InferenceSession);
  assert.equal(onemodel.Tensor, common.Tensor);  // the default export is the namespace
  assert.equal(ort.env, common.env);
  assert.equal(ort.env.versions.onemodel, JSON.parse(readFileSync('package.json', 'utf8')).version);
});

test('every element type of onnxruntime-common goes in and comes out of Identity', async () => {
  const cases = [
    ['float32', 1, new Float32Array([1.5, -0, NaN, Infinity, 3, 4])],
    ['uint8', 2, new Uint8Array([0, 1, 2, 254, 255, 7])],
    ['int8', 3, new Int8Array([-128, -1, 0, 1, 127, 5])],
    ['uint16', 4, new Uint16Array([0, 1, 65535, 4, 5, 6])],
    ['int16', 5, new Int16Array([-32768, -1, 0, 32767, 5, 6])],
    ['int32', 6, new Int32Array([-(2 ** 31), -1, 0, 2 ** 31 - 1, 5, 6])],
    ['int64', 7, new BigInt64Array([-(2n ** 63n), -1n, 0n, 2n ** 63n - 1n, 5n, 6n])],
    ['string', 8, ['a', '', 'exact', 'mode', 'é', '6']],
    ['bool', 9, new Uint8Array([0, 1, 1, 0, 1, 0])],
    ['float16', 10, new Uint16Array([0x3c00, 0x8000, 0x7e00, 0x7c00, 0x0001, 0xfbff])],
    ['float64', 11, new Float64Array([1.5, -0, NaN, -Infinity, 1e300, 5e-324])],
    ['uint32', 12, new Uint32Array([0, 1, 2 ** 32 - 1, 4, 5, 6])],
    ['uint64', 13, new BigUint64Array([0n, 1n, 2n ** 64n - 1n, 4n, 5n, 6n])],
    ['uint4', 21, new Uint8Array([0xf0, 0xe1, 0x78])],  // 0 15 1 14 8 7, two a byte
    ['int4', 22, new Uint8Array([0xf8, 0x10, 0x37])],  // -8 -1 0 1 7 3
  ];
  for (const [type, elem, data] of cases) {
    const s = await ort.InferenceSession.create(oneNode('Identity', elem, [2, 3]));
    assert.deepEqual(s.inputMetadata, [{ name: 'x0', isTensor: true, type, shape: [2, 3] }]);
    const forms = [new ort.Tensor(type, data, [2, 3])];
    if (!['string', 'bool', 'float16', 'int4', 'uint4'].includes(type)) forms.push(new ort.Tensor(data, [2, 3]));
    for (const x of forms) {
      const { y } = await s.run({ x0: x });
      assert.ok(y instanceof common.Tensor, type);
      assert.equal(y.type, type);
      assert.deepEqual(y.dims, [2, 3]);
      assert.equal(y.location, 'cpu');
      assert.deepEqual(Array.from(y.data), Array.from(data), type);
      if (type !== 'string') assert.equal(y.data.constructor, data.constructor, type);
      assert.equal(await goldenHash(y), await goldenHash(x), type);
    }
    await s.release();
  }
});

test('create from a path, an ArrayBuffer (with offset and length) and a Uint8Array', async () => {
  const bytes = readFileSync(`${G}/conv_net.onnx`);
  const padded = new Uint8Array(bytes.length + 16);
  padded.set(bytes, 8);
  const x = loadNpy(`${G}/conv_net.x.npy`);
  const sessions = [
    await ort.InferenceSession.create(`${G}/conv_net.onnx`),
    await ort.InferenceSession.create(new Uint8Array(bytes)),
    await ort.InferenceSession.create(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length)),
    await ort.InferenceSession.create(padded.buffer, 8, bytes.length),
    await ort.InferenceSession.create(`${G}/conv_net.onnx`, { executionProviders: ['wasm'], graphOptimizationLevel: 'all' }),
    await ort.InferenceSession.create(`${G}/conv_net.onnx`, { executionProviders: ['cpu'], intraOpNumThreads: 4 }),
  ];
  for (const s of sessions) {
    assert.deepEqual(s.inputNames, ['x']);
    assert.deepEqual(s.outputNames, ['probs', 'c4']);
    const r = await s.run({ x });
    assert.equal(await goldenHash(r.probs), committed['conv_net/probs']);
    await s.release();
  }
});

test('exact mode: every committed golden graph gives its committed hashes', async () => {
  for (const m of ['conv_net', 'lstm_if', 'qdq_conv_net', 'special_values', 'transformer_block']) {
    const s = await ort.InferenceSession.create(`${G}/${m}.onnx`);
    const x = loadNpy(`${G}/${m}.x.npy`);
    assert.equal(await goldenHash(x), committed[`input/${m}/x`], m);
    // Outputs of a type onnxruntime-common has no Tensor type for (special_values' to_f8)
    // are left out: asking for them is a typed error (tested below).
    const names = s.outputMetadata.filter((o) => !/^(float8|bfloat16)/.test(o.type)).map((o) => o.name);
    assert.ok(names.length >= s.outputNames.length - 1, m);
    const r = await s.run({ x }, names);
    for (const name of names) assert.equal(await goldenHash(r[name]), committed[`${m}/${name}`], `${m}/${name}`);
    await s.release();
  }
});

test('onProgress reports loading a model by path', async () => {
  const calls = [];
  const s = await ort.InferenceSession.create(`${G}/conv_net.onnx`, { onProgress: (loaded, total) => calls.push([loaded, total]) });
  const size = readFileSync(`${G}/conv_net.onnx`).length;
  assert.deepEqual(calls.at(-1), [size, size]);
  await s.release();
});

test('run(feeds, fetches) by names and by object; pre-allocated outputs; options', async () => {
  const s = await ort.InferenceSession.create(`${G}/conv_net.onnx`);
  const x = loadNpy(`${G}/conv_net.x.npy`);
  const all = await s.run({ x }, { logSeverityLevel: 3, tag: 't' });
  assert.deepEqual(Object.keys(all).sort(), ['c4', 'probs']);
  const one = await s.run({ x }, ['probs']);
  assert.deepEqual(Object.keys(one), ['probs']);
  assert.deepEqual(Array.from(one.probs.data), Array.from(all.probs.data));
  const byObject = await s.run({ x }, { c4: null });
  assert.deepEqual(Object.keys(byObject), ['c4']);
  const mine = new ort.Tensor('float32', new Float32Array(10), [1, 10]);
  const filled = await s.run({ x }, { probs: mine }, {});
  assert.equal(filled.probs, mine);
  assert.deepEqual(Array.from(mine.data), Array.from(all.probs.data));
  await rejectsWith(s.run({ x }, { probs: new ort.Tensor('float32', new Float32Array(5), [5]) }), 'shape_mismatch', 'probs');
  await s.release();
});

test('symbolic dimensions are strings in the metadata; freeDimensionOverrides fixes them', async () => {
  const bytes = oneNode('Add', 1, ['batch', 3], 2);
  const s = await ort.InferenceSession.create(bytes);
  assert.deepEqual(s.inputMetadata[0], { name: 'x0', isTensor: true, type: 'float32', shape: ['batch', 3] });
  for (const b of [1, 4]) {
    const t = new ort.Tensor('float32', new Float32Array(b * 3).fill(1.25), [b, 3]);
    const { y } = await s.run({ x0: t, x1: t });
    assert.deepEqual(y.dims, [b, 3]);
    assert.deepEqual(Array.from(y.data), new Array(b * 3).fill(2.5));
  }
  const fixed = await ort.InferenceSession.create(bytes, { freeDimensionOverrides: { batch: 2 } });
  assert.deepEqual(fixed.inputMetadata[0].shape, [2, 3]);
  const one = new ort.Tensor('float32', new Float32Array(3), [1, 3]);
  await rejectsWith(fixed.run({ x0: one, x1: one }), 'shape_mismatch', "'x0'", '[2,3]', '[1,3]');
  await rejectsWith(ort.InferenceSession.create(bytes, { freeDimensionOverrides: { bacth: 2 } }), 'invalid_argument', "'bacth'", "'batch'");
});

test('concurrent runs on one session are queued; many sessions at once', async () => {
  const x = loadNpy(`${G}/conv_net.x.npy`);
  const s = await ort.InferenceSession.create(`${G}/conv_net.onnx`);
  const results = await Promise.all(Array.from({ length: 12 }, () => s.run({ x })));
  for (const r of results) assert.equal(await goldenHash(r.probs), committed['conv_net/probs']);
  const many = await Promise.all(Array.from({ length: 6 }, () => ort.InferenceSession.create(`${G}/conv_net.onnx`)));
  const outs = await Promise.all(many.flatMap((m) => [m.run({ x }), m.run({ x }, ['probs'])]));
  for (const r of outs) assert.equal(await goldenHash(r.probs), committed['conv_net/probs']);
  await Promise.all([s, ...many].map((m) => m.release()));
});

// y = x + w, x and w float32[4], w stored as external data `location` from byte 4.
function externalAddModel(location = 'w.bin') {
  return model({
    nodes: [{ op: 'Add', inputs: ['x', 'w'], outputs: ['y'] }],
    inputs: [valueInfo('x', tensorType(1, [4]))],
    outputs: [valueInfo('y', tensorType(1, [4]))],
    initializers: [{ name: 'w', elemType: 1, dims: [4], external: { location, offset: 4 } }],
  });
}

test('external data: beside a model loaded by path, and externalData as bytes, paths or a path string', async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'om-external-'));
  try {
    const weights = new Float32Array([99, 1.5, -2, 3.25, 1e30]);  // w: the four after byte 4
    const want = [1.5, -2, 3.25, 1e30].map(Math.fround);
    const bytes = new Uint8Array(weights.buffer);
    const file = path.join(dir, 'w.bin');
    const modelPath = path.join(dir, 'm.onnx');
    writeFileSync(file, bytes);
    writeFileSync(modelPath, externalAddModel());
    const x = new ort.Tensor('float32', new Float32Array(4), [4]);
    const y = async (s) => { const r = Array.from((await s.run({ x })).y.data); await s.release(); return r; };

    // The model's folder is kept: by path and by file: URL.
    assert.deepEqual(await y(await ort.InferenceSession.create(modelPath)), want);
    assert.deepEqual(await y(await ort.InferenceSession.create(pathToFileURL(modelPath).href)), want);
    // From bytes, as onnxruntime-web takes it: {path, data} with bytes, an ArrayBuffer,
    // a Blob or a file path; or the path string alone (read as given).
    const m = externalAddModel();
    for (const data of [bytes, bytes.buffer.slice(0), new Blob([bytes]), file]) {
      assert.deepEqual(await y(await ort.InferenceSession.create(m, { externalData: [{ path: 'w.bin', data }] })), want,
        `data as ${data?.constructor?.name}`);
    }
    assert.deepEqual(await y(await ort.InferenceSession.create(m, { externalData: [{ path: './w.bin', data: bytes }] })), want);
    const cwd = process.cwd();
    process.chdir(dir);
    try {
      assert.deepEqual(await y(await ort.InferenceSession.create(m, { externalData: ['w.bin'] })), want);
    } finally {
      process.chdir(cwd);
    }
    // Given bytes come before the file beside the model.
    const other = new Float32Array([0, 5, 6, 7, 8]);
    assert.deepEqual(await y(await ort.InferenceSession.create(modelPath, { externalData: [{ path: 'w.bin', data: new Uint8Array(other.buffer) }] })), [5, 6, 7, 8]);

    // Typed errors naming what was wrong; the wasm memory of a failed load is given back.
    const before = WASM ? (await wasmMemory()).inUse : 0;
    await rejectsWith(ort.InferenceSession.create(m), 'invalid_model', "external data 'w.bin' was not given");
    await rejectsWith(ort.InferenceSession.create(m, { externalData: [{ path: 'v.bin', data: bytes }] }), 'invalid_model', "'v.bin'");
    await rejectsWith(ort.InferenceSession.create(m, { externalData: [{ path: '../w.bin', data: bytes }] }), 'invalid_argument', "'..' component");
    await rejectsWith(ort.InferenceSession.create(m, { externalData: [{ path: 'w.bin', data: 42 }] }), 'invalid_argument', 'Uint8Array');
    await rejectsWith(ort.InferenceSession.create(m, { externalData: [{ data: bytes }] }), 'invalid_argument', '{path, data}');
    await rejectsWith(ort.InferenceSession.create(m, { externalData: 'w.bin' }), 'invalid_argument', 'array');
    await rejectsWith(ort.InferenceSession.create(m, { externalData: [{ path: 'w.bin', data: path.join(dir, 'none.bin') }] }), 'io', 'none.bin');
    await rejectsWith(ort.InferenceSession.create(m, { externalData: [{ path: 'w.bin', data: bytes.subarray(0, 3) }] }), 'invalid_model', 'past the end');
    if (WASM) assert.equal((await wasmMemory()).inUse, before, 'wasm memory in use after the failed loads');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('external data past 4 GiB: a limit_exceeded error saying why, before any of it is read', async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'om-external-big-'));
  try {
    const part = 2 ** 29;  // 512 MiB of float32 per initializer, nine of them: 4.5 GiB
    const names = Array.from({ length: 9 }, (_, k) => `w${k}`);
    const m = model({
      nodes: [{ op: 'Sum', inputs: names, outputs: ['y'] }],
      inputs: [],
      outputs: [valueInfo('y', tensorType(1, [part / 4]))],
      initializers: names.map((name, k) => ({ name, elemType: 1, dims: [part / 4], external: { location: 'big.bin', offset: k * part, length: part } })),
    });
    writeFileSync(path.join(dir, 'm.onnx'), m);
    writeFileSync(path.join(dir, 'big.bin'), new Uint8Array(0));
    truncateSync(path.join(dir, 'big.bin'), 9 * part);  // sparse: no disk written
    if (!WASM) {  // natively the default is 16 GiB: a limit of 4 GiB given gives the error
      await rejectsWith(ort.InferenceSession.create(path.join(dir, 'm.onnx'), { extra: { onemodel: { limits: { maxModelBytes: 2 ** 32 } } } }),
        'limit_exceeded', 'max_model_bytes (4294967296)');
      return;
    }
    const before = (await wasmMemory()).inUse;
    await rejectsWith(ort.InferenceSession.create(path.join(dir, 'm.onnx')), 'limit_exceeded', 'max_model_bytes', 'wasm32 memory holds at most 4 GiB');
    assert.ok((await wasmMemory()).inUse - before < 2 ** 20, 'nothing of the external data was read');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('errors: a code naming the engine error and a message naming what was wrong; the module keeps working', async () => {
  const good = oneNode('Relu', 1, [2]);
  await rejectsWith(ort.InferenceSession.create(new Uint8Array([1, 2, 3, 4])), 'invalid_model');
  await rejectsWith(ort.InferenceSession.create(good.subarray(0, good.length >> 1)), 'invalid_model');
  await rejectsWith(ort.InferenceSession.create('/nonexistent/model.onnx'), 'io', '/nonexistent/model.onnx');
  await rejectsWith(ort.InferenceSession.create(oneNode('FrobnicateOp', 1, [2])), 'unsupported_op', 'FrobnicateOp');
  await rejectsWith(ort.InferenceSession.create(good, { mode: 'quick' }), 'invalid_argument', 'quick');
  const s = await ort.InferenceSession.create(good);
  const two = new ort.Tensor('float32', new Float32Array([-1, 2]), [2]);
  await rejectsWith(s.run({ x0: new ort.Tensor('int32', new Int32Array(2), [2]) }), 'type_mismatch', "'x0'", 'FLOAT', 'INT32');
  await rejectsWith(s.run({ x0: new ort.Tensor('float32', new Float32Array(3), [3]) }), 'shape_mismatch', "'x0'", '[2]', '[3]');
  assert.deepEqual(Array.from((await s.run({ x0: two, nope: two })).y.data), [0, 2]);  // ignored, as onnxruntime-node does
  await rejectsWith(s.run({}), 'missing_input', "'x0'");  // onnxruntime-common's own check, given a code
  await rejectsWith(s.run({ x0: two }, ['nope']), 'invalid_argument', 'nope');
  assert.deepEqual(Array.from((await s.run({ x0: two })).y.data), [0, 2]);  // still works
  const e = await s.run({ x0: 'not a tensor' }).catch((err) => err);
  assert.ok(e instanceof OneModelError && e.code === 'invalid_argument');
  await s.release();
  await rejectsWith(s.run({ x0: two }), 'invalid_argument', 'released');
  const again = await ort.InferenceSession.create(good);  // other sessions are unaffected
  assert.deepEqual(Array.from((await again.run({ x0: two })).y.data), [0, 2]);
  await again.release();
});

test('int4 and uint4 tensors: packed two a byte, low nibble first, as onnxruntime-common holds them', async () => {
  for (const [type, elem, packed, values] of [['int4', 22, [0xf8, 0x10, 0x37], [-8, -1, 0, 1, 7, 3]],
    ['uint4', 21, [0xf0, 0xe1, 0x08], [0, 15, 1, 14, 8]]]) {
    const n = values.length;
    const bytes = model({
      nodes: [{ op: 'Cast', inputs: ['x'], outputs: ['y'], ints: { to: 1 } }],
      inputs: [valueInfo('x', tensorType(elem, [n]))],
      outputs: [valueInfo('y', tensorType(1, [n]))],
    });
    const s = await ort.InferenceSession.create(bytes);
    const { y } = await s.run({ x: new ort.Tensor(type, Uint8Array.from(packed), [n]) });
    assert.deepEqual(Array.from(y.data), values, type);
    await s.release();
  }
});

test('a model whose output is not a tensor type of onnxruntime-common is a typed error', async () => {
  const bytes = model({
    nodes: [{ op: 'Cast', inputs: ['x'], outputs: ['y'], ints: { to: 16 } }],
    inputs: [valueInfo('x', tensorType(1, [2]))],
    outputs: [valueInfo('y', tensorType(16, [2]))],
  });
  const s = await ort.InferenceSession.create(bytes);
  assert.equal(s.outputMetadata[0].type, 'bfloat16');
  await rejectsWith(s.run({ x: new ort.Tensor('float32', new Float32Array(2), [2]) }), 'type_mismatch', 'BFLOAT16');
  await s.release();
});

test('release() frees the model\'s wasm memory', { skip: !WASM && 'the native engine has no wasm memory' }, async () => {
  // MatMul by a 4 MiB weight (kept packed as well): the session holds about 8 MiB.
  const n = 1024;
  const w = new Float32Array(n * n).map((_, i) => (i % 7) / 7);
  const bytes = model({
    nodes: [{ op: 'MatMul', inputs: ['x', 'w'], outputs: ['y'] }],
    inputs: [valueInfo('x', tensorType(1, [1, n]))],
    outputs: [valueInfo('y', tensorType(1, [1, n]))],
    initializers: [{ name: 'w', elemType: 1, dims: [n, n], raw: new Uint8Array(w.buffer) }],
  });
  const x = new ort.Tensor('float32', new Float32Array(n).fill(1), [1, n]);
  const warm = await ort.InferenceSession.create(bytes);  // the module's own first-use buffers
  await warm.run({ x });
  await warm.release();
  const before = (await wasmMemory()).inUse;
  const s = await ort.InferenceSession.create(bytes);
  await s.run({ x });
  const held = (await wasmMemory()).inUse - before;
  await s.release();
  const after = (await wasmMemory()).inUse - before;
  console.log(`# wasm memory: a session of a 4 MiB weight holds ${(held / 1048576).toFixed(2)} MiB; after release ${(after / 1024).toFixed(1)} KiB`);
  assert.ok(held >= 4 * 1048576, `held ${held}`);
  assert.ok(after <= 64 * 1024, `after release ${after} bytes still in use`);
});

test('a tensor too big for wasm memory is a typed error, and the module keeps working', async () => {
  // ConstantOfShape of 1.4 G floats (5.4 GB): past what 4 GiB of wasm memory can hold.
  const shape = new BigInt64Array([1400000000n]);
  const bytes = model({
    nodes: [{ op: 'ConstantOfShape', inputs: ['shape'], outputs: ['y'] }, { op: 'ReduceMax', inputs: ['y'], outputs: ['m'], ints: { keepdims: 0 } }],
    inputs: [valueInfo('x', tensorType(1, [1]))],
    outputs: [valueInfo('m', tensorType(1, []))],
    initializers: [{ name: 'shape', elemType: 7, dims: [1], raw: new Uint8Array(shape.buffer) }],
    opset: 18,
  });
  // Natively 5.6 GB is within the default limit (16 GiB): the wasm32 cap given as a limit.
  const s = await ort.InferenceSession.create(bytes, WASM ? {} : { extra: { onemodel: { limits: { maxTensorBytes: 2 ** 32 - 1 } } } });
  await rejectsWith(s.run({ x: new ort.Tensor('float32', new Float32Array(1), [1]) }), WASM ? 'out_of_range' : 'limit_exceeded');
  const ok = await ort.InferenceSession.create(oneNode('Neg', 1, [2]));
  assert.deepEqual(Array.from((await ok.run({ x0: new ort.Tensor('float32', new Float32Array([1, -2]), [2]) })).y.data), [-1, 2]);
  await Promise.all([s.release(), ok.release()]);
});

test('run options: terminate and a time limit stop a Loop of 10^15 trips; the session keeps working', async () => {
  const s = await ort.InferenceSession.create(countingLoop());
  const v0 = new ort.Tensor('float32', new Float32Array([0]), [1]);
  const big = new ort.Tensor('int64', new BigInt64Array([10n ** 15n]), []);
  await rejectsWith(s.run({ M: big, v0 }, { extra: { onemodel: { timeLimitMs: 50 } } }), 'cancelled', 'time limit of 50 ms');
  await rejectsWith(s.run({ M: big, v0 }, { terminate: true }), 'cancelled', 'terminated');
  await rejectsWith(s.run({ M: big, v0 }, { extra: { onemodel: { timeLimitMs: -1 } } }), 'invalid_argument', 'timeLimitMs');
  const three = new ort.Tensor('int64', new BigInt64Array([3n]), []);
  assert.deepEqual(Array.from((await s.run({ M: three, v0 })).v.data), [3]);
  await s.release();
});

test('limits: extra.onemodel.limits, each a limit_exceeded error naming it', async () => {
  const shape = new BigInt64Array([1n << 20n]);
  const bytes = model({
    nodes: [{ op: 'ConstantOfShape', inputs: ['shape'], outputs: ['y'] }],
    inputs: [valueInfo('shape', tensorType(7, [1]))],
    outputs: [valueInfo('y', tensorType(1, ['n']))],
    opset: 18,
  });
  const s = await ort.InferenceSession.create(bytes, { extra: { onemodel: { limits: { maxTensorBytes: 1 << 20 } } } });
  await rejectsWith(s.run({ shape: new ort.Tensor('int64', shape, [1]) }), 'limit_exceeded', 'max_tensor_bytes (1048576)');
  assert.equal((await s.run({ shape: new ort.Tensor('int64', new BigInt64Array([10n]), [1]) })).y.size, 10);
  await rejectsWith(ort.InferenceSession.create(bytes, { extra: { onemodel: { limits: { maxModelBytes: 8 } } } }), 'limit_exceeded', 'max_model_bytes (8)');
  await rejectsWith(ort.InferenceSession.create(bytes, { extra: { onemodel: { limits: { maxWidgets: 8 } } } }), 'invalid_argument', 'unknown limit');
  await s.release();
});

test('8 sessions with interleaved runs give identical hashes', async () => {
  const bytes = readFileSync(`${G}/transformer_block.onnx`);
  const x = loadNpy(`${G}/transformer_block.x.npy`);
  const sessions = await Promise.all(Array.from({ length: 8 }, () => ort.InferenceSession.create(bytes)));
  const name = sessions[0].inputNames[0];
  const want = await goldenHash(await sessions[0].run({ [name]: x }));
  const hashes = [];
  for (let round = 0; round < 5; ++round) {
    const outs = await Promise.all(sessions.map((s) => s.run({ [name]: x })));
    for (const o of outs) hashes.push(await goldenHash(o));
  }
  assert.equal(hashes.length, 40);
  assert.ok(hashes.every((h) => h === want), 'every hash equal');
  await Promise.all(sessions.map((s) => s.release()));
});
