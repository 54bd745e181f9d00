// The onnxruntime-web shaped API over the wasm module: a backend for onnxruntime-common
// (registerBackend), whose InferenceSession, Tensor and env are the package's exports.
// Environment-agnostic: the node and browser entries pass a platform with
//   loadModule(envWasm) -> Promise<Emscripten module>
//   readModel(uri, onProgress) -> Promise<Uint8Array>
// and under node also
//   localPath(uri) -> a file path for a local model or file (null for an http(s) URL),
//   fileSize(path) -> bytes, readFileInto(m, path, what) -> {ptr, size} (malloc'ed)
// docs/js-api.md has the whole API and what differs from onnxruntime-web.

// ONNX element type numbers <-> onnxruntime-common's tensor type names.
export const TYPE_NAMES = {
  1: 'float32', 2: 'uint8', 3: 'int8', 4: 'uint16', 5: 'int16', 6: 'int32', 7: 'int64', 8: 'string',
  9: 'bool', 10: 'float16', 11: 'float64', 12: 'uint32', 13: 'uint64', 21: 'uint4', 22: 'int4',
};
const TYPE_NUMBERS = Object.fromEntries(Object.entries(TYPE_NAMES).map(([k, v]) => [v, Number(k)]));
const ONNX_NAMES = {
  14: 'COMPLEX64', 15: 'COMPLEX128', 16: 'BFLOAT16', 17: 'FLOAT8E4M3FN', 18: 'FLOAT8E4M3FNUZ', 19: 'FLOAT8E5M2',
  20: 'FLOAT8E5M2FNUZ', 23: 'FLOAT4E2M1', 24: 'FLOAT8E8M0', 25: 'UINT2', 26: 'INT2',
};
// The typed array onnxruntime-common uses for each type's data (int4 and uint4: two
// elements a byte, the first in the low nibble, as ONNX packs them; float16 becomes a
// Float16Array in onnxruntime-common's Tensor where the JS engine has one).
const ARRAYS = {
  float32: Float32Array, uint8: Uint8Array, int8: Int8Array, uint16: Uint16Array, int16: Int16Array,
  int32: Int32Array, int64: BigInt64Array, bool: Uint8Array, float16: Uint16Array, float64: Float64Array,
  uint32: Uint32Array, uint64: BigUint64Array, int4: Uint8Array, uint4: Uint8Array,
};
const NIBBLES = new Set(['int4', 'uint4']);

// The engine holds int4 / uint4 one element a byte: unpacks count elements of packed
// (sign-extended for int4) into out.
export function unpackNibbles(packed, count, signed, out) {
  if (packed.byteLength < Math.ceil(count / 2)) {
    throw new OneModelError('invalid_argument', `${count} 4-bit elements need ${Math.ceil(count / 2)} bytes, the data has ${packed.byteLength}`);
  }
  for (let i = 0; i < count; ++i) {
    const v = (packed[i >> 1] >> ((i & 1) * 4)) & 15;
    out[i] = signed && v > 7 ? v + 240 : v;  // the int8 bit pattern of v - 16
  }
}

// The reverse: count one-a-byte elements into a new packed Uint8Array.
export function packNibbles(bytes, count) {
  const out = new Uint8Array(Math.ceil(count / 2));
  for (let i = 0; i < count; ++i) out[i >> 1] |= (bytes[i] & 15) << ((i & 1) * 4);
  return out;
}

// Every failure: an Error whose `code` is the engine's error name ('invalid_model',
// 'shape_mismatch', ...) and whose message says what was wrong.
export class OneModelError extends Error {
  constructor(code, message) {
    super(`${code}: ${message}`);
    this.name = 'OneModelError';
    this.code = code;
  }
}

export function typeName(elementType, what) {
  const t = TYPE_NAMES[elementType];
  if (!t) {
    throw new OneModelError('type_mismatch',
      `${what} is ${ONNX_NAMES[elementType] ?? `element type ${elementType}`}, which onnxruntime-common's Tensor has no type for`);
  }
  return t;
}

