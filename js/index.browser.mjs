// The package's browser entry (ESM; bundlers pick it by the "browser" condition, and
// dist/onemodel.browser.mjs is it bundled with onnxruntime-common for a plain
// <script type="module">): onnxruntime-common's API with OneModel as its backend.
//   import * as ort from 'onemodel';
//   const session = await ort.InferenceSession.create('/models/model.onnx');
// The .wasm and its loader are found next to the package's dist/ (where this file's URL
// says), or at env.wasm.wasmPaths. env.wasm.proxy = true runs sessions in a Web Worker.
import * as ort from 'onnxruntime-common';
import { registerOneModel, OneModelError } from './api.mjs';
import { platform, distUrl, wasmThreads } from './platform-browser.mjs';
import { createProxyBackend } from './proxy.mjs';
import { version } from './version.mjs';

// env.wasm.proxy = true: sessions run in a Web Worker (dist/onemodel.worker.mjs), so the
// page's main thread never blocks on a run.
const proxy = createProxyBackend(ort, () => distUrl('onemodel.worker.mjs', ort.env.wasm ?? {}));
const backend = registerOneModel(ort, platform, version, proxy);

// OneModel's own: the exact-mode golden hash of a Tensor, Tensor[] or run result.
export const goldenHash = (values) => backend.goldenHash(values);
// OneModel's own: browsers run the wasm build (node's entry may run the native addon), on
// `threads` threads (env.wasm.numThreads where the page is cross-origin isolated, else 1).
export const engineInfo = () => ({ engine: 'wasm', reason: 'browsers run the wasm build', threads: wasmThreads(ort.env.wasm ?? {}) });
// OneModel's own: {inUse, heapSize}, the wasm memory malloc has handed out and its size.
export const wasmMemory = () => backend.wasmMemory();

export * from 'onnxruntime-common';
export { OneModelError };
export default ort;
