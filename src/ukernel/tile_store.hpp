// Edge-tile store shared by kernel files. Everything here has internal linkage (unnamed
// namespace) so that each kernel file gets its own copy compiled with its own ISA flags.
#pragma once

#include <cstddef>

namespace mmla::ukernel {
namespace {

// C[0..m) x [0..n) = alpha * acc + beta * C, acc row-major with row stride ld_acc.
// beta == 0 does not read C (NaN or garbage there must not survive).
[[maybe_unused]] void store_tile_scalar(std::size_t m, std::size_t n, const float* acc, std::size_t ld_acc,
                                        float* c, std::size_t ldc, float alpha, float beta) {
  for (std::size_t i = 0; i < m; ++i) {
    for (std::size_t j = 0; j < n; ++j) {
      const float v = alpha * acc[i * ld_acc + j];
      c[i * ldc + j] = beta == 0.0f ? v : v + beta * c[i * ldc + j];
    }
  }
}

}  // namespace
}  // namespace mmla::ukernel
