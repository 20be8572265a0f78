# The one list of micro-kernels and the compiler flags of each ISA level.
#
# Adding a kernel = one new file under src/ukernel/ + one mmla_kernel() line here. The file's base
# name is the kernel's variant name and the name of its descriptor; the registry is generated from
# this list, so nothing else needs editing. The ISA a kernel *requires at run time* is written only
# in its descriptor; the flags below only say how to compile it.

set(MMLA_KERNEL_SOURCES "")
set(MMLA_KERNEL_NAMES "")

# ISA levels per architecture, lowest first; the tests run once under MMLA_ISA=<each>. The same
# list is src/cpu/cpu.cpp's kLevels (a test checks that they agree).
set(MMLA_ISA_LEVELS_x86_64 ref avx2 avx512 avx512bf16 amx)
set(MMLA_ISA_LEVELS_arm64 ref neon dotprod bf16 i8mm sve)
set(MMLA_ISA_LEVELS_generic ref)
set(MMLA_ISA_LEVELS ${MMLA_ISA_LEVELS_${MMLA_ARCH}})

# Compile flags per ISA level (the baseline needs none).
set(MMLA_ISA_FLAGS_ref "")
# -ffp-contract=fast lets code written with + and * (the GEMV bodies) use FMA, as the intrinsic
# kernels do; the accuracy bound only improves.
set(MMLA_ISA_FLAGS_avx2 -mavx2 -mfma -ffp-contract=fast)
set(MMLA_ISA_FLAGS_avx512 -mavx2 -mfma -mavx512f -mavx512bw -mavx512dq -mavx512vl -ffp-contract=fast)
set(MMLA_ISA_FLAGS_neon -ffp-contract=fast)  # Advanced SIMD is part of armv8-a
set(MMLA_ISA_FLAGS_avx512bf16 ${MMLA_ISA_FLAGS_avx512} -mavx512bf16)
set(MMLA_ISA_FLAGS_amx ${MMLA_ISA_FLAGS_avx512bf16} -mamx-tile -mamx-bf16)
if(NOT DEFINED MMLA_ISA_FLAGS_bf16)  # a toolchain file may spell it its own way (zig)
  set(MMLA_ISA_FLAGS_bf16 -march=armv8.6-a+bf16 -ffp-contract=fast)
endif()

# mmla_kernel(<arch> <isa> <path>): arch is x86_64, arm64 or any.
macro(mmla_kernel arch isa path)
  if("${arch}" STREQUAL "any" OR "${arch}" STREQUAL "${MMLA_ARCH}")
    list(APPEND MMLA_KERNEL_SOURCES ${path})
    get_filename_component(_name ${path} NAME_WE)
    list(APPEND MMLA_KERNEL_NAMES ${_name})
    if(NOT "${MMLA_ISA_FLAGS_${isa}}" STREQUAL "")
      set_property(SOURCE ${path} APPEND PROPERTY COMPILE_OPTIONS ${MMLA_ISA_FLAGS_${isa}})
    endif()
    # Kernels never throw. With exceptions on, the sanitizer build gives an inlined tile store's
    # stack buffer an exception cleanup, and the object then defines a weak personality symbol
    # (DW.ref.__gxx_personality_v0), which kernel objects must not (tests/check_kernel_symbols.cmake).
    set_property(SOURCE ${path} APPEND PROPERTY COMPILE_OPTIONS -fno-exceptions)
  endif()
endmacro()

mmla_kernel(any    ref    src/ukernel/ref/gemm_f32_f32p_f32p_4x8__ref.cpp)
mmla_kernel(x86_64 avx2   src/ukernel/gemm_f32_f32p_f32p/gemm_f32_f32p_f32p_6x16__avx2_fma.cpp)
mmla_kernel(x86_64 avx512 src/ukernel/gemm_f32_f32p_f32p/gemm_f32_f32p_f32p_8x48__avx512.cpp)
mmla_kernel(x86_64 avx512 src/ukernel/gemm_f32_f32p_f32p/gemm_f32_f32p_f32p_12x32__avx512.cpp)
mmla_kernel(arm64  neon   src/ukernel/gemm_f32_f32p_f32p/gemm_f32_f32p_f32p_8x12__neon_fma.cpp)
mmla_kernel(any    ref    src/ukernel/ref/gemv_f32_f32_f32__ref.cpp)
mmla_kernel(any    ref    src/ukernel/ref/gemm_f32_bf16p_bf16p_4x4c4__ref.cpp)
mmla_kernel(arm64  bf16   src/ukernel/gemm_f32_bf16p_bf16p/gemm_f32_bf16p_bf16p_8x12c4__neon_bfmmla.cpp)
mmla_kernel(x86_64 avx512bf16 src/ukernel/gemm_f32_bf16p_bf16p/gemm_f32_bf16p_bf16p_8x48c2__avx512bf16.cpp)
mmla_kernel(x86_64 avx512bf16 src/ukernel/gemm_f32_bf16p_bf16p/gemm_f32_bf16p_bf16p_12x32c2__avx512bf16.cpp)
mmla_kernel(x86_64 amx    src/ukernel/gemm_f32_bf16p_bf16p/gemm_f32_bf16p_bf16p_32x32c32__amx.cpp)
mmla_kernel(x86_64 avx2   src/ukernel/gemv_f32_f32_f32/gemv_f32_f32_f32__avx2_fma.cpp)
mmla_kernel(x86_64 avx512 src/ukernel/gemv_f32_f32_f32/gemv_f32_f32_f32__avx512.cpp)
mmla_kernel(arm64  neon   src/ukernel/gemv_f32_f32_f32/gemv_f32_f32_f32__neon.cpp)

# The registry's list of descriptors, generated from the lines above; the name's operation prefix
# (gemm_, gemv_) says which descriptor type it is.
set(_decls "")
foreach(_k ${MMLA_KERNEL_NAMES})
  string(REGEX MATCH "^[a-z]+" _op ${_k})
  string(TOUPPER ${_op} _op)
  string(APPEND _decls "MMLA_${_op}_KERNEL(${_k})\n")
endforeach()
file(CONFIGURE OUTPUT ${PROJECT_BINARY_DIR}/generated/mmla_kernel_list.inc
  CONTENT "// Generated from cmake/kernels.cmake: one line per compiled micro-kernel.\n${_decls}")