export function metadata(info) {
  if (!info.isTensor) return { name: info.name, isTensor: false };
  // Symbolic dimensions are their names; a dimension neither fixed nor named is ''.
  return {
    name: info.name,
    isTensor: true,
    type: TYPE_NAMES[info.elementType] ?? (ONNX_NAMES[info.elementType] ?? 'undefined').toLowerCase(),
    shape: info.hasShape ? info.shape.slice() : [],
  };
}

function check(result) {
  if (result && result.error) throw new OneModelError(result.error.code, result.error.message);
  return result;
}

// The session options OneModel reads; everything else of SessionOptions is accepted and
// ignored (docs/js-api.md lists which).
export function sessionOptions(options, name, profiling) {
  const mode = options.mode ?? 'exact';
  if (mode !== 'exact' && mode !== 'fast') throw new OneModelError('invalid_argument', `mode takes 'exact' or 'fast', not '${mode}'`);
  const dims = options.freeDimensionOverrides ?? {};
  const names = Object.keys(dims);
  for (const k of names) {
    if (!Number.isSafeInteger(dims[k]) || dims[k] < 0) {
      throw new OneModelError('invalid_argument', `freeDimensionOverrides['${k}'] must be a whole number >= 0, not ${dims[k]}`);
    }
  }
  // extra.onemodel.limits: SessionOptions' max_* (docs/reliability.md); each a whole
  // number >= 0 (0: off), the defaults for those not given.
  const given = options.extra?.onemodel?.limits ?? {};
  const limits = { maxModelBytes: 4 * 2 ** 30, maxTensorBytes: 4 * 2 ** 30 - 1, maxSessionBytes: 0, maxGraphDepth: 32, maxNodes: 4000000 };
  for (const [k, v] of Object.entries(given)) {
    if (!(k in limits)) throw new OneModelError('invalid_argument', `unknown limit '${k}' (limits: ${Object.keys(limits).join(', ')})`);
    if (!Number.isSafeInteger(v) || v < 0) throw new OneModelError('invalid_argument', `limit ${k} must be a whole number >= 0, not ${v}`);
    limits[k] = v;
  }
  if (limits.maxGraphDepth > 2 ** 31 - 1) throw new OneModelError('invalid_argument', `limit maxGraphDepth is at most ${2 ** 31 - 1}`);
  return {
    mode, name, profiling, isa: options.extra?.onemodel?.isa ?? '',
    freeDimensionNames: names, freeDimensionSizes: names.map((k) => dims[k]),
    limits,
  };
}

// A run's options: onnxruntime-common's `terminate` (true: the run does not start, a
// 'cancelled' error) and OneModel's extra.onemodel.timeLimitMs (> 0: the run stops with a
// 'cancelled' error once it has taken that long; a Loop or Scan is stopped between
// iterations).
export function runTimeLimit(options) {
  if (options.terminate) throw new OneModelError('cancelled', 'the run was terminated (RunOptions.terminate) before it started');
  const ms = options.extra?.onemodel?.timeLimitMs ?? 0;
  if (typeof ms !== 'number' || !(ms >= 0)) throw new OneModelError('invalid_argument', `timeLimitMs must be a number >= 0, not ${ms}`);
  return ms;
}

// A feed's element type number and dims, or a typed error saying why it cannot be fed.
export function feedInfo(name, t, what) {
  if (!t || typeof t !== 'object' || !('type' in t) || !('dims' in t)) {
    throw new OneModelError('invalid_argument', `${what} '${name}' is not a Tensor`);
  }
  if (t.location !== undefined && t.location !== 'cpu' && t.location !== 'cpu-pinned') {
    throw new OneModelError('invalid_argument', `${what} '${name}' is on '${t.location}': OneModel reads tensors on the CPU`);
  }
  const elementType = TYPE_NUMBERS[t.type];
  if (elementType === undefined) throw new OneModelError('type_mismatch', `${what} '${name}' has type '${t.type}', which OneModel does not take`);
  return { elementType, dims: Array.from(t.dims, Number) };
}

