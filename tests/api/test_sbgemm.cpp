// bf16 GEMM (mmla_sbgemm, cblas_sbgemm, mmla_sbgemm_strided) and the fp-math mode switch.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "mmla/cblas.h"
#include "mmla/mmla.h"
#include "mmla/mmla.hpp"
#include "support/reference.hpp"

namespace mmla::test {
namespace {

// bf16 unit roundoff: rounding an input to bf16 errs by at most 2^-8 of it.
constexpr double kUnitRoundoffBf16 = 0x1p-8;

std::uint16_t to_bf16(float f) {
  std::uint16_t h;
  cblas_sbstobf16(1, &f, 1, &h, 1);
  return h;
}
float from_bf16(std::uint16_t h) {
  float f;
  cblas_sbf16tos(1, &h, 1, &f, 1);
  return f;
}

// A stored matrix of bf16 values (random, then rounded), with the fp32 value of each for the reference.
struct Bf16Matrix {
  std::vector<std::uint16_t> bits;
  Strided values;  // the same numbers as fp32 (exact)
};
Bf16Matrix make_bf16(std::int64_t rows, std::int64_t cols, bool row_major, std::int64_t pad,
                     std::uint32_t seed) {
  Bf16Matrix m{{}, make_matrix(rows, cols, row_major, pad, seed)};
  m.bits.resize(m.values.data.size());
  for (std::size_t i = 0; i < m.bits.size(); ++i) {
    m.bits[i] = to_bf16(m.values.data[i]);
    m.values.data[i] = from_bf16(m.bits[i]);
  }
  return m;
}

using Combo = std::tuple<bool, bool, bool, bool /*cblas*/>;
class SbgemmCombos : public ::testing::TestWithParam<Combo> {};

TEST_P(SbgemmCombos, MatchesReference) {
  const auto [row, ta, tb, use_cblas] = GetParam();
  // M = 1 and N = 1 take the GEMV path (bf16 widened as it is read), the rest the GEMM kernels.
  const std::int64_t shapes[][3] = {{1, 1, 1},     {7, 5, 3},     {1, 40, 33},  {33, 47, 65},
                                    {70, 30, 300}, {1, 300, 500}, {45, 1, 130}, {1, 1, 700}};
  for (const auto& s : shapes) {
    const std::int64_t m = s[0], n = s[1], k = s[2];
    const Bf16Matrix a = make_bf16(ta ? k : m, ta ? m : k, row, 2, 1),
                     b = make_bf16(tb ? n : k, tb ? k : n, row, 1, 2);
    const std::int64_t lda = row ? a.values.rs : a.values.cs, ldb = row ? b.values.rs : b.values.cs;
    for (float beta : {0.0f, 0.5f}) {
      Strided c = make_matrix(m, n, row, 3, 3);
      fill_nan_if_beta_zero(c, m, n, beta);
      const Strided before = c;
      const std::int64_t ldc = row ? c.rs : c.cs;
      if (use_cblas) {
        cblas_sbgemm(row ? CblasRowMajor : CblasColMajor, ta ? CblasTrans : CblasNoTrans,
                     tb ? CblasTrans : CblasNoTrans, static_cast<int>(m), static_cast<int>(n),
                     static_cast<int>(k), 1.5f, a.bits.data(), static_cast<int>(lda), b.bits.data(),
                     static_cast<int>(ldb), beta, c.data.data(), static_cast<int>(ldc));
      } else {
        ASSERT_EQ(MMLA_STATUS_SUCCESS,
                  mmla_sbgemm(row ? MMLA_ROW_MAJOR : MMLA_COL_MAJOR, ta ? MMLA_TRANS : MMLA_NO_TRANS,
                              tb ? MMLA_TRANS : MMLA_NO_TRANS, m, n, k, 1.5f, a.bits.data(), lda,
                              b.bits.data(), ldb, beta, c.data.data(), ldc))
            << mmla_last_error();
      }
      const Reference r = reference_gemm(
          m, n, k, 1.5f,
          [&](std::int64_t i, std::int64_t p) { return ta ? a.values.at(p, i) : a.values.at(i, p); },
          [&](std::int64_t p, std::int64_t j) { return tb ? b.values.at(j, p) : b.values.at(p, j); }, beta,
          [&](std::int64_t i, std::int64_t j) { return before.at(i, j); });
      // Products of bf16 values are exact in fp32: the fp32 accumulation bound applies (KC >= kMinDriverKc).
      ASSERT_TRUE(matches(
          r, [&](std::int64_t i, std::int64_t j) { return c.at(i, j); }, fp32_bound_factor(k, kMinDriverKc)))
          << m << "x" << n << "x" << k << " beta=" << beta;
    }
  }
}

// A matrix-vector product whose matrix is 16 MiB of bf16 takes the GEMV (smaller ones the kernels):
// B row-major and transposed (the two GEMV loops), M = 1 and N = 1, against the reference.
TEST(Sbgemm, LargeMatrixVectorProducts) {
  const std::int64_t big = 4096, k = 2048;
  for (bool tb : {false, true})
    for (bool row_vector : {true, false}) {
      const std::int64_t m = row_vector ? 1 : big, n = row_vector ? big : 1;
      const Bf16Matrix a = make_bf16(m, k, true, 0, 5), b = make_bf16(tb ? n : k, tb ? k : n, true, 0, 6);
      std::vector<float> c(static_cast<std::size_t>(m * n), std::numeric_limits<float>::quiet_NaN());
      ASSERT_EQ(MMLA_STATUS_SUCCESS,
                mmla_sbgemm(MMLA_ROW_MAJOR, MMLA_NO_TRANS, tb ? MMLA_TRANS : MMLA_NO_TRANS, m, n, k, 1.0f,
                            a.bits.data(), k, b.bits.data(), tb ? k : n, 0.0f, c.data(), n))
          << mmla_last_error();
      const Reference r = reference_gemm(
          m, n, k, 1.0f, [&](std::int64_t i, std::int64_t p) { return a.values.at(i, p); },
          [&](std::int64_t p, std::int64_t j) { return tb ? b.values.at(j, p) : b.values.at(p, j); }, 0.0f,
          [](std::int64_t, std::int64_t) { return 0.0f; });
      ASSERT_TRUE(matches(
          r, [&](std::int64_t i, std::int64_t j) { return c[static_cast<std::size_t>(i * n + j)]; },
          fp32_bound_factor(k, kMinDriverKc)))
          << m << "x" << n << "x" << k << (tb ? " B^T" : "");
    }
}

// Few rows against a transposed B (x W^T) take the dots where they pay (bf16 read and widened in
// place): 2-9 rows, a W small enough for L2 and one over 2 MiB (where more rows take them with
// BF16 instructions), beta 0 and 1, against the reference.
TEST(Sbgemm, FewRowsAgainstATransposedB) {
  for (std::int64_t m : {2, 3, 4, 5, 8, 9})
    for (std::int64_t n : {100, 1100}) {
      const std::int64_t k = n == 100 ? 70 : 1000;
      const Bf16Matrix a = make_bf16(m, k, true, 1, 7), w = make_bf16(n, k, true, 0, 8);
      for (float beta : {0.0f, 1.0f}) {
        Strided c = make_matrix(m, n, true, 2, 9);
        fill_nan_if_beta_zero(c, m, n, beta);
        const Strided before = c;
        ASSERT_EQ(MMLA_STATUS_SUCCESS,
                  mmla_sbgemm(MMLA_ROW_MAJOR, MMLA_NO_TRANS, MMLA_TRANS, m, n, k, -0.75f, a.bits.data(),
                              a.values.rs, w.bits.data(), k, beta, c.data.data(), c.rs))
            << mmla_last_error();
        const Reference r = reference_gemm(
            m, n, k, -0.75f, [&](std::int64_t i, std::int64_t p) { return a.values.at(i, p); },
            [&](std::int64_t p, std::int64_t j) { return w.values.at(j, p); }, beta,
            [&](std::int64_t i, std::int64_t j) { return before.at(i, j); });
        ASSERT_TRUE(matches(
            r, [&](std::int64_t i, std::int64_t j) { return c.at(i, j); },
            fp32_bound_factor(k, kMinDriverKc)))
            << m << "x" << n << "x" << k << " beta=" << beta;
      }
    }
}

std::string combo_name(const ::testing::TestParamInfo<Combo>& info) {
  const auto [row, ta, tb, cb] = info.param;
  return std::string(cb ? "cblas_" : "mmla_") + (row ? "Row" : "Col") + (ta ? "T" : "N") + (tb ? "T" : "N");
}
INSTANTIATE_TEST_SUITE_P(All, SbgemmCombos,
                         ::testing::Combine(::testing::Bool(), ::testing::Bool(), ::testing::Bool(),
                                            ::testing::Bool()),
                         combo_name);

TEST(Sbgemm, SpecialValuesAndErrors) {
  // NaN and Inf in bf16 inputs propagate; beta == 0 does not read C.
  std::vector<std::uint16_t> a(4 * 3, to_bf16(0.5f)), b(3 * 5, to_bf16(2.0f));
  a[1 * 3 + 2] = 0x7fc0;  // NaN in row 1
  b[0 * 5 + 4] = 0x7f80;  // +Inf in column 4
  std::vector<float> c(4 * 5, std::numeric_limits<float>::quiet_NaN());
  ASSERT_EQ(MMLA_STATUS_SUCCESS, mmla_sbgemm(MMLA_ROW_MAJOR, MMLA_NO_TRANS, MMLA_NO_TRANS, 4, 5, 3, 1,
                                             a.data(), 3, b.data(), 5, 0, c.data(), 5));
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 5; ++j) {
      if (i == 1) {
        EXPECT_TRUE(std::isnan(c[i * 5 + j]));
      } else if (j == 4) {
        EXPECT_EQ(c[i * 5 + j], std::numeric_limits<float>::infinity());
      } else {
        EXPECT_EQ(c[i * 5 + j], 3.0f);
      }
    }
  // Invalid arguments: status, reason, C untouched; CBLAS prints its parameter error.
  std::vector<float> keep(c);
  EXPECT_EQ(MMLA_STATUS_INVALID_ARGUMENT, mmla_sbgemm(MMLA_ROW_MAJOR, MMLA_NO_TRANS, MMLA_NO_TRANS, 4, 5, 3,
                                                      1, a.data(), 2, b.data(), 5, 0, c.data(), 5));
  EXPECT_NE(std::string(mmla_last_error()).find("mmla_sbgemm: argument 9"), std::string::npos)
      << mmla_last_error();
  ::testing::internal::CaptureStderr();
  cblas_sbgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, 4, 5, 3, 1, a.data(), 3, nullptr, 5, 0, c.data(),
               5);
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("Parameter 10 to routine cblas_sbgemm was incorrect"), std::string::npos) << err;
  EXPECT_EQ(0, std::memcmp(c.data(), keep.data(), c.size() * sizeof(float)));
}

