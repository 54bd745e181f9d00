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
check "both report L" bash -c "grep -q 'canonical lanes (L): ' <<<\"\$0\" && grep -q 'canonical lanes (L): ' <<<\"\$1\"" "$out_n" "$out_w"
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
check "families lists every table, the reference first" bash -c "$NATIVE families | grep -q '^family conv: Conv com.microsoft.FusedConv$' && $NATIVE families | awk '/^family /{getline r; if (r != \"  reference exact cpu\") bad=1} END{exit bad}'"
check "docs/operator-families.md is the build's tables" tools/families_doc.sh --check "$NATIVE"
# hash and info on a small committed-by-ONNX case model, natively and on wasm.
CASES=$(tools/find_cases.sh 2>/dev/null)
MODEL="$CASES/test_attention_3d/model.onnx"; [ -f "$MODEL" ] || MODEL="$CASES/test_add_bcast/model.onnx"
if [ -f "$MODEL" ]; then
  h_n=$($NATIVE hash "$MODEL" 2>&1); rc_n=$?
  h_w=$("${NODE[@]}" hash "$MODEL" 2>&1); rc_w=$?
  check "hash runs natively and on wasm" test "$rc_n$rc_w" = 00
  check "hash lines identical natively and on wasm" test "$h_n" = "$h_w"
  check "hash prints input/ lines then model/ lines" bash -c "grep -q '^input/' <<<'$h_n' && grep -q '^model/' <<<'$h_n'"
  check "info lists inputs and operators" bash -c "$NATIVE info '$MODEL' | grep -q '^input ' && $NATIVE info '$MODEL' | grep -q '^op '"
  if [[ "$MODEL" == *attention* ]]; then
    check "info --plan names each Attention node's row" bash -c "$NATIVE info '$MODEL' --plan | grep -q '^plan .* Attention attention/[a-z-]* exact$'"
    check "info --plan at --isa ref plans the reference" bash -c "$NATIVE --isa ref info '$MODEL' --plan | grep -q '^plan .* Attention attention/reference exact$'"
    check "node info --plan names the row" bash -c "'${NODE[0]}' '${NODE[1]}' info '$MODEL' --plan | grep -q '^plan .* Attention attention/'"
  fi
  TMP=$(mktemp -d)
  first=$($NATIVE info "$MODEL" | sed -n 's/^input \([^ ]*\) .*/\1/p' | head -1)
  shape=$($NATIVE info "$MODEL" | sed -n 's/^input [^ ]* FLOAT\[\(.*\)\]/\1/p' | head -1)
  /usr/bin/python3 -c "import numpy as np; np.save('$TMP/x.npy', (np.arange(np.prod([$shape]))%7).astype(np.float32).reshape([$shape]) - 3)"
  g_n=$($NATIVE hash "$MODEL" --input "$first=$TMP/x.npy" 2>&1)
  g_w=$("${NODE[@]}" hash "$MODEL" --input "$first=$TMP/x.npy" 2>&1)
  check "hash --input NAME=FILE.npy: same natively and on wasm" test "$g_n" = "$g_w"
  check "hash --input changes that input's hash" test "$(grep "^input/$first " <<<"$g_n")" != "$(grep "^input/$first " <<<"$h_n")"
  err=$($NATIVE hash "$MODEL" --input "nope=$TMP/x.npy" 2>&1); rc=$?
  check "hash --input unknown name: exit 1, names it" bash -c "test $rc = 1 && grep -q \"no input named 'nope'\" <<<\"\$0\"" "$err"
  for cli in native node; do
    if [ $cli = native ]; then err=$($NATIVE hash "$MODEL" --input "$first=$TMP" 2>&1); rc=$?
    else err=$("${NODE[@]}" hash "$MODEL" --input "$first=$TMP" 2>&1); rc=$?; fi
    check "$cli: hash --input NAME=<a folder>: exit 1, not a regular file" bash -c "test $rc = 1 && grep -q 'not a regular file' <<<\"\$0\"" "$err"
  done
  mkdir -p "$TMP/sn" "$TMP/sw"
  $NATIVE hash "$MODEL" --input "$first=$TMP/x.npy" --save "$TMP/sn" >/dev/null 2>&1
  "${NODE[@]}" hash "$MODEL" --input "$first=$TMP/x.npy" --save "$TMP/sw" >/dev/null 2>&1
  check "hash --save writes every output as .npy, the same bytes natively and on wasm" bash -c \
    "n=\$(ls '$TMP/sn' | wc -l); test \$n -ge 1 && test \$n = \$(grep -vc '^input/' <<<'$g_n') && diff -r '$TMP/sn' '$TMP/sw'"
  check "hash --save files are valid .npy (numpy loads them)" /usr/bin/python3 -c \
    "import numpy as np, glob; [np.load(f) for f in glob.glob('$TMP/sn/*.npy')]"
  $NATIVE hash "$MODEL" --save "$TMP/new/nested" >/dev/null 2>&1; rc_n=$?
  "${NODE[@]}" hash "$MODEL" --save "$TMP/neww/nested" >/dev/null 2>&1; rc_w=$?
  check "hash --save makes a missing folder (and its parents), natively and on wasm" bash -c \
    "test $rc_n = 0 && test $rc_w = 0 && test -n \"\$(ls '$TMP/new/nested')\" && diff -r '$TMP/new/nested' '$TMP/neww/nested'"
  touch "$TMP/a-file"
  err=$($NATIVE hash "$MODEL" --save "$TMP/a-file/sub" 2>&1); rc=$?
  check "hash --save where a file is in the way: exit 1, names the folder" bash -c "test $rc = 1 && grep -q 'a-file/sub' <<<\"\$0\"" "$err"
  b_n=$($NATIVE bench "$MODEL" --runs 3 2>&1); b_w=$("${NODE[@]}" bench "$MODEL" --runs 3 2>&1)
  check "bench: last line median_ms=<x> min_ms=<y>, natively and on wasm" bash -c \
    "tail -1 <<<'$b_n' | grep -Eq '^median_ms=[0-9]+\.[0-9]{3} min_ms=[0-9]+\.[0-9]{3}$' && tail -1 <<<'$b_w' | grep -Eq '^median_ms=[0-9.]+ min_ms=[0-9.]+$'"
  check "bench: steady runs follow the memory plan (the first and last runs' outputs compared), natively and on wasm" bash -c \
    "grep -q '^memory plan: followed, arena' <<<'$b_n' && grep -q '^memory plan: followed, arena' <<<'$b_w'"
  err=$($NATIVE bench "$MODEL" --runs 0 2>&1); rc=$?
  check "bench --runs 0: exit 1, names the option" bash -c "test $rc = 1 && grep -q -- '--runs' <<<\"\$0\"" "$err"
  printf 'garbage' > "$TMP/bad.onnx"
  err=$("${NODE[@]}" info "$TMP/bad.onnx" 2>&1); rc=$?
  check "node: a corrupt model is a typed error" bash -c "test $rc = 1 && grep -q 'invalid_model' <<<\"\$0\"" "$err"
  rm -rf "$TMP"
