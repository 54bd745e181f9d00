#!/usr/bin/env bash
# Exact versus fast mode, per reference model and thread count: runs
# `onemodel --mode exact|fast --threads T golden --models DIR --only MODEL` and reads
# the per-model time it reports on stderr; prints a markdown table of times and the
# ratio fast/exact. Each cell is the best of --runs N (default 3).
# Usage: tools/golden_cost.sh ["1 2"] [--runs N] [--only a,b]
# The exact runs' output lines at each thread count are rows of their own; the script
# ends with golden_hash.mjs's verdict over them (exact mode must not depend on threads).
# Fast mode today rewrites QDQ convolutions to int8 products (docs/graph-passes.md "Fast
# passes"); on models without them it runs the exact path and the ratio measures noise.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
THREADS="1 2"; RUNS=3; ONLY=""
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) RUNS="$2"; shift ;;
    --only) ONLY="$2"; shift ;;
    -*) echo "tools/golden_cost.sh: unknown option $1" >&2; exit 2 ;;
    *) THREADS="$1" ;;
  esac
  shift
done
M="${ONEMODEL_MODELS:-$ROOT/models}"
B=build/native/onemodel
[ -x "$B" ] || tools/build.sh native
models=$(ls "$M"/*.onnx | xargs -n1 basename | sed 's/\.onnx$//')
[ -n "$ONLY" ] && models=$(tr ',' '\n' <<<"$ONLY")
OUT=build/golden-cost
rm -rf "$OUT"; mkdir -p "$OUT"
best() {  # mode threads model -> best seconds over RUNS (exact lines kept per thread count)
  local b="" lines
  lines=$(mktemp)
  for _ in $(seq "$RUNS"); do
    t=$("$B" --mode "$1" --threads "$2" golden --models "$M" --only "$3" 2>&1 >"$lines" | sed -n 's/.* \([0-9.e-]*\) s$/\1/p' | tail -1)
    [ -z "$b" ] && b=$t || b=$(awk -v a="$b" -v c="$t" 'BEGIN{print (c<a)?c:a}')
  done
  [ "$1" = exact ] && cat "$lines" >> "$OUT/exact-t$2.txt"
  rm -f "$lines"
  echo "$b"
}
hdr="| model |"; sep="|---|"
for t in $THREADS; do hdr="$hdr exact ${t}t (s) | fast ${t}t (s) | fast/exact ${t}t |"; sep="$sep---|---|---|"; done
echo "$hdr"; echo "$sep"
for m in $models; do
  line="| $m |"
  for t in $THREADS; do
    e=$(best exact "$t" "$m"); f=$(best fast "$t" "$m")
    line="$line $(printf '%.3f' "$e") | $(printf '%.3f' "$f") | $(awk -v a="$f" -v b="$e" 'BEGIN{printf "%.2f", a/b}') |"
  done
  echo "$line"
done
echo "fast mode rewrites QDQ convolutions only (docs/graph-passes.md): elsewhere it runs the exact path and ratios near 1.00 are noise."
node tools/golden_hash.mjs --merge "$OUT"/exact-t*.txt
