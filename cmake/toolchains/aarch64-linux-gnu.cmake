# Cross-compile for 64-bit Arm Linux with Debian's g++-aarch64-linux-gnu. Tests run under
# qemu-user (set QEMU_CPU=cortex-a53|neoverse-n1|max to pick the emulated core).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)

set(MMLA_CROSS_PREFIX aarch64-linux-gnu- CACHE STRING "Cross toolchain prefix")
set(CMAKE_C_COMPILER ${MMLA_CROSS_PREFIX}gcc)
set(CMAKE_CXX_COMPILER ${MMLA_CROSS_PREFIX}g++)

set(MMLA_SYSROOT /usr/aarch64-linux-gnu CACHE PATH "Target root for libraries and the emulator")
set(CMAKE_FIND_ROOT_PATH ${MMLA_SYSROOT})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# CTest and add_test() run target binaries through this.
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64;-L;${MMLA_SYSROOT})
