// 8x12 fp32 kernel for Advanced SIMD (armv8-a): 24 q-register accumulators, 2 q of A and 3 q of B
// per k-step, FMLA by lane (24 FMAs per 5 loads), 29 of the 32 vector registers.
#if !defined(__ARM_NEON)
#error "this file must be compiled for AArch64 with Advanced SIMD (see cmake/kernels.cmake)"
#endif

#include <arm_neon.h>

#include "ukernel/pack/pack_f32.hpp"
#include "ukernel/tile_store.hpp"
#include "ukernel/ukernel.hpp"

namespace mmla::ukernel {
namespace {

constexpr int kMr = 8, kNr = 12;

void run(std::size_t m, std::size_t n, std::size_t kp, const void* ap_v, const void* bp_v,
         std::ptrdiff_t b_ks, float* c, std::ptrdiff_t c_rs, std::ptrdiff_t c_cs, float alpha, float beta) {
  const float* ap = static_cast<const float*>(ap_v);
  const float* bp = static_cast<const float*>(bp_v);
  prefetch_c_tile(m, n, c, c_rs, c_cs);
  // 24 named accumulators: with an array GCC 12 keeps a stack copy in step (12 stores per k-step).
#define MMLA_ZERO3(r) float32x4_t c##r##0 = vdupq_n_f32(0.0f), c##r##1 = c##r##0, c##r##2 = c##r##0
  MMLA_ZERO3(0);
  MMLA_ZERO3(1);
  MMLA_ZERO3(2);
  MMLA_ZERO3(3);
  MMLA_ZERO3(4);
  MMLA_ZERO3(5);
  MMLA_ZERO3(6);
  MMLA_ZERO3(7);
#undef MMLA_ZERO3
  // Unrolled by two: Neoverse N1 dispatches 4 instructions a cycle, and the loop's own adds and
  // branch would otherwise cost it 8% of its FMA rate (llvm-mca, docs/kernels.md).
#pragma GCC unroll 2
  for (std::size_t kk = 0; kk < kp; ++kk) {
    const float32x4_t a0 = vld1q_f32(ap), a1 = vld1q_f32(ap + 4);
    const float32x4_t b0 = vld1q_f32(bp), b1 = vld1q_f32(bp + 4), b2 = vld1q_f32(bp + 8);
    // One row of C: its A value (a lane of a0/a1) times the 12 B values.
#define MMLA_ROW(r, a, lane)                       \
  c##r##0 = vfmaq_laneq_f32(c##r##0, b0, a, lane); \
  c##r##1 = vfmaq_laneq_f32(c##r##1, b1, a, lane); \
  c##r##2 = vfmaq_laneq_f32(c##r##2, b2, a, lane)
    MMLA_ROW(0, a0, 0);
    MMLA_ROW(1, a0, 1);
    MMLA_ROW(2, a0, 2);
    MMLA_ROW(3, a0, 3);
    MMLA_ROW(4, a1, 0);
    MMLA_ROW(5, a1, 1);
    MMLA_ROW(6, a1, 2);
    MMLA_ROW(7, a1, 3);
#undef MMLA_ROW
    ap += kMr;
    bp += b_ks;
  }
  // The tile goes through an L1 buffer once per call (96 floats against kp x 24 FMAs).
  float tile[kMr * kNr];
#define MMLA_SAVE(r)                      \
  vst1q_f32(tile + (r)*kNr + 0, c##r##0); \
  vst1q_f32(tile + (r)*kNr + 4, c##r##1); \
  vst1q_f32(tile + (r)*kNr + 8, c##r##2)
  MMLA_SAVE(0);
  MMLA_SAVE(1);
  MMLA_SAVE(2);
  MMLA_SAVE(3);
  MMLA_SAVE(4);
  MMLA_SAVE(5);
  MMLA_SAVE(6);
  MMLA_SAVE(7);
#undef MMLA_SAVE
  store_tile_neon(m, n, tile, kMr, kNr, c, c_rs, c_cs, alpha, beta);
}

}  // namespace

extern const GemmKernel gemm_f32_f32p_f32p_8x12__neon_fma{"gemm_f32_f32p_f32p_8x12__neon_fma",
                                                          Family::gemm_f32_f32p_f32p,
                                                          cpu::Isa::neon,
                                                          kMr,
                                                          kNr,
                                                          1,
                                                          sizeof(float),
                                                          {pack_f32_r8, pack_bf16_f32_r8},
                                                          {pack_f32_r12, pack_bf16_f32_r12},
                                                          run};

}  // namespace mmla::ukernel
