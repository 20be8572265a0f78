// The public fronts (mmla_sgemm, cblas_sgemm, mmla_sgemm_strided, mmla::gemm) over every
// order/transpose/stride/alpha/beta combination, special values, zero sizes and misuse.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <tuple>
#include <vector>

#include "api/problem.hpp"
#include "mmla/cblas.h"
#include "mmla/mmla.h"
#include "mmla/mmla.hpp"
#include "support/reference.hpp"

namespace mmla::test {
namespace {

// The smallest KC the library may block k with (the accuracy bound depends on it).
std::int64_t library_kc() {
  const auto& sel = api::selection(ukernel::Family::gemm_f32_f32p_f32p);
  if (sel.kernel == nullptr) return 1;
  std::size_t kc = std::min(sel.blocking.kc, sel.blocking.kc_one_pass);
  if (sel.blocking.kc_in_place != 0) kc = std::min(kc, sel.blocking.kc_in_place);
  return static_cast<std::int64_t>(kc);
}

// The bound for an fp32 call: fp32 accumulation, plus the rounding of A and B to bf16 when fast math
// is in force on a CPU with a bf16 kernel (the suite also runs with MMLA_FPMATH_MODE=bf16).
double library_bound(std::int64_t k) {
  const bool fast = mmla_get_fpmath_mode() == MMLA_FPMATH_BF16 && api::bf16_hardware();
  return (fast ? 2 * 0x1p-8 + 0x1p-16 : 0.0) + fp32_bound_factor(k, library_kc());
}

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

enum class Front { c_api, cblas };

// A BLAS-style operand: stored rows x cols in the given layout with leading dimension ld.
struct Blas {
  std::vector<float> data;
  std::int64_t ld = 0;
};

// Builds op(X) (rows x cols) stored as the BLAS call expects for layout/trans, with `pad` extra
// elements per leading dimension (filled with NaN: reading them would show).
Blas make_blas(std::int64_t rows, std::int64_t cols, bool row_major, bool trans, std::int64_t pad,
               std::uint32_t seed, Strided* op) {
  const std::int64_t s_rows = trans ? cols : rows, s_cols = trans ? rows : cols;
  const Strided stored = make_matrix(s_rows, s_cols, row_major, pad, seed);
  Blas out{stored.data, row_major ? stored.rs : stored.cs};
  *op = stored;
  if (trans) {
    op->rows = rows, op->cols = cols;
    std::swap(op->rs, op->cs);
  }
  return out;
}

using Combo = std::tuple<bool /*row major*/, bool /*trans a*/, bool /*trans b*/, int /*pad*/, Front>;

class SgemmCombos : public ::testing::TestWithParam<Combo> {};

TEST_P(SgemmCombos, MatchesReference) {
  const auto [row, ta, tb, pad, front] = GetParam();
  const std::int64_t shapes[][3] = {{1, 1, 1},  {7, 5, 3},    {13, 1, 29},
                                    {1, 17, 9}, {33, 47, 65}, {70, 130, 45}};
  for (const auto& s : shapes) {
    const std::int64_t m = s[0], n = s[1], k = s[2];
    for (float alpha : {1.0f, -0.5f})
      for (float beta : {0.0f, 1.0f, 0.25f}) {
        const auto seed = static_cast<std::uint32_t>(m * 31 + n * 17 + k);
        Strided opa, opb, cview;
        const Blas a = make_blas(m, k, row, ta, pad, seed, &opa);
        const Blas b = make_blas(k, n, row, tb, pad, seed + 1, &opb);
        Blas c = make_blas(m, n, row, false, pad, seed + 2, &cview);
        if (beta == 0.0f)  // must not be read
          for (std::int64_t i = 0; i < m; ++i)
            for (std::int64_t j = 0; j < n; ++j)
              c.data[static_cast<std::size_t>(i * cview.rs + j * cview.cs)] = kNaN;
        cview.data = c.data;
        const Reference r = reference_gemm(
            m, n, k, alpha, [&](std::int64_t i, std::int64_t p) { return opa.at(i, p); },
            [&](std::int64_t p, std::int64_t j) { return opb.at(p, j); }, beta,
            [&](std::int64_t i, std::int64_t j) { return cview.at(i, j); });
        const std::vector<float> before = c.data;
        const auto lay = row ? MMLA_ROW_MAJOR : MMLA_COL_MAJOR;
        const auto tra = ta ? MMLA_TRANS : MMLA_NO_TRANS, trb = tb ? MMLA_TRANS : MMLA_NO_TRANS;
        if (front == Front::c_api) {
          ASSERT_EQ(MMLA_STATUS_SUCCESS, mmla_sgemm(lay, tra, trb, m, n, k, alpha, a.data.data(), a.ld,
                                                    b.data.data(), b.ld, beta, c.data.data(), c.ld))
              << mmla_last_error();
        } else {
          cblas_sgemm(row ? CblasRowMajor : CblasColMajor, ta ? CblasTrans : CblasNoTrans,
                      tb ? CblasTrans : CblasNoTrans, static_cast<int>(m), static_cast<int>(n),
                      static_cast<int>(k), alpha, a.data.data(), static_cast<int>(a.ld), b.data.data(),
                      static_cast<int>(b.ld), beta, c.data.data(), static_cast<int>(c.ld));
        }
        Strided got = cview;
        got.data = c.data;
        ASSERT_TRUE(matches(
            r, [&](std::int64_t i, std::int64_t j) { return got.at(i, j); }, library_bound(k)))
            << m << "x" << n << "x" << k << " alpha=" << alpha << " beta=" << beta;
        // The padding between C's columns/rows is never written.
        for (std::size_t idx = 0; idx < c.data.size(); ++idx) {
          const std::int64_t i =
              row ? static_cast<std::int64_t>(idx) / c.ld : static_cast<std::int64_t>(idx) % c.ld;
          const std::int64_t j =
              row ? static_cast<std::int64_t>(idx) % c.ld : static_cast<std::int64_t>(idx) / c.ld;
          if (i >= m || j >= n) {
            ASSERT_EQ(0, std::memcmp(&c.data[idx], &before[idx], sizeof(float))) << "wrote outside C";
          }
        }
      }
  }
}

std::string combo_name(const ::testing::TestParamInfo<Combo>& info) {
  const auto [row, ta, tb, pad, front] = info.param;
  return std::string(front == Front::c_api ? "mmla_" : "cblas_") + (row ? "Row" : "Col") + (ta ? "T" : "N") +
         (tb ? "T" : "N") + "_pad" + std::to_string(pad);
}

INSTANTIATE_TEST_SUITE_P(All, SgemmCombos,
                         ::testing::Combine(::testing::Bool(), ::testing::Bool(), ::testing::Bool(),
                                            ::testing::Values(0, 3),
                                            ::testing::Values(Front::c_api, Front::cblas)),
                         combo_name);

TEST(SgemmApi, ConjTransIsTransForReals) {
  const float a[] = {1, 2, 3, 4}, b[] = {5, 6, 7, 8};
  float c1[4], c2[4];
  ASSERT_EQ(MMLA_STATUS_SUCCESS,
            mmla_sgemm(MMLA_ROW_MAJOR, MMLA_TRANS, MMLA_TRANS, 2, 2, 2, 1, a, 2, b, 2, 0, c1, 2));
  ASSERT_EQ(MMLA_STATUS_SUCCESS,
            mmla_sgemm(MMLA_ROW_MAJOR, MMLA_CONJ_TRANS, MMLA_CONJ_TRANS, 2, 2, 2, 1, a, 2, b, 2, 0, c2, 2));
  EXPECT_EQ(0, std::memcmp(c1, c2, sizeof c1));
  // (A^T B^T)[0][0] = a00*b00 + a10*b01 = 1*5 + 3*6
  EXPECT_EQ(c1[0], 23.0f);
}

TEST(SgemmApi, NaNAndInfPropagate) {
  const std::int64_t m = 19, n = 37, k = 23;
  std::vector<float> a(m * k, 0.5f), b(k * n, 0.25f), c(m * n, 0.0f);
  a[3 * k + 5] = kNaN;   // row 3 of C becomes NaN
  b[7 * n + 11] = kInf;  // column 11 of C becomes +Inf (A > 0), except row 3
  ASSERT_EQ(MMLA_STATUS_SUCCESS, mmla_sgemm(MMLA_ROW_MAJOR, MMLA_NO_TRANS, MMLA_NO_TRANS, m, n, k, 1,
                                            a.data(), k, b.data(), n, 0, c.data(), n));
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      const float v = c[i * n + j];
      if (i == 3) {
        EXPECT_TRUE(std::isnan(v)) << i << "," << j;
      } else if (j == 11) {
        EXPECT_EQ(v, kInf) << i << "," << j;
      } else {
        EXPECT_EQ(v, 0.125f * k) << i << "," << j;
      }
    }
  // Inf * 0 is NaN, as IEEE says.
  std::fill(a.begin(), a.end(), 0.0f);
  ASSERT_EQ(MMLA_STATUS_SUCCESS, mmla_sgemm(MMLA_ROW_MAJOR, MMLA_NO_TRANS, MMLA_NO_TRANS, m, n, k, 1,
                                            a.data(), k, b.data(), n, 0, c.data(), n));
  EXPECT_TRUE(std::isnan(c[11]));
  EXPECT_EQ(c[10], 0.0f);
  // NaN already in C survives beta != 0 ...
  std::fill(c.begin(), c.end(), kNaN);
  ASSERT_EQ(MMLA_STATUS_SUCCESS, mmla_sgemm(MMLA_ROW_MAJOR, MMLA_NO_TRANS, MMLA_NO_TRANS, m, n, k, 1,
                                            a.data(), k, b.data(), n, 1, c.data(), n));
  EXPECT_TRUE(std::isnan(c[0]));
  // ... and not beta == 0, whatever the path (alpha == 0 and k == 0 included).
  b[7 * n + 11] = 0.25f;
  for (float alpha : {1.0f, 0.0f})
    for (std::int64_t kk : {k, std::int64_t{0}}) {
      std::fill(c.begin(), c.end(), kNaN);
      ASSERT_EQ(MMLA_STATUS_SUCCESS, mmla_sgemm(MMLA_ROW_MAJOR, MMLA_NO_TRANS, MMLA_NO_TRANS, m, n, kk, alpha,
                                                a.data(), k, b.data(), n, 0, c.data(), n));
      for (float v : c) ASSERT_EQ(v, 0.0f) << "alpha=" << alpha << " k=" << kk;
    }
}

TEST(SgemmApi, AlphaZeroDoesNotReadAOrB) {
  // BLAS: with alpha == 0, A and B are not referenced (NaN there does not reach C).
  std::vector<float> a(6, kNaN), b(6, kNaN), c(4, 2.0f);
  ASSERT_EQ(MMLA_STATUS_SUCCESS, mmla_sgemm(MMLA_ROW_MAJOR, MMLA_NO_TRANS, MMLA_NO_TRANS, 2, 2, 3, 0,
                                            a.data(), 3, b.data(), 2, 0.5f, c.data(), 2));
  for (float v : c) EXPECT_EQ(v, 1.0f);
}

TEST(SgemmApi, ZeroSizes) {
  std::vector<float> a(12, 1.0f), b(12, 1.0f), c(12, 7.0f);
  // m == 0 or n == 0: nothing to do, C untouched; an operand of zero size may be null.
  EXPECT_EQ(MMLA_STATUS_SUCCESS, mmla_sgemm(MMLA_ROW_MAJOR, MMLA_NO_TRANS, MMLA_NO_TRANS, 0, 4, 3, 1, nullptr,
                                            3, b.data(), 4, 0, c.data(), 4));
  EXPECT_EQ(MMLA_STATUS_SUCCESS, mmla_sgemm(MMLA_COL_MAJOR, MMLA_NO_TRANS, MMLA_NO_TRANS, 3, 0, 4, 1,
                                            a.data(), 3, nullptr, 4, 0, nullptr, 3));
  for (float v : c) EXPECT_EQ(v, 7.0f);
  // k == 0: C = beta * C, A and B may be null.
  EXPECT_EQ(MMLA_STATUS_SUCCESS, mmla_sgemm(MMLA_ROW_MAJOR, MMLA_NO_TRANS, MMLA_NO_TRANS, 3, 4, 0, 1, nullptr,
                                            1, nullptr, 4, 0.5f, c.data(), 4));
  for (float v : c) EXPECT_EQ(v, 3.5f);
}

// Every rejected argument: the right status, a reason naming the argument, and C untouched.
struct BadCall {
  const char* what;
  int layout, ta, tb;
  std::int64_t m, n, k, lda, ldb, ldc;
  bool null_a, null_b, null_c;
  int position;  // CBLAS parameter number
};

class SgemmInvalid : public ::testing::TestWithParam<BadCall> {};

TEST_P(SgemmInvalid, RejectedWithoutTouchingC) {
  const BadCall& bc = GetParam();
  std::vector<float> a(64, 1.0f), b(64, 1.0f), c(64, 42.0f);
  const float* pa = bc.null_a ? nullptr : a.data();
  const float* pb = bc.null_b ? nullptr : b.data();
  float* pc = bc.null_c ? nullptr : c.data();
  EXPECT_EQ(MMLA_STATUS_INVALID_ARGUMENT,
            mmla_sgemm(static_cast<mmla_layout>(bc.layout), static_cast<mmla_transpose>(bc.ta),
                       static_cast<mmla_transpose>(bc.tb), bc.m, bc.n, bc.k, 1, pa, bc.lda, pb, bc.ldb, 0, pc,
                       bc.ldc));
  const std::string reason = mmla_last_error();
  EXPECT_NE(reason.find("argument " + std::to_string(bc.position) + ":"), std::string::npos) << reason;
  for (float v : c) ASSERT_EQ(v, 42.0f);

  ::testing::internal::CaptureStderr();
  cblas_sgemm(static_cast<CBLAS_ORDER>(bc.layout), static_cast<CBLAS_TRANSPOSE>(bc.ta),
              static_cast<CBLAS_TRANSPOSE>(bc.tb), static_cast<int>(bc.m), static_cast<int>(bc.n),
              static_cast<int>(bc.k), 1, pa, static_cast<int>(bc.lda), pb, static_cast<int>(bc.ldb), 0, pc,
              static_cast<int>(bc.ldc));
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("Parameter " + std::to_string(bc.position) + " to routine cblas_sgemm was incorrect"),
            std::string::npos)
      << err;
  for (float v : c) ASSERT_EQ(v, 42.0f);
}

