#!/usr/bin/env node
// Runs transformers.js's pipelines (tools/lib/hf_run.mjs) on tools/make_hf_models.py's
// folders with one engine and prints the results as one JSON line. tests/js/
// transformers_test.mjs runs it once per engine, each in its own process: transformers.js
// picks its onnxruntime when it is imported, so one process cannot hold both.
//   node tools/lib/hf_pipeline.mjs --engine onnxruntime-node|onemodel --models DIR [--dtypes fp32,q8,q4] [--register FILE]
// --engine onnxruntime-node: transformers.js as installed beside this file, with the
//   onnxruntime-node it resolves (its own, or OneModel where npm "overrides" put it in
//   its place), device left to transformers.js ('cpu' in node).
// --engine onemodel: imports OneModel's register module first (--register FILE, default
//   this repository's js/register.node.mjs), so that transformers.js finds OneModel at
//   globalThis[Symbol.for('onnxruntime')]; device 'auto' (with an onnxruntime from
//   globalThis transformers.js lists no devices of its own in node, so its default 'cpu'
//   is refused; 'auto' leaves the choice to onnxruntime-common, which picks OneModel).
// ONEMODEL_TEST_SIMD=off: OneModel on its scalar build (env.wasm.simd = false).
// transformers.js is imported by name, so it resolves from where this file is: copy this
// file and hf_run.mjs into a project to run that project's install.
import { fileURLToPath, pathToFileURL } from 'node:url';
import path from 'node:path';
import { runPipelines, DTYPES } from './hf_run.mjs';

const args = process.argv.slice(2);
const opt = { engine: null, models: null, dtypes: DTYPES.join(','), register: null };
for (let i = 0; i < args.length; ++i) {
  const k = args[i].replace(/^--/, '');
  if (!(k in opt) || i + 1 >= args.length) { console.error(`hf_pipeline: unknown or incomplete argument ${args[i]}`); process.exit(2); }
  opt[k] = args[++i];
}
if (!['onnxruntime-node', 'onemodel'].includes(opt.engine) || !opt.models) {
  console.error('usage: node tools/lib/hf_pipeline.mjs --engine onnxruntime-node|onemodel --models DIR [--dtypes fp32,q8,q4] [--register FILE]');
  process.exit(2);
}

if (opt.engine === 'onemodel') {
  const here = path.dirname(fileURLToPath(import.meta.url));
  await import(pathToFileURL(path.resolve(opt.register ?? path.join(here, '..', '..', 'js', 'register.node.mjs'))).href);
}
const transformers = await import('@huggingface/transformers');
const { env } = transformers;
env.allowRemoteModels = false;
env.allowLocalModels = true;
env.localModelPath = path.resolve(opt.models) + path.sep;
env.useFSCache = false;
// env.backends.onnx is a copy of the onnxruntime's env, its .wasm the same object.
if (process.env.ONEMODEL_TEST_SIMD === 'off' && env.backends.onnx?.versions?.onemodel) env.backends.onnx.wasm.simd = false;

const out = await runPipelines(transformers, { dtypes: opt.dtypes.split(','), device: opt.engine === 'onemodel' ? 'auto' : undefined });
process.stdout.write(JSON.stringify({ engine: opt.engine, node: process.version, ...out }) + '\n');