TEST(Sbgemm, StridedViews) {
  const Bf16Matrix a = make_bf16(6, 9, true, 3, 4), b = make_bf16(9, 7, false, 2, 5);
  std::vector<float> c(6 * 7 * 2, 0.0f);
  ASSERT_EQ(MMLA_STATUS_SUCCESS,
            mmla_sbgemm_strided(6, 7, 9, 1, a.bits.data(), a.values.rs, a.values.cs, b.bits.data(),
                                b.values.rs, b.values.cs, 0, c.data(), 14, 2));
  const Reference r = reference_gemm(
      6, 7, 9, 1.0f, [&](std::int64_t i, std::int64_t p) { return a.values.at(i, p); },
      [&](std::int64_t p, std::int64_t j) { return b.values.at(p, j); }, 0.0f,
      [](std::int64_t, std::int64_t) { return 0.0f; });
  EXPECT_TRUE(matches(
      r, [&](std::int64_t i, std::int64_t j) { return c[static_cast<std::size_t>(i * 14 + j * 2)]; },
      fp32_bound_factor(9, kMinDriverKc)));
}

struct ThreadMode {
  explicit ThreadMode(mmla_fpmath_mode m) { EXPECT_EQ(MMLA_STATUS_SUCCESS, mmla_set_thread_fpmath_mode(m)); }
  ~ThreadMode() { mmla_set_thread_fpmath_mode(MMLA_FPMATH_DEFAULT); }
};

