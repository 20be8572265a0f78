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
  bool c_row_major = true;  // false: C column-major (the kernels' strided-store path)
  bool prepack_b = false;   // B packed whole beforehand (the prepacked-weights path)
};

// A bf16 kernel fed fp32 (fast math) rounds each input to bf16 first: relative error 2^-8 in each
// factor, so ((1 + 2^-8)^2 - 1) of the absolute sum on top of the fp32 accumulation bound.
double input_rounding(const GemmKernel& kn) { return kn.elem_size == 2 ? 2 * 0x1p-8 + 0x1p-16 : 0.0; }

void run_case(const GemmKernel& kn, const driver::Blocking& blk, const Case& cs) {
  const auto seed = static_cast<std::uint32_t>(cs.m * 7919 + cs.n * 104729 + cs.k);
  const Strided a = make_matrix(cs.m, cs.k, cs.a_row_major, 2, seed);
  const Strided b = make_matrix(cs.k, cs.n, cs.b_row_major, 1, seed + 1);
  // C is the top-left m x n of an (m + 2) x (n + 3) matrix: the rest must stay untouched.
  Strided c = make_matrix(cs.m + 2, cs.n + 3, cs.c_row_major, 0, seed + 2);
  if (cs.beta == 0.0f)
    for (std::int64_t i = 0; i < cs.m; ++i)
      for (std::int64_t j = 0; j < cs.n; ++j) c.at(i, j) = std::numeric_limits<float>::quiet_NaN();
  const Strided before = c;

  driver::GemmProblem p;
  p.m = static_cast<std::size_t>(cs.m), p.n = static_cast<std::size_t>(cs.n),
  p.k = static_cast<std::size_t>(cs.k);
  p.alpha = cs.alpha, p.beta = cs.beta;
  p.a = a.data.data(), p.a_rs = a.rs, p.a_cs = a.cs;
  p.c = c.data.data(), p.c_rs = c.rs, p.c_cs = c.cs;
  driver::PackedBLayout layout{&kn, p.k, p.n, blk.kc, blk.nc};
  std::vector<char> packed;
  if (cs.prepack_b) {
    packed.resize(layout.bytes());
    driver::pack_b_whole(layout, ukernel::Elem::f32, b.data.data(), b.rs, b.cs, packed.data());
    p.b_packed = packed.data(), p.b_layout = &layout;
  } else {
    p.b = b.data.data(), p.b_rs = b.rs, p.b_cs = b.cs;
  }
  ASSERT_EQ(driver::gemm(kn, blk, p), driver::Status::ok);

  const Reference r = reference_gemm(
      cs.m, cs.n, cs.k, cs.alpha, [&](std::int64_t i, std::int64_t q) { return a.at(i, q); },
      [&](std::int64_t q, std::int64_t j) { return b.at(q, j); }, cs.beta,
      [&](std::int64_t i, std::int64_t j) { return before.at(i, j); });
  ASSERT_TRUE(matches(
      r, [&](std::int64_t i, std::int64_t j) { return c.at(i, j); },
      input_rounding(kn) + fp32_bound_factor(cs.k, static_cast<std::int64_t>(blk.kc))))
      << kn.name << " " << cs.m << "x" << cs.n << "x" << cs.k << " blocking mc=" << blk.mc << " kc=" << blk.kc
      << " nc=" << blk.nc << " a_row_major=" << cs.a_row_major << " b_row_major=" << cs.b_row_major
      << " alpha=" << cs.alpha << " beta=" << cs.beta << " c_row_major=" << cs.c_row_major
      << " prepack_b=" << cs.prepack_b;
  for (std::int64_t i = 0; i < cs.m + 2; ++i)
    for (std::int64_t j = 0; j < cs.n + 3; ++j) {
      if (i < cs.m && j < cs.n) continue;
      const float now = c.at(i, j), was = before.at(i, j);
      ASSERT_EQ(0, std::memcmp(&now, &was, sizeof(float))) << "wrote outside C at (" << i << ", " << j << ")";
    }
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

TEST_P(Driver, BReadInPlaceOrPacked) {
  const GemmKernel& kn = *GetParam();
  const std::int64_t mr = kn.mr, nr = kn.nr;
  using B = driver::Blocking::BInPlace;
  for (B mode : {B::kNever, B::kWhenPossible, B::kAuto})
    for (driver::Blocking blk :
         {driver::Blocking{5, 3, 7},
          driver::Blocking{static_cast<std::size_t>(mr), 17, static_cast<std::size_t>(2 * nr + 3)},
          driver::blocking_for(kn, cpu::info().caches)}) {
      blk.b_in_place = mode;
      for (bool b_row : {true, false}) {  // in place needs contiguous rows of B: column-major B is packed
        run_case(kn, blk, {1, 3 * nr + 5, 41, true, b_row, 1.0f, 0.0f});
        run_case(kn, blk, {mr + 2, 2 * nr, 19, false, b_row, 0.5f, 1.0f});
        run_case(kn, blk, {2 * mr + 1, nr - 1 > 0 ? nr - 1 : 1, 30, true, b_row, 1.0f, 0.25f, false});
        if (HasFatalFailure()) return;
      }
    }
}

TEST_P(Driver, ColumnMajorCAndPrepackedB) {
  const GemmKernel& kn = *GetParam();
  const std::int64_t mr = kn.mr, nr = kn.nr;
  const driver::Blocking blockings[] = {
      {5, 3, 7},
      {static_cast<std::size_t>(2 * mr + 1), 17, static_cast<std::size_t>(3 * nr - 1)},
      driver::blocking_for(kn, cpu::info().caches),
  };
  for (const auto& blk : blockings)
    for (bool c_row : {true, false})
      for (bool prepack : {false, true})
        for (bool b_row : {true, false}) {
          run_case(kn, blk, {2 * mr + 3, 2 * nr + 5, 40, true, b_row, -1.5f, 0.5f, c_row, prepack});
          run_case(kn, blk, {1, 3 * nr + 1, 33, false, b_row, 1.0f, 0.0f, c_row, prepack});
          if (HasFatalFailure()) return;
        }
}

TEST_P(Driver, PackedLayoutOffsetsTileTheBuffer) {
  // Blocks in jc-major, pc-minor order, each exactly as large as pack_b writes: consecutive
  // offsets differ by the block sizes and the last one ends at bytes().
  const GemmKernel& kn = *GetParam();
  const auto round_up = [](std::size_t v, std::size_t to) { return (v + to - 1) / to * to; };
  for (const driver::PackedBLayout l :
       {driver::PackedBLayout{&kn, 100, 70, 32, 2 * static_cast<std::size_t>(kn.nr)},
        driver::PackedBLayout{&kn, 64, 13, 64, 5}}) {
    std::size_t expect = 0;
    for (std::size_t jc = 0; jc < l.n; jc += l.nc)
      for (std::size_t pc = 0; pc < l.k; pc += l.kc) {
        EXPECT_EQ(l.offset(jc, pc), expect) << "block (" << jc << ", " << pc << ")";
        expect += round_up(std::min(l.nc, l.n - jc), static_cast<std::size_t>(kn.nr)) *
                  round_up(std::min(l.kc, l.k - pc), static_cast<std::size_t>(kn.kr)) * kn.elem_size;
      }
    EXPECT_EQ(l.bytes(), expect);
  }
}

TEST_P(Driver, DefaultBlockingIsSane) {
  const GemmKernel& kn = *GetParam();
  const driver::Blocking b = driver::blocking_for(kn, cpu::info().caches);
  EXPECT_GT(b.kc, 0u);
  EXPECT_EQ(b.mc % static_cast<std::size_t>(kn.mr), 0u);
  EXPECT_EQ(b.nc % static_cast<std::size_t>(kn.nr), 0u);
  EXPECT_EQ(b.kc % static_cast<std::size_t>(kn.kr), 0u);
  // The model of docs/blocking.md: the packed A block (MC x KC) and the B micro-panel (KC x NR)
  // share L2; KC never drops below 64 (the accuracy bound in docs/numerics.md relies on it).
  const std::size_t l2 = cpu::info().caches.l2;
  EXPECT_LE(b.mc * b.kc * kn.elem_size, l2 / 2);
  EXPECT_LE(b.kc * static_cast<std::size_t>(kn.nr) * kn.elem_size, l2 / 8);
  EXPECT_GE(b.kc, 64u);
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
      p.a = a.data(), p.a_rs = 5, p.a_cs = 1, p.b = b.data(), p.b_rs = 4, p.b_cs = 1;
      p.c = c.data(), p.c_rs = 4, p.c_cs = 1;
      ASSERT_EQ(driver::gemm(kn, blk, p), driver::Status::ok);
      for (float v : c) EXPECT_EQ(v, 3.0f * beta) << "k=" << k << " beta=" << beta;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Registry, Driver, ::testing::ValuesIn(usable_kernels()),
                         [](const ::testing::TestParamInfo<const GemmKernel*>& info) {
                           return std::string(info.param->name);
                         });

// The matrix-vector path: m == 1 or n == 1 with every operand layout, strided C, prepacked B.
class DriverGemv : public ::testing::TestWithParam<const ukernel::GemvKernel*> {};

void run_gemv_case(const ukernel::GemvKernel& gk, std::int64_t m, std::int64_t n, std::int64_t k, bool a_row,
                   bool b_row, bool c_row, float alpha, float beta, bool prepack) {
  const auto seed = static_cast<std::uint32_t>(m * 31 + n * 7 + k);
  const Strided a = make_matrix(m, k, a_row, 2, seed), b = make_matrix(k, n, b_row, 3, seed + 1);
  Strided c = make_matrix(m + 1, n + 2, c_row, 0, seed + 2);
  if (beta == 0.0f)
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t j = 0; j < n; ++j) c.at(i, j) = std::numeric_limits<float>::quiet_NaN();
  const Strided before = c;
  driver::GemmProblem p;
  p.m = static_cast<std::size_t>(m), p.n = static_cast<std::size_t>(n), p.k = static_cast<std::size_t>(k);
  p.alpha = alpha, p.beta = beta;
  p.a = a.data.data(), p.a_rs = a.rs, p.a_cs = a.cs;
  p.c = c.data.data(), p.c_rs = c.rs, p.c_cs = c.cs;
  const ukernel::GemmKernel& kn = *ukernel::choose(ukernel::Family::gemm_f32_f32p_f32p);
  const driver::Blocking blk{5, 13, 2 * static_cast<std::size_t>(kn.nr) + 1};
  driver::PackedBLayout layout{&kn, p.k, p.n, blk.kc, blk.nc};
  std::vector<char> packed;
  if (prepack) {
    packed.resize(layout.bytes());
    driver::pack_b_whole(layout, ukernel::Elem::f32, b.data.data(), b.rs, b.cs, packed.data());
    p.b_packed = packed.data(), p.b_layout = &layout;
  } else {
    p.b = b.data.data(), p.b_rs = b.rs, p.b_cs = b.cs;
  }
  const driver::Status st = driver::gemv(gk, p);
  // Strided X (neither stride 1) is not for the GEMV path; everything else must be taken.
  const bool x_unit =
      m == 1 ? (prepack || b.cs == 1 || b.rs == 1 || n == 1) : (a.rs == 1 || a.cs == 1 || m == 1);
  if (!x_unit || (prepack && m != 1)) {
    ASSERT_EQ(st, driver::Status::not_applicable);
    return;
  }
  ASSERT_EQ(st, driver::Status::ok);
  const Reference r = reference_gemm(
      m, n, k, alpha, [&](std::int64_t i, std::int64_t q) { return a.at(i, q); },
      [&](std::int64_t q, std::int64_t j) { return b.at(q, j); }, beta,
      [&](std::int64_t i, std::int64_t j) { return before.at(i, j); });
  ASSERT_TRUE(matches(
      r, [&](std::int64_t i, std::int64_t j) { return c.at(i, j); }, fp32_bound_factor(k, 1)))
      << gk.name << " " << m << "x" << n << "x" << k << " a_row=" << a_row << " b_row=" << b_row
      << " c_row=" << c_row << " prepack=" << prepack;
  for (std::int64_t i = 0; i < m + 1; ++i)
    for (std::int64_t j = 0; j < n + 2; ++j) {
      if (i < m && j < n) continue;
      const float now = c.at(i, j), was = before.at(i, j);
      ASSERT_EQ(0, std::memcmp(&now, &was, sizeof(float))) << "wrote outside C at (" << i << ", " << j << ")";
    }
}

