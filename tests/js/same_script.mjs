#!/usr/bin/env node
// One script, written for onnxruntime-web / -node, run with the package named on the
// command line; only the import differs. Runs the committed golden graphs on their
// committed inputs and prints every output as JSON (type, dims, values; NaN and
// infinities as strings) on stdout.
//   node tests/js/same_script.mjs onnxruntime-node | onnxruntime-web | onemodel
import { readFileSync } from 'node:fs';

const pkg = process.argv[2];
const ort = await import(pkg === 'onemodel' ? '../../js/index.node.mjs' : pkg);

function loadNpy(path) {
  const b = readFileSync(path);
  const headerLen = b.readUInt16LE(8);
  const header = b.subarray(10, 10 + headerLen).toString('latin1');
  const shape = header.match(/'shape': \(([^)]*)\)/)[1].split(',').filter((s) => s.trim()).map(Number);
  return new ort.Tensor('float32', new Float32Array(b.buffer.slice(b.byteOffset + 10 + headerLen, b.byteOffset + b.length)), shape);
}

const G = 'testdata/graphs';
const out = {};
// special_values is left out: onnxruntime-node and -web 1.30 cannot create a session for
// it ("Unsupported data type: 17", its FLOAT8E4M3FN output); OneModel runs it (tests/js).
for (const m of ['conv_net', 'lstm_if', 'qdq_conv_net', 'transformer_block']) {
  const session = await ort.InferenceSession.create(`${G}/${m}.onnx`, { executionProviders: [pkg === 'onnxruntime-node' ? 'cpu' : 'wasm'] });
  const names = session.outputMetadata.filter((o) => !/^(float8|bfloat16)/.test(o.type)).map((o) => o.name);
  const r = await session.run({ x: loadNpy(`${G}/${m}.x.npy`) }, names);
  for (const name of names) {
    const t = r[name];
    out[`${m}/${name}`] = { type: t.type, dims: Array.from(t.dims), data: Array.from(t.data, (v) => (Number.isFinite(Number(v)) ? Number(v) : String(v))) };
  }
  await session.release();
}
process.stdout.write(JSON.stringify(out));
