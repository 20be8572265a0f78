// 6x16 fp32 kernel for AVX2 + FMA: 12 ymm accumulators, 2 ymm of B and a broadcast of A per
// k-step (12 FMAs per 2 loads + 6 broadcasts), 16 ymm registers in all.
#if !defined(__AVX2__) || !defined(__FMA__)
#error "this file must be compiled with -mavx2 -mfma (see cmake/kernels.cmake)"
#endif

#include <immintrin.h>

#include "ukernel/pack/pack_f32.hpp"
#include "ukernel/tile_store.hpp"
#include "ukernel/ukernel.hpp"

namespace mmla::ukernel {
namespace {

constexpr int kMr = 6, kNr = 16;

// The k-loop and the store of C; with kStoreB, the panel of B read in place is also written to
// b_out, packed (run_pack_b).
template <bool kStoreB>
void tile(std::size_t m, std::size_t n, std::size_t kp, const float* ap, const float* bp, std::ptrdiff_t b_ks,
          float* b_out, float* c, std::ptrdiff_t c_rs, std::ptrdiff_t c_cs, float alpha, float beta) {
  prefetch_c_tile(m, n, c, c_rs, c_cs);
  __m256 acc[kMr][2];
  // Fully unrolled so that GCC keeps acc in registers (without the pragmas it kept a stack copy
  // of the array and stored all 12 accumulators every k-step: 38% of peak instead of 90%+).
#pragma GCC unroll 6
  for (int i = 0; i < kMr; ++i) acc[i][0] = acc[i][1] = _mm256_setzero_ps();
  const auto step = [&](const float* b_k) {
    const __m256 b0 = _mm256_loadu_ps(b_k), b1 = _mm256_loadu_ps(b_k + 8);
    if constexpr (kStoreB) {
      _mm256_store_ps(b_out, b0);
      _mm256_store_ps(b_out + 8, b1);
      b_out += kNr;
    }
#pragma GCC unroll 6
    for (int i = 0; i < kMr; ++i) {
      const __m256 a = _mm256_broadcast_ss(ap + i);
      acc[i][0] = _mm256_fmadd_ps(a, b0, acc[i][0]);
      acc[i][1] = _mm256_fmadd_ps(a, b1, acc[i][1]);
    }
  };
  if (b_ks == kNr && !kStoreB) {
    for (std::size_t kk = 0; kk < kp; ++kk, ap += kMr, bp += kNr) step(bp);
  } else {
    // B read in place: its rows prefetched ahead (tile_store.hpp, prefetch_b_in_place).
    for (std::size_t kk = 0; kk < kp; ++kk, ap += kMr, bp += b_ks) {
      prefetch_b_in_place<1, kNr>(bp, b_ks);
      step(bp);
    }
  }
  const __m256 va = _mm256_set1_ps(alpha);
  if (m == kMr && n == kNr && c_cs == 1) {
#pragma GCC unroll 6
    for (int i = 0; i < kMr; ++i) {
      float* ci = c + i * c_rs;
      __m256 r0 = _mm256_mul_ps(va, acc[i][0]), r1 = _mm256_mul_ps(va, acc[i][1]);
      if (beta != 0.0f) {
        const __m256 vb = _mm256_set1_ps(beta);
        r0 = _mm256_fmadd_ps(vb, _mm256_loadu_ps(ci), r0);
        r1 = _mm256_fmadd_ps(vb, _mm256_loadu_ps(ci + 8), r1);
      }
      _mm256_storeu_ps(ci, r0);
      _mm256_storeu_ps(ci + 8, r1);
    }
    return;
  }
  float buf[kMr * kNr];
#pragma GCC unroll 6
  for (int i = 0; i < kMr; ++i) {
    _mm256_storeu_ps(buf + i * kNr, acc[i][0]);
    _mm256_storeu_ps(buf + i * kNr + 8, acc[i][1]);
  }
  store_tile_scalar(m, n, buf, kNr, c, c_rs, c_cs, alpha, beta);
}

void run(std::size_t m, std::size_t n, std::size_t kp, const void* ap, const void* bp, std::ptrdiff_t b_ks,
         float* c, std::ptrdiff_t c_rs, std::ptrdiff_t c_cs, float alpha, float beta) {
  tile<false>(m, n, kp, static_cast<const float*>(ap), static_cast<const float*>(bp), b_ks, nullptr, c, c_rs,
              c_cs, alpha, beta);
}

void run_pack_b(std::size_t m, std::size_t kp, const void* ap, const void* b, std::ptrdiff_t b_ks,
                void* b_out, float* c, std::ptrdiff_t c_rs, std::ptrdiff_t c_cs, float alpha, float beta) {
  tile<true>(m, kNr, kp, static_cast<const float*>(ap), static_cast<const float*>(b), b_ks,
             static_cast<float*>(b_out), c, c_rs, c_cs, alpha, beta);
}

}  // namespace

extern const GemmKernel gemm_f32_f32p_f32p_6x16__avx2_fma{"gemm_f32_f32p_f32p_6x16__avx2_fma",
                                                          Family::gemm_f32_f32p_f32p,
                                                          cpu::Isa::avx2,
                                                          kMr,
                                                          kNr,
                                                          1,
                                                          sizeof(float),
                                                          {pack_f32_r6, pack_bf16_f32_r6},
                                                          {pack_f32_r16, pack_bf16_f32_r16},
                                                          run,
                                                          nullptr,
                                                          nullptr,
                                                          run_pack_b};

}  // namespace mmla::ukernel
