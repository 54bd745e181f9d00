# Cross toolchain for the arm64 row: Debian's g++-aarch64-linux-gnu, run under qemu-aarch64.
set(ONEMODEL_CROSS_TRIPLE aarch64-linux-gnu)
include(${CMAKE_CURRENT_LIST_DIR}/cross.cmake)
