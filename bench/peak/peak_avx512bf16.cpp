// bf16 dot-product peak with vdpbf16ps zmm (compiled with the avx512 flags + -mavx512bf16).
#if !defined(__AVX512F__) || !defined(__AVX512BF16__)
#error "peak_avx512bf16.cpp must be compiled with -mavx512f -mavx512bf16"
#endif
#include <immintrin.h>

#include "peak_kernels.hpp"
#define MMLA_PEAK_LANES 16
#include "peak_common.inc"

namespace mmla_bench::peak {

float dot_bf16_avx512bf16(int64_t iters) {
  // Each vdpbf16ps adds, per fp32 lane, the products of two bf16 pairs: 2^-10 * 2^-10 twice, so an
  // accumulator grows by 2^-19 per iteration: no overflow for any practical iteration count.
  const __m512 v = _mm512_set1_ps(0x1p-10f);
  const __m512bh x = _mm512_cvtne2ps_pbh(v, v), y = _mm512_cvtne2ps_pbh(v, v);
#define MMLA_ACC(i) __m512 a##i = _mm512_set1_ps(0.01f * i)
  MMLA_PEAK_ACCS_24(MMLA_ACC);
#undef MMLA_ACC
  for (int64_t it = 0; it < iters; ++it) {
#define MMLA_DOT(i) a##i = _mm512_dpbf16_ps(a##i, x, y)
    MMLA_PEAK_ACCS_24(MMLA_DOT);
#undef MMLA_DOT
  }
  __m512 s = _mm512_setzero_ps();
#define MMLA_SUM(i) s = _mm512_add_ps(s, a##i)
  MMLA_PEAK_ACCS_24(MMLA_SUM);
#undef MMLA_SUM
  return lane_sum(s);
}

}  // namespace mmla_bench::peak
