// Types of the 'onemodel' package: onnxruntime-common's API (InferenceSession, Tensor,
// env, ...) plus OneModel's own exports.
export * from 'onnxruntime-common';
import * as ort from 'onnxruntime-common';

/** Every OneModel failure: `code` is the engine's error name ('invalid_model', 'shape_mismatch', ...). */
export declare class OneModelError extends Error {
  readonly code: string;
  constructor(code: string, message: string);
}

/** The exact-mode golden hash (64 hex digits) of a Tensor, an array of Tensors, or a run's result object. */
export declare function goldenHash(values: ort.Tensor | readonly ort.Tensor[] | { readonly [name: string]: ort.Tensor }): Promise<string>;

/**
 * The engine the next session gets in node (`env.onemodel.engine`, else ONEMODEL_ENGINE,
 * else 'auto': the native addon where it loads): where it was loaded from and its ISA, or
 * why the wasm build runs. Browsers always run the wasm build.
 */
export declare function engineInfo():
  | { engine: 'native'; path: string; target: string }
  | { engine: 'wasm'; reason: string; /** the wasm module's threads (env.wasm.numThreads; 1 without shared memory) */ threads: number };

/** The wasm engine's memory malloc has handed out (inUse) and the memory's size, in bytes. */
export declare function wasmMemory(): Promise<{ inUse: number; heapSize: number }>;

declare module 'onnxruntime-common' {
  namespace Env {
    /** OneModel's settings on `env`: in node, the engine new sessions run on. */
    interface OneModelFlags {
      engine?: 'auto' | 'native' | 'wasm';
    }
  }
  namespace Env {
    interface WebAssemblyFlags {
      /** OneModel's own: false keeps the SIMD128 flavour where the engine validates relaxed
       * SIMD (else, at one thread, the SIMD128 + relaxed SIMD one: fast mode's fused
       * multiply-adds; exact mode's bits are the same on both). */
      relaxedSimd?: boolean;
    }
  }
  interface Env {
    onemodel: Env.OneModelFlags;
  }
}

declare const _default: typeof ort;
export default _default;
