// bfloat16 <-> fp32/fp64 conversions, bit-exact and portable (docs/numerics.md). Internal linkage:
// any file, baseline or ISA-flagged, gets its own copy; and only bit operations and builtins, no
// <cmath> functions, whose inline definitions would be weak symbols in kernel objects (the
// kernel_objects_have_no_weak_symbols test).
#pragma once

#include <cstdint>
#include <cstring>

namespace mmla::ukernel {
namespace {

[[maybe_unused]] std::uint16_t f32_to_bf16(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  // NaN stays NaN, made quiet (a plain truncation could turn a NaN whose payload sits in the low
  // bits into Inf); sign and top payload bits are kept.
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((u >> 16) | 0x0040u);
  // Round to nearest, ties to even; finite values past the largest bf16 round to Inf, as IEEE says.
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<std::uint16_t>(u >> 16);
}

[[maybe_unused]] float bf16_to_f32(std::uint16_t h) {
  const std::uint32_t u = static_cast<std::uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

// fp64 -> bf16 with a single rounding: first to fp32 rounding to odd (truncate, then set the last
// bit if anything was cut off), which keeps enough information for the final round to nearest even
// to be the correct rounding of the double (fp32 has 16 more significand bits than bf16).
[[maybe_unused]] std::uint16_t f64_to_bf16(double d) {
  std::uint64_t du;
  std::memcpy(&du, &d, sizeof du);
  const std::uint64_t mag = du & 0x7fffffffffffffffull;
  constexpr std::uint64_t kInf = 0x7ff0000000000000ull;
  if (mag > kInf) return f32_to_bf16(static_cast<float>(d));  // NaN
  float f = static_cast<float>(d);                            // round to nearest
  if (static_cast<double>(f) != d && mag != kInf) {
    std::uint32_t u;
    std::memcpy(&u, &f, sizeof u);
    // Truncate: step the magnitude down one ulp if rounding went up (f != 0 here, and an fp32
    // overflow to Inf steps down to the largest finite value).
    if (__builtin_fabs(static_cast<double>(f)) > __builtin_fabs(d)) --u;
    u |= 1u;  // odd: remembers that bits were dropped
    std::memcpy(&f, &u, sizeof f);
  }
  return f32_to_bf16(f);
}

}  // namespace
}  // namespace mmla::ukernel
