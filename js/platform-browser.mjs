// The browser platform of js/api.mjs: the wasm module and model bytes by URL. Shared by
// the browser entry (js/index.browser.mjs) and the proxy worker (js/proxy-worker.mjs).
import { OneModelError } from './api.mjs';
import { fetchWithProgress } from './fetch.mjs';
import { simdSupported } from './simd.mjs';

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

export async function loadModule(envWasm) {
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

export const readModel = (uri, onProgress) => fetchWithProgress(new URL(uri, location.href).href, onProgress);


export const platform = { loadModule, readModel };

// The URL of a file next to the wasm builds: env.wasm.wasmPaths (a prefix) or dist/.
export function distUrl(name, envWasm) {
  const paths = envWasm.wasmPaths;
  return new URL(name, typeof paths === 'string' ? new URL(paths, location.href) : new URL('../dist/', import.meta.url)).href;
}
