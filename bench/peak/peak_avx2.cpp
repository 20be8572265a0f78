// fp32 FMA peak and read bandwidth with 256-bit AVX2 + FMA3 (compiled with -mavx2 -mfma).
#if !defined(__AVX2__) || !defined(__FMA__)
#error "peak_avx2.cpp must be compiled with -mavx2 -mfma"
#endif
#include <immintrin.h>

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
  OP(11)

namespace mmla_bench::peak {

namespace {
float hsum(__m256 v) {
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, v);
  float s = 0;
  for (const float x : lanes) s += x;
  return s;
}
}  // namespace

float fma_f32_avx2(int64_t iters) {
  // acc = acc * x + y converges to 1: no overflow, no subnormals, whatever the iteration count.
  // 12 accumulators + x + y = 14 of the 16 ymm registers; distinct starting values so that no two
  // chains are provably equal.
  const __m256 x = _mm256_set1_ps(0.999999f), y = _mm256_set1_ps(1e-6f);
#define MMLA_ACC(i) __m256 a##i = _mm256_set1_ps(0.01f * i)
  MMLA_FOR_EACH_ACC(MMLA_ACC);
#undef MMLA_ACC
  for (int64_t it = 0; it < iters; ++it) {
#define MMLA_FMA(i) a##i = _mm256_fmadd_ps(a##i, x, y)
    MMLA_FOR_EACH_ACC(MMLA_FMA);
#undef MMLA_FMA
  }
  const __m256 s = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3)),
                                               _mm256_add_ps(_mm256_add_ps(a4, a5), _mm256_add_ps(a6, a7))),
                                 _mm256_add_ps(_mm256_add_ps(a8, a9), _mm256_add_ps(a10, a11)));
  return hsum(s);
}

float sum_f32_avx2(const float* p, size_t n) {
  // 8 accumulators of 8 floats: 256 bytes (4 cache lines) per iteration.
  __m256 s0 = _mm256_setzero_ps(), s1 = s0, s2 = s0, s3 = s0, s4 = s0, s5 = s0, s6 = s0, s7 = s0;
  size_t i = 0;
  for (; i + 64 <= n; i += 64) {
    s0 = _mm256_add_ps(s0, _mm256_loadu_ps(p + i));
    s1 = _mm256_add_ps(s1, _mm256_loadu_ps(p + i + 8));
    s2 = _mm256_add_ps(s2, _mm256_loadu_ps(p + i + 16));
    s3 = _mm256_add_ps(s3, _mm256_loadu_ps(p + i + 24));
    s4 = _mm256_add_ps(s4, _mm256_loadu_ps(p + i + 32));
    s5 = _mm256_add_ps(s5, _mm256_loadu_ps(p + i + 40));
    s6 = _mm256_add_ps(s6, _mm256_loadu_ps(p + i + 48));
    s7 = _mm256_add_ps(s7, _mm256_loadu_ps(p + i + 56));
  }
  float tail = 0;
  for (; i < n; ++i) tail += p[i];
  const __m256 s = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(s0, s1), _mm256_add_ps(s2, s3)),
                                 _mm256_add_ps(_mm256_add_ps(s4, s5), _mm256_add_ps(s6, s7)));
  return hsum(s) + tail;
}

}  // namespace mmla_bench::peak