TEST(FpMath, SwitchesAndThreadOverride) {
  const mmla_fpmath_mode start = mmla_get_fpmath_mode();
  EXPECT_TRUE(start == MMLA_FPMATH_STRICT || start == MMLA_FPMATH_BF16);
  {
    ThreadMode t(MMLA_FPMATH_BF16);
    EXPECT_EQ(mmla_get_fpmath_mode(), MMLA_FPMATH_BF16);
    EXPECT_NE(std::string(mmla_get_config()).find("fp-math mode: bf16"), std::string::npos);
    mmla_fpmath_mode other = MMLA_FPMATH_DEFAULT;
    std::thread([&] { other = mmla_get_fpmath_mode(); }).join();
    EXPECT_EQ(other, start) << "a thread's override must not leak into other threads";
  }
  EXPECT_EQ(mmla_get_fpmath_mode(), start);
  EXPECT_EQ(MMLA_STATUS_SUCCESS, mmla_set_fpmath_mode(MMLA_FPMATH_BF16));
  EXPECT_EQ(mmla_get_fpmath_mode(), MMLA_FPMATH_BF16);
  EXPECT_EQ(MMLA_STATUS_SUCCESS, mmla_set_fpmath_mode(start));
  EXPECT_EQ(MMLA_STATUS_INVALID_ARGUMENT, mmla_set_fpmath_mode(MMLA_FPMATH_DEFAULT));
  EXPECT_EQ(MMLA_STATUS_INVALID_ARGUMENT, mmla_set_fpmath_mode(static_cast<mmla_fpmath_mode>(9)));
  EXPECT_EQ(MMLA_STATUS_INVALID_ARGUMENT, mmla_set_thread_fpmath_mode(static_cast<mmla_fpmath_mode>(-1)));
  EXPECT_EQ(mmla_get_fpmath_mode(), start);
}

