#!/usr/bin/env node
// ONNX Runtime's leniency, as a table: feed variants (ranks, one-element tensors for
// scalars, types, dynamic and empty dimensions, extra and missing feeds) run through
// onnxruntime-node 1.30 (the judge) and OneModel's JS API, each row accepted (with its
// output) or refused. OneModel must accept what onnxruntime-node accepts with the same
// output, and refuse with a typed error what it refuses.
//   node tools/leniency.mjs [DIR]   (default build/leniency)
// Writes DIR/<model>.onnx and DIR/table.txt, the rows for the C++ and C API test
// (tests/api/test_leniency.cpp): `model variant feeds verdict output`, where feeds is
// `name:type:dims:values` joined by ';' (dims `2x3`, `-` for a scalar), verdict `ok` or
// `refused`, output `dims:values` (values %.9g, comma-separated) or `-`. Prints the table
// (markdown), `leniency: N rows, N agree, N differ` and `N passed, N failed`; exit 1 when
// a row differs.
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { model, tensorType, valueInfo } from '../tests/js/onnx_writer.mjs';

const dir = process.argv[2] ?? 'build/leniency';
fs.mkdirSync(dir, { recursive: true });
const require = createRequire(import.meta.url);
const peer = require('onnxruntime-node');
const ours = await import('../js/index.node.mjs');

const FLOAT = 1, INT64 = 7;
const f32 = (v) => new Uint8Array(Float32Array.from(v).buffer);
const i64 = (v) => new Uint8Array(BigInt64Array.from(v.map(BigInt)).buffer);
// Y = X + C for one input X (elemType, dims), C a scalar initializer; or Y = A + B.
function addModel(name, elemType, dims) {
  const c = { name: 'C', elemType, dims: [], raw: elemType === INT64 ? i64([1]) : f32([1.5]) };
  return model({
    nodes: [{ op: 'Add', inputs: ['X', 'C'], outputs: ['Y'] }],
    inputs: [valueInfo('X', tensorType(elemType, dims))],
    outputs: [valueInfo('Y', tensorType(elemType, []))],
    initializers: [c],
    opset: 17,
  });
}
const models = {
  scalar: addModel('scalar', FLOAT, []),
  one: addModel('one', FLOAT, [1]),
  fixed: addModel('fixed', FLOAT, [2, 3]),
  dynamic: addModel('dynamic', FLOAT, ['N', 3]),
  int64: addModel('int64', INT64, [2]),
  two: model({
    nodes: [{ op: 'Add', inputs: ['A', 'B'], outputs: ['Y'] }],
    inputs: [valueInfo('A', tensorType(FLOAT, [2])), valueInfo('B', tensorType(FLOAT, [2]))],
    outputs: [valueInfo('Y', tensorType(FLOAT, [2]))],
    opset: 17,
  }),
};
for (const [m, bytes] of Object.entries(models)) fs.writeFileSync(path.join(dir, `${m}.onnx`), bytes);

// Feeds: [name, type, dims]; values 1, 2, 3, ... in the type.
const F = (name, type, dims) => [name, type, dims];
const rows = [
  ['scalar', 'as declared, []', [F('X', 'float32', [])]],
  ['scalar', 'one element [1]', [F('X', 'float32', [1])]],
  ['scalar', 'one element [1, 1]', [F('X', 'float32', [1, 1])]],
  ['scalar', 'two elements [2]', [F('X', 'float32', [2])]],
  ['scalar', 'float64', [F('X', 'float64', [])]],
  ['one', 'as declared, [1]', [F('X', 'float32', [1])]],
  ['one', 'scalar []', [F('X', 'float32', [])]],
  ['one', '[1, 1]', [F('X', 'float32', [1, 1])]],
  ['one', '[2]', [F('X', 'float32', [2])]],
  ['fixed', 'as declared, [2, 3]', [F('X', 'float32', [2, 3])]],
  ['fixed', 'transposed [3, 2]', [F('X', 'float32', [3, 2])]],
  ['fixed', 'flat [6]', [F('X', 'float32', [6])]],
  ['fixed', 'extra trailing 1 [2, 3, 1]', [F('X', 'float32', [2, 3, 1])]],
  ['fixed', 'extra leading 1 [1, 2, 3]', [F('X', 'float32', [1, 2, 3])]],
  ['fixed', 'float16', [F('X', 'float16', [2, 3])]],
  ['fixed', 'int32', [F('X', 'int32', [2, 3])]],
  ['dynamic', '[5, 3]', [F('X', 'float32', [5, 3])]],
  ['dynamic', 'empty [0, 3]', [F('X', 'float32', [0, 3])]],
  ['dynamic', 'wrong fixed dimension [5, 4]', [F('X', 'float32', [5, 4])]],
  ['dynamic', 'rank 1 [3]', [F('X', 'float32', [3])]],
  ['int64', 'as declared', [F('X', 'int64', [2])]],
  ['int64', 'int32', [F('X', 'int32', [2])]],
  ['int64', 'float32', [F('X', 'float32', [2])]],
  ['two', 'both', [F('A', 'float32', [2]), F('B', 'float32', [2])]],
  ['two', 'B missing', [F('A', 'float32', [2])]],
  ['two', 'an extra feed Z', [F('A', 'float32', [2]), F('B', 'float32', [2]), F('Z', 'float32', [2])]],
  ['two', 'no feeds', []],
];

