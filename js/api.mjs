// The onnxruntime-web shaped API over the wasm module: a backend for onnxruntime-common
// (registerBackend), whose InferenceSession, Tensor and env are the package's exports.
// Environment-agnostic: the node and browser entries pass a platform with
//   loadModule(envWasm) -> Promise<Emscripten module>
//   readModel(uri, onProgress) -> Promise<Uint8Array>
// docs/js-api.md has the whole API and what differs from onnxruntime-web.

// ONNX element type numbers <-> onnxruntime-common's tensor type names.
const TYPE_NAMES = {
  1: 'float32', 2: 'uint8', 3: 'int8', 4: 'uint16', 5: 'int16', 6: 'int32', 7: 'int64', 8: 'string',
  9: 'bool', 10: 'float16', 11: 'float64', 12: 'uint32', 13: 'uint64',
};
const TYPE_NUMBERS = Object.fromEntries(Object.entries(TYPE_NAMES).map(([k, v]) => [v, Number(k)]));
const ONNX_NAMES = {
  14: 'COMPLEX64', 15: 'COMPLEX128', 16: 'BFLOAT16', 17: 'FLOAT8E4M3FN', 18: 'FLOAT8E4M3FNUZ', 19: 'FLOAT8E5M2',
  20: 'FLOAT8E5M2FNUZ', 21: 'UINT4', 22: 'INT4', 23: 'FLOAT4E2M1', 24: 'FLOAT8E8M0', 25: 'UINT2', 26: 'INT2',
};
// The typed array onnxruntime-common uses for each type's data.
const ARRAYS = {
  float32: Float32Array, uint8: Uint8Array, int8: Int8Array, uint16: Uint16Array, int16: Int16Array,
  int32: Int32Array, int64: BigInt64Array, bool: Uint8Array, float16: Uint16Array, float64: Float64Array,
  uint32: Uint32Array, uint64: BigUint64Array,
};

// Every failure: an Error whose `code` is the engine's error name ('invalid_model',
// 'shape_mismatch', ...) and whose message says what was wrong.
export class OneModelError extends Error {
  constructor(code, message) {
    super(`${code}: ${message}`);
    this.name = 'OneModelError';
    this.code = code;
  }
}

function typeName(elementType, what) {
  const t = TYPE_NAMES[elementType];
  if (!t) {
    throw new OneModelError('type_mismatch',
      `${what} is ${ONNX_NAMES[elementType] ?? `element type ${elementType}`}, which onnxruntime-common's Tensor has no type for`);
  }
  return t;
}

