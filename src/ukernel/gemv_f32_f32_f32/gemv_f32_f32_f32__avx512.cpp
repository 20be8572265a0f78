// gemv_f32_f32_f32 for avx512: 16-float vectors (the body is gemv_f32_f32_f32.inc).
#if !defined(__AVX512F__)
#error "this file must be compiled with the avx512 flags of cmake/kernels.cmake"
#endif

#define MMLA_GEMV_LANES 16
#define MMLA_GEMV_REGS 32
#include "ukernel/gemv_f32_f32_f32/gemv_f32_f32_f32.inc"

namespace mmla::ukernel {

extern const GemvKernel gemv_f32_f32_f32__avx512 = gemv_kernel("gemv_f32_f32_f32__avx512", cpu::Isa::avx512);

}  // namespace mmla::ukernel
