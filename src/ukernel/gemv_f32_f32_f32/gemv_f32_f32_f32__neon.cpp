// gemv_f32_f32_f32 for neon: 4-float vectors (the body is gemv_f32_f32_f32.inc).
#if !defined(__ARM_NEON)
#error "this file must be compiled with the neon flags of cmake/kernels.cmake"
#endif

#define MMLA_GEMV_LANES 4
#define MMLA_GEMV_REGS 32
#include "ukernel/gemv_f32_f32_f32/gemv_f32_f32_f32.inc"

namespace mmla::ukernel {

extern const GemvKernel gemv_f32_f32_f32__neon = gemv_kernel("gemv_f32_f32_f32__neon", cpu::Isa::neon);

}  // namespace mmla::ukernel
