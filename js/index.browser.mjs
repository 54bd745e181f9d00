// The package's browser entry (ESM; bundlers pick it by the "browser" condition, and
// dist/onemodel.browser.mjs is it bundled with onnxruntime-common for a plain
// <script type="module">): onnxruntime-common's API with OneModel as its backend.
//   import * as ort from 'onemodel';
//   const session = await ort.InferenceSession.create('/models/model.onnx');
// The .wasm and its loader are found next to the package's dist/ (where this file's URL
// says), or at env.wasm.wasmPaths.
import * as ort from 'onnxruntime-common';
import { registerOneModel, OneModelError } from './api.mjs';
import { fetchWithProgress } from './fetch.mjs';
import { simdSupported } from './simd.mjs';
import { version } from './version.mjs';

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
  } else if (typeof importScripts === 'function') {
    importScripts(url);
  } else {
    const resp = await fetch(url);
    if (!resp.ok) throw new OneModelError('io', `cannot fetch ${url}: HTTP ${resp.status}`);
    (0, eval)(await resp.text());
  }
}

const factories = {};  // flavour -> the loader's createOneModel

async function loadModule(envWasm) {
  if (envWasm.simd === true && !simdSupported()) {
    throw new OneModelError('unsupported_isa', 'env.wasm.simd is true, but this browser does not validate wasm SIMD128');
  }
  const flavour = envWasm.simd === false || !simdSupported() ? 'scalar' : 'simd';
  const paths = envWasm.wasmPaths;
  const base = typeof paths === 'string' ? new URL(paths, location.href) : new URL('../dist/', import.meta.url);
  const jsUrl = typeof paths === 'object' && paths?.mjs ? new URL(paths.mjs, location.href) : new URL(`onemodel-${flavour}.js`, base);
  const wasmUrl = typeof paths === 'object' && paths?.wasm ? new URL(paths.wasm, location.href) : new URL(`onemodel-${flavour}.wasm`, base);
  if (!factories[flavour]) {
    // Both builds define the global createOneModel: load one, keep it under its flavour.
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
  return factories[flavour]({ wasmBinary: new Uint8Array(wasmBinary) });
}

const readModel = (uri, onProgress) => fetchWithProgress(new URL(uri, location.href).href, onProgress);

const backend = registerOneModel(ort, { loadModule, readModel }, version);

// OneModel's own: the exact-mode golden hash of a Tensor, Tensor[] or run result.
export const goldenHash = (values) => backend.goldenHash(values);

export * from 'onnxruntime-common';
export { OneModelError };
export default ort;
