// Loads the OneModel wasm module: the SIMD128 build where the engine validates SIMD,
// else the scalar build (or as forced by `simd`). Node: reads the .wasm with fs and
// passes it in (Emscripten's fetch() path fails under Node 20); browsers: fetches it.
import { simdSupported, relaxedSimdSupported, chooseFlavour } from './simd.mjs';
import { OneModelError } from './api.mjs';
import { createRequire } from 'node:module';
import { readFileSync, existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import { availableParallelism } from 'node:os';

const here = dirname(fileURLToPath(import.meta.url));

export { simdSupported, relaxedSimdSupported };

// Returns the folder holding onemodel-{simd,scalar}.{js,wasm}: `prefix` (env.wasm.wasmPaths),
// ONEMODEL_WASM_DIR, the repo's build/wasm (fresher than a dist/ packed from it), or the
// package's dist/.
export function wasmDir(prefix) {
  const candidates = [prefix, process.env.ONEMODEL_WASM_DIR, join(here, '..', 'build', 'wasm'), join(here, '..', 'dist')];
  for (const c of candidates) {
    if (c && existsSync(join(c, 'onemodel-scalar.js'))) return c;
  }
  throw new Error('onemodel: wasm build not found; run tools/build.sh wasm (or set ONEMODEL_WASM_DIR)');
}

// simd: 'on' | 'off' | 'detect'; threads: the module's thread count (above 1: the
// threaded flavour, SIMD128 + pthreads, with threads - 1 Web Workers made now and shared by
// every session); relaxed: 'detect' | 'off' (at one thread, the SIMD128 + relaxed SIMD
// flavour where the engine validates it: fast mode's fused multiply-adds; default
// ONEMODEL_WASM_RELAXED, else 'detect'); wasmPaths: the folder of the .js/.wasm files;
// wasmBinary: the chosen flavour's .wasm bytes (then not read from disk). Returns
// { module, flavour, threads }.
export async function loadOneModel({ simd = 'detect', threads = 1, relaxed, wasmPaths, wasmBinary: given } = {}) {
  if (!['on', 'off', 'detect'].includes(simd)) {
    throw new Error(`onemodel: --simd takes on, off or detect, not '${simd}'`);
  }
  relaxed ??= process.env.ONEMODEL_WASM_RELAXED === '0' ? 'off' : process.env.ONEMODEL_WASM_RELAXED || 'detect';
  if (!['off', 'detect'].includes(relaxed)) {
    throw new Error(`onemodel: relaxed SIMD takes off or detect (ONEMODEL_WASM_RELAXED=0 is off), not '${relaxed}'`);
  }
  if (!Number.isInteger(threads) || threads < 1 || threads > 1024) {
    throw new Error(`onemodel: the wasm thread count must be an integer in [1, 1024], not ${threads}`);
  }
  const useSimd = simd === 'on' || (simd === 'detect' && simdSupported());
  if (simd === 'on' && !simdSupported()) {
    throw new Error('onemodel: --simd on, but this engine does not validate wasm SIMD128');
  }
  // The threaded flavour is a SIMD128 build: without SIMD the module runs one thread.
  const threaded = threads > 1 && useSimd;
  const dir = wasmDir(typeof wasmPaths === 'string' ? wasmPaths : wasmPaths?.wasm && dirname(wasmPaths.wasm));
  // A given wasmBinary is the flavour the caller built for: never the relaxed one unasked.
  const flavour = chooseFlavour({ simd: useSimd, threads: threaded ? threads : 1, relaxed: given ? 'off' : relaxed,
    available: (f) => existsSync(join(dir, `onemodel-${f}.wasm`)) });
  const require = createRequire(import.meta.url);
  const script = join(dir, `onemodel-${flavour}.js`);
  if (threaded && !existsSync(script)) {
    throw new Error(`onemodel: ${threads} wasm threads need the threaded build ${script}; run tools/build.sh wasm`);
  }
  const factory = require(script);
  const wasmBinary = given ? new Uint8Array(given) : readFileSync(join(dir, `onemodel-${flavour}.wasm`));
  // ONEMODEL_* variables reach the module's getenv as natively (ONEMODEL_PROFILE, ...).
  const preRun = [(m) => {
    for (const [k, v] of Object.entries(process.env)) if (k.startsWith('ONEMODEL_') && m.ENV) m.ENV[k] = v;
  }];
  const options = { wasmBinary, preRun };
  if (threaded) {
    // Emscripten's PTHREAD_POOL_SIZE reads onemodelWorkers; the workers load this flavour's
    // worker script and, through it, the loader script.
    options.onemodelWorkers = threads - 1;
    options.mainScriptUrlOrBlob = script;
    options.locateFile = (name, prefix) => (name.endsWith('.worker.js') ? join(dir, `onemodel-${flavour}.worker.js`) : prefix + name);
  }
  const module = await factory(options);
  // The workers wait for work between runs; they must not keep node's process alive.
  if (threaded) for (const w of module.PThread?.unusedWorkers ?? []) w.unref?.();
  return { module, flavour, threads: threaded ? threads : 1 };
}

// The wasm thread count for onnxruntime-common's env.wasm.numThreads, as onnxruntime-web
// reads it: a whole number >= 0; 0 or unset: min(4, ceil(cores / 2)) where shared memory
// exists (SharedArrayBuffer), else 1.
export function wasmThreads(envWasm = {}) {
  const n = envWasm.numThreads;
  if (n !== undefined && (!Number.isInteger(n) || n < 0 || n > 1024)) {
    throw new OneModelError('invalid_argument', `env.wasm.numThreads must be a whole number in [0, 1024], not ${n}`);
  }
  if (typeof SharedArrayBuffer === 'undefined') return 1;
  return n || Math.min(4, Math.ceil(availableParallelism() / 2));
}

// The module for onnxruntime-common's env.wasm: simd false -> the scalar build, true ->
// SIMD128 (an error where the engine lacks it), unset -> detect; relaxedSimd false -> never
// the SIMD128 + relaxed SIMD flavour (else taken at one thread where the engine validates
// relaxed SIMD, unless ONEMODEL_WASM_RELAXED=0); numThreads above 1 -> the
// threaded SIMD128 flavour with that many threads (wasmThreads); wasmPaths, wasmBinary as
// onnxruntime-web takes them (proxy does not apply in node). The module is made once: its
// thread count is the one env.wasm.numThreads had then.
export async function loadModuleForEnv(envWasm = {}) {
  const simd = envWasm.simd === false ? 'off' : envWasm.simd === undefined ? 'detect' : 'on';
  const threads = wasmThreads(envWasm);
  const relaxed = envWasm.relaxedSimd === false ? 'off' : undefined;
  const { module, flavour, threads: got } = await loadOneModel({ simd, threads, relaxed, wasmPaths: envWasm.wasmPaths, wasmBinary: envWasm.wasmBinary });
  module.onemodelFlavour = flavour;
  module.onemodelThreads = got;
  return module;
}
