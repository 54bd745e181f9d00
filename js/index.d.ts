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

/** The wasm memory malloc has handed out (inUse) and the memory's size, in bytes. */
export declare function wasmMemory(): Promise<{ inUse: number; heapSize: number }>;

declare const _default: typeof ort;
export default _default;
