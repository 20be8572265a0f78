#include <algorithm>

#include "driver/gemm_driver.hpp"

namespace mmla::driver {
namespace {
std::size_t round_down(std::size_t v, std::size_t to) { return std::max(to, v / to * to); }
}  // namespace

// The model (docs/blocking.md, with the measurements behind it). The driver's inner loops run each
// KC x NR micro-panel of B against every MR x KC panel of the MC x KC block of A, so L2 holds that
// block of A and the micro-panel of B; C is read and written once per KC block, and a kernel
// call's fixed cost (its C tile, ~150 cycles) is paid once per KC of depth.
// - Many rows of A: KC as deep as keeps the micro-panel of B in a quarter of L2 (at most 2048),
//   the block of A in the other three quarters. Measured on Zen 4, deeper won up to that
//   (2048^3: KC 512 -> 2048, 106 -> 110 GFLOPS), though the kernels then stream A's panels from
//   L2 rather than B's from L1. On Intel (Golden Cove, 2 MiB L2) blocks that fill half the L2 won
//   over ones that fill it: fp32 4096^3 149 -> 156 GFLOPS, 2048^3 138 -> 154; AMX fast math
//   4096^3 714 -> 1006. There MC follows the depth a call uses (a_block_bytes): with MC fixed
//   for KC = 2048, a K of 768-1024 lost 6-11% with AMX. The fp32 tiles are kept shallow enough
//   that the block of A has 16 MR panels, so that each micro-panel of B, fetched from L3, serves
//   16 calls (12x32: KC 2048 -> 1024, 2048^3 +10%); AMX wants its deep block. The KC x NC block
//   of B takes the L3 share (capped: a VM may report a huge shared L3); half of it cost 2.5% at
//   4096^3, A being packed once per NC block.
// - All of M in one MC block with B packed per call: each B micro-panel serves few A panels, so
//   it should sit in L1: KC from two thirds of L1 (the BLIS rule). The AVX512_BF16 kernels get
//   twice that depth: a VDPBF16PS does twice the multiply-adds of an fp32 FMA, so a call of the
//   same depth is half as long and its fixed cost weighs twice as much.
//   A B whose columns are contiguous (x W^T) is transposed by the packer, which is the cost there:
//   it reads each column in pieces of one K block and writes a block that should stay in L2 until
//   the kernel reads it. So K blocks of 1024 depths (4 KiB of each fp32 column) and blocks of B in
//   three quarters of the L2 (Golden Cove: 384 columns) instead of the L1-sized KC: fp32 x W^T,
//   1 thread, 128x3072x768 110-118 -> 139 GFLOPS, 128x4096x4096 99-105 -> 118, 128x768x768
//   132-137 -> 137-143 (docs/blocking.md).
//   The AMX kernel consumes B too fast for it to come from L3: at M = 32 and ~500 GFLOPS it reads
//   B at 16 GB/s, about what the Golden Cove VM's L3 delivers (27 GB/s measured), so its one-pass
//   block of B is sized to half the L2 (packed, then read once per MR panel from L2), not the L3
//   share: sbgemm 32x3072x768 237 -> 326-364 GFLOPS, 64x3072x768 400 -> 492-512, 32x4096x4096
//   170 -> 193-203, 128x4096x4096 490 -> 452 (A is packed once per NC block).
// - AMX: a K block of 385-768 depths runs in two slices (the calls of a micro-panel of B take the
//   first half of its depth for every MR panel of A, then the second), so that the half they share
//   stays in L1: with both panels from L2 the kernel waits for L2 (a cache line a cycle). 512x768x768
//   sbgemm +8-10%; not for one or two MR panels, not for deeper blocks (3+ slices lost).
// - A prepacked B serves any M, and costs no packing per call: it is laid out with the many-rows
//   KC and NC (src/api/packed.cpp; measured on Zen 4, KC 2048 was as fast as or faster than
//   KC 192-1024 from M = 8 to 4096).
// - B read in place (a row-major B, M in one MC block): every MR panel of A reads each strided
//   KC x NR micro-panel of B again. Zen 4 took that well up to M = 128, Intel's Golden Cove lost
//   from M = 32 on (2.6x at M = 128, B from DRAM) with a deep KC. There B read in place is blocked
//   32 depths deep instead: the 32 rows of a K block are then each read in order across the
//   panels, 32 sequential streams, which is what the L2 streamer follows (32 streams, one per 4 KiB
//   page); a deep block of rows, one cache line per row per kernel call, it does not. In place
//   then wins up to four MR panels (M = 32).
// - Off Intel, a KR = 1 kernel takes an M of several MC blocks as one block, B read in place,
//   while its rows of A take at most twice the L2 (a_one_block_bytes): packing B cost more than
//   reading those rows from L3 once per micro-panel of B, up to 2 MiB of A on Zen 4.
// - A B packed per call that could be read in place is packed by the kernel as the
//   first block of A runs against it (b_packed_by_kernel): Zen 4, 1 thread, bf16 64x4096x4096
//   +10%, 256^3-1024^3 +2%, fp32 512x4096x4096 +4%. On Intel only in shallow calls (one pass
//   over M), whose strided reads are short.
Blocking blocking_for(const ukernel::GemmKernel& k, const cpu::CpuInfo& cpu) {
  const cpu::CacheSizes& caches = cpu.caches;
  const std::size_t elem = k.elem_size;
  const std::size_t depth_scale = k.isa == cpu::Isa::avx512bf16 ? 2 : 1;
  const std::size_t kr_round = depth_round(k);
  const std::size_t mr = static_cast<std::size_t>(k.mr), nr = static_cast<std::size_t>(k.nr);
  constexpr std::size_t kMaxL3Share = 16u << 20;
  const std::size_t l3 = std::min(caches.l3, kMaxL3Share);
  const auto nc_for = [&](std::size_t kc) {
    return round_down(std::clamp<std::size_t>(l3 / (kc * elem), nr, 8192), nr);
  };
  const auto kc_for = [&](std::size_t l2_share) {
    return round_down(std::clamp<std::size_t>(l2_share / 4 / (nr * elem), 64, 2048), kr_round);
  };
  Blocking b;
  b.kc = kc_for(caches.l2);
  b.mc = round_down(std::clamp<std::size_t>(caches.l2 * 3 / 4 / (b.kc * elem), mr, 4096), mr);
  b.nc = nc_for(b.kc);
  b.kc_one_pass =
      round_down(std::clamp<std::size_t>(caches.l1d * depth_scale * 2 / 3 / (nr * elem), 64, b.kc), kr_round);
  b.nc_one_pass = nc_for(b.kc_one_pass);
  if (k.kr == 1) {
    // A transposed B (fp32 tiles): K blocks of up to 1024 depths (4 KiB of each column of B), the
    // packed block in three quarters of L2.
    b.kc_one_pass_b_columns = round_down(std::min<std::size_t>(1024, b.kc), kr_round);
    b.nc_one_pass_b_columns = round_down(caches.l2 * 3 / 4 / (b.kc_one_pass_b_columns * elem), nr);
  }
  if (k.isa == cpu::Isa::amx) {
    b.nc_one_pass = round_down(std::clamp<std::size_t>(caches.l2 / 2 / (b.kc_one_pass * elem), nr, 8192), nr);
    // Two slices: half a micro-panel of B in half the L1, a micro-panel's column of C (mc x NR
    // fp32) in two thirds of it (Golden Cove: 384 depths, 256 rows).
    b.kc_slice = round_down(caches.l1d / 2 / (nr * elem), kr_round);
    b.kc_slice_min_rows = 3 * mr;
    b.mc_sliced = round_down(caches.l1d * 2 / 3 / (nr * sizeof(float)), mr);
  }
  if (cpu.vendor == cpu::Vendor::intel) {
    // Many rows: the blocks fill half the L2, the block of A sized at the depth of each call.
    // MC keeps saying which M runs as one block.
    b.kc = kc_for(caches.l2 / 2);
    b.a_block_bytes = caches.l2 / 2 * 3 / 4;
    // FMA tiles: a micro-panel of B comes from L3 and should serve at least 16 MR panels of A.
    if (k.kr == 1) b.kc = std::min(b.kc, round_down(b.a_block_bytes / (16 * mr * elem), kr_round));
    b.nc = nc_for(b.kc);
    b.b_in_place_max_panels = 4;
    b.kc_in_place = round_down(32, kr_round);
    // ... but not for a B that half the L2 holds (the driver on the same call repeated, 1 thread,
    // 8x48 shallow vs deep: 8x512x512 114 -> 125 GFLOPS, 32x512x512 114 -> 133, 16x128x128 113 ->
    // 122; B of 2.3 MiB, 32x768x768, 124 -> 112).
    b.kc_in_place_min_b_bytes = caches.l2 / 2;
    // The kernel packs B in the shallow calls of one pass over M only: a strided read of a deep
    // block is latency-bound here (1 thread: 64x3072x768 +10%, 128x3072x768 +5%; deep, 2 threads:
    // 1024^3 -6%).
    b.b_packed_by_kernel = true;
    b.b_packed_by_kernel_max_kc = 256;
  } else {
    // Up to twice the L2 of A in one block (Zen 4, 1 thread: 256^3 +5%, 512x3072x768 +6%, 768^3
    // +2%; 1024^3, whose 4 MiB of A come from L3 for every micro-panel of B, -4%). Not on Intel,
    // where a strided B read again for many MR panels lost (b_in_place_max_panels).
    if (k.kr == 1) b.a_one_block_bytes = 2 * caches.l2;
    // A B from memory read in place: K blocks of 512 depths, so that the calls of one block sweep
    // its rows across the panels (Zen 4, 1 thread, the same call repeated: fp32 128x4096x4096
    // 78 -> 98 GFLOPS, bf16 32x4096x4096 106 -> 183; a B in the caches lost with it).
    b.kc_in_place = round_down(512, kr_round);
    b.kc_in_place_cached_b = false;
    // In those blocks a KR = 2 kernel reads such a B in place for up to eight MR panels (Zen 4, bf16
    // x 4096 x 4096 against packing it, 1 thread: 64 rows 154-167 -> 199-205 GFLOPS, 96 rows
    // 168-180 -> 200-204; 128 and 160 rows mixed on 1 thread and slower on 2).
    b.b_from_memory_max_panels = 8;
    b.b_packed_by_kernel = true;
    // The AVX2 6x16 tile reads a whole cache line of B per 12 FMAs (the AVX-512 tiles a third or
    // half of that), too fast for a strided micro-panel read again per MR panel: past two panels
    // its own first panel packing B won (Zen 4 with MMLA_ISA=avx2, 1 thread: 128x768x3072 69 ->
    // 95 GFLOPS, 128x3072x768 66 -> 86-90, 64x1024x768 68 -> 87; M = 8 stays in place, 72 vs 65).
    if (k.isa == cpu::Isa::avx2) b.b_in_place_max_panels = 2;
  }
  return b;
}

std::size_t depth_round(const ukernel::GemmKernel& kernel) {
  return std::max<std::size_t>(static_cast<std::size_t>(kernel.kr), 8);
}

std::size_t balanced_depth(std::size_t k, std::size_t kc, std::size_t round) {
  if (k <= kc) return kc;
  const std::size_t blocks = (k + kc - 1) / kc;
  const std::size_t even = ((k + blocks - 1) / blocks + round - 1) / round * round;
  return std::min(kc, even);
}

}  // namespace mmla::driver
