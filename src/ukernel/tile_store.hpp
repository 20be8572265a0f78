// Edge-tile store shared by kernel files. Everything here has internal linkage (unnamed
// namespace) so that each kernel file gets its own copy compiled with its own ISA flags.
#pragma once

#include <cstddef>

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

}  // namespace
}  // namespace mmla::ukernel