fi
# Options after the command, --help per command, the run command, variables as options.
G=testdata/graphs
a=$($NATIVE --threads 1 --isa scalar hash $G/conv_net.onnx 2>&1); b=$($NATIVE hash $G/conv_net.onnx --threads 1 --isa scalar 2>&1)
check "global options after the command equal options before it" bash -c "test -n '$a' && test '$a' = '$b'"
c_n=$($NATIVE cases "$CASES" --filter test_abs --threads 1 2>/dev/null); c_w=$("${NODE[@]}" cases "$CASES" --filter test_abs --threads 1 2>/dev/null)
check "cases DIR --threads 1 (once a usage error) runs, natively and on wasm" bash -c "grep -q '^case/abs ' <<<'$c_n' && test '$c_n' = '$c_w'"
help_ok=1
for cmd in run hash golden cases bench info families targets bench-lanes bench-peak version; do
  h=$($NATIVE $cmd --help 2>&1) && grep -q "^usage: onemodel $cmd" <<<"$h" || help_ok=0
done
check "--help on every command prints its usage (exit 0)" test "$help_ok" = 1
check "node: hash --help prints its usage" bash -c "'${NODE[0]}' '${NODE[1]}' hash --help | grep -q '^usage: onemodel hash'"
r=$($NATIVE run $G/conv_net.onnx --input x=$G/conv_net.x.npy 2>&1)
want=$(awk '$1 == "conv_net/probs" {print $2}' $G/golden-exact.txt)
check "run prints each output's type, shape, summary and committed hash" bash -c "grep -q '^output probs: FLOAT \[1,10\] (10 elements)' <<<'$r' &&
  grep -q '^  min .* max .* mean ' <<<'$r' && grep -q '^  first: ' <<<'$r' && grep -q '^  sha256 $want' <<<'$r'"
