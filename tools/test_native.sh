#!/usr/bin/env bash
# Runs the native suite in BUILD_DIR once per target this build has and this CPU runs
# (the vs-scalar comparison is skipped on the scalar row, where it would compare the
# scalar backend with itself). Used by tools/test.sh and the GitHub workflow.
# Prints one line per row and `N passed, N failed, N skipped`; exits non-zero on failure.
# --focus (the sanitizer row, where the suite runs ~8x slower): the whole suite at the
# best target; at every other one (scalar included), only the tests whose code differs per
# target ([kernels] and [ops]: the rest is the same engine code at every cap), the others
# counted as skipped; at the derived targets
# (avxvnni, avx512vnni, neondot: their base target's kernels but the integer GEMM, see
# CMakeLists.txt's ONEMODEL_DERIVED_<t>), only the tests of that code ([int8]); so too at
# the base of a derived best target (avx512 when avx512vnni is best: the best target's
# whole run already ran its other kernels); at sse41, only [kernels]: its kernel code and
# geometry are the scalar target's (both 128-bit lanes; src/kernels has no branch between
# them, only the backend differs: src/simd/sse41-inl.h against scalar-inl.h), so its
# [ops] runs would repeat the scalar row's calls, and [kernels] runs its backend on every
# tail and special.
set -uo pipefail
DIR="${1:?usage: tools/test_native.sh BUILD_DIR [ROW_PREFIX] [--focus]}"
PREFIX="${2:-$(basename "$DIR")}"
FOCUS="${3:-}"
EXE=""; [ -f "$DIR/onemodel.exe" ] && EXE=".exe"
CLI="$DIR/onemodel$EXE"; BIN="$DIR/onemodel_tests$EXE"
P=0; F=0; S=0
compiled=$("$CLI" targets | sed -n 's/^compiled://p')
best=$("$CLI" targets | sed -n 's/^selected: //p')
for entry in $compiled; do
  isa="${entry%%(*}"
  [ "$isa" = ref ] && continue
  all=$("$BIN" --list-test-names-only 2>/dev/null | grep -v '^row: ' | grep -c .)
  if [ "$entry" != "$isa" ]; then  # "(unsupported)": this CPU lacks it
    echo "row $PREFIX/$isa: skipped (this CPU lacks $isa) -> 0 passed, 0 failed, $all skipped"
    S=$((S + all)); continue
  fi
  filter=(); skipped=0; note=""
  if [ "$FOCUS" = --focus ] && [ "$isa" != "$best" ]; then
    tags="[kernels],[ops]"
    case "$isa" in avxvnni|avx512vnni|neondot) tags="[int8]" ;; sse41) tags="[kernels]" ;; esac
    # The base of a derived best target: its other kernels are the best's, run whole.
    [ "$best:$isa" = avx512vnni:avx512 ] || [ "$best:$isa" = avxvnni:avx2 ] || [ "$best:$isa" = neondot:neon ] \
      && tags="[int8]"
    filter=("$tags")
    note=" (focus: $tags; the rest runs at $best)"
    skipped=$((all - $("$BIN" --list-test-names-only "$tags" 2>/dev/null | grep -v '^row: ' | grep -c .)))
  elif [ "$isa" = scalar ]; then
    filter=("~[vs_scalar]~[.]")
    skipped=$("$BIN" --list-test-names-only "[vs_scalar]" 2>/dev/null | grep -v '^row: ' | grep -c .)
  fi
  log=$(mktemp)
  "$BIN" --isa "$isa" --use-colour no "${filter[@]}" >"$log" 2>&1
  rc=$?
  p=0; f=0
  if grep -q "^All tests passed" "$log"; then
    p=$(grep "^All tests passed" "$log" | sed -E 's/.* in ([0-9]+) test case.*/\1/')
  elif grep -q "^test cases:" "$log"; then
    line=$(grep "^test cases:" "$log" | tail -1)
    p=$(echo "$line" | sed -E 's/.*\| *([0-9]+) passed.*/\1/; t; s/.*/0/')
    f=$(echo "$line" | sed -E 's/.*\| *([0-9]+) failed.*/\1/; t; s/.*/0/')
  fi
  [ "$rc" != 0 ] && [ "$f" = 0 ] && f=1
  echo "row $PREFIX/$isa: $(head -1 "$log" | sed 's/^row: //')$note -> $p passed, $f failed, $skipped skipped"
  if [ "$f" != 0 ]; then
    # The failures, or how the process ended (a sanitizer report, a signal) when it printed
    # no summary; the whole log is kept.
    { grep -E "FAILED|error|ERROR|SUMMARY" -A4 "$log" | head -40; echo "    ..."; tail -8 "$log"; } | sed 's/^/    /'
    mkdir -p build/test-logs
    cp "$log" "build/test-logs/$PREFIX-$isa.log" && echo "    (full log: build/test-logs/$PREFIX-$isa.log, exit code $rc)"
  fi
  rm -f "$log"
  P=$((P + p)); F=$((F + f)); S=$((S + skipped))
done
echo "$P passed, $F failed, $S skipped"
[ "$F" = 0 ]