constexpr int R = MMLA_ROW_MAJOR, Cm = MMLA_COL_MAJOR, N = MMLA_NO_TRANS, T = MMLA_TRANS;
INSTANTIATE_TEST_SUITE_P(
    All, SgemmInvalid,
    ::testing::Values(BadCall{"bad_layout", 99, N, N, 2, 2, 2, 2, 2, 2, false, false, false, 1},
                      BadCall{"bad_trans_a", R, 0, N, 2, 2, 2, 2, 2, 2, false, false, false, 2},
                      BadCall{"bad_trans_b", R, N, 114, 2, 2, 2, 2, 2, 2, false, false, false, 3},
                      BadCall{"negative_m", R, N, N, -1, 2, 2, 2, 2, 2, false, false, false, 4},
                      BadCall{"negative_n", R, N, N, 2, -3, 2, 2, 2, 2, false, false, false, 5},
                      BadCall{"negative_k", R, N, N, 2, 2, -1, 2, 2, 2, false, false, false, 6},
                      BadCall{"null_a", R, N, N, 2, 2, 2, 2, 2, 2, true, false, false, 8},
                      BadCall{"lda_row_n", R, N, N, 2, 2, 3, 2, 2, 2, false, false, false, 9},
                      BadCall{"lda_row_t", R, T, N, 4, 2, 3, 3, 2, 2, false, false, false, 9},
                      BadCall{"lda_col_n", Cm, N, N, 4, 2, 3, 3, 3, 4, false, false, false, 9},
                      BadCall{"lda_zero", R, N, N, 0, 2, 0, 0, 2, 2, false, false, false, 9},
                      BadCall{"null_b", Cm, N, N, 2, 2, 2, 2, 2, 2, false, true, false, 10},
                      BadCall{"ldb_row_n", R, N, N, 2, 4, 2, 2, 3, 4, false, false, false, 11},
                      BadCall{"ldb_col_t", Cm, N, T, 2, 4, 2, 2, 3, 2, false, false, false, 11},
                      BadCall{"null_c", R, N, N, 2, 2, 2, 2, 2, 2, false, false, true, 13},
                      BadCall{"ldc_row", R, N, N, 2, 3, 2, 2, 3, 2, false, false, false, 14},
                      BadCall{"ldc_col", Cm, N, N, 3, 2, 2, 3, 2, 2, false, false, false, 14}),
    [](const ::testing::TestParamInfo<BadCall>& info) { return std::string(info.param.what); });

