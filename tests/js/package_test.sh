#!/usr/bin/env bash
# The packed npm package, installed into an empty folder (not the repository tree): ESM
# import and CommonJS require of 'onemodel' run a committed golden graph and print its
# committed hash; onnxruntime-common's Tensor passes instanceof; the bin runs. One line
# per check, then `N passed, N failed`.  Usage: tests/js/package_test.sh TARBALL
set -u
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
TARBALL="$(realpath "${1:?usage: tests/js/package_test.sh TARBALL (from tools/pack.sh)}")"
P=0; F=0
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
check() {  # name, command...
  local name="$1"; shift
  if "$@" >"$WORK/check.log" 2>&1; then echo "ok   $name"; P=$((P + 1)); else echo "FAIL $name"; sed 's/^/    /' "$WORK/check.log" | tail -15; F=$((F + 1)); fi
}
WANT=$(awk '$1 == "conv_net/probs" {print $2}' "$ROOT/testdata/graphs/golden-exact.txt")
cp "$ROOT/testdata/graphs/conv_net.onnx" "$WORK/"
cd "$WORK"
check "npm install of the tarball into an empty folder (no build step)" bash -c "npm init -y >/dev/null && npm install --no-audit --no-fund --ignore-scripts '$TARBALL'"
check "the package has the four wasm builds, the CommonJS entry and the types" bash -c "
  for f in dist/onemodel-simd.wasm dist/onemodel-scalar.wasm dist/onemodel-simd-threads.wasm dist/onemodel-simd-threads.worker.js dist/onemodel-simd-relaxed.wasm dist/onemodel-simd-relaxed.js dist/index.node.cjs js/index.node.mjs js/index.d.ts LICENSE README.md; do
    test -f node_modules/onemodel/\$f || { echo missing \$f; exit 1; }; done"
cat > esm.mjs <<'JS'
import * as ort from 'onemodel';
import { Tensor as CommonTensor } from 'onnxruntime-common';
if (process.env.WASM_THREADS) ort.env.wasm.numThreads = Number(process.env.WASM_THREADS);
const s = await ort.InferenceSession.create('conv_net.onnx', { executionProviders: ['wasm'] });
const x = new ort.Tensor('float32', new Float32Array(3 * 32 * 32).fill(0.25), [1, 3, 32, 32]);
const r = await s.run({ x });
if (!(r.probs instanceof CommonTensor)) throw new Error('not an onnxruntime-common Tensor');
console.log(await ort.goldenHash(r.probs));
JS
cat > cjs.cjs <<'JS'
const ort = require('onemodel');
const { Tensor: CommonTensor } = require('onnxruntime-common');
if (process.env.WASM_THREADS) ort.env.wasm.numThreads = Number(process.env.WASM_THREADS);
(async () => {
  const s = await ort.InferenceSession.create(require('fs').readFileSync('conv_net.onnx'));
  const x = new ort.Tensor('float32', new Float32Array(3 * 32 * 32).fill(0.25), [1, 3, 32, 32]);
  const r = await s.run({ x });
  if (!(r.probs instanceof CommonTensor)) throw new Error('not an onnxruntime-common Tensor');
  console.log(await ort.goldenHash(r.probs));
})().catch((e) => { console.error(e); process.exit(1); });
JS
check "ESM: import from 'onemodel' runs the model" node esm.mjs
check "CommonJS: require('onemodel') runs the model" node cjs.cjs
check "ESM and CommonJS give the same bits" bash -c "test \"\$(node esm.mjs)\" = \"\$(node cjs.cjs)\" && test -n \"\$(node esm.mjs)\""
PLAT=$(node -p 'process.platform + "-" + process.arch')
check "the package has the native addon for $PLAT, and node runs on it (ESM and CommonJS)" bash -c "
  test -f node_modules/onemodel/dist/prebuilds/$PLAT/onemodel.node &&
  node -e \"import('onemodel').then((m) => { const i = m.engineInfo(); if (i.engine !== 'native') throw new Error(JSON.stringify(i)); })\" &&
  node -e \"const i = require('onemodel').engineInfo(); if (i.engine !== 'native') throw new Error(JSON.stringify(i));\""
check "the native and the wasm engine give the same bits (ONEMODEL_ENGINE=wasm)" bash -c "
  test \"\$(ONEMODEL_ENGINE=wasm node esm.mjs)\" = \"\$(ONEMODEL_ENGINE=native node esm.mjs)\" && test \"\$(ONEMODEL_ENGINE=wasm node cjs.cjs)\" = \"\$(node esm.mjs)\""
check "the threaded wasm build (env.wasm.numThreads 2 and 3, ESM and CommonJS) gives the same bits" bash -c "
  for n in 2 3; do for f in esm.mjs cjs.cjs; do
    test \"\$(ONEMODEL_ENGINE=wasm WASM_THREADS=\$n node \$f)\" = \"\$(node esm.mjs)\" || { echo \"\$f at \$n threads\"; exit 1; }
  done; done &&
  ONEMODEL_ENGINE=wasm node -e \"const o = require('onemodel'); o.env.wasm.numThreads = 2; if (o.engineInfo().threads !== 2) throw new Error(JSON.stringify(o.engineInfo()));\""
check "the native CLI gives the same hash for that input" bash -c "
  /usr/bin/python3 -c \"import struct; h=\\\"{'descr': '<f4', 'fortran_order': False, 'shape': (1, 3, 32, 32), }\\\"; h=h+' '*(118-len(h))+'\\\\n'; open('x.npy','wb').write(b'\\\\x93NUMPY\\\\x01\\\\x00'+struct.pack('<H',len(h))+h.encode()+struct.pack('<3072f',*([0.25]*3072)))\" &&
  test \"\$('$ROOT/build/native/onemodel' hash conv_net.onnx --input x=x.npy | sed -n 's/^conv_net\\/probs //p')\" = \"\$(node esm.mjs)\""
