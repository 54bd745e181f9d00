# Cross toolchain for the s390x row (big-endian): Debian's g++-s390x-linux-gnu, run under
# qemu-s390x.
set(ONEMODEL_CROSS_TRIPLE s390x-linux-gnu)
include(${CMAKE_CURRENT_LIST_DIR}/cross.cmake)
