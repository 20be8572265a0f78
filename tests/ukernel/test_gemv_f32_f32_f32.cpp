// Every registered gemv_f32_f32_f32 kernel the CPU can run, against the double reference: lengths
// and depths around every vector width and unroll, strided X, and no write past len.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "support/reference.hpp"
#include "ukernel/registry.hpp"

namespace mmla::test {
namespace {

using ukernel::GemvKernel;

std::vector<const GemvKernel*> gemv_kernels() {
  std::vector<const GemvKernel*> out(ukernel::all_gemv_kernels().begin(), ukernel::all_gemv_kernels().end());
  return out;
}

class Gemv : public ::testing::TestWithParam<const GemvKernel*> {
 protected:
  void SetUp() override {
    if (!ukernel::usable(*GetParam()))
      GTEST_SKIP() << GetParam()->name << " is not usable on this CPU/MMLA_ISA";
  }
};

// The bf16 with the top half of f's bits (any bf16 will do), and f set to exactly that value.
std::uint16_t to_bf16_bits(float& f) {
  std::uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  u &= 0xffff0000u;
  std::memcpy(&f, &u, sizeof f);
  return static_cast<std::uint16_t>(u >> 16);
}

// X is len x k (element (j, p)); `columns` stores it with contiguous columns (for axpy), else
// contiguous rows (for dot), with padding between them. bf16: X is passed as bf16 (the entry
// points that widen it), the reference multiplies the same values.
void check(const GemvKernel& kn, std::size_t len, std::size_t k, bool columns, bool bf16,
           std::size_t rows = 4) {
  const auto il = static_cast<std::int64_t>(len), ik = static_cast<std::int64_t>(k);
  Strided x = make_matrix(il, ik, !columns, 3, static_cast<std::uint32_t>(len * 131 + k));
  std::vector<std::uint16_t> x16(x.data.size());
  if (bf16)
    for (std::size_t i = 0; i < x.data.size(); ++i) x16[i] = to_bf16_bits(x.data[i]);
  const Strided v = make_matrix(1, ik, true, 0, static_cast<std::uint32_t>(k + 7));
  std::vector<float> acc(len + 8);
  for (std::size_t j = 0; j < acc.size(); ++j) acc[j] = 0.25f * static_cast<float>(j % 5);
  const std::vector<float> before = acc;
  if (columns && bf16) {
    kn.axpy_bf16(len, k, x16.data(), x.cs, v.data.data(), acc.data(), rows);
  } else if (columns) {
    kn.axpy(len, k, x.data.data(), x.cs, v.data.data(), acc.data(), rows);
  } else if (bf16) {
    kn.dot_bf16(len, k, x16.data(), x.rs, v.data.data(), acc.data());
  } else {
    kn.dot(len, k, x.data.data(), x.rs, v.data.data(), acc.data());
  }
  for (std::size_t j = 0; j < len; ++j) {
    double expect = columns ? before[j] : 0.0, scale = std::abs(expect);
    for (std::size_t p = 0; p < k; ++p) {
      const double t = static_cast<double>(x.at(static_cast<std::int64_t>(j), static_cast<std::int64_t>(p))) *
                       v.at(0, static_cast<std::int64_t>(p));
      expect += t, scale += std::abs(t);
    }
    ASSERT_LE(std::abs(acc[j] - expect), fp32_bound_factor(ik + 1, ik + 1) * scale)
        << kn.name << (columns ? " axpy" : " dot") << (bf16 ? " bf16" : "") << " len=" << len << " k=" << k
        << " rows=" << rows << " j=" << j;
  }
  for (std::size_t j = len; j < acc.size(); ++j)
    ASSERT_EQ(0, std::memcmp(&acc[j], &before[j], sizeof(float))) << kn.name << " wrote past len";
}

TEST_P(Gemv, AxpyAndDotOverLengthsAndDepths) {
  for (std::size_t len : {1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 33, 64, 100})
    for (std::size_t k : {1, 2, 3, 4, 5, 8, 9, 16, 17, 67})
      for (bool bf16 : {false, true}) {
        check(*GetParam(), len, k, true, bf16);
        check(*GetParam(), len, k, false, bf16);
        if (HasFatalFailure()) return;
      }
}

// Eight rows per sweep, and every number of rows left over after the sweeps of eight and four.
TEST_P(Gemv, AxpyEightRowsPerSweep) {
  for (std::size_t len : {65, 100, 257})
    for (std::size_t k = 1; k <= 27; ++k)
      for (bool bf16 : {false, true}) {
        check(*GetParam(), len, k, true, bf16, 8);
        if (HasFatalFailure()) return;
      }
}

// Four panels side by side (a prepacked B at M = 1): every whole-vector width it takes, against the
// double reference, accumulating onto acc; any other width is refused with acc untouched.
TEST_P(Gemv, Panels4) {
  const GemvKernel& kn = *GetParam();
  std::size_t lanes = 0;  // the kernel's vector width: the smallest len it takes
  for (std::size_t len = 1; len <= 64 && lanes == 0; ++len) {
    std::vector<float> x(4 * len, 1.0f), v(1, 1.0f), acc(4 * len, 0.0f);
    if (kn.axpy_panels4(len, 1, x.data(), static_cast<std::ptrdiff_t>(len), static_cast<std::ptrdiff_t>(len),
                        v.data(), acc.data()))
      lanes = len;
    else
      for (float a : acc) ASSERT_EQ(a, 0.0f) << kn.name << " refused len " << len << " but wrote";
  }
  ASSERT_NE(lanes, 0u) << kn.name;
  for (std::size_t vecs = 1; vecs <= 4; ++vecs)
    for (std::size_t k : {1, 2, 7, 67}) {
      const std::size_t len = vecs * lanes;
      const auto stride = static_cast<std::ptrdiff_t>(len * k + 5);  // panels apart, with a gap
      std::vector<float> x(4 * static_cast<std::size_t>(stride));
      for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>((i * 37) % 17) / 8.0f - 1.0f;
      std::vector<float> v(k);
      for (std::size_t p = 0; p < k; ++p) v[p] = static_cast<float>((p * 5) % 7) / 4.0f - 0.7f;
      std::vector<float> acc(4 * len + 8);
      for (std::size_t j = 0; j < acc.size(); ++j) acc[j] = 0.25f * static_cast<float>(j % 5);
      const std::vector<float> before = acc;
      ASSERT_TRUE(
          kn.axpy_panels4(len, k, x.data(), stride, static_cast<std::ptrdiff_t>(len), v.data(), acc.data()))
          << kn.name << " len=" << len;
      for (std::size_t q = 0; q < 4; ++q)
        for (std::size_t j = 0; j < len; ++j) {
          double expect = before[q * len + j], scale = std::abs(expect);
          for (std::size_t p = 0; p < k; ++p) {
            const double t =
                static_cast<double>(x[q * static_cast<std::size_t>(stride) + p * len + j]) * v[p];
            expect += t, scale += std::abs(t);
          }
          ASSERT_LE(
              std::abs(acc[q * len + j] - expect),
              fp32_bound_factor(static_cast<std::int64_t>(k) + 1, static_cast<std::int64_t>(k) + 1) * scale)
              << kn.name << " len=" << len << " k=" << k << " panel " << q << " j=" << j;
        }
      for (std::size_t j = 4 * len; j < acc.size(); ++j)
        ASSERT_EQ(acc[j], before[j]) << kn.name << " wrote past";
    }
}

// Panels of a bf16 B in the c2 layout (depth pairs per column), one or four at a time, every panel
// width around the vector widths (and 48, the AVX512_BF16 8x48c2 tile's), odd depths (the last
// pair's second half zero), a partial last panel: against the double reference, accumulating onto
// acc, and nothing written past the last panel's len.
TEST_P(Gemv, Bf16c2Panels) {
  const GemvKernel& kn = *GetParam();
  for (std::size_t nr : {1, 4, 5, 8, 16, 32, 48, 64, 80})
    for (std::size_t count : {1, 4})
      for (std::size_t k : {1, 2, 7, 66})
        for (std::size_t len : {nr, nr - (nr + 2) / 3}) {
          const std::size_t pairs = (k + 1) / 2;
          const auto stride = static_cast<std::ptrdiff_t>(2 * pairs * nr + 6);  // panels apart, with a gap
          // x as bf16, xf the same values in fp32; zero past an odd k
          std::vector<std::uint16_t> x(count * static_cast<std::size_t>(stride));
          std::vector<float> xf(x.size());
          for (std::size_t q = 0; q < count; ++q)
            for (std::size_t i = 0; i < 2 * pairs * nr; ++i) {
              const std::size_t p = i / (2 * nr) * 2 + i % 2, at = q * static_cast<std::size_t>(stride) + i;
              xf[at] = p < k ? static_cast<float>((q * 7 + i * 37) % 17) / 8.0f - 1.0f : 0.0f;
              x[at] = to_bf16_bits(xf[at]);
            }
          std::vector<float> v(k);
          for (std::size_t p = 0; p < k; ++p) v[p] = static_cast<float>((p * 5) % 7) / 4.0f - 0.7f;
          std::vector<float> acc(count * nr + 8);
          for (std::size_t j = 0; j < acc.size(); ++j) acc[j] = 0.25f * static_cast<float>(j % 5);
          const std::vector<float> before = acc;
          kn.axpy_bf16c2(count, nr, len, k, x.data(), stride, v.data(), acc.data());
          const std::size_t end = (count - 1) * nr + len;
          for (std::size_t q = 0; q < count; ++q)
            for (std::size_t j = 0; q * nr + j < end && j < nr; ++j) {
              double expect = before[q * nr + j], scale = std::abs(expect);
              for (std::size_t p = 0; p < k; ++p) {
                const double t =
                    static_cast<double>(
                        xf[q * static_cast<std::size_t>(stride) + p / 2 * 2 * nr + 2 * j + p % 2]) *
                    v[p];
                expect += t, scale += std::abs(t);
              }
              ASSERT_LE(
                  std::abs(acc[q * nr + j] - expect),
                  fp32_bound_factor(static_cast<std::int64_t>(k) + 1, static_cast<std::int64_t>(k) + 1) *
                      scale)
                  << kn.name << " nr=" << nr << " count=" << count << " k=" << k << " len=" << len
                  << " panel " << q << " j=" << j;
            }
          for (std::size_t j = end; j < acc.size(); ++j)
            ASSERT_EQ(acc[j], before[j]) << kn.name << " wrote past nr=" << nr << " len=" << len;
        }
}

// Several vectors at once: every row count up to kGemvDotsMaxRows (tiles of each height and the
// rows left over), lengths around every tile width, depths around the vector widths (the zeroed
// tail), padded rows of V and X and an acc wider than len, X of fp32 and of bf16; accumulates onto
// acc, against the double reference, and writes nothing past len in any row.
TEST_P(Gemv, DotsOverRowsLengthsAndDepths) {
  const GemvKernel& kn = *GetParam();
  for (std::size_t rows = 1; rows <= ukernel::kGemvDotsMaxRows; ++rows)
    for (std::size_t len : {1, 2, 3, 5, 8, 9, 17})
      for (std::size_t k : {1, 3, 4, 7, 8, 15, 16, 17, 33, 67})
        for (bool bf16 : {false, true}) {
          const auto il = static_cast<std::int64_t>(len), ik = static_cast<std::int64_t>(k);
          Strided x = make_matrix(il, ik, true, 3, static_cast<std::uint32_t>(len * 131 + k));
          std::vector<std::uint16_t> x16(x.data.size());
          if (bf16)
            for (std::size_t i = 0; i < x.data.size(); ++i) x16[i] = to_bf16_bits(x.data[i]);
          const Strided v =
              make_matrix(static_cast<std::int64_t>(rows), ik, true, 5, static_cast<std::uint32_t>(k + rows));
          const std::size_t ld = len + 3;
          std::vector<float> acc(rows * ld);
          for (std::size_t j = 0; j < acc.size(); ++j) acc[j] = 0.25f * static_cast<float>(j % 5);
          const std::vector<float> before = acc;
          if (bf16) {
            kn.dots_bf16(rows, len, k, x16.data(), x.rs, v.data.data(), v.rs, acc.data(), ld);
          } else {
            kn.dots(rows, len, k, x.data.data(), x.rs, v.data.data(), v.rs, acc.data(), ld);
          }
          for (std::size_t i = 0; i < rows; ++i) {
            for (std::size_t j = 0; j < len; ++j) {
              double expect = before[i * ld + j], scale = std::abs(expect);
              for (std::size_t p = 0; p < k; ++p) {
                const double t =
                    static_cast<double>(x.at(static_cast<std::int64_t>(j), static_cast<std::int64_t>(p))) *
                    v.at(static_cast<std::int64_t>(i), static_cast<std::int64_t>(p));
                expect += t, scale += std::abs(t);
              }
              ASSERT_LE(std::abs(acc[i * ld + j] - expect), fp32_bound_factor(ik + 1, ik + 1) * scale)
                  << kn.name << " dots rows=" << rows << " len=" << len << " k=" << k << " at " << i << ","
                  << j;
            }
            for (std::size_t j = len; j < ld; ++j)
              ASSERT_EQ(0, std::memcmp(&acc[i * ld + j], &before[i * ld + j], sizeof(float)))
                  << kn.name << " dots wrote past len in row " << i;
          }
        }
}

TEST_P(Gemv, Bf16DenormalsAreKept) {
  // Widening a bf16 is exact, denormals included: 2^-133 (the smallest bf16 denormal) x 2^100.
  const GemvKernel& kn = *GetParam();
  for (std::size_t len : {1, 16, 33}) {
    const std::vector<std::uint16_t> x(len * 4, 0x0001);
    const std::vector<float> v(4, 0x1p100f);
    std::vector<float> acc(len, 0.0f);
    kn.axpy_bf16(len, 4, x.data(), static_cast<std::ptrdiff_t>(len), v.data(), acc.data(), 4);
    for (float a : acc) EXPECT_EQ(a, 0x1p-31f) << kn.name << " axpy len=" << len;
    std::fill(acc.begin(), acc.end(), 1.0f);
    kn.dot_bf16(len, 4, x.data(), 4, v.data(), acc.data());
    for (float a : acc) EXPECT_EQ(a, 0x1p-31f) << kn.name << " dot len=" << len;
  }
}

TEST(GemvRegistry, FamilyHasAPortableKernel) {
  bool has_ref = false;
  for (const GemvKernel* k : gemv_kernels()) has_ref |= k->isa == cpu::Isa::ref;
  EXPECT_TRUE(has_ref);
}

INSTANTIATE_TEST_SUITE_P(Registry, Gemv, ::testing::ValuesIn(gemv_kernels()),
                         [](const ::testing::TestParamInfo<const GemvKernel*>& info) {
                           return std::string(info.param->name);
                         });

}  // namespace
}  // namespace mmla::test
