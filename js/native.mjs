// The native engine behind the package in node: the N-API addon (native/addon.cpp, over
// the C ABI) as a backend of onnxruntime-common, the same API and errors as the wasm
// backend of js/api.mjs. Exact mode gives the same bits on both engines.
import { createRequire } from 'node:module';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dirname, join, resolve } from 'node:path';
import { OneModelError, ProfilingHandler, feedInfo, metadata, outputTensor, runTimeLimit, sessionOptions, unpackNibbles } from './api.mjs';

const here = dirname(fileURLToPath(import.meta.url));

// The addon for this platform: ONEMODEL_ADDON (a path), the repo's build/native (fresher
// than a packed one), or the package's dist/prebuilds/<platform>-<arch>. Returns {addon,
// path} or {error} saying why none loaded.
export function loadAddon() {
  const platformDir = `${process.platform}-${process.arch}`;
  const candidates = process.env.ONEMODEL_ADDON ? [resolve(process.env.ONEMODEL_ADDON)]
    : [join(here, '..', 'build', 'native', 'onemodel.node'), join(here, '..', 'dist', 'prebuilds', platformDir, 'onemodel.node')];
  const require = createRequire(import.meta.url);
  const reasons = [];
  for (const path of candidates) {
    if (!existsSync(path)) { reasons.push(`${path}: not there`); continue; }
    try {
      return { addon: require(path), path };
    } catch (e) {
      reasons.push(`${path}: ${e.message.split('\n')[0]}`);
    }
  }
  return { error: `no native addon for ${platformDir} loaded (${reasons.join('; ')})` };
}

// An addon error as OneModelError (the addon's have a `code` and a bare message).
function rethrow(e) {
  if (e instanceof OneModelError) throw e;
  if (e && typeof e.code === 'string') throw new OneModelError(e.code, e.message);
  throw e;
}

// Tensors for the addon: [{name, elementType, dims, data | strings}]; int4 / uint4 one
// element a byte, as the engine holds them.
function toAddon(entries, what) {
  return entries.map(([name, t]) => {
    const { elementType, dims } = feedInfo(name, t, what);
    if (t.type === 'string') return { name, elementType, dims, strings: Array.from(t.data, String) };
    if (t.type === 'int4' || t.type === 'uint4') {
      const count = dims.reduce((a, b) => a * b, 1);
      const data = new Uint8Array(count);
      unpackNibbles(new Uint8Array(t.data.buffer, t.data.byteOffset, t.data.byteLength), count, t.type === 'int4', data);
      return { name, elementType, dims, data };
    }
    return { name, elementType, dims, data: t.data };
  });
}

// onnxruntime-common's session options as the addon reads them. intraOpNumThreads: the
// worker threads of each session (0 or unset: one per core, as onnxruntime-node). The
// limits given are passed on (checked as on the wasm engine); those not given keep the
// native library's defaults (16 GiB a model and a tensor, where wasm32 has 4 GiB).
const LIMIT_NAMES = {
  maxModelBytes: 'max_model_bytes', maxTensorBytes: 'max_tensor_bytes', maxSessionBytes: 'max_session_bytes',
  maxGraphDepth: 'max_graph_depth', maxNodes: 'max_nodes',
};
function addonOptions(options, name, profiling) {
  const o = sessionOptions(options, name, profiling);
  const threads = options.intraOpNumThreads ?? 0;
  if (!Number.isSafeInteger(threads) || threads < 0) {
    throw new OneModelError('invalid_argument', `intraOpNumThreads must be a whole number >= 0, not ${threads}`);
  }
  const given = Object.keys(options.extra?.onemodel?.limits ?? {});
  return {
    mode: o.mode, isa: o.isa, threads, profiling: profiling ? 1 : 0,
    freeDimensions: o.freeDimensionNames.map((n, k) => [n, o.freeDimensionSizes[k]]),
    limits: Object.fromEntries(given.map((k) => [LIMIT_NAMES[k], o.limits[k]])),
  };
}

