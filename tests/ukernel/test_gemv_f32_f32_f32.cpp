// Every registered gemv_f32_f32_f32 kernel the CPU can run, against the double reference: lengths
// and depths around every vector width and unroll, strided X, and no write past len.
#include <gtest/gtest.h>

#include <cmath>
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

// X is len x k (element (j, p)); `columns` stores it with contiguous columns (for axpy), else
// contiguous rows (for dot), with padding between them.
void check(const GemvKernel& kn, std::size_t len, std::size_t k, bool columns) {
  const auto il = static_cast<std::int64_t>(len), ik = static_cast<std::int64_t>(k);
  const Strided x = make_matrix(il, ik, !columns, 3, static_cast<std::uint32_t>(len * 131 + k));
  const Strided v = make_matrix(1, ik, true, 0, static_cast<std::uint32_t>(k + 7));
  std::vector<float> acc(len + 8);
  for (std::size_t j = 0; j < acc.size(); ++j) acc[j] = 0.25f * static_cast<float>(j % 5);
  const std::vector<float> before = acc;
  if (columns) {
    kn.axpy(len, k, x.data.data(), x.cs, v.data.data(), acc.data());
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
        << kn.name << (columns ? " axpy" : " dot") << " len=" << len << " k=" << k << " j=" << j;
  }
  for (std::size_t j = len; j < acc.size(); ++j)
    ASSERT_EQ(0, std::memcmp(&acc[j], &before[j], sizeof(float))) << kn.name << " wrote past len";
}

TEST_P(Gemv, AxpyAndDotOverLengthsAndDepths) {
  for (std::size_t len : {1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 33, 64, 100})
    for (std::size_t k : {1, 2, 3, 4, 5, 8, 9, 16, 17, 67}) {
      check(*GetParam(), len, k, true);
      check(*GetParam(), len, k, false);
      if (HasFatalFailure()) return;
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
