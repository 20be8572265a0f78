// Prepacked weights: mmla_pack_b / mmla_gemm_packed / mmla::PackedMatrix against the double
// reference over layouts and transposes, and every misuse: wrong shape, wrong kernel, bad handle.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <tuple>
#include <vector>

#include "api/packed.hpp"
#include "api/problem.hpp"
#include "mmla/cblas.h"
#include "mmla/mmla.h"
#include "mmla/mmla.hpp"
#include "support/reference.hpp"
#include "ukernel/bf16.hpp"
#include "ukernel/registry.hpp"

namespace mmla::test {
namespace {

const api::Selection& f32_selection() { return api::selection(ukernel::Family::gemm_f32_f32p_f32p); }

using Combo = std::tuple<bool /*row major*/, bool /*trans a*/, bool /*trans b*/>;
class PackedCombos : public ::testing::TestWithParam<Combo> {};

TEST_P(PackedCombos, MatchesReferenceAndIsReusable) {
  const auto [row, ta, tb] = GetParam();
  const std::int64_t kc = static_cast<std::int64_t>(f32_selection().blocking.kc);
  // n = 64 packs for a 32-wide tile where the tile set has one (the handle takes the tile that pads
  // n least), the others for the first tile.
  const std::int64_t shapes[][3] = {
      {1, 1, 1}, {5, 37, 19}, {40, 70, kc + 3}, {3, 130, 2 * kc + 1}, {29, 64, kc + 5}};
  for (const auto& s : shapes) {
    const std::int64_t m = s[0], n = s[1], k = s[2];
    // Stored operands: op(X) is X or X^T, in the given layout, with padded leading dimensions.
    const Strided as = make_matrix(ta ? k : m, ta ? m : k, row, 2, 1),
                  bs = make_matrix(tb ? n : k, tb ? k : n, row, 3, 2);
    const std::int64_t lda = row ? as.rs : as.cs, ldb = row ? bs.rs : bs.cs;
    const auto opa = [&](std::int64_t i, std::int64_t p) { return ta ? as.at(p, i) : as.at(i, p); };
    const auto opb = [&](std::int64_t p, std::int64_t j) { return tb ? bs.at(j, p) : bs.at(p, j); };
    mmla_packed_matrix* h = nullptr;
    ASSERT_EQ(MMLA_STATUS_SUCCESS,
              mmla_pack_b(row ? MMLA_ROW_MAJOR : MMLA_COL_MAJOR, tb ? MMLA_TRANS : MMLA_NO_TRANS, k, n,
                          bs.data.data(), ldb, &h))
        << mmla_last_error();
    std::size_t bytes = 0;
    ASSERT_EQ(MMLA_STATUS_SUCCESS, mmla_packed_size(h, &bytes));
    // Packed for a bf16 kernel (fast math in force on a CPU with one): bf16 input rounding on top.
    const double bound = h->layout.kernel->elem_size == 2
                             ? 2 * 0x1p-8 + 0x1p-16 + fp32_bound_factor(2 * k, 64)
                             : fp32_bound_factor(k, kc);
    EXPECT_GE(bytes, static_cast<std::size_t>(k * n) * h->layout.kernel->elem_size);
    if (h->layout.kernel->family == ukernel::Family::gemm_f32_f32p_f32p) {
      EXPECT_EQ(h->layout.kernel, f32_selection().tile_for_columns(static_cast<std::size_t>(n)).kernel);
    }
    for (float beta : {0.0f, 0.5f}) {  // the same handle twice
      Strided c = make_matrix(m, n, row, 1, 3);
      fill_nan_if_beta_zero(c, m, n, beta);
      const Strided before = c;
      ASSERT_EQ(MMLA_STATUS_SUCCESS,
                mmla_gemm_packed(row ? MMLA_ROW_MAJOR : MMLA_COL_MAJOR, ta ? MMLA_TRANS : MMLA_NO_TRANS, m, n,
                                 k, -0.75f, as.data.data(), lda, h, beta, c.data.data(), row ? c.rs : c.cs))
          << mmla_last_error();
      const Reference r = reference_gemm(m, n, k, -0.75f, opa, opb, beta,
                                         [&](std::int64_t i, std::int64_t j) { return before.at(i, j); });
      ASSERT_TRUE(matches(
          r, [&](std::int64_t i, std::int64_t j) { return c.at(i, j); }, bound))
          << m << "x" << n << "x" << k << " beta=" << beta;
      for (std::size_t idx = 0; idx < c.data.size(); ++idx) {  // padding untouched
        const std::int64_t outer = static_cast<std::int64_t>(idx) / (row ? c.rs : c.cs);
        const std::int64_t inner = static_cast<std::int64_t>(idx) % (row ? c.rs : c.cs);
        if (inner >= (row ? n : m) || outer >= (row ? m : n)) {
          ASSERT_EQ(0, std::memcmp(&c.data[idx], &before.data[idx], sizeof(float)));
        }
      }
    }
    mmla_packed_free(h);
  }
}

std::string combo_name(const ::testing::TestParamInfo<Combo>& info) {
  const auto [row, ta, tb] = info.param;
  return std::string(row ? "Row" : "Col") + (ta ? "T" : "N") + (tb ? "T" : "N");
}
INSTANTIATE_TEST_SUITE_P(All, PackedCombos,
                         ::testing::Combine(::testing::Bool(), ::testing::Bool(), ::testing::Bool()),
                         combo_name);

struct Handle {
  mmla_packed_matrix* h = nullptr;
  ~Handle() { mmla_packed_free(h); }
};

TEST(Packed, ShapeMismatchIsAnErrorAndCIsUntouched) {
  std::vector<float> a(64, 1.0f), b(64, 1.0f), c(64, 7.0f);
  Handle p;
  ASSERT_EQ(MMLA_STATUS_SUCCESS, mmla_pack_b(MMLA_ROW_MAJOR, MMLA_NO_TRANS, 4, 6, b.data(), 6, &p.h));
  EXPECT_EQ(MMLA_STATUS_INVALID_ARGUMENT,
            mmla_gemm_packed(MMLA_ROW_MAJOR, MMLA_NO_TRANS, 2, 6, 5, 1, a.data(), 5, p.h, 0, c.data(), 6));
  EXPECT_NE(std::string(mmla_last_error()).find("packed as 4 x 6"), std::string::npos) << mmla_last_error();
  EXPECT_EQ(MMLA_STATUS_INVALID_ARGUMENT,
            mmla_gemm_packed(MMLA_ROW_MAJOR, MMLA_NO_TRANS, 2, 5, 4, 1, a.data(), 4, p.h, 0, c.data(), 6));
  for (float v : c) ASSERT_EQ(v, 7.0f);
}

TEST(Packed, HandleForAnotherKernelIsAnError) {
  // A handle packed under another kernel (another MMLA_ISA, or later another fp-math mode) must be
  // refused, not misread. Forge one by pointing it at a registered kernel outside the tile set.
  const ukernel::GemmKernel* other = nullptr;
  const auto& tiles = f32_selection().tiles;
  for (const ukernel::GemmKernel* k : ukernel::all_kernels())
    if (k->family == ukernel::Family::gemm_f32_f32p_f32p &&
        std::none_of(tiles.begin(), tiles.end(),
                     [&](const api::Selection::Tile& t) { return t.kernel == k; }))
      other = k;
  ASSERT_NE(other, nullptr) << "every build has at least the ref kernel and one SIMD kernel";
  std::vector<float> a(64, 1.0f), b(64, 1.0f), c(64, 7.0f);
  Handle p;
  ASSERT_EQ(MMLA_STATUS_SUCCESS, mmla_pack_b(MMLA_ROW_MAJOR, MMLA_NO_TRANS, 4, 6, b.data(), 6, &p.h));
  p.h->layout.kernel = other;
  EXPECT_EQ(MMLA_STATUS_INVALID_ARGUMENT,
            mmla_gemm_packed(MMLA_ROW_MAJOR, MMLA_NO_TRANS, 2, 6, 4, 1, a.data(), 4, p.h, 0, c.data(), 6));
  EXPECT_NE(std::string(mmla_last_error()).find(std::string("packed for kernel ") + other->name),
            std::string::npos)
      << mmla_last_error();
  for (float v : c) ASSERT_EQ(v, 7.0f);
}

TEST(Packed, BadHandlesAndArguments) {
  std::vector<float> a(64, 1.0f), b(64, 1.0f), c(64, 7.0f);
  EXPECT_EQ(MMLA_STATUS_INVALID_ARGUMENT, mmla_gemm_packed(MMLA_ROW_MAJOR, MMLA_NO_TRANS, 2, 6, 4, 1,
                                                           a.data(), 4, nullptr, 0, c.data(), 6));
  EXPECT_NE(std::string(mmla_last_error()).find("argument 9"), std::string::npos);
  // Memory that is not a handle.
  alignas(64) unsigned char junk[sizeof(mmla_packed_matrix)] = {};
  const auto* fake = reinterpret_cast<const mmla_packed_matrix*>(junk);
  EXPECT_EQ(MMLA_STATUS_INVALID_ARGUMENT,
            mmla_gemm_packed(MMLA_ROW_MAJOR, MMLA_NO_TRANS, 2, 6, 4, 1, a.data(), 4, fake, 0, c.data(), 6));
  std::size_t bytes = 0;
  EXPECT_EQ(MMLA_STATUS_INVALID_ARGUMENT, mmla_packed_size(fake, &bytes));
  EXPECT_EQ(MMLA_STATUS_INVALID_ARGUMENT, mmla_packed_size(nullptr, &bytes));
  // pack_b's own checks, by position in its signature.
  mmla_packed_matrix* h = reinterpret_cast<mmla_packed_matrix*>(&bytes);  // must be overwritten with null
  EXPECT_EQ(MMLA_STATUS_INVALID_ARGUMENT, mmla_pack_b(MMLA_ROW_MAJOR, MMLA_NO_TRANS, 4, 6, b.data(), 5, &h));
  EXPECT_NE(std::string(mmla_last_error()).find("argument 6"), std::string::npos) << mmla_last_error();
  EXPECT_EQ(h, nullptr);
  EXPECT_EQ(MMLA_STATUS_INVALID_ARGUMENT, mmla_pack_b(MMLA_ROW_MAJOR, MMLA_NO_TRANS, -1, 6, b.data(), 6, &h));
  EXPECT_NE(std::string(mmla_last_error()).find("argument 3"), std::string::npos) << mmla_last_error();
  EXPECT_EQ(MMLA_STATUS_INVALID_ARGUMENT,
            mmla_pack_b(MMLA_ROW_MAJOR, static_cast<mmla_transpose>(7), 4, 6, b.data(), 6, &h));
  EXPECT_NE(std::string(mmla_last_error()).find("argument 2"), std::string::npos) << mmla_last_error();
  EXPECT_EQ(MMLA_STATUS_INVALID_ARGUMENT, mmla_pack_b(MMLA_ROW_MAJOR, MMLA_NO_TRANS, 4, 6, nullptr, 6, &h));
  EXPECT_NE(std::string(mmla_last_error()).find("argument 5"), std::string::npos) << mmla_last_error();
  EXPECT_EQ(MMLA_STATUS_INVALID_ARGUMENT,
            mmla_pack_b(MMLA_ROW_MAJOR, MMLA_NO_TRANS, 4, 6, b.data(), 6, nullptr));
  // gemm_packed's own A/C checks, by position in its signature.
  Handle p;
  ASSERT_EQ(MMLA_STATUS_SUCCESS, mmla_pack_b(MMLA_ROW_MAJOR, MMLA_NO_TRANS, 4, 6, b.data(), 6, &p.h));
  EXPECT_EQ(MMLA_STATUS_INVALID_ARGUMENT,
            mmla_gemm_packed(MMLA_ROW_MAJOR, MMLA_NO_TRANS, 2, 6, 4, 1, a.data(), 3, p.h, 0, c.data(), 6));
  EXPECT_NE(std::string(mmla_last_error()).find("argument 8"), std::string::npos) << mmla_last_error();
  EXPECT_EQ(MMLA_STATUS_INVALID_ARGUMENT,
            mmla_gemm_packed(MMLA_ROW_MAJOR, MMLA_NO_TRANS, 2, 6, 4, 1, a.data(), 4, p.h, 0, c.data(), 5));
  EXPECT_NE(std::string(mmla_last_error()).find("argument 12"), std::string::npos) << mmla_last_error();
  for (float v : c) ASSERT_EQ(v, 7.0f);
  mmla_packed_free(nullptr);  // allowed
}

TEST(Packed, ZeroSizes) {
  std::vector<float> a(8, 1.0f), c(8, 3.0f);
  Handle p;
  ASSERT_EQ(MMLA_STATUS_SUCCESS, mmla_pack_b(MMLA_ROW_MAJOR, MMLA_NO_TRANS, 0, 4, nullptr, 4, &p.h));
  std::size_t bytes = 1;
  ASSERT_EQ(MMLA_STATUS_SUCCESS, mmla_packed_size(p.h, &bytes));
  EXPECT_EQ(bytes, 0u);
  // k == 0: C = beta * C.
  ASSERT_EQ(MMLA_STATUS_SUCCESS,
            mmla_gemm_packed(MMLA_ROW_MAJOR, MMLA_NO_TRANS, 2, 4, 0, 1, a.data(), 1, p.h, 2.0f, c.data(), 4));
  for (float v : c) EXPECT_EQ(v, 6.0f);
}

TEST(CppPacked, PackedMatrixOnViews) {
  const std::int64_t m = 6, n = 10, k = 7;
  std::vector<float> a(m * k), w(n * k), c(m * n, 0.0f), expect(m * n, 0.0f);
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(i % 5) - 2;
  for (std::size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(i % 3) - 1;
  // The inference case: weights stored as W (n x k, row-major), used as W^T.
  const mmla::PackedMatrix pw(mmla::MatrixView<const float>::row_major(w.data(), n, k).t());
  EXPECT_EQ(pw.rows(), k);
  EXPECT_EQ(pw.cols(), n);
  EXPECT_GE(pw.bytes(), static_cast<std::size_t>(k * n) * pw.get()->layout.kernel->elem_size);
  for (bool c_row : {true, false}) {
    auto vc = c_row ? mmla::MatrixView<float>::row_major(c.data(), m, n)
                    : mmla::MatrixView<float>::col_major(c.data(), m, n);
    mmla::gemm(1.0f, mmla::MatrixView<const float>::row_major(a.data(), m, k), pw, 0.0f, vc);
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t j = 0; j < n; ++j) {
        float s = 0;
        for (std::int64_t p = 0; p < k; ++p) s += a[i * k + p] * w[j * k + p];
        EXPECT_EQ(vc(i, j), s) << i << "," << j;  // small integers: exact
      }
  }
  mmla::PackedMatrix moved = mmla::PackedMatrix(mmla::MatrixView<const float>::row_major(w.data(), k, n));
  EXPECT_EQ(moved.rows(), k);
  auto vc = mmla::MatrixView<float>::row_major(c.data(), m, n);
  EXPECT_THROW(mmla::gemm(1.0f, mmla::MatrixView<const float>::row_major(a.data(), m, k - 1), pw, 0.0f, vc),
               mmla::Error);
}

TEST(PackedBf16, FastMathPacksBf16AndTheHandleKeepsItsKernel) {
  const std::int64_t m = 9, n = 70, k = 45;
  const Strided a = make_matrix(m, k, true, 0, 21), b = make_matrix(k, n, true, 0, 22);
  std::vector<float> c(static_cast<std::size_t>(m * n));
  Handle h;
  {
    const mmla::ScopedFpMath fast(mmla::FpMath::bf16);
    ASSERT_EQ(MMLA_STATUS_SUCCESS, mmla_pack_b(MMLA_ROW_MAJOR, MMLA_NO_TRANS, k, n, b.data.data(), n, &h.h));
    EXPECT_EQ(h.h->layout.kernel->family, api::bf16_hardware() ? ukernel::Family::gemm_f32_bf16p_bf16p
                                                               : ukernel::Family::gemm_f32_f32p_f32p);
    ASSERT_EQ(MMLA_STATUS_SUCCESS, mmla_gemm_packed(MMLA_ROW_MAJOR, MMLA_NO_TRANS, m, n, k, 1, a.data.data(),
                                                    k, h.h, 0, c.data(), n))
        << mmla_last_error();
    const Reference r = reference_gemm(
        m, n, k, 1.0f, [&](std::int64_t i, std::int64_t p) { return a.at(i, p); },
        [&](std::int64_t p, std::int64_t j) { return b.at(p, j); }, 0.0f,
        [](std::int64_t, std::int64_t) { return 0.0f; });
    EXPECT_TRUE(matches(
        r, [&](std::int64_t i, std::int64_t j) { return c[static_cast<std::size_t>(i * n + j)]; },
        2 * 0x1p-8 + 0x1p-16 + fp32_bound_factor(2 * k, 64)));
  }
  if (api::bf16_hardware()) {
    // Strict now selects the fp32 kernel: a bf16-packed handle is refused, not misread.
    const mmla::ScopedFpMath strict(mmla::FpMath::strict);
    EXPECT_EQ(MMLA_STATUS_INVALID_ARGUMENT, mmla_gemm_packed(MMLA_ROW_MAJOR, MMLA_NO_TRANS, m, n, k, 1,
                                                             a.data.data(), k, h.h, 0, c.data(), n));
    EXPECT_NE(std::string(mmla_last_error()).find("packed for kernel gemm_f32_bf16p_bf16p"),
              std::string::npos)
        << mmla_last_error();
  }
}

TEST(PackedBf16, PackFromBf16Weights) {
  const std::int64_t m = 12, n = 33, k = 50;
  const Strided a = make_matrix(m, k, true, 0, 31);
  Strided w = make_matrix(n, k, true, 0, 32);  // weights W (n x k), used as W^T
  std::vector<std::uint16_t> w16(w.data.size());
  cblas_sbstobf16(static_cast<int>(w.data.size()), w.data.data(), 1, w16.data(), 1);
  cblas_sbf16tos(static_cast<int>(w16.size()), w16.data(), 1, w.data.data(), 1);  // the exact values
  Handle h;
  ASSERT_EQ(MMLA_STATUS_SUCCESS, mmla_pack_b_bf16(MMLA_ROW_MAJOR, MMLA_TRANS, k, n, w16.data(), k, &h.h))
      << mmla_last_error();
  std::size_t bytes = 0;
  ASSERT_EQ(MMLA_STATUS_SUCCESS, mmla_packed_size(h.h, &bytes));
  const std::size_t elem = api::bf16_hardware() ? 2 : 4;  // bf16 stays bf16 where a bf16 kernel runs
  EXPECT_EQ(h.h->layout.kernel->elem_size, elem);
  EXPECT_GE(bytes, static_cast<std::size_t>(k * n) * elem);
  std::vector<float> c(static_cast<std::size_t>(m * n));
  ASSERT_EQ(MMLA_STATUS_SUCCESS, mmla_gemm_packed(MMLA_ROW_MAJOR, MMLA_NO_TRANS, m, n, k, 1, a.data.data(), k,
                                                  h.h, 0, c.data(), n))
      << mmla_last_error();
  const Reference r = reference_gemm(
      m, n, k, 1.0f, [&](std::int64_t i, std::int64_t p) { return a.at(i, p); },
      [&](std::int64_t p, std::int64_t j) { return w.at(j, p); }, 0.0f,
      [](std::int64_t, std::int64_t) { return 0.0f; });
  // A is rounded to bf16 where the bf16 kernel runs: one input's rounding, 2^-8.
  EXPECT_TRUE(matches(
      r, [&](std::int64_t i, std::int64_t j) { return c[static_cast<std::size_t>(i * n + j)]; },
      (api::bf16_hardware() ? 0x1p-8 : 0.0) + fp32_bound_factor(2 * k, 64)));
  // Bad arguments are checked as for mmla_pack_b, by position.
  mmla_packed_matrix* bad = nullptr;
  EXPECT_EQ(MMLA_STATUS_INVALID_ARGUMENT,
            mmla_pack_b_bf16(MMLA_ROW_MAJOR, MMLA_TRANS, k, n, w16.data(), k - 1, &bad));
  EXPECT_NE(std::string(mmla_last_error()).find("mmla_pack_b_bf16: argument 6"), std::string::npos)
      << mmla_last_error();
  EXPECT_EQ(bad, nullptr);
}

// bf16 activations times a prepacked B of either kind: bf16 weights (the bf16 kernel where the CPU
// has one) and fp32 weights (the fp32 kernel; M = 1 takes the GEMV). bf16 x bf16 products are exact
// in fp32, so only fp32 accumulation is in the bound. Both layouts, A transposed or not, alpha/beta,
// and a depth beyond one KC block.
TEST(PackedBf16, Bf16ActivationsWithEitherHandle) {
  const std::int64_t n = 70;
  for (const std::int64_t k : {std::int64_t{45}, static_cast<std::int64_t>(f32_selection().blocking.kc) + 9})
    for (const bool bf16_weights : {true, false}) {
      const Strided w = make_matrix(k, n, true, 0, 41);
      std::vector<std::uint16_t> w16(w.data.size());
      cblas_sbstobf16(static_cast<int>(w.data.size()), w.data.data(), 1, w16.data(), 1);
      std::vector<float> w_exact(w16.size());
      cblas_sbf16tos(static_cast<int>(w16.size()), w16.data(), 1, w_exact.data(), 1);
      Handle h;
      ASSERT_EQ(MMLA_STATUS_SUCCESS,
                bf16_weights ? mmla_pack_b_bf16(MMLA_ROW_MAJOR, MMLA_NO_TRANS, k, n, w16.data(), n, &h.h)
                             : mmla_pack_b(MMLA_ROW_MAJOR, MMLA_NO_TRANS, k, n, w_exact.data(), n, &h.h))
          << mmla_last_error();
      for (const std::int64_t m : {std::int64_t{1}, std::int64_t{9}})
        for (const bool row : {true, false})
          for (const bool ta : {false, true}) {
            // op(A) is m x k; stored as A or A^T in the call's layout, with a padded leading dimension.
            const bool a_rows_contiguous = row != ta;  // op(A)'s rows run along memory
            const std::int64_t lda = (a_rows_contiguous ? k : m) + 3;
            std::vector<std::uint16_t> a16(static_cast<std::size_t>(lda * (a_rows_contiguous ? m : k)),
                                           0xffff);
            std::vector<float> a_exact(static_cast<std::size_t>(m * k));
            for (std::int64_t i = 0; i < m; ++i)
              for (std::int64_t p = 0; p < k; ++p) {
                const float v = static_cast<float>((i * 7 + p * 3) % 11) / 8.0f - 0.6f;
                const std::uint16_t bits = ukernel::f32_to_bf16(v);
                a16[static_cast<std::size_t>(a_rows_contiguous ? i * lda + p : p * lda + i)] = bits;
                a_exact[static_cast<std::size_t>(i * k + p)] = ukernel::bf16_to_f32(bits);
              }
            const std::int64_t ldc = (row ? n : m) + 2;
            std::vector<float> c(static_cast<std::size_t>(ldc * (row ? m : n)), 0.5f);
            const auto c_at = [&](std::int64_t i, std::int64_t j) -> float& {
              return c[static_cast<std::size_t>(row ? i * ldc + j : j * ldc + i)];
            };
            const std::vector<float> before = c;
            ASSERT_EQ(MMLA_STATUS_SUCCESS, mmla_sbgemm_packed(row ? MMLA_ROW_MAJOR : MMLA_COL_MAJOR,
                                                              ta ? MMLA_TRANS : MMLA_NO_TRANS, m, n, k, 1.5f,
                                                              a16.data(), lda, h.h, -0.5f, c.data(), ldc))
                << mmla_last_error();
            const Reference r = reference_gemm(
                m, n, k, 1.5f, [&](std::int64_t i, std::int64_t p) { return a_exact[i * k + p]; },
                [&](std::int64_t p, std::int64_t j) { return w_exact[p * n + j]; }, -0.5f,
                [](std::int64_t, std::int64_t) { return 0.5f; });
            EXPECT_TRUE(matches(r, c_at, fp32_bound_factor(k, 64)))
                << "bf16 weights " << bf16_weights << " m=" << m << " k=" << k << " row " << row << " ta "
                << ta;
            // Nothing outside C's m x n changed.
            for (std::size_t x = 0; x < c.size(); ++x) {
              const std::int64_t major = static_cast<std::int64_t>(x) / ldc,
                                 minor = static_cast<std::int64_t>(x) % ldc;
              if (minor >= (row ? n : m) || major >= (row ? m : n)) {
                ASSERT_EQ(c[x], before[x]) << x;
              }
            }
          }
    }
}

// M = 1 with a prepacked fp32 B takes the GEMV, four panels at a time where there are four: a wide
// n (several groups of four panels and a partial one), k over one KC block, fp32 and bf16 A.
TEST(Packed, RowVectorOverManyPanels) {
  const std::int64_t n = 9 * 48 + 5;
  for (const std::int64_t k :
       {std::int64_t{45}, static_cast<std::int64_t>(f32_selection().blocking.kc) + 9}) {
    const Strided w = make_matrix(k, n, true, 0, 51);
    Handle h;
    {
      const mmla::ScopedFpMath strict(mmla::FpMath::strict);
      ASSERT_EQ(MMLA_STATUS_SUCCESS,
                mmla_pack_b(MMLA_ROW_MAJOR, MMLA_NO_TRANS, k, n, w.data.data(), n, &h.h));
    }
    std::vector<float> a(static_cast<std::size_t>(k));
    std::vector<std::uint16_t> a16(a.size());
    for (std::size_t p = 0; p < a.size(); ++p) {
      a16[p] = ukernel::f32_to_bf16(static_cast<float>(p % 13) / 8.0f - 0.7f);
      a[p] = ukernel::bf16_to_f32(a16[p]);
    }
    for (const bool bf16_a : {false, true}) {
      std::vector<float> c(static_cast<std::size_t>(n) + 3, 9.0f);
      const mmla::ScopedFpMath strict(mmla::FpMath::strict);
      ASSERT_EQ(MMLA_STATUS_SUCCESS, bf16_a ? mmla_sbgemm_packed(MMLA_ROW_MAJOR, MMLA_NO_TRANS, 1, n, k, 1,
                                                                 a16.data(), k, h.h, 0, c.data(), n)
                                            : mmla_gemm_packed(MMLA_ROW_MAJOR, MMLA_NO_TRANS, 1, n, k, 1,
                                                               a.data(), k, h.h, 0, c.data(), n))
          << mmla_last_error();
      const Reference r = reference_gemm(
          1, n, k, 1.0f, [&](std::int64_t, std::int64_t p) { return a[static_cast<std::size_t>(p)]; },
          [&](std::int64_t p, std::int64_t j) { return w.at(p, j); }, 0.0f,
          [](std::int64_t, std::int64_t) { return 0.0f; });
      EXPECT_TRUE(matches(
          r, [&](std::int64_t, std::int64_t j) { return c[static_cast<std::size_t>(j)]; },
          fp32_bound_factor(k, 64)))
          << "k=" << k << " bf16 A " << bf16_a;
      for (std::size_t j = static_cast<std::size_t>(n); j < c.size(); ++j) ASSERT_EQ(c[j], 9.0f);
    }
  }
}

TEST(PackedBf16, Bf16ActivationsArgumentsAreChecked) {
  std::vector<std::uint16_t> a(64, 0x3f80);
  std::vector<float> b(64, 1.0f), c(64, 7.0f);
  EXPECT_EQ(MMLA_STATUS_INVALID_ARGUMENT, mmla_sbgemm_packed(MMLA_ROW_MAJOR, MMLA_NO_TRANS, 2, 6, 4, 1,
                                                             a.data(), 4, nullptr, 0, c.data(), 6));
  EXPECT_NE(std::string(mmla_last_error()).find("mmla_sbgemm_packed: argument 9"), std::string::npos)
      << mmla_last_error();
  Handle p;
  ASSERT_EQ(MMLA_STATUS_SUCCESS, mmla_pack_b(MMLA_ROW_MAJOR, MMLA_NO_TRANS, 4, 6, b.data(), 6, &p.h));
  EXPECT_EQ(MMLA_STATUS_INVALID_ARGUMENT,
            mmla_sbgemm_packed(MMLA_ROW_MAJOR, MMLA_NO_TRANS, 2, 6, 4, 1, a.data(), 3, p.h, 0, c.data(), 6));
  EXPECT_NE(std::string(mmla_last_error()).find("argument 8"), std::string::npos) << mmla_last_error();
  EXPECT_EQ(MMLA_STATUS_INVALID_ARGUMENT,
            mmla_sbgemm_packed(MMLA_ROW_MAJOR, MMLA_NO_TRANS, 2, 6, 5, 1, a.data(), 5, p.h, 0, c.data(), 6));
  EXPECT_NE(std::string(mmla_last_error()).find("packed as 4 x 6"), std::string::npos) << mmla_last_error();
  EXPECT_EQ(MMLA_STATUS_INVALID_ARGUMENT,
            mmla_sbgemm_packed(MMLA_ROW_MAJOR, MMLA_NO_TRANS, 2, 6, 4, 1, nullptr, 4, p.h, 0, c.data(), 6));
  EXPECT_NE(std::string(mmla_last_error()).find("argument 7"), std::string::npos) << mmla_last_error();
  for (float v : c) ASSERT_EQ(v, 7.0f);
}

TEST(CppPacked, Bf16WeightsAndActivations) {
  const std::int64_t m = 5, n = 40, k = 19;
  std::vector<mmla::bfloat16> a(m * k), w(n * k);
  std::vector<float> c(m * n, 0.0f);
  // Small integers: exact in bf16, and every sum exact in fp32.
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = {ukernel::f32_to_bf16(static_cast<float>(i % 5) - 2)};
  for (std::size_t i = 0; i < w.size(); ++i) w[i] = {ukernel::f32_to_bf16(static_cast<float>(i % 3) - 1)};
  const mmla::PackedMatrix pw(mmla::MatrixView<const mmla::bfloat16>::row_major(w.data(), n, k).t());
  EXPECT_EQ(pw.rows(), k);
  EXPECT_EQ(pw.cols(), n);
  for (bool c_row : {true, false}) {
    auto vc = c_row ? mmla::MatrixView<float>::row_major(c.data(), m, n)
                    : mmla::MatrixView<float>::col_major(c.data(), m, n);
    mmla::gemm(1.0f, mmla::MatrixView<const mmla::bfloat16>::row_major(a.data(), m, k), pw, 0.0f, vc);
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t j = 0; j < n; ++j) {
        float s = 0;
        for (std::int64_t p = 0; p < k; ++p)
          s += ukernel::bf16_to_f32(a[i * k + p].bits) * ukernel::bf16_to_f32(w[j * k + p].bits);
        EXPECT_EQ(vc(i, j), s) << i << "," << j;
      }
  }
  auto vc = mmla::MatrixView<float>::row_major(c.data(), m, n);
  EXPECT_THROW(
      mmla::gemm(1.0f, mmla::MatrixView<const mmla::bfloat16>::row_major(a.data(), m, k - 1), pw, 0.0f, vc),
      mmla::Error);
}

}  // namespace
}  // namespace mmla::test
