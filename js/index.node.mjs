// The package's node entry (ESM): onnxruntime-common's API with OneModel registered as
// its backend. `import * as ort from 'onemodel'` where code had 'onnxruntime-web' or
// 'onnxruntime-node'; exact mode by default.
import * as ort from 'onnxruntime-common';
import { readFile } from 'node:fs/promises';
import { loadModuleForEnv } from './loader.mjs';
import { registerOneModel, OneModelError } from './api.mjs';
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

const backend = registerOneModel(ort, { loadModule: loadModuleForEnv, readModel }, version);

// OneModel's own: the exact-mode golden hash of a Tensor, Tensor[] or run result.
export const goldenHash = (values) => backend.goldenHash(values);
// OneModel's own: {inUse, heapSize}, the wasm memory malloc has handed out and its size.
export const wasmMemory = () => backend.wasmMemory();

export * from 'onnxruntime-common';
export { OneModelError };
export default ort;
