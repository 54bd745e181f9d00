// The package's node entry (ESM): onnxruntime-common's API with OneModel registered as
// its backend. `import * as ort from 'onemodel'` where code had 'onnxruntime-web' or
// 'onnxruntime-node'; exact mode by default. Sessions run on the native addon where it
// loads (js/native.mjs: every core, runs off the event loop), else on the wasm build;
// engineInfo() says which, and both give the same bits.
import * as ort from 'onnxruntime-common';
import { readFile } from 'node:fs/promises';
import { openSync, fstatSync, readSync, closeSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { loadModuleForEnv, wasmThreads } from './loader.mjs';
import { createBackend, registerOneModel, OneModelError, wasmAlloc, heapU8 } from './api.mjs';
import { createNativeBackend, loadAddon } from './native.mjs';
import { version } from './version.mjs';

// A path, a file: URL, or an http(s) URL (fetched, with onProgress(loaded, total)).
async function readModel(uri, onProgress) {
  if (/^https?:\/\//.test(uri)) {
    const { fetchWithProgress } = await import('./fetch.mjs');
    return fetchWithProgress(uri, onProgress);
  }
  try {
    const bytes = await readFile(uri.startsWith('file:') ? new URL(uri) : uri);
    if (onProgress) onProgress(bytes.byteLength, bytes.byteLength);
    return bytes;
  } catch (e) {
    throw new OneModelError('io', `cannot read '${uri}': ${e.message}`);
  }
}

// A path or file: URL as a path (the model is then read through the wasm module's file
// access and keeps its folder); null for http(s) URLs. A path that cannot be read is an
// 'io' error here, with the system's reason.
function localPath(uri) {
  if (/^https?:\/\//.test(uri)) return null;
  const path = uri.startsWith('file:') ? fileURLToPath(uri) : uri;
  try {
    if (!statSync(path).isFile()) throw new Error('not a regular file');
  } catch (e) {
    throw new OneModelError('io', `cannot read '${uri}': ${e.message}`);
  }
  return path;
}

const fileSize = (path) => statSync(path).size;

// A file straight into malloc'ed wasm memory (no copy in JS): {ptr, size}.
function readFileInto(m, path, what) {
  let fd;
  try {
    fd = openSync(path, 'r');
  } catch (e) {
    throw new OneModelError('io', `${what}: cannot read '${path}': ${e.message}`);
  }
  let ptr = 0;
  try {
    const size = fstatSync(fd).size;
    ptr = wasmAlloc(m, size, `${what}, '${path}'`);
    for (let done = 0; done < size;) {
      const got = readSync(fd, heapU8(m), ptr + done, Math.min(size - done, 1 << 28), done);
      if (got <= 0) throw new OneModelError('io', `${what}: '${path}' ended after ${done} of ${size} bytes`);
      done += got;
    }
    return { ptr, size };
  } catch (e) {
    if (ptr) m._free(ptr);
    throw e instanceof OneModelError ? e : new OneModelError('io', `${what}: cannot read '${path}': ${e.message}`);
  } finally {
    closeSync(fd);
  }
}

const platform = { loadModule: loadModuleForEnv, readModel, localPath, fileSize, readFileInto };
const wasmBackend = createBackend(ort, platform);
let native = null;  // {backend, path, target} once the addon loaded, {reason} when it did not
const nativeEngine = () => {
  if (!native) {
    const r = loadAddon();
    native = r.addon ? { backend: createNativeBackend(ort, r.addon, platform), path: r.path, target: r.addon.bestTarget }
      : { reason: r.error };
  }
  return native;
};

// The engine the next session gets: ort.env.onemodel.engine, else ONEMODEL_ENGINE, else
// 'auto' (the native addon where it loads, the wasm build otherwise). {engine: 'native',
// path, target} or {engine: 'wasm', reason, threads} (threads: the wasm module's, from
// env.wasm.numThreads when it was first loaded, or as it would be loaded now).
export function engineInfo() {
  const want = ort.env.onemodel?.engine ?? process.env.ONEMODEL_ENGINE ?? 'auto';
  if (!['auto', 'native', 'wasm'].includes(want)) {
    throw new OneModelError('invalid_argument', `the engine is 'auto', 'native' or 'wasm', not '${want}'`);
  }
  const threads = () => wasmBackend.loadedThreads() ?? wasmThreads(ort.env.wasm ?? {});
  if (want === 'wasm') return { engine: 'wasm', reason: 'asked for', threads: threads() };
  const n = nativeEngine();
  if (n.backend) return { engine: 'native', path: n.path, target: n.target };
  if (want === 'native') throw new OneModelError('invalid_argument', `the native engine was asked for, but ${n.reason}`);
  return { engine: 'wasm', reason: n.reason, threads: threads() };
}

let told = '';
function chosen() {
  const info = engineInfo();
  const line = info.engine === 'native' ? `native (${info.path}, ${info.target})` : `wasm (${info.reason}; ${info.threads} thread${info.threads > 1 ? 's' : ''})`;
  if (ort.env.logLevel === 'verbose' && line !== told) console.log(`[onemodel] engine: ${line}`);
  told = line;
  return info.engine === 'native' ? native.backend : wasmBackend;
}

const dispatcher = {
  init: async () => {},  // the engine is chosen per session: its errors reach the caller with their code
  createInferenceSessionHandler: (uriOrBuffer, options) => chosen().createInferenceSessionHandler(uriOrBuffer, options),
  goldenHash: (values) => chosen().goldenHash(values),
  wasmMemory: () => wasmBackend.wasmMemory(),
};
const backend = registerOneModel(ort, { ...platform, backend: dispatcher }, version);
ort.env.onemodel ??= {};

// OneModel's own: the exact-mode golden hash of a Tensor, Tensor[] or run result.
export const goldenHash = (values) => backend.goldenHash(values);
// OneModel's own: {inUse, heapSize}, the wasm engine's memory malloc has handed out and
// its size (the wasm module is loaded for it if no session loaded it yet).
export const wasmMemory = () => backend.wasmMemory();

export * from 'onnxruntime-common';
export { OneModelError };
export default ort;
