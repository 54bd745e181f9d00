# The cross rows: builds for another CPU, run under qemu-user on this x86-64 machine.
# One table, sourced by tools/setup.sh, tools/build.sh, tools/test.sh, tools/golden.sh,
# tools/golden_ci.sh and tests/cases_test.sh: a new row is an entry in each function below
# plus a two-line toolchain file in cmake/ named after its GNU triple. arm64 has its own
# test rows (NEON targets, two qemu CPUs, the npm package's addon); the portable rows
# (CROSS_PORTABLE_ROWS) build the ref and scalar targets only and run the same checks: the
# kernel, core, loader and byte-order tests, the committed graphs and the ONNX node cases.
# windows (mingw-w64, run under wine; every x86 target, not only ref and scalar) is a
# portable row too; tools/setup.sh installs mingw-w64 and wine on x86-64 hosts.
CROSS_ROWS="arm64 s390x i686 riscv64"
CROSS_PORTABLE_ROWS="s390x i686 riscv64"
WINE_PREFIX="${ONEMODEL_CACHE:-$HOME/.cache/onemodel}/wine64"

cross_triple() {  # ROW -> the GNU triple of its compiler and C library (/usr/TRIPLE)
  case "$1" in
    arm64) echo aarch64-linux-gnu ;;
    s390x) echo s390x-linux-gnu ;;
    i686) echo i686-linux-gnu ;;
    riscv64) echo riscv64-linux-gnu ;;
    windows) echo x86_64-w64-mingw32 ;;
    *) echo "cross_rows: unknown cross row '$1'" >&2; return 1 ;;
  esac
}

cross_pb_name() {  # ROW -> the name of its protobuf-lite in the cache (tools/setup.sh)
  case "$1" in windows) echo mingw64 ;; *) local t; t=$(cross_triple "$1") && echo "${t%%-*}" ;; esac
}

cross_runner() {  # ROW -> the command that runs one of its programs (qemu-ARCH -L /usr/TRIPLE)
  local triple arch
  if [ "$1" = windows ]; then  # wine in its own prefix, quiet, never offering Mono or Gecko
    echo "env WINEPREFIX=$WINE_PREFIX WINEDEBUG=-all WINEDLLOVERRIDES=mscoree,mshtml= wine"
    return
  fi
  triple=$(cross_triple "$1") || return 1
  arch=${triple%%-*}
  case "$arch" in i?86) arch=i386 ;; esac
  echo "qemu-$arch -L /usr/$triple"
}

# The Catch2 tags a portable row runs in CI (and arm64 at its scalar target: its NEON
# target runs the whole suite). [ftz] tests the flush-to-zero mode of the host: s390x and
# RISC-V have none; [libm_fma] checks ref::FusedMulAddF32 against the C library's fmaf,
# which mingw-w64's is not (it is off by thousands of ulps). Those rows count the cases
# left out as skipped.
cross_focus() {
  case "$1" in
    i686|arm64) echo "[kernels],[core],[loader],[endian],[golden]" ;;
    windows) echo "[kernels]~[libm_fma],[core],[loader],[endian],[golden]" ;;
    *) echo "[kernels],[core]~[ftz],[loader],[endian],[golden]" ;;
  esac
}

# Link flags of a row's programs. i686 links statically: a dynamically linked threaded
# i386 program hangs in glibc's start-up under qemu-i386 7.2 (a static one runs); windows
# too, so wine needs no mingw DLLs on its path.
cross_link_flags() {
  case "$1" in i686|windows) echo "-static" ;; *) echo "" ;; esac
}

# Compiler flags for protobuf-lite of the row (tools/setup.sh), as CMakeLists.txt sets for
# the row's own sources.
cross_pb_flags() {
  case "$1" in
    i686) echo "-ffp-contract=off -msse2 -mfpmath=sse -D_FILE_OFFSET_BITS=64" ;;
    windows) echo "-ffp-contract=off -D_FILE_OFFSET_BITS=64" ;;
    *) echo "-ffp-contract=off" ;;
  esac
}
