// Edge-tile store shared by kernel files. Everything here has internal linkage (unnamed
// namespace) so that each kernel file gets its own copy compiled with its own ISA flags.
#pragma once

#include <cstddef>

#if defined(__ARM_NEON)
#include <arm_neon.h>
#endif

namespace mmla::ukernel {
namespace {

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

}  // namespace
}  // namespace mmla::ukernel
