// The CBLAS bf16 conversions (include/mmla/cblas.h), OpenBLAS's names and semantics.
#include <cstddef>
#include <cstdint>

#include "mmla/cblas.h"
#include "ukernel/bf16.hpp"

namespace {

// BLAS vector walk: with a negative increment the first element is at (1 - n) * inc.
template <class In, class Out, class Convert>
void convert(int n, const In* in, int incin, Out* out, int incout, Convert conv) {
  if (n <= 0) return;
  const std::ptrdiff_t si = incin, so = incout;
  const In* x = si < 0 ? in + (1 - static_cast<std::ptrdiff_t>(n)) * si : in;
  Out* y = so < 0 ? out + (1 - static_cast<std::ptrdiff_t>(n)) * so : out;
  for (std::ptrdiff_t i = 0; i < n; ++i) y[i * so] = conv(x[i * si]);
}

}  // namespace

extern "C" {

MMLA_CBLAS_API void cblas_sbstobf16(const int n, const float* in, const int incin, bfloat16* out,
                                    const int incout) {
  convert(n, in, incin, out, incout, mmla::ukernel::f32_to_bf16);
}

MMLA_CBLAS_API void cblas_sbdtobf16(const int n, const double* in, const int incin, bfloat16* out,
                                    const int incout) {
  convert(n, in, incin, out, incout, mmla::ukernel::f64_to_bf16);
}

MMLA_CBLAS_API void cblas_sbf16tos(const int n, const bfloat16* in, const int incin, float* out,
                                   const int incout) {
  convert(n, in, incin, out, incout, mmla::ukernel::bf16_to_f32);
}

MMLA_CBLAS_API void cblas_dbf16tod(const int n, const bfloat16* in, const int incin, double* out,
                                   const int incout) {
  convert(n, in, incin, out, incout,
          [](std::uint16_t h) { return static_cast<double>(mmla::ukernel::bf16_to_f32(h)); });
}

}  // extern "C"
