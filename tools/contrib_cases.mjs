// Runs each case folder of tools/contrib_cases.py through onnxruntime-node (CPU, one
// thread, the dev dependency): node tools/contrib_cases.mjs DIR. Inputs from
// <case>/ort_in/<i>.npy (names in ort_in/names.txt), outputs to <case>/ort_out/<i>.npy in
// the order of <case>/outputs.txt; a case ONNX Runtime refuses or fails gets
// <case>/ort_error.txt with its message instead. Prints one line per case and a count.
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { readNpy, writeNpy } from './lib/npy.mjs';

const require = createRequire(import.meta.url);
const ort = require('onnxruntime-node');

const root = process.argv[2];
if (!root) {
  console.error('usage: node tools/contrib_cases.mjs DIR');
  process.exit(2);
}
let ran = 0, refused = 0;
for (const name of fs.readdirSync(root).sort()) {
  const dir = path.join(root, name);
  if (!fs.existsSync(path.join(dir, 'model.onnx'))) continue;
  const names = fs.readFileSync(path.join(dir, 'ort_in', 'names.txt'), 'utf8').split('\n').filter(Boolean);
  const outputs = fs.readFileSync(path.join(dir, 'outputs.txt'), 'utf8').split('\n').filter(Boolean);
  try {
    const session = await ort.InferenceSession.create(path.join(dir, 'model.onnx'), {
      intraOpNumThreads: 1, interOpNumThreads: 1, executionProviders: ['cpu'],
    });
    const feeds = {};
    names.forEach((n, i) => {
      const a = readNpy(path.join(dir, 'ort_in', `${i}.npy`));
      feeds[n] = new ort.Tensor(a.type, a.data, a.dims);
    });
    const result = await session.run(feeds);
    fs.mkdirSync(path.join(dir, 'ort_out'), { recursive: true });
    outputs.forEach((n, i) => {
      const t = result[n];
      writeNpy(path.join(dir, 'ort_out', `${i}.npy`), t.type, t.dims, t.data);
    });
    await session.release();
    ++ran;
    console.log(`ort ${name}: ran`);
  } catch (e) {
    fs.writeFileSync(path.join(dir, 'ort_error.txt'), `${e.message}\n`);
    ++refused;
    console.log(`ort ${name}: refused (${e.message.split('\n')[0]})`);
  }
}
console.log(`[contrib_cases] onnxruntime-node ${ort.env.versions?.common ?? ''}: ${ran} ran, ${refused} refused`);