r_w=$("${NODE[@]}" run $G/conv_net.onnx --input x=$G/conv_net.x.npy 2>&1)
check "run: the node CLI prints the same outputs" bash -c "test \"\$(grep -v '^mode ' <<<'$r')\" = \"\$(grep -v '^mode ' <<<'$r_w')\""
err=$(ONEMODEL_THREADS=lots $NATIVE version 2>&1); rc=$?
check "a bad ONEMODEL_THREADS is an error naming the variable" bash -c "test $rc = 1 && grep -q 'ONEMODEL_THREADS' <<<\"\$0\"" "$err"
err=$(ONEMODEL_AVX512_TILES=300 $NATIVE hash $G/conv_net.onnx 2>&1); rc=$?
check "ONEMODEL_AVX512_TILES reaches the session: 300 is an error naming the option" bash -c "test $rc = 1 && grep -q 'avx512_tile_bits' <<<\"\$0\"" "$err"
p=$($NATIVE --isa scalar bench-peak --reps 1)
check "bench-peak prints the target's multiply+add GFLOP/s" bash -c "grep -Eq '^target=scalar lanes=[0-9]+ gflops=[0-9.]+$' <<<'$p'"
err=$(ONEMODEL_DISABLE_PASSES=no-such-pass $NATIVE hash $G/conv_net.onnx 2>&1); rc=$?
check "ONEMODEL_DISABLE_PASSES reaches the session: an unknown pass is named" bash -c "test $rc = 1 && grep -q \"'no-such-pass'\" <<<\"\$0\"" "$err"
p1=$(ONEMODEL_PROFILE=1 $NATIVE hash $G/conv_net.onnx 2>&1 >/dev/null)
check "ONEMODEL_PROFILE=1 prints the run's profile" bash -c "grep -q '^\[onemodel\] profile: ' <<<'$p1' && grep -q 'Conv ' <<<'$p1'"
h0=$($NATIVE hash $G/conv_net.onnx 2>/dev/null)
h1=$(ONEMODEL_PREPACK=0 ONEMODEL_MEMORY_PLAN=0 ONEMODEL_DISABLE_PASSES=constant-folding,conv-activation,elementwise-chain $NATIVE hash $G/conv_net.onnx 2>/dev/null)
check "ONEMODEL_PREPACK/_MEMORY_PLAN/_DISABLE_PASSES change no bit" bash -c "test -n '$h0' && test '$h0' = '$h1'"
check "the engine reads no environment variable (getenv only in src/cli)" bash -c "! grep -rn getenv src/ wasm/ native/ | grep -v '^src/cli/'"
# golden: argument errors and a malformed stored-input list are typed errors.
err=$($NATIVE golden 2>&1); rc=$?
check "golden without --models/--cases: exit 1, says what to give" bash -c "test $rc = 1 && grep -q 'give --models DIR' <<<\"\$0\"" "$err"
err=$("${NODE[@]}" golden --models /nonexistent-dir 2>&1); rc=$?
check "node golden --models missing folder: exit 1, names it" bash -c "test $rc = 1 && grep -q '/nonexistent-dir' <<<\"\$0\"" "$err"
TMPG=$(mktemp -d)
cp testdata/graphs/conv_net.onnx "$TMPG/"; echo "no-equals-sign" > "$TMPG/conv_net.inputs"
err=$($NATIVE golden --models "$TMPG" 2>&1); rc=$?
check "golden: a malformed .inputs line is an error naming the file" bash -c "test $rc = 1 && grep -q 'conv_net.inputs' <<<\"\$0\"" "$err"
rm -f "$TMPG/conv_net.inputs"
g1=$($NATIVE golden --models "$TMPG" 2>/dev/null); g2=$("${NODE[@]}" golden --models "$TMPG" 2>/dev/null)
check "golden without stored inputs generates them, same lines natively and on wasm" bash -c "test -n '$g1' && test '$g1' = '$g2' && grep -q '^input/conv_net/x ' <<<'$g1'"
# cases --expected-fail: a listed case that fails is an expected failure, not a failure.
mkdir -p "$TMPG/c"
cp -r "$(tools/find_cases.sh 2>/dev/null)/test_bernoulli" "$(tools/find_cases.sh 2>/dev/null)/test_abs" "$TMPG/c/" 2>/dev/null
if [ -d "$TMPG/c/test_bernoulli" ]; then
  err=$($NATIVE cases "$TMPG/c" 2>&1 >/dev/null); rc=$?
  check "cases: a failing case fails the run" bash -c "test $rc = 1 && grep -q '1 passed, 1 failed, 0 skipped' <<<\"\$0\"" "$err"
  printf '# comment\ntest_bernoulli random draws\n' > "$TMPG/xfail.txt"
  err=$($NATIVE cases "$TMPG/c" --expected-fail "$TMPG/xfail.txt" 2>&1 >/dev/null); rc=$?
  check "cases --expected-fail: counted as expected failures, exit 0" bash -c "test $rc = 0 && grep -q '1 passed, 0 failed, 0 skipped, 1 expected failures' <<<\"\$0\"" "$err"
  err=$("${NODE[@]}" cases "$TMPG/c" --expected-fail "$TMPG/xfail.txt" 2>&1 >/dev/null); rc=$?
  check "node cases --expected-fail: the same" bash -c "test $rc = 0 && grep -q '1 passed, 0 failed, 0 skipped, 1 expected failures' <<<\"\$0\"" "$err"
