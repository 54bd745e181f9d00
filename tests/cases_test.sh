#!/usr/bin/env bash
# Conformance row: runs the ONNX node cases natively (every ISA cap; 1, 2, 3 and 7 threads)
# and on wasm (SIMD and scalar), checks that
#   1. every case in testdata/cases-passing-<set>.txt still passes (no regression) and
#      no case fails outright (a case that cannot run yet is a skip, with its reason);
#   2. stdout (the case/<name> <hash> lines) is byte-identical on every row.
# Prints one line per check and `N passed, N failed`.
set -u
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
P=0; F=0
ok() { echo "ok   $1"; P=$((P + 1)); }
bad() { echo "FAIL $1"; F=$((F + 1)); }
DIR=$(tools/find_cases.sh) || { bad "no node cases found"; echo "$P passed, $F failed"; exit 1; }
SET=$(basename "$DIR"); [ "$SET" = node ] && SET=onnx-1.12
LIST="testdata/cases-passing-$SET.txt"
XFAIL="testdata/cases-expected-fail-$SET.txt"  # name + reason per line
OUT="$ROOT/build/cases"; mkdir -p "$OUT"

rows=()
run() {  # name, command...
  local name="$1"; shift
  "$@" cases "$DIR" --verbose >"$OUT/$name.txt" 2>"$OUT/$name.err"
  rows+=("$name")
}
for isa in $(build/native/onemodel targets | sed -n 's/^compiled://p'); do
  case "$isa" in *unsupported*) continue ;; esac
  run "native-$isa" build/native/onemodel --isa "$isa"
done
run native-threads1 build/native/onemodel --threads 1
run native-threads2 build/native/onemodel --threads 2
run native-threads3 build/native/onemodel --threads 3
run native-threads7 build/native/onemodel --threads 7
[ -x build/native-clang/onemodel ] && run native-clang build/native-clang/onemodel
run wasm-simd node js/bin/onemodel.mjs --simd on
run wasm-scalar node js/bin/onemodel.mjs --simd off
if [ -x build/arm64/onemodel ] && command -v qemu-aarch64 >/dev/null; then
  run arm64 qemu-aarch64 -cpu max -L /usr/aarch64-linux-gnu build/arm64/onemodel
fi

ref="${rows[0]}"
echo "    $(tail -1 "$OUT/$ref.err") ($ref)"
for r in "${rows[@]}"; do
  grep '^FAIL ' "$OUT/$r.err" | sed 's/^FAIL \([^:]*\):.*/\1/' | sort > "$OUT/$r.failed"
  if [ -f "$XFAIL" ]; then
    unexpected=$(grep -v '^#' "$XFAIL" | awk '{print $1}' | sort | comm -13 - "$OUT/$r.failed")
    xf=$(grep -v '^#' "$XFAIL" | awk '{print $1}' | sort | comm -12 - "$OUT/$r.failed" | wc -l)
  else
    unexpected=$(cat "$OUT/$r.failed"); xf=0
  fi
  if [ -z "$unexpected" ]; then ok "$r: no case fails unexpectedly ($xf expected failures listed in $XFAIL)"
  else bad "$r: unexpected failures: $(echo $unexpected | head -c 300)"; fi
  if [ -f "$LIST" ]; then
    missing=$(grep '^PASS ' "$OUT/$r.err" | sed 's/^PASS //' | sort | comm -23 <(sort "$LIST") -)
    [ -z "$missing" ] && ok "$r: every case in $LIST passes" || { bad "$r: regressions: $(echo $missing | head -c 300)"; }
  elif [ "$SET" = onnx-node-1.22 ]; then
    bad "$r: $LIST is missing (tools/update_cases_list.sh writes it)"
  fi
  if [ "$r" != "$ref" ]; then
    cmp -s "$OUT/$ref.txt" "$OUT/$r.txt" && ok "$r: stdout identical to $ref" || { bad "$r: stdout differs from $ref"; diff "$OUT/$ref.txt" "$OUT/$r.txt" | head -5 | sed 's/^/      /'; }
  fi
done
echo "$P passed, $F failed"
[ "$F" = 0 ]
