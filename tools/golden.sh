#!/usr/bin/env bash
# This machine's native golden rows: `onemodel golden` over the reference model set
# (tools/prepare.sh), the committed graphs and the node cases, on every row below, then
# a line-by-line comparison (tools/golden_hash.mjs) that ends with the verdict
# `ALL ROWS EQUAL (R rows, L lines)` or the differing lines and rows (exit 1).
#   reference     g++ build, reference kernels (--isa ref), 1 thread: the oracle row
#   native-ISA    g++ build at every ISA cap this CPU runs, 1 thread and default threads;
#                 the AVX-512 caps also with the GEMM tiles of the other width, 1 thread
#   clang         clang build, best ISA, default threads
#   debug-O0      g++ -O0 build, best ISA                    (partial, see below)
#   arm64-*       cross build under qemu-aarch64: -cpu max at neondot and neon,
#                 -cpu cortex-a72 at neon                    (partial)
#   s390x-scalar  big-endian cross build under qemu-s390x, its scalar target (partial)
#   i686-scalar   32-bit x86 cross build (SSE2 arithmetic) under qemu-i386 (partial)
#   riscv64-scalar  RISC-V cross build under qemu-riscv64 (partial)
#   windows-*     Windows x64 (mingw-w64) under wine, the best target and scalar (the full
#                 set: wine runs x64 code at native speed)
# Partial rows run the committed graphs, the node cases and dbnet, crnn,
# mobilenet_v3_large and minilm_l6 (qemu and -O0 are 10-50x slower); every line they
# print must still equal the reference.
# Usage: tools/golden.sh [--no-build] [--jobs N (default 2)] [--rows "reference native clang debug arm64 s390x i686 riscv64 windows"]
# Results: build/golden/<row>.txt and build/golden/table.md. Long: not part of CI.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
DEFAULT_KINDS="reference native clang debug arm64 s390x i686 riscv64 windows"
# shellcheck source=tools/lib/cross_rows.sh
source tools/lib/cross_rows.sh
# shellcheck source=tools/lib/golden_args.sh
source tools/lib/golden_args.sh "$@"
SUBSET=dbnet,crnn,mobilenet_v3_large,minilm_l6
if [ "$BUILD" = 1 ]; then
  b=(native); has clang && b+=(native-clang); has debug && b+=(native-debug); for r in $CROSS_ROWS windows; do has "$r" && b+=("$r"); done
  tools/build.sh "${b[@]}"
fi
full() { echo "$1 golden --models $M --models $G --cases $C"; }
part() { echo "{ $1 golden --models $G --cases $C && $1 golden --models $M --only $SUBSET; }"; }
supported=()
for e in $(build/native/onemodel targets | sed -n 's/^compiled://p'); do [[ "$e" == *"("* ]] || supported+=("$e"); done
best="${supported[-1]}"
rows=(); partial=()
has reference && rows+=(--row "reference=$(full "build/native/onemodel --isa ref --threads 1")")
if has native; then
  for isa in "${supported[@]}"; do
    [ "$isa" = ref ] && continue
    rows+=(--row "native-$isa-t1=$(full "build/native/onemodel --isa $isa --threads 1")")
    rows+=(--row "native-$isa-tdefault=$(full "build/native/onemodel --isa $isa")")
    # The AVX-512 targets' GEMM tiles of the other width than the core's own choice.
    if [[ "$isa" == avx512* ]]; then
      other=512; build/native/onemodel targets | grep -q "^gemm tiles: 512" && other=256
      rows+=(--row "native-$isa-tiles$other-t1=$(full "ONEMODEL_AVX512_TILES=$other build/native/onemodel --isa $isa --threads 1")")
    fi
  done
fi
has clang && rows+=(--row "clang-$best=$(full "build/native-clang/onemodel --isa $best")")
if has debug; then rows+=(--row "debug-O0-$best=$(part "build/native-debug/onemodel --isa $best")"); partial+=(--partial "debug-O0-$best"); fi
if has arm64; then
  Q=$(cross_runner arm64)
  for r in "max neondot" "max neon" "cortex-a72 neon"; do
    set -- $r
    rows+=(--row "arm64-$1-$2=$(part "$Q -cpu $1 build/arm64/onemodel --isa $2 --threads 1")"); partial+=(--partial "arm64-$1-$2")
  done
fi
# Windows x64 (mingw-w64 under wine, on this CPU at native speed: the full set): the best
# target and scalar.
if has windows; then
  for isa in "$best" scalar; do rows+=(--row "windows-$isa=$(full "$(cross_runner windows) build/windows/onemodel --isa $isa")"); done
fi
for r in $CROSS_PORTABLE_ROWS; do
  has "$r" || continue
  rows+=(--row "$r-scalar=$(part "$(cross_runner "$r") build/$r/onemodel --isa scalar --threads 1")")
  partial+=(--partial "$r-scalar")
done
exec node tools/golden_hash.mjs --out build/golden --table build/golden/table.md --keep-going --jobs "$JOBS" "${partial[@]}" "${rows[@]}"