TEST(FpMath, FastMathStaysWithinTheBf16Bound) {
  // Fast math rounds each input to bf16 (relative error <= 2^-8 each), multiplies exactly and
  // accumulates in fp32: |c - exact| <= ((1 + u)^2 - 1) sum |a b| + the fp32 accumulation bound.
  // M = 300: large enough for the bf16 kernel where the CPU has one.
  const std::int64_t m = 300, n = 53, k = 300;
  const Strided a = make_matrix(m, k, true, 0, 7), b = make_matrix(k, n, true, 0, 8);
  std::vector<float> c(m * n);
  ThreadMode t(MMLA_FPMATH_BF16);
  ASSERT_EQ(MMLA_STATUS_SUCCESS, mmla_sgemm(MMLA_ROW_MAJOR, MMLA_NO_TRANS, MMLA_NO_TRANS, m, n, k, 1,
                                            a.data.data(), k, b.data.data(), n, 0, c.data(), n));
  const Reference r = reference_gemm(
      m, n, k, 1.0f, [&](std::int64_t i, std::int64_t p) { return a.at(i, p); },
      [&](std::int64_t p, std::int64_t j) { return b.at(p, j); }, 0.0f,
      [](std::int64_t, std::int64_t) { return 0.0f; });
  const double input_rounding = 2 * kUnitRoundoffBf16 + kUnitRoundoffBf16 * kUnitRoundoffBf16;
  EXPECT_TRUE(matches(
      r, [&](std::int64_t i, std::int64_t j) { return c[static_cast<std::size_t>(i * n + j)]; },
      input_rounding + fp32_bound_factor(k, kMinDriverKc)));
}

TEST(CppBf16, GemmOnBf16ViewsAndPerCallFpMath) {
  const std::int64_t m = 5, n = 6, k = 7;
  std::vector<mmla::bfloat16> a(m * k), b(k * n);
  std::vector<float> af(m * k), bf(k * n), c(m * n, 0.0f);
  for (std::size_t i = 0; i < a.size(); ++i)
    af[i] = static_cast<float>(i % 5) - 2, a[i].bits = to_bf16(af[i]);
  for (std::size_t i = 0; i < b.size(); ++i)
    bf[i] = static_cast<float>(i % 3) - 1, b[i].bits = to_bf16(bf[i]);
  auto vc = mmla::MatrixView<float>::row_major(c.data(), m, n);
  mmla::gemm(1.0f, mmla::MatrixView<const mmla::bfloat16>::row_major(a.data(), m, k),
             mmla::MatrixView<const mmla::bfloat16>::row_major(b.data(), k, n), 0.0f, vc);
  const auto expect = [&](std::int64_t i, std::int64_t j) {
    float s = 0;
    for (std::int64_t p = 0; p < k; ++p) s += af[i * k + p] * bf[p * n + j];
    return s;
  };
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) EXPECT_EQ(vc(i, j), expect(i, j));  // small integers: exact
  EXPECT_THROW(mmla::gemm(1.0f, mmla::MatrixView<const mmla::bfloat16>::row_major(a.data(), m, k - 1),
                          mmla::MatrixView<const mmla::bfloat16>::row_major(b.data(), k, n), 0.0f, vc),
               mmla::Error);
  // Per-call override: in force during the call only, then the thread's setting is back.
  const mmla_fpmath_mode before = mmla_get_thread_fpmath_mode();
  mmla::gemm(1.0f, mmla::MatrixView<const float>::row_major(af.data(), m, k),
             mmla::MatrixView<const float>::row_major(bf.data(), k, n), 0.0f, vc, mmla::FpMath::bf16);
  EXPECT_EQ(mmla_get_thread_fpmath_mode(), before);
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) EXPECT_EQ(vc(i, j), expect(i, j));  // exact in bf16 too
  {
    const mmla::ScopedFpMath scope(mmla::FpMath::bf16);
    EXPECT_EQ(mmla_get_fpmath_mode(), MMLA_FPMATH_BF16);
    {
      const mmla::ScopedFpMath inner(mmla::FpMath::strict);
      EXPECT_EQ(mmla_get_fpmath_mode(), MMLA_FPMATH_STRICT);
    }
    EXPECT_EQ(mmla_get_fpmath_mode(), MMLA_FPMATH_BF16);
  }
  EXPECT_EQ(mmla_get_thread_fpmath_mode(), before);
}

}  // namespace
}  // namespace mmla::test
