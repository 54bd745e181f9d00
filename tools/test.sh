#!/usr/bin/env bash
# The test command (README): builds every row, then runs the Catch2 suite natively once
# per ISA cap (gcc and clang); the public API's tests (C++, C, ctypes, the install test);
# sanitizer rows (ASan+UBSan: the suite, the API tests, the node cases; TSan: the threaded
# and concurrent tests); the fuzz harnesses' smoke run (tools/fuzz.sh --smoke);
# the suite on arm64 under qemu (the NEON target's whole suite on a CPU without the
# dot-product extension; on one with it, the scalar target's kernel, core and loader tests
# and the dot-product target's [int8] tests), on big-endian s390x, 32-bit x86 (i686) and
# riscv64 under qemu (their kernel, core and loader tests, the committed graphs), on
# Windows x64 under wine (the same tests at every x86 target this CPU runs), in
# Firefox ESR (the committed graphs, the node cases) and on wasm (SIMD128, SIMD128 + threads, SIMD128 + relaxed SIMD and scalar builds) under node; the JS API's tests (tests/js) on
# both wasm builds, the npm package, the browser pages and the leniency table (feed
# variants: onnxruntime-node's verdicts against the JS, C++ and C APIs); then the CLI checks, the node cases on every row, and the committed
# golden graphs (tools/golden_ci.sh native and wasm, one test each). Each row prints its
# own count; the last line is the total `N passed, N failed, N skipped` (test cases);
# exits non-zero on any failure.
# Options: --no-build (use existing builds), --rows "native arm64 ..." (subset, or rows
# beyond the default: native-clang, the suite built by plain clang, is not in the default
# set because the sanitize row already runs the suite built by clang -O2: whole at the
# best ISA cap, its per-target tests at the others; one build fewer keeps CI within its
# time).
set -uo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
# shellcheck source=tools/lib/cross_rows.sh
source tools/lib/cross_rows.sh
BUILD=1
ROWS="lint native api sanitize fuzz arm64 wasm js cli cases golden s390x i686 riscv64 windows firefox"
while [ $# -gt 0 ]; do
  case "$1" in
    --no-build) BUILD=0 ;;
    --rows) ROWS="$2"; shift ;;
    *) echo "tools/test.sh: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done

if [ "$BUILD" = 1 ]; then
  build_rows=""
  for r in $ROWS; do
    case "$r" in lint) ;; cli|cases|golden) build_rows="$build_rows native wasm" ;; api) build_rows="$build_rows native" ;; sanitize) build_rows="$build_rows native native-asan native-tsan" ;; fuzz) build_rows="$build_rows native-asan" ;; js|firefox) build_rows="$build_rows wasm native" ;; *) build_rows="$build_rows $r" ;; esac
  done
  # shellcheck disable=SC2086
  t_build=$(date +%s)
  # One build at a time: two at once (the x64 and the cross builds, -j2 each) measured
  # slower on 2 vCPUs (CI's builds 1971 s against about 1600: the compilers sharing a core
  # spent 25% more CPU on the same work).
  tools/build.sh $(echo $build_rows | tr ' ' '\n' | awk '!seen[$0]++') || { echo "0 passed, 1 failed, 0 skipped"; exit 1; }
  echo "time build: $(( $(date +%s) - t_build )) s"
fi

TOTAL_P=0; TOTAL_F=0; TOTAL_S=0
LOGDIR="$ROOT/build/test-logs"
mkdir -p "$LOGDIR"

