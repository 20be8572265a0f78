// Every registered gemm_f32_f32p_f32p kernel the CPU can run, against the double reference: all
// tile sizes m <= MR, n <= NR, depths around KR, written as a sub-tile of a larger C whose other
// elements must stay untouched.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "support/reference.hpp"
#include "ukernel/registry.hpp"

namespace mmla::test {
namespace {

using ukernel::GemmKernel;

std::vector<const GemmKernel*> family_kernels() {
  std::vector<const GemmKernel*> out;
  for (const GemmKernel* k : ukernel::all_kernels())
    if (k->family == ukernel::Family::gemm_f32_f32p_f32p) out.push_back(k);
  return out;
}

class GemmF32Kernel : public ::testing::TestWithParam<const GemmKernel*> {
 protected:
  void SetUp() override {
    if (!ukernel::usable(*GetParam()))
      GTEST_SKIP() << GetParam()->name << " is not usable on this CPU/MMLA_ISA";
  }
};

// One call of the kernel on an m x n tile of depth k, C a sub-tile at (1, 2) of a larger matrix
// stored row-major (the vector-store path) or column-major (the strided path).
// B is packed, or (full NR wide) passed as it is, rows ldb > NR apart; kInPlacePacking also has
// the kernel write the panel it reads (run_pack_b), which must be pack_b's panel to the byte, and
// nothing past it. With a_in_place, A is not packed but read where it is (run_a_in_place), its
// rows padded so that its leading dimension is not k.
enum class BFrom { kPacked, kInPlace, kInPlacePacking };
void run_tile(const GemmKernel& kn, std::size_t m, std::size_t n, std::size_t k, float alpha, float beta,
              bool c_row_major = true, BFrom b_from = BFrom::kPacked, bool a_in_place = false) {
  const bool b_in_place = b_from != BFrom::kPacked;
  const std::size_t mr = kn.mr, nr = kn.nr, kr = kn.kr;
  const std::size_t kp = (k + kr - 1) / kr * kr;
  const auto seed = static_cast<std::uint32_t>(m * 1000003 + n * 1009 + k);
  const auto im = static_cast<std::int64_t>(m), in = static_cast<std::int64_t>(n),
             ik = static_cast<std::int64_t>(k);
  const Strided a = make_matrix(im, ik, true, a_in_place ? 3 : 0, seed);
  const Strided b = make_matrix(ik, in, true, b_in_place ? 7 : 0, seed + 1);
  std::vector<float> ap(mr * kp), bp(nr * kp);
  kn.pack_a[0](a.data.data(), a.rs, a.cs, m, k, ap.data());
  kn.pack_b[0](b.data.data(), b.cs, b.rs, n, k, bp.data());

  const std::int64_t rows = im + 3, cols = in + 5;
  Strided c = make_matrix(rows, cols, c_row_major, 0, seed + 2);
  if (beta == 0.0f)  // beta == 0 must not read C: poison the tile
    for (std::int64_t i = 0; i < im; ++i)
      for (std::int64_t j = 0; j < in; ++j) c.at(i + 1, j + 2) = std::numeric_limits<float>::quiet_NaN();
  const Strided before = c;

  // 64-byte aligned, as the driver's buffers are, with a guard past the panel.
  constexpr float kGuard = -7.25f;
  std::vector<float> b_out_buffer(nr * kp + 16 + 32, kGuard);
  float* const b_out =
      b_out_buffer.data() + (16 - reinterpret_cast<std::uintptr_t>(b_out_buffer.data()) % 64 / 4) % 16;
  if (a_in_place) {
    ASSERT_NE(kn.run_a_in_place, nullptr) << kn.name;
    const float* const bp_any = b_in_place ? b.data.data() : bp.data();
    kn.run_a_in_place(m, n, kp, a.data.data(), a.rs, bp_any, b_in_place ? b.rs : kn.nr,
                      b_from == BFrom::kInPlacePacking ? b_out : nullptr, &c.at(1, 2), c.rs, c.cs, alpha,
                      beta);
  } else if (b_from == BFrom::kInPlacePacking) {
    ASSERT_NE(kn.run_pack_b, nullptr) << kn.name;
    kn.run_pack_b(m, kp, ap.data(), b.data.data(), b.rs, b_out, &c.at(1, 2), c.rs, c.cs, alpha, beta);
  } else if (b_in_place) {
    kn.run(m, n, kp, ap.data(), b.data.data(), b.rs, &c.at(1, 2), c.rs, c.cs, alpha, beta);
  } else {
    kn.run(m, n, kp, ap.data(), bp.data(), kn.nr, &c.at(1, 2), c.rs, c.cs, alpha, beta);
  }
  if (b_from == BFrom::kInPlacePacking) {
    EXPECT_EQ(0, std::memcmp(b_out, bp.data(), nr * kp * sizeof(float)))
        << kn.name << " m=" << m << " k=" << k;
    for (std::size_t i = nr * kp; i < nr * kp + 16; ++i)
      ASSERT_EQ(b_out[i], kGuard) << kn.name << " wrote past its packed panel";
  }

  const auto c0 = [&](std::int64_t i, std::int64_t j) { return before.at(i + 1, j + 2); };
  const Reference r = reference_gemm(
      im, in, ik, alpha, [&](std::int64_t i, std::int64_t p) { return a.at(i, p); },
      [&](std::int64_t p, std::int64_t j) { return b.at(p, j); }, beta, c0);
  const auto got = [&](std::int64_t i, std::int64_t j) { return c.at(i + 1, j + 2); };
  ASSERT_TRUE(matches(r, got, fp32_bound_factor(ik, ik)))
      << kn.name << " m=" << m << " n=" << n << " k=" << k << " beta=" << beta
      << " c_row_major=" << c_row_major << " a_in_place=" << a_in_place;
  // Nothing outside the tile changed (bitwise, NaN-safe).
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < cols; ++j) {
      const bool inside = i >= 1 && i < 1 + im && j >= 2 && j < 2 + in;
      if (!inside) {
        const float now = c.at(i, j), was = before.at(i, j);
        ASSERT_EQ(0, std::memcmp(&now, &was, sizeof(float)))
            << kn.name << " wrote outside its tile at (" << i << ", " << j << ")";
      }
    }
}

// A source packed into panels of R, its rows running along the panel (row-major B, or a transposed
// A) or along k (a column-major B: the weights of x W^T):
// every element where the layout puts it, the columns past the edge exactly zero, from fp32 and
// from bf16 alike, for every width of the last panel and depths around 16.
TEST_P(GemmF32Kernel, PacksEdgePanelsZeroPadded) {
  const GemmKernel& kn = *GetParam();
  for (int which = 0; which < 3; ++which) {  // 0: B, 1: A, 2: B column-major
    const std::size_t r = which == 1 ? kn.mr : kn.nr;
    for (int src = 0; src < 2; ++src)
      for (std::size_t mn : {r + 1, 2 * r - 1, r - 1, std::size_t{1}})
        for (std::size_t k : {std::size_t{1}, std::size_t{5}, std::size_t{16}, std::size_t{37}}) {
          // Element (kk, col) at kk * ld + col, or col * ld + kk column-major.
          const bool by_col = which == 2;
          const std::size_t ld = (by_col ? k : mn) + 3, panels = (mn + r - 1) / r;
          const std::size_t outer = by_col ? mn : k;
          std::vector<float> f(outer * ld);
          std::vector<std::uint16_t> h(outer * ld);
          for (std::size_t i = 0; i < f.size(); ++i) {
            f[i] = static_cast<float>(i % 251) - 125.0f;  // exact in bf16
            std::uint32_t bits;
            std::memcpy(&bits, &f[i], sizeof bits);
            h[i] = static_cast<std::uint16_t>(bits >> 16);
          }
          std::vector<float> out(panels * r * k + 16, std::numeric_limits<float>::quiet_NaN());
          const ukernel::PackFn fn = which == 1 ? kn.pack_a[src] : kn.pack_b[src];
          const auto ld_s = static_cast<std::ptrdiff_t>(ld);
          fn(src == 0 ? static_cast<const void*>(f.data()) : h.data(), by_col ? ld_s : 1, by_col ? 1 : ld_s,
             mn, k, out.data());
          for (std::size_t p = 0; p < panels; ++p)
            for (std::size_t kk = 0; kk < k; ++kk)
              for (std::size_t j = 0; j < r; ++j) {
                const std::size_t col = p * r + j;
                const float want = col < mn ? f[by_col ? col * ld + kk : kk * ld + col] : 0.0f;
                const float got = out[p * r * k + kk * r + j];
                ASSERT_EQ(0, std::memcmp(&want, &got, sizeof(float)))
                    << kn.name << std::array{" pack_b", " pack_a", " pack_b (column-major)"}[which] << " src "
                    << src << " mn " << mn << " k " << k << " at panel " << p << " depth " << kk << " column "
                    << j << ": " << got;
              }
          for (std::size_t i = panels * r * k; i < out.size(); ++i)
            ASSERT_TRUE(std::isnan(out[i])) << kn.name << " wrote past the packed panels";
        }
  }
}

TEST_P(GemmF32Kernel, EveryTileShape) {
  const GemmKernel& kn = *GetParam();
  const std::size_t kr = kn.kr;
  std::vector<std::size_t> depths = {1, kr, kr + 1, 67};
  if (kr > 1) depths.push_back(kr - 1);
  for (std::size_t m = 1; m <= static_cast<std::size_t>(kn.mr); ++m)
    for (std::size_t n = 1; n <= static_cast<std::size_t>(kn.nr); ++n)
      for (std::size_t k : depths)
        for (float beta : {0.0f, -0.75f}) {
          run_tile(kn, m, n, k, 1.0f, beta);
          if (HasFatalFailure()) return;
        }
}

TEST_P(GemmF32Kernel, BInPlace) {
  const GemmKernel& kn = *GetParam();
  if (kn.kr != 1) GTEST_SKIP() << "B is read in place only by KR = 1 layouts";
  for (std::size_t m = 1; m <= static_cast<std::size_t>(kn.mr); ++m)
    for (std::size_t k : {std::size_t{1}, std::size_t{2}, std::size_t{67}})
      for (float beta : {0.0f, 0.5f}) {
        run_tile(kn, m, kn.nr, k, 1.0f, beta, true, BFrom::kInPlace);
        if (HasFatalFailure()) return;
      }
}

// GemmKernel::run_pack_b, where a kernel has it: the product of B read in place, and B packed.
TEST_P(GemmF32Kernel, PacksTheBItReadsInPlace) {
  const GemmKernel& kn = *GetParam();
  if (kn.run_pack_b == nullptr) GTEST_SKIP() << kn.name << " leaves packing B to pack_b";
  for (std::size_t m = 1; m <= static_cast<std::size_t>(kn.mr); ++m)
    for (std::size_t k : {std::size_t{1}, std::size_t{2}, std::size_t{67}})
      for (float beta : {0.0f, 0.5f}) {
        run_tile(kn, m, kn.nr, k, -1.5f, beta, m % 2 == 0, BFrom::kInPlacePacking);
        if (HasFatalFailure()) return;
      }
}

// GemmKernel::run_a_in_place, where a kernel has it: A read where it is, with B packed (every
// column count), read in place, and read in place and packed.
TEST_P(GemmF32Kernel, ReadsAInPlace) {
  const GemmKernel& kn = *GetParam();
  if (kn.run_a_in_place == nullptr) GTEST_SKIP() << kn.name << " always reads a packed A";
  const std::size_t nr = static_cast<std::size_t>(kn.nr);
  for (std::size_t m = 1; m <= static_cast<std::size_t>(kn.mr); ++m)
    for (std::size_t k : {std::size_t{1}, std::size_t{2}, std::size_t{67}})
      for (float beta : {0.0f, 0.5f}) {
        for (std::size_t n : {std::size_t{1}, std::size_t{16}, std::size_t{17}, nr - 1, nr})
          run_tile(kn, m, n, k, -1.5f, beta, m % 2 == 0, BFrom::kPacked, true);
        for (BFrom from : {BFrom::kInPlace, BFrom::kInPlacePacking})
          run_tile(kn, m, nr, k, 1.0f, beta, true, from, true);
        if (HasFatalFailure()) return;
      }
}

TEST_P(GemmF32Kernel, ColumnMajorC) {
  const GemmKernel& kn = *GetParam();
  for (std::size_t m : {std::size_t{1}, static_cast<std::size_t>(kn.mr)})
    for (std::size_t n :
         {std::size_t{1}, static_cast<std::size_t>(kn.nr) - 1, static_cast<std::size_t>(kn.nr)})
      for (float beta : {0.0f, 0.5f}) {
        run_tile(kn, m, n, 19, 1.0f, beta, false);
        if (HasFatalFailure()) return;
      }
}

TEST_P(GemmF32Kernel, AlphaAndLongDepth) {
  const GemmKernel& kn = *GetParam();
  for (float alpha : {0.5f, -2.0f})
    for (float beta : {0.0f, 1.0f, 0.25f}) {
      run_tile(kn, kn.mr, kn.nr, 373, alpha, beta);
      run_tile(kn, kn.mr - 1, kn.nr - 1, 373, alpha, beta);
      if (HasFatalFailure()) return;
    }
}

TEST(GemmF32KernelRegistry, FamilyHasAPortableKernel) {
  bool has_ref = false;
  for (const GemmKernel* k : family_kernels()) has_ref |= k->isa == cpu::Isa::ref;
  EXPECT_TRUE(has_ref) << "every family needs a reference kernel to fall back on";
}

INSTANTIATE_TEST_SUITE_P(Registry, GemmF32Kernel, ::testing::ValuesIn(family_kernels()),
                         [](const ::testing::TestParamInfo<const GemmKernel*>& info) {
                           return std::string(info.param->name);
                         });

}  // namespace
}  // namespace mmla::test
