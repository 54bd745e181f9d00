// transformers.js on OneModel gives onnxruntime-node's results (issue 34): tools/make_hf_models.py's
// tiny BERT (`feature-extraction`, mean pooling, normalized, and the raw hidden states) and
// tiny Qwen2 decoder (`text-generation`, greedy, 20 new tokens, two prompts padded on the
// left), each in transformers.js's dtypes fp32, q8 (DynamicQuantizeLinear + MatMulInteger)
// and q4 (MatMulNBits), through @huggingface/transformers' pipelines with its own
// onnxruntime-node and with OneModel: the token ids and texts must be equal, the embeddings
// within tools/lib/hf_run.mjs's TOLERANCE (each test prints the largest difference and how
// many values are bitwise equal).
// Each engine runs in its own node process (tools/lib/hf_pipeline.mjs prints the results as
// JSON): transformers.js takes its onnxruntime when it is imported, so one process holds one.
// OneModel gets there two ways:
// - register (always): `import 'onemodel/register'` (this repository's js/register.node.mjs)
//   before transformers.js, which then finds OneModel at globalThis[Symbol.for('onnxruntime')]
//   (device 'auto': see tools/lib/hf_pipeline.mjs).
// - overrides (when ONEMODEL_PACKAGE names OneModel's package: a folder with dist/, or the
//   .tgz tools/pack.sh makes): a scratch npm project with the same transformers.js and
//   "overrides": {"onnxruntime-node": "file:<package>"}, installed by npm (--prefer-offline:
//   npm's cache or the registry), transformers.js's defaults untouched (device 'cpu').
// Skips, with the reason, without @huggingface/transformers (a devDependency) or without
// /usr/bin/python3 with onnx and numpy. Run from the repository root: node --test tests/js/
//   ONEMODEL_PACKAGE=build/npm/onemodel-0.1.0.tgz node --test tests/js/transformers_test.mjs
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { DTYPES, compareStep } from '../../tools/lib/hf_run.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const PYTHON = '/usr/bin/python3';
const RUNNER = path.join(ROOT, 'tools', 'lib', 'hf_pipeline.mjs');
const PACKAGE = process.env.ONEMODEL_PACKAGE ? path.resolve(process.env.ONEMODEL_PACKAGE) : null;
const run = promisify(execFile);

let missing = false;
let transformersVersion;
try {
  // The CommonJS entry, dist/transformers.node.cjs: its package.json is one folder up (the
  // exports map hides ./package.json).
  const entry = createRequire(import.meta.url).resolve('@huggingface/transformers');
  transformersVersion = JSON.parse(readFileSync(path.join(path.dirname(entry), '..', 'package.json'), 'utf8')).version;
} catch {
  missing = '@huggingface/transformers is not installed (npm install: a devDependency)';
}
if (!missing) {
  try {
    execFileSync(PYTHON, ['-c', 'import onnx, numpy'], { stdio: 'ignore' });
  } catch {
    missing = `${PYTHON} lacks onnx or numpy (apt-get install python3-onnx python3-numpy): tools/make_hf_models.py cannot make the models`;
  }
}

const dir = mkdtempSync(path.join(os.tmpdir(), 'om-transformers-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const MODELS = path.join(dir, 'models');

const once = (f) => { let p; return () => (p ??= f()); };
const makeModels = once(async () => {
  await run(PYTHON, [path.join(ROOT, 'tools', 'make_hf_models.py'), MODELS]);
});
// The runner's JSON; a runner that dies is the test's failure with its stderr.
async function pipelines(runner, engine) {
  await makeModels();
  const t0 = performance.now();
  try {
    const { stdout } = await run(process.execPath, [runner, '--engine', engine, '--models', MODELS],
      { maxBuffer: 256 << 20, timeout: 600_000, env: process.env });
    return { ...JSON.parse(stdout.trim().split('\n').pop()), wallMs: Math.round(performance.now() - t0) };
  } catch (e) {
    throw new Error(`${path.relative(ROOT, runner) || runner} --engine ${engine} failed: ${e.message}\n${e.stderr ?? ''}`);
  }
}
const reference = once(() => pipelines(RUNNER, 'onnxruntime-node'));
const viaRegister = once(() => pipelines(RUNNER, 'onemodel'));
const viaOverrides = once(async () => {
  const project = path.join(dir, 'overrides');
  mkdirSync(project);
  writeFileSync(path.join(project, 'package.json'), JSON.stringify({
    name: 'onemodel-transformers-overrides', private: true, type: 'module',
    dependencies: { '@huggingface/transformers': transformersVersion },
    overrides: { 'onnxruntime-node': `file:${PACKAGE}` },
  }, null, 1));
  try {
    await run('npm', ['install', '--ignore-scripts', '--no-audit', '--no-fund', '--prefer-offline', '--loglevel=error'],
      { cwd: project, timeout: 600_000, maxBuffer: 64 << 20 });
  } catch (e) {
    throw new Error(`npm install in ${project} (transformers.js ${transformersVersion}, onnxruntime-node -> ${PACKAGE}) failed: ${e.message}\n${e.stderr ?? ''}`);
  }
  for (const f of ['hf_pipeline.mjs', 'hf_run.mjs']) copyFileSync(path.join(ROOT, 'tools', 'lib', f), path.join(project, f));
  return pipelines(path.join(project, 'hf_pipeline.mjs'), 'onnxruntime-node');
});

const LABEL = { features: 'feature-extraction (tiny-bert): embeddings within tolerance', generation: 'text-generation (tiny-qwen2): the same tokens and texts' };

async function check(t, ours, dtype, kind) {
  const ref = await reference();
  assert.ok(ref.versions.node && !ref.versions.onemodel, `the reference run is onnxruntime-node's (versions ${JSON.stringify(ref.versions)})`);
  assert.ok(ours.versions.onemodel, `transformers.js got OneModel as its onnxruntime (versions ${JSON.stringify(ours.versions)})`);
  const r = compareStep(kind, ref.results[dtype][kind], ours.results[dtype][kind]);
  t.diagnostic(`${dtype} ${kind}: ${r.detail}; OneModel ${ours.results[dtype][kind].ms} ms, onnxruntime-node ${ref.results[dtype][kind].ms} ms`);
  assert.ok(r.ok, `${dtype} ${kind}: ${r.detail}`);
}

for (const dtype of DTYPES) {
  for (const kind of ['features', 'generation']) {
    test(`transformers.js ${dtype} ${LABEL[kind]}: OneModel through onemodel/register against onnxruntime-node`, async (t) => {
      if (missing) return t.skip(missing);
      await check(t, await viaRegister(), dtype, kind);
    });
  }
}

test('transformers.js with onnxruntime-node overridden to OneModel (npm overrides, ONEMODEL_PACKAGE)', async (t) => {
  if (missing) return t.skip(missing);
  if (!PACKAGE) return t.skip('ONEMODEL_PACKAGE is not set (OneModel\'s package folder or the .tgz of tools/pack.sh)');
  const ours = await viaOverrides();
  t.diagnostic(`the overrides project's run took ${ours.wallMs} ms (device ${ours.device})`);
  for (const dtype of DTYPES) {
    for (const kind of ['features', 'generation']) await t.test(`${dtype} ${LABEL[kind]}`, (st) => check(st, ours, dtype, kind));
  }
});
