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

namespace {
constexpr int kStepMr = 8, kStepNr = 48;

[[gnu::always_inline]] inline void kstep(__m512 (&acc)[kStepMr][3], const float* ap, const float* bp) {
  const __m512 b0 = _mm512_load_ps(bp), b1 = _mm512_load_ps(bp + 16), b2 = _mm512_load_ps(bp + 32);
#pragma GCC unroll 8
  for (int r = 0; r < kStepMr; ++r) {
    const __m512 ar = _mm512_set1_ps(ap[r]);
    acc[r][0] = _mm512_fmadd_ps(ar, b0, acc[r][0]);
    acc[r][1] = _mm512_fmadd_ps(ar, b1, acc[r][1]);
    acc[r][2] = _mm512_fmadd_ps(ar, b2, acc[r][2]);
  }
}
}  // namespace

float fma_f32_avx512_kstep(int64_t iters) {
  // The 8x48 kernel's k-loop without its C tile: each step loads three zmm of B and broadcasts
  // eight floats of A, then 24 FMAs use them. Panels of kDepth steps (14 KiB) stay in L1, walked
  // again and again, so loads always hit L1: what is lost against the register-only loop is the
  // cost of issuing the loads, which no blocking can remove.
  constexpr int kDepth = 64;
  alignas(64) static float a[kDepth * kStepMr], b[kDepth * kStepNr];
  for (float& v : a) v = 1e-3f;
  for (float& v : b) v = 1e-3f;
  __m512 acc[kStepMr][3];
#pragma GCC unroll 8
  for (int r = 0; r < kStepMr; ++r) acc[r][0] = acc[r][1] = acc[r][2] = _mm512_setzero_ps();
  int64_t left = iters;
  for (; left >= kDepth; left -= kDepth)
    for (int k = 0; k < kDepth; ++k) kstep(acc, a + k * kStepMr, b + k * kStepNr);
  for (int k = 0; k < left; ++k) kstep(acc, a + k * kStepMr, b + k * kStepNr);
  __m512 s = _mm512_setzero_ps();
#pragma GCC unroll 8
  for (int r = 0; r < kStepMr; ++r)
    s = _mm512_add_ps(s, _mm512_add_ps(acc[r][0], _mm512_add_ps(acc[r][1], acc[r][2])));
  return lane_sum(s);
}

float sum_f32_avx512(const float* p, size_t n) { return sum_f32(p, n); }

}  // namespace mmla_bench::peak
