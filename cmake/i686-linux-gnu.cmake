# Cross toolchain for the i686 row (32-bit x86; CMakeLists.txt adds -msse2 -mfpmath=sse):
# Debian's g++-i686-linux-gnu, run under qemu-i386 or the x86-64 kernel's 32-bit mode.
set(ONEMODEL_CROSS_TRIPLE i686-linux-gnu)
include(${CMAKE_CURRENT_LIST_DIR}/cross.cmake)
