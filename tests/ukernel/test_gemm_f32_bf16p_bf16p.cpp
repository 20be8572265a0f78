// Every registered gemm_f32_bf16p_bf16p kernel the CPU can run (the portable reference everywhere,
// BFMMLA under qemu -cpu max), against the double reference: every tile shape m <= MR, n <= NR,
// depths around KR, from bf16 sources (exact) and fp32 sources (rounded while packing), written
// as a sub-tile of a larger C whose other elements must stay untouched.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "mmla/cblas.h"
#include "support/reference.hpp"
#include "ukernel/registry.hpp"

namespace mmla::test {
namespace {

using ukernel::GemmKernel;

std::vector<const GemmKernel*> family_kernels() {
  std::vector<const GemmKernel*> out;
  for (const GemmKernel* k : ukernel::all_kernels())
    if (k->family == ukernel::Family::gemm_f32_bf16p_bf16p) out.push_back(k);
  return out;
}

class GemmBf16Kernel : public ::testing::TestWithParam<const GemmKernel*> {
 protected:
  void SetUp() override {
    if (!ukernel::usable(*GetParam()))
      GTEST_SKIP() << GetParam()->name << " is not usable on this CPU/MMLA_ISA";
  }
};

void run_tile(const GemmKernel& kn, std::size_t m, std::size_t n, std::size_t k, float beta, bool from_f32) {
  const auto im = static_cast<std::int64_t>(m), in = static_cast<std::int64_t>(n),
             ik = static_cast<std::int64_t>(k);
  const std::size_t kr = static_cast<std::size_t>(kn.kr), kp = (k + kr - 1) / kr * kr;
  const auto seed = static_cast<std::uint32_t>(m * 977 + n * 31 + k);
  Strided a = make_matrix(im, ik, true, 0, seed), b = make_matrix(ik, in, false, 0, seed + 1);
  // The values the kernel multiplies: A and B rounded to bf16 (exactly what the fp32 packers do).
  std::vector<std::uint16_t> a16(a.data.size()), b16(b.data.size());
  cblas_sbstobf16(static_cast<int>(a.data.size()), a.data.data(), 1, a16.data(), 1);
  cblas_sbstobf16(static_cast<int>(b.data.size()), b.data.data(), 1, b16.data(), 1);
  Strided ar = a, br = b;
  cblas_sbf16tos(static_cast<int>(a16.size()), a16.data(), 1, ar.data.data(), 1);
  cblas_sbf16tos(static_cast<int>(b16.size()), b16.data(), 1, br.data.data(), 1);

  std::vector<std::uint16_t> ap(static_cast<std::size_t>(kn.mr) * kp),
      bp(static_cast<std::size_t>(kn.nr) * kp);
  const int src = from_f32 ? 0 : 1;
  kn.pack_a[src](from_f32 ? static_cast<const void*>(a.data.data()) : a16.data(), a.rs, a.cs, m, k,
                 ap.data());
  kn.pack_b[src](from_f32 ? static_cast<const void*>(b.data.data()) : b16.data(), b.cs, b.rs, n, k,
                 bp.data());

  Strided c = make_matrix(im + 3, in + 5, true, 0, seed + 2);
  if (beta == 0.0f)
    for (std::int64_t i = 0; i < im; ++i)
      for (std::int64_t j = 0; j < in; ++j) c.at(i + 1, j + 2) = std::numeric_limits<float>::quiet_NaN();
  const Strided before = c;
  kn.run(m, n, kp, ap.data(), bp.data(), kn.nr, &c.at(1, 2), c.rs, c.cs, 1.0f, beta);

  const Reference r = reference_gemm(
      im, in, ik, 1.0f, [&](std::int64_t i, std::int64_t p) { return ar.at(i, p); },
      [&](std::int64_t p, std::int64_t j) { return br.at(p, j); }, beta,
      [&](std::int64_t i, std::int64_t j) { return before.at(i + 1, j + 2); });
  // Products of bf16 values are exact; BFMMLA rounds inside each instruction as well as after it,
  // so allow two fp32 roundings per depth step.
  ASSERT_TRUE(matches(
      r, [&](std::int64_t i, std::int64_t j) { return c.at(i + 1, j + 2); },
      fp32_bound_factor(2 * ik, 2 * ik)))
      << kn.name << " m=" << m << " n=" << n << " k=" << k << " beta=" << beta << " from_f32=" << from_f32;
  for (std::int64_t i = 0; i < im + 3; ++i)
    for (std::int64_t j = 0; j < in + 5; ++j) {
      if (i >= 1 && i < 1 + im && j >= 2 && j < 2 + in) continue;
      const float now = c.at(i, j), was = before.at(i, j);
      ASSERT_EQ(0, std::memcmp(&now, &was, sizeof(float))) << kn.name << " wrote outside its tile";
    }
}

std::size_t kn_kr(const GemmKernel& kn) { return static_cast<std::size_t>(kn.kr); }

TEST_P(GemmBf16Kernel, EveryTileShape) {
  const GemmKernel& kn = *GetParam();
  for (std::size_t m = 1; m <= static_cast<std::size_t>(kn.mr); ++m)
    for (std::size_t n = 1; n <= static_cast<std::size_t>(kn.nr); ++n)
      for (std::size_t k :
           {std::size_t{1}, std::size_t{3}, kn_kr(kn) - 1, kn_kr(kn), kn_kr(kn) + 1, std::size_t{67}})
        for (float beta : {0.0f, -0.5f}) {
          run_tile(kn, m, n, k, beta, (m + n + k) % 2 == 0);
          if (HasFatalFailure()) return;
        }
}

TEST(GemmBf16KernelRegistry, FamilyHasAPortableKernel) {
  bool has_ref = false;
  for (const GemmKernel* k : family_kernels()) has_ref |= k->isa == cpu::Isa::ref;
  EXPECT_TRUE(has_ref);
}

INSTANTIATE_TEST_SUITE_P(Registry, GemmBf16Kernel, ::testing::ValuesIn(family_kernels()),
                         [](const ::testing::TestParamInfo<const GemmKernel*>& info) {
                           return std::string(info.param->name);
                         });

}  // namespace
}  // namespace mmla::test
