#!/usr/bin/env bash
# The install test (tools/test.sh row "install"): installs build/native (configured with
# ONEMODEL_SHARED=ON by tools/build.sh) into a temporary prefix, then builds
# examples/cpp and examples/c against it with find_package and with pkg-config, runs
# each on a committed golden graph and compares the printed hash with the committed one;
# loads the installed shared library from Python (ctypes). One line per check, then
# `N passed, N failed`.
set -u
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
BUILD="${1:-build/native}"
P=0; F=0
check() {  # name, command...
  local name="$1"; shift
  if "$@" >"$WORK/check.log" 2>&1; then echo "ok   $name"; P=$((P + 1)); else echo "FAIL $name"; sed 's/^/    /' "$WORK/check.log" | tail -15; F=$((F + 1)); fi
}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
PREFIX="$WORK/prefix"
MODEL=testdata/graphs/conv_net.onnx
INPUT=testdata/graphs/conv_net.x.npy
WANT="probs $(awk '$1 == "conv_net/probs" {print $2}' testdata/graphs/golden-exact.txt)"

check "cmake --install into a temporary prefix" cmake --install "$BUILD" --prefix "$PREFIX"
check "installed: headers, static and shared library, CMake package, pkg-config file, CLI" bash -c "
  test -f '$PREFIX/include/onemodel/onemodel.h' && test -f '$PREFIX/include/onemodel/onemodel_c.h' &&
  test -f '$PREFIX/lib/libonemodel.a' && test -f '$PREFIX/lib/libonemodel.so' &&
  test -f '$PREFIX/lib/cmake/onemodel/onemodelConfig.cmake' && test -f '$PREFIX/lib/cmake/onemodel/onemodelConfigVersion.cmake' &&
  test -f '$PREFIX/lib/pkgconfig/onemodel.pc' && test -x '$PREFIX/bin/onemodel'"
check "the installed headers include nothing of src/" bash -c "! grep -hE '#include \"(core|ref|runtime|graph|kernels|simd|onnx|passes)/' '$PREFIX'/include/onemodel/*.h"
check "the installed CLI runs" "$PREFIX/bin/onemodel" version
check "examples/cpp: configure with find_package(onemodel)" cmake -S examples/cpp -B "$WORK/cpp" -G Ninja -DCMAKE_PREFIX_PATH="$PREFIX"
check "examples/cpp: build" cmake --build "$WORK/cpp"
check "examples/cpp: prints top-5 and the committed hash" bash -c "out=\$('$WORK/cpp/classify' $MODEL $INPUT) && echo \"\$out\" &&
  test \"\$(grep -c '^top[1-5] class ' <<<\"\$out\")\" = 5 && test \"\$(tail -1 <<<\"\$out\")\" = '$WANT'"
check "examples/c: configure with find_package(onemodel)" cmake -S examples/c -B "$WORK/c" -G Ninja -DCMAKE_PREFIX_PATH="$PREFIX"
check "examples/c: build" cmake --build "$WORK/c"
check "examples/c: prints top-5 and the committed hash" bash -c "out=\$('$WORK/c/classify_c' $MODEL $INPUT) && echo \"\$out\" &&
  test \"\$(grep -c '^top[1-5] class ' <<<\"\$out\")\" = 5 && test \"\$(tail -1 <<<\"\$out\")\" = '$WANT'"
check "examples/cpp and examples/c print the same lines" bash -c "diff <('$WORK/cpp/classify' $MODEL $INPUT) <('$WORK/c/classify_c' $MODEL $INPUT)"
export PKG_CONFIG_PATH="$PREFIX/lib/pkgconfig"
# With the shared library installed, -lonemodel links it: run with the prefix on the
# library path, as a user of a non-system prefix does.
check "pkg-config knows onemodel at the installed prefix" bash -c "pkg-config --modversion onemodel && pkg-config --cflags onemodel | grep -q -- '-I$PREFIX/lib/pkgconfig/../../include'"
check "examples/cpp built with pkg-config: the committed hash" bash -c "g++ -std=c++17 examples/cpp/classify.cpp \$(pkg-config --cflags --libs onemodel) -o '$WORK/classify_pc' &&
  test \"\$(LD_LIBRARY_PATH='$PREFIX/lib' '$WORK/classify_pc' $MODEL $INPUT | tail -1)\" = '$WANT'"
check "examples/c built with pkg-config (a C compiler): the committed hash" bash -c "gcc -std=c11 examples/c/classify.c \$(pkg-config --cflags --libs onemodel) -o '$WORK/classify_c_pc' &&
  test \"\$(LD_LIBRARY_PATH='$PREFIX/lib' '$WORK/classify_c_pc' $MODEL $INPUT | tail -1)\" = '$WANT'"
check "a consumer of the shared library (onemodel::onemodel_shared) links and runs" bash -c "
  mkdir -p '$WORK/shared' && cat > '$WORK/shared/CMakeLists.txt' <<'CM'
cmake_minimum_required(VERSION 3.20)
project(shared_consumer LANGUAGES C CXX)
find_package(onemodel REQUIRED)
add_executable(classify_c $ROOT/examples/c/classify.c)
target_link_libraries(classify_c PRIVATE onemodel::onemodel_shared)
CM
  cmake -S '$WORK/shared' -B '$WORK/shared/b' -G Ninja -DCMAKE_PREFIX_PATH='$PREFIX' >/dev/null && cmake --build '$WORK/shared/b' >/dev/null &&
  ldd '$WORK/shared/b/classify_c' | grep -q 'libonemodel.so.0 => $PREFIX' &&
  test \"\$('$WORK/shared/b/classify_c' $MODEL $INPUT | tail -1)\" = '$WANT'"
check "Python ctypes on the installed shared library: the committed hash" /usr/bin/python3 tests/api/test_ctypes.py "$PREFIX/lib/libonemodel.so"
echo "$P passed, $F failed"
[ "$F" = 0 ]
