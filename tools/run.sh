#!/usr/bin/env bash
# The main job on its built-in default: builds the native and wasm rows, shows which
# target each one dispatches to on this machine, and runs the canonical-sum check that
# every target equals the reference (the exact-mode promise in miniature), natively
# and under node. Later issues make this the golden-row run.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
tools/build.sh native wasm
echo "== native"
build/native/onemodel version
build/native/onemodel targets
build/native/onemodel bench-lanes --all --n 4096
echo "== wasm (node $(node --version))"
node js/bin/onemodel.mjs version
node js/bin/onemodel.mjs targets
node js/bin/onemodel.mjs bench-lanes --n 4096
node js/bin/onemodel.mjs --simd off bench-lanes --n 4096
