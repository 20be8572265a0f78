// 12x32 fp32 kernel for AVX-512F: 24 zmm accumulators; per k-step 2 zmm loads of B and 12
// broadcasts of A feed 24 FMAs (the body is gemm_f32_f32p_f32p_avx512.inc).
#if !defined(__AVX512F__)
#error "this file must be compiled with -mavx512f (see cmake/kernels.cmake)"
#endif

#define MMLA_MR 12
#define MMLA_NV 2
#include "ukernel/gemm_f32_f32p_f32p/gemm_f32_f32p_f32p_avx512.inc"
#include "ukernel/pack/pack_f32.hpp"
#include "ukernel/ukernel.hpp"

namespace mmla::ukernel {
extern const GemmKernel gemm_f32_f32p_f32p_12x32__avx512{"gemm_f32_f32p_f32p_12x32__avx512",
                                                         Family::gemm_f32_f32p_f32p,
                                                         cpu::Isa::avx512,
                                                         kMr,
                                                         kNr,
                                                         1,
                                                         sizeof(float),
                                                         {pack_f32_r12, pack_bf16_f32_r12},
                                                         {pack_b_f32<pack_f32_r32>, pack_bf16_f32_r32},
                                                         run,
                                                         nullptr,
                                                         nullptr,
                                                         run_pack_b,
                                                         run_a_in_place,
                                                         kPartialInPlaceCols};

}  // namespace mmla::ukernel
