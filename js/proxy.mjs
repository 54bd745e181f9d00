// The page's side of env.wasm.proxy = true: a backend whose sessions live in a Web
// Worker (js/proxy-worker.mjs, bundled as dist/onemodel.worker.mjs). Feeds are copied to
// the worker; outputs come back transferred. Same handler interface as js/api.mjs.
import { OneModelError } from './api.mjs';

export function createProxyBackend(ort, workerUrl) {
  let worker = null;
  let nextId = 1;
  const pending = new Map();  // id -> {resolve, reject, onProgress}

  function start() {
    if (worker) return worker;
    worker = new Worker(workerUrl(), { type: 'module' });
    worker.onmessage = ({ data: msg }) => {
      const p = pending.get(msg.id);
      if (!p) return;
      if (msg.progress) { p.onProgress?.(...msg.progress); return; }
      pending.delete(msg.id);
      if (msg.ok) p.resolve(msg);
      else p.reject(new OneModelError(msg.code, msg.message));
    };
    worker.onerror = (e) => {
      const err = new OneModelError('internal', `the proxy worker failed: ${e.message ?? e}`);
      for (const p of pending.values()) p.reject(err);
      pending.clear();
      worker = null;
    };
    return worker;
  }

  function call(msg, transfer = [], onProgress = undefined) {
    const w = start();
    const id = nextId++;
    return new Promise((resolve, reject) => {
      pending.set(id, { resolve, reject, onProgress });
      w.postMessage({ ...msg, id }, transfer);
    });
  }

  // What of env.wasm and the session options can cross to the worker.
  function envWasm() {
    const e = ort.env.wasm ?? {};
    const paths = typeof e.wasmPaths === 'string' ? new URL(e.wasmPaths, location.href).href : e.wasmPaths;
    return { simd: e.simd, numThreads: e.numThreads, wasmPaths: paths, wasmBinary: e.wasmBinary };
  }
  // externalData: path strings and URLs resolved against the page; bytes and Blobs are
  // cloned to the worker.
  const url = (d) => (typeof d === 'string' ? new URL(d, location.href).href : d);
  const externalData = (list) => (Array.isArray(list)
    ? list.map((f) => (typeof f === 'string' ? { path: f, data: url(f) } : { path: f?.path, data: url(f?.data) }))
    : list);
  const sessionOptions = (o) => ({
    mode: o.mode, freeDimensionOverrides: o.freeDimensionOverrides, enableProfiling: o.enableProfiling, extra: o.extra,
    externalData: externalData(o.externalData),
  });

  class ProxyHandler {
    constructor(r) {
      this.handle = r.handle;
      this.inputNames = r.inputNames;
      this.outputNames = r.outputNames;
      this.inputMetadata = r.inputMetadata;
      this.outputMetadata = r.outputMetadata;
    }
    async run(feeds, fetches, options = {}) {
      if (this.handle === null) throw new OneModelError('invalid_argument', 'the session was released');
      // The options the worker's run reads (terminate, the time limit), as plain data.
      const runOptions = { terminate: !!options.terminate, extra: { onemodel: { timeLimitMs: options.extra?.onemodel?.timeLimitMs ?? 0 } } };
      const plain = {};
      for (const [k, t] of Object.entries(feeds)) plain[k] = { type: t.type, dims: Array.from(t.dims), data: t.data };
      const r = await call({ op: 'run', handle: this.handle, feeds: plain, fetches: Object.keys(fetches), runOptions });
      const out = {};
      for (const [k, t] of Object.entries(r.outputs)) {
        const given = fetches[k];
        if (given) { given.data.set(t.data); out[k] = given; } else out[k] = new ort.Tensor(t.type, t.data, t.dims);
      }
      return out;
    }
    async dispose() {
      if (this.handle === null) return;
      const h = this.handle;
      this.handle = null;
      await call({ op: 'release', handle: h });
    }
    startProfiling() {}
    endProfiling() {}
  }

  return {
    async init() {},
    async createInferenceSessionHandler(uriOrBuffer, options = {}) {
      const msg = { op: 'create', options: sessionOptions(options), envWasm: envWasm() };
      if (typeof uriOrBuffer === 'string') msg.url = new URL(uriOrBuffer, location.href).href;
      else msg.bytes = uriOrBuffer.slice();  // a copy: the caller keeps its buffer
      return new ProxyHandler(await call(msg, msg.bytes ? [msg.bytes.buffer] : [], options.onProgress));
    },
    async goldenHash(tensors) {
      return (await call({ op: 'goldenHash', tensors: tensors.map((t) => ({ type: t.type, dims: Array.from(t.dims), data: t.data })) })).hash;
    },
  };
}
