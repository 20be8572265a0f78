// Every registered gemm_f32_bf16p_bf16p kernel the CPU can run (the portable reference everywhere,
// BFMMLA under qemu -cpu max), against the double reference: every tile shape m <= MR, n <= NR,
// depths around KR, from bf16 sources (exact) and fp32 sources (rounded while packing), written
// as a sub-tile of a larger C whose other elements must stay untouched.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "mmla/cblas.h"
#include "support/reference.hpp"
#include "ukernel/registry.hpp"

namespace mmla::test {
namespace {

using ukernel::GemmKernel;
using ukernel::PackFn;

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

// m's values rounded to bf16 in place (so that the reference multiplies what the kernel does), and
// those values' bf16 bits.
std::vector<std::uint16_t> round_to_bf16_bits(Strided& m) {
  std::vector<std::uint16_t> bits(m.data.size());
  cblas_sbstobf16(static_cast<int>(m.data.size()), m.data.data(), 1, bits.data(), 1);
  cblas_sbf16tos(static_cast<int>(bits.size()), bits.data(), 1, m.data.data(), 1);
  return bits;
}

// C's m x n block at (i0, j0) against the double reference of A B + beta C_before, A and B holding
// the bf16 values the kernel multiplies. Products of bf16 values are exact; BFMMLA rounds inside
// each instruction as well as after it, so two fp32 roundings per depth step are allowed.
::testing::AssertionResult matches_reference(const Strided& a, const Strided& b, float beta,
                                             const Strided& before, const Strided& c, std::int64_t m,
                                             std::int64_t n, std::int64_t k, std::int64_t i0 = 0,
                                             std::int64_t j0 = 0) {
  const Reference r = reference_gemm(
      m, n, k, 1.0f, [&](std::int64_t i, std::int64_t p) { return a.at(i, p); },
      [&](std::int64_t p, std::int64_t j) { return b.at(p, j); }, beta,
      [&](std::int64_t i, std::int64_t j) { return before.at(i + i0, j + j0); });
  return matches(
      r, [&](std::int64_t i, std::int64_t j) { return c.at(i + i0, j + j0); },
      fp32_bound_factor(2 * k, 2 * k));
}

// entered_rows != 0: between kn.enter(entered_rows, a_panels) and kn.leave(), as the driver calls it.
void run_tile(const GemmKernel& kn, std::size_t m, std::size_t n, std::size_t k, float beta, bool from_f32,
              std::size_t entered_rows = 0, std::size_t a_panels = 1) {
  const auto im = static_cast<std::int64_t>(m), in = static_cast<std::int64_t>(n),
             ik = static_cast<std::int64_t>(k);
  const std::size_t kr = static_cast<std::size_t>(kn.kr), kp = (k + kr - 1) / kr * kr;
  const auto seed = static_cast<std::uint32_t>(m * 977 + n * 31 + k);
  Strided a = make_matrix(im, ik, true, 0, seed), b = make_matrix(ik, in, false, 0, seed + 1);
  // The values the kernel multiplies: A and B rounded to bf16 (exactly what the fp32 packers do).
  Strided ar = a, br = b;
  const std::vector<std::uint16_t> a16 = round_to_bf16_bits(ar), b16 = round_to_bf16_bits(br);

  // Filled with bf16 NaN: padding a packer forgot to zero would reach C through the odd-k depth.
  std::vector<std::uint16_t> ap(static_cast<std::size_t>(kn.mr) * kp, 0xffff),
      bp(static_cast<std::size_t>(kn.nr) * kp, 0xffff);
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
  const bool entered = entered_rows != 0 && kn.enter != nullptr;
  if (entered) kn.enter(entered_rows, a_panels);
  kn.run(m, n, kp, ap.data(), bp.data(), 0, &c.at(1, 2), c.rs, c.cs, 1.0f, beta);
  if (entered) kn.leave();

  ASSERT_TRUE(matches_reference(ar, br, beta, before, c, im, in, ik, 1, 2))
      << kn.name << " m=" << m << " n=" << n << " k=" << k << " beta=" << beta << " from_f32=" << from_f32
      << " entered_rows=" << entered_rows << " a_panels=" << a_panels;
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
        // beta = 1 too: the AMX kernel loads a whole C tile into its accumulators then.
        for (float beta : {0.0f, -0.5f, 1.0f}) {
          run_tile(kn, m, n, k, beta, (m + n + k) % 2 == 0);
          if (HasFatalFailure()) return;
        }
}

// Between enter(max_rows, a_panels) and leave(), as the driver calls a kernel with per-thread state
// (AMX: tiles of max_rows rows when that is under 16, B's loads hinted as streaming for one A panel);
// a call with more rows than enter was told must still be right.
TEST_P(GemmBf16Kernel, TilesBetweenEnterAndLeave) {
  const GemmKernel& kn = *GetParam();
  if (kn.enter == nullptr) GTEST_SKIP() << kn.name << " keeps no per-thread state";
  const auto mr = static_cast<std::size_t>(kn.mr), nr = static_cast<std::size_t>(kn.nr);
  for (std::size_t rows : {std::size_t{1}, std::size_t{7}, std::size_t{15}, std::size_t{16}, mr})
    for (std::size_t m : {std::size_t{1}, std::size_t{7}, std::size_t{8}, std::size_t{15}, std::size_t{16},
                          std::size_t{17}, mr})
      for (std::size_t n : {std::size_t{1}, std::size_t{16}, nr})
        for (float beta : {0.0f, 1.0f})
          for (std::size_t a_panels : {std::size_t{1}, std::size_t{3}}) {
            run_tile(kn, std::min(m, mr), n, 67, beta, (m + n) % 2 == 0, rows, a_panels);
            if (HasFatalFailure()) return;
          }
}

// Where a kernel packs a panel of B it reads in place: 64-byte aligned, as the driver's buffers are,
// with guard values past the panel that the kernel must leave alone.
struct GuardedPanel {
  static constexpr std::uint16_t kGuard = 0xdead;
  std::vector<std::uint16_t> buffer;
  std::uint16_t* out;
  explicit GuardedPanel(std::size_t elems)
      : buffer(elems + 32 + 64, kGuard),
        out(buffer.data() + (32 - reinterpret_cast<std::uintptr_t>(buffer.data()) % 64 / 2) % 32) {}
  // The panel written must be pack_b's (`expected`) to the byte, and nothing past it.
  void check(const std::vector<std::uint16_t>& expected, const GemmKernel& kn, std::size_t m) const {
    ASSERT_EQ(0, std::memcmp(out, expected.data(), expected.size() * sizeof(std::uint16_t)))
        << kn.name << " m=" << m;
    for (std::size_t i = expected.size(); i < expected.size() + 32; ++i)
      ASSERT_EQ(out[i], kGuard) << kn.name << " wrote past its packed panel";
  }
};

// KR = 2 (pairs) kernels also read a row-major bf16 B in place (ukernel.hpp: b_ks = ldb > 0, full
// NR-wide panels, even depth): each depth pair interleaved from two rows. With `packing`, through
// GemmKernel::run_pack_b, which must also write pack_b's panel to the byte, and nothing past it.
void check_b_in_place(const GemmKernel& kn, bool packing) {
  const std::size_t nr = static_cast<std::size_t>(kn.nr);
  for (std::size_t m = 1; m <= static_cast<std::size_t>(kn.mr); ++m)
    for (std::size_t k : {std::size_t{2}, std::size_t{4}, std::size_t{66}})
      for (float beta : {0.0f, 0.25f}) {
        const auto im = static_cast<std::int64_t>(m), in = static_cast<std::int64_t>(nr),
                   ik = static_cast<std::int64_t>(k);
        const std::int64_t ldb = in + 7;
        const auto seed = static_cast<std::uint32_t>(m * 41 + k);
        Strided a = make_matrix(im, ik, true, 0, seed), b = make_matrix(ik, in, true, 7, seed + 1, 0.0f);
        const std::vector<std::uint16_t> a16 = round_to_bf16_bits(a), b16 = round_to_bf16_bits(b);
        std::vector<std::uint16_t> ap(static_cast<std::size_t>(kn.mr) * k, 0xffff);
        kn.pack_a[1](a16.data(), a.rs, a.cs, m, k, ap.data());
        Strided c = make_matrix(im, in, true, 0, seed + 2);
        const Strided before = c;
        if (packing) {
          std::vector<std::uint16_t> bp(nr * k);
          kn.pack_b[1](b16.data(), b.cs, b.rs, nr, k, bp.data());
          const GuardedPanel panel(nr * k);
          kn.run_pack_b(m, k, ap.data(), b16.data(), ldb, panel.out, c.data.data(), c.rs, c.cs, 1.0f, beta);
          ASSERT_NO_FATAL_FAILURE(panel.check(bp, kn, m)) << "k=" << k;
        } else {
          kn.run(m, nr, k, ap.data(), b16.data(), ldb, c.data.data(), c.rs, c.cs, 1.0f, beta);
        }
        ASSERT_TRUE(matches_reference(a, b, beta, before, c, im, in, ik))
            << kn.name << " m=" << m << " k=" << k << " beta=" << beta << " packing=" << packing;
      }
}

TEST_P(GemmBf16Kernel, ReadsBInPlace) {
  const GemmKernel& kn = *GetParam();
  if (kn.kr != 2) GTEST_SKIP() << kn.name << ": only KR = 2 layouts read B in place";
  check_b_in_place(kn, false);
}

TEST_P(GemmBf16Kernel, PacksTheBItReadsInPlace) {
  const GemmKernel& kn = *GetParam();
  if (kn.run_pack_b == nullptr) GTEST_SKIP() << kn.name << " leaves packing B to pack_b";
  check_b_in_place(kn, true);
}

// GemmKernel::run_a_in_place: A read where it is (rows lda = k + 3 apart, so its pairs are not
// 4-byte aligned in every row), with B packed (every column count), read in place, and read in
// place and packed, which must also write pack_b's panel.
TEST_P(GemmBf16Kernel, ReadsAInPlace) {
  const GemmKernel& kn = *GetParam();
  if (kn.run_a_in_place == nullptr) GTEST_SKIP() << kn.name << " always reads a packed A";
  enum class BFrom { kPacked, kInPlace, kInPlacePacking };
  const std::size_t nr = static_cast<std::size_t>(kn.nr);
  const auto check = [&](std::size_t m, std::size_t n, std::size_t k, float beta, BFrom from) {
    const auto im = static_cast<std::int64_t>(m), in = static_cast<std::int64_t>(n),
               ik = static_cast<std::int64_t>(k);
    const auto seed = static_cast<std::uint32_t>(m * 53 + n * 7 + k);
    Strided a = make_matrix(im, ik, true, 3, seed), b = make_matrix(ik, in, true, 5, seed + 1, 0.0f);
    const std::vector<std::uint16_t> a16 = round_to_bf16_bits(a), b16 = round_to_bf16_bits(b);
    std::vector<std::uint16_t> bp(nr * k);
    kn.pack_b[1](b16.data(), b.cs, b.rs, n, k, bp.data());
    const GuardedPanel panel(nr * k);
    Strided c = make_matrix(im, in, true, 0, seed + 2);
    if (beta == 0.0f) std::fill(c.data.begin(), c.data.end(), std::numeric_limits<float>::quiet_NaN());
    const Strided before = c;
    const bool b_in_place = from != BFrom::kPacked;
    kn.run_a_in_place(m, n, k, a16.data(), a.rs, b_in_place ? b16.data() : bp.data(), b_in_place ? b.rs : 0,
                      from == BFrom::kInPlacePacking ? panel.out : nullptr, c.data.data(), c.rs, c.cs, 1.0f,
                      beta);
    if (from == BFrom::kInPlacePacking) {
      ASSERT_NO_FATAL_FAILURE(panel.check(bp, kn, m));
    }
    ASSERT_TRUE(matches_reference(a, b, beta, before, c, im, in, ik))
        << kn.name << " m=" << m << " n=" << n << " k=" << k << " beta=" << beta
        << " b_from=" << static_cast<int>(from);
  };
  for (std::size_t m = 1; m <= static_cast<std::size_t>(kn.mr); ++m)
    for (std::size_t k : {std::size_t{2}, std::size_t{4}, std::size_t{66}})
      for (float beta : {0.0f, 0.25f}) {
        for (std::size_t n : {std::size_t{1}, std::size_t{16}, std::size_t{17}, nr - 1, nr})
          check(m, n, k, beta, BFrom::kPacked);
        if (kn.kr == 2)
          for (BFrom from : {BFrom::kInPlace, BFrom::kInPlacePacking}) check(m, nr, k, beta, from);
        if (HasFatalFailure()) return;
      }
}

// fp32 values that test the conversion: NaNs with the payload high, low or both (truncation
// would turn 0x7f800001 into Inf), infinities, zeros, the overflow edge (0x7f7f8000 is half an ulp
// past the largest bf16: rounds to Inf), ties both ways, denormals (VCVTNE2PS2BF16 flushes them,
// mmla's rule rounds them: 0x007fffff becomes the smallest normal bf16), the largest finite value.
std::vector<std::uint32_t> special_bits() {
  return {0x7fc00000u, 0xffc00000u, 0x7f800001u, 0x7fa00000u, 0xff800001u, 0x7f800000u, 0xff800000u,
          0x00000000u, 0x80000000u, 0x7f7f8000u, 0xff7f8000u, 0x7f7f7fffu, 0x7f7fffffu, 0x3f808000u,
          0x3f818000u, 0xbf808000u, 0x00000001u, 0x80000001u, 0x00008000u, 0x00018000u, 0x007fffffu,
          0x807fffffu, 0x00400000u, 0x00800000u, 0x3f800001u, 0x3f807fffu};
}

// Packs an mn x k fp32 matrix (as A if as_a, else as B) given in one of three stride patterns:
// 0 rows along k contiguous, 1 rows along mn contiguous, 2 neither (both strided).
std::vector<std::uint16_t> pack_with(const GemmKernel& kn, bool as_a, bool from_f32, int pattern,
                                     const std::vector<float>& values, std::size_t mn, std::size_t k) {
  const std::size_t r = static_cast<std::size_t>(as_a ? kn.mr : kn.nr), kr = static_cast<std::size_t>(kn.kr);
  const std::size_t panels = (mn + r - 1) / r, kp = (k + kr - 1) / kr * kr;
  // Element (i, p) of the source at i * s_mn + p * s_k, in a buffer with gaps (pattern 2).
  const std::ptrdiff_t s_mn = pattern == 0   ? static_cast<std::ptrdiff_t>(k)
                              : pattern == 1 ? 1
                                             : 2,
                       s_k = pattern == 0   ? 1
                             : pattern == 1 ? static_cast<std::ptrdiff_t>(mn)
                                            : static_cast<std::ptrdiff_t>(2 * mn + 1);
  const std::size_t span =
      (mn - 1) * static_cast<std::size_t>(s_mn) + (k - 1) * static_cast<std::size_t>(s_k) + 1;
  std::vector<float> f(span, std::numeric_limits<float>::quiet_NaN());
  std::vector<std::uint16_t> h(span, 0xffff);
  for (std::size_t i = 0; i < mn; ++i)
    for (std::size_t p = 0; p < k; ++p) {
      const std::size_t at = i * static_cast<std::size_t>(s_mn) + p * static_cast<std::size_t>(s_k);
      f[at] = values[i * k + p];
    }
  cblas_sbstobf16(static_cast<int>(span), f.data(), 1, h.data(), 1);
  std::vector<std::uint16_t> out(panels * r * kp, 0xabcd);
  const PackFn fn = as_a ? kn.pack_a[from_f32 ? 0 : 1] : kn.pack_b[from_f32 ? 0 : 1];
  fn(from_f32 ? static_cast<const void*>(f.data()) : h.data(), s_mn, s_k, mn, k, out.data());
  return out;
}

// Every packer of every usable kernel produces the same bytes from fp32 (rounding while packing)
// as from the same values rounded by cblas_sbstobf16 (docs/numerics.md's rule), special values
// included, and the same bytes whichever strides the source has (each has its own code path: the
// vectorised row sweeps and the strided loop).
// gemm_b_rows (few rows, a row-major bf16 B read in place, the whole product): every tail of depth
// (16 per B tile) and of columns (32 per B tile, 64 per visit), A row- and column-major, C row- and
// column-major inside a larger C that must stay untouched, alpha and beta. The padding of A's and
// B's rows is NaN: a read past the depths or the columns would show in C.
TEST_P(GemmBf16Kernel, FewRowsWithBReadInPlace) {
  const GemmKernel& kn = *GetParam();
  if (kn.gemm_b_rows == nullptr) GTEST_SKIP() << kn.name << " always packs B";
  for (std::size_t m : {std::size_t{2}, std::size_t{3}, std::size_t{8}, std::size_t{15}, std::size_t{16},
                        std::size_t{17}, std::size_t{24}, kn.b_rows_max_m_b_from_memory})
    for (std::size_t n : {1, 17, 32, 33, 64, 65, 96, 130})
      for (std::size_t k : {1, 15, 16, 17, 32, 33, 100})
        for (int layout = 0; layout < 3; ++layout) {
          const bool a_rows = layout != 1, c_rows = layout != 2;
          const float alpha = layout == 0 ? 1.0f : -0.75f, beta = std::array{0.0f, 1.0f, -0.5f}[layout];
          const auto im = static_cast<std::int64_t>(m), in = static_cast<std::int64_t>(n),
                     ik = static_cast<std::int64_t>(k);
          const auto seed = static_cast<std::uint32_t>(m * 977 + n * 31 + k);
          Strided a = make_matrix(im, ik, a_rows, 3, seed), b = make_matrix(ik, in, true, 5, seed + 1);
          const std::vector<std::uint16_t> a16 = round_to_bf16_bits(a), b16 = round_to_bf16_bits(b);
          Strided c = make_matrix(im + 3, in + 5, c_rows, 2, seed + 2);
          if (beta == 0.0f)
            for (std::int64_t i = 0; i < im; ++i)
              for (std::int64_t j = 0; j < in; ++j)
                c.at(i + 1, j + 2) = std::numeric_limits<float>::quiet_NaN();
          const Strided before = c;
          std::vector<std::uint64_t> scratch(kn.b_rows_scratch(m, n, k) / 8 + 8);
          void* aligned =
              scratch.data() + (8 - reinterpret_cast<std::uintptr_t>(scratch.data()) % 64 / 8) % 8;
          kn.gemm_b_rows(m, n, k, a16.data(), a.rs, a.cs, b16.data(), b.rs, &c.at(1, 2), c.rs, c.cs, alpha,
                         beta, aligned);
          // Against alpha A B + beta C: the reference of (alpha A) B, exact for alpha a power of two
          // times 0.75 within the bound's slack.
          Strided as = a;
          for (float& v : as.data) v *= alpha;
          ASSERT_TRUE(matches_reference(as, b, beta, before, c, im, in, ik, 1, 2))
              << kn.name << " m=" << m << " n=" << n << " k=" << k << " layout=" << layout;
          for (std::int64_t i = 0; i < im + 3; ++i)
            for (std::int64_t j = 0; j < in + 5; ++j) {
              if (i >= 1 && i < 1 + im && j >= 2 && j < 2 + in) continue;
              const float now = c.at(i, j), was = before.at(i, j);
              ASSERT_EQ(0, std::memcmp(&now, &was, sizeof(float))) << kn.name << " wrote outside C";
            }
        }
}

TEST_P(GemmBf16Kernel, PackersRoundLikeTheConversionRuleForEveryStride) {
  const GemmKernel& kn = *GetParam();
  const std::vector<std::uint32_t> specials = special_bits();
  for (bool as_a : {true, false}) {
    const std::size_t r = static_cast<std::size_t>(as_a ? kn.mr : kn.nr);
    for (std::size_t mn : {std::size_t{1}, r - 1, r, r + 1, 2 * r + 3})
      for (std::size_t k :
           {std::size_t{1}, std::size_t{2}, std::size_t{3}, std::size_t{33}, std::size_t{67}}) {
        if (mn == 0) continue;
        std::mt19937 gen(static_cast<std::uint32_t>(mn * 131 + k));
        std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
        std::vector<float> values(mn * k);
        for (std::size_t i = 0; i < values.size(); ++i) {
          values[i] = dist(gen);
          if (i % 3 == 1) std::memcpy(&values[i], &specials[(i / 3) % specials.size()], sizeof(float));
        }
        const std::vector<std::uint16_t> expect = pack_with(kn, as_a, false, 0, values, mn, k);
        for (int pattern = 0; pattern < 3; ++pattern)
          for (bool from_f32 : {false, true})
            ASSERT_EQ(expect, pack_with(kn, as_a, from_f32, pattern, values, mn, k))
                << kn.name << (as_a ? " pack_a" : " pack_b") << " mn=" << mn << " k=" << k
                << " stride pattern " << pattern << " from_f32=" << from_f32;
      }
  }
}

// What each kernel does with denormal bf16 operands and results (docs/numerics.md): the portable
// kernel computes them exactly; VDPBF16PS (and AMX TDPBF16PS) read them as zero and flush denormal
// results to zero, whatever MXCSR says.
TEST_P(GemmBf16Kernel, DenormalsAsDocumented) {
  const GemmKernel& kn = *GetParam();
  bool flushes = false;
  switch (kn.isa) {
    case cpu::Isa::ref: flushes = false; break;
    case cpu::Isa::avx512bf16:
    case cpu::Isa::amx: flushes = true; break;
    default: GTEST_SKIP() << "denormal behaviour not pinned for " << kn.name;
  }
  const std::size_t kr = static_cast<std::size_t>(kn.kr), k = kr;
  const auto run1 = [&](std::uint16_t a0, std::uint16_t b0) {
    std::vector<std::uint16_t> a(k, 0), b(k, 0), ap(static_cast<std::size_t>(kn.mr) * k),
        bp(static_cast<std::size_t>(kn.nr) * k);
    a[0] = a0, b[0] = b0;
    kn.pack_a[1](a.data(), static_cast<std::ptrdiff_t>(k), 1, 1, k, ap.data());
    kn.pack_b[1](b.data(), 1, 1, 1, k, bp.data());
    float c = -1.0f;
    kn.run(1, 1, k, ap.data(), bp.data(), 0, &c, 1, 1, 1.0f, 0.0f);
    return c;
  };
  // 2^-133 (the smallest bf16 denormal) x 2^100: the exact product 2^-33 is normal.
  const float in = run1(0x0001, 0x7180);
  // 2^-70 x 2^-70 = 2^-140: a denormal fp32 result.
  const float out = run1(0x1c80, 0x1c80);
  if (flushes) {
    EXPECT_EQ(in, 0.0f) << kn.name;
    EXPECT_EQ(out, 0.0f) << kn.name;
  } else {
    EXPECT_EQ(in, 0x1p-33f) << kn.name;
    EXPECT_EQ(out, 0x1p-140f) << kn.name;
  }
  // Normal operands are unaffected.
  EXPECT_EQ(run1(0x3f80, 0x4000), 2.0f) << kn.name;
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