TEST(SgemmStrided, GeneralStridesAndBothCLayouts) {
  const std::int64_t m = 9, n = 14, k = 11;
  // A with row stride 2k and column stride 2 (every other element), B transposed by strides.
  std::vector<float> a(static_cast<std::size_t>(2 * k * m), kNaN),
      b(static_cast<std::size_t>(3 * n * k), kNaN);
  Strided va{a, m, k, 2 * k, 2}, vb{b, k, n, 1, 3 * k};
  std::mt19937 gen(5);
  std::uniform_real_distribution<float> d(-1, 1);
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t p = 0; p < k; ++p) va.at(i, p) = d(gen);
  for (std::int64_t p = 0; p < k; ++p)
    for (std::int64_t j = 0; j < n; ++j) vb.at(p, j) = d(gen);
  const Reference r = reference_gemm(
      m, n, k, 1.0f, [&](std::int64_t i, std::int64_t p) { return va.at(i, p); },
      [&](std::int64_t p, std::int64_t j) { return vb.at(p, j); }, 0.0f,
      [](std::int64_t, std::int64_t) { return 0.0f; });
  for (bool c_row : {true, false}) {
    const std::int64_t c_rs = c_row ? n + 1 : 1, c_cs = c_row ? 1 : m + 2;
    std::vector<float> c(static_cast<std::size_t>((m + 2) * (n + 1)), kNaN);
    ASSERT_EQ(MMLA_STATUS_SUCCESS,
              mmla_sgemm_strided(m, n, k, 1.0f, va.data.data(), va.rs, va.cs, vb.data.data(), vb.rs, vb.cs,
                                 0.0f, c.data(), c_rs, c_cs))
        << mmla_last_error();
    EXPECT_TRUE(matches(
        r, [&](std::int64_t i, std::int64_t j) { return c[static_cast<std::size_t>(i * c_rs + j * c_cs)]; },
        library_bound(k)));
  }
}

