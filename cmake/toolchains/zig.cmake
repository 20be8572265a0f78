# Build with `zig cc` / `zig c++` (clang + libc++, from PyPI's ziglang) for an older glibc than the
# host's, so that wheels get a broad manylinux tag: e.g. aarch64-linux-gnu.2.17 or
# x86_64-linux-gnu.2.17 link against glibc 2.17's symbol versions whatever the build machine has.
# Used by scripts/build-wheels.sh, which writes the wrappers MMLA_ZIG_BIN/{cc,c++,ar,ranlib}
# (CMake wants one executable per tool; `zig c++ -target T` is three words).
#
#   -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/zig.cmake -DMMLA_ZIG_BIN=<dir> -DMMLA_ZIG_PROCESSOR=aarch64
set(CMAKE_TRY_COMPILE_PLATFORM_VARIABLES MMLA_ZIG_BIN MMLA_ZIG_PROCESSOR)
if(NOT MMLA_ZIG_BIN OR NOT MMLA_ZIG_PROCESSOR)
  message(FATAL_ERROR "zig.cmake needs -DMMLA_ZIG_BIN=<wrapper dir> -DMMLA_ZIG_PROCESSOR=<aarch64|x86_64>")
endif()

set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR ${MMLA_ZIG_PROCESSOR})
set(CMAKE_C_COMPILER ${MMLA_ZIG_BIN}/cc)
set(CMAKE_CXX_COMPILER ${MMLA_ZIG_BIN}/c++)
set(CMAKE_AR ${MMLA_ZIG_BIN}/ar CACHE FILEPATH "")
set(CMAKE_RANLIB ${MMLA_ZIG_BIN}/ranlib CACHE FILEPATH "")

# zig's cc reads -march=X as a CPU name (it rejects armv8-a and x86-64); the same ISAs, its way.
# "generic" on aarch64 is armv8-a: no LSE atomics, so nothing SIGILLs on a v8.0 core.
if(MMLA_ZIG_PROCESSOR STREQUAL "aarch64")
  set(MMLA_BASELINE_FLAGS -mcpu=generic)
  set(MMLA_ISA_FLAGS_bf16 -mcpu=generic+v8_6a+bf16 -ffp-contract=fast)
  # the tests run under qemu-user with Debian's aarch64 glibc (newer than 2.17 is fine)
  set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64;-L;/usr/aarch64-linux-gnu)
else()
  set(MMLA_BASELINE_FLAGS -march=x86_64)
endif()

# Nothing from the build machine's /usr: zig brings the target's libc headers and stubs.
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
