// gemv_f32_f32_f32 for avx2: 8-float vectors (the body is gemv_f32_f32_f32.inc).
#if !defined(__AVX2__)
#error "this file must be compiled with the avx2 flags of cmake/kernels.cmake"
#endif

#define MMLA_GEMV_LANES 8
#define MMLA_GEMV_REGS 16
#include "ukernel/gemv_f32_f32_f32/gemv_f32_f32_f32.inc"
#include "ukernel/ukernel.hpp"

namespace mmla::ukernel {

extern const GemvKernel gemv_f32_f32_f32__avx2_fma{"gemv_f32_f32_f32__avx2_fma",
                                                   Family::gemv_f32_f32_f32,
                                                   cpu::Isa::avx2,
                                                   gemv_axpy_f32,
                                                   gemv_dot_f32,
                                                   gemv_axpy_panels4,
                                                   gemv_axpy_bf16,
                                                   gemv_dot_bf16,
                                                   gemv_axpy_bf16c2,
                                                   gemv_dots_f32,
                                                   gemv_dots_bf16};

}  // namespace mmla::ukernel
