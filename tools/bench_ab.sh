#!/usr/bin/env bash
# A/B timing of two builds of the CLI on a noisy machine: alternates `onemodel bench` of
# build A and build B, ROUNDS times, each a fresh process of RUNS timed runs; prints each
# round's min_ms pair, then the medians of the per-round minima and the median of the
# per-round B/A ratios (below 1: B is faster). Alternating in short rounds keeps a slow
# spell of the machine (other tenants of a VM) from landing on one build only.
#   tools/bench_ab.sh A_CLI B_CLI MODEL [--threads N] [--rounds R] [--runs N] [-- bench args...]
# e.g. build A from the parent commit into another build folder, then
#   tools/bench_ab.sh /tmp/onemodel.old build/native/onemodel models/resnet50.onnx --threads 2
# Never part of the tests.
set -euo pipefail
A="${1:?usage: tools/bench_ab.sh A_CLI B_CLI MODEL [--threads N] [--rounds R] [--runs N] [-- args]}"
B="${2:?B_CLI}"
M="${3:?MODEL}"
shift 3
T=1 R=15 N=5 EXTRA=()
while [ $# -gt 0 ]; do
  case "$1" in
    --threads) T="$2"; shift ;;
    --rounds) R="$2"; shift ;;
    --runs) N="$2"; shift ;;
    --) shift; EXTRA=("$@"); break ;;
    *) echo "bench_ab: unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done
min_ms() { "$@" 2>&1 | sed -n 's/.*min_ms=//p' | tail -1; }
echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs) family $(grep -m1 'cpu family' /proc/cpuinfo | cut -d: -f2 | xargs) model $(grep -m1 '^model\s' /proc/cpuinfo | cut -d: -f2 | xargs); threads $T, $R rounds of $N runs"
out=""
for i in $(seq "$R"); do
  a=$(min_ms "$A" bench "$M" --threads "$T" --runs "$N" "${EXTRA[@]}")
  b=$(min_ms "$B" bench "$M" --threads "$T" --runs "$N" "${EXTRA[@]}")
  echo "round $i: A $a ms, B $b ms"
  out="$out$a $b"$'\n'
done
printf '%s' "$out" | awk '
  { a[NR] = $1; b[NR] = $2; r[NR] = $2 / $1 }
  function median(v, n,   i, j, t) {
    for (i = 2; i <= n; ++i) for (j = i; j > 1 && v[j - 1] > v[j]; --j) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
    return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
  }
  END { printf "median of minima: A %.2f ms, B %.2f ms; median B/A %.3f\n", median(a, NR), median(b, NR), median(r, NR) }'
