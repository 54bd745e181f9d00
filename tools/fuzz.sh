#!/usr/bin/env bash
# Runs the libFuzzer harnesses (tests/fuzz; docs/reliability.md):
#   tools/fuzz.sh [--seconds N] [--jobs J] [--keep-going] [--smoke] [HARNESS...]
# HARNESS: model, npy, cli, op, opmore (default: all), each for N seconds (default 60) with one
# worker, one after another (J > 1: J at a time). Builds the fuzz row first (clang,
# libFuzzer, ASan+UBSan: build/native-asan/fuzz_<harness>, beside the ASan suite).
# Corpora live in build/fuzz/corpus/<harness> (kept between runs, seeded at the first
# run from the ONNX node cases, testdata/graphs and hand-written seeds); findings go to
# build/fuzz/findings/<harness>/. Prints one line per harness:
#   fuzz <harness>: <execs> execs in <s> s, corpus <n> files, findings <k>
# and exits 1 when any harness found a crash, leak, timeout or out-of-memory (--keep-going:
# libFuzzer's fork mode, which records each finding and goes on searching). A finding
# becomes a regression input in tests/regress/<harness>/ before its fix lands.
# --smoke (CI, the fuzz row of tools/test.sh): a fresh copy of the seeds, libFuzzer's
# seed 1 and a fixed number of executions per harness instead of a time, nothing kept,
# and a unit counts as hung only after 120 s (not 10), so a slow or busy machine does not
# turn a slow input into a finding. The search still follows coverage, which output
# measured at run time (the CLI's `targets` prints a measured rate) can steer: two
# machines' smoke runs need not meet the same inputs. A finding prints "fuzz-detail"
# lines: the sanitizer's or harness's first report line and each input in base64.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
SECONDS_EACH=60
JOBS=1
KEEP=0
SMOKE=0
HARNESSES=()
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) SECONDS_EACH="$2"; shift 2 ;;
    --jobs) JOBS="$2"; shift 2 ;;
    --keep-going) KEEP=1; shift ;;
    --smoke) SMOKE=1; shift ;;
    -h|--help) sed -n 2,13p "$0"; exit 0 ;;
    model|npy|cli|op|opmore) HARNESSES+=("$1"); shift ;;
    *) echo "fuzz.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
