// The Web Worker behind env.wasm.proxy = true (js/proxy.mjs is its other side): runs the
// backend of js/api.mjs off the page's main thread. Messages in: {id, op: 'create',
// bytes | url, options, envWasm} | {id, op: 'run', handle, feeds, fetches, runOptions} |
// {id, op: 'release', handle}; out: {id, ok: true, ...} | {id, ok: false, code, message}
// | {id, progress: [loaded, total]}.
import * as ort from 'onnxruntime-common';
import { createBackend } from './api.mjs';
import { platform } from './platform-browser.mjs';

let backend = null;
const handlers = new Map();
let next = 1;

const plain = (t) => ({ type: t.type, dims: Array.from(t.dims), data: t.data });

self.onmessage = async ({ data: msg }) => {
  const { id } = msg;
  try {
    if (msg.op === 'create') {
      Object.assign(ort.env.wasm, msg.envWasm, { proxy: false });
      backend ??= createBackend(ort, platform);
      const options = { ...msg.options, onProgress: (loaded, total) => self.postMessage({ id, progress: [loaded, total] }) };
      const h = await backend.createInferenceSessionHandler(msg.bytes ?? msg.url, options);
      const handle = next++;
      handlers.set(handle, h);
      self.postMessage({ id, ok: true, handle, inputNames: h.inputNames, outputNames: h.outputNames,
        inputMetadata: h.inputMetadata, outputMetadata: h.outputMetadata });
    } else if (msg.op === 'run') {
      const h = handlers.get(msg.handle);
      const feeds = {};
      for (const [k, t] of Object.entries(msg.feeds)) feeds[k] = new ort.Tensor(t.type, t.data, t.dims);
      const fetches = Object.fromEntries(msg.fetches.map((n) => [n, null]));
      const out = await h.run(feeds, fetches, msg.runOptions ?? {});
      const outputs = {};
      const transfer = [];
      for (const [k, t] of Object.entries(out)) {
        outputs[k] = plain(t);
        if (t.type !== 'string') transfer.push(t.data.buffer);
      }
      self.postMessage({ id, ok: true, outputs }, transfer);
    } else if (msg.op === 'release') {
      await handlers.get(msg.handle)?.dispose();
      handlers.delete(msg.handle);
      self.postMessage({ id, ok: true });
    } else if (msg.op === 'goldenHash') {
      backend ??= createBackend(ort, platform);
      const hash = await backend.goldenHash(msg.tensors.map((t) => new ort.Tensor(t.type, t.data, t.dims)));
      self.postMessage({ id, ok: true, hash });
    }
  } catch (e) {
    self.postMessage({ id, ok: false, code: e.code ?? 'internal', message: e.code ? e.message.slice(e.code.length + 2) : String(e.message ?? e) });
  }
};
