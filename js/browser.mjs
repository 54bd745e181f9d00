// Browser entry of the npm package: loads the OneModel wasm module in a page and runs
// the same commands as the CLI on files the page hands over in memory.
//
//   import { loadOneModel } from 'onemodel/js/browser.mjs';
//   const om = await loadOneModel({ baseUrl: '/dist', simd: 'detect' });
//   const r = om.run(['hash', '/m/model.onnx'], new Map([['/m/model.onnx', bytes]]));
//   // r = { code, stdout, stderr }
//
// baseUrl is the folder serving onemodel-{simd,scalar}.{js,wasm} (build/wasm in the
// repository). The files Map (path -> Uint8Array) is the module's whole file system
// for that call; paths are any strings the command names.
import { simdSupported } from './simd.mjs';

export { simdSupported };

function loadScript(url) {
  return new Promise((resolve, reject) => {
    const s = document.createElement('script');
    s.src = url;
    s.onload = resolve;
    s.onerror = () => reject(new Error(`onemodel: cannot load ${url}`));
    document.head.appendChild(s);
  });
}

// simd: 'on' | 'off' | 'detect'. Returns { flavour, module, run(args, files) }.
export async function loadOneModel({ baseUrl = '.', simd = 'detect' } = {}) {
  if (!['on', 'off', 'detect'].includes(simd)) throw new Error(`onemodel: simd takes on, off or detect, not '${simd}'`);
  if (simd === 'on' && !simdSupported()) throw new Error('onemodel: simd on, but this browser does not validate wasm SIMD128');
  const flavour = simd === 'on' || (simd === 'detect' && simdSupported()) ? 'simd' : 'scalar';
  const base = baseUrl.replace(/\/$/, '');
  // Both builds define the global createOneModel; load the chosen one once.
  const key = `__onemodel_${flavour}`;
  if (!globalThis[key]) {
    await loadScript(`${base}/onemodel-${flavour}.js`);
    globalThis[key] = globalThis.createOneModel;
  }
  const resp = await fetch(`${base}/onemodel-${flavour}.wasm`);
  if (!resp.ok) throw new Error(`onemodel: cannot fetch onemodel-${flavour}.wasm (${resp.status})`);
  const module = await globalThis[key]({ wasmBinary: new Uint8Array(await resp.arrayBuffer()) });
  const run = (args, files = new Map()) => {
    module.onemodelFiles = files;
    const v = new module.StringVector();
    try {
      for (const a of args) v.push_back(a);
      const r = module.runCli(v);
      return { code: r.code, stdout: r.stdout, stderr: r.stderr };
    } finally {
      v.delete();
      module.onemodelFiles = null;
    }
  };
  return { flavour, module, run };
}
