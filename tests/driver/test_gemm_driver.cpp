// The driver with every usable kernel and forced blockings small enough that modest problems cross
// every MC/KC/NC and MR/NR edge; operands in every stride pattern the API layer produces.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <tuple>
#include <vector>

#include "cpu/cpu.hpp"
#include "driver/gemm_driver.hpp"
#include "support/reference.hpp"
#include "ukernel/registry.hpp"

namespace mmla::test {
namespace {

using ukernel::GemmKernel;

struct Case {
  std::int64_t m, n, k;
  bool a_row_major, b_row_major;
  float alpha, beta;
};

void run_case(const GemmKernel& kn, const driver::Blocking& blk, const Case& cs) {
  const auto seed = static_cast<std::uint32_t>(cs.m * 7919 + cs.n * 104729 + cs.k);
  const Strided a = make_matrix(cs.m, cs.k, cs.a_row_major, 2, seed);
  const Strided b = make_matrix(cs.k, cs.n, cs.b_row_major, 1, seed + 1);
  const std::int64_t ldc = cs.n + 3;
  Strided c = make_matrix(cs.m, ldc, true, 0, seed + 2);
  if (cs.beta == 0.0f)
    for (std::int64_t i = 0; i < cs.m; ++i)
      for (std::int64_t j = 0; j < cs.n; ++j) c.at(i, j) = std::numeric_limits<float>::quiet_NaN();
  const Strided before = c;

  driver::GemmProblem p;
  p.m = static_cast<std::size_t>(cs.m), p.n = static_cast<std::size_t>(cs.n),
  p.k = static_cast<std::size_t>(cs.k);
  p.alpha = cs.alpha, p.beta = cs.beta;
  p.a = a.data.data(), p.a_rs = a.rs, p.a_cs = a.cs;
  p.b = b.data.data(), p.b_rs = b.rs, p.b_cs = b.cs;
  p.c = c.data.data(), p.ldc = static_cast<std::size_t>(ldc);
  ASSERT_EQ(driver::gemm(kn, blk, p), driver::Status::ok);

  const Reference r = reference_gemm(
      cs.m, cs.n, cs.k, cs.alpha, [&](std::int64_t i, std::int64_t q) { return a.at(i, q); },
      [&](std::int64_t q, std::int64_t j) { return b.at(q, j); }, cs.beta,
      [&](std::int64_t i, std::int64_t j) { return before.at(i, j); });
  ASSERT_TRUE(matches(
      r, [&](std::int64_t i, std::int64_t j) { return c.at(i, j); },
      fp32_bound_factor(cs.k, static_cast<std::int64_t>(blk.kc))))
      << kn.name << " " << cs.m << "x" << cs.n << "x" << cs.k << " blocking mc=" << blk.mc << " kc=" << blk.kc
      << " nc=" << blk.nc << " a_row_major=" << cs.a_row_major << " b_row_major=" << cs.b_row_major
      << " alpha=" << cs.alpha << " beta=" << cs.beta;
  for (std::int64_t i = 0; i < cs.m; ++i)
    for (std::int64_t j = cs.n; j < ldc; ++j)
      ASSERT_EQ(0, std::memcmp(&c.data[static_cast<std::size_t>(i * ldc + j)],
                               &before.data[static_cast<std::size_t>(i * ldc + j)], sizeof(float)))
          << "padding of C written";
}

std::vector<const GemmKernel*> usable_kernels() {
  std::vector<const GemmKernel*> out;
  for (const GemmKernel* k : ukernel::all_kernels())
    if (ukernel::usable(*k)) out.push_back(k);
  return out;
}

class Driver : public ::testing::TestWithParam<const GemmKernel*> {};

TEST_P(Driver, TinyBlockingCrossesEveryEdge) {
  const GemmKernel& kn = *GetParam();
  const std::int64_t mr = kn.mr, nr = kn.nr;
  const driver::Blocking blockings[] = {
      {1, 1, 1},                                                        // degenerate
      {5, 3, 7},                                                        // not multiples of MR/NR
      {static_cast<std::size_t>(mr), 8, static_cast<std::size_t>(nr)},  // one tile per block
      {static_cast<std::size_t>(2 * mr + 1), 17, static_cast<std::size_t>(3 * nr - 1)},
  };
  const Case cases[] = {
      {1, 1, 1, true, true, 1.0f, 0.0f},
      {mr + 1, nr + 1, 9, true, true, 1.0f, 0.0f},
      {2 * mr + 3, 2 * nr + 5, 40, false, true, -1.5f, 0.5f},
      {mr - 1 > 0 ? mr - 1 : 1, 3 * nr + 1, 33, true, false, 1.0f, 1.0f},
      {3 * mr, nr - 1 > 0 ? nr - 1 : 1, 21, false, false, 0.75f, 0.0f},
  };
  for (const auto& blk : blockings)
    for (const auto& cs : cases) {
      run_case(kn, blk, cs);
      if (HasFatalFailure()) return;
    }
}

TEST_P(Driver, PrimeShapeDefaultAndSmallBlocking) {
  const GemmKernel& kn = *GetParam();
  const driver::Blocking dflt = driver::blocking_for(kn, cpu::info().caches);
  const driver::Blocking small{static_cast<std::size_t>(3 * kn.mr), 64, static_cast<std::size_t>(2 * kn.nr)};
  for (const auto& blk : {dflt, small})
    for (bool at : {true, false})
      for (bool bt : {true, false}) {
        run_case(kn, blk, {257, 113, 373, at, bt, 1.0f, 0.0f});
        if (HasFatalFailure()) return;
      }
}

TEST_P(Driver, DefaultBlockingIsSane) {
  const GemmKernel& kn = *GetParam();
  const driver::Blocking b = driver::blocking_for(kn, cpu::info().caches);
  EXPECT_GT(b.kc, 0u);
  EXPECT_EQ(b.mc % static_cast<std::size_t>(kn.mr), 0u);
  EXPECT_EQ(b.nc % static_cast<std::size_t>(kn.nr), 0u);
  EXPECT_EQ(b.kc % static_cast<std::size_t>(kn.kr), 0u);
  // The packed A block (MC x KC) must fit in L2, the B micro-panel (KC x NR) in L1.
  EXPECT_LE(b.mc * b.kc * kn.elem_size, cpu::info().caches.l2);
  EXPECT_LE(b.kc * static_cast<std::size_t>(kn.nr) * kn.elem_size, cpu::info().caches.l1d);
}

TEST_P(Driver, ZeroDepthAndZeroAlphaOnlyScaleC) {
  const GemmKernel& kn = *GetParam();
  const driver::Blocking blk = driver::blocking_for(kn, cpu::info().caches);
  for (float beta : {0.0f, 2.0f}) {
    for (std::size_t k : {std::size_t{0}, std::size_t{5}}) {
      std::vector<float> a(3 * 5, std::numeric_limits<float>::quiet_NaN()), b(5 * 4, 1.0f);
      std::vector<float> c(3 * 4, 3.0f);
      driver::GemmProblem p;
      p.m = 3, p.n = 4, p.k = k, p.alpha = 0.0f, p.beta = beta;
      if (k == 0) p.alpha = 1.0f;
      p.a = a.data(), p.a_rs = 5, p.a_cs = 1, p.b = b.data(), p.b_rs = 4, p.b_cs = 1, p.c = c.data(),
      p.ldc = 4;
      ASSERT_EQ(driver::gemm(kn, blk, p), driver::Status::ok);
      for (float v : c) EXPECT_EQ(v, 3.0f * beta) << "k=" << k << " beta=" << beta;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Registry, Driver, ::testing::ValuesIn(usable_kernels()),
                         [](const ::testing::TestParamInfo<const GemmKernel*>& info) {
                           return std::string(info.param->name);
                         });

}  // namespace
}  // namespace mmla::test
