// bf16 matrix-multiply peak with BFMMLA (compiled with -march=armv8.2-a+bf16).
#if !defined(__ARM_FEATURE_BF16_VECTOR_ARITHMETIC)
#error "peak_neon_bf16.cpp must be compiled with +bf16"
#endif
#include <arm_neon.h>

#include "peak_kernels.hpp"

// Applies OP to the index of every accumulator.
#define MMLA_FOR_EACH_ACC(OP) \
  OP(0);                      \
  OP(1);                      \
  OP(2);                      \
  OP(3);                      \
  OP(4);                      \
  OP(5);                      \
  OP(6);                      \
  OP(7);                      \
  OP(8);                      \
  OP(9);                      \
  OP(10);                     \
  OP(11);                     \
  OP(12);                     \
  OP(13);                     \
  OP(14);                     \
  OP(15);                     \
  OP(16);                     \
  OP(17);                     \
  OP(18);                     \
  OP(19);                     \
  OP(20);                     \
  OP(21);                     \
  OP(22);                     \
  OP(23)

namespace mmla_bench::peak {

float mmla_bf16_neon(int64_t iters) {
  // Each BFMMLA adds a 2x4 by 4x2 bf16 product (2 x 2 outputs x 4 products x 2 = 32 flops) to
  // a 2x2 fp32 tile; with every input 2^-10 each accumulator grows by 2^-18 per iteration.
  const bfloat16x8_t x = vreinterpretq_bf16_u16(vdupq_n_u16(0x3A80));  // bf16 2^-10
  const bfloat16x8_t y = x;
#define MMLA_ACC(i) float32x4_t a##i = vdupq_n_f32(0.01f * i)
  MMLA_FOR_EACH_ACC(MMLA_ACC);
#undef MMLA_ACC
  for (int64_t it = 0; it < iters; ++it) {
#define MMLA_MMLA(i) a##i = vbfmmlaq_f32(a##i, x, y)
    MMLA_FOR_EACH_ACC(MMLA_MMLA);
#undef MMLA_MMLA
  }
  float32x4_t s = vaddq_f32(vaddq_f32(a0, a1), vaddq_f32(a2, a3));
  s = vaddq_f32(s, vaddq_f32(vaddq_f32(a4, a5), vaddq_f32(a6, a7)));
  s = vaddq_f32(s, vaddq_f32(vaddq_f32(a8, a9), vaddq_f32(a10, a11)));
  s = vaddq_f32(s, vaddq_f32(vaddq_f32(a12, a13), vaddq_f32(a14, a15)));
  s = vaddq_f32(s, vaddq_f32(vaddq_f32(a16, a17), vaddq_f32(a18, a19)));
  s = vaddq_f32(s, vaddq_f32(vaddq_f32(a20, a21), vaddq_f32(a22, a23)));
  return vaddvq_f32(s);
}

}  // namespace mmla_bench::peak
