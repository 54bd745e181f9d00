// Browser entry of the npm package: loads the OneModel wasm module in a page and runs
// the same commands as the CLI on files the page hands over in memory.
//
//   import { loadOneModel } from 'onemodel/js/browser.mjs';
//   const om = await loadOneModel({ baseUrl: '/dist', simd: 'detect' });
//   const r = om.run(['hash', '/m/model.onnx'], new Map([['/m/model.onnx', bytes]]));
//   // r = { code, stdout, stderr }
//
// baseUrl is the folder serving onemodel-{simd,scalar,simd-threads}.{js,wasm} (build/wasm in
// the repository). The files Map (path -> Uint8Array) is the module's whole file system
// for that call; paths are any strings the command names.
import { simdSupported, relaxedSimdSupported, chooseFlavour } from './simd.mjs';

export { simdSupported, relaxedSimdSupported };

function loadScript(url) {
  return new Promise((resolve, reject) => {
    const s = document.createElement('script');
    s.src = url;
    s.onload = resolve;
    s.onerror = () => reject(new Error(`onemodel: cannot load ${url}`));
    document.head.appendChild(s);
  });
}

// simd: 'on' | 'off' | 'detect'; threads: above 1, the SIMD128 + threads flavour with
// threads - 1 Web Workers (the page must be cross-origin isolated); relaxed: 'detect' (at one
// thread, the SIMD128 + relaxed SIMD flavour where the browser validates it) or 'off'.
// Returns { flavour, threads, module, run(args, files) }.
export async function loadOneModel({ baseUrl = '.', simd = 'detect', threads = 1, relaxed = 'detect' } = {}) {
  if (!['off', 'detect'].includes(relaxed)) throw new Error(`onemodel: relaxed takes off or detect, not '${relaxed}'`);
  if (!['on', 'off', 'detect'].includes(simd)) throw new Error(`onemodel: simd takes on, off or detect, not '${simd}'`);
  if (simd === 'on' && !simdSupported()) throw new Error('onemodel: simd on, but this browser does not validate wasm SIMD128');
  if (!Number.isInteger(threads) || threads < 1) throw new Error(`onemodel: threads must be a whole number >= 1, not ${threads}`);
  const useSimd = simd === 'on' || (simd === 'detect' && simdSupported());
  if (threads > 1 && !(useSimd && globalThis.crossOriginIsolated === true)) {
    throw new Error('onemodel: wasm threads need SIMD128 and a cross-origin isolated page (COOP and COEP headers)');
  }
  const flavour = chooseFlavour({ simd: useSimd, threads, relaxed });
  const base = baseUrl.replace(/\/$/, '');
  // Every build defines the global createOneModel; load the chosen one once.
  const key = `__onemodel_${flavour}`;
  const script = new URL(`${base}/onemodel-${flavour}.js`, location.href).href;
  if (!globalThis[key]) {
    await loadScript(script);
    globalThis[key] = globalThis.createOneModel;
  }
  const resp = await fetch(`${base}/onemodel-${flavour}.wasm`);
  if (!resp.ok) throw new Error(`onemodel: cannot fetch onemodel-${flavour}.wasm (${resp.status})`);
  const options = { wasmBinary: new Uint8Array(await resp.arrayBuffer()) };
  if (threads > 1) {
    const worker = new URL(`${base}/onemodel-${flavour}.worker.js`, location.href).href;
    Object.assign(options, { onemodelWorkers: threads - 1, mainScriptUrlOrBlob: script,
      locateFile: (name, prefix) => (name.endsWith('.worker.js') ? worker : prefix + name) });
  }
  const module = await globalThis[key](options);
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
  return { flavour, threads, module, run };
}
