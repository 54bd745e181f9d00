// The same script (tests/js/same_script.mjs) run with onnxruntime-node, onnxruntime-web
// and onemodel, only the import differing: outputs agree within ONNX's backend-test
// tolerance (rtol 1e-3, atol 1e-5 here), and OneModel's are bitwise the native CLI's
// (`onemodel hash` on the same model and inputs). The committed graphs always; the
// reference models where tools/prepare.sh made them (else those are skipped, said so). A
// peer that is not installed is a skipped test, said so.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { existsSync } from 'node:fs';
import path from 'node:path';

const run = (pkg) => JSON.parse(execFileSync(process.execPath, ['tests/js/same_script.mjs', pkg], { encoding: 'utf8', maxBuffer: 1 << 28 }));
const installed = (pkg) => { try { createRequire(import.meta.url).resolve(pkg); return true; } catch { return false; } };
const ours = run('onemodel');

function close(a, b, where) {
  assert.equal(a.type, b.type, `${where}: type`);
  assert.deepEqual(a.dims, b.dims, `${where}: dims`);
  let worst = 0;
  for (let i = 0; i < a.data.length; ++i) {
    const x = a.data[i], y = b.data[i];
    if (typeof x === 'string' || typeof y === 'string') { assert.equal(String(x), String(y), `${where}[${i}]`); continue; }
    const d = Math.abs(x - y);
    assert.ok(d <= 1e-5 + 1e-3 * Math.abs(y), `${where}[${i}]: onemodel ${x}, peer ${y}`);
    worst = Math.max(worst, d);
  }
  return worst;
}

for (const peer of ['onnxruntime-node', 'onnxruntime-web']) {
  test(`the same script on ${peer} and on onemodel: the same outputs within tolerance`, { skip: !installed(peer) && `${peer} is not installed (npm install)` }, () => {
    const theirs = run(peer);
    assert.deepEqual(Object.keys(ours).sort(), Object.keys(theirs).sort());
    for (const k of Object.keys(ours)) close(ours[k], theirs[k], `${k} vs ${peer}`);
  });
}

test('OneModel through the JS API gives the native CLI\'s bits', { skip: !existsSync('build/native/onemodel') && 'build/native/onemodel is not built' }, () => {
  const byModel = new Map();
  for (const [k, v] of Object.entries(ours)) {
    const m = k.slice(0, k.indexOf('/'));
    if (!byModel.has(m)) byModel.set(m, v);
  }
  let outputs = 0;
  for (const [m, v] of byModel) {
    const args = ['hash', v.file];
    for (const [name, f] of Object.entries(v.inputs)) args.push('--input', `${name}=${f}`);
    const lines = execFileSync('build/native/onemodel', args, { encoding: 'utf8', maxBuffer: 1 << 26 }).trim().split('\n');
    const stem = path.basename(v.file, '.onnx');
    for (const [k, o] of Object.entries(ours)) {
      if (!k.startsWith(`${m}/`)) continue;
      const line = lines.find((l) => l.startsWith(`${stem}/${k.slice(m.length + 1)} `));
      assert.equal(o.hash, line?.split(' ')[1], k);
      ++outputs;
    }
  }
  assert.ok(outputs >= 6, `${outputs} outputs compared`);
});

test('reference models in the side-by-side run', { skip: !existsSync('models/mobilenet_v3_large.onnx') && 'the reference models are not prepared (tools/prepare.sh): the side-by-side and bitwise checks ran on the committed graphs only' }, () => {
  assert.ok(Object.keys(ours).some((k) => k.startsWith('mobilenet_v3_large/')));
});
