// The browser platform of js/api.mjs: the wasm module and model bytes by URL. Shared by
// the browser entry (js/index.browser.mjs) and the proxy worker (js/proxy-worker.mjs).
import { OneModelError } from './api.mjs';
import { fetchWithProgress } from './fetch.mjs';
import { simdSupported, chooseFlavour } from './simd.mjs';

// Evaluates an Emscripten loader script at global scope: a <script> in a page,
// importScripts in a classic worker, an indirect eval elsewhere (a module worker).
async function loadScript(url) {
  if (typeof document !== 'undefined') {
    await new Promise((resolve, reject) => {
      const s = document.createElement('script');
      s.src = url;
      s.onload = resolve;
      s.onerror = () => reject(new OneModelError('io', `cannot load ${url}`));
      document.head.appendChild(s);
    });
  } else {
    // A classic worker has importScripts; a module worker has it too, but it throws.
    if (typeof importScripts === 'function') {
      try {
        importScripts(url);
        return;
      } catch {
        // a module worker: evaluate the fetched script instead
      }
    }
    const resp = await fetch(url);
    if (!resp.ok) throw new OneModelError('io', `cannot fetch ${url}: HTTP ${resp.status}`);
    (0, eval)(await resp.text());
  }
}

const factories = {};  // flavour -> the loader's createOneModel
let isolationNoted = false;

// The wasm thread count for env.wasm.numThreads, as onnxruntime-web reads it: a whole
// number >= 0; 0 or unset: min(4, ceil(cores / 2)). Threads need shared memory, which a
// page has only when cross-origin isolated (COOP and COEP headers): elsewhere 1 thread,
// with a console note when more were asked for.
export function wasmThreads(envWasm) {
  const n = envWasm.numThreads;
  if (n !== undefined && (!Number.isInteger(n) || n < 0 || n > 1024)) {
    throw new OneModelError('invalid_argument', `env.wasm.numThreads must be a whole number in [0, 1024], not ${n}`);
  }
  if (typeof SharedArrayBuffer === 'undefined' || globalThis.crossOriginIsolated !== true) {
    if (n > 1 && !isolationNoted) {
      isolationNoted = true;
      console.warn(`onemodel: env.wasm.numThreads is ${n}, but this page is not cross-origin isolated ` +
        '(Cross-Origin-Opener-Policy: same-origin and Cross-Origin-Embedder-Policy: require-corp): running 1 thread');
    }
    return 1;
  }
  return n || Math.min(4, Math.ceil((navigator.hardwareConcurrency || 1) / 2));
}

// The module for env.wasm: simd (false: scalar; true: SIMD128 or an error; unset: detect),
// numThreads (above 1: the SIMD128 + threads flavour, its numThreads - 1 Web Workers made
// now and shared by every session), wasmPaths, wasmBinary (the chosen flavour's).
export async function loadModule(envWasm) {
  if (envWasm.simd === true && !simdSupported()) {
    throw new OneModelError('unsupported_isa', 'env.wasm.simd is true, but this browser does not validate wasm SIMD128');
  }
  const simd = envWasm.simd !== false && simdSupported();
  const threads = simd ? wasmThreads(envWasm) : 1;
  // A given wasmBinary or .wasm path is the flavour the caller built for: the relaxed one
  // only when neither is given and env.wasm.relaxedSimd is not false.
  const relaxed = envWasm.relaxedSimd === false || envWasm.wasmBinary || typeof envWasm.wasmPaths === 'object' ? 'off' : 'detect';
  const flavour = chooseFlavour({ simd, threads, relaxed });
  const paths = envWasm.wasmPaths;
  const base = typeof paths === 'string' ? new URL(paths, location.href) : new URL('../dist/', import.meta.url);
  const jsUrl = typeof paths === 'object' && paths?.mjs ? new URL(paths.mjs, location.href) : new URL(`onemodel-${flavour}.js`, base);
  const wasmUrl = typeof paths === 'object' && paths?.wasm ? new URL(paths.wasm, location.href) : new URL(`onemodel-${flavour}.wasm`, base);
  if (!factories[flavour]) {
    // Every build defines the global createOneModel: load one, keep it under its flavour.
    await loadScript(jsUrl.href);
    factories[flavour] = globalThis.createOneModel;
    if (!factories[flavour]) throw new OneModelError('io', `${jsUrl.href} did not define createOneModel`);
  }
  let wasmBinary = envWasm.wasmBinary;
  if (!wasmBinary) {
    const resp = await fetch(wasmUrl.href);
    if (!resp.ok) throw new OneModelError('io', `cannot fetch ${wasmUrl.href}: HTTP ${resp.status}`);
    wasmBinary = await resp.arrayBuffer();
  }
  const options = { wasmBinary: new Uint8Array(wasmBinary) };
  if (threads > 1) {
    // Emscripten's PTHREAD_POOL_SIZE reads onemodelWorkers; each worker runs the flavour's
    // worker script, which loads the loader script from mainScriptUrlOrBlob.
    const workerUrl = new URL(`onemodel-${flavour}.worker.js`, jsUrl).href;
    Object.assign(options, {
      onemodelWorkers: threads - 1,
      mainScriptUrlOrBlob: jsUrl.href,
      locateFile: (name, prefix) => (name.endsWith('.worker.js') ? workerUrl : prefix + name),
    });
  }
  const module = await factories[flavour](options);
  module.onemodelFlavour = flavour;
  module.onemodelThreads = threads;
  return module;
}

export const readModel = (uri, onProgress) => fetchWithProgress(new URL(uri, location.href).href, onProgress);


export const platform = { loadModule, readModel };

// The URL of a file next to the wasm builds: env.wasm.wasmPaths (a prefix) or dist/.
export function distUrl(name, envWasm) {
  const paths = envWasm.wasmPaths;
  return new URL(name, typeof paths === 'string' ? new URL(paths, location.href) : new URL('../dist/', import.meta.url)).href;
}