// An output as onnxruntime-common's Tensor: `bytes` (a Uint8Array of the engine's
// elements, one a byte for int4/uint4) or `strings`; a pre-allocated fetches[name] is
// filled in place.
export function outputTensor(ort, fetches, name, elementType, dims, bytes, strings) {
  const type = typeName(elementType, `output '${name}'`);
  const data = type === 'string' ? strings
    : NIBBLES.has(type) ? packNibbles(bytes, bytes.byteLength)
      : new ARRAYS[type](bytes.buffer, bytes.byteOffset, bytes.byteLength / ARRAYS[type].BYTES_PER_ELEMENT);
  const given = fetches[name];
  if (!given) return new ort.Tensor(type, data, dims);
  if (given.type !== type || given.dims.length !== dims.length || given.dims.some((d, j) => d !== dims[j])) {
    throw new OneModelError('shape_mismatch', `fetches['${name}'] is ${given.type}[${given.dims}], the output is ${type}[${dims}]`);
  }
  given.data.set(data);
  return given;
}

// Copies tensors into wasm memory for the bindings: [{name, elementType, dims, ptr,
// bytes}] (strings as {strings}); the caller frees `allocated` with m._free.
function toWasm(m, entries, what) {
  const inputs = [];
  const allocated = [];
  try {
    for (const [name, t] of entries) {
      const { elementType, dims } = feedInfo(name, t, what);
      if (t.type === 'string') {
        inputs.push({ name, elementType, dims, strings: Array.from(t.data, String) });
        continue;
      }
      const data = t.data;
      const nibbles = NIBBLES.has(t.type);
      const count = dims.reduce((a, b) => a * b, 1);
      const bytes = nibbles ? count : data.byteLength;
      const ptr = m._malloc(Math.max(bytes, 1)) >>> 0;
      if (!ptr) throw new OneModelError('out_of_memory', `out of wasm memory for ${what} '${name}' (${bytes} bytes)`);
      allocated.push(ptr);
      const raw = new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
      if (nibbles) unpackNibbles(raw, count, t.type === 'int4', heapU8(m).subarray(ptr, ptr + bytes));
      else heapU8(m).set(raw, ptr);
      inputs.push({ name, elementType, dims, ptr, bytes });
    }
  } catch (e) {
    for (const p of allocated) m._free(p);
    throw e;
  }
  return { inputs, allocated };
}

// What both engines' session handlers share: startProfiling / endProfiling set
// `collecting` (each run then logs its profile; `profiling` says the session has one).
export class ProfilingHandler {
  startProfiling() {
    if (!this.profiling) console.warn('onemodel: startProfiling: create the session with enableProfiling: true');
    this.collecting = true;
  }

  endProfiling() {
    this.collecting = false;
  }
}

