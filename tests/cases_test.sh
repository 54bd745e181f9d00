#!/usr/bin/env bash
# Conformance row: runs the ONNX node cases natively (every ISA cap; 1, 2, 3 and 7 threads)
# and on wasm (SIMD and scalar), checks that
#   1. every case in testdata/cases-passing-<set>.txt still passes (no regression) and
#      no case fails outright (a case that cannot run yet is a skip, with its reason);
#   2. stdout (the case/<name> <hash> lines) is byte-identical on every row;
#      except the native-fast row (fast mode, the CPU's best target), checked for 1. only:
#      every case still passes ONNX's tolerances, its bits may differ;
# and the same for ONNX Runtime's contrib operators (tools/contrib_cases.sh: cases whose
# expected outputs are onnxruntime-node's, each within its `tolerance`): every one passes
# on every row, and the lines are byte-identical.
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

CONTRIB="$ROOT/build/contrib-cases"
contrib_ok=1
tools/contrib_cases.sh "$CONTRIB" >"$OUT/contrib-make.log" 2>&1 || contrib_ok=0
rows=()
running=0
run() {  # name, command...: two rows at a time (most are one process on one core)
  local name="$1"; shift
  (
    "$@" cases "$DIR" --verbose >"$OUT/$name.txt" 2>"$OUT/$name.err"
    if [ "$contrib_ok" = 1 ]; then "$@" cases "$CONTRIB" --verbose >"$OUT/contrib-$name.txt" 2>"$OUT/contrib-$name.err"; fi
  ) &
  rows+=("$name")
  running=$((running + 1))
  if [ "$running" -ge 2 ]; then wait -n; running=$((running - 1)); fi
}
for isa in $(build/native/onemodel targets | sed -n 's/^compiled://p'); do
  case "$isa" in *unsupported*) continue ;; esac
  run "native-$isa" build/native/onemodel --isa "$isa"
done
run native-threads1 build/native/onemodel --threads 1
run native-threads2 build/native/onemodel --threads 2
run native-threads3 build/native/onemodel --threads 3
run native-threads7 build/native/onemodel --threads 7
run native-fast build/native/onemodel --mode fast
[ -x build/native-clang/onemodel ] && run native-clang build/native-clang/onemodel
run wasm-simd node js/bin/onemodel.mjs --simd on
run wasm-scalar node js/bin/onemodel.mjs --simd off
# shellcheck source=tools/lib/cross_rows.sh
source tools/lib/cross_rows.sh
# The cross rows under qemu (tools/lib/cross_rows.sh): big-endian s390x (every case's bytes
# pass through the loader's and the .npy reader's swaps), 32-bit x86 (SSE2 arithmetic,
# 32-bit size_t), riscv64, and arm64 at its best target.
# Windows x64 (mingw-w64 under wine) only when asked (ONEMODEL_CASES_WINDOWS=1: tools/test.sh
# sets it when its rows name windows, as its default set does), so that a stale
# build/windows is not compared.
win=""; [ "${ONEMODEL_CASES_WINDOWS:-0}" = 1 ] && win=windows
for r in $CROSS_ROWS $win; do
  read -r -a Q <<<"$(cross_runner "$r")"
  prog="${Q[0]}"; [ "$prog" = env ] && prog="${Q[-1]}"  # qemu-ARCH, or wine after its env
  [ -x "build/$r/onemodel" ] && command -v "$prog" >/dev/null || continue
  if [ "$r" = arm64 ]; then run arm64 "${Q[@]}" -cpu max build/arm64/onemodel; else run "$r" "${Q[@]}" "build/$r/onemodel"; fi
done

wait
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
  if [ "$r" != "$ref" ] && [ "$r" != native-fast ]; then
    cmp -s "$OUT/$ref.txt" "$OUT/$r.txt" && ok "$r: stdout identical to $ref" || { bad "$r: stdout differs from $ref"; diff "$OUT/$ref.txt" "$OUT/$r.txt" | head -5 | sed 's/^/      /'; }
  fi
done
if [ "$contrib_ok" = 1 ]; then
  echo "    contrib: $(tail -1 "$OUT/contrib-make.log"); $(tail -1 "$OUT/contrib-$ref.err") ($ref)"
  for r in "${rows[@]}"; do
    counts=$(tail -1 "$OUT/contrib-$r.err")
    if [[ "$counts" =~ ^([0-9]+)\ passed,\ 0\ failed,\ 0\ skipped$ ]] && [ "${BASH_REMATCH[1]}" -gt 0 ]; then
      ok "$r: every contrib case passes ($counts)"
    else
      bad "$r: contrib cases: $counts"; grep -E '^(FAIL|SKIP) ' "$OUT/contrib-$r.err" | head -5 | sed 's/^/      /'
    fi
    if [ "$r" != "$ref" ] && [ "$r" != native-fast ]; then
      cmp -s "$OUT/contrib-$ref.txt" "$OUT/contrib-$r.txt" && ok "$r: contrib stdout identical to $ref" ||
        { bad "$r: contrib stdout differs from $ref"; diff "$OUT/contrib-$ref.txt" "$OUT/contrib-$r.txt" | head -5 | sed 's/^/      /'; }
    fi
  done
else
  bad "tools/contrib_cases.sh failed ($OUT/contrib-make.log)"; tail -5 "$OUT/contrib-make.log" | sed 's/^/      /'
fi
echo "$P passed, $F failed"
[ "$F" = 0 ]
