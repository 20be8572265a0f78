// fp32 FMA peak and read bandwidth with 256-bit AVX2 + FMA3 (compiled with -mavx2 -mfma).
#if !defined(__AVX2__) || !defined(__FMA__)
#error "peak_avx2.cpp must be compiled with -mavx2 -mfma"
#endif
#include <immintrin.h>

#include "peak_kernels.hpp"
#define MMLA_PEAK_LANES 8
#include "peak_common.inc"

namespace mmla_bench::peak {

float fma_f32_avx2(int64_t iters) {
  // acc = acc * x + y converges to 1: no overflow, no subnormals, whatever the iteration count.
  // 12 accumulators + x + y = 14 of the 16 ymm registers; distinct starting values so that no two
  // chains are provably equal.
  const __m256 x = _mm256_set1_ps(0.999999f), y = _mm256_set1_ps(1e-6f);
#define MMLA_ACC(i) __m256 a##i = _mm256_set1_ps(0.01f * i)
  MMLA_PEAK_ACCS_12(MMLA_ACC);
#undef MMLA_ACC
  for (int64_t it = 0; it < iters; ++it) {
#define MMLA_FMA(i) a##i = _mm256_fmadd_ps(a##i, x, y)
    MMLA_PEAK_ACCS_12(MMLA_FMA);
#undef MMLA_FMA
  }
  __m256 s = _mm256_setzero_ps();
#define MMLA_SUM(i) s = _mm256_add_ps(s, a##i)
  MMLA_PEAK_ACCS_12(MMLA_SUM);
#undef MMLA_SUM
  return lane_sum(s);
}

float sum_f32_avx2(const float* p, size_t n) { return sum_f32(p, n); }

}  // namespace mmla_bench::peak