check "the package's bin runs (npx onemodel version)" bash -c "npx --no-install onemodel version | grep -q '^onemodel '"
check "the committed input gives the committed hash through the installed package" bash -c "
  cp '$ROOT/testdata/graphs/conv_net.x.npy' . && npx --no-install onemodel hash conv_net.onnx --input x=conv_net.x.npy | grep -q '^conv_net/probs $WANT\$'"
# The subpaths onnxruntime-web's users import, and the opt-in global registration that
# transformers.js looks for.
cat > subpaths.mjs <<'JS'
import * as ort from 'onemodel';
import * as webgpu from 'onemodel/webgpu';
import * as wasm from 'onemodel/wasm';
import * as all from 'onemodel/all';
for (const m of [webgpu, wasm, all]) if (m.InferenceSession !== ort.InferenceSession) throw new Error('a subpath is another engine');
const s = await webgpu.InferenceSession.create('conv_net.onnx', { executionProviders: ['webgpu'] });
const x = new ort.Tensor('float32', new Float32Array(3 * 32 * 32).fill(0.25), [1, 3, 32, 32]);
console.log(await ort.goldenHash((await s.run({ x })).probs));
JS
cat > register.mjs <<'JS'
import 'onemodel/register';
import * as ort from 'onemodel';
const g = globalThis[Symbol.for('onnxruntime')];
if (!g || g.InferenceSession !== ort.InferenceSession || g.env.versions.onemodel === undefined) throw new Error('not registered');
console.log('registered');
JS
check "'onemodel/wasm', '/webgpu' and '/all' are OneModel (executionProviders ['webgpu']: the same hash)" bash -c "test \"\$(node subpaths.mjs)\" = \"\$(node esm.mjs)\""
check "import 'onemodel/register' sets globalThis[Symbol.for('onnxruntime')]" bash -c "test \"\$(node register.mjs)\" = registered"
check "npm pack at the repository without dist/ (its prepack step makes it) packs dist/ like tools/pack.sh" bash -c "
  cd '$ROOT' && rm -rf dist && npm pack --dry-run --json 2>/dev/null | grep -q '\"path\": \"dist/onemodel-simd.wasm\"' && test -f dist/index.node.cjs"
# The types: code written against onnxruntime-web's types compiles against 'onemodel'.
cat > check.mts <<'TS'
import * as ort from 'onemodel';
import { goldenHash, OneModelError, wasmMemory } from 'onemodel';
const t: ort.Tensor = new ort.Tensor('float32', new Float32Array(4), [1, 4]);
const opts: ort.InferenceSession.SessionOptions = { executionProviders: ['wasm'], freeDimensionOverrides: { batch: 1 } };
export async function main(): Promise<string> {
  const s: ort.InferenceSession = await ort.InferenceSession.create('conv_net.onnx', opts);
  const out: ort.InferenceSession.OnnxValueMapType = await s.run({ [s.inputNames[0]]: t });
  const meta: readonly ort.InferenceSession.ValueMetadata[] = s.inputMetadata;
  const m: { inUse: number } = await wasmMemory();
  ort.env.wasm.simd = true;
  ort.env.wasm.relaxedSimd = false;
  const e: Error = new OneModelError('io', 'x');
  return (await goldenHash(out)) + meta.length + m.inUse + e.message + ort.env.versions.common;
}
TS
check "the types: onnxruntime-web-style code type-checks against 'onemodel' (tsc --strict)" \
  "$ROOT/node_modules/.bin/tsc" --noEmit --strict --module nodenext --moduleResolution nodenext --target es2022 --skipLibCheck false check.mts

# In a browser: the installed package under a bundler (esbuild resolves 'onemodel' by the
# "browser" condition) and the plain-module build from a <script type="module">.
cat > app.mjs <<'JS'
import * as ort from 'onemodel';
ort.env.wasm.wasmPaths = '/node_modules/onemodel/dist/';  // the bundle is elsewhere
try {
  const s = await ort.InferenceSession.create('/conv_net.onnx');
  const x = new ort.Tensor('float32', new Float32Array(3 * 32 * 32).fill(0.25), [1, 3, 32, 32]);
  document.body.dataset.hash = await ort.goldenHash((await s.run({ x })).probs);
} catch (e) { document.body.dataset.error = e.message; }
JS
sed "s#from 'onemodel'#from '/node_modules/onemodel/dist/onemodel.browser.mjs'#; /wasmPaths/d" app.mjs > plain.mjs
echo '<!doctype html><body><script type="module" src="bundle.mjs"></script></body>' > bundled.html
echo '<!doctype html><body><script type="module" src="plain.mjs"></script></body>' > plain.html
export PLAYWRIGHT_CORE="$ROOT/node_modules/playwright-core/index.mjs"
check "a bundler (esbuild, platform browser) bundles an app importing 'onemodel'" bash -c "
  '$ROOT/node_modules/.bin/esbuild' app.mjs --bundle --platform=browser --format=esm --outfile=bundle.mjs --log-level=warning &&
  ! grep -q \"from 'onemodel'\" bundle.mjs"
check "the bundled app runs in headless Chromium: the same hash as in node" bash -c "test \"\$(node '$ROOT/tests/js/page_hash.mjs' . /bundled.html)\" = \"\$(node esm.mjs)\""
check "a plain <script type=module> of dist/onemodel.browser.mjs runs in Chromium: the same hash" bash -c "test \"\$(node '$ROOT/tests/js/page_hash.mjs' . /plain.html)\" = \"\$(node esm.mjs)\""
echo "$P passed, $F failed"
[ "$F" = 0 ]