const ARRAYS = {
  float32: Float32Array, float64: Float64Array, int32: Int32Array,
  int64: (n) => BigInt64Array.from({ length: n }, (_, i) => BigInt(i + 1)), float16: null,
};
function tensor(ort, [, type, dims]) {
  const n = dims.reduce((a, b) => a * b, 1);
  let data;
  if (type === 'int64') data = ARRAYS.int64(n);
  else if (type === 'float16') data = Uint16Array.from({ length: n }, (_, i) => [0x3c00, 0x4000, 0x4200, 0x4400, 0x4500, 0x4600][i % 6]);
  else data = ARRAYS[type].from({ length: n }, (_, i) => i + 1);
  return new ort.Tensor(type, data, dims);
}
async function runOne(ort, m, feeds, eps) {
  try {
    const s = await ort.InferenceSession.create(path.join(dir, `${m}.onnx`), { executionProviders: eps });
    const f = {};
    for (const feed of feeds) f[feed[0]] = tensor(ort, feed);
    const r = await s.run(f);
    const y = r.Y;
    return { ok: true, dims: y.dims, values: Array.from(y.data, (v) => (typeof v === 'bigint' ? Number(v) : v)) };
  } catch (e) {
    return { ok: false, message: String(e.message).split('\n')[0], code: e.code };
  }
}
const fmtDims = (d) => (d.length ? d.join('x') : '-');
const fmtOut = (r) => (r.ok ? `${fmtDims(r.dims)}:${r.values.map((v) => Number(v).toPrecision(9)).join(',') || '-'}` : '-');
const lines = [];
const md = ['| model | feeds | onnxruntime-node 1.30 | OneModel (JS) |', '|---|---|---|---|'];
let agree = 0, differ = 0;
for (const [m, what, feeds] of rows) {
  const theirs = await runOne(peer, m, feeds, ['cpu']);
  const mine = await runOne(ours, m, feeds, ['wasm']);
  const same = theirs.ok === mine.ok && (!theirs.ok || (fmtOut(theirs) === fmtOut(mine))) && (theirs.ok || mine.code);
  same ? ++agree : ++differ;
  const show = (r) => (r.ok ? `accepted: ${fmtOut(r)}` : `refused${r.code ? ` (${r.code})` : ''}: ${r.message.slice(0, 80)}`);
  md.push(`| ${m} | ${what} | ${show(theirs)} | ${show(mine)}${same ? '' : ' **DIFFERS**'} |`);
  const feedSpec = feeds.map(([n, t, d]) => `${n}:${t}:${fmtDims(d)}`).join(';') || '-';
  lines.push(`${m} ${what.replace(/[^A-Za-z0-9]+/g, '_')} ${feedSpec} ${theirs.ok ? 'ok' : 'refused'} ${fmtOut(theirs)}`);
}
fs.writeFileSync(path.join(dir, 'table.txt'), `${lines.join('\n')}\n`);
console.log(md.join('\n'));
console.log(`leniency: ${rows.length} rows, ${agree} agree, ${differ} differ`);
console.log(`${agree} passed, ${differ} failed`);
process.exit(differ ? 1 : 0);
