// 8x12 kernel for Armv8.6 BF16 (BFMMLA) on the c4 layout of pack_bf16.hpp: each BFMMLA multiplies a
// 2x4 bf16 block of A (a row pair, four depths) by a 4x2 block of B into a 2x2 fp32 block of C, 16
// multiply-adds per instruction. 24 accumulators (4 row pairs x 6 column pairs), 4 A registers and
// one B register at a time: 29 of the 32 vector registers; per four depths 24 BFMMLA, 10 loads.
// BFMMLA without FEAT_EBF16 flushes denormals and rounds its internal sums to odd
// (docs/numerics.md).
#if !defined(__ARM_FEATURE_BF16_VECTOR_ARITHMETIC) || !defined(__aarch64__)
#error "this file must be compiled with -march=armv8.6-a+bf16 (see cmake/kernels.cmake)"
#endif

#include <arm_neon.h>

#include <cstdint>

#include "ukernel/pack/pack_bf16.hpp"
#include "ukernel/tile_store.hpp"
#include "ukernel/ukernel.hpp"

namespace mmla::ukernel {
namespace {

constexpr int kMr = 8, kNr = 12;

// kp is a multiple of 4; B is always packed (KR > 1), so b_ks is not used.
void run(std::size_t m, std::size_t n, std::size_t kp, const void* ap_v, const void* bp_v, std::ptrdiff_t,
         float* c, std::ptrdiff_t c_rs, std::ptrdiff_t c_cs, float alpha, float beta) {
  const auto* ap = static_cast<const std::uint16_t*>(ap_v);
  const auto* bp = static_cast<const std::uint16_t*>(bp_v);
  for (std::size_t i = 0; i < m; ++i) {
    __builtin_prefetch(c + static_cast<std::ptrdiff_t>(i) * c_rs, 1);
    __builtin_prefetch(c + static_cast<std::ptrdiff_t>(i) * c_rs + (n - 1) * c_cs, 1);
  }
  // The k-loop is written in assembly: with intrinsics GCC 12 hoists all six B loads, runs out of
  // the 32 vector registers and spills (llvm-mca then gave 48-60% of peak). Accumulator for row
  // pair i, column pair j is v(8 + 6i + j); A in v0-v3, B alternating v4/v5. Plain offset loads and
  // one add per pointer: post-indexed loads cost extra micro-ops (V2 dispatch-bound at 60%).
  float acc[4 * 6 * 4];
  std::size_t chunks = kp / 4;
  asm volatile(
      "  movi v8.4s, #0\n"
      "  mov v9.16b, v8.16b\n"
      "  mov v10.16b, v8.16b\n"
      "  mov v11.16b, v8.16b\n"
      "  mov v12.16b, v8.16b\n"
      "  mov v13.16b, v8.16b\n"
      "  mov v14.16b, v8.16b\n"
      "  mov v15.16b, v8.16b\n"
      "  mov v16.16b, v8.16b\n"
      "  mov v17.16b, v8.16b\n"
      "  mov v18.16b, v8.16b\n"
      "  mov v19.16b, v8.16b\n"
      "  mov v20.16b, v8.16b\n"
      "  mov v21.16b, v8.16b\n"
      "  mov v22.16b, v8.16b\n"
      "  mov v23.16b, v8.16b\n"
      "  mov v24.16b, v8.16b\n"
      "  mov v25.16b, v8.16b\n"
      "  mov v26.16b, v8.16b\n"
      "  mov v27.16b, v8.16b\n"
      "  mov v28.16b, v8.16b\n"
      "  mov v29.16b, v8.16b\n"
      "  mov v30.16b, v8.16b\n"
      "  mov v31.16b, v8.16b\n"
      "  cbz %[chunks], 2f\n"
      "1:\n"
      "  ldp q0, q1, [%[a]]\n"
      "  ldp q2, q3, [%[a], #32]\n"
      "  ldr q4, [%[b], #0]\n"
      "  bfmmla v8.4s, v0.8h, v4.8h\n"
      "  bfmmla v14.4s, v1.8h, v4.8h\n"
      "  bfmmla v20.4s, v2.8h, v4.8h\n"
      "  bfmmla v26.4s, v3.8h, v4.8h\n"
      "  ldr q5, [%[b], #16]\n"
      "  bfmmla v9.4s, v0.8h, v5.8h\n"
      "  bfmmla v15.4s, v1.8h, v5.8h\n"
      "  bfmmla v21.4s, v2.8h, v5.8h\n"
      "  bfmmla v27.4s, v3.8h, v5.8h\n"
      "  ldr q4, [%[b], #32]\n"
      "  bfmmla v10.4s, v0.8h, v4.8h\n"
      "  bfmmla v16.4s, v1.8h, v4.8h\n"
      "  bfmmla v22.4s, v2.8h, v4.8h\n"
      "  bfmmla v28.4s, v3.8h, v4.8h\n"
      "  ldr q5, [%[b], #48]\n"
      "  bfmmla v11.4s, v0.8h, v5.8h\n"
      "  bfmmla v17.4s, v1.8h, v5.8h\n"
      "  bfmmla v23.4s, v2.8h, v5.8h\n"
      "  bfmmla v29.4s, v3.8h, v5.8h\n"
      "  ldr q4, [%[b], #64]\n"
      "  bfmmla v12.4s, v0.8h, v4.8h\n"
      "  bfmmla v18.4s, v1.8h, v4.8h\n"
      "  bfmmla v24.4s, v2.8h, v4.8h\n"
      "  bfmmla v30.4s, v3.8h, v4.8h\n"
      "  ldr q5, [%[b], #80]\n"
      "  bfmmla v13.4s, v0.8h, v5.8h\n"
      "  bfmmla v19.4s, v1.8h, v5.8h\n"
      "  bfmmla v25.4s, v2.8h, v5.8h\n"
      "  bfmmla v31.4s, v3.8h, v5.8h\n"
      "  add %[a], %[a], #64\n"
      "  add %[b], %[b], #96\n"
      "  subs %[chunks], %[chunks], #1\n"
      "  b.ne 1b\n"
      "2:\n"
      "  stp q8, q9, [%[out], #0]\n"
      "  stp q10, q11, [%[out], #32]\n"
      "  stp q12, q13, [%[out], #64]\n"
      "  stp q14, q15, [%[out], #96]\n"
      "  stp q16, q17, [%[out], #128]\n"
      "  stp q18, q19, [%[out], #160]\n"
      "  stp q20, q21, [%[out], #192]\n"
      "  stp q22, q23, [%[out], #224]\n"
      "  stp q24, q25, [%[out], #256]\n"
      "  stp q26, q27, [%[out], #288]\n"
      "  stp q28, q29, [%[out], #320]\n"
      "  stp q30, q31, [%[out], #352]\n"
      : [a] "+r"(ap), [b] "+r"(bp), [chunks] "+r"(chunks)
      : [out] "r"(acc)
      : "memory", "cc", "v0", "v1", "v2", "v3", "v4", "v5", "v8", "v9", "v10", "v11", "v12", "v13", "v14",
        "v15", "v16", "v17", "v18", "v19", "v20", "v21", "v22", "v23", "v24", "v25", "v26", "v27", "v28",
        "v29", "v30", "v31");
  // Accumulator (i, j) is [C(2i, 2j), C(2i, 2j+1), C(2i+1, 2j), C(2i+1, 2j+1)]: unzip into a row-major tile.
  float tile[kMr * kNr];
  for (int pi = 0; pi < 4; ++pi)
    for (int pj = 0; pj < 6; ++pj) {
      const float* q = acc + (pi * 6 + pj) * 4;
      tile[(2 * pi) * kNr + 2 * pj] = q[0];
      tile[(2 * pi) * kNr + 2 * pj + 1] = q[1];
      tile[(2 * pi + 1) * kNr + 2 * pj] = q[2];
      tile[(2 * pi + 1) * kNr + 2 * pj + 1] = q[3];
    }
  store_tile_neon(m, n, tile, kMr, kNr, c, c_rs, c_cs, alpha, beta);
}

}  // namespace

extern const GemmKernel gemm_f32_bf16p_bf16p_8x12c4__neon_bfmmla{"gemm_f32_bf16p_bf16p_8x12c4__neon_bfmmla",
                                                                 Family::gemm_f32_bf16p_bf16p,
                                                                 cpu::Isa::bf16,
                                                                 kMr,
                                                                 kNr,
                                                                 4,
                                                                 sizeof(std::uint16_t),
                                                                 {pack_f32_bf16c4_r8, pack_bf16_bf16c4_r8},
                                                                 {pack_f32_bf16c4_r12, pack_bf16_bf16c4_r12},
                                                                 run};

}  // namespace mmla::ukernel
