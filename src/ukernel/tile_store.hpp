// Tile stores and prefetches shared by kernel files. Everything here has internal linkage (unnamed
// namespace) so that each kernel file gets its own copy compiled with its own ISA flags.
#pragma once

#include <cstddef>

#if defined(__ARM_NEON)
#include <arm_neon.h>
#endif
#if defined(__AVX512F__)
#include <immintrin.h>
#endif

namespace mmla::ukernel {
namespace {

// fp32 B read in place (KR = 1): each depth is a row of B b_ks floats on, a page or more apart for
// a wide B, and the hardware prefetchers do not follow that. A kernel fetches the row kBInPlaceAhead
// depths ahead into L2, every cache line of its first kLines x 16 floats and the line of its last
// (kNr - 1: a row of B need not be 64-byte aligned). prefetcht1: prefetcht0 was slower, its L1 miss
// buffers being what the loads wait for. Measured on Zen 4 (AVX-512 8x48), B streamed from DRAM,
// the driver alone: 8x3072x768 43 -> 85 GFLOPS, 8x4096x4096 38 -> 74, 32x768x3072 84 -> 100
// (distances 12-48: 32 best); B in L3: 8x3072x768 94 -> 114.
constexpr std::ptrdiff_t kBInPlaceAhead = 32;
template <int kLines, int kNr>
[[gnu::always_inline]] inline void prefetch_b_in_place(const float* bp, std::ptrdiff_t b_ks) {
  const float* ahead = bp + kBInPlaceAhead * b_ks;
#pragma GCC unroll 4
  for (int v = 0; v < kLines; ++v) __builtin_prefetch(ahead + 16 * v, 0, 2);
  __builtin_prefetch(ahead + kNr - 1, 0, 2);
}

// C is read and written only after the k-loop: a kernel calls this first so that the misses on
// its m x n tile (C is often far larger than the caches) overlap the arithmetic. With unit column
// stride every cache line of a row is fetched (a 48-float row spans 3 or 4 lines, and fetching
// only its ends left the middle one to miss); otherwise a row's first and last elements.
[[maybe_unused]] void prefetch_c_tile(std::size_t m, std::size_t n, float* c, std::ptrdiff_t c_rs,
                                      std::ptrdiff_t c_cs) {
  for (std::size_t i = 0; i < m; ++i) {
    float* row = c + static_cast<std::ptrdiff_t>(i) * c_rs;
    if (c_cs == 1) {
      for (std::size_t j = 0; j + 1 < n; j += 16) __builtin_prefetch(row + j, 1);
    } else {
      __builtin_prefetch(row, 1);
    }
    __builtin_prefetch(row + static_cast<std::ptrdiff_t>(n - 1) * c_cs, 1);
  }
}

// C[0..m) x [0..n) = alpha * acc + beta * C, acc row-major with row stride ld_acc, element (i, j)
// of C at c[i * c_rs + j * c_cs]. beta == 0 does not read C (NaN or garbage there must not survive).
[[maybe_unused]] void store_tile_scalar(std::size_t m, std::size_t n, const float* acc, std::size_t ld_acc,
                                        float* c, std::ptrdiff_t c_rs, std::ptrdiff_t c_cs, float alpha,
                                        float beta) {
  for (std::size_t i = 0; i < m; ++i) {
    for (std::size_t j = 0; j < n; ++j) {
      float* const cij = c + static_cast<std::ptrdiff_t>(i) * c_rs + static_cast<std::ptrdiff_t>(j) * c_cs;
      const float v = alpha * acc[i * ld_acc + j];
      *cij = beta == 0.0f ? v : v + beta * *cij;
    }
  }
}

#if defined(__ARM_NEON)
// The same from an mr x nr tile buffer (nr a multiple of 4) for NEON kernels: a full tile with
// unit column stride goes out with 128-bit loads and stores, anything else through the scalar store.
[[maybe_unused]] void store_tile_neon(std::size_t m, std::size_t n, const float* tile, std::size_t mr,
                                      std::size_t nr, float* c, std::ptrdiff_t c_rs, std::ptrdiff_t c_cs,
                                      float alpha, float beta) {
  if (m != mr || n != nr || c_cs != 1) {
    store_tile_scalar(m, n, tile, nr, c, c_rs, c_cs, alpha, beta);
    return;
  }
  const float32x4_t va = vdupq_n_f32(alpha), vb = vdupq_n_f32(beta);
  for (std::size_t i = 0; i < mr; ++i) {
    float* ci = c + static_cast<std::ptrdiff_t>(i) * c_rs;
    for (std::size_t j = 0; j < nr; j += 4) {
      float32x4_t r = vmulq_f32(va, vld1q_f32(tile + i * nr + j));
      if (beta != 0.0f) r = vfmaq_f32(r, vb, vld1q_f32(ci + j));
      vst1q_f32(ci + j, r);
    }
  }
}
#endif

#if defined(__AVX512F__)
// The same from an M x 16 NV tile of zmm accumulators, its first m rows (m <= M). Kept in registers
// throughout: every loop over the tile is unrolled, since an indexed one makes GCC keep a copy of
// the tile on the stack, 2 x M x NV zmm stores per call (about 50 cycles of a 12x32 call). With unit
// column stride the rows go out with vector stores (masked only for a partial width), otherwise
// through a buffer and the scalar store. alpha == 1 costs no multiply.
template <int M, int NV>
[[gnu::always_inline]] inline void store_tile_avx512(__m512 (&acc)[M][NV], std::size_t m, std::size_t n,
                                                     float* c, std::ptrdiff_t c_rs, std::ptrdiff_t c_cs,
                                                     float alpha, float beta) {
  if (alpha != 1.0f) {
    const __m512 va = _mm512_set1_ps(alpha);
#pragma GCC unroll 16
    for (int i = 0; i < M; ++i)
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) acc[i][v] = _mm512_mul_ps(va, acc[i][v]);
  }
  if (c_cs == 1) {
    __mmask16 mask[NV];
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) {
      const std::size_t lo = 16 * static_cast<std::size_t>(v);
      mask[v] = n >= lo + 16 ? __mmask16(0xffff) : n <= lo ? __mmask16(0) : __mmask16((1u << (n - lo)) - 1);
    }
    const bool full = n == 16 * static_cast<std::size_t>(NV);
    const __m512 vb = _mm512_set1_ps(beta);
#pragma GCC unroll 16
    for (int i = 0; i < M; ++i) {
      if (static_cast<std::size_t>(i) >= m) break;
      float* ci = c + i * c_rs;
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) {
        if (full) {
          const __m512 r =
              beta == 0.0f ? acc[i][v] : _mm512_fmadd_ps(vb, _mm512_loadu_ps(ci + 16 * v), acc[i][v]);
          _mm512_storeu_ps(ci + 16 * v, r);
        } else {
          const __m512 r = beta == 0.0f
                               ? acc[i][v]
                               : _mm512_fmadd_ps(vb, _mm512_maskz_loadu_ps(mask[v], ci + 16 * v), acc[i][v]);
          _mm512_mask_storeu_ps(ci + 16 * v, mask[v], r);
        }
      }
    }
    return;
  }
  float buf[M * 16 * NV];
#pragma GCC unroll 16
  for (int i = 0; i < M; ++i)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) _mm512_storeu_ps(buf + i * 16 * NV + 16 * v, acc[i][v]);
  store_tile_scalar(m, n, buf, 16 * NV, c, c_rs, c_cs, 1.0f, beta);
}
#endif

}  // namespace
}  // namespace mmla::ukernel