function metadata(info) {
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
function sessionOptions(options, name, profiling) {
  const mode = options.mode ?? 'exact';
  if (mode !== 'exact' && mode !== 'fast') throw new OneModelError('invalid_argument', `mode takes 'exact' or 'fast', not '${mode}'`);
  const dims = options.freeDimensionOverrides ?? {};
  const names = Object.keys(dims);
  for (const k of names) {
    if (!Number.isSafeInteger(dims[k]) || dims[k] < 0) {
      throw new OneModelError('invalid_argument', `freeDimensionOverrides['${k}'] must be a whole number >= 0, not ${dims[k]}`);
    }
  }
  return {
    mode, name, profiling, isa: options.extra?.onemodel?.isa ?? '',
    freeDimensionNames: names, freeDimensionSizes: names.map((k) => dims[k]),
  };
}

// Copies tensors into wasm memory for the bindings: [{name, elementType, dims, ptr,
// bytes}] (strings as {strings}); the caller frees `allocated` with m._free.
function toWasm(m, entries, what) {
  const inputs = [];
  const allocated = [];
  try {
    for (const [name, t] of entries) {
      if (!t || typeof t !== 'object' || !('type' in t) || !('dims' in t)) {
        throw new OneModelError('invalid_argument', `${what} '${name}' is not a Tensor`);
      }
      if (t.location !== undefined && t.location !== 'cpu' && t.location !== 'cpu-pinned') {
        throw new OneModelError('invalid_argument', `${what} '${name}' is on '${t.location}': OneModel reads tensors on the CPU`);
      }
      const elementType = TYPE_NUMBERS[t.type];
      if (elementType === undefined) throw new OneModelError('type_mismatch', `${what} '${name}' has type '${t.type}', which OneModel does not take`);
      const dims = Array.from(t.dims, Number);
      if (t.type === 'string') {
        inputs.push({ name, elementType, dims, strings: Array.from(t.data, String) });
        continue;
      }
      const data = t.data;
      const bytes = data.byteLength;
      const ptr = m._malloc(Math.max(bytes, 1)) >>> 0;
      if (!ptr) throw new OneModelError('out_of_range', `out of wasm memory for ${what} '${name}' (${bytes} bytes)`);
      allocated.push(ptr);
      m.HEAPU8.set(new Uint8Array(data.buffer, data.byteOffset, bytes), ptr);
      inputs.push({ name, elementType, dims, ptr, bytes });
    }
  } catch (e) {
    for (const p of allocated) m._free(p);
    throw e;
  }
  return { inputs, allocated };
}

export function createBackend(ort, platform) {
  let modulePromise = null;
  const loadModule = () => {
    modulePromise ??= platform.loadModule(ort.env.wasm ?? {}).catch((e) => {
      modulePromise = null;  // a later call may try again (another wasmPaths, ...)
      throw e;
    });
    return modulePromise;
  };

  class Handler {
    constructor(module, session, profiling) {
      this.module = module;
      this.session = session;
      this.profiling = profiling;
      this.collecting = false;
      this.queue = Promise.resolve();
      const ins = session.inputs();
      const outs = session.outputs();
      this.inputNames = ins.map((v) => v.name);
      this.outputNames = outs.map((v) => v.name);
      this.inputMetadata = ins.map(metadata);
      this.outputMetadata = outs.map(metadata);
    }

    // Runs are queued: concurrent calls on one session take turns, never fail.
    run(feeds, fetches, options) {
      const p = this.queue.then(() => this.runNow(feeds, fetches, options ?? {}));
      this.queue = p.catch(() => {});
      return p;
    }

    runNow(feeds, fetches) {
      if (!this.session) throw new OneModelError('invalid_argument', 'the session was released');
      const m = this.module;
      const { inputs, allocated } = toWasm(m, Object.entries(feeds), 'feed');
      try {
        const names = Object.keys(fetches);
        const r = check(this.session.run(inputs, names.length === this.outputNames.length ? [] : names));
        if (this.collecting && r.profile) console.log(r.profile.trimEnd());
        const out = {};
        for (const o of r.outputs) {
          const type = typeName(o.elementType, `output '${o.name}'`);
          const data = type === 'string' ? o.strings : new ARRAYS[type](o.bytes.buffer, 0, o.bytes.byteLength / ARRAYS[type].BYTES_PER_ELEMENT);
          const given = fetches[o.name];
          if (given) {  // a pre-allocated output tensor: filled in place
            if (given.type !== type || given.dims.length !== o.dims.length || given.dims.some((d, k) => d !== o.dims[k])) {
              throw new OneModelError('shape_mismatch', `fetches['${o.name}'] is ${given.type}[${given.dims}], the output is ${type}[${o.dims}]`);
            }
            given.data.set(data);
            out[o.name] = given;
          } else {
            out[o.name] = new ort.Tensor(type, data, o.dims);
          }
        }
        return out;
      } finally {
        for (const p of allocated) m._free(p);
      }
    }

    async dispose() {
      await this.queue;
      if (this.session) {
        this.session.delete();  // frees the model and its buffers in wasm memory
        this.session = null;
      }
    }

    startProfiling() {
      if (!this.profiling) console.warn('onemodel: startProfiling: create the session with enableProfiling: true');
      this.collecting = true;
    }

    endProfiling() {
      this.collecting = false;
    }
  }

  return {
    async init() {
      await loadModule();
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
      let bytes = uriOrBuffer;
      let name = '<bytes>';
      if (typeof uriOrBuffer === 'string') {
        name = uriOrBuffer;
        bytes = await platform.readModel(uriOrBuffer, options.onProgress);
      }
      const profiling = !!options.enableProfiling;
      const opts = sessionOptions(options, name, profiling);
      const ptr = m._malloc(Math.max(bytes.byteLength, 1)) >>> 0;
      if (!ptr) throw new OneModelError('out_of_range', `out of wasm memory for the model (${bytes.byteLength} bytes)`);
      const session = new m.Session();
      try {
        m.HEAPU8.set(bytes, ptr);
        check(session.load(ptr, bytes.byteLength, opts));
      } catch (e) {
        session.delete();
        throw e;
      } finally {
        m._free(ptr);
      }
      return new Handler(m, session, profiling);
    },
  };
}

// Registers OneModel with onnxruntime-common: as 'onemodel' (chosen when no
// executionProviders are given), and as 'wasm' and 'cpu', the names onnxruntime-web and
// -node code passes, unless another backend holds those names already.
export function registerOneModel(ort, platform, version) {
  const backend = createBackend(ort, platform);
  ort.registerBackend('onemodel', backend, 100);
  for (const name of ['wasm', 'cpu']) {
    try {
      ort.registerBackend(name, backend, 1);
    } catch {
      // another backend holds the name at this priority: keep it
    }
  }
  ort.env.versions.onemodel = version;
  return backend;
}
