#!/usr/bin/env bash
# The benchmark that chose L (exact-contract section 3): the canonical L-lane f32 sum
# for L = 16, 32, 64, 128 on every target this machine runs, natively (each ISA), on
# wasm under node (SIMD and scalar builds, optimising tier) and on arm64 under qemu
# (qemu's timings measure the emulator, not a CPU: shown for completeness only).
# Usage: tools/bench_lanes.sh [N...]   (default N: 256 4096 65536)
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
SIZES=("$@")
[ ${#SIZES[@]} -gt 0 ] || SIZES=(256 4096 65536)
[ -x build/native/onemodel ] || tools/build.sh native
[ -f build/wasm/onemodel-simd.js ] || tools/build.sh wasm
for n in "${SIZES[@]}"; do
  echo "## n = $n"
  echo "### native ($(build/native/onemodel version))"
  build/native/onemodel bench-lanes --all --n "$n" --reps 9
  echo "### wasm SIMD128 (node $(node --version), --no-liftoff)"
  node --no-liftoff js/bin/onemodel.mjs --simd on bench-lanes --n "$n" --reps 9
  echo "### wasm scalar (node $(node --version), --no-liftoff)"
  node --no-liftoff js/bin/onemodel.mjs --simd off bench-lanes --n "$n" --reps 9
done
if [ -x build/arm64/onemodel ] && command -v qemu-aarch64 >/dev/null; then
  echo "### arm64 under qemu -cpu max (emulated: not a speed measurement)"
  qemu-aarch64 -cpu max -L /usr/aarch64-linux-gnu build/arm64/onemodel bench-lanes --all --n 4096 --reps 3
fi
