// The CBLAS bf16 conversions: exhaustive over all 65536 bf16 values one way, round-to-nearest-even
// and the special values the other way, strides, and fp64 without double rounding.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "mmla/cblas.h"

namespace mmla::test {
namespace {

float from_bits(std::uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}
std::uint32_t bits(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

// The reference: the representable bf16 nearest to x (ties to the even one), by exact comparison in
// double; NaN handled by the caller.
std::uint16_t nearest_bf16(double x) {
  if (std::isinf(x)) return x > 0 ? 0x7f80 : 0xff80;
  // Candidates: truncation of x's fp32 bracket and its neighbour.
  const float fx = static_cast<float>(x);
  std::uint16_t lo = static_cast<std::uint16_t>(bits(fx) >> 16);
  double best = std::numeric_limits<double>::infinity();
  std::uint16_t pick = lo;
  for (int d = -2; d <= 2; ++d) {
    const std::uint16_t c = static_cast<std::uint16_t>(lo + d);
    const double v = from_bits(static_cast<std::uint32_t>(c) << 16);
    if (std::isnan(v)) continue;
    const double err = std::isinf(v) ? std::numeric_limits<double>::max() : std::fabs(v - x);
    if (err < best || (err == best && (c & 1) == 0)) best = err, pick = c;
  }
  // Past the largest bf16 by half an ulp or more: overflow to Inf (IEEE round to nearest).
  const double max_bf16 = from_bits(0x7f7f0000u), half_ulp = std::ldexp(1.0, 127 - 8);
  if (std::fabs(x) >= max_bf16 + half_ulp) return x > 0 ? 0x7f80 : 0xff80;
  return pick;
}

TEST(Bf16Convert, Bf16ToFloatAndDoubleIsExactForAllValues) {
  std::vector<bfloat16> in(65536);
  for (std::uint32_t i = 0; i < 65536; ++i) in[i] = static_cast<bfloat16>(i);
  std::vector<float> f(65536);
  std::vector<double> d(65536);
  cblas_sbf16tos(65536, in.data(), 1, f.data(), 1);
  cblas_dbf16tod(65536, in.data(), 1, d.data(), 1);
  for (std::uint32_t i = 0; i < 65536; ++i) {
    ASSERT_EQ(bits(f[i]), i << 16) << i;
    if (std::isnan(f[i])) {
      ASSERT_TRUE(std::isnan(d[i]));
    } else {
      ASSERT_EQ(d[i], static_cast<double>(f[i]));
    }
  }
}

TEST(Bf16Convert, FloatToBf16RoundsToNearestEven) {
  std::mt19937 gen(1);
  std::vector<float> in;
  for (int i = 0; i < 200000; ++i) in.push_back(from_bits(gen()));
  // Ties both ways, the overflow boundary, subnormals, zeros.
  for (std::uint32_t u : {0x3f808000u, 0x3f818000u, 0x7f7f8000u, 0x7f7f7fffu, 0x7f7fffffu, 0x00008000u,
                          0x00018000u, 0x80000000u, 0x00000000u, 0x00000001u})
    in.push_back(from_bits(u)), in.push_back(-from_bits(u));
  std::vector<bfloat16> out(in.size());
  cblas_sbstobf16(static_cast<int>(in.size()), in.data(), 1, out.data(), 1);
  for (std::size_t i = 0; i < in.size(); ++i) {
    if (std::isnan(in[i])) {
      EXPECT_TRUE(std::isnan(from_bits(static_cast<std::uint32_t>(out[i]) << 16))) << std::hex << bits(in[i]);
      EXPECT_EQ(out[i] & 0x0040, 0x0040) << "NaN must come out quiet";
      EXPECT_EQ(out[i] & 0x8000, (bits(in[i]) >> 16) & 0x8000) << "sign kept";
      continue;
    }
    ASSERT_EQ(out[i], nearest_bf16(in[i])) << std::hex << "input bits 0x" << bits(in[i]);
  }
}

TEST(Bf16Convert, SpecialValues) {
  const float in[] = {std::numeric_limits<float>::infinity(),
                      -std::numeric_limits<float>::infinity(),
                      std::numeric_limits<float>::quiet_NaN(),
                      from_bits(0x7f800001u) /* signalling */,
                      std::numeric_limits<float>::max(),
                      0.0f,
                      -0.0f};
  bfloat16 out[7];
  cblas_sbstobf16(7, in, 1, out, 1);
  EXPECT_EQ(out[0], 0x7f80);
  EXPECT_EQ(out[1], 0xff80);
  EXPECT_TRUE((out[2] & 0x7fff) > 0x7f80);
  EXPECT_TRUE((out[3] & 0x7fff) > 0x7f80) << "a NaN with only low payload bits must not become Inf";
  EXPECT_EQ(out[4], 0x7f80) << "FLT_MAX is beyond bf16's range: rounds to Inf";
  EXPECT_EQ(out[5], 0x0000);
  EXPECT_EQ(out[6], 0x8000);
}

TEST(Bf16Convert, DoubleRoundsOnceNotTwice) {
  // 1 + 2^-8 + 2^-30: nearest bf16 is 1 + 2^-7 (above the tie). Rounding to fp32 first would give
  // 1 + 2^-8, an exact tie, which rounds to even: 1.0, wrong.
  const double in[] = {1.0 + std::ldexp(1.0, -8) + std::ldexp(1.0, -30),
                       1.0 + std::ldexp(1.0, -8),
                       -(1.0 + std::ldexp(1.0, -8) + std::ldexp(1.0, -30)),
                       1e300,
                       -1e300,
                       std::numeric_limits<double>::quiet_NaN(),
                       1e-300};
  bfloat16 out[7];
  cblas_sbdtobf16(7, in, 1, out, 1);
  EXPECT_EQ(out[0], 0x3f81);
  EXPECT_EQ(out[1], 0x3f80) << "an exact tie rounds to even";
  EXPECT_EQ(out[2], 0xbf81);
  EXPECT_EQ(out[3], 0x7f80);
  EXPECT_EQ(out[4], 0xff80);
  EXPECT_TRUE((out[5] & 0x7fff) > 0x7f80);
  EXPECT_EQ(out[6], 0x0000) << "underflow to +0";
  std::mt19937_64 gen(3);
  std::uniform_real_distribution<double> d(-1e3, 1e3);
  for (int i = 0; i < 100000; ++i) {
    const double x = d(gen);
    bfloat16 o;
    cblas_sbdtobf16(1, &x, 1, &o, 1);
    ASSERT_EQ(o, nearest_bf16(x)) << x;
  }
}

TEST(Bf16Convert, StridesAndNegativeIncrements) {
  const float in[] = {1.0f, 9.0f, 2.0f, 9.0f, 3.0f};
  bfloat16 out[6] = {7, 7, 7, 7, 7, 7};
  cblas_sbstobf16(3, in, 2, out, -2);  // BLAS: out walked from its end
  EXPECT_EQ(out[4], 0x3f80);           // 1.0
  EXPECT_EQ(out[2], 0x4000);           // 2.0
  EXPECT_EQ(out[0], 0x4040);           // 3.0
  EXPECT_EQ(out[1], 7);
  EXPECT_EQ(out[5], 7);
  float back[3] = {0, 0, 0};
  cblas_sbf16tos(3, out, 2, back, 1);
  EXPECT_EQ(back[0], 3.0f);
  EXPECT_EQ(back[2], 1.0f);
  cblas_sbstobf16(0, in, 1, out, 1);  // n <= 0: nothing
  cblas_sbstobf16(-1, in, 1, out, 1);
  EXPECT_EQ(out[0], 0x4040);
}

}  // namespace
}  // namespace mmla::test