TEST(SgemmStrided, CWithNoUnitStride) {
  // A result written into every other column of a wider matrix (a strided slice).
  const std::int64_t m = 7, n = 9, k = 13;
  const Strided a = make_matrix(m, k, true, 0, 11), b = make_matrix(k, n, false, 1, 12);
  for (const auto& [c_rs, c_cs] : {std::pair<std::int64_t, std::int64_t>{2 * n + 1, 2}, {3, 3 * m}}) {
    std::vector<float> c(static_cast<std::size_t>(m * c_rs + n * c_cs), 4.0f);
    const std::vector<float> before = c;
    ASSERT_EQ(MMLA_STATUS_SUCCESS, mmla_sgemm_strided(m, n, k, 1.0f, a.data.data(), a.rs, a.cs, b.data.data(),
                                                      b.rs, b.cs, 0.0f, c.data(), c_rs, c_cs))
        << mmla_last_error();
    const Reference r = reference_gemm(
        m, n, k, 1.0f, [&](std::int64_t i, std::int64_t p) { return a.at(i, p); },
        [&](std::int64_t p, std::int64_t j) { return b.at(p, j); }, 0.0f,
        [](std::int64_t, std::int64_t) { return 0.0f; });
    EXPECT_TRUE(matches(
        r, [&](std::int64_t i, std::int64_t j) { return c[static_cast<std::size_t>(i * c_rs + j * c_cs)]; },
        library_bound(k)));
    std::size_t written = 0;
    for (std::size_t idx = 0; idx < c.size(); ++idx) written += c[idx] != before[idx];
    EXPECT_LE(written, static_cast<std::size_t>(m * n)) << "wrote outside C's elements";
  }
}

