#!/usr/bin/env node
// One script, written for onnxruntime-web / -node, run with the package named on the
// command line; only the import differs. Runs the committed golden graphs on their
// committed inputs and, where tools/prepare.sh made them ($ONEMODEL_MODELS or models/),
// reference models on their stored inputs; prints every output as JSON (type, dims,
// values; NaN and infinities as strings; with onemodel also its golden hash) on stdout.
//   node tests/js/same_script.mjs onnxruntime-node | onnxruntime-web | onemodel
import { existsSync, readFileSync } from 'node:fs';
import { readNpy } from '../../tools/lib/npy.mjs';

const pkg = process.argv[2];
const ort = await import(pkg === 'onemodel' ? '../../js/index.node.mjs' : pkg);

const G = 'testdata/graphs';
const M = process.env.ONEMODEL_MODELS ?? 'models';
const jobs = [];
// special_values is left out: onnxruntime-node and -web 1.30 cannot create a session for
// it ("Unsupported data type: 17", its FLOAT8E4M3FN output); OneModel runs it (tests/js).
for (const m of ['conv_net', 'lstm_if', 'qdq_conv_net', 'transformer_block']) jobs.push([m, `${G}/${m}.onnx`, { x: `${G}/${m}.x.npy` }]);
for (const m of ['ocr_cls', 'mobilenet_v3_large', 'crnn', 'minilm_l6']) {
  const list = `${M}/${m}.inputs`;
  if (!existsSync(`${M}/${m}.onnx`) || !existsSync(list)) continue;
  jobs.push([m, `${M}/${m}.onnx`, Object.fromEntries(readFileSync(list, 'utf8').trim().split('\n').map((l) => l.split('=')).map(([k, v]) => [k, `${M}/${v}`]))]);
}
const out = {};
for (const [m, file, inputs] of jobs) {
  const session = await ort.InferenceSession.create(file, { executionProviders: [pkg === 'onnxruntime-node' ? 'cpu' : 'wasm'] });
  const names = session.outputMetadata.filter((o) => !/^(float8|bfloat16)/.test(o.type)).map((o) => o.name);
  const feeds = {};
  for (const [k, f] of Object.entries(inputs)) { const t = readNpy(f); feeds[k] = new ort.Tensor(t.type, t.data, t.dims); }
  const r = await session.run(feeds, names);
  for (const name of names) {
    const t = r[name];
    out[`${m}/${name}`] = {
      type: t.type, dims: Array.from(t.dims), file, inputs,
      data: Array.from(t.data, (v) => (Number.isFinite(Number(v)) ? Number(v) : String(v))),
      ...(ort.goldenHash ? { hash: await ort.goldenHash(t) } : {}),
    };
  }
  await session.release();
}
process.stdout.write(JSON.stringify(out));
