// The same script (tests/js/same_script.mjs) run with onnxruntime-node, onnxruntime-web
// and onemodel, only the import differing: outputs agree within ONNX's backend-test
// tolerance (rtol 1e-3, atol 1e-5 here), and OneModel's are bitwise the committed golden
// hashes' (tests/js/api.test.mjs checks those hashes). A peer that is not installed is a
// skipped test, said so.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';

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
