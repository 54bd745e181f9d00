// Greedy decoding with a KV cache through the JS API (issue 34): tools/make_llm.py's tiny
// decoder in the genai layout (GroupQueryAttention, SimplifiedLayerNormalization and
// SkipSimplifiedLayerNormalization) and in the plain one (transformers.js's exports), fp32
// and q4 (MatMulNBits), 64 greedy steps after the prompt with each run's present.* fed back
// as past_key_values.* (tools/lib/llm.mjs): OneModel gives onnxruntime-node's tokens, with
// and without a preallocated logits Tensor. Run from the repository root: node --test tests/js/
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as ort from '../../js/index.node.mjs';
import { readConfig, promptIds, generate } from '../../tools/lib/llm.mjs';

// ONEMODEL_TEST_SIMD=off runs the suite on the scalar wasm build (env.wasm.simd = false).
if (process.env.ONEMODEL_TEST_SIMD === 'off') ort.env.wasm.simd = false;

const STEPS = 64;
const PYTHON = '/usr/bin/python3';
const MAKE_LLM = fileURLToPath(new URL('../../tools/make_llm.py', import.meta.url));
const installed = (pkg) => { try { createRequire(import.meta.url).resolve(pkg); return true; } catch { return false; } };
let noPython = false;
try {
  execFileSync(PYTHON, ['-c', 'import onnx, numpy'], { stdio: 'ignore' });
} catch {
  noPython = `${PYTHON} lacks onnx or numpy (apt-get install python3-onnx python3-numpy): tools/make_llm.py cannot make the models`;
}
// onnxruntime-node is CommonJS: it registers its backend with onnxruntime-common's CommonJS
// build, apart from the ESM one OneModel's entry uses, so each package's InferenceSession
// reaches its own engine (checked below all the same).
const ortNode = installed('onnxruntime-node') ? await import('onnxruntime-node') : null;

const dir = mkdtempSync(path.join(os.tmpdir(), 'om-llm-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function firstDifference(a, b) {
  for (let i = 0; i < Math.max(a.length, b.length); ++i) if (a[i] !== b[i]) return i;
  return -1;
}

for (const layout of ['genai', 'plain']) {
  for (const weights of ['fp32', 'q4']) {
    test(`tiny decoder, ${layout} layout, ${weights}: ${STEPS} greedy steps give onnxruntime-node's tokens`, async (t) => {
      if (noPython) return t.skip(noPython);
      if (!ortNode) return t.skip('onnxruntime-node is not installed (npm install)');
      const file = path.join(dir, `tiny-${layout}-${weights}.onnx`);
      execFileSync(PYTHON, [MAKE_LLM, '--size', 'tiny', '--layout', layout, '--weights', weights, '--seed', '7', file],
        { stdio: ['ignore', 'ignore', 'inherit'] });
      const cfg = readConfig(file);
      const prompt = promptIds(7, cfg.vocab, 11);

      const theirs = await ortNode.InferenceSession.create(file, { intraOpNumThreads: 1 });
      assert.ok(!('onemodelEngine' in theirs.handler), 'onnxruntime-node got the reference session');
      const expected = (await generate(ortNode, theirs, cfg, prompt, STEPS)).tokens;
      await theirs.release();
      assert.equal(expected.length, STEPS + 1);
      assert.ok(new Set(expected).size >= 16, `the reference tokens vary: ${expected.join(' ')}`);

      const ours = await ort.InferenceSession.create(file, { executionProviders: ['onemodel'] });
      assert.ok('onemodelEngine' in ours.handler, 'OneModel got the session');
      for (const preallocate of [false, true]) {
        const got = (await generate(ort, ours, cfg, prompt, STEPS, { preallocate })).tokens;
        const at = firstDifference(got, expected);
        assert.equal(at, -1, `preallocate ${preallocate}: first different token at step ${at} ` +
          `(onemodel ${got[at]}, onnxruntime-node ${expected[at]})\n  onemodel:         ${got.join(' ')}\n  onnxruntime-node: ${expected.join(' ')}`);
      }
      await ours.release();
    });
  }
}