TEST(SgemmStrided, RejectsOverlappingOrInvalidC) {
  std::vector<float> a(100, 1.0f), b(100, 1.0f), c(100, 5.0f);
  // Rows of C overlap (row stride smaller than the row length).
  EXPECT_EQ(MMLA_STATUS_INVALID_ARGUMENT,
            mmla_sgemm_strided(3, 3, 2, 1, a.data(), 2, 1, b.data(), 3, 1, 0, c.data(), 2, 1));
  EXPECT_NE(std::string(mmla_last_error()).find("overlap"), std::string::npos) << mmla_last_error();
  // Rows and columns interleave.
  EXPECT_EQ(MMLA_STATUS_INVALID_ARGUMENT,
            mmla_sgemm_strided(3, 3, 2, 1, a.data(), 2, 1, b.data(), 3, 1, 0, c.data(), 2, 3));
  // Zero stride along a dimension longer than 1.
  EXPECT_EQ(MMLA_STATUS_INVALID_ARGUMENT,
            mmla_sgemm_strided(3, 3, 2, 1, a.data(), 0, 1, b.data(), 3, 1, 0, c.data(), 3, 1));
  EXPECT_EQ(MMLA_STATUS_INVALID_ARGUMENT,
            mmla_sgemm_strided(3, 3, 2, 1, a.data(), 2, 1, b.data(), 3, 1, 0, c.data(), 3, 0));
  // Offsets that overflow.
  EXPECT_EQ(MMLA_STATUS_INVALID_ARGUMENT, mmla_sgemm_strided(3, 3, 2, 1, a.data(), INT64_MAX / 2 + 1, 1,
                                                             b.data(), 3, 1, 0, c.data(), 3, 1));
  EXPECT_EQ(MMLA_STATUS_INVALID_ARGUMENT, mmla_sgemm_strided(3, 3, 2, 1, a.data(), 2, 1, b.data(), 3, 1, 0,
                                                             c.data(), INT64_MAX / 2 + 1, 1));
  for (float v : c) ASSERT_EQ(v, 5.0f);
}

