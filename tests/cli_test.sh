#!/usr/bin/env bash
# CLI checks for the native and the node CLI: same output, clear errors, exit codes.
# Prints one line per check and a last line `N passed, N failed`.
set -u
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
P=0; F=0
check() {  # name, condition (a command)
  local name="$1"; shift
  if "$@"; then echo "ok   $name"; P=$((P + 1)); else echo "FAIL $name"; F=$((F + 1)); fi
}
NATIVE=build/native/onemodel
NODE=(node js/bin/onemodel.mjs)

out_n=$($NATIVE --isa scalar targets 2>&1); rc_n=$?
out_w=$("${NODE[@]}" --isa scalar targets 2>&1); rc_w=$?
check "native targets runs" test "$rc_n" = 0
check "node targets runs" test "$rc_w" = 0
check "both report L" bash -c "grep -q 'canonical lanes (L): ' <<<'$out_n' && grep -q 'canonical lanes (L): ' <<<'$out_w'"
check "same L natively and on wasm" test "$(grep 'canonical lanes' <<<"$out_n")" = "$(grep 'canonical lanes' <<<"$out_w")"

err=$($NATIVE --isa avx9 targets 2>&1); rc=$?
check "unknown ISA: exit 1" test "$rc" = 1
check "unknown ISA: names it" grep -q "unknown ISA 'avx9'" <<<"$err"
err=$("${NODE[@]}" --isa neon targets 2>&1); rc=$?
check "node: ISA not in build: exit 1, typed error" bash -c "test $rc = 1 && grep -q 'unsupported_isa' <<<\"\$0\"" "$err"
err=$($NATIVE frobnicate 2>&1); rc=$?
check "unknown command: exit 2 and usage" bash -c "test $rc = 2 && grep -q 'usage:' <<<\"\$0\"" "$err"
err=$("${NODE[@]}" frobnicate 2>&1); rc=$?
check "node unknown command: exit 2" test "$rc" = 2
err=$("${NODE[@]}" --simd maybe version 2>&1); rc=$?
check "node --simd bad value: exit 1, says why" bash -c "test $rc = 1 && grep -q 'takes on, off or detect' <<<\"\$0\"" "$err"
check "node --simd off runs scalar" bash -c "'${NODE[0]}' '${NODE[1]}' --simd off targets | grep -q 'selected: scalar'"
check "node --simd on runs wasm128" bash -c "'${NODE[0]}' '${NODE[1]}' --simd on targets | grep -q 'selected: wasm128'"
check "native bench-lanes equals ref" bash -c "$NATIVE bench-lanes --all --n 1000 --reps 1 | grep -vq ' NO$'"
check "node bench-lanes equals ref" bash -c "'${NODE[0]}' '${NODE[1]}' bench-lanes --n 1000 --reps 1 | tail -n +2 | grep -q 'yes$'"
check "ONEMODEL_VERBOSE prints the target" bash -c "ONEMODEL_VERBOSE=1 $NATIVE --isa sse41 targets 2>&1 >/dev/null | grep -q 'target: sse41'"
echo "$P passed, $F failed"
[ "$F" = 0 ]