TEST_P(DriverGemv, EveryLayout) {
  if (!ukernel::usable(*GetParam())) GTEST_SKIP() << GetParam()->name << " is not usable here";
  const std::int64_t shapes[][3] = {{1, 1, 1},   {1, 37, 29},  {1, 300, 5},
                                    {45, 1, 70}, {1, 5000, 3}, {1, 1, 40}};
  for (const auto& s : shapes)
    for (bool a_row : {true, false})
      for (bool b_row : {true, false})
        for (bool c_row : {true, false})
          for (bool prepack : {false, true}) {
            run_gemv_case(*GetParam(), s[0], s[1], s[2], a_row, b_row, c_row, -1.25f, 0.0f, prepack);
            run_gemv_case(*GetParam(), s[0], s[1], s[2], a_row, b_row, c_row, 0.5f, 2.0f, prepack);
            if (HasFatalFailure()) return;
          }
}

TEST_P(DriverGemv, NotForGeneralShapes) {
  std::vector<float> a(4, 1.0f), b(4, 1.0f), c(4, 3.0f);
  driver::GemmProblem p;
  p.m = 2, p.n = 2, p.k = 2, p.a = a.data(), p.a_rs = 2, p.a_cs = 1, p.b = b.data(), p.b_rs = 2, p.b_cs = 1;
  p.c = c.data(), p.c_rs = 2, p.c_cs = 1;
  EXPECT_EQ(driver::gemv(*GetParam(), p), driver::Status::not_applicable);
  for (float v : c) EXPECT_EQ(v, 3.0f);
}

INSTANTIATE_TEST_SUITE_P(Registry, DriverGemv,
                         ::testing::ValuesIn(std::vector<const ukernel::GemvKernel*>(
                             ukernel::all_gemv_kernels().begin(), ukernel::all_gemv_kernels().end())),
                         [](const ::testing::TestParamInfo<const ukernel::GemvKernel*>& info) {
                           return std::string(info.param->name);
                         });

}  // namespace
}  // namespace mmla::test
