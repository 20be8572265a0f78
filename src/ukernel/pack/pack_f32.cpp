#include "ukernel/pack/pack_f32.hpp"

#include <cstdint>
#include <cstring>

#include "ukernel/bf16.hpp"

namespace mmla::ukernel {
namespace {

float widen(float x) { return x; }
float widen(std::uint16_t x) { return bf16_to_f32(x); }

// Copies n source elements to fp32 (memcpy when they already are).
template <class Src>
void copy_row(float* dst, const Src* src, std::size_t n) {
  if constexpr (sizeof(Src) == sizeof(float)) {
    std::memcpy(dst, src, n * sizeof(float));
  } else {
    for (std::size_t i = 0; i < n; ++i) dst[i] = widen(src[i]);
  }
}

// fp32 rows [0, rows4) (a multiple of 4, s_mn apart) by k into dst[kk * R + r]: per four depths,
// each group of four rows as a 4 x 4 transpose with 16-byte loads and stores, all groups before
// the next depths so that each line of the panel is written whole (group by group over all of k,
// each pass wrote half lines). The scalar scatter (one 4-byte store per element, R * 4 bytes
// apart) ran at ~4 GB/s on Zen 4, which is ~3% of a 2048^3 GEMM. GCC/Clang vector extensions:
// SSE2 and NEON alike, so this file stays free of ISA flags.
typedef float F4 __attribute__((vector_size(16)));
typedef int I4 __attribute__((vector_size(16)));
#if defined(__clang__)
#define MMLA_SHUFFLE(a, b, i, j, k, l) __builtin_shufflevector(a, b, i, j, k, l)
#else
#define MMLA_SHUFFLE(a, b, i, j, k, l) __builtin_shuffle(a, b, I4{i, j, k, l})
#endif
template <int R>
void pack_rows_along_k(const float* s, std::ptrdiff_t s_mn, std::size_t rows4, std::size_t k, float* dst) {
  std::size_t kk = 0;
  for (; kk + 4 <= k; kk += 4) {
    for (std::size_t g = 0; g < rows4; g += 4) {
      F4 r[4];
      for (std::size_t i = 0; i < 4; ++i)
        std::memcpy(&r[i], s + static_cast<std::ptrdiff_t>(g + i) * s_mn + kk, sizeof(F4));
      const F4 t0 = MMLA_SHUFFLE(r[0], r[1], 0, 4, 1, 5), t1 = MMLA_SHUFFLE(r[0], r[1], 2, 6, 3, 7);
      const F4 t2 = MMLA_SHUFFLE(r[2], r[3], 0, 4, 1, 5), t3 = MMLA_SHUFFLE(r[2], r[3], 2, 6, 3, 7);
      const F4 c[4] = {MMLA_SHUFFLE(t0, t2, 0, 1, 4, 5), MMLA_SHUFFLE(t0, t2, 2, 3, 6, 7),
                       MMLA_SHUFFLE(t1, t3, 0, 1, 4, 5), MMLA_SHUFFLE(t1, t3, 2, 3, 6, 7)};
      for (std::size_t j = 0; j < 4; ++j) std::memcpy(dst + (kk + j) * R + g, &c[j], sizeof(F4));
    }
  }
  for (; kk < k; ++kk)
    for (std::size_t r = 0; r < rows4; ++r) dst[kk * R + r] = s[static_cast<std::ptrdiff_t>(r) * s_mn + kk];
}
#undef MMLA_SHUFFLE

// The first n (< R) elements of a source row piece into an R-wide row of a panel, the rest zero,
// in 16-byte pieces over a fixed, unrolled trip count. A memcpy of n and a memset of R - n, two
// library calls per row, took ~22 ns a row, 10x a whole row's copy: the 16-wide edge panel of a
// 16 x 16 x 16 GEMM (NR = 48) 359 ns to pack, now 54; 8x64x64 cblas_sgemm 26 -> 75 GFLOPS.
template <int R, class Src>
void copy_row_padded(float* dst, const Src* src, std::size_t n) {
  constexpr std::size_t kWhole = R / 4 * 4;
  constexpr F4 kZero = {0.0f, 0.0f, 0.0f, 0.0f};
#pragma GCC unroll 12
  for (std::size_t j = 0; j < kWhole; j += 4) {
    if (j + 4 <= n) {
      copy_row(dst + j, src + j, 4);
    } else if (j >= n) {
      std::memcpy(dst + j, &kZero, sizeof(F4));
    } else {
      for (std::size_t q = 0; q < 4; ++q) dst[j + q] = j + q < n ? widen(src[j + q]) : 0.0f;
    }
  }
  for (std::size_t j = kWhole; j < static_cast<std::size_t>(R); ++j) dst[j] = j < n ? widen(src[j]) : 0.0f;
}

// One panel of R rows (fewer at the edge: the rest is zero) by k columns, stored k-major.
template <int R, class Src>
void pack_panel(const Src* src, std::ptrdiff_t s_mn, std::ptrdiff_t s_k, std::size_t rows, std::size_t k,
                float* dst) {
  if (rows < static_cast<std::size_t>(R)) std::memset(dst, 0, k * R * sizeof(float));
  if (s_k == 1) {
    // Source rows are contiguous along k: fp32 rows four at a time, transposed in registers; the
    // rest read once each and scattered with stride R.
    std::size_t r = 0;
    if constexpr (sizeof(Src) == sizeof(float)) {
      r = rows / 4 * 4;
      pack_rows_along_k<R>(src, s_mn, r, k, dst);
    }
    for (; r < rows; ++r) {
      const Src* s = src + r * s_mn;
      for (std::size_t kk = 0; kk < k; ++kk) dst[kk * R + r] = widen(s[kk]);
    }
  } else {
    for (std::size_t kk = 0; kk < k; ++kk)
      for (std::size_t r = 0; r < rows; ++r) dst[kk * R + r] = widen(src[r * s_mn + kk * s_k]);
  }
}

template <int R, class Src>
void pack(const void* src_v, std::ptrdiff_t s_mn, std::ptrdiff_t s_k, std::size_t mn, std::size_t k,
          void* dst_v) {
  const Src* src = static_cast<const Src*>(src_v);
  float* dst = static_cast<float*>(dst_v);
  const std::size_t full = mn / R, tail = mn % R;
  if (s_mn == 1) {
    // Source rows run along mn (e.g. a row-major B): sweep each row once, in order, so reads stream
    // sequentially, and hand R-wide pieces to the panels.
    for (std::size_t kk = 0; kk < k; ++kk) {
      const Src* row = src + static_cast<std::ptrdiff_t>(kk) * s_k;
      for (std::size_t q = 0; q < full; ++q) copy_row(dst + q * R * k + kk * R, row + q * R, R);
      if (tail != 0) copy_row_padded<R>(dst + full * R * k + kk * R, row + full * R, tail);
    }
    return;
  }
  for (std::size_t p = 0; p < mn; p += R) {
    const std::size_t rows = mn - p < static_cast<std::size_t>(R) ? mn - p : R;
    pack_panel<R, Src>(src + static_cast<std::ptrdiff_t>(p) * s_mn, s_mn, s_k, rows, k, dst + p * k);
  }
}

}  // namespace

#define MMLA_DEFINE_PACK_F32(R)                                                                     \
  void pack_f32_r##R(const void* src, std::ptrdiff_t s_mn, std::ptrdiff_t s_k, std::size_t mn,      \
                     std::size_t k, void* dst) {                                                    \
    pack<R, float>(src, s_mn, s_k, mn, k, dst);                                                     \
  }                                                                                                 \
  void pack_bf16_f32_r##R(const void* src, std::ptrdiff_t s_mn, std::ptrdiff_t s_k, std::size_t mn, \
                          std::size_t k, void* dst) {                                               \
    pack<R, std::uint16_t>(src, s_mn, s_k, mn, k, dst);                                             \
  }
MMLA_DEFINE_PACK_F32(4)
MMLA_DEFINE_PACK_F32(6)
MMLA_DEFINE_PACK_F32(8)
MMLA_DEFINE_PACK_F32(12)
MMLA_DEFINE_PACK_F32(16)
MMLA_DEFINE_PACK_F32(32)
MMLA_DEFINE_PACK_F32(48)
#undef MMLA_DEFINE_PACK_F32

}  // namespace mmla::ukernel
