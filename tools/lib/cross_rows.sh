# The cross rows: builds for another CPU, run under qemu-user on this x86-64 machine.
# One table, sourced by tools/setup.sh, tools/build.sh, tools/test.sh, tools/golden.sh,
# tools/golden_ci.sh and tests/cases_test.sh: a new row is an entry in each function below
# plus a two-line toolchain file in cmake/ named after its GNU triple. arm64 has its own
# test rows (NEON targets, two qemu CPUs, the npm package's addon); the portable rows
# (CROSS_PORTABLE_ROWS) build the ref and scalar targets only and run the same checks: the
# kernel, core, loader and byte-order tests, the committed graphs and the ONNX node cases.
CROSS_ROWS="arm64 s390x i686 riscv64"
CROSS_PORTABLE_ROWS="s390x i686 riscv64"

cross_triple() {  # ROW -> the GNU triple of its compiler and C library (/usr/TRIPLE)
  case "$1" in
    arm64) echo aarch64-linux-gnu ;;
    s390x) echo s390x-linux-gnu ;;
    i686) echo i686-linux-gnu ;;
    riscv64) echo riscv64-linux-gnu ;;
    *) echo "cross_rows: unknown cross row '$1'" >&2; return 1 ;;
  esac
}

cross_runner() {  # ROW -> the command that runs one of its programs (qemu-ARCH -L /usr/TRIPLE)
  local triple arch
  triple=$(cross_triple "$1") || return 1
  arch=${triple%%-*}
  case "$arch" in i?86) arch=i386 ;; esac
  echo "qemu-$arch -L /usr/$triple"
}

# The Catch2 tags a portable row runs in CI. [ftz] tests the flush-to-zero mode of the
# host: s390x and RISC-V have none (their rows count those cases as skipped).
cross_focus() {
  case "$1" in
    i686) echo "[kernels],[core],[loader],[endian],[golden]" ;;
    *) echo "[kernels],[core]~[ftz],[loader],[endian],[golden]" ;;
  esac
}

# Link flags of a row's programs. i686 links statically: a dynamically linked threaded
# i386 program hangs in glibc's start-up under qemu-i386 7.2 (a static one runs).
cross_link_flags() {
  case "$1" in i686) echo "-static" ;; *) echo "" ;; esac
}

# Compiler flags for protobuf-lite of the row (tools/setup.sh), as CMakeLists.txt sets for
# the row's own sources.
cross_pb_flags() {
  case "$1" in
    i686) echo "-ffp-contract=off -msse2 -mfpmath=sse -D_FILE_OFFSET_BITS=64" ;;
    *) echo "-ffp-contract=off" ;;
  esac
}
