#include "ukernel/pack/pack_bf16.hpp"

#include <cstdint>
#include <cstring>

#include "ukernel/bf16.hpp"

namespace mmla::ukernel {
namespace {

std::uint16_t to_bf16(float x) { return f32_to_bf16(x); }
std::uint16_t to_bf16(std::uint16_t x) { return x; }

template <int R, class Src>
void pack_c4(const void* src_v, std::ptrdiff_t s_mn, std::ptrdiff_t s_k, std::size_t mn, std::size_t k,
             void* dst_v) {
  static_assert(R % 2 == 0, "c4 panels hold rows in pairs");
  const Src* src = static_cast<const Src*>(src_v);
  std::uint16_t* dst = static_cast<std::uint16_t*>(dst_v);
  const std::size_t kp = (k + 3) / 4 * 4;
  for (std::size_t p = 0; p < mn; p += R) {
    std::uint16_t* panel = dst + p * kp;
    const std::size_t rows = mn - p < static_cast<std::size_t>(R) ? mn - p : R;
    if (rows < static_cast<std::size_t>(R) || kp != k) std::memset(panel, 0, R * kp * sizeof(std::uint16_t));
    for (std::size_t r = 0; r < rows; ++r) {
      const Src* s = src + static_cast<std::ptrdiff_t>(p + r) * s_mn;
      std::uint16_t* d = panel + (r / 2) * 8 + (r % 2) * 4;
      for (std::size_t kk = 0; kk < k; ++kk)
        d[(kk / 4) * R * 4 + kk % 4] = to_bf16(s[static_cast<std::ptrdiff_t>(kk) * s_k]);
    }
  }
}

// AMX panels: R = 32 rows (A) or columns (B), depth in chunks of 32, zero padded.
template <bool kPairs, class Src>
void pack_amx(const void* src_v, std::ptrdiff_t s_mn, std::ptrdiff_t s_k, std::size_t mn, std::size_t k,
              void* dst_v) {
  constexpr std::size_t R = 32, kChunk = 32;
  const Src* src = static_cast<const Src*>(src_v);
  std::uint16_t* dst = static_cast<std::uint16_t*>(dst_v);
  const std::size_t kp = (k + kChunk - 1) / kChunk * kChunk;
  for (std::size_t p = 0; p < mn; p += R) {
    std::uint16_t* panel = dst + p * kp;
    const std::size_t rows = mn - p < R ? mn - p : R;
    if (rows < R || kp != k) std::memset(panel, 0, R * kp * sizeof(std::uint16_t));
    // Offset of (r, kk) within the panel, split into a part from kk and a part from r.
    const auto k_part = [](std::size_t kk) {
      const std::size_t c = kk / kChunk * R * kChunk, q = kk % kChunk;
      return kPairs ? c + (q / 2) * 32 + q % 2 : c + q;
    };
    const auto r_part = [](std::size_t r) { return kPairs ? (r / 16) * 512 + (r % 16) * 2 : r * kChunk; };
    const Src* base = src + static_cast<std::ptrdiff_t>(p) * s_mn;
    if (s_mn == 1) {
      // Rows of the source run along mn (a row-major B): read each in order.
      for (std::size_t kk = 0; kk < k; ++kk) {
        const Src* row = base + static_cast<std::ptrdiff_t>(kk) * s_k;
        std::uint16_t* d = panel + k_part(kk);
        for (std::size_t r = 0; r < rows; ++r) d[r_part(r)] = to_bf16(row[r]);
      }
    } else {
      for (std::size_t r = 0; r < rows; ++r) {
        const Src* s = base + static_cast<std::ptrdiff_t>(r) * s_mn;
        std::uint16_t* d = panel + r_part(r);
        for (std::size_t kk = 0; kk < k; ++kk)
          d[k_part(kk)] = to_bf16(s[static_cast<std::ptrdiff_t>(kk) * s_k]);
      }
    }
  }
}

}  // namespace

void pack_f32_amx_rows_r32(const void* src, std::ptrdiff_t s_mn, std::ptrdiff_t s_k, std::size_t mn,
                           std::size_t k, void* dst) {
  pack_amx<false, float>(src, s_mn, s_k, mn, k, dst);
}
void pack_bf16_amx_rows_r32(const void* src, std::ptrdiff_t s_mn, std::ptrdiff_t s_k, std::size_t mn,
                            std::size_t k, void* dst) {
  pack_amx<false, std::uint16_t>(src, s_mn, s_k, mn, k, dst);
}
void pack_f32_amx_pairs_r32(const void* src, std::ptrdiff_t s_mn, std::ptrdiff_t s_k, std::size_t mn,
                            std::size_t k, void* dst) {
  pack_amx<true, float>(src, s_mn, s_k, mn, k, dst);
}
void pack_bf16_amx_pairs_r32(const void* src, std::ptrdiff_t s_mn, std::ptrdiff_t s_k, std::size_t mn,
                             std::size_t k, void* dst) {
  pack_amx<true, std::uint16_t>(src, s_mn, s_k, mn, k, dst);
}

#define MMLA_DEFINE_PACK_BF16C4(R)                                                                     \
  void pack_f32_bf16c4_r##R(const void* src, std::ptrdiff_t s_mn, std::ptrdiff_t s_k, std::size_t mn,  \
                            std::size_t k, void* dst) {                                                \
    pack_c4<R, float>(src, s_mn, s_k, mn, k, dst);                                                     \
  }                                                                                                    \
  void pack_bf16_bf16c4_r##R(const void* src, std::ptrdiff_t s_mn, std::ptrdiff_t s_k, std::size_t mn, \
                             std::size_t k, void* dst) {                                               \
    pack_c4<R, std::uint16_t>(src, s_mn, s_k, mn, k, dst);                                             \
  }
MMLA_DEFINE_PACK_BF16C4(4)
MMLA_DEFINE_PACK_BF16C4(8)
MMLA_DEFINE_PACK_BF16C4(12)
#undef MMLA_DEFINE_PACK_BF16C4

}  // namespace mmla::ukernel