# count_tagged CMD... TAGSPEC: how many test cases a tag expression selects.
count_tagged() {
  local spec="${!#}"
  local n=$(( $# - 1 ))
  "${@:1:$n}" --list-test-names-only "$spec" 2>/dev/null | grep -v '^row: ' | grep -c . || true
}

# run_row NAME EXCLUDE_TAGS CMD...: runs the suite, prints and adds up its counts
# (ROW_ALSO_SKIPPED: cases the command's own filter leaves out, counted as skipped).
run_row() {
  local name="$1" exclude="$2"; shift 2
  local log="$LOGDIR/$(echo "$name" | tr '/ ' '__' | tr -d '[]():,')"
  log="$log.log"
  local args=(--use-colour no)
  local skipped=${ROW_ALSO_SKIPPED:-0}
  if [ -n "$exclude" ]; then  # space-separated tags: each excluded, counted as skipped
    skipped=$((skipped + $(count_tagged "$@" "$(echo "$exclude" | tr ' ' ',')")))
    # ~[.]: a negative filter would otherwise also select the hidden tests ([.exhaustive]).
    args+=("$(for t in $exclude; do printf '~%s' "$t"; done)~[.]")
  fi
  "$@" "${args[@]}" >"$log" 2>&1
  local rc=$?
  local p=0 f=0
  if grep -q "^All tests passed" "$log"; then
    p=$(grep "^All tests passed" "$log" | sed -E 's/.* in ([0-9]+) test case.*/\1/')
  elif grep -q "^test cases:" "$log"; then
    local line; line=$(grep "^test cases:" "$log" | tail -1)
    p=$(echo "$line" | sed -E 's/.*\| *([0-9]+) passed.*/\1/; t; s/.*/0/')
    f=$(echo "$line" | sed -E 's/.*\| *([0-9]+) failed.*/\1/; t; s/.*/0/')
  fi
  if [ "$rc" != 0 ] && [ "$f" = 0 ]; then f=1; fi  # crashed or refused to start
  if [ "$p" = 0 ] && [ "$f" = 0 ]; then f=1; echo "    row $name: no test ran (a filter that matches nothing?)"; fi
  echo "row $name: $(head -1 "$log" | sed 's/^row: //') -> $p passed, $f failed, $skipped skipped"
  if [ "$f" != 0 ]; then
    grep -E "FAILED|failed|error" -A4 "$log" | head -40 | sed 's/^/    /'
    echo "    (full log: $log)"
  fi
  TOTAL_P=$((TOTAL_P + p)); TOTAL_F=$((TOTAL_F + f)); TOTAL_S=$((TOTAL_S + skipped))
}

# skip_row NAME REASON CMD...: a row this machine cannot run counts its cases as skipped.
skip_row() {
  local name="$1" reason="$2"; shift 2
  local n; n=$(count_tagged "$@" "*")
  echo "row $name: skipped ($reason) -> 0 passed, 0 failed, $n skipped"
  TOTAL_S=$((TOTAL_S + n))
}

native_rows() {  # build dir, row prefix[, --focus]: every target the build has, via test_native.sh
  local out
  out=$(tools/test_native.sh "$1" "$2" ${3:-} 2>&1)
  echo "$out" | sed '$d'
  local last; last=$(echo "$out" | tail -1)
  if [[ "$last" =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed,\ ([0-9]+)\ skipped$ ]]; then
    TOTAL_P=$((TOTAL_P + BASH_REMATCH[1])); TOTAL_F=$((TOTAL_F + BASH_REMATCH[2])); TOTAL_S=$((TOTAL_S + BASH_REMATCH[3]))
  else
    echo "row $2: did not run"; TOTAL_F=$((TOTAL_F + 1))
  fi
}

do_row() {  # runs one row: prints its lines and adds to the totals
  local row="$1"
  case "$row" in
    lint)
      # The tree's shape: the layer order of #includes, file and function sizes and the
      # kernels' tests (tools/check_tree.py), and the format (tools/format.sh --check).
      for check in "layers, sizes and kernel tests (tools/check_tree.py)|python3 tools/check_tree.py" \
                   "format (tools/format.sh --check)|tools/format.sh --check"; do
        label="${check%%|*}"; cmd="${check#*|}"
        # shellcheck disable=SC2086
        if out=$($cmd 2>&1); then p=1; f=0; else p=0; f=1; echo "$out" | head -30 | sed 's/^/    /'; fi
        echo "row lint/$label: $(echo "$out" | tail -1) -> $p passed, $f failed, 0 skipped"
        TOTAL_P=$((TOTAL_P + p)); TOTAL_F=$((TOTAL_F + f))
      done
      # Fused multiply-adds only in fast mode's GEMM twins, in the built x64, arm64, s390x
      # and riscv64 libraries (a skip when none is built).
      libs=$(ls build/native/libonemodel.a build/arm64/libonemodel.a build/s390x/libonemodel.a \
                build/riscv64/libonemodel.a 2>/dev/null || true)
      if [ -z "$libs" ]; then
        echo "row lint/fused multiply-adds (tools/check_fma.sh): no library built -> 0 passed, 0 failed, 1 skipped"
        TOTAL_S=$((TOTAL_S + 1))
      else
        # shellcheck disable=SC2086
        if out=$(tools/check_fma.sh $libs 2>&1); then p=1; f=0; else p=0; f=1; echo "$out" | head -30 | sed 's/^/    /'; fi
        echo "row lint/fused multiply-adds (tools/check_fma.sh): $(echo "$out" | tail -1) -> $p passed, $f failed, 0 skipped"
        TOTAL_P=$((TOTAL_P + p)); TOTAL_F=$((TOTAL_F + f))
      fi
      # 32-bit x86: x87 arithmetic only in 64-bit integer conversions (a skip without the
      # i686 build).
      if [ -f build/i686/libonemodel.a ]; then
        if out=$(tools/check_x87.sh build/i686/libonemodel.a 2>&1); then p=1; f=0; else p=0; f=1; echo "$out" | head -30 | sed 's/^/    /'; fi
        echo "row lint/x87 arithmetic (tools/check_x87.sh): $(echo "$out" | tail -1) -> $p passed, $f failed, 0 skipped"
        TOTAL_P=$((TOTAL_P + p)); TOTAL_F=$((TOTAL_F + f))
      else
        echo "row lint/x87 arithmetic (tools/check_x87.sh): no i686 library built -> 0 passed, 0 failed, 1 skipped"
        TOTAL_S=$((TOTAL_S + 1))
      fi
      ;;
    native) native_rows build/native native ;;
    native-clang) native_rows build/native-clang native-clang ;;
    arm64)
      read -r -a Q <<<"$(cross_runner arm64)"
      for cpu in max cortex-a72; do
        for isa in scalar neon neondot; do
          if [ "$cpu" = cortex-a72 ] && [ "$isa" = neondot ]; then
            skip_row "arm64-$cpu/$isa" "cortex-a72 has no dot product" "${Q[@]}" -cpu "$cpu" build/arm64/onemodel_tests
            continue
          fi
          # The scalar target runs no CPU-dependent code: arm64-max/scalar is the same
          # binary on the same code path (qemu's -cpu changes only the features the
          # NEON targets may use).
          if [ "$cpu" = cortex-a72 ] && [ "$isa" = scalar ]; then
            skip_row "arm64-$cpu/$isa" "the same binary and code path as arm64-max/scalar" "${Q[@]}" -cpu "$cpu" \
              build/arm64/onemodel_tests
            continue
          fi
          # The neon target runs the same instructions on both CPUs (--isa neon): its whole
          # suite runs on cortex-a72, which also shows it uses nothing past ARMv8.0.
          if [ "$cpu" = max ] && [ "$isa" = neon ]; then
            skip_row "arm64-$cpu/$isa" "the same binary and code path as arm64-cortex-a72/neon" "${Q[@]}" -cpu "$cpu" \
              build/arm64/onemodel_tests
            continue
          fi
          if [ "$isa" = scalar ]; then
            # The scalar target: the portable rows' focus (the kernel, core, loader,
            # byte-order and golden tests); the NEON target's whole suite runs the rest.
            spec=$(cross_focus arm64)
            n_all=$(count_tagged "${Q[@]}" -cpu "$cpu" build/arm64/onemodel_tests "*")
            n_focus=$(count_tagged "${Q[@]}" -cpu "$cpu" build/arm64/onemodel_tests "$spec")
            ROW_ALSO_SKIPPED=$((n_all - n_focus)) run_row "arm64-$cpu/$isa (focus: $spec)" "" \
              "${Q[@]}" -cpu "$cpu" build/arm64/onemodel_tests --isa "$isa" "$spec"
            continue
          fi
          if [ "$isa" = neondot ]; then
            # neondot is a derived target (neon's kernels but its integer GEMM, which uses the
            # dot product: CMakeLists.txt's ONEMODEL_DERIVED_<t>): the tests of that code.
            n_all=$(count_tagged "${Q[@]}" -cpu "$cpu" build/arm64/onemodel_tests "*")
            n_focus=$(count_tagged "${Q[@]}" -cpu "$cpu" build/arm64/onemodel_tests "[int8]")
            ROW_ALSO_SKIPPED=$((n_all - n_focus)) run_row "arm64-$cpu/$isa (focus: [int8])" "" \
              "${Q[@]}" -cpu "$cpu" build/arm64/onemodel_tests --isa "$isa" "[int8]"
            continue
          fi
          run_row "arm64-$cpu/$isa" "" "${Q[@]}" -cpu "$cpu" build/arm64/onemodel_tests --isa "$isa"
        done
      done
      # The npm package's linux-arm64 addon in node for arm64 (tools/setup.sh fetches it;
      # the file run directly: node --test would spawn node for the host), on a CPU with and
      # one without the dot-product extension: tests/js/engines.mjs, its outputs against the
      # wasm engine's, the native CLI's and the committed hashes, the hostile table, the
      # fuzz smoke run.
      node_a64="${ONEMODEL_CACHE:-$HOME/.cache/onemodel}/node-arm64-20.19.6/bin/node"
      for cpu in max cortex-a72; do
        log="$LOGDIR/js-arm64-addon-$cpu.log"
        if [ -f build/arm64/onemodel.node ] && [ -x "$node_a64" ]; then
          ONEMODEL_ENGINE=native ONEMODEL_REQUIRE_NATIVE=1 ONEMODEL_ADDON=build/arm64/onemodel.node \
            "${Q[@]}" -cpu "$cpu" "$node_a64" tests/js/engines.mjs >"$log" 2>&1; rc=$?
          p=$(sed -n 's/^# pass //p' "$log" | tail -1); f=$(sed -n 's/^# fail //p' "$log" | tail -1)
          s=$(sed -n 's/^# skipped //p' "$log" | tail -1); p=${p:-0}; f=${f:-0}; s=${s:-0}
          if [ "$rc" != 0 ] && [ "$f" = 0 ]; then f=1; fi
          echo "row js/arm64-addon-$cpu: node for arm64 (qemu -cpu $cpu) tests/js/engines.mjs -> $p passed, $f failed, $s skipped"
          [ "$f" != 0 ] && { grep -E "^not ok|code:|message|Error" "$log" | head -20 | sed 's/^/    /'; echo "    (full log: $log)"; }
          TOTAL_P=$((TOTAL_P + p)); TOTAL_F=$((TOTAL_F + f)); TOTAL_S=$((TOTAL_S + s))
        else
          echo "row js/arm64-addon-$cpu: build/arm64/onemodel.node or node for arm64 missing (tools/setup.sh, tools/build.sh arm64) -> 0 passed, 1 failed, 0 skipped"
          TOTAL_F=$((TOTAL_F + 1))
        fi
      done
      ;;
    s390x|i686|riscv64|windows)
      # The portable cross rows under qemu (tools/lib/cross_rows.sh; their builds have the
      # ref and scalar targets): the kernel, core, loader and byte-order tests at the scalar
      # target (the rest of the suite under qemu takes longer than CI has:
      # ONEMODEL_CROSS_ALL_TESTS=1 tools/build.sh builds it whole), and the committed graphs
      # at 1 and 3 threads. The node cases run in the cases row. ([ftz]: s390x and RISC-V
      # have no flush-to-zero mode; counted as skipped.)
      read -r -a Q <<<"$(cross_runner "$row")"
      focus=$(cross_focus "$row")
      n_all=$(count_tagged "${Q[@]}" "build/$row/onemodel_tests" "*")
      n_focus=$(count_tagged "${Q[@]}" "build/$row/onemodel_tests" "$focus")
      # windows: every x86 target this CPU runs, at native speed under wine.
      isas=scalar
      if [ "$row" = windows ]; then
        isas=$("${Q[@]}" build/windows/onemodel targets | sed -n 's/^compiled://p' | tr ' ' '\n' | grep -v -e '(' -e '^ref$')
        if [ -z "$isas" ]; then
          echo "row windows: \`wine build/windows/onemodel targets\` listed no target -> 0 passed, 1 failed, 0 skipped"
          TOTAL_F=$((TOTAL_F + 1))
        fi
      fi
      for isa in $isas; do
        ROW_ALSO_SKIPPED=$((n_all - n_focus)) run_row "$row/$isa (focus: $focus)" "" \
          "${Q[@]}" "build/$row/onemodel_tests" --isa "$isa" "$focus"
      done
      out=$(tools/golden_ci.sh "$row" --no-build 2>/dev/null)
      if tail -1 <<<"$out" | grep -q '^ALL ROWS EQUAL'; then p=1; f=0; else p=0; f=1; echo "$out" | tail -8 | sed 's/^/    /'; fi
      echo "row $row/golden: committed graphs vs testdata/graphs/golden-exact.txt ($(tail -1 <<<"$out")) -> $p passed, $f failed, 0 skipped"
      TOTAL_P=$((TOTAL_P + p)); TOTAL_F=$((TOTAL_F + f))
      ;;
    wasm)
      N=(node --no-experimental-fetch)
      # The SIMD128 + threads flavour's suite: its pools on real Web Workers (node's
      # worker_threads), 16 threads at most (tests/wasm_threads_pre.js); its wasm128 and
      # its scalar target.
      run_row "wasm-simd-threads/wasm128" "[native_only]" "${N[@]}" build/wasm/simd-threads/onemodel_tests.js --isa wasm128
      run_row "wasm-simd-threads/scalar" "[native_only] [vs_scalar]" "${N[@]}" build/wasm/simd-threads/onemodel_tests.js --isa scalar
      # The SIMD128 + relaxed SIMD flavour's suite (node 20 validates relaxed SIMD only with
      # the flag): its fast twins on f32x4.relaxed_madd, bitwise against their references.
      run_row "wasm-simd-relaxed/wasm128" "[native_only]" "${N[@]}" --experimental-wasm-relaxed-simd \
        build/wasm/simd/onemodel_tests_relaxed.js --isa wasm128
      # The single-thread flavours' own suites with ONEMODEL_WASM_ALL_TESTS=1 (the SIMD128
      # one's wasm128 target is the threaded suite's, run above; the scalar one is built
      # only then).
      if [ "${ONEMODEL_WASM_ALL_TESTS:-0}" = 1 ] && [ -f build/wasm/simd/onemodel_tests.js ]; then
        run_row "wasm-simd/wasm128" "[native_only]" "${N[@]}" build/wasm/simd/onemodel_tests.js --isa wasm128
      fi
      if [ -f build/wasm/scalar/onemodel_tests.js ]; then
        run_row "wasm-scalar/scalar" "[native_only] [vs_scalar]" "${N[@]}" build/wasm/scalar/onemodel_tests.js --isa scalar
      fi
      ;;
    api)
      # The public API: the C++ tests (public header only) at every ISA cap this CPU runs,
      # the C ABI from C and from Python's ctypes, and the install test.
      for isa in $(build/native/onemodel targets | sed -n 's/^compiled://p'); do
        [[ "$isa" == *"("* ]] && continue
        ONEMODEL_ISA=$isa run_row "api/$isa" "" build/native/onemodel_api_tests
      done
      if [ -x build/arm64/onemodel_api_tests ] && command -v qemu-aarch64 >/dev/null; then
        # shellcheck disable=SC2046
        run_row "api/arm64-max" "" $(cross_runner arm64) -cpu max build/arm64/onemodel_api_tests
      fi
      for check in "C ABI from C:build/native/onemodel_c_tests" "C ABI from ctypes:/usr/bin/python3 tests/api/test_ctypes.py" \
                   "install, examples/cpp and examples/c:tools/test_install.sh"; do
        label="${check%%:*}"; cmd="${check#*:}"
        # shellcheck disable=SC2086
        out=$($cmd 2>&1); last=$(echo "$out" | tail -1)
        if [[ "$last" =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]]; then p=${BASH_REMATCH[1]}; f=${BASH_REMATCH[2]}; else p=0; f=1; fi
        [ "$f" != 0 ] && echo "$out" | grep -v '^ok ' | sed 's/^/    /'
        echo "row api/$label -> $p passed, $f failed, 0 skipped"
        TOTAL_P=$((TOTAL_P + p)); TOTAL_F=$((TOTAL_F + f))
      done
      ;;
    js)
      # The npm package, packed as `npm pack` packs it (tests below install it).
      tarball=$(tools/pack.sh --no-build 2>"$LOGDIR/pack.log") || { cat "$LOGDIR/pack.log" | sed 's/^/    /'; tarball=""; }
      # The JS API (tests/js, node's test runner) on the SIMD128 and the scalar wasm build;
      # on the first and on the native engine, transformers.js also runs with
      # onnxruntime-node overridden to the packed package (tests/js/transformers_test.mjs,
      # ONEMODEL_PACKAGE; the engine chosen by ONEMODEL_ENGINE).
      # Then on the native engine (the N-API addon, build/native/onemodel.node), with
      # tests/js/engines.mjs: both engines side by side (bits, hostile models, the event
      # loop, the addon's fuzz smoke).
      for engine in wasm-simd-on wasm-simd-off native; do
        log="$LOGDIR/js-$engine.log"
        pkg=""; [ "$engine" != wasm-simd-off ] && pkg="$tarball"
        simd=${engine#wasm-simd-}; extra=()
        if [ "$engine" = native ]; then simd=on; extra=(tests/js/engines.mjs); fi
        # The threaded wasm flavour (env.wasm.numThreads above 1) beside the SIMD128 one.
        [ "$engine" = wasm-simd-on ] && extra=(tests/js/wasm_threads.mjs)
        ONEMODEL_ENGINE=${engine%%-*} ONEMODEL_REQUIRE_NATIVE=1 ONEMODEL_PACKAGE=$pkg ONEMODEL_TEST_SIMD=$simd \
          node --test tests/js/ "${extra[@]}" >"$log" 2>&1; rc=$?
        p=$(sed -n 's/^# pass //p' "$log" | tail -1); f=$(sed -n 's/^# fail //p' "$log" | tail -1)
        s=$(sed -n 's/^# skipped //p' "$log" | tail -1)
        p=${p:-0}; f=${f:-0}; s=${s:-0}
        if [ "$rc" != 0 ] && [ "$f" = 0 ]; then f=1; fi
        echo "row js/$engine: node --test tests/js ${extra[*]} -> $p passed, $f failed, $s skipped"
        [ "$f" != 0 ] && { grep -E "^not ok|code:|message" "$log" | head -30 | sed 's/^/    /'; echo "    (full log: $log)"; }
        TOTAL_P=$((TOTAL_P + p)); TOTAL_F=$((TOTAL_F + f)); TOTAL_S=$((TOTAL_S + s))
      done
      # The npm package: installed into an empty folder, used from ESM and CommonJS; the
      # example page in headless Chromium, its hash against the native CLI's; transformers.js
      # bundled for the browser with onnxruntime-web replaced by OneModel.
      for check in "package (npm pack, installed, used from ESM and CommonJS)|bash tests/js/package_test.sh $tarball" \
                   "browser (examples/browser in headless Chromium)|node tests/js/browser_page.mjs" \
                   "transformers.js in headless Chromium (onnxruntime-web bundled as OneModel)|node tests/js/transformers_browser.mjs" \
                   "browser, proxy (env.wasm.proxy: the run in a Web Worker)|node tests/js/browser_page.mjs --proxy --screenshot build/test-logs/browser-proxy.png" \
                   "browser, 2 wasm threads (a cross-origin isolated page)|node tests/js/browser_page.mjs --threads 2 --screenshot build/test-logs/browser-threads.png" \
                   "browser, proxy with 2 wasm threads (the worker's own workers)|node tests/js/browser_page.mjs --proxy --threads 2 --screenshot build/test-logs/browser-proxy-threads.png" \
                   "browser, 2 wasm threads asked on a page not isolated (1 thread, a console note)|node tests/js/browser_page.mjs --threads 2 --not-isolated --screenshot build/test-logs/browser-not-isolated.png" \
                   "leniency (feed variants: onnxruntime-node's verdicts, OneModel's JS API)|node tools/leniency.mjs build/leniency" \
                   "leniency, C++ and C APIs (the same table)|tests/api/leniency_test.sh"; do
        label="${check%%|*}"; cmd="${check#*|}"
        # shellcheck disable=SC2086
        out=$($cmd 2>&1); last=$(echo "$out" | tail -1)
        if [[ "$last" =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]]; then p=${BASH_REMATCH[1]}; f=${BASH_REMATCH[2]}; else p=0; f=1; fi
        [ "$f" != 0 ] && echo "$out" | grep -v '^ok ' | head -30 | sed 's/^/    /'
        echo "row js/$label -> $p passed, $f failed, 0 skipped"
        TOTAL_P=$((TOTAL_P + p)); TOTAL_F=$((TOTAL_F + f))
      done
      ;;
    fuzz)
      # The libFuzzer harnesses' smoke run (tools/fuzz.sh --smoke: seeds, libFuzzer seed
      # 1, a fixed number of executions each); the long runs are docs/reliability.md's.
      # A build that fails prints no harness line: each missing harness is a failure.
      seen=0
      while read -r line; do
        if [[ "$line" == fuzz-detail* ]]; then echo "    $line"; continue; fi
        echo "row $line"
        seen=$((seen + 1))
        if [[ "$line" =~ findings\ 0\ \(exit\ 0 ]]; then TOTAL_P=$((TOTAL_P + 1)); else TOTAL_F=$((TOTAL_F + 1)); fi
      done < <(tools/fuzz.sh --smoke 2>/dev/null | grep -E '^fuzz( |-detail )')
      if [ "$seen" -lt 5 ]; then
        echo "row fuzz: $((5 - seen)) of 5 harnesses gave no result (build failed?)"
        TOTAL_F=$((TOTAL_F + 5 - seen))
      fi
      ;;
    sanitize)
      # AddressSanitizer + UndefinedBehaviorSanitizer (clang): the whole suite at the best
      # ISA cap, the per-target tests ([kernels], [ops]; [kernels] at sse41, [int8] at the
      # derived targets) at every other cap this CPU runs (test_native.sh --focus), the API tests (C++ and C) and the node cases (the same lines as
      # the plain build, no sanitizer report). ThreadSanitizer: the threaded tests (1, 2,
      # 3 and 7 threads), the API tests' concurrent runs and the C test's. Tests that count
      # allocations ([allocs]) cannot run under TSan (its runtime owns operator new): skipped.
      # An allocation the system refuses must reach the library as a null (its kOutOfMemory
      # test), not stop the process in ASan's allocator.
      export ASAN_OPTIONS="allocator_may_return_null=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
      native_rows build/native-asan asan --focus
      run_row "asan/api" "" build/native-asan/onemodel_api_tests
      out=$(build/native-asan/onemodel_c_tests 2>&1); last=$(echo "$out" | tail -1)
      if [[ "$last" =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]]; then p=${BASH_REMATCH[1]}; f=${BASH_REMATCH[2]}; else p=0; f=1; fi
      echo "row asan/C ABI from C -> $p passed, $f failed, 0 skipped"; TOTAL_P=$((TOTAL_P + p)); TOTAL_F=$((TOTAL_F + f))
      CASES=$(tools/find_cases.sh 2>/dev/null)
      if [ -n "$CASES" ]; then
        build/native-asan/onemodel cases "$CASES" >"$LOGDIR/asan-cases.txt" 2>"$LOGDIR/asan-cases.err"
        build/native/onemodel cases "$CASES" >"$LOGDIR/plain-cases.txt" 2>/dev/null
        if ! grep -qE "runtime error|Sanitizer" "$LOGDIR/asan-cases.err" && cmp -s "$LOGDIR/asan-cases.txt" "$LOGDIR/plain-cases.txt"; then
          echo "row asan/cases: $(tail -1 "$LOGDIR/asan-cases.err"), lines equal to the plain build's -> 1 passed, 0 failed, 0 skipped"; TOTAL_P=$((TOTAL_P + 1))
        else
          echo "row asan/cases: a sanitizer report or different lines ($LOGDIR/asan-cases.err) -> 0 passed, 1 failed, 0 skipped"; TOTAL_F=$((TOTAL_F + 1))
        fi
      fi
      best=$(build/native/onemodel targets | sed -n 's/^selected: //p')
      run_row "tsan/$best threads" "" build/native-tsan/onemodel_tests --isa "$best" "[threads]"
      run_row "tsan/$best exact paths" "" build/native-tsan/onemodel_tests --isa "$best" "[exact_paths]~[allocs]"
      run_row "tsan/api" "" build/native-tsan/onemodel_api_tests "~[allocs]~[.leniency]"
      n=$(build/native/onemodel_tests --list-test-names-only "[allocs]" 2>/dev/null | grep -v '^row: ' | grep -c .)
      n2=$(build/native/onemodel_api_tests --list-test-names-only "[allocs]" 2>/dev/null | grep -v '^row: ' | grep -c .)
      echo "row tsan/[allocs]: skipped (TSan's runtime owns operator new; these count allocations) -> 0 passed, 0 failed, $((n + n2)) skipped"
      TOTAL_S=$((TOTAL_S + n + n2))
      out=$(build/native-tsan/onemodel_c_tests 2>&1); last=$(echo "$out" | tail -1)
      if [[ "$last" =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]] && ! grep -q "ThreadSanitizer" <<<"$out"; then p=${BASH_REMATCH[1]}; f=${BASH_REMATCH[2]}; else p=0; f=1; fi
      echo "row tsan/C ABI from C (40 runs from 4 threads) -> $p passed, $f failed, 0 skipped"; TOTAL_P=$((TOTAL_P + p)); TOTAL_F=$((TOTAL_F + f))
      ;;
    cli|cases)
      script=tests/cli_test.sh; label="native and node CLIs"
      [ "$row" = cases ] && { script=tests/cases_test.sh; label="ONNX node cases on every row"; }
      win=0; [[ " $ROWS " == *" windows "* ]] && win=1
      out=$(ONEMODEL_CASES_WINDOWS=$win bash "$script" 2>&1); echo "$out" | sed 's/^/    /'
      last=$(echo "$out" | tail -1)
      if [[ "$last" =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]]; then p=${BASH_REMATCH[1]}; f=${BASH_REMATCH[2]}; else p=0; f=1; fi
      echo "row $row: $label -> $p passed, $f failed, 0 skipped"
      TOTAL_P=$((TOTAL_P + p)); TOTAL_F=$((TOTAL_F + f))
      ;;
    golden)
      p=0; f=0
      for kind in native wasm; do
        out=$(tools/golden_ci.sh "$kind" --no-build 2>/dev/null); echo "$out" | tail -3 | sed "s/^/    $kind: /"
        if tail -1 <<<"$out" | grep -q '^ALL ROWS EQUAL'; then p=$((p + 1)); else f=$((f + 1)); fi
      done
      echo "row golden: committed graphs vs testdata/graphs/golden-exact.txt -> $p passed, $f failed, 0 skipped"
      TOTAL_P=$((TOTAL_P + p)); TOTAL_F=$((TOTAL_F + f))
      ;;
    firefox)
      # Firefox ESR (SpiderMonkey: a second wasm engine, with its own SIMD code generator)
      # headless, without a driver (tools/golden_browser.mjs): the committed graphs on the
      # SIMD128 and scalar builds against the committed hashes (tools/golden_ci.sh
      # firefox), and the ONNX node cases on the SIMD128 build, their lines against the
      # native CLI's.
      if ! command -v firefox-esr >/dev/null; then
        echo "row firefox: firefox-esr missing (tools/setup.sh installs it) -> 0 passed, 1 failed, 0 skipped"
        TOTAL_F=$((TOTAL_F + 1))
        return
      fi
      out=$(tools/golden_ci.sh firefox --no-build 2>/dev/null)
      if tail -1 <<<"$out" | grep -q '^ALL ROWS EQUAL'; then p=1; f=0; else p=0; f=1; echo "$out" | tail -8 | sed 's/^/    /'; fi
      echo "row firefox/golden: committed graphs vs testdata/graphs/golden-exact.txt ($(tail -1 <<<"$out")) -> $p passed, $f failed, 0 skipped"
      TOTAL_P=$((TOTAL_P + p)); TOTAL_F=$((TOTAL_F + f))
      CASES=$(tools/find_cases.sh 2>/dev/null)
      if [ -z "$CASES" ]; then
        echo "row firefox/cases: no node cases found (tools/find_cases.sh) -> 0 passed, 0 failed, 1 skipped"
        TOTAL_S=$((TOTAL_S + 1))
        return
      fi
      node tools/golden_browser.mjs --browser firefox --simd on --cases "$CASES" >"$LOGDIR/firefox-cases.txt" \
        2>"$LOGDIR/firefox-cases.err"
      build/native/onemodel cases "$CASES" >"$LOGDIR/firefox-native-cases.txt" 2>/dev/null
      n=$(grep -c . "$LOGDIR/firefox-cases.txt")
      if [ "$n" -gt 0 ] && cmp -s "$LOGDIR/firefox-cases.txt" "$LOGDIR/firefox-native-cases.txt"; then p=1; f=0; else
        p=0; f=1; diff "$LOGDIR/firefox-native-cases.txt" "$LOGDIR/firefox-cases.txt" | head -8 | sed 's/^/    /'
        echo "    (logs: $LOGDIR/firefox-cases.txt, $LOGDIR/firefox-cases.err)"
      fi
      echo "row firefox/cases: $n node case lines (SIMD128 build) vs the native CLI's -> $p passed, $f failed, 0 skipped"
      TOTAL_P=$((TOTAL_P + p)); TOTAL_F=$((TOTAL_F + f))
      ;;
    *) echo "tools/test.sh: unknown row $row" >&2; exit 2 ;;
  esac
}

