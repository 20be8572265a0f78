// bf16 panel packers for kernels with KR = 4 (BFMMLA-style "c4" layouts), baseline ISA. Within a
// panel of R rows (R even), depth runs in chunks of four; a chunk holds R * 4 values, the rows in
// pairs: element (r, kk) at (kk / 4) * R * 4 + (r / 2) * 8 + (r % 2) * 4 + kk % 4 (rows past mn and
// depth past k are zero). pack_f32_bf16c4_rR rounds fp32 to bf16 (nearest even: fast math);
// pack_bf16_bf16c4_rR copies bf16.
#pragma once

#include <cstddef>

namespace mmla::ukernel {

#define MMLA_DECLARE_PACK_BF16C4(R)                                                                    \
  void pack_f32_bf16c4_r##R(const void* src, std::ptrdiff_t s_mn, std::ptrdiff_t s_k, std::size_t mn,  \
                            std::size_t k, void* dst);                                                 \
  void pack_bf16_bf16c4_r##R(const void* src, std::ptrdiff_t s_mn, std::ptrdiff_t s_k, std::size_t mn, \
                             std::size_t k, void* dst);
MMLA_DECLARE_PACK_BF16C4(4)
MMLA_DECLARE_PACK_BF16C4(8)
MMLA_DECLARE_PACK_BF16C4(12)
#undef MMLA_DECLARE_PACK_BF16C4

// AMX layouts (KR = 32, R = 32): per 32-deep chunk, two 16-row tiles of 64 bytes per row.
// A ("rows"): element (r, kk) at (kk / 32) * 1024 + r * 32 + kk % 32 (tile r / 16 holds rows
// 16t..16t+15, each row 32 consecutive depths). B ("pairs", AMX's VNNI layout): element (kk, j) at
// (kk / 32) * 1024 + (j / 16) * 512 + ((kk % 32) / 2) * 32 + (j % 16) * 2 + kk % 2.
void pack_f32_amx_rows_r32(const void* src, std::ptrdiff_t s_mn, std::ptrdiff_t s_k, std::size_t mn,
                           std::size_t k, void* dst);
void pack_bf16_amx_rows_r32(const void* src, std::ptrdiff_t s_mn, std::ptrdiff_t s_k, std::size_t mn,
                            std::size_t k, void* dst);
void pack_f32_amx_pairs_r32(const void* src, std::ptrdiff_t s_mn, std::ptrdiff_t s_k, std::size_t mn,
                            std::size_t k, void* dst);
void pack_bf16_amx_pairs_r32(const void* src, std::ptrdiff_t s_mn, std::ptrdiff_t s_k, std::size_t mn,
                             std::size_t k, void* dst);

}  // namespace mmla::ukernel
