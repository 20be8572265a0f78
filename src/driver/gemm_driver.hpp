// The GEMM driver: BLIS-style loops over cache blocks with packing, ISA-free; it sees kernels only
// through their descriptors.
#pragma once

#include <cstddef>

#include "cpu/cpu.hpp"
#include "threading/pool.hpp"
#include "ukernel/ukernel.hpp"

namespace mmla::driver {

// Cache blocks: MC rows of A x KC depth stay in L2, KC x NC of B in L3, a KC x NR micro-panel of B
// in L1 (see docs/blocking.md). Any positive values are correct; tests force tiny ones.
struct Blocking {
  std::size_t mc = 0, kc = 0, nc = 0;
  // KC and NC when all of M fits one MC block (each packed B block is then used by few rows of A,
  // once): there the B micro-panel's L1 residency matters more than C traffic. 0: same as kc/nc.
  std::size_t kc_one_pass = 0, nc_one_pass = 0;
  // The same for a B whose columns are contiguous (x W^T), which the packer transposes: deep K
  // blocks, so that it reads long pieces of each column, and narrow enough that the packed block
  // stays in L2 (docs/blocking.md, "A transposed B in one pass"). 0: kc_one_pass and nc_one_pass.
  std::size_t kc_one_pass_b_columns = 0, nc_one_pass_b_columns = 0;
  // Whether B with contiguous rows is read in place instead of packed: kAuto lets the driver
  // decide from the shape; tests force both paths.
  enum class BInPlace { kAuto, kNever, kWhenPossible } b_in_place = BInPlace::kAuto;
  // kAuto with a KR = 1 kernel reads B in place for at most this many MR panels of A (0: all of
  // one MC block): how often a strided micro-panel of B can be read again from L2 before packing
  // it would have paid depends on the microarchitecture (docs/blocking.md).
  std::size_t b_in_place_max_panels = 0;
  // kAuto with a KR = 2 kernel reads a B from memory (b_from_memory) in place for at most this many
  // MR panels of A (0: all of one MC block): with deep K blocks, more panels lost to packing B;
  // with kc_in_place's shallow ones, they won on Zen 4 (docs/blocking.md).
  std::size_t b_from_memory_max_panels = 4;
  // Nonzero: B read in place is blocked by this many depths, so that the kernel calls of one K
  // block read every one of its rows as a sequential stream across the panels (docs/blocking.md).
  // 0: the KC the call would use anyway.
  std::size_t kc_in_place = 0;
  // Whether kc_in_place also applies to a B in the caches read by a KR = 1 kernel (else only to a
  // B from memory, b_from_memory).
  bool kc_in_place_cached_b = true;
  // A B read in place (its whole call, call_b_bytes) of at most this many bytes keeps the deep KC
  // however kc_in_place is set: it stays in L2, where shallow blocks only add C traffic and calls.
  std::size_t kc_in_place_min_b_bytes = 0;
  // Nonzero: an M of more than MC rows is blocked by rows of A worth this many bytes at the depth
  // the call actually uses (a shallow K gets more rows); MC then only says which M is one block.
  // 0: MC as is.
  std::size_t a_block_bytes = 0;
  // Nonzero (KR = 1 kernels): an M of more than MC rows still runs as one block of A, with B read
  // in place instead of packed, when its rows at the call's KC take at most this many bytes and B
  // does not come from memory (docs/blocking.md, "One block of A for medium M"). 0: MC decides.
  std::size_t a_one_block_bytes = 0;
  // Whether a B that is packed per call and could be read in place is packed by the kernel
  // (GemmKernel::run_pack_b, when it has one) as the first block of A runs against it, instead of
  // by pack_b beforehand (docs/blocking.md, "B packed by the kernel").
  bool b_packed_by_kernel = false;
  // Nonzero: the kernel packs B only in calls at most this deep, each of its first panel's calls
  // then reading that many strided rows of B (docs/blocking.md, "B packed by the kernel on Intel").
  std::size_t b_packed_by_kernel_max_kc = 0;
  // Whether a row-major A is read in place by a kernel that can (GemmKernel::run_a_in_place)
  // instead of packed: kAuto decides from the shape (reads_a_in_place); tests force both paths.
  enum class AInPlace { kAuto, kNever, kWhenPossible } a_in_place = AInPlace::kAuto;
  // Nonzero: a K block deeper than this and at most twice as deep, with A and B both packed and at
  // least kc_slice_min_rows rows of A, runs in two slices: the kernel calls of each micro-panel of B
  // take the first half of its depth for every MR panel of A, then the second half, so that the
  // half they share stays in L1. The block of A then has at most mc_sliced rows. call_blocking
  // leaves kc_slice nonzero only for a call that slices (docs/blocking.md, "Two slices").
  std::size_t kc_slice = 0, kc_slice_min_rows = 0, mc_sliced = 0;
};

Blocking blocking_for(const ukernel::GemmKernel& kernel, const cpu::CpuInfo& cpu);

// What a KC is rounded to: a multiple of the kernel's KR and of 8.
std::size_t depth_round(const ukernel::GemmKernel& kernel);

// The depth to block k with, at most kc: the same number of blocks as kc gives, of equal depth
// (rounded up to a multiple of round), so that no block is a shallow remainder whose kernel calls
// are mostly fixed cost.
std::size_t balanced_depth(std::size_t k, std::size_t kc, std::size_t round);

// Where each KC x NC block of a whole prepacked B lives: blocks in jc-major, pc-minor order, each
// laid out as the kernel's pack_b writes it. Fixed by the kernel, the KC/NC it was packed with and
// the shape.
struct PackedBLayout {
  const ukernel::GemmKernel* kernel = nullptr;
  std::size_t k = 0, n = 0, kc = 0, nc = 0;