# The fuzz row, the qemu rows (tools/lib/cross_rows.sh's), the windows row (wine) and the
# firefox row, one core each, start in the background once the builds are done, one after the
# other in the rows' order, and each is reported at its place in the order: on two cores
# they overlap the rows before them (about as long in all). Their lines and totals come
# back through files.
BG_ROWS=""
for r in $ROWS; do [[ " fuzz $CROSS_ROWS windows firefox " == *" $r "* ]] && BG_ROWS="$BG_ROWS $r"; done
bg_pid=""
if [ -n "$BG_ROWS" ] && [ "$(echo $ROWS | wc -w)" -gt 1 ]; then
  rm -f "$LOGDIR"/background-*.out
  (
    for r in $BG_ROWS; do
      (
        TOTAL_P=0; TOTAL_F=0; TOTAL_S=0; t_row=$(date +%s)
        do_row "$r"
        echo "time $r: $(( $(date +%s) - t_row )) s (in the background)"
        echo "@totals $TOTAL_P $TOTAL_F $TOTAL_S"
      ) >"$LOGDIR/background-$r.tmp" 2>&1
      mv "$LOGDIR/background-$r.tmp" "$LOGDIR/background-$r.out"
    done
  ) &
  bg_pid=$!
fi

for row in $ROWS; do
  t_row=$(date +%s)
  if [ -n "$bg_pid" ] && [[ " $BG_ROWS " == *" $row "* ]]; then
    out="$LOGDIR/background-$row.out"
    while [ ! -f "$out" ] && kill -0 "$bg_pid" 2>/dev/null; do sleep 2; done
    [ -f "$out" ] || echo "@totals 0 1 0" >"$out"  # the background job died
    grep -v '^@totals ' "$out"
    read -r _ p f sk < <(grep '^@totals ' "$out" || echo "@totals 0 1 0")
    TOTAL_P=$((TOTAL_P + p)); TOTAL_F=$((TOTAL_F + f)); TOTAL_S=$((TOTAL_S + sk))
    echo "time $row (waited): $(( $(date +%s) - t_row )) s"
    continue
  fi
  do_row "$row"
  echo "time $row: $(( $(date +%s) - t_row )) s"
done
[ -z "$bg_pid" ] || wait "$bg_pid"

echo "$TOTAL_P passed, $TOTAL_F failed, $TOTAL_S skipped"
[ "$TOTAL_F" = 0 ]