[ ${#HARNESSES[@]} -gt 0 ] || HARNESSES=(model npy cli op opmore)
CASES="${ONEMODEL_CASES:-$ROOT/../shared/onnx-node-1.22}"

tools/build.sh fuzz >&2
seed() {  # harness corpus-dir: the seed files, once
  local h="$1" dir="$2"
  [ -n "$(ls -A "$dir" 2>/dev/null)" ] && return 0
  mkdir -p "$dir"
  case "$h" in
    model)
      if [ -d "$CASES" ]; then
        for m in "$CASES"/*/model.onnx; do cp "$m" "$dir/$(basename "$(dirname "$m")").onnx"; done
      fi
      cp testdata/graphs/*.onnx "$dir/" 2>/dev/null || true
      [ -d tests/regress/model ] && cp tests/regress/model/* "$dir/" 2>/dev/null || true ;;
    npy)
      cp testdata/graphs/*.npy "$dir/"
      [ -d tests/regress/npy ] && cp tests/regress/npy/* "$dir/" 2>/dev/null || true ;;
    cli)
      printf '\001X=x.npy\n# comment\nY=y.npy\n' >"$dir/inputs1"
      printf '\000run\nm.onnx\n--input\nX=x.npy' >"$dir/run1"
      printf '\000hash\nm.onnx\n--dim\nN=3' >"$dir/hash1"
      printf '\000info\nm.onnx' >"$dir/info1"
      printf '\000run\nm.onnx\n--isa\nref\n--mode\nexact' >"$dir/run2"
      [ -d tests/regress/cli ] && cp tests/regress/cli/* "$dir/" 2>/dev/null || true ;;
    op)
      # op index, counts, then per input: type, rank, dims; attributes; element bytes.
      printf '\000\001\000\002\003\004\001\002\003\004\000' >"$dir/add"
      printf '\054\001\000\002\002\003\000\002\004\005\000' >"$dir/matmul"
      printf '\056\001\200\004\001\002\005\005\000\003\004\002\003\003\000' >"$dir/conv"
      [ -d tests/regress/op ] && cp tests/regress/op/* "$dir/" 2>/dev/null || true ;;
    opmore)
      # The same layout over the other operators: RegexFullMatch (index 44) of a string
      # [2, 3] with pattern (a|b)*; Attention (24) of three float [1, 2, 4]; Det (48).
      printf '\054\000\012\002\002\003\001\105\053' >"$dir/regex"
      printf '\030\002\000\003\001\002\004\000\003\001\002\004\000\003\001\002\004\000' >"$dir/attention"
      printf '\060\000\000\002\003\003\000' >"$dir/det"
      [ -d tests/regress/opmore ] && cp tests/regress/opmore/* "$dir/" 2>/dev/null || true ;;
  esac
}

run_one() {  # harness
  local h="$1" corpus="$ROOT/build/fuzz/corpus/$1" findings="$ROOT/build/fuzz/findings/$1" log="$ROOT/build/fuzz/log-$1.txt"
  local budget=(-max_total_time="$SECONDS_EACH") timeout=10
  if [ "$SMOKE" = 1 ]; then
    corpus="$ROOT/build/fuzz/smoke-corpus/$h"; findings="$ROOT/build/fuzz/smoke-findings/$h"; log="$ROOT/build/fuzz/smoke-$h.txt"
    rm -rf "$corpus" "$findings"
    local n=10000; case "$h" in npy|cli) n=100000 ;; esac
    budget=(-seed=1 -runs="$n"); timeout=120
  fi
  seed "$h" "$corpus"
  mkdir -p "$findings"
  local dict=() mode=()
  [ "$KEEP" = 1 ] && mode=(-fork=1 -ignore_crashes=1 -ignore_ooms=1 -ignore_timeouts=1)
  case "$h" in model|op|opmore) dict=(-dict="$ROOT/tests/fuzz/onnx.dict") ;; esac
  local t0; t0=$(date +%s)
  set +e
  ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1}" \
    "$ROOT/build/native-asan/fuzz_$h" "$corpus" "${dict[@]}" "${mode[@]}" "${budget[@]}" -timeout="$timeout" -rss_limit_mb=3072 \
      -malloc_limit_mb=2048 -max_len=65536 -print_final_stats=1 -artifact_prefix="$findings/" >"$log" 2>&1
  local rc=$?
  set -e
  local t1; t1=$(date +%s)
  local execs; execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1 || true)
  # fork mode prints no final stats: its last status line (#<execs> ...) counts them
  [ -n "$execs" ] || execs=$(grep -oE '^#[0-9]+' "$log" | tail -1 | tr -d '#' || true)
  local n; n=$(find "$corpus" -type f | wc -l)
  local k; k=$(ls "$findings" | grep -cE '^(crash|leak|timeout|oom)-' || true)
  echo "fuzz $h: ${execs:-0} execs in $((t1 - t0)) s, corpus $n files, findings $k (exit $rc; log $log)"
  if [ "$rc" -ne 0 ] || [ "$k" -ne 0 ]; then
    # What it was and the inputs (base64), so a CI log alone is enough to reproduce it.
    echo "fuzz-detail $h: $(grep -m1 -E '^(FINDING|==[0-9]+==ERROR|SUMMARY)' "$log" | cut -c1-300)"
    for f in $(ls "$findings" | grep -E '^(crash|leak|timeout|oom)-' | head -3); do
      echo "fuzz-detail $h: $f base64 $(head -c 4096 "$findings/$f" | base64 -w0)"
    done
  fi
  [ "$rc" -eq 0 ] && [ "$k" -eq 0 ]
}

status=0
if [ "$JOBS" -le 1 ]; then
  for h in "${HARNESSES[@]}"; do run_one "$h" || status=1; done
else
  pids=()
  for h in "${HARNESSES[@]}"; do
    run_one "$h" & pids+=($!)
    if [ ${#pids[@]} -ge "$JOBS" ]; then wait "${pids[0]}" || status=1; pids=("${pids[@]:1}"); fi
  done
  for p in "${pids[@]}"; do wait "$p" || status=1; done
fi
exit $status