  std::size_t bytes() const;
  std::size_t offset(std::size_t jc, std::size_t pc) const;  // jc, pc: element offsets of the block
  // The micro-panel of column j (a multiple of NR) in the block at depth pc.
  std::size_t panel_offset(std::size_t j, std::size_t pc) const;
  // Columns from j to the end of j's KC x NC block (or of B).
  std::size_t columns_left_in_block(std::size_t j) const { return std::min((j / nc + 1) * nc, n) - j; }
};

// Packs all of B (k x n of element type src, element (p, j) at b[p * b_rs + j * b_cs]) into dst
// (layout.bytes() bytes), converting to the kernel's element type.
void pack_b_whole(const PackedBLayout& layout, ukernel::Elem src, const void* b, std::ptrdiff_t b_rs,
                  std::ptrdiff_t b_cs, void* dst);

// The one internal problem form every API call is normalised to: A (m x k) and B (k x n) are strided
// views, any transpose already folded into the strides; element (i, j) of C is at
// c[i * c_rs + j * c_cs] (the API arranges c_cs == 1 whenever it can: kernels store rows with vector
// stores). beta == 0 means C is written without being read. With b_packed set, B comes prepacked
// in that layout (b, b_rs, b_cs unused), its KC/NC override the blocking's, and the problem's
// columns start at column b_col0 of the packed B (a multiple of NR: a thread's share).
struct GemmProblem {
  std::size_t m = 0, n = 0, k = 0;
  float alpha = 1.0f, beta = 0.0f;
  const void* a = nullptr;
  std::ptrdiff_t a_rs = 0, a_cs = 0;
  const void* b = nullptr;
  std::ptrdiff_t b_rs = 0, b_cs = 0;
  float* c = nullptr;
  std::ptrdiff_t c_rs = 0, c_cs = 1;
  const void* b_packed = nullptr;
  const PackedBLayout* b_layout = nullptr;
  std::size_t b_col0 = 0;
  ukernel::Elem src = ukernel::Elem::f32;  // element type of A and B as passed in
  // Bytes of B that the whole call reads, when this problem is one thread's part of it (0: this
  // problem's own k x n). The parts read theirs at the same time, so whether B streams from
  // memory depends on the whole.
  std::size_t b_call_bytes = 0;
  // How many parts the call is split into, to run on as many threads at once (1: not split).
  int call_parts = 1;
};

enum class Status { ok, out_of_memory, not_applicable };

// A memory page, the unit of the driver's and the planner's rules about where data lands.
inline constexpr std::size_t kPageBytes = 4096;

// Whether this problem's B could be read in place by the kernel: row-major, in the kernel's element
// type, a KR = 1 or 2 layout, K a multiple of KR.
bool b_readable_in_place(const ukernel::GemmKernel& kernel, const GemmProblem& p);
// Whether gemm() reads this problem's B in place (unpacked, a micro-panel at a time) rather than
// packing it: decided from the shape, the strides and the blocking (docs/blocking.md). The thread
// planner asks it of the parts it considers.
bool reads_b_in_place(const ukernel::GemmKernel& kernel, const Blocking& blocking, const GemmProblem& p);
// The bytes of B the whole call reads: b_call_bytes, or this problem's own k x n. A thread's parts
// of p carry it on.
std::size_t call_b_bytes(const GemmProblem& p);
// Whether gemm() has the kernel pack this problem's B (Blocking::b_packed_by_kernel).
bool kernel_packs_b(const ukernel::GemmKernel& kernel, const Blocking& blocking, const GemmProblem& p);
// Whether the call's B is too big to stay in the caches.
bool b_from_memory(const GemmProblem& p);
// Whether M, more than MC rows, still runs as one block of A (Blocking::a_one_block_bytes).
bool a_one_block(const ukernel::GemmKernel& kernel, const Blocking& blocking, const GemmProblem& p);
// Whether gemm() reads A in place (GemmKernel::run_a_in_place) instead of packing it, when it blocks
// K by kc: A row-major in the kernel's element type (KR = 2: K even), and either one K block whose
// rows lie back to back, so that A's block is as compact in the caches as a packed one, or so few
// rows that their spread does not matter (docs/blocking.md, "A read in place").
bool reads_a_in_place(const ukernel::GemmKernel& kernel, const Blocking& blocking, const GemmProblem& p,
                      std::size_t kc);
// The blocking gemm() runs this problem with: KC and NC of a prepacked B, of a B read in place in
// shallow blocks or of one pass over M, KC balanced over K, MC for one block of A or for
// Blocking::a_block_bytes, and whether its K blocks run in two slices (kc_slice, else 0). The
// planner asks it too, so that it judges a part as gemm() will run it.
Blocking call_blocking(const ukernel::GemmKernel& kernel, const Blocking& blocking, const GemmProblem& p);
// For a B read in place: whether it is read in K blocks of blocking.kc_in_place depths.
bool reads_b_in_place_shallow(const ukernel::GemmKernel& kernel, const Blocking& blocking,
                              const GemmProblem& p);

// Computes the problem with the given kernel and blocking. Requires m, n > 0; k == 0 or
// alpha == 0 only scale C.
Status gemm(const ukernel::GemmKernel& kernel, const Blocking& blocking, const GemmProblem& p);

// The same for few rows with B read in place by the kernel's own loop (GemmKernel::gemm_b_rows),
// which gemm() takes first. Status::not_applicable, touching nothing, where the kernel has none,
// for M = 1 or more than its rows (GemmKernel::b_rows_max_m*), a prepacked or column-major B, a B of another
// element type, or k == 0 or alpha == 0.
Status gemm_b_rows(const ukernel::GemmKernel& kernel, const GemmProblem& p);

// The same for a problem whose operands stay in L1, tile by tile straight from A and B: no
// blocking, packing buffers or kernel state. Status::not_applicable, touching nothing, where the
// kernel cannot read both in place or where k == 0 or alpha == 0 (gemm() then runs it).
Status gemm_small(const ukernel::GemmKernel& kernel, const GemmProblem& p);

// The matrix-vector path for m == 1 or n == 1: streams the big operand once with a GEMV kernel.
// Not applicable (gemv returns not_applicable, touching nothing) when neither is 1 or the big
// operand has no unit stride; a prepacked B is streamed panel by panel. It also takes few rows or
// columns of operands not prepacked whose lines lie along K (dots_applicable): dot products
// of lines read where they are (GemvKernel::dots). Up to kDotsMaxRows rows of A against a B with
// contiguous columns (x W^T), where the GEMM path would pack that B across its columns (mmla-bench
// --trans-b, 1 thread, GFLOPS: 8x3072x768 22 -> 75, 32x768x768 83 -> 103, 64x3072x768 70-88 ->
// 101-104; 128 rows mixed); up to kDotsMaxColumns columns of B against an A with contiguous rows,
// where the GEMM path reads A in place and only its NR-wide tiles' unused columns are lost
// (768x8x768 45-47 -> 67-72; 768x16x768 93 -> 86).
inline constexpr std::size_t kDotsMaxRows = 64;
inline constexpr std::size_t kDotsMaxColumns = 8;
// Which operand the dots stream as X: B for rows of A, A for columns of B.
bool dots_x_is_b(const GemmProblem& p);
bool dots_applicable(const GemmProblem& p);
bool gemv_applicable(const GemmProblem& p);
Status gemv(const ukernel::GemvKernel& kernel, const GemmProblem& p);

// How the axpy form streams a row-major X of `len` columns (the call's X being x_bytes in all,
// read by `threads` threads at once): in column blocks of `block`, `rows` rows per sweep over
// their accumulators.
struct GemvSweep {
  std::size_t block, rows;
};
GemvSweep gemv_sweep(std::size_t len, std::size_t elem_bytes, std::size_t x_bytes, int threads,
                     const cpu::CacheSizes& caches);

// --- Threads (src/driver/parallel.cpp) ---
// A problem is split into independent parts, each solved by the single-thread driver on its own
// packing buffers: a tm x tn grid of blocks of C (edges on MR/NR multiples), or, when C is too
// small to share, tk slices of K whose partial products are summed into C afterwards.
// When the workers start late (they were asleep), the caller's part (part 0) of a split along one
// axis takes `lead` units of it (MR or NR tiles, K blocks, GEMV output lines) and the others share
// the rest evenly; 0 splits evenly.
struct Partition {
  int tm = 1, tn = 1, tk = 1;
  std::size_t lead = 0;
  int threads() const { return tm * tn * tk; }
};

// The partition on at most `threads` threads that finishes first by the cost model in
// parallel.cpp (1 x 1 x 1 when threads would not pay), if a team starts as `start` says.
Partition plan_gemm(const ukernel::GemmKernel& kernel, const Blocking& blocking, const GemmProblem& p,
                    int threads, threading::TeamStart start);
Partition plan_gemv(const GemmProblem& p, int threads, threading::TeamStart start);

// Solve with up to `threads` threads from the pool (fewer if it is busy).
Status gemm_threaded(const ukernel::GemmKernel& kernel, const Blocking& blocking, const GemmProblem& p,
                     int threads);
Status gemv_threaded(const ukernel::GemvKernel& kernel, const GemmProblem& p, int threads);

// The same with a given partition, its parts run one after another on the calling thread: tests
// check every split against the reference with it.
Status gemm_partitioned(const ukernel::GemmKernel& kernel, const Blocking& blocking, const GemmProblem& p,
                        Partition part);
Status gemv_partitioned(const ukernel::GemvKernel& kernel, const GemmProblem& p, Partition part);

}  // namespace mmla::driver
