#!/usr/bin/env bash
# Makes the npm package: dist/ from the wasm builds (tools/build.sh wasm) and the JS
# sources, then `npm pack` into build/npm/. dist/ holds the four wasm flavours and their
# loaders, the CommonJS entry (esbuild from js/index.node.mjs) and the browser bundle.
# `npm pack` and `npm publish` run it too (package.json's prepack: `tools/pack.sh --dist`),
# so a package made either way holds dist/.
# Usage: tools/pack.sh [--no-build]   builds wasm, makes dist/, packs; prints the tarball's path last
#        tools/pack.sh --dist         only makes dist/ from the existing wasm builds (prepack)
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
if [ "${1:-}" != --dist ]; then
  [ "${1:-}" = --no-build ] || tools/build.sh wasm
  mkdir -p build/npm
  rm -f build/npm/onemodel-*.tgz
  tarball=$(npm pack --silent --pack-destination build/npm | tail -1)  # runs prepack: this script with --dist
  echo "[pack] dist/: $(du -sh dist | cut -f1); wasm raw / gzipped:" >&2
  for f in dist/onemodel-simd.wasm dist/onemodel-scalar.wasm dist/onemodel-simd-threads.wasm dist/onemodel-simd-relaxed.wasm; do
    echo "[pack]   $(basename "$f") $(stat -c %s "$f") bytes raw, $(gzip -9c "$f" | wc -c) gzipped" >&2
  done
  echo "$ROOT/build/npm/$tarball"
  exit 0
fi
exec 1>&2  # prepack: npm pack's standard output is the tarball's name alone
for f in onemodel-simd.js onemodel-simd.wasm onemodel-scalar.js onemodel-scalar.wasm \
         onemodel-simd-threads.js onemodel-simd-threads.wasm onemodel-simd-threads.worker.js \
         onemodel-simd-relaxed.js onemodel-simd-relaxed.wasm; do
  [ -f "build/wasm/$f" ] || { echo "[pack] build/wasm/$f missing: run tools/build.sh wasm" >&2; exit 1; }
done
ESBUILD="$ROOT/node_modules/.bin/esbuild"
[ -x "$ESBUILD" ] || { echo "[pack] esbuild missing: run tools/setup.sh (npm dev dependencies)" >&2; exit 1; }
rm -rf dist
mkdir -p dist
cp build/wasm/onemodel-{simd,scalar,simd-threads,simd-relaxed}.{js,wasm} build/wasm/onemodel-simd-threads.worker.js dist/
# The native engine for node (js/native.mjs): each addon built here, for its platform
# (build/native: this machine's, linux-x64 on x86-64; build/arm64: linux-arm64).
for pair in "build/native:$(node -p 'process.platform + "-" + process.arch')" "build/arm64:linux-arm64"; do
  dir=${pair%%:*}; plat=${pair#*:}
  if [ -f "$dir/onemodel.node" ]; then
    mkdir -p "dist/prebuilds/$plat"
    cp "$dir/onemodel.node" "dist/prebuilds/$plat/"
    echo "[pack] native addon for $plat: $(stat -c %s "$dir/onemodel.node") bytes" >&2
  else
    echo "[pack] no native addon for $plat ($dir/onemodel.node not built): node runs the wasm build there" >&2
  fi
done
echo '{ "type": "commonjs" }' > dist/package.json  # the Emscripten loaders and index.node.cjs are CommonJS
# CommonJS: import.meta.url becomes the bundle's own file URL (js/cjs-shim.js).
"$ESBUILD" js/index.node.mjs --bundle --platform=node --format=cjs --target=node20 \
  --external:onnxruntime-common --inject:js/cjs-shim.js --define:import.meta.url=__onemodel_import_meta_url \
  --outfile=dist/index.node.cjs --log-level=warning
# The browser bundle: js/index.browser.mjs with onnxruntime-common, for a plain
# <script type="module"> (bundlers take js/index.browser.mjs itself).
"$ESBUILD" js/index.browser.mjs --bundle --platform=browser --format=esm --target=es2020 \
  --outfile=dist/onemodel.browser.mjs --log-level=warning
# The Web Worker behind env.wasm.proxy = true.
"$ESBUILD" js/proxy-worker.mjs --bundle --platform=browser --format=esm --target=es2020 \
  --outfile=dist/onemodel.worker.mjs --log-level=warning