TEST(CppApi, GemmOnViewsAndTransposes) {
  const std::int64_t m = 6, n = 5, k = 4;
  std::vector<float> a(m * k), b(n * k), c(m * n, kNaN);
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(i % 7) - 3;
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = static_cast<float>(i % 5) - 2;
  const auto va = mmla::MatrixView<const float>::row_major(a.data(), m, k);
  const auto vbt = mmla::MatrixView<const float>::row_major(b.data(), n, k);  // B^T stored
  auto vc = mmla::MatrixView<float>::col_major(c.data(), m, n);
  mmla::gemm(va, vbt.t(), vc);
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      float s = 0;
      for (std::int64_t p = 0; p < k; ++p) s += a[i * k + p] * b[j * k + p];
      EXPECT_EQ(vc(i, j), s);  // small integers: exact in any order
    }
}

TEST(CppApi, ErrorsThrowAndLeaveCUntouched) {
  std::vector<float> a(12, 1.0f), b(12, 1.0f), c(12, 9.0f);
  auto vc = mmla::MatrixView<float>::row_major(c.data(), 3, 4);
  const auto va = mmla::MatrixView<const float>::row_major(a.data(), 3, 4);
  const auto vb = mmla::MatrixView<const float>::row_major(b.data(), 3, 4);
  try {
    mmla::gemm(va, vb, vc);  // 3x4 * 3x4
    FAIL() << "shape mismatch not detected";
  } catch (const mmla::Error& e) {
    EXPECT_EQ(e.status(), MMLA_STATUS_INVALID_ARGUMENT);
    EXPECT_NE(std::string(e.what()).find("shapes do not match"), std::string::npos) << e.what();
  }
  const mmla::MatrixView<float> strided_c(c.data(), 2, 2, 1, 1);  // elements overlap
  const auto va2 = mmla::MatrixView<const float>::row_major(a.data(), 2, 3);
  const auto vb2 = mmla::MatrixView<const float>::row_major(b.data(), 3, 2);
  EXPECT_THROW(mmla::gemm(va2, vb2, strided_c), mmla::Error);
  for (float v : c) EXPECT_EQ(v, 9.0f);
}

TEST(CppApi, ViewFactoriesCheckTheLeadingDimension) {
  float x[16] = {};
  EXPECT_THROW(mmla::MatrixView<float>::row_major(x, 3, 4, 3), mmla::Error);
  EXPECT_THROW(mmla::MatrixView<float>::row_major(x, 3, 4, -7), mmla::Error);
  EXPECT_THROW(mmla::MatrixView<float>::col_major(x, 3, 4, 2), mmla::Error);
  EXPECT_EQ(mmla::MatrixView<float>::row_major(x, 3, 4).row_stride, 4);
  EXPECT_EQ(mmla::MatrixView<float>::row_major(x, 3, 4, 5).row_stride, 5);
  EXPECT_EQ(mmla::MatrixView<float>::col_major(x, 3, 4).col_stride, 3);
}

TEST(CApi, VersionAndStatusStrings) {
  EXPECT_STREQ(mmla_version(), MMLA_TEST_VERSION);
  EXPECT_STREQ(mmla_status_string(MMLA_STATUS_SUCCESS), "success");
  EXPECT_STREQ(mmla_status_string(MMLA_STATUS_INVALID_ARGUMENT), "invalid argument");
  EXPECT_STREQ(mmla_status_string(static_cast<mmla_status>(77)), "unknown status");
}

}  // namespace
}  // namespace mmla::test
