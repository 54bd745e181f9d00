#!/usr/bin/env bash
# Builds OneModel rows: tools/build.sh [ROW...]; rows: native (g++, x64), native-clang,
# arm64 (cross build, runs under qemu-aarch64), s390x (big-endian cross build, scalar
# target, runs under qemu-s390x), i686 (32-bit x86 cross build with SSE2 arithmetic,
# scalar target), riscv64 (RISC-V cross build, scalar target, runs under qemu-riscv64),
# windows (mingw-w64 cross build, every x86 target, runs under wine), wasm (SIMD128,
# scalar and SIMD128 + threads builds, the first with the relaxed SIMD flavour too); the cross rows' triples and qemu commands are
# tools/lib/cross_rows.sh's. ALONE_ROW (riscv64) builds without precompiled headers and
# without unity batches (the other rows have both), so a missing #include in the engine,
# the CLI or the portable tests' files fails there; native-tsan builds only its rows'
# test files.
# Default: all rows. Outputs: build/<row>/onemodel, build/<row>/libonemodel.a,
# build/<row>/onemodel_tests; build/wasm/{simd,scalar,simd-threads}/ and the node CLI's
# modules build/wasm/onemodel-{simd,scalar,simd-threads,simd-relaxed}.{js,wasm}
# (ONEMODEL_WASM_FLAVOURS="simd" builds only the builds named; the simd build makes the
# simd-relaxed flavour too). Rows built only on request:
# native-debug (g++ -O0, the golden rows' debug build) and native-broken (the AVX2 sum
# kernel broken on purpose, for tools/golden_broken_demo.sh); neither has tests. The
# sanitizer rows native-asan (clang, ASan+UBSan, with the libFuzzer harnesses: `fuzz` is
# another name for it) and native-tsan (clang, TSan) are built by tools/test.sh's
# sanitize and fuzz rows and by tools/fuzz.sh.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
# shellcheck source=tools/lib/cross_rows.sh
source tools/lib/cross_rows.sh
ROWS=("$@")
[ ${#ROWS[@]} -gt 0 ] || ROWS=(native native-clang arm64 s390x i686 riscv64 windows wasm)
BUILD_TYPE="${ONEMODEL_BUILD_TYPE:-Release}"
CACHE="${ONEMODEL_CACHE:-$HOME/.cache/onemodel}"
PB_VER="$(protoc --version | awk '{print $2}')"
pb_prefix() {  # the protobuf-lite tools/setup.sh built for a cross row
  local p="$CACHE/protobuf-lite-$1-$PB_VER"
  [ -f "$p/lib/libprotobuf-lite.a" ] || { echo "[build] $p missing: run tools/setup.sh" >&2; exit 1; }
  echo "$p"
}
JOBS="${ONEMODEL_JOBS:-$(nproc)}"
# Unity builds (CMakeLists.txt's ONEMODEL_UNITY) in every row but ALONE_ROW, which keeps
# building each file on its own (and without precompiled headers) to catch a file that
# does not build alone: the cheapest row that compiles every file of the engine (at -O1,
# about 60 s more than unity on Zen 5; arm64, which compiles the whole suite at -O3, took
# 140 s more). ONEMODEL_UNITY=OFF turns them off (incremental work on one file).
UNITY="-DONEMODEL_UNITY=${ONEMODEL_UNITY:-ON}"
ALONE_ROW=riscv64
# The sanitizer rows (clang): AddressSanitizer with UndefinedBehaviorSanitizer, and
# ThreadSanitizer. Undefined behaviour stops the program (no recovery).
SAN_ASAN="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
SAN_TSAN="-fsanitize=thread -fno-omit-frame-pointer"
# The ASan row is also the fuzz row: the same objects, instrumented for libFuzzer's
# coverage too (fuzzer-no-link), serve the suite and the libFuzzer harnesses (one build
# instead of two: the suite is about as fast with the coverage counters).
SAN_FUZZ="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
# Their optimisation and debug information: -O2 with line tables only (file:line in every
# report's stack, without the full debug information that costs a third of the build).
SAN_OPT=(-DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -gline-tables-only -DNDEBUG"
         "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O2 -gline-tables-only -DNDEBUG")

configure_build() {  # dir, extra cmake args... (a later -D wins over UNITY's)
  local dir="$1"; shift
  cmake -S "$ROOT" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE="$BUILD_TYPE" "$UNITY" "$@" >"$dir.configure.log" 2>&1 \
    || { cat "$dir.configure.log" >&2; exit 1; }
  compile "$dir"
}

compile() {  # dir: builds, shows the log on failure and only warnings otherwise
  if ! cmake --build "$1" -j "$JOBS" >"$1.build.log" 2>&1; then
    grep -E "error|FAILED" "$1.build.log" | head -40 >&2
    echo "[build] $1 failed (full log: $1.build.log)" >&2
    exit 1
  fi
  grep -E "warning:" "$1.build.log" | sort -u | head -20 >&2 || true
}

for row in "${ROWS[@]}"; do
  mkdir -p build
  echo "[build] $row" >&2
  case "$row" in
    native) configure_build build/native -DCMAKE_CXX_COMPILER=g++ -DCMAKE_C_COMPILER=gcc -DONEMODEL_SHARED=ON \
              -DONEMODEL_ADDON_PROTOBUF_LIB="$(pb_prefix "$(uname -m)-pic")/lib/libprotobuf-lite.a" ;;
    native-debug) configure_build build/native-debug -DCMAKE_CXX_COMPILER=g++ -DCMAKE_C_COMPILER=gcc \
                    -DCMAKE_BUILD_TYPE=Debug -DONEMODEL_BUILD_TESTS=OFF ;;
    native-broken) configure_build build/native-broken -DCMAKE_CXX_COMPILER=g++ -DCMAKE_C_COMPILER=gcc \
                     -DONEMODEL_DEMO_BROKEN_KERNEL=ON -DONEMODEL_BUILD_TESTS=OFF ;;
    native-clang) configure_build build/native-clang -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_C_COMPILER=clang ;;
    native-asan|fuzz) configure_build build/native-asan -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_C_COMPILER=clang \
                   "${SAN_OPT[@]}" -DONEMODEL_FUZZ=ON -DCMAKE_CXX_FLAGS="$SAN_FUZZ" \
                   -DCMAKE_C_FLAGS="$SAN_FUZZ" -DCMAKE_EXE_LINKER_FLAGS="$SAN_ASAN" ;;
    native-tsan)
      # Its rows run at the CPU's best target only (tools/test.sh): that one and scalar are
      # compiled, as the plain native build's CLI reports it (all targets without one).
      best=""
      [ -x build/native/onemodel ] && best=$(build/native/onemodel targets | sed -n 's/^selected: //p')
      configure_build build/native-tsan -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_C_COMPILER=clang \
                   "${SAN_OPT[@]}" -DCMAKE_CXX_FLAGS="$SAN_TSAN" -DCMAKE_C_FLAGS="$SAN_TSAN" \
                   -DCMAKE_EXE_LINKER_FLAGS="$SAN_TSAN" -DONEMODEL_TESTS_THREADS_SUBSET=ON \
                   -DONEMODEL_ONLY_TARGETS="$best" ;;
    arm64) configure_build build/arm64 -DCMAKE_TOOLCHAIN_FILE="$ROOT/cmake/aarch64-linux-gnu.cmake" \
             -DONEMODEL_PROTOBUF_PREFIX="$(pb_prefix aarch64)" \
             -DCMAKE_POSITION_INDEPENDENT_CODE=ON ;;  # PIC: the node addon (linux-arm64) too
    s390x|i686|riscv64|windows)
      [ "$row" != windows ] || bash tools/setup.sh  # installs what is missing (mingw-w64, wine, protobuf-lite)
      # The portable cross rows (tools/lib/cross_rows.sh): the suite of their CI rows only
      # (the kernel, core and loader test files) unless ONEMODEL_CROSS_ALL_TESTS=1: the rest
      # runs too long under qemu for CI. Optimised at ONEMODEL_CROSS_OPT (default -O1: a
      # third to two thirds of -O3's compile time; their code runs under qemu to check its
      # bits, and -O1 is one more optimisation level checked beside the native -O3, -O2
      # (sanitizers) and -O0 (golden.sh's debug row)).
      subset=ON; [ "${ONEMODEL_CROSS_ALL_TESTS:-0}" = 1 ] && subset=OFF
      alone=(); [ "$row" != "$ALONE_ROW" ] || alone=(-DONEMODEL_PCH=OFF -DONEMODEL_UNITY=OFF)
      triple=$(cross_triple "$row")
      configure_build "build/$row" -DCMAKE_TOOLCHAIN_FILE="$ROOT/cmake/$triple.cmake" \
        -DONEMODEL_PROTOBUF_PREFIX="$(pb_prefix "$(cross_pb_name "$row")")" -DONEMODEL_TESTS_PORTABLE_SUBSET=$subset \
        "-DCMAKE_CXX_FLAGS_RELEASE=${ONEMODEL_CROSS_OPT:--O1} -DNDEBUG" "-DCMAKE_C_FLAGS_RELEASE=${ONEMODEL_CROSS_OPT:--O1} -DNDEBUG" \
        -DCMAKE_EXE_LINKER_FLAGS="$(cross_link_flags "$row")" "${alone[@]}"
      # wine runs a program by any name: the rows call build/windows/onemodel as elsewhere.
      if [ "$row" = windows ]; then
        for exe in build/windows/*.exe; do ln -sf "$(basename "$exe")" "${exe%.exe}"; done
      fi ;;
    wasm)
      export NODE_PATH=/usr/share/nodejs  # emcc's JS optimiser needs Debian's acorn
      mkdir -p build/wasm
      # Emscripten emits CommonJS; the repo's package.json says "type": "module".
      echo '{ "type": "commonjs" }' > build/wasm/package.json
      # Four flavours from three builds: SIMD128, scalar, SIMD128 + threads (pthreads:
      # shared memory, Web Workers), and SIMD128 + relaxed SIMD (fast mode's fused
      # multiply-add twins; the loader takes it where the engine validates relaxed SIMD),
      # which the SIMD128 build links from its own objects but the wasm128 target's
      # (CMakeLists.txt's ONEMODEL_WASM_RELAXED): build/wasm/simd holds both modules and both
      # Catch2 suites (onemodel_tests.js, onemodel_tests_relaxed.js). The threaded build has
      # its suite too (its pools then run on real workers); the scalar one only with
      # ONEMODEL_WASM_ALL_TESTS=1: the test command checks its module through the node
      # cases, the golden rows and the JS tests (CI time). ONEMODEL_WASM_FLAVOURS names the
      # builds (simd-relaxed is the simd build).
      for flavour in $(echo "${ONEMODEL_WASM_FLAVOURS:-simd scalar simd-threads}" | sed 's/simd-relaxed/simd/g' | tr ' ' '\n' | awk 'NF && !seen[$0]++'); do
        simd=ON; [ "$flavour" = scalar ] && simd=OFF
        threads=OFF; pb=wasm; [ "$flavour" = simd-threads ] && { threads=ON; pb=wasm-threads-jseh; }
        relaxed=OFF; [ "$flavour" = simd ] && relaxed=ON
        tests=ON; [ "$flavour" = scalar ] && [ "${ONEMODEL_WASM_ALL_TESTS:-0}" != 1 ] && tests=OFF
        dir=build/wasm/$flavour
        mkdir -p "$dir"
        emcmake cmake -S "$ROOT" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE="$BUILD_TYPE" "$UNITY" -DONEMODEL_BUILD_TESTS=$tests \
          -DONEMODEL_WASM_SIMD=$simd -DONEMODEL_WASM_THREADS=$threads -DONEMODEL_WASM_RELAXED=$relaxed \
          -DONEMODEL_PROTOBUF_PREFIX="$(pb_prefix $pb)" \
          >"$dir.configure.log" 2>&1 || { cat "$dir.configure.log" >&2; exit 1; }
        compile "$dir"
        cp "$dir/onemodel.js" "build/wasm/onemodel-$flavour.js"
        cp "$dir/onemodel.wasm" "build/wasm/onemodel-$flavour.wasm"
        [ "$threads" = OFF ] || cp "$dir/onemodel.worker.js" "build/wasm/onemodel-$flavour.worker.js"
        if [ "$relaxed" = ON ]; then
          cp "$dir/onemodel-relaxed.js" build/wasm/onemodel-simd-relaxed.js
          cp "$dir/onemodel-relaxed.wasm" build/wasm/onemodel-simd-relaxed.wasm
        fi
      done
      ;;
    *) echo "tools/build.sh: unknown row '$row' (rows: native native-clang arm64 s390x i686 riscv64 windows wasm native-debug native-broken native-asan native-tsan)" >&2; exit 2 ;;
  esac
done
