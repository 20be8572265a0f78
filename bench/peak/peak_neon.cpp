// fp32 FMA peak and read bandwidth with Advanced SIMD (part of the armv8-a baseline).
#if !defined(__ARM_NEON)
#error "peak_neon.cpp needs Advanced SIMD"
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

float fma_f32_neon(int64_t iters) {
  // acc = y + acc * x converges to 1: no overflow, no subnormals. 24 accumulators + x + y = 26 of
  // the 32 q registers; distinct starting values so that no two chains are provably equal.
  const float32x4_t x = vdupq_n_f32(0.999999f), y = vdupq_n_f32(1e-6f);
#define MMLA_ACC(i) float32x4_t a##i = vdupq_n_f32(0.01f * i)
  MMLA_FOR_EACH_ACC(MMLA_ACC);
#undef MMLA_ACC
  for (int64_t it = 0; it < iters; ++it) {
#define MMLA_FMA(i) a##i = vfmaq_f32(y, a##i, x)
    MMLA_FOR_EACH_ACC(MMLA_FMA);
#undef MMLA_FMA
  }
  float32x4_t s = vaddq_f32(vaddq_f32(a0, a1), vaddq_f32(a2, a3));
  s = vaddq_f32(s, vaddq_f32(vaddq_f32(a4, a5), vaddq_f32(a6, a7)));
  s = vaddq_f32(s, vaddq_f32(vaddq_f32(a8, a9), vaddq_f32(a10, a11)));
  s = vaddq_f32(s, vaddq_f32(vaddq_f32(a12, a13), vaddq_f32(a14, a15)));
  s = vaddq_f32(s, vaddq_f32(vaddq_f32(a16, a17), vaddq_f32(a18, a19)));
  s = vaddq_f32(s, vaddq_f32(vaddq_f32(a20, a21), vaddq_f32(a22, a23)));
  return vaddvq_f32(s);
}

float sum_f32_neon(const float* p, size_t n) {
  // 8 accumulators of 4 floats: 128 bytes per iteration.
  float32x4_t s0 = vdupq_n_f32(0), s1 = s0, s2 = s0, s3 = s0, s4 = s0, s5 = s0, s6 = s0, s7 = s0;
  size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    s0 = vaddq_f32(s0, vld1q_f32(p + i));
    s1 = vaddq_f32(s1, vld1q_f32(p + i + 4));
    s2 = vaddq_f32(s2, vld1q_f32(p + i + 8));
    s3 = vaddq_f32(s3, vld1q_f32(p + i + 12));
    s4 = vaddq_f32(s4, vld1q_f32(p + i + 16));
    s5 = vaddq_f32(s5, vld1q_f32(p + i + 20));
    s6 = vaddq_f32(s6, vld1q_f32(p + i + 24));
    s7 = vaddq_f32(s7, vld1q_f32(p + i + 28));
  }
  float tail = 0;
  for (; i < n; ++i) tail += p[i];
  const float32x4_t s = vaddq_f32(vaddq_f32(vaddq_f32(s0, s1), vaddq_f32(s2, s3)),
                                  vaddq_f32(vaddq_f32(s4, s5), vaddq_f32(s6, s7)));
  return vaddvq_f32(s) + tail;
}

}  // namespace mmla_bench::peak
