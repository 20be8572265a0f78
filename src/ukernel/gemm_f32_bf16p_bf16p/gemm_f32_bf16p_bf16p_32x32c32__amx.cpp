// 32x32 bf16 kernel for AMX-BF16: four 16x16 fp32 C tiles accumulate TDPBF16PS of two A tiles
// (16 rows x 32 depths) by two B tiles (32 depths x 16 columns, AMX's pair layout): per 32 depths
// four TDPBF16PS, 32 K multiply-adds, from 4 KiB of packed operands. Layouts: pack_bf16.hpp.
#if !defined(__AMX_TILE__) || !defined(__AMX_BF16__) || !defined(__AVX512F__)
#error "this file must be compiled with the amx flags of cmake/kernels.cmake"
#endif

#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "ukernel/pack/pack_bf16.hpp"
#include "ukernel/tile_store.hpp"
#include "ukernel/ukernel.hpp"

namespace mmla::ukernel {
namespace {

constexpr int kMr = 32, kNr = 32, kChunk = 32;

// Palette 1: tiles 0-3 C (16 rows x 64 bytes of fp32), 4-5 A, 6-7 B (16 rows x 64 bytes of bf16).
struct alignas(64) TileConfig {
  std::uint8_t palette = 1, start_row = 0;
  std::uint8_t reserved[14] = {};
  std::uint16_t colsb[16] = {64, 64, 64, 64, 64, 64, 64, 64};
  std::uint8_t rows[16] = {16, 16, 16, 16, 16, 16, 16, 16};
};

// kp is a multiple of 32; B is always packed (KR > 1), so b_ks is not used.
void run(std::size_t m, std::size_t n, std::size_t kp, const void* ap_v, const void* bp_v, std::ptrdiff_t,
         float* c, std::ptrdiff_t c_rs, std::ptrdiff_t c_cs, float alpha, float beta) {
  const auto* ap = static_cast<const char*>(ap_v);
  const auto* bp = static_cast<const char*>(bp_v);
  // Loading the configuration also zeroes every tile. The configuration is per thread and cheap
  // next to the 4 x (kp / 32) tile products of a call.
  static const TileConfig kConfig{};
  _tile_loadconfig(&kConfig);
  for (std::size_t kk = 0; kk < kp; kk += kChunk) {
    _tile_loadd(4, ap, 64);
    _tile_loadd(5, ap + 1024, 64);
    _tile_loadd(6, bp, 64);
    _tile_loadd(7, bp + 1024, 64);
    _tile_dpbf16ps(0, 4, 6);
    _tile_dpbf16ps(1, 4, 7);
    _tile_dpbf16ps(2, 5, 6);
    _tile_dpbf16ps(3, 5, 7);
    ap += 2048;
    bp += 2048;
  }
  alignas(64) float tile[kMr * kNr];
  _tile_stored(0, tile, kNr * 4);
  _tile_stored(1, tile + 16, kNr * 4);
  _tile_stored(2, tile + 16 * kNr, kNr * 4);
  _tile_stored(3, tile + 16 * kNr + 16, kNr * 4);
  _tile_release();
  if (m == static_cast<std::size_t>(kMr) && n == static_cast<std::size_t>(kNr) && c_cs == 1) {
    const __m512 va = _mm512_set1_ps(alpha), vb = _mm512_set1_ps(beta);
    for (int i = 0; i < kMr; ++i) {
      float* ci = c + i * c_rs;
      for (int v = 0; v < 2; ++v) {
        __m512 r = _mm512_mul_ps(va, _mm512_load_ps(tile + i * kNr + 16 * v));
        if (beta != 0.0f) r = _mm512_fmadd_ps(vb, _mm512_loadu_ps(ci + 16 * v), r);
        _mm512_storeu_ps(ci + 16 * v, r);
      }
    }
    return;
  }
  store_tile_scalar(m, n, tile, kNr, c, c_rs, c_cs, alpha, beta);
}

}  // namespace

extern const GemmKernel gemm_f32_bf16p_bf16p_32x32c32__amx{"gemm_f32_bf16p_bf16p_32x32c32__amx",
                                                           Family::gemm_f32_bf16p_bf16p,
                                                           cpu::Isa::amx,
                                                           kMr,
                                                           kNr,
                                                           kChunk,
                                                           sizeof(std::uint16_t),
                                                           {pack_f32_amx_rows_r32, pack_bf16_amx_rows_r32},
                                                           {pack_f32_amx_pairs_r32, pack_bf16_amx_pairs_r32},
                                                           run};

}  // namespace mmla::ukernel
