// Test support: deterministic random matrices, a double-precision reference GEMM and an error
// bound derived from k and fp32's unit roundoff.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <sstream>
#include <vector>

namespace mmla::test {

inline constexpr double kUnitRoundoffF32 = 0x1p-24;

// A strided view over a vector the test owns; element (i, j) at data[i * rs + j * cs].
struct Strided {
  std::vector<float> data;
  std::int64_t rows = 0, cols = 0, rs = 0, cs = 0;
  float& at(std::int64_t i, std::int64_t j) { return data[static_cast<std::size_t>(i * rs + j * cs)]; }
  float at(std::int64_t i, std::int64_t j) const { return data[static_cast<std::size_t>(i * rs + j * cs)]; }
};

// rows x cols with the given layout and extra padding of the leading dimension; unused slots hold
// `fill` so that reading them would show.
inline Strided make_matrix(std::int64_t rows, std::int64_t cols, bool row_major, std::int64_t pad,
                           std::uint32_t seed, float fill = std::numeric_limits<float>::quiet_NaN()) {
  Strided m;
  m.rows = rows, m.cols = cols;
  const std::int64_t ld = (row_major ? cols : rows) + pad;
  m.rs = row_major ? ld : 1;
  m.cs = row_major ? 1 : ld;
  const std::int64_t outer = row_major ? rows : cols;
  m.data.assign(static_cast<std::size_t>(std::max<std::int64_t>(outer * ld, 1)), fill);
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < cols; ++j) m.at(i, j) = dist(gen);
  return m;
}

// With beta == 0 the top-left m x n of C becomes NaN: beta = 0 means C is not read, and a read
// would then show in the result.
inline void fill_nan_if_beta_zero(Strided& c, std::int64_t m, std::int64_t n, float beta) {
  if (beta != 0.0f) return;
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) c.at(i, j) = std::numeric_limits<float>::quiet_NaN();
}

// Expected C and, per element, the scale its rounding error is bounded by:
// |alpha| * sum_p |a_ip b_pj| + |beta c_ij|.
struct Reference {
  std::vector<double> value, scale;
  std::int64_t m = 0, n = 0, k = 0;
};

template <class A, class B, class C>
Reference reference_gemm(std::int64_t m, std::int64_t n, std::int64_t k, float alpha, const A& a, const B& b,
                         float beta, const C& c0) {
  Reference r;
  r.m = m, r.n = n, r.k = k;
  r.value.assign(static_cast<std::size_t>(m * n), 0.0);
  r.scale.assign(static_cast<std::size_t>(m * n), 0.0);
  for (std::int64_t i = 0; i < m; ++i) {
    for (std::int64_t j = 0; j < n; ++j) {
      double s = 0, abs_s = 0;
      for (std::int64_t p = 0; p < k; ++p) {
        const double t = static_cast<double>(a(i, p)) * static_cast<double>(b(p, j));
        s += t;
        abs_s += std::abs(t);
      }
      double v = static_cast<double>(alpha) * s;
      double sc = std::abs(static_cast<double>(alpha)) * abs_s;
      if (beta != 0.0f) {  // beta == 0: C is not read (BLAS)
        v += static_cast<double>(beta) * static_cast<double>(c0(i, j));
        sc += std::abs(static_cast<double>(beta) * static_cast<double>(c0(i, j)));
      }
      r.value[static_cast<std::size_t>(i * n + j)] = v;
      r.scale[static_cast<std::size_t>(i * n + j)] = sc;
    }
  }
  return r;
}

// The driver splits k into blocks of at most kc; each block is summed in registers in any order
// (at most kb roundings for kb products) and then folded into C with alpha (a multiply and an
// add, or beta's multiply and add on the first block). So an element errs by at most about
// (k + 2 * ceil(k / kc) + 2) u times its absolute scale. The bound is exactly that, with 1%
// headroom for second-order terms: no fixed tolerance.
// The shallowest K block the driver uses on any CPU (B read in place on Intel, docs/blocking.md):
// the most blocks, so the loosest bound, where a test does not ask the library for its blocking.
constexpr std::int64_t kMinDriverKc = 32;

inline double fp32_bound_factor(std::int64_t k, std::int64_t kc) {
  const std::int64_t blocks = kc > 0 ? (k + kc - 1) / kc : 1;
  return 1.01 * static_cast<double>(k + 2 * blocks + 2) * kUnitRoundoffF32;
}

// K split into `slices` for threads (docs/numerics.md): each slice past the first adds a block
// boundary (two roundings) and the addition of its partial product into C.
inline double k_slice_rounding(int slices) {
  return 1.01 * 3.0 * (slices > 1 ? slices - 1 : 0) * kUnitRoundoffF32;
}

template <class C>
::testing::AssertionResult matches(const Reference& r, const C& c, double bound_factor) {
  for (std::int64_t i = 0; i < r.m; ++i) {
    for (std::int64_t j = 0; j < r.n; ++j) {
      const std::size_t idx = static_cast<std::size_t>(i * r.n + j);
      const double got = static_cast<double>(c(i, j));
      const double err = std::abs(got - r.value[idx]);
      const double allowed = bound_factor * r.scale[idx];
      if (!(err <= allowed)) {  // also catches NaN
        std::ostringstream o;
        o << "C(" << i << ", " << j << ") = " << got << ", expected " << r.value[idx] << " (error " << err
          << " > bound " << allowed << ")";
        return ::testing::AssertionFailure() << o.str();
      }
    }
  }
  return ::testing::AssertionSuccess();
}

}  // namespace mmla::test
