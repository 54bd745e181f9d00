# Cross toolchain for the riscv64 row (RV64GC): Debian's g++-riscv64-linux-gnu, run under
# qemu-riscv64.
set(ONEMODEL_CROSS_TRIPLE riscv64-linux-gnu)
include(${CMAKE_CURRENT_LIST_DIR}/cross.cmake)
