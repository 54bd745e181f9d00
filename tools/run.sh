#!/usr/bin/env bash
# The main job on its built-in default: builds the native and wasm rows, runs the ONNX
# node cases (tools/find_cases.sh picks the set) in exact mode natively and under node
# (wasm SIMD and scalar), and shows that the three rows print the same case hashes. The
# cases testdata/cases-expected-fail-<set>.txt lists (with the reason) are counted as
# expected failures.
# Output: build/run/<row>.txt (case/<name> <hash> lines) and a summary per row.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
tools/build.sh native wasm
CASES=$(tools/find_cases.sh)
SET=$(basename "$CASES"); [ "$SET" = node ] && SET=onnx-1.12
XFAIL=()
[ -f "testdata/cases-expected-fail-$SET.txt" ] && XFAIL=(--expected-fail "testdata/cases-expected-fail-$SET.txt")
OUT=build/run
mkdir -p "$OUT"
echo "== $(build/native/onemodel version)"
build/native/onemodel targets
for row in native wasm-simd wasm-scalar; do
  case "$row" in
    native) cmd=(build/native/onemodel) ;;
    wasm-simd) cmd=(node js/bin/onemodel.mjs --simd on) ;;
    wasm-scalar) cmd=(node js/bin/onemodel.mjs --simd off) ;;
  esac
  start=$(date +%s)
  "${cmd[@]}" cases "$CASES" "${XFAIL[@]}" >"$OUT/$row.txt" 2>"$OUT/$row.err" || true
  echo "== $row: $(tail -1 "$OUT/$row.err") in $(( $(date +%s) - start )) s; sha256 of the case lines: $(sha256sum < "$OUT/$row.txt" | cut -c1-16)"
done
if cmp -s "$OUT/native.txt" "$OUT/wasm-simd.txt" && cmp -s "$OUT/native.txt" "$OUT/wasm-scalar.txt"; then
  echo "ALL ROWS EQUAL (3 rows, $(wc -l < "$OUT/native.txt") lines)"
else
  echo "ROWS DIFFER:"; diff "$OUT/native.txt" "$OUT/wasm-simd.txt" | head; diff "$OUT/native.txt" "$OUT/wasm-scalar.txt" | head
  exit 1
fi
