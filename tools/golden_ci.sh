#!/usr/bin/env bash
# The committed-hash check: runs the five committed graphs of testdata/graphs through
# `onemodel golden` on every row of one kind and compares each row, line by line, with
# testdata/graphs/golden-exact.txt (the first row). Fast (seconds per row): .ci/run and
# the GitHub workflow run it.
#   tools/golden_ci.sh native [--no-build]  every ISA cap this CPU runs, 1, 2, 3 and 7 threads
#   tools/golden_ci.sh s390x|i686|riscv64|windows [--no-build]  a portable cross build
#                                           under qemu or wine (tools/lib/cross_rows.sh):
#                                           its targets (ref, scalar; windows: each x86
#                                           target this CPU runs) at 1 and 3 threads
#   tools/golden_ci.sh wasm [--no-build]    node: SIMD and scalar builds, each with V8's
#                                           default tiering, --liftoff-only and --no-liftoff;
#                                           the SIMD + threads build at 2, 3, 4 and 7 threads
#   tools/golden_ci.sh firefox [--no-build] Firefox ESR (SpiderMonkey) headless: the SIMD and
#                                           scalar builds in a page (tools/golden_browser.mjs)
# Ends with `ALL ROWS EQUAL (R rows, L lines)` or the differing lines and rows (exit 1).
# Rows are saved in build/golden-ci-<kind>/. To re-record the hashes after a deliberate
# change: build/native/onemodel --isa ref golden --models testdata/graphs \
#   > testdata/graphs/golden-exact.txt  (and say why in the commit message).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
# shellcheck source=tools/lib/cross_rows.sh
source tools/lib/cross_rows.sh
KIND="${1:?usage: tools/golden_ci.sh native|s390x|i686|riscv64|windows|wasm|firefox [--no-build]}"
BUILD=1; [ "${2:-}" = --no-build ] && BUILD=0
BIN="${ONEMODEL_BIN:-build/native/onemodel}"  # native kind: the CLI to check (the workflow's own builds)
G=testdata/graphs
rows=(--row "committed=cat $G/golden-exact.txt")
case "$KIND" in
  native)
    [ "$BUILD" = 1 ] && tools/build.sh native
    for entry in $("$BIN" targets | sed -n 's/^compiled://p' | tr -d '\r'); do
      [[ "$entry" == *"("* ]] && continue  # this CPU lacks it
      for t in 1 2 3 7; do rows+=(--row "native-$entry-t$t=$BIN --isa $entry --threads $t golden --models $G"); done
    done
    ;;
  s390x|i686|riscv64|windows)
    [ "$BUILD" = 1 ] && tools/build.sh "$KIND"
    Q=$(cross_runner "$KIND")
    for entry in $($Q "build/$KIND/onemodel" targets | sed -n 's/^compiled://p'); do
      [[ "$entry" == *"("* ]] && continue  # this CPU lacks it (windows: every x86 target is built)
      for t in 1 3; do rows+=(--row "$KIND-$entry-t$t=$Q build/$KIND/onemodel --isa $entry --threads $t golden --models $G"); done
    done
    ;;
  wasm)
    [ "$BUILD" = 1 ] && tools/build.sh wasm
    for simd in on off; do
      name=simd; [ "$simd" = off ] && name=scalar
      rows+=(--row "wasm-$name=node js/bin/onemodel.mjs --simd $simd golden --models $G")
      rows+=(--row "wasm-$name-liftoff-only=node --liftoff-only js/bin/onemodel.mjs --simd $simd golden --models $G")
      rows+=(--row "wasm-$name-no-liftoff=node --no-liftoff js/bin/onemodel.mjs --simd $simd golden --models $G")
    done
    rows+=(--row "wasm-simd-relaxed=node --experimental-wasm-relaxed-simd js/bin/onemodel.mjs --relaxed-simd detect golden --models $G")
    for t in 2 3 4 7; do rows+=(--row "wasm-simd-threads$t=node js/bin/onemodel.mjs --threads $t golden --models $G"); done
    ;;
  firefox)
    [ "$BUILD" = 1 ] && tools/build.sh wasm
    for simd in on off; do
      name=simd; [ "$simd" = off ] && name=scalar
      rows+=(--row "firefox-$name=node tools/golden_browser.mjs --browser firefox --simd $simd --models $G")
    done
    ;;
  *) echo "tools/golden_ci.sh: kind must be native, s390x, i686, riscv64, windows, wasm or firefox, not '$KIND'" >&2; exit 2 ;;
esac
exec node tools/golden_hash.mjs --out "build/golden-ci-$KIND" --keep-going "${rows[@]}"
