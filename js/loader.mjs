// Loads the OneModel wasm module: the SIMD128 build where the engine validates SIMD,
// else the scalar build (or as forced by `simd`). Node: reads the .wasm with fs and
// passes it in (Emscripten's fetch() path fails under Node 20); browsers: fetches it.
import { simdSupported } from './simd.mjs';
import { createRequire } from 'node:module';
import { readFileSync, existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';

const here = dirname(fileURLToPath(import.meta.url));

export { simdSupported };

// Returns the folder holding onemodel-{simd,scalar}.{js,wasm}: `prefix` (env.wasm.wasmPaths),
// ONEMODEL_WASM_DIR, the repo's build/wasm (fresher than a dist/ packed from it), or the
// package's dist/.
export function wasmDir(prefix) {
  const candidates = [prefix, process.env.ONEMODEL_WASM_DIR, join(here, '..', 'build', 'wasm'), join(here, '..', 'dist')];
  for (const c of candidates) {
    if (c && existsSync(join(c, 'onemodel-scalar.js'))) return c;
  }
  throw new Error('onemodel: wasm build not found; run tools/build.sh wasm (or set ONEMODEL_WASM_DIR)');
}

// simd: 'on' | 'off' | 'detect'; wasmPaths: the folder of the .js/.wasm files; wasmBinary:
// the chosen flavour's .wasm bytes (then not read from disk). Returns { module, flavour }.
export async function loadOneModel({ simd = 'detect', wasmPaths, wasmBinary: given } = {}) {
  if (!['on', 'off', 'detect'].includes(simd)) {
    throw new Error(`onemodel: --simd takes on, off or detect, not '${simd}'`);
  }
  const useSimd = simd === 'on' || (simd === 'detect' && simdSupported());
  if (simd === 'on' && !simdSupported()) {
    throw new Error('onemodel: --simd on, but this engine does not validate wasm SIMD128');
  }
  const flavour = useSimd ? 'simd' : 'scalar';
  const dir = wasmDir(typeof wasmPaths === 'string' ? wasmPaths : wasmPaths?.wasm && dirname(wasmPaths.wasm));
  const require = createRequire(import.meta.url);
  const factory = require(join(dir, `onemodel-${flavour}.js`));
  const wasmBinary = given ? new Uint8Array(given) : readFileSync(join(dir, `onemodel-${flavour}.wasm`));
  // ONEMODEL_* variables reach the module's getenv as natively (ONEMODEL_PROFILE, ...).
  const preRun = [(m) => {
    for (const [k, v] of Object.entries(process.env)) if (k.startsWith('ONEMODEL_') && m.ENV) m.ENV[k] = v;
  }];
  const module = await factory({ wasmBinary, preRun });
  return { module, flavour };
}

// The module for onnxruntime-common's env.wasm: simd false -> the scalar build, true ->
// SIMD128 (an error where the engine lacks it), unset -> detect; wasmPaths, wasmBinary
// as onnxruntime-web takes them (numThreads and proxy do not apply in node).
export async function loadModuleForEnv(envWasm = {}) {
  const simd = envWasm.simd === false ? 'off' : envWasm.simd === undefined ? 'detect' : 'on';
  const { module } = await loadOneModel({ simd, wasmPaths: envWasm.wasmPaths, wasmBinary: envWasm.wasmBinary });
  return module;
}