else
  echo "skip cases --expected-fail: no test_bernoulli node case here"
fi
# generate: greedy decoding of tools/make_llm.py's tiny decoder, natively and on wasm.
if /usr/bin/python3 -c "import onnx, numpy" 2>/dev/null; then
  /usr/bin/python3 tools/make_llm.py --size tiny --layout genai --weights q4 "$TMPG/tiny.onnx" >/dev/null 2>&1
  gn=$($NATIVE generate "$TMPG/tiny.onnx" --prompt 5 --steps 12 --json 2>&1); gw=$("${NODE[@]}" generate "$TMPG/tiny.onnx" --prompt 5 --steps 12 --json 2>&1)
  check "generate --json: 12 tokens and the times" bash -c "grep -Eq '\"tokens\":\\[([0-9]+,){11}[0-9]+\\]' <<<'$gn' && grep -q '\"prefill_ms\":' <<<'$gn'"
  check "generate: the same tokens natively and on wasm" bash -c "test -n \"\$(grep -o '\"tokens\":\\[[^]]*\\]' <<<'$gn')\" && test \"\$(grep -o '\"tokens\":\\[[^]]*\\]' <<<'$gn')\" = \"\$(grep -o '\"tokens\":\\[[^]]*\\]' <<<'$gw')\""
  err=$($NATIVE generate "$G/conv_net.onnx" 2>&1); rc=$?
  check "generate on a model that is no decoder: exit 1, names the input" bash -c "test $rc = 1 && grep -q \"input 'x'\" <<<\"\$0\"" "$err"
else
  echo "skip generate: /usr/bin/python3 has no onnx (tools/make_llm.py needs it)"
fi
rm -rf "$TMPG"
echo "$P passed, $F failed"
[ "$F" = 0 ]
