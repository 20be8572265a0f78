// fp32 FMA peak and read bandwidth with 512-bit AVX-512F (compiled with the avx512 flags).
#if !defined(__AVX512F__)
#error "peak_avx512.cpp must be compiled with -mavx512f"
#endif
#include <immintrin.h>

#include "peak_kernels.hpp"
#define MMLA_PEAK_LANES 16
#include "peak_common.inc"

namespace mmla_bench::peak {

float fma_f32_avx512(int64_t iters) {
  // acc = acc * x + y converges to 1: no overflow, no subnormals. 24 accumulators + x + y = 26 of
  // the 32 zmm registers; distinct starting values so that no two chains are provably equal.
  const __m512 x = _mm512_set1_ps(0.999999f), y = _mm512_set1_ps(1e-6f);
#define MMLA_ACC(i) __m512 a##i = _mm512_set1_ps(0.01f * i)
  MMLA_PEAK_ACCS_24(MMLA_ACC);
#undef MMLA_ACC
  for (int64_t it = 0; it < iters; ++it) {
#define MMLA_FMA(i) a##i = _mm512_fmadd_ps(a##i, x, y)
    MMLA_PEAK_ACCS_24(MMLA_FMA);
#undef MMLA_FMA
  }
  __m512 s = _mm512_setzero_ps();
#define MMLA_SUM(i) s = _mm512_add_ps(s, a##i)
  MMLA_PEAK_ACCS_24(MMLA_SUM);
#undef MMLA_SUM
  return lane_sum(s);
}

float sum_f32_avx512(const float* p, size_t n) { return sum_f32(p, n); }

}  // namespace mmla_bench::peak
