// Times one model on ONNX Runtime in a process of its own (tools/bench.mjs), so that its
// thread pool is gone while OneModel is timed:
//   node tools/lib/ort_time.mjs node|web MODEL THREADS RUNS NAME=FILE.npy ...
// Prints median_ms=<x> after one warm-up run and RUNS timed runs of session.run.
import { readNpy } from './npy.mjs';

const [backend, file, threads, runs, ...inputs] = process.argv.slice(2);
const ort = backend === 'web' ? await import('onnxruntime-web') : await import('onnxruntime-node');
const o = ort.default ?? ort;
const opts = backend === 'web' ? { executionProviders: ['wasm'] } : { intraOpNumThreads: Number(threads), interOpNumThreads: 1 };
if (backend === 'web') o.env.wasm.numThreads = Number(threads);
const feeds = {};
for (const a of inputs) {
  const eq = a.indexOf('=');
  const t = readNpy(a.slice(eq + 1));
  feeds[a.slice(0, eq)] = new o.Tensor(t.type, t.data, t.dims);
}
const s = await o.InferenceSession.create(file, opts);
await s.run(feeds);
const t = [];
for (let r = 0; r < Number(runs); ++r) {
  const t0 = performance.now();
  await s.run(feeds);
  t.push(performance.now() - t0);
}
t.sort((a, b) => a - b);
const n = t.length;
console.log(`median_ms=${n % 2 ? t[(n - 1) / 2] : (t[n / 2 - 1] + t[n / 2]) / 2}`);
process.exit(0);
