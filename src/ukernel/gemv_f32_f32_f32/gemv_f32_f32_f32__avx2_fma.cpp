// gemv_f32_f32_f32 for avx2: 8-float vectors (the body is gemv_f32_f32_f32.inc).
#if !defined(__AVX2__)
#error "this file must be compiled with the avx2 flags of cmake/kernels.cmake"
#endif

#define MMLA_GEMV_LANES 8
#define MMLA_GEMV_REGS 16
#include "ukernel/gemv_f32_f32_f32/gemv_f32_f32_f32.inc"

namespace mmla::ukernel {

extern const GemvKernel gemv_f32_f32_f32__avx2_fma =
    gemv_kernel("gemv_f32_f32_f32__avx2_fma", cpu::Isa::avx2);

}  // namespace mmla::ukernel
