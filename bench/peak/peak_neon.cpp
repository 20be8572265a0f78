// fp32 FMA peak and read bandwidth with Advanced SIMD (part of the armv8-a baseline).
#if !defined(__ARM_NEON)
#error "peak_neon.cpp needs Advanced SIMD"
#endif
#include <arm_neon.h>

#include "peak_kernels.hpp"
#define MMLA_PEAK_LANES 4
#include "peak_common.inc"

namespace mmla_bench::peak {

float fma_f32_neon(int64_t iters) {
  // acc = y + acc * x converges to 1: no overflow, no subnormals. 24 accumulators + x + y = 26 of
  // the 32 q registers; distinct starting values so that no two chains are provably equal.
  const float32x4_t x = vdupq_n_f32(0.999999f), y = vdupq_n_f32(1e-6f);
#define MMLA_ACC(i) float32x4_t a##i = vdupq_n_f32(0.01f * i)
  MMLA_PEAK_ACCS_24(MMLA_ACC);
#undef MMLA_ACC
  for (int64_t it = 0; it < iters; ++it) {
#define MMLA_FMA(i) a##i = vfmaq_f32(y, a##i, x)
    MMLA_PEAK_ACCS_24(MMLA_FMA);
#undef MMLA_FMA
  }
  float32x4_t s = vdupq_n_f32(0.0f);
#define MMLA_SUM(i) s = vaddq_f32(s, a##i)
  MMLA_PEAK_ACCS_24(MMLA_SUM);
#undef MMLA_SUM
  return vaddvq_f32(s);
}

float sum_f32_neon(const float* p, size_t n) { return sum_f32(p, n); }

}  // namespace mmla_bench::peak