export function createBackend(ort, platform) {
  let modulePromise = null;
  let loaded = null;  // the module, once loaded
  let live = 0;  // sessions not released
  const loadModule = () => {
    modulePromise ??= platform.loadModule(ort.env.wasm ?? {}).then((m) => (loaded = m), (e) => {
      modulePromise = null;  // a later call may try again (another wasmPaths, ...)
      throw e;
    });
    return modulePromise;
  };

  class Handler extends ProfilingHandler {
    constructor(module, session, profiling, name) {
      super();
      this.onemodelEngine = 'wasm';  // which engine holds the session (tests and tools check it)
      this.module = module;
      this.name = name;
      this.session = session;
      this.profiling = profiling;
      this.collecting = false;
      this.descPtr = 0;
      this.descWords = 0;
      const ins = session.inputs();
      const outs = session.outputs();
      this.inputNames = ins.map((v) => v.name);
      this.outputNames = outs.map((v) => v.name);
      this.inputMetadata = ins.map(metadata);
      this.inputIndex = new Map(this.inputNames.map((n, k) => [n, k]));
      this.outputMetadata = outs.map(metadata);
    }

    // Concurrent calls on one session never fail: each run is synchronous from the
    // start of runNow to its end, so calls run to completion one after another, in
    // call order.
    async run(feeds, fetches, options) {
      return this.runNow(feeds, fetches, options ?? {});
    }

    // The wasm memory for the run descriptor (doubles), grown as needed, kept.
    descriptor(words) {
      if (words > this.descWords) {
        if (this.descPtr) this.module._free(this.descPtr);
        this.descWords = Math.max(words, 64);
        this.descPtr = this.module._malloc(this.descWords * 8) >>> 0;
        if (!this.descPtr) { this.descWords = 0; throw new OneModelError('out_of_memory', 'out of wasm memory'); }
      }
      return this.descPtr;
    }

    runNow(feeds, fetches, options = {}) {
      if (!this.session) throw new OneModelError('invalid_argument', 'the session was released');
      const timeLimit = runTimeLimit(options);
      const m = this.module;
      // Feeds the model does not name are ignored, as onnxruntime-node ignores them.
      const entries = Object.entries(feeds).filter(([name]) => this.inputIndex.has(name));
      const { inputs, allocated } = toWasm(m, entries, 'feed');
      try {
        const names = Object.keys(fetches);
        const all = names.length === this.outputNames.length;
        const desc = [inputs.length];
        let strings = null;
        for (let k = 0; k < inputs.length; ++k) {
          const t = inputs[k];
          desc.push(this.inputIndex.get(t.name), t.elementType, t.dims.length, t.ptr ?? 0, t.bytes ?? 0);
          for (const d of t.dims) desc.push(d);
          if (t.strings) (strings ??= [])[k] = t.strings;
        }
        desc.push(all ? 0 : names.length);
        if (!all) for (const n of names) desc.push(this.outputNames.indexOf(n));
        const ptr = this.descriptor(desc.length);
        heapF64(m).set(desc, ptr >>> 3);
        this.session.setTimeLimit(timeLimit);
        const outPtr = strings ? this.session.runStrings(ptr, strings) : this.session.run(ptr);
        if (!outPtr) check(this.session.lastError());
        try {
          if (this.collecting) { const p = this.session.lastProfile(); if (p) console.log(p.trimEnd()); }
          const at = outPtr >>> 3;
          const f64 = heapF64(m);
          const od = f64.subarray(at + 1, at + f64[at]);
          const out = {};
          for (let i = 0, k = 0; i < od.length; ++k) {
            const name = this.outputNames[od[i]];
            const elementType = od[i + 1], rank = od[i + 2], dataPtr = od[i + 3], bytes = od[i + 4];
            const dims = Array.from(od.subarray(i + 5, i + 5 + rank));
            i += 5 + rank;
            const strings = elementType === 8 ? this.session.outputStrings(k) : null;
            out[name] = outputTensor(ort, fetches, name, elementType, dims, strings ? null : heapU8(m).slice(dataPtr, dataPtr + bytes), strings);
          }
          return out;
        } finally {
          this.session.releaseOutputs();
        }
      } finally {
        for (const p of allocated) m._free(p);
      }
    }

    async dispose() {
      if (this.session) {
        this.session.delete();  // frees the model and its buffers in wasm memory
        this.session = null;
        // The last session gone: the activation buffers kept for reuse go too.
        if (--live === 0) this.module.releaseCachedBuffers();
      }
      if (this.descPtr) this.module._free(this.descPtr);
      this.descPtr = 0;
      this.descWords = 0;
    }

  }

  return {
    // The module loads with the first session (or goldenHash, wasmMemory): an error in
    // loading it (env.wasm.numThreads, simd, wasmPaths) then reaches the caller with its
    // code, where onnxruntime-common would fold an init() error into "no available backend".
    async init() {},
    // The loaded module's thread count (null before it is loaded).
    loadedThreads: () => (loaded ? loaded.onemodelThreads ?? 1 : null),
    // Bytes of wasm memory in use (malloc's) and the memory's size.
    async wasmMemory() {
      const m = await loadModule();
      return { inUse: m.heapInUse(), heapSize: m.heapSize() };
    },
    // The exact-mode golden hash (docs/exact-mode.md) of a Tensor, an array of Tensors, or
    // a run's result object (its tensors in key order): 64 hex digits.
    async goldenHash(values) {
      const m = await loadModule();
      const list = values instanceof ort.Tensor ? [values] : Array.isArray(values) ? values : Object.values(values ?? {});
      const { inputs, allocated } = toWasm(m, list.map((t, k) => [String(k), t]), 'tensor');
      try {
        return check(m.goldenHash(inputs)).hash;
      } finally {
        for (const p of allocated) m._free(p);
      }
    },
    async createInferenceSessionHandler(uriOrBuffer, options = {}) {
      const m = await loadModule();
      const profiling = !!options.enableProfiling;
      const isPath = typeof uriOrBuffer === 'string';
      const name = isPath ? uriOrBuffer : '<bytes>';
      const opts = sessionOptions(options, name, profiling);
      // A local path under node loads through the module's file access, so the model
      // keeps its folder (external data beside it is found there).
      const localPath = isPath && platform.localPath ? platform.localPath(uriOrBuffer) : null;
      const bytes = isPath && !localPath ? await platform.readModel(uriOrBuffer, options.onProgress) : uriOrBuffer;
      opts.externalFiles = await externalFiles(m, platform, options.externalData);
      const session = new m.Session();
      let ptr = 0;
      try {
        if (localPath) {
          const loaded = session.loadPath(localPath, opts);  // the session owns externalFiles now
          opts.externalFiles = null;
          check(loaded);
          if (options.onProgress) options.onProgress(platform.fileSize(localPath), platform.fileSize(localPath));
        } else {
          ptr = wasmAlloc(m, bytes.byteLength, 'the model');
          heapU8(m).set(bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes), ptr);
          const loaded = session.load(ptr, bytes.byteLength, opts);  // the session owns externalFiles now
          opts.externalFiles = null;
          check(loaded);
        }
      } catch (e) {
        session.delete();
        for (const f of opts.externalFiles ?? []) m._free(f.ptr);
        throw e;
      } finally {
        if (ptr) m._free(ptr);
      }
      ++live;
      return new Handler(m, session, profiling, name);
    },
  };
}

