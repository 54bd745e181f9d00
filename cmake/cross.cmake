# Shared body of the Linux cross toolchains (one two-line file per triple sets
# ONEMODEL_CROSS_TRIPLE and includes this; CMake re-reads a toolchain file in every
# try_compile, so the triple lives in the file, not on the command line). Debian's
# g++-TRIPLE brings the C library under /usr/TRIPLE; programs run under qemu-user
# (tools/test.sh: qemu-ARCH -L /usr/TRIPLE).
string(REGEX MATCH "^[^-]+" _onemodel_arch "${ONEMODEL_CROSS_TRIPLE}")
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR ${_onemodel_arch})
set(CMAKE_C_COMPILER ${ONEMODEL_CROSS_TRIPLE}-gcc)
set(CMAKE_CXX_COMPILER ${ONEMODEL_CROSS_TRIPLE}-g++)
set(CMAKE_FIND_ROOT_PATH /usr/${ONEMODEL_CROSS_TRIPLE})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(_onemodel_qemu ${_onemodel_arch})
if(_onemodel_arch MATCHES "^i[3-6]86$")
  set(_onemodel_qemu i386)
endif()
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-${_onemodel_qemu};-L;/usr/${ONEMODEL_CROSS_TRIPLE})
