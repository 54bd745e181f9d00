// Whether this engine validates wasm SIMD128: the smallest module using a v128
// instruction (i32x4.splat of 0, dropped). Shared by the node loader and the browser entry.
const SIMD_PROBE = new Uint8Array([
  0, 97, 115, 109, 1, 0, 0, 0, 1, 4, 1, 96, 0, 0, 3, 2, 1, 0, 10, 9, 1, 7, 0, 65, 0, 253, 17, 26, 11,
]);

export function simdSupported() {
  try {
    return WebAssembly.validate(SIMD_PROBE);
  } catch {
    return false;
  }
}

// Whether this engine validates relaxed SIMD's f32x4.relaxed_madd (Chromium 114+, Firefox
// 120+, node 22+; node 20 with --experimental-wasm-relaxed-simd): three i32x4.splat of 0,
// the madd, dropped.
const RELAXED_PROBE = new Uint8Array([
  0, 97, 115, 109, 1, 0, 0, 0, 1, 4, 1, 96, 0, 0, 3, 2, 1, 0, 10, 20, 1, 18, 0, 65, 0, 253, 17, 65, 0, 253, 17, 65, 0,
  253, 17, 253, 133, 2, 26, 11,
]);

export function relaxedSimdSupported() {
  try {
    return WebAssembly.validate(RELAXED_PROBE);
  } catch {
    return false;
  }
}

// The flavour a module loads: threads above 1 -> 'simd-threads' (SIMD128 + pthreads); else
// with SIMD128 'simd-relaxed' where relaxed SIMD is wanted ('detect': where the engine
// validates it; 'off': never) and the build has it (`available(flavour)`), else 'simd';
// without SIMD128 'scalar'. Exact mode gives the same bits on each (the relaxed flavour's
// fused multiply-adds run only in fast mode's twins).
export function chooseFlavour({ simd, threads, relaxed = 'detect', available = () => true }) {
  if (threads > 1) return 'simd-threads';
  if (!simd) return 'scalar';
  if (relaxed !== 'off' && relaxedSimdSupported() && available('simd-relaxed')) return 'simd-relaxed';
  return 'simd';
}
