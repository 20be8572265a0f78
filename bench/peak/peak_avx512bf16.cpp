// bf16 dot-product peak with vdpbf16ps zmm (compiled with the avx512 flags + -mavx512bf16).
#if !defined(__AVX512F__) || !defined(__AVX512BF16__)
#error "peak_avx512bf16.cpp must be compiled with -mavx512f -mavx512bf16"
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

float dot_bf16_avx512bf16(int64_t iters) {
  // Each vdpbf16ps adds, per fp32 lane, the products of two bf16 pairs: 2^-10 * 2^-10 twice, so an
  // accumulator grows by 2^-19 per iteration: no overflow for any practical iteration count.
  const __m512 v = _mm512_set1_ps(0x1p-10f);
  const __m512bh x = _mm512_cvtne2ps_pbh(v, v), y = _mm512_cvtne2ps_pbh(v, v);
#define MMLA_ACC(i) __m512 a##i = _mm512_set1_ps(0.01f * i)
  MMLA_FOR_EACH_ACC(MMLA_ACC);
#undef MMLA_ACC
  for (int64_t it = 0; it < iters; ++it) {
#define MMLA_DOT(i) a##i = _mm512_dpbf16_ps(a##i, x, y)
    MMLA_FOR_EACH_ACC(MMLA_DOT);
#undef MMLA_DOT
  }
  __m512 s = _mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3));
  s = _mm512_add_ps(s, _mm512_add_ps(_mm512_add_ps(a4, a5), _mm512_add_ps(a6, a7)));
  s = _mm512_add_ps(s, _mm512_add_ps(_mm512_add_ps(a8, a9), _mm512_add_ps(a10, a11)));
  s = _mm512_add_ps(s, _mm512_add_ps(_mm512_add_ps(a12, a13), _mm512_add_ps(a14, a15)));
  s = _mm512_add_ps(s, _mm512_add_ps(_mm512_add_ps(a16, a17), _mm512_add_ps(a18, a19)));
  s = _mm512_add_ps(s, _mm512_add_ps(_mm512_add_ps(a20, a21), _mm512_add_ps(a22, a23)));
  return hsum(s);
}

}  // namespace mmla_bench::peak
