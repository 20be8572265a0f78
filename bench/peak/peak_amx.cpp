// bf16 matrix peak with AMX TDPBF16PS (compiled with the amx flags of cmake/kernels.cmake). The
// caller has obtained the Linux tile-data permission first.
#if !defined(__AMX_TILE__) || !defined(__AMX_BF16__)
#error "peak_amx.cpp must be compiled with -mamx-tile -mamx-bf16"
#endif
#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "peak_kernels.hpp"

namespace mmla_bench::peak {

namespace {
// Palette 1: tiles 0-5 accumulators (16 x 16 fp32), 6 A (16 rows x 32 bf16), 7 B (16 pair rows x 16).
struct alignas(64) TileConfig {
  std::uint8_t palette = 1, start_row = 0;
  std::uint8_t reserved[14] = {};
  std::uint16_t colsb[16] = {64, 64, 64, 64, 64, 64, 64, 64};
  std::uint8_t rows[16] = {16, 16, 16, 16, 16, 16, 16, 16};
};
}  // namespace

float mmla_bf16_amx(int64_t iters) {
  // Every bf16 operand is 2^-10: each TDPBF16PS adds 32 * 2^-20 per element, far from overflow.
  alignas(64) std::uint16_t operand[512];
  for (std::uint16_t& v : operand) v = 0x3a80;  // 2^-10 in bf16
  static const TileConfig kConfig{};
  _tile_loadconfig(&kConfig);
  _tile_loadd(6, operand, 64);
  _tile_loadd(7, operand, 64);
  // Six independent accumulators: more than TDPBF16PS latency / throughput, so the unit never waits.
  for (int64_t it = 0; it < iters; ++it) {
    _tile_dpbf16ps(0, 6, 7);
    _tile_dpbf16ps(1, 6, 7);
    _tile_dpbf16ps(2, 6, 7);
    _tile_dpbf16ps(3, 6, 7);
    _tile_dpbf16ps(4, 6, 7);
    _tile_dpbf16ps(5, 6, 7);
  }
  alignas(64) float c[6][256];
  _tile_stored(0, c[0], 64);
  _tile_stored(1, c[1], 64);
  _tile_stored(2, c[2], 64);
  _tile_stored(3, c[3], 64);
  _tile_stored(4, c[4], 64);
  _tile_stored(5, c[5], 64);
  _tile_release();
  float s = 0.0f;
  for (int t = 0; t < 6; ++t) s += c[t][0] + c[t][255];
  return s;
}

}  // namespace mmla_bench::peak
