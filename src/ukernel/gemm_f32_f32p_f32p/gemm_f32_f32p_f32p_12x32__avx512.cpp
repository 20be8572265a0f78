// 12x32 fp32 kernel for AVX-512F: 24 zmm accumulators, 2 zmm of B and a broadcast of A per
// k-step (24 FMAs per 2 loads + 12 broadcasts).
#if !defined(__AVX512F__)
#error "this file must be compiled with -mavx512f (see cmake/kernels.cmake)"
#endif

#include <immintrin.h>

#include "ukernel/pack/pack_f32.hpp"
#include "ukernel/tile_store.hpp"
#include "ukernel/ukernel.hpp"

namespace mmla::ukernel {
namespace {

constexpr int kMr = 12, kNr = 32;

void run(std::size_t m, std::size_t n, std::size_t kp, const void* ap_v, const void* bp_v,
         std::ptrdiff_t b_ks, float* c, std::ptrdiff_t c_rs, std::ptrdiff_t c_cs, float alpha, float beta) {
  const float* ap = static_cast<const float*>(ap_v);
  const float* bp = static_cast<const float*>(bp_v);
  // C is read and written only after the k-loop; start fetching its rows now so that the misses
  // (C is often far larger than the caches) overlap the arithmetic.
  for (std::size_t i = 0; i < m; ++i) {
    __builtin_prefetch(c + static_cast<std::ptrdiff_t>(i) * c_rs, 1);
    __builtin_prefetch(c + static_cast<std::ptrdiff_t>(i) * c_rs + (n - 1) * c_cs, 1);
  }
  __m512 acc[kMr][2];
  for (int i = 0; i < kMr; ++i) acc[i][0] = acc[i][1] = _mm512_setzero_ps();
  for (std::size_t kk = 0; kk < kp; ++kk) {
    const __m512 b0 = _mm512_loadu_ps(bp), b1 = _mm512_loadu_ps(bp + 16);
    for (int i = 0; i < kMr; ++i) {
      const __m512 a = _mm512_set1_ps(ap[i]);
      acc[i][0] = _mm512_fmadd_ps(a, b0, acc[i][0]);
      acc[i][1] = _mm512_fmadd_ps(a, b1, acc[i][1]);
    }
    ap += kMr;
    bp += b_ks;
  }
  const __m512 va = _mm512_set1_ps(alpha);
  if (m == kMr && c_cs == 1) {
    // Full rows; a partial width is handled with masked loads/stores (no write past column n).
    const __mmask16 m0 = n >= 16 ? __mmask16(0xffff) : __mmask16((1u << n) - 1);
    const __mmask16 m1 = n >= 32   ? __mmask16(0xffff)
                         : n <= 16 ? __mmask16(0)
                                   : __mmask16((1u << (n - 16)) - 1);
    for (int i = 0; i < kMr; ++i) {
      float* ci = c + i * c_rs;
      __m512 r0 = _mm512_mul_ps(va, acc[i][0]), r1 = _mm512_mul_ps(va, acc[i][1]);
      if (beta != 0.0f) {
        const __m512 vb = _mm512_set1_ps(beta);
        r0 = _mm512_fmadd_ps(vb, _mm512_maskz_loadu_ps(m0, ci), r0);
        r1 = _mm512_fmadd_ps(vb, _mm512_maskz_loadu_ps(m1, ci + 16), r1);
      }
      _mm512_mask_storeu_ps(ci, m0, r0);
      _mm512_mask_storeu_ps(ci + 16, m1, r1);
    }
    return;
  }
  float tile[kMr * kNr];
  for (int i = 0; i < kMr; ++i) {
    _mm512_storeu_ps(tile + i * kNr, acc[i][0]);
    _mm512_storeu_ps(tile + i * kNr + 16, acc[i][1]);
  }
  store_tile_scalar(m, n, tile, kNr, c, c_rs, c_cs, alpha, beta);
}

}  // namespace

extern const GemmKernel gemm_f32_f32p_f32p_12x32__avx512{"gemm_f32_f32p_f32p_12x32__avx512",
                                                         Family::gemm_f32_f32p_f32p,
                                                         cpu::Isa::avx512,
                                                         kMr,
                                                         kNr,
                                                         1,
                                                         sizeof(float),
                                                         pack_f32_r12,
                                                         pack_f32_r32,
                                                         run};

}  // namespace mmla::ukernel
