// bf16 matrix-multiply peak with BFMMLA (compiled with -march=armv8.2-a+bf16).
#if !defined(__ARM_FEATURE_BF16_VECTOR_ARITHMETIC)
#error "peak_neon_bf16.cpp must be compiled with +bf16"
#endif
#include <arm_neon.h>

#include "peak_kernels.hpp"
#define MMLA_PEAK_LANES 4
#include "peak_common.inc"

namespace mmla_bench::peak {

float mmla_bf16_neon(int64_t iters) {
  // Each BFMMLA adds a 2x4 by 4x2 bf16 product (2 x 2 outputs x 4 products x 2 = 32 flops) to
  // a 2x2 fp32 tile; with every input 2^-10 each accumulator grows by 2^-18 per iteration.
  const bfloat16x8_t x = vreinterpretq_bf16_u16(vdupq_n_u16(0x3A80));  // bf16 2^-10
  const bfloat16x8_t y = x;
#define MMLA_ACC(i) float32x4_t a##i = vdupq_n_f32(0.01f * i)
  MMLA_PEAK_ACCS_24(MMLA_ACC);
#undef MMLA_ACC
  for (int64_t it = 0; it < iters; ++it) {
#define MMLA_MMLA(i) a##i = vbfmmlaq_f32(a##i, x, y)
    MMLA_PEAK_ACCS_24(MMLA_MMLA);
#undef MMLA_MMLA
  }
  float32x4_t s = vdupq_n_f32(0.0f);
#define MMLA_SUM(i) s = vaddq_f32(s, a##i)
  MMLA_PEAK_ACCS_24(MMLA_SUM);
#undef MMLA_SUM
  return vaddvq_f32(s);
}

}  // namespace mmla_bench::peak