// SessionOptions.externalData (onnxruntime-common's ExternalDataFileType[]: {path, data}
// or a path string standing for both) into wasm memory: [{path, ptr, size}], malloc'ed
// buffers the session takes over (its weights point into them: no second copy). `data`:
// a Uint8Array, ArrayBuffer, Blob, or a string: a file path under node (read straight
// into wasm memory), else a URL (fetched).
async function externalFiles(m, platform, list) {
  if (list === undefined || list === null) return [];
  if (!Array.isArray(list)) throw new OneModelError('invalid_argument', 'externalData must be an array of {path, data} or path strings');
  const out = [];
  try {
    for (const file of list) {
      const path = typeof file === 'string' ? file : file?.path;
      const data = typeof file === 'string' ? file : file?.data;
      if (typeof path !== 'string' || !path) {
        throw new OneModelError('invalid_argument', `externalData entries are {path, data} or path strings, not ${JSON.stringify(file)}`);
      }
      if (typeof data === 'string' && platform.readFileInto && platform.localPath?.(data)) {
        out.push({ path, ...platform.readFileInto(m, platform.localPath(data), `externalData '${path}'`) });
        continue;
      }
      let bytes;
      if (typeof data === 'string') bytes = await platform.readModel(data);
      else if (data instanceof Uint8Array) bytes = data;
      else if (ArrayBuffer.isView(data)) bytes = new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
      else if (data instanceof ArrayBuffer || (typeof SharedArrayBuffer !== 'undefined' && data instanceof SharedArrayBuffer)) bytes = new Uint8Array(data);
      else if (typeof Blob !== 'undefined' && data instanceof Blob) bytes = new Uint8Array(await data.arrayBuffer());
      else throw new OneModelError('invalid_argument', `externalData '${path}': data must be a Uint8Array, ArrayBuffer, Blob, path or URL`);
      const ptr = wasmAlloc(m, bytes.byteLength, `externalData '${path}'`);
      heapU8(m).set(bytes, ptr);
      out.push({ path, ptr, size: bytes.byteLength });
    }
  } catch (e) {
    for (const f of out) m._free(f.ptr);
    throw e;
  }
  return out;
}

