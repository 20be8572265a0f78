// gemv_f32_f32_f32 for ref: 1-float vectors (the body is gemv_f32_f32_f32.inc).
#define MMLA_GEMV_LANES 1
#define MMLA_GEMV_REGS 16
#include "ukernel/gemv_f32_f32_f32/gemv_f32_f32_f32.inc"
#include "ukernel/ukernel.hpp"

namespace mmla::ukernel {

extern const GemvKernel gemv_f32_f32_f32__ref{
    "gemv_f32_f32_f32__ref", Family::gemv_f32_f32_f32, cpu::Isa::ref, gemv_axpy_f32,    gemv_dot_f32,
    gemv_axpy_panels4,       gemv_axpy_bf16,           gemv_dot_bf16, gemv_axpy_bf16c2, gemv_dots_f32,
    gemv_dots_bf16};

}  // namespace mmla::ukernel
