#!/usr/bin/env bash
# Installs everything a fresh Debian 12 (bookworm) x86-64 machine needs to build and
# test every OneModel row, and builds protobuf-lite for wasm once into a cache.
# Idempotent: a second run only checks.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
CACHE="${ONEMODEL_CACHE:-$HOME/.cache/onemodel}"
SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
log() { echo "[setup] $*" >&2; }

APT_PKGS=(cmake ninja-build g++ clang emscripten nodejs protobuf-compiler libprotobuf-dev
  libonnx-dev catch2 python3-onnx python3-numpy libonnx-testdata dpkg-dev xz-utils)
# The arm64 row is a cross build run under qemu: only on x86-64 hosts.
if [ "$(uname -m)" = x86_64 ]; then APT_PKGS+=(qemu-user g++-aarch64-linux-gnu); fi

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

# protobuf-lite for wasm, built from Debian's source of the same version as protoc.
PB_VER="$(protoc --version | awk '{print $2}')"
PB_PREFIX="$CACHE/protobuf-lite-wasm-$PB_VER"
if [ -f "$PB_PREFIX/lib/libprotobuf-lite.a" ]; then
  log "protobuf-lite for wasm $PB_VER: cached at $PB_PREFIX"
else
  log "protobuf-lite for wasm $PB_VER: building (one time, a few minutes)"
  SRC_LIST=/etc/apt/sources.list.d/onemodel-deb-src.sources
  if ! apt-get indextargets 2>/dev/null | grep -q 'Identifier: Sources'; then
    sed -e 's/^Types: deb$/Types: deb-src/' /etc/apt/sources.list.d/debian.sources | $SUDO tee "$SRC_LIST" >/dev/null
    $SUDO apt-get update -qq
  fi
  WORK="$(mktemp -d)"
  (cd "$WORK" && apt-get source --download-only "protobuf=$(dpkg-query -W -f='${Version}' libprotobuf-dev)" >/dev/null 2>&1 \
     || apt-get source --download-only protobuf >/dev/null)
  tar -C "$WORK" -xf "$WORK"/protobuf_*.orig.tar.*
  PBSRC="$(ls -d "$WORK"/protobuf-*/ | head -1)"
  export NODE_PATH=/usr/share/nodejs
  emcmake cmake -S "$PBSRC" -B "$WORK/build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -Dprotobuf_BUILD_TESTS=OFF -Dprotobuf_BUILD_PROTOC_BINARIES=OFF \
    -Dprotobuf_BUILD_SHARED_LIBS=OFF -Dprotobuf_WITH_ZLIB=OFF \
    -DCMAKE_CXX_FLAGS="-fwasm-exceptions -ffp-contract=off" \
    -DCMAKE_INSTALL_PREFIX="$PB_PREFIX" >/dev/null
  cmake --build "$WORK/build" --target libprotobuf-lite >/dev/null
  mkdir -p "$PB_PREFIX/lib" "$PB_PREFIX/include"
  cp "$WORK/build/libprotobuf-lite.a" "$PB_PREFIX/lib/"
  (cd "$PBSRC/src" && find google -name '*.h' -o -name '*.inc' | cpio -pdm --quiet "$PB_PREFIX/include" 2>/dev/null \
     || tar cf - $(find google -name '*.h' -o -name '*.inc') | tar -C "$PB_PREFIX/include" -xf -)
  rm -rf "$WORK"
  log "protobuf-lite for wasm: installed into $PB_PREFIX"
fi
log "done"