// The module's memory views, current: in the threaded flavour (shared memory) a worker
// thread's malloc may grow the memory, and the module's HEAP* views then still cover the
// old size until refreshed here.
export function heapU8(m) {
  const mem = m.wasmMemory;
  if (mem && m.HEAPU8.buffer !== mem.buffer) {
    m.HEAPU8 = new Uint8Array(mem.buffer);
    m.HEAPF64 = new Float64Array(mem.buffer);
  }
  return m.HEAPU8;
}
export const heapF64 = (m) => (heapU8(m), m.HEAPF64);

// malloc in wasm memory, or an out_of_memory error saying how much there is. malloc grows
// its free top in one signed 32-bit step, so a request that needs more than 2 GiB of new
// memory at once fails with the memory to spare, and a failed growth leaves it unable to
// grow past there again: above 1 GiB the top is grown first in 1 GiB steps (malloc, free).
export function wasmAlloc(m, bytes, what) {
  let ptr = 0;
  if (bytes <= 2 ** 32 - 2 ** 16) {
    let grown = true;
    for (let step = 2 ** 30; grown && step < bytes; step += 2 ** 30) {
      const p = m._malloc(step) >>> 0;
      if (p) m._free(p);
      grown = p !== 0;
    }
    if (grown) ptr = m._malloc(Math.max(bytes, 1)) >>> 0;
  }
  if (!ptr) {
    throw new OneModelError('out_of_memory', `${what} (${bytes} bytes) does not fit in wasm memory: ${m.heapInUse()} ` +
      `of its ${m.heapSize()} bytes are in use, and a wasm32 memory holds at most 4 GiB`);
  }
  return ptr;
}

// Registers OneModel with onnxruntime-common (platform.backend, when given, is the
// backend; else the wasm backend over platform): as 'onemodel' (chosen when no
// executionProviders are given), and as 'wasm', 'cpu' and 'webgpu', the names
// onnxruntime-web and -node code passes (transformers.js's device 'webgpu' included: it
// runs on OneModel's CPU engine), unless another backend holds those names already. `proxy` (the
// browser's, js/proxy.mjs) serves the sessions created while env.wasm.proxy is true.
export function registerOneModel(ort, platform, version, proxy = null) {
  const direct = platform.backend ?? createBackend(ort, platform);
  const proxied = () => proxy && ort.env.wasm?.proxy === true;
  const backend = {
    init: async () => { if (!proxied()) await direct.init(); },
    createInferenceSessionHandler: (uriOrBuffer, options) =>
      (proxied() ? proxy : direct).createInferenceSessionHandler(uriOrBuffer, options),
    goldenHash: (values) => {
      if (!proxied()) return direct.goldenHash(values);
      const list = values instanceof ort.Tensor ? [values] : Array.isArray(values) ? values : Object.values(values ?? {});
      return proxy.goldenHash(list);
    },
    wasmMemory: () => direct.wasmMemory(),
  };
  ort.registerBackend('onemodel', backend, 100);
  for (const name of ['wasm', 'cpu', 'webgpu']) {
    try {
      ort.registerBackend(name, backend, 1);
    } catch {
      // another backend holds the name at this priority: keep it
    }
  }
  ort.env.versions.onemodel = version;
  tagCommonErrors(ort);
  return backend;
}

// onnxruntime-common checks a run's arguments before any backend sees them; its errors
// for a missing feed or an unknown fetch are given the `code` OneModel's errors have
// (their type and message stay onnxruntime-common's). Done once per onnxruntime-common.
const TAGGED = Symbol.for('onemodel.taggedCommonErrors');
function tagCommonErrors(ort) {
  const proto = ort.InferenceSession?.prototype;
  if (!proto || proto[TAGGED]) return;
  const run = proto.run;
  proto.run = async function (...args) {
    try {
      return await run.apply(this, args);
    } catch (e) {
      if (e instanceof Error && e.code === undefined) {
        if (/^input '.*' is missing in 'feeds'\.$/.test(e.message)) e.code = 'missing_input';
        else if (/^'fetches' contains invalid output name/.test(e.message)) e.code = 'invalid_argument';
      }
      throw e;
    }
  };
  proto[TAGGED] = true;
}