// options.externalData as [{path, data: Uint8Array}] (paths and URLs read first).
async function externalData(platform, list) {
  if (list === undefined || list === null) return [];
  if (!Array.isArray(list)) throw new OneModelError('invalid_argument', 'externalData must be an array of {path, data} or path strings');
  const out = [];
  for (const file of list) {
    const path = typeof file === 'string' ? file : file?.path;
    const data = typeof file === 'string' ? file : file?.data;
    if (typeof path !== 'string' || !path) {
      throw new OneModelError('invalid_argument', `externalData entries are {path, data} or path strings, not ${JSON.stringify(file)}`);
    }
    let bytes;
    if (typeof data === 'string') bytes = await platform.readModel(platform.localPath?.(data) ?? data);
    else if (data instanceof Uint8Array) bytes = data;
    else if (ArrayBuffer.isView(data)) bytes = new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
    else if (data instanceof ArrayBuffer || (typeof SharedArrayBuffer !== 'undefined' && data instanceof SharedArrayBuffer)) bytes = new Uint8Array(data);
    else if (typeof Blob !== 'undefined' && data instanceof Blob) bytes = new Uint8Array(await data.arrayBuffer());
    else throw new OneModelError('invalid_argument', `externalData '${path}': data must be a Uint8Array, ArrayBuffer, Blob, path or URL`);
    out.push({ path, data: bytes });
  }
  return out;
}

// A backend of onnxruntime-common over the addon. platform: readModel and localPath, as
// js/index.node.mjs gives the wasm backend.
export function createNativeBackend(ort, addon, platform) {
  class Handler extends ProfilingHandler {
    constructor(session, profiling, name) {
      super();
      this.onemodelEngine = 'native';  // which engine holds the session (tests and tools check it)
      this.session = session;
      this.name = name;
      this.profiling = profiling;
      this.collecting = false;
      const ins = session.inputs();
      const outs = session.outputs();
      this.inputNames = ins.map((v) => v.name);
      this.outputNames = outs.map((v) => v.name);
      this.inputMetadata = ins.map(metadata);
      this.outputMetadata = outs.map(metadata);
      this.inputIndex = new Set(this.inputNames);
    }

    // Runs on a worker thread: the event loop stays free; concurrent runs of one session
    // run at once (the engine's sessions take concurrent runs).
    async run(feeds, fetches, options) {
      if (!this.session) throw new OneModelError('invalid_argument', 'the session was released');
      const timeLimit = runTimeLimit(options ?? {});
      // Feeds the model does not name are ignored, as onnxruntime-node ignores them.
      const inputs = toAddon(Object.entries(feeds).filter(([name]) => this.inputIndex.has(name)), 'feed');
      const names = Object.keys(fetches);
      const all = names.length === this.outputNames.length;
      const results = await this.session.run(inputs, all ? null : names, timeLimit).catch(rethrow);
      if (this.collecting) { const p = this.session.lastProfile(); if (p) console.log(p.trimEnd()); }
      const order = all ? this.outputNames : names;
      const out = {};
      results.forEach((r, k) => {
        const bytes = r.data ? new Uint8Array(r.data) : null;
        out[order[k]] = outputTensor(ort, fetches, order[k], r.elementType, r.dims, bytes, r.strings ?? null);
      });
      return out;
    }

    async dispose() {
      this.session?.release();  // a run under way keeps the engine's session until it ends
      this.session = null;
    }

  }

  return {
    engine: 'native',
    async init() {},
    async wasmMemory() {
      throw new OneModelError('invalid_argument', 'wasmMemory: this process runs the native engine, which has no wasm memory');
    },
    async goldenHash(values) {
      const list = values instanceof ort.Tensor ? [values] : Array.isArray(values) ? values : Object.values(values ?? {});
      try {
        return addon.goldenHash(toAddon(list.map((t, k) => [String(k), t]), 'tensor'));
      } catch (e) {
        return rethrow(e);
      }
    },
    async createInferenceSessionHandler(uriOrBuffer, options = {}) {
      const profiling = !!options.enableProfiling;
      const isPath = typeof uriOrBuffer === 'string';
      const name = isPath ? uriOrBuffer : '<bytes>';
      const opts = addonOptions(options, name, profiling);
      // A local path loads by path, so the model keeps its folder (external data beside it).
      const localPath = isPath ? platform.localPath(uriOrBuffer) : null;
      let source = localPath;
      if (!localPath) {
        const bytes = isPath ? await platform.readModel(uriOrBuffer, options.onProgress) : uriOrBuffer;
        source = bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes);
      }
      opts.externalData = await externalData(platform, options.externalData);
      let session;
      try {
        session = await addon.createSession(source, opts);
      } catch (e) {
        rethrow(e);
      }
      if (localPath && options.onProgress) options.onProgress(platform.fileSize(localPath), platform.fileSize(localPath));
      return new Handler(session, profiling, name);
    },
  };
}
