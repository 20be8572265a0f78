#include <algorithm>
#include <cmath>

#include "driver/gemm_driver.hpp"

namespace mmla::driver {
namespace {
std::size_t round_down(std::size_t v, std::size_t to) { return std::max(to, v / to * to); }
}  // namespace

// The model (docs/blocking.md, with the measurements behind it):
// - Many rows of A (more than one MC block): C is read and written once per KC block, and those
//   misses, not the L1 residency of B, are what costs; the kernels stream their B micro-panel from
//   L2 at a fraction of its bandwidth. So KC is as deep as keeps the KC x NR micro-panel of B
//   within 1/16 of L2 (at most 1024); the MC x KC block of A takes a third of L2; the KC x NC
//   block of B half of the L3 share (capped: a VM may report a huge shared L3).
// - All of M in one MC block: each B micro-panel serves few A panels, so it should sit in L1:
//   KC from two thirds of L1 (the BLIS rule), NC again from the L3 share.
// - A prepacked B serves any M: KC between the two (their geometric mean).
// - The AVX512_BF16 kernels get twice the depth of every rule: a VDPBF16PS does twice the
//   multiply-adds of an fp32 FMA, so a call of the same depth is half as long and its fixed cost
//   (~300 cycles: C tile, epilogue) weighs twice as much; measured, deeper was faster up to the
//   cap (docs/blocking.md).
Blocking blocking_for(const ukernel::GemmKernel& k, const cpu::CacheSizes& caches) {
  const std::size_t elem = k.elem_size;
  const std::size_t depth_scale = k.isa == cpu::Isa::avx512bf16 ? 2 : 1;
  const std::size_t kr_round = std::max<std::size_t>(static_cast<std::size_t>(k.kr), 8);
  const std::size_t mr = static_cast<std::size_t>(k.mr), nr = static_cast<std::size_t>(k.nr);
  constexpr std::size_t kMaxL3Share = 16u << 20;
  const std::size_t l3 = std::min(caches.l3, kMaxL3Share);
  const auto nc_for = [&](std::size_t kc) {
    return round_down(std::clamp<std::size_t>(l3 / 2 / (kc * elem), nr, 8192), nr);
  };
  Blocking b;
  b.kc = round_down(std::clamp<std::size_t>(caches.l2 * depth_scale / 16 / (nr * elem), 64, 1024), kr_round);
  b.mc = round_down(std::clamp<std::size_t>(caches.l2 / 3 / (b.kc * elem), mr, 4096), mr);
  b.nc = nc_for(b.kc);
  b.kc_one_pass =
      round_down(std::clamp<std::size_t>(caches.l1d * depth_scale * 2 / 3 / (nr * elem), 64, b.kc), kr_round);
  b.nc_one_pass = nc_for(b.kc_one_pass);
  b.kc_packed =
      round_down(static_cast<std::size_t>(std::sqrt(static_cast<double>(b.kc * b.kc_one_pass))), kr_round);
  b.nc_packed = nc_for(b.kc_packed);
  return b;
}

}  // namespace mmla::driver
