// 8x48 bf16 kernel for AVX512_BF16 on the c2 layout: 24 zmm accumulators; per depth pair 3 zmm loads
// of B and 8 broadcasts of A (one dword: the row's two bf16) feed 24 VDPBF16PS (the body and the
// packers are gemm_f32_bf16p_bf16p_avx512bf16.inc).
#if !defined(__AVX512BF16__) || !defined(__AVX512BW__) || !defined(__AVX512DQ__) || !defined(__AVX512VL__)
#error "this file must be compiled with the avx512bf16 flags of cmake/kernels.cmake"
#endif

#define MMLA_MR 8
#define MMLA_NV 3
#include "ukernel/gemm_f32_bf16p_bf16p/gemm_f32_bf16p_bf16p_avx512bf16.inc"
#include "ukernel/ukernel.hpp"

namespace mmla::ukernel {

extern const GemmKernel gemm_f32_bf16p_bf16p_8x48c2__avx512bf16{"gemm_f32_bf16p_bf16p_8x48c2__avx512bf16",
                                                                Family::gemm_f32_bf16p_bf16p,
                                                                cpu::Isa::avx512bf16,
                                                                kMr,
                                                                kNr,
                                                                2,
                                                                sizeof(std::uint16_t),
                                                                {pack_a_f32, pack_a_bf16},
                                                                {pack_b_f32, pack_b_bf16},
                                                                run,
                                                                nullptr,
                                                                nullptr,
                                                                run_pack_b,
                                                                run_a_in_place};

}  // namespace mmla::ukernel
