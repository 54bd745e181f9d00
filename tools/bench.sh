#!/usr/bin/env bash
# OneModel exact mode vs ONNX Runtime 1.30 (onnxruntime-node at 1 and 2 threads,
# onnxruntime-web's wasm in node at 1 thread) on the reference models, side by side in
# one run, plus GEMM GFLOP/s per ISA cap (tools/bench.mjs). Builds native and wasm,
# installs the npm dev dependencies if missing; the models come from tools/prepare.sh.
# Usage: tools/bench.sh [--runs N] [--only a,b] [--no-wasm] [--no-gemm]
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
[ -d node_modules/onnxruntime-node ] || npm install --ignore-scripts --no-audit --no-fund >/dev/null
tools/build.sh native wasm
exec node tools/bench.mjs "$@"
