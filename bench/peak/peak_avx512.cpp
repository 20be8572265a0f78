// fp32 FMA peak and read bandwidth with 512-bit AVX-512F (compiled with the avx512 flags).
#if !defined(__AVX512F__)
#error "peak_avx512.cpp must be compiled with -mavx512f"
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

namespace {
// Not _mm512_reduce_add_ps: gcc 12 warns (-Wuninitialized) inside it.
float hsum(__m512 v) {
  alignas(64) float lanes[16];
  _mm512_store_ps(lanes, v);
  float s = 0;
  for (const float x : lanes) s += x;
  return s;
}
}  // namespace

float fma_f32_avx512(int64_t iters) {
  // acc = acc * x + y converges to 1: no overflow, no subnormals. 24 accumulators + x + y = 26 of
  // the 32 zmm registers; distinct starting values so that no two chains are provably equal.
  const __m512 x = _mm512_set1_ps(0.999999f), y = _mm512_set1_ps(1e-6f);
#define MMLA_ACC(i) __m512 a##i = _mm512_set1_ps(0.01f * i)
  MMLA_FOR_EACH_ACC(MMLA_ACC);
#undef MMLA_ACC
  for (int64_t it = 0; it < iters; ++it) {
#define MMLA_FMA(i) a##i = _mm512_fmadd_ps(a##i, x, y)
    MMLA_FOR_EACH_ACC(MMLA_FMA);
#undef MMLA_FMA
  }
  __m512 s = _mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3));
  s = _mm512_add_ps(s, _mm512_add_ps(_mm512_add_ps(a4, a5), _mm512_add_ps(a6, a7)));
  s = _mm512_add_ps(s, _mm512_add_ps(_mm512_add_ps(a8, a9), _mm512_add_ps(a10, a11)));
  s = _mm512_add_ps(s, _mm512_add_ps(_mm512_add_ps(a12, a13), _mm512_add_ps(a14, a15)));
  s = _mm512_add_ps(s, _mm512_add_ps(_mm512_add_ps(a16, a17), _mm512_add_ps(a18, a19)));
  s = _mm512_add_ps(s, _mm512_add_ps(_mm512_add_ps(a20, a21), _mm512_add_ps(a22, a23)));
  return hsum(s);
}

float sum_f32_avx512(const float* p, size_t n) {
  // 8 accumulators of 16 floats: 512 bytes (8 cache lines) per iteration.
  __m512 s0 = _mm512_setzero_ps(), s1 = s0, s2 = s0, s3 = s0, s4 = s0, s5 = s0, s6 = s0, s7 = s0;
  size_t i = 0;
  for (; i + 128 <= n; i += 128) {
    s0 = _mm512_add_ps(s0, _mm512_loadu_ps(p + i));
    s1 = _mm512_add_ps(s1, _mm512_loadu_ps(p + i + 16));
    s2 = _mm512_add_ps(s2, _mm512_loadu_ps(p + i + 32));
    s3 = _mm512_add_ps(s3, _mm512_loadu_ps(p + i + 48));
    s4 = _mm512_add_ps(s4, _mm512_loadu_ps(p + i + 64));
    s5 = _mm512_add_ps(s5, _mm512_loadu_ps(p + i + 80));
    s6 = _mm512_add_ps(s6, _mm512_loadu_ps(p + i + 96));
    s7 = _mm512_add_ps(s7, _mm512_loadu_ps(p + i + 112));
  }
  float tail = 0;
  for (; i < n; ++i) tail += p[i];
  const __m512 s = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(s0, s1), _mm512_add_ps(s2, s3)),
                                 _mm512_add_ps(_mm512_add_ps(s4, s5), _mm512_add_ps(s6, s7)));
  return hsum(s) + tail;
}

}  // namespace mmla_bench::peak
