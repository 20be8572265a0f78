// gemv_f32_f32_f32 for ref: 1-float vectors (the body is gemv_f32_f32_f32.inc).
#define MMLA_GEMV_LANES 1
#define MMLA_GEMV_REGS 16
#include "ukernel/gemv_f32_f32_f32/gemv_f32_f32_f32.inc"

namespace mmla::ukernel {

extern const GemvKernel gemv_f32_f32_f32__ref = gemv_kernel("gemv_f32_f32_f32__ref", cpu::Isa::ref);

}  // namespace mmla::ukernel
