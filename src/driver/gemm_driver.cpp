#include "driver/gemm_driver.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdlib>

#include "ukernel/bf16.hpp"

namespace mmla::driver {
namespace {

// A per-thread, grow-only, 64-byte aligned scratch buffer: packing needs no allocation per call
// once a thread has seen its largest block.
class Scratch {
 public:
  Scratch() = default;
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  ~Scratch() { std::free(data_); }
  // Never null on success, even for 0 bytes (a call that packs nothing).
  void* get(std::size_t bytes) {
    if (bytes > size_ || data_ == nullptr) {
      bytes = std::max<std::size_t>(bytes, 64);
      const std::size_t rounded = (bytes + 63) / 64 * 64;
      void* p = std::aligned_alloc(64, rounded);
      if (p == nullptr) return nullptr;
      std::free(data_);
      data_ = p;
      size_ = rounded;
    }
    return data_;
  }

 private:
  void* data_ = nullptr;
  std::size_t size_ = 0;
};

std::size_t round_up(std::size_t v, std::size_t to) { return (v + to - 1) / to * to; }
std::size_t round_down_to(std::size_t v, std::size_t to) { return std::max(to, v / to * to); }

void scale_c(const GemmProblem& p) {
  if (p.beta == 1.0f) return;
  for (std::size_t i = 0; i < p.m; ++i) {
    float* row = p.c + static_cast<std::ptrdiff_t>(i) * p.c_rs;
    for (std::size_t j = 0; j < p.n; ++j) {
      float& v = row[static_cast<std::ptrdiff_t>(j) * p.c_cs];
      v = p.beta == 0.0f ? 0.0f : v * p.beta;
    }
  }
}

}  // namespace

// Reading B in place saves packing it. Packing streams B at ~35 GB/s (measured on Zen 4), which
// costs about 6/m of the multiply time, so it matters up to m of a few hundred. Read in place,
// each KC x NR micro-panel of B is fetched once from wherever B lives and then serves every MR
// panel of A from L1/L2 -- which holds only while all of M is one MC block (otherwise every MC
// block would fetch it again, strided). Measured on Zen 4 with the blocking sweep of
// docs/blocking.md: 1.1-1.3x for m = 8..128 with B in L3 and with B streamed from DRAM.
// Only for B rows contiguous along n, B already in the kernel's element type, and KR = 1 or 2
// layouts (a KR = 2 kernel interleaves each depth pair from two rows; K must be even so that no
// block ends on half a pair). KR = 2 kernels read a B of more than kBInPlaceMaxBytes in place only
// for Blocking::b_from_memory_max_panels MR panels of A: with a 32 MiB bf16 B streamed from DRAM
// in deep K blocks, in place was faster at M = 1..32 and slower from M = 64 (docs/blocking.md).
// The size is the whole call's B: two threads that each read half of such a B in place for 16 MR
// panels (deep blocks) ran 1.3x one thread, packing 1.95x.
constexpr std::size_t kBInPlaceMaxBytes = 16u << 20;
std::size_t call_b_bytes(const GemmProblem& p) {
  return p.b_call_bytes != 0 ? p.b_call_bytes : p.k * p.n * ukernel::kElemBytes[static_cast<int>(p.src)];
}
bool b_from_memory(const GemmProblem& p) { return call_b_bytes(p) > kBInPlaceMaxBytes; }

bool a_one_block(const ukernel::GemmKernel& kernel, const Blocking& blocking, const GemmProblem& p) {
  if (blocking.a_one_block_bytes == 0 || p.m <= blocking.mc || b_from_memory(p)) return false;
  const std::size_t kc = std::min(p.k, balanced_depth(p.k, blocking.kc, depth_round(kernel)));
  return round_up(p.m, static_cast<std::size_t>(kernel.mr)) * kc * kernel.elem_size <=
         blocking.a_one_block_bytes;
}

namespace {
// Whether the kernel can read the call's operands where they lie, given unit-stride rows: they are
// in its element type, and its layout is KR = 1 or 2 with K a multiple of KR (a KR = 2 kernel takes
// each depth pair from two rows of B, or one dword of a row of A).
bool operands_readable(const ukernel::GemmKernel& kernel, const GemmProblem& p) {
  return kernel.kr <= 2 && p.k % static_cast<std::size_t>(kernel.kr) == 0 &&
         ukernel::kElemBytes[static_cast<int>(p.src)] == kernel.elem_size;
}
}  // namespace

bool b_readable_in_place(const ukernel::GemmKernel& kernel, const GemmProblem& p) {
  return p.b_packed == nullptr && p.b_cs == 1 && operands_readable(kernel, p);
}

namespace {
// Whether the last panel of `cols` columns of B (nr of them if whole) is read in place along with
// the whole ones, or packed (GemmKernel::b_partial_in_place_cols).
bool last_panel_in_place(const ukernel::GemmKernel& kernel, std::size_t cols) {
  const auto partial = cols % static_cast<std::size_t>(kernel.nr);
  const auto multiple = static_cast<std::size_t>(kernel.b_partial_in_place_cols);
  return partial == 0 || (multiple != 0 && partial % multiple == 0);
}
}  // namespace

bool reads_b_in_place(const ukernel::GemmKernel& kernel, const Blocking& blocking, const GemmProblem& p) {
  using B = Blocking::BInPlace;
  if (!b_readable_in_place(kernel, p) || blocking.b_in_place == B::kNever) return false;
  if (blocking.b_in_place == B::kWhenPossible) return true;
  if (kernel.kr == 1)
    return (p.m <= blocking.mc || a_one_block(kernel, blocking, p)) &&
           (blocking.b_in_place_max_panels == 0 ||
            p.m <= blocking.b_in_place_max_panels * static_cast<std::size_t>(kernel.mr));
  return p.m <= blocking.mc &&
         (!b_from_memory(p) || blocking.b_from_memory_max_panels == 0 ||
          p.m <= blocking.b_from_memory_max_panels * static_cast<std::size_t>(kernel.mr));
}

namespace {
// kernel_packs_b for a call that reads B in place or not and runs K blocks call_kc deep: gemm()
// has both at hand.
bool kernel_packs_b_in(const ukernel::GemmKernel& kernel, const Blocking& blocking, const GemmProblem& p,
                       bool b_in_place, std::size_t call_kc) {
  return blocking.b_packed_by_kernel && kernel.run_pack_b != nullptr && !b_in_place &&
         b_readable_in_place(kernel, p) &&
         (blocking.b_packed_by_kernel_max_kc == 0 ||
          std::min(call_kc, p.k) <= blocking.b_packed_by_kernel_max_kc);
}
}  // namespace

bool kernel_packs_b(const ukernel::GemmKernel& kernel, const Blocking& blocking, const GemmProblem& p) {
  return kernel_packs_b_in(kernel, blocking, p, reads_b_in_place(kernel, blocking, p),
                           call_blocking(kernel, blocking, p).kc);
}

// Rows of A at most this many bytes longer than their K block still count as back to back (a
// leading dimension padded to a cache line or so).
constexpr std::size_t kARowSlackBytes = 256;
// An MR panel of A read in place is MR streams, one per row: rows a multiple of an L1 way (4 KiB on
// Zen 4 and Golden Cove, 8 ways) apart all fall in one L1 set and evict each other. Zen 4, fp32
// 1024^3 (rows 4 KiB apart, eight to a set): 109 -> 98-102 GFLOPS in place; 512^3 (four to a set)
// gained. So at most kMaxRowsPerL1Set rows of a panel may share a set.
constexpr std::size_t kL1WayBytes = 4096, kMaxRowsPerL1Set = 4;
std::size_t rows_per_l1_set(std::size_t row_bytes, std::size_t rows) {
  std::size_t most = 0;
  for (std::size_t i = 0; i < rows; ++i) {
    std::size_t same = 0;
    for (std::size_t j = 0; j < rows; ++j)
      same += i * row_bytes % kL1WayBytes / 64 == j * row_bytes % kL1WayBytes / 64 ? 1 : 0;
    most = std::max(most, same);
  }
  return most;
}

bool reads_a_in_place(const ukernel::GemmKernel& kernel, const Blocking& blocking, const GemmProblem& p,
                      std::size_t kc) {
  using A = Blocking::AInPlace;
  if (kernel.run_a_in_place == nullptr || blocking.a_in_place == A::kNever || p.a_cs != 1 ||
      !operands_readable(kernel, p))
    return false;
  if (blocking.a_in_place == A::kWhenPossible) return true;
  const std::size_t elem = kernel.elem_size;
  const auto a_rs = static_cast<std::size_t>(std::max<std::ptrdiff_t>(p.a_rs, 0));
  const auto mr = static_cast<std::size_t>(kernel.mr);
  const bool back_to_back = p.k <= kc && a_rs * elem <= p.k * elem + kARowSlackBytes;
  return (back_to_back || p.m <= 2 * mr) &&
         rows_per_l1_set(a_rs * elem, std::min(p.m, mr)) <= kMaxRowsPerL1Set;
}

bool reads_b_in_place_shallow(const ukernel::GemmKernel& kernel, const Blocking& blocking,
                              const GemmProblem& p) {
  // KR = 2 (bf16) kernels lost 5-6% with the shallow block on a B from L3 (3072x768) and gained
  // 30% on one from DRAM (4096x4096): their calls are half as long per depth.
  return blocking.kc_in_place != 0 && call_b_bytes(p) > blocking.kc_in_place_min_b_bytes &&
         ((kernel.kr == 1 && blocking.kc_in_place_cached_b) || b_from_memory(p));
}

std::size_t PackedBLayout::bytes() const {
  const std::size_t nr = static_cast<std::size_t>(kernel->nr), kr = static_cast<std::size_t>(kernel->kr);
  // Every KC block but the last is full, so the packed depth is the sum of rounded block depths.
  const std::size_t full_k = k / kc, rest_k = k % kc;
  const std::size_t kp_total = full_k * round_up(kc, kr) + (rest_k ? round_up(rest_k, kr) : 0);
  const std::size_t full_n = n / nc, rest_n = n % nc;
  const std::size_t np_total = full_n * round_up(nc, nr) + (rest_n ? round_up(rest_n, nr) : 0);
  return np_total * kp_total * kernel->elem_size;
}

std::size_t PackedBLayout::offset(std::size_t jc, std::size_t pc) const {
  const std::size_t nr = static_cast<std::size_t>(kernel->nr), kr = static_cast<std::size_t>(kernel->kr);
  const std::size_t full_k = k / kc, rest_k = k % kc;
  const std::size_t kp_total = full_k * round_up(kc, kr) + (rest_k ? round_up(rest_k, kr) : 0);
  const std::size_t width = round_up(std::min(nc, n - jc), nr);
  // Blocks before column block jc are all full width; those before pc in this column are full depth.
  return ((jc / nc) * round_up(nc, nr) * kp_total + width * (pc / kc) * round_up(kc, kr)) * kernel->elem_size;
}

std::size_t PackedBLayout::panel_offset(std::size_t j, std::size_t pc) const {
  const std::size_t block = j / nc * nc;
  const std::size_t kcp = round_up(std::min(kc, k - pc), static_cast<std::size_t>(kernel->kr));
  return offset(block, pc) + (j - block) * kcp * kernel->elem_size;
}

void pack_b_whole(const PackedBLayout& l, ukernel::Elem src, const void* b, std::ptrdiff_t b_rs,
                  std::ptrdiff_t b_cs, void* dst) {
  const auto elem = static_cast<std::ptrdiff_t>(ukernel::kElemBytes[static_cast<int>(src)]);
  for (std::size_t jc = 0; jc < l.n; jc += l.nc)
    for (std::size_t pc = 0; pc < l.k; pc += l.kc) {
      const char* from =
          static_cast<const char*>(b) +
          (static_cast<std::ptrdiff_t>(pc) * b_rs + static_cast<std::ptrdiff_t>(jc) * b_cs) * elem;
      l.kernel->pack_b[static_cast<int>(src)](from, b_cs, b_rs, std::min(l.nc, l.n - jc),
                                              std::min(l.kc, l.k - pc),
                                              static_cast<char*>(dst) + l.offset(jc, pc));
    }
}

Blocking call_blocking(const ukernel::GemmKernel& kernel, const Blocking& blocking_in, const GemmProblem& p) {
  Blocking blocking = blocking_in;
  const bool b_in_place = reads_b_in_place(kernel, blocking_in, p);
  if (p.b_layout != nullptr) {
    blocking.kc = p.b_layout->kc, blocking.nc = p.b_layout->nc;
  } else if (b_in_place && reads_b_in_place_shallow(kernel, blocking, p)) {
    blocking.kc = blocking.kc_in_place;
  } else if (p.m <= blocking.mc && blocking.kc_one_pass != 0 && !b_in_place) {
    // B read in place keeps the deep KC: its micro-panels are not copied, so only C traffic (one
    // pass per KC block) depends on KC, and deep wins (docs/blocking.md).
    const bool b_columns = p.b_rs == 1 && p.b_cs != 1 && blocking.kc_one_pass_b_columns != 0;
    blocking.kc = b_columns ? blocking.kc_one_pass_b_columns : blocking.kc_one_pass;
    blocking.nc = b_columns ? blocking.nc_one_pass_b_columns : blocking.nc_one_pass;
  }
  if (p.b_layout == nullptr) blocking.kc = balanced_depth(p.k, blocking.kc, depth_round(kernel));
  const std::size_t mr = static_cast<std::size_t>(kernel.mr);
  if (b_in_place && a_one_block(kernel, blocking_in, p)) blocking.mc = round_up(p.m, mr);
  if (blocking.a_block_bytes != 0 && p.m > blocking.mc) {
    const std::size_t rows = blocking.a_block_bytes / (std::min(blocking.kc, p.k) * kernel.elem_size);
    blocking.mc = std::max(mr, std::min<std::size_t>(rows, 4096) / mr * mr);
  }
  // Slices: their calls go through run() on a packed A and a packed B (every K block at most as
  // deep as the first, which balanced_depth makes the deepest). The second slice reads back the
  // column of C the first wrote, which stays in L2 only where C's rows are less than a page apart:
  // a row a page or more from the next puts each row's piece of the column in a page of its own,
  // whose physical address decides its L2 set (mmla-bench 512x3072x768, fresh processes: +7% to
  // -20% against no slices).
  const std::size_t depth = round_up(std::min(blocking.kc, p.k), static_cast<std::size_t>(kernel.kr));
  const bool slices = blocking.kc_slice != 0 && depth > blocking.kc_slice && depth <= 2 * blocking.kc_slice &&
                      p.m >= blocking.kc_slice_min_rows && p.c_cs == 1 &&
                      static_cast<std::size_t>(p.c_rs) * sizeof(float) < kPageBytes && !b_in_place &&
                      !kernel_packs_b_in(kernel, blocking_in, p, b_in_place, blocking.kc) &&
                      !reads_a_in_place(kernel, blocking, p, blocking.kc);
  if (slices && blocking.mc_sliced != 0)
    blocking.mc = std::max(mr, std::min(blocking.mc, blocking.mc_sliced) / mr * mr);
  if (!slices) blocking.kc_slice = 0;
  return blocking;
}

// Operands up to this many bytes each count as staying in L1 (of 32-48 KiB) for gemm_small. Its
// set-up had cost more than the products at 16^3 (Intel VM, 1 thread: 104 of 243 ns a call).
constexpr std::size_t kSmallOperandBytes = 16 << 10;

Status gemm_small(const ukernel::GemmKernel& kernel, const GemmProblem& p) {
  const std::size_t mr = static_cast<std::size_t>(kernel.mr), nr = static_cast<std::size_t>(kernel.nr);
  const std::size_t src_elem = ukernel::kElemBytes[static_cast<int>(p.src)];
  // k == 0 or alpha == 0 (C only scaled, A and B not read) are gemm()'s.
  if (kernel.run_a_in_place == nullptr || kernel.enter != nullptr || p.a_cs != 1 ||
      !b_readable_in_place(kernel, p) || !last_panel_in_place(kernel, p.n) ||
      p.k * p.n * src_elem > kSmallOperandBytes || p.m * p.k * src_elem > kSmallOperandBytes || p.k == 0 ||
      p.alpha == 0.0f)
    return Status::not_applicable;
  const char* const a = static_cast<const char*>(p.a);
  const char* const b = static_cast<const char*>(p.b);
  const auto stride = static_cast<std::ptrdiff_t>(src_elem);
  // Column panels outside, so that each panel of B serves every row panel from L1.
  for (std::size_t j = 0; j < p.n; j += nr)
    for (std::size_t i = 0; i < p.m; i += mr)
      kernel.run_a_in_place(
          std::min(mr, p.m - i), std::min(nr, p.n - j), p.k,
          a + static_cast<std::ptrdiff_t>(i) * p.a_rs * stride, p.a_rs,
          b + static_cast<std::ptrdiff_t>(j) * stride, p.b_rs, nullptr,
          p.c + static_cast<std::ptrdiff_t>(i) * p.c_rs + static_cast<std::ptrdiff_t>(j) * p.c_cs, p.c_rs,
          p.c_cs, p.alpha, p.beta);
  return Status::ok;
}

Status gemm_b_rows(const ukernel::GemmKernel& kernel, const GemmProblem& p) {
  // M = 1 stays with the packed path: B read in place by 16 rows at a time ran at 57 us against
  // its 50 (1x768x768 from L3).
  const std::size_t max_m = b_from_memory(p) ? kernel.b_rows_max_m_b_from_memory : kernel.b_rows_max_m;
  if (kernel.gemm_b_rows == nullptr || p.m < 2 || p.m > max_m || p.b_packed != nullptr || p.b_cs != 1 ||
      ukernel::kElemBytes[static_cast<int>(p.src)] != kernel.elem_size || p.k == 0 || p.alpha == 0.0f)
    return Status::not_applicable;
  static thread_local Scratch scratch;
  void* const buffer = scratch.get(kernel.b_rows_scratch(p.m, p.n, p.k));
  if (buffer == nullptr) return Status::out_of_memory;
  kernel.gemm_b_rows(p.m, p.n, p.k, p.a, p.a_rs, p.a_cs, p.b, p.b_rs, p.c, p.c_rs, p.c_cs, p.alpha, p.beta,
                     buffer);
  return Status::ok;
}

Status gemm(const ukernel::GemmKernel& kernel, const Blocking& blocking_in, const GemmProblem& p) {
  if (p.k == 0 || p.alpha == 0.0f) {
    scale_c(p);
    return Status::ok;
  }
  if (const Status s = gemm_b_rows(kernel, p); s != Status::not_applicable) return s;
  const bool b_in_place = reads_b_in_place(kernel, blocking_in, p);
  const Blocking blocking = call_blocking(kernel, blocking_in, p);
  const bool b_by_kernel = kernel_packs_b_in(kernel, blocking_in, p, b_in_place, blocking.kc);
  const std::size_t mr = static_cast<std::size_t>(kernel.mr);
  const std::size_t nr = static_cast<std::size_t>(kernel.nr);
  const std::size_t kr = static_cast<std::size_t>(kernel.kr);
  const std::size_t elem = kernel.elem_size;
  const std::size_t mc_max = std::min(blocking.mc, p.m);
  const std::size_t nc_max = std::min(blocking.nc, p.n);
  const std::size_t kc_max = std::min(blocking.kc, p.k);
  const bool a_in_place = reads_a_in_place(kernel, blocking, p, blocking.kc);
  const std::size_t a_bytes =
      a_in_place ? 0 : round_up(round_up(mc_max, mr) * round_up(kc_max, kr) * elem, 64);
  const std::size_t b_bytes =
      p.b_packed ? 0 : (b_in_place ? nr : round_up(nc_max, nr)) * round_up(kc_max, kr) * elem;

  static thread_local Scratch scratch;
  char* const buffer = static_cast<char*>(scratch.get(a_bytes + b_bytes));
  if (buffer == nullptr) return Status::out_of_memory;
  char* const a_packed = buffer;
  char* const b_buffer = buffer + a_bytes;
  // The kernel's per-thread state for this run of calls (AMX: the tile configuration), for calls of
  // at most min(M, MR) rows, each panel of B serving the MR panels of one block of A.
  struct KernelState {
    const ukernel::GemmKernel& k;
    KernelState(const ukernel::GemmKernel& kernel, std::size_t max_rows, std::size_t a_panels) : k(kernel) {
      if (k.enter != nullptr) k.enter(max_rows, a_panels);
    }
    ~KernelState() {
      if (k.leave != nullptr) k.leave();
    }
    KernelState(const KernelState&) = delete;
    KernelState& operator=(const KernelState&) = delete;
  } const kernel_state(kernel, std::min(p.m, mr), (mc_max + mr - 1) / mr);

  const char* const a = static_cast<const char*>(p.a);
  const char* const b = static_cast<const char*>(p.b);
  // Addresses in A and B are in source elements, in the packed buffers in kernel elements.
  const int src = static_cast<int>(p.src);
  const auto src_elem = static_cast<std::ptrdiff_t>(ukernel::kElemBytes[src]);
  const auto off = [src_elem](std::size_t i, std::ptrdiff_t stride) {
    return static_cast<std::ptrdiff_t>(i) * stride * src_elem;
  };

  // A prepacked B is walked along its own NC blocks, from column b_col0 on.
  const auto nc_at = [&](std::size_t jc) {
    return p.b_packed != nullptr ? std::min(p.b_layout->columns_left_in_block(p.b_col0 + jc), p.n - jc)
                                 : std::min(blocking.nc, p.n - jc);
  };
  for (std::size_t jc = 0, nc = nc_at(0); jc < p.n; jc += nc, nc = jc < p.n ? nc_at(jc) : 0) {
    for (std::size_t pc = 0; pc < p.k; pc += blocking.kc) {
      const std::size_t kc = std::min(blocking.kc, p.k - pc);
      const std::size_t kcp = round_up(kc, kr);
      // Two slices (Blocking::kc_slice) of at most half the block each, a multiple of KR.
      const std::size_t slice =
          blocking.kc_slice != 0 && kcp > blocking.kc_slice ? round_up((kcp + 1) / 2, kr) : kcp;
      // The first K block applies the caller's beta; later ones accumulate onto it.
      const float beta = pc == 0 ? p.beta : 1.0f;
      const char* b_packed = b_buffer;
      // In place or packed by the kernel: full panels read from B, a partial last one packed here
      // (in place into the one panel of the buffer, else where it goes in the block), unless the
      // kernel reads a partial panel of its width in place too (b_partial_in_place_cols).
      const std::size_t n_full = b_in_place && last_panel_in_place(kernel, nc) ? nc : nc / nr * nr;
      if (p.b_packed != nullptr) {
        b_packed = static_cast<const char*>(p.b_packed) + p.b_layout->panel_offset(p.b_col0 + jc, pc);
      } else if (b_in_place || b_by_kernel) {
        if (n_full < nc)
          kernel.pack_b[src](b + off(pc, p.b_rs) + off(jc + n_full, p.b_cs), p.b_cs, p.b_rs, nc - n_full, kc,
                             b_buffer + (b_in_place ? 0 : n_full * kcp * elem));
      } else {
        kernel.pack_b[src](b + off(pc, p.b_rs) + off(jc, p.b_cs), p.b_cs, p.b_rs, nc, kc, b_buffer);
      }
      for (std::size_t ic = 0; ic < p.m; ic += blocking.mc) {
        const std::size_t mc = std::min(blocking.mc, p.m - ic);
        if (!a_in_place)
          kernel.pack_a[src](a + off(ic, p.a_rs) + off(pc, p.a_cs), p.a_rs, p.a_cs, mc, kc, a_packed);
        for (std::size_t jr = 0; jr < nc; jr += nr) {
          const std::size_t n_tile = std::min(nr, nc - jr);
          const char* bp = b_packed + jr * kcp * elem;
          // The micro-panel in B, where it is read in place or packed by the kernel.
          const char* const b_panel =
              b_in_place || b_by_kernel ? b + off(pc, p.b_rs) + off(jc + jr, 1) : nullptr;
          std::ptrdiff_t b_ks = kernel.kr == 1 ? static_cast<std::ptrdiff_t>(nr) : 0;
          if (b_in_place) {
            if (jr < n_full) {
              bp = b_panel, b_ks = p.b_rs;
            } else {
              bp = b_packed;
            }
          }
          // The first MR panel of the first block of A packs a full micro-panel for the rest.
          const bool pack_panel = b_by_kernel && ic == 0 && jr < n_full;
          // Two slices (call_blocking) only with A and B packed: a slice of a panel is its part
          // from depth d0 on. Otherwise one pass, d0 = 0.
          for (std::size_t d0 = 0; d0 < kcp; d0 += slice) {
            for (std::size_t ir = 0; ir < mc; ir += mr) {
              const std::size_t m_tile = std::min(mr, mc - ir);
              float* const c = p.c + static_cast<std::ptrdiff_t>(ic + ir) * p.c_rs +
                               static_cast<std::ptrdiff_t>(jc + jr) * p.c_cs;
              if (a_in_place) {
                // kcp == kc here: K (and so every K block) is a multiple of KR (reads_a_in_place).
                const char* const a_rows = a + off(ic + ir, p.a_rs) + off(pc, 1);
                if (pack_panel && ir == 0) {
                  kernel.run_a_in_place(m_tile, nr, kcp, a_rows, p.a_rs, b_panel, p.b_rs,
                                        b_buffer + jr * kcp * elem, c, p.c_rs, p.c_cs, p.alpha, beta);
                } else {
                  kernel.run_a_in_place(m_tile, n_tile, kcp, a_rows, p.a_rs, bp, b_ks, nullptr, c, p.c_rs,
                                        p.c_cs, p.alpha, beta);
                }
              } else if (pack_panel && ir == 0) {
                kernel.run_pack_b(m_tile, kcp, a_packed, b_panel, p.b_rs, b_buffer + jr * kcp * elem, c,
                                  p.c_rs, p.c_cs, p.alpha, beta);
              } else {
                kernel.run(m_tile, n_tile, std::min(slice, kcp - d0), a_packed + (ir * kcp + d0 * mr) * elem,
                           bp + d0 * nr * elem, b_ks, c, p.c_rs, p.c_cs, p.alpha, d0 == 0 ? beta : 1.0f);
              }
            }
          }
        }
      }
    }
  }
  return Status::ok;
}

namespace {
// The packed layouts the GEMV streams: fp32 panels (KR = 1) and bf16 depth pairs (c2).
bool packed_fp32(const ukernel::GemmKernel& k) { return k.kr == 1 && k.elem_size == sizeof(float); }
bool packed_bf16c2(const ukernel::GemmKernel& k) { return k.kr == 2 && k.elem_size == sizeof(std::uint16_t); }
bool packed_b_streams(const ukernel::GemmKernel& k) { return packed_fp32(k) || packed_bf16c2(k); }
}  // namespace

// From a cache that reads near L2 speed the accumulators and the rows of a sweep should stay in
// L1: else every sweep writes acc back to L2 and reads it again, a third more L2 traffic at four
// rows. Eight rows per sweep when they fit with acc, else four; wider than that, one thread
// alone takes column blocks (each a whole number of 4 KiB pages of a row) with four rows. From
// slower memory (or, for a wide X, the cache shared by several threads: each gets less than
// L2 speed) whole rows, eight at a time: more and longer sequential streams. On Zen 4 (32 MiB
// L3; a VM reads ~95 GB/s up to 9 MiB, 60-75 at 10-16 MiB) the crossover was between 9 and
// 12 MiB of X. docs/kernels.md.
GemvSweep gemv_sweep(std::size_t len, std::size_t elem_bytes, std::size_t x_bytes, int threads,
                     const cpu::CacheSizes& caches) {
  const std::size_t fast_cache_bytes = std::min(caches.l3 / 3, kBInPlaceMaxBytes);
  const std::size_t l1_budget = caches.l1d * 7 / 8;
  const auto fit = [&](std::size_t rows) { return len * (sizeof(float) + rows * elem_bytes) <= l1_budget; };
  if (x_bytes > fast_cache_bytes || fit(8)) return {len, 8};
  if (fit(4) || threads > 1) return {len, 4};
  const std::size_t page = kPageBytes / elem_bytes;
  const std::size_t block = l1_budget / (sizeof(float) + 4 * elem_bytes) / page * page;
  return {std::clamp<std::size_t>(block, page, len), 4};
}

namespace {
// The two forms of the dots: rows of A against a B with contiguous columns (x W^T), and columns of
// B against an A with contiguous rows. Whichever the problem has (the one with fewer lines when
// both): a part of a problem split along its long side has one of them too.
bool dots_rows_of_a(const GemmProblem& p) { return p.b_rs == 1 && p.m <= kDotsMaxRows; }
bool dots_columns_of_b(const GemmProblem& p) { return p.a_cs == 1 && p.n <= kDotsMaxColumns; }
}  // namespace

bool dots_x_is_b(const GemmProblem& p) { return dots_rows_of_a(p) && (!dots_columns_of_b(p) || p.m <= p.n); }

bool dots_applicable(const GemmProblem& p) {
  return p.m >= 2 && p.n >= 2 && p.b_packed == nullptr && (dots_rows_of_a(p) || dots_columns_of_b(p));
}

bool gemv_applicable(const GemmProblem& p) {
  if (p.m != 1 && p.n != 1) return dots_applicable(p);
  const bool row = p.m == 1;
  if (p.b_packed != nullptr) return row && packed_b_streams(*p.b_layout->kernel);
  const std::ptrdiff_t x_ls = row ? p.b_cs : p.a_rs, x_ks = row ? p.b_rs : p.a_cs;
  return x_ls == 1 || (row ? p.n : p.m) == 1 || x_ks == 1;
}

namespace {
// The few lines (rows of A, or columns of B: dots_x_is_b) are V, the other operand X; each element
// of C is the dot product of a line of V and one of X, both contiguous along k. Column blocks of X
// fill half the L2, where the row blocks after the first read them again; within one, K blocks keep
// a tile's lines of V in half the L1 (8 rows: 768 depths). Blocks of columns outside blocks of K
// (not the other way round) read each line of X in one go (mmla-bench --trans-b, 1 thread, GFLOPS:
// 32x768x3072 79-80 -> 96-98, 64x4096x4096 65-70 -> 74-75). An X from memory against one tile of
// rows is read along all of K, each of its lines one sequential stream, the tile's V from L2
// (8x4096x4096 32-34 -> 38-39; with more rows that lost, 32x4096x4096 63-65 -> 59-61). V is copied
// contiguous when it is not.
Status dots(const ukernel::GemvKernel& kernel, const GemmProblem& p) {
  const bool x_is_b = dots_x_is_b(p);
  const std::size_t rows = x_is_b ? p.m : p.n, len = x_is_b ? p.n : p.m;
  // bf16 inputs: X is widened by the kernel as it streams, V here once (both exact).
  const bool bf16 = p.src == ukernel::Elem::bf16;
  const void* const x_any = x_is_b ? p.b : p.a;
  const void* const v_src = x_is_b ? p.a : p.b;
  const std::ptrdiff_t x_ls = x_is_b ? p.b_cs : p.a_rs;
  const std::ptrdiff_t v_ls = x_is_b ? p.a_rs : p.b_cs, v_ks = x_is_b ? p.a_cs : p.b_rs;
  const std::ptrdiff_t c_vs = x_is_b ? p.c_rs : p.c_cs, c_xs = x_is_b ? p.c_cs : p.c_rs;

  const std::size_t v_floats = v_ks == 1 && !bf16 ? 0 : rows * p.k;
  static thread_local Scratch scratch;
  auto* const acc = static_cast<float*>(scratch.get((round_up(rows * len, 16) + v_floats) * sizeof(float)));
  if (acc == nullptr) return Status::out_of_memory;
  const float* v = static_cast<const float*>(v_src);
  std::ptrdiff_t v_rs = v_ls;
  if (v_floats != 0) {
    float* const vc = acc + round_up(rows * len, 16);
    for (std::size_t i = 0; i < rows; ++i)
      for (std::size_t q = 0; q < p.k; ++q) {
        const std::ptrdiff_t at =
            static_cast<std::ptrdiff_t>(i) * v_ls + static_cast<std::ptrdiff_t>(q) * v_ks;
        vc[i * p.k + q] = bf16 ? ukernel::bf16_to_f32(static_cast<const std::uint16_t*>(v_src)[at])
                               : static_cast<const float*>(v_src)[at];
      }
    v = vc, v_rs = static_cast<std::ptrdiff_t>(p.k);
  }

  const cpu::CacheSizes& caches = cpu::info().caches;
  constexpr std::size_t kMaxTile = ukernel::kGemvDotsMaxRows;
  const std::size_t tile_rows = std::min(rows, kMaxTile);
  const std::size_t x_elem = ukernel::kElemBytes[static_cast<int>(p.src)];
  const bool x_from_memory = (x_is_b ? call_b_bytes(p) : len * p.k * x_elem) > kBInPlaceMaxBytes;
  const std::size_t kc =
      x_from_memory && rows <= kMaxTile
          ? p.k
          : balanced_depth(p.k, round_down_to(caches.l1d / 2 / (tile_rows * sizeof(float)), 16), 16);
  const std::size_t width = std::max<std::size_t>(16, caches.l2 / 2 / (p.k * x_elem));
  std::fill(acc, acc + rows * len, 0.0f);
  for (std::size_t j = 0; j < len; j += width)
    for (std::size_t pc = 0; pc < p.k; pc += kc)
      for (std::size_t i = 0; i < rows; i += kMaxTile) {
        const std::ptrdiff_t x_at = static_cast<std::ptrdiff_t>(j) * x_ls + static_cast<std::ptrdiff_t>(pc);
        const std::size_t r = std::min(kMaxTile, rows - i), w = std::min(width, len - j);
        const std::size_t kb = std::min(kc, p.k - pc);
        const float* const vi = v + static_cast<std::ptrdiff_t>(i) * v_rs + static_cast<std::ptrdiff_t>(pc);
        float* const out = acc + i * len + j;
        if (bf16) {
          kernel.dots_bf16(r, w, kb, static_cast<const std::uint16_t*>(x_any) + x_at, x_ls, vi, v_rs, out,
                           len);
        } else {
          kernel.dots(r, w, kb, static_cast<const float*>(x_any) + x_at, x_ls, vi, v_rs, out, len);
        }
      }
  for (std::size_t i = 0; i < rows; ++i)
    for (std::size_t j = 0; j < len; ++j) {
      float& out = p.c[static_cast<std::ptrdiff_t>(i) * c_vs + static_cast<std::ptrdiff_t>(j) * c_xs];
      const float r = p.alpha * acc[i * len + j];
      out = p.beta == 0.0f ? r : r + p.beta * out;
    }
  return Status::ok;
}
}  // namespace

Status gemv(const ukernel::GemvKernel& kernel, const GemmProblem& p) {
  if (!gemv_applicable(p)) return Status::not_applicable;
  if (p.k == 0 || p.alpha == 0.0f) {
    scale_c(p);
    return Status::ok;
  }
  if (p.m != 1 && p.n != 1) return dots(kernel, p);
  // y = X v: for m == 1, X = B^T (len = n) and v = A's row; for n == 1, X = A (len = m), v = B's column.
  const bool row = p.m == 1;
  const std::size_t len = row ? p.n : p.m;
  // bf16 inputs (sbgemm): X is read as bf16 and widened by the kernel, v widened here (exact).
  const bool bf16 = p.src == ukernel::Elem::bf16;
  const void* const x_any = row ? p.b : p.a;
  const auto* x = static_cast<const float*>(x_any);
  const auto* x16 = static_cast<const std::uint16_t*>(x_any);
  const std::ptrdiff_t x_ls = row ? p.b_cs : p.a_rs, x_ks = row ? p.b_rs : p.a_cs;
  const void* const v_src = row ? p.a : p.b;
  const std::ptrdiff_t v_s = row ? p.a_cs : p.b_rs;
  const std::ptrdiff_t y_s = row ? p.c_cs : p.c_rs;
  const bool packed = p.b_packed != nullptr;
  const bool axpy = packed || x_ls == 1 || len == 1;  // else x_ks == 1 (gemv_applicable)

  // A bf16 packed B from fp32 inputs (fast math): A is rounded to bf16 as well, as the kernels' A
  // packers do, so that both paths compute the same products.
  const bool round_v = packed && !bf16 && p.b_layout->kernel->elem_size == sizeof(std::uint16_t);
  // Scratch: the accumulators (len floats) and, when v is strided, bf16 or rounded, a contiguous
  // fp32 copy.
  const std::size_t v_floats = v_s == 1 && !bf16 && !round_v ? 0 : p.k;
  static thread_local Scratch scratch;
  auto* const acc = static_cast<float*>(scratch.get((round_up(len, 16) + v_floats) * sizeof(float)));
  if (acc == nullptr) return Status::out_of_memory;
  const float* v = static_cast<const float*>(v_src);
  if (v_floats != 0) {
    float* const vc = acc + round_up(len, 16);
    for (std::size_t i = 0; i < p.k; ++i) {
      const auto at = static_cast<std::ptrdiff_t>(i) * v_s;
      const float f = bf16 ? ukernel::bf16_to_f32(static_cast<const std::uint16_t*>(v_src)[at])
                           : static_cast<const float*>(v_src)[at];
      vc[i] = round_v ? ukernel::bf16_to_f32(ukernel::f32_to_bf16(f)) : f;
    }
    v = vc;
  }

  if (packed) {
    // Panels of NR columns, depth-major within each KC x NC block: stream each as an NR-wide X^T.
    const ukernel::GemmKernel& gk = *p.b_layout->kernel;
    const std::size_t nr = static_cast<std::size_t>(gk.nr), kr = static_cast<std::size_t>(gk.kr);
    std::fill(acc, acc + len, 0.0f);
    for (std::size_t jc = 0, nc; jc < p.n; jc += nc) {
      nc = std::min(p.b_layout->columns_left_in_block(p.b_col0 + jc), p.n - jc);
      for (std::size_t pc = 0; pc < p.k; pc += p.b_layout->kc) {
        const std::size_t kc = std::min(p.b_layout->kc, p.k - pc);
        const char* const block_bytes =
            static_cast<const char*>(p.b_packed) + p.b_layout->panel_offset(p.b_col0 + jc, pc);
        const std::size_t kcp = round_up(kc, kr);
        const auto panel_stride = static_cast<std::ptrdiff_t>(kcp * nr);
        std::size_t jr = 0;
        if (packed_bf16c2(gk)) {
          const auto* block = reinterpret_cast<const std::uint16_t*>(block_bytes);
          for (; jr + 4 * nr <= nc; jr += 4 * nr)
            kernel.axpy_bf16c2(4, nr, nr, kc, block + jr * kcp, panel_stride, v + pc, acc + jc + jr);
          for (; jr < nc; jr += nr)
            kernel.axpy_bf16c2(1, nr, std::min(nr, nc - jr), kc, block + jr * kcp, panel_stride, v + pc,
                               acc + jc + jr);
          continue;
        }
        const auto* block = reinterpret_cast<const float*>(block_bytes);
        // Four full panels at a time: four sequential streams (one alone leaves bandwidth unused).
        for (; jr + 4 * nr <= nc; jr += 4 * nr)
          if (!kernel.axpy_panels4(nr, kc, block + jr * kcp, panel_stride, static_cast<std::ptrdiff_t>(nr),
                                   v + pc, acc + jc + jr))
            break;
        for (; jr < nc; jr += nr)
          kernel.axpy(std::min(nr, nc - jr), kc, block + jr * kcp, static_cast<std::ptrdiff_t>(nr), v + pc,
                      acc + jc + jr, 4);
      }
    }
  } else if (axpy) {
    const std::size_t x_elem = ukernel::kElemBytes[static_cast<int>(p.src)];
    const std::size_t x_bytes = row ? call_b_bytes(p) : p.m * p.k * x_elem;
    const GemvSweep sweep = gemv_sweep(len, x_elem, x_bytes, p.call_parts, cpu::info().caches);
    std::fill(acc, acc + len, 0.0f);
    for (std::size_t j = 0, w; j < len; j += w) {
      const auto at = static_cast<std::ptrdiff_t>(j) * x_ls;
      // Blocks end on page boundaries of X's first row (of every row when a row is whole pages):
      // a block of whole pages that straddles them was 5-15% slower than whole rows.
      const auto address = reinterpret_cast<std::uintptr_t>(static_cast<const char*>(x_any) + at * x_elem);
      const std::size_t into_page = address % kPageBytes / x_elem;
      w = std::min(sweep.block < len ? sweep.block - into_page : len, len - j);
      if (bf16) {
        kernel.axpy_bf16(w, p.k, x16 + at, x_ks, v, acc + j, sweep.rows);
      } else {
        kernel.axpy(w, p.k, x + at, x_ks, v, acc + j, sweep.rows);
      }
    }
  } else if (bf16) {
    kernel.dot_bf16(len, p.k, x16, x_ls, v, acc);
  } else {
    kernel.dot(len, p.k, x, x_ls, v, acc);
  }

  float* const y = p.c;
  for (std::size_t j = 0; j < len; ++j) {
    float& out = y[static_cast<std::ptrdiff_t>(j) * y_s];
    const float r = p.alpha * acc[j];
    out = p.beta == 0.0f ? r : r + p.beta * out;
  }
  return Status::ok;
}

}  // namespace mmla::driver
