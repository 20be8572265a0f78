#include <algorithm>

#include "driver/gemm_driver.hpp"

namespace mmla::driver {
namespace {
std::size_t round_down(std::size_t v, std::size_t to) { return std::max(to, v / to * to); }
}  // namespace

// The model (docs/blocking.md): the KC x NR micro-panel of B is reused by every MR-row micro-panel
// of A, so it should occupy at most half of L1, leaving the rest to the streaming A micro-panel
// and C. The MC x KC block of A is reused across the whole NC width: half of L2. The KC x NC panel
// of B is reused across all of M: half of L3, capped so a huge shared L3 does not make one
// block span several cores' worth of it. When all of M fits one MC block, a packed B block is
// used once, right after packing: then it should stay in L2 (half of it).
Blocking blocking_for(const ukernel::GemmKernel& k, const cpu::CacheSizes& caches) {
  const std::size_t elem = k.elem_size;
  const std::size_t kr = static_cast<std::size_t>(k.kr);
  Blocking b;
  b.kc = std::clamp<std::size_t>(caches.l1d / 2 / (static_cast<std::size_t>(k.nr) * elem), 64, 1024);
  b.kc = round_down(b.kc, std::max<std::size_t>(kr, 8));
  b.mc = std::clamp<std::size_t>(caches.l2 / 2 / (b.kc * elem), static_cast<std::size_t>(k.mr), 4096);
  b.mc = round_down(b.mc, static_cast<std::size_t>(k.mr));
  constexpr std::size_t kMaxL3Share = 16u << 20;
  const std::size_t l3 = std::min(caches.l3, kMaxL3Share);
  b.nc = std::clamp<std::size_t>(l3 / 2 / (b.kc * elem), static_cast<std::size_t>(k.nr), 8192);
  b.nc = round_down(b.nc, static_cast<std::size_t>(k.nr));
  b.nc_one_pass =
      std::clamp<std::size_t>(caches.l2 / 2 / (b.kc * elem), static_cast<std::size_t>(k.nr), b.nc);
  b.nc_one_pass = round_down(b.nc_one_pass, static_cast<std::size_t>(k.nr));
  return b;
}

}  // namespace mmla::driver
