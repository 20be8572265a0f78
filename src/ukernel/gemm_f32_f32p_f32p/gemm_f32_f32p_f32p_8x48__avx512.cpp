// 8x48 fp32 kernel for AVX-512F: 24 zmm accumulators; per k-step 3 zmm loads of B and 8
// broadcasts of A feed 24 FMAs (the body is gemm_f32_f32p_f32p_avx512.inc).
#if !defined(__AVX512F__)
#error "this file must be compiled with -mavx512f (see cmake/kernels.cmake)"
#endif

#define MMLA_MR 8
#define MMLA_NV 3
#include "ukernel/gemm_f32_f32p_f32p/gemm_f32_f32p_f32p_avx512.inc"
#include "ukernel/pack/pack_f32.hpp"
#include "ukernel/ukernel.hpp"

namespace mmla::ukernel {
extern const GemmKernel gemm_f32_f32p_f32p_8x48__avx512{"gemm_f32_f32p_f32p_8x48__avx512",
                                                        Family::gemm_f32_f32p_f32p,
                                                        cpu::Isa::avx512,
                                                        kMr,
                                                        kNr,
                                                        1,
                                                        sizeof(float),
                                                        {pack_f32_r8, pack_bf16_f32_r8},
                                                        {pack_b_f32<pack_f32_r48>, pack_bf16_f32_r48},
                                                        run,
                                                        nullptr,
                                                        nullptr,
                                                        run_pack_b,
                                                        run_a_in_place,
                                                        kPartialInPlaceCols};

}  // namespace mmla::ukernel
