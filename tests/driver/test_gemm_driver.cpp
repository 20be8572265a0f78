// The driver with every usable kernel and forced blockings small enough that modest problems cross
// every MC/KC/NC and MR/NR edge; operands in every stride pattern the API layer produces.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "cpu/cpu.hpp"
#include "driver/gemm_driver.hpp"
#include "support/reference.hpp"
#include "ukernel/bf16.hpp"
#include "ukernel/registry.hpp"

namespace mmla::test {
namespace {

using ukernel::GemmKernel;

struct Case {
  std::int64_t m, n, k;
  bool a_row_major, b_row_major;
  float alpha, beta;
  bool c_row_major = true;   // false: C column-major (the kernels' strided-store path)
  bool prepack_b = false;    // B packed whole beforehand (the prepacked-weights path)
  driver::Partition part{};  // split into parts as threads would (run here one after another)
  int threads = 0;           // > 0: through gemm_threaded with this many threads instead
  bool bf16_src = false;     // A and B passed as bf16 (their values rounded to bf16 first)
  bool small = false;        // through gemm_small instead (which must take the problem)
};

// The values of m rounded to bf16, and those bf16 bits.
std::vector<std::uint16_t> round_to_bf16(Strided& m) {
  std::vector<std::uint16_t> bits(m.data.size());
  for (std::size_t i = 0; i < bits.size(); ++i) {
    bits[i] = ukernel::f32_to_bf16(m.data[i]);
    m.data[i] = ukernel::bf16_to_f32(bits[i]);
  }
  return bits;
}

// A bf16 kernel fed fp32 (fast math) rounds each input to bf16 first: relative error 2^-8 in each
// factor, so ((1 + 2^-8)^2 - 1) of the absolute sum on top of the fp32 accumulation bound.
double input_rounding(const GemmKernel& kn) { return kn.elem_size == 2 ? 2 * 0x1p-8 + 0x1p-16 : 0.0; }

// The shallowest K block a blocking may give a call: the most roundings.
std::size_t shallowest_kc(const driver::Blocking& blk) {
  std::size_t kc = blk.kc;
  for (std::size_t other : {blk.kc_one_pass, blk.kc_in_place})
    if (other != 0) kc = std::min(kc, other);
  if (blk.kc_slice != 0) kc = std::min(kc, std::max<std::size_t>(blk.kc_slice / 2, 1));  // halves of a block
  return kc;
}

void run_case(const GemmKernel& kn, const driver::Blocking& blk, const Case& cs) {
  const auto seed = static_cast<std::uint32_t>(cs.m * 7919 + cs.n * 104729 + cs.k);
  Strided a = make_matrix(cs.m, cs.k, cs.a_row_major, 2, seed);
  Strided b = make_matrix(cs.k, cs.n, cs.b_row_major, 1, seed + 1);
  const std::vector<std::uint16_t> a16 = cs.bf16_src ? round_to_bf16(a) : std::vector<std::uint16_t>{};
  const std::vector<std::uint16_t> b16 = cs.bf16_src ? round_to_bf16(b) : std::vector<std::uint16_t>{};
  const auto* a_data = cs.bf16_src ? static_cast<const void*>(a16.data()) : a.data.data();
  const auto* b_data = cs.bf16_src ? static_cast<const void*>(b16.data()) : b.data.data();
  // C is the top-left m x n of an (m + 2) x (n + 3) matrix: the rest must stay untouched.
  Strided c = make_matrix(cs.m + 2, cs.n + 3, cs.c_row_major, 0, seed + 2);
  fill_nan_if_beta_zero(c, cs.m, cs.n, cs.beta);
  const Strided before = c;

  driver::GemmProblem p;
  p.m = static_cast<std::size_t>(cs.m), p.n = static_cast<std::size_t>(cs.n),
  p.k = static_cast<std::size_t>(cs.k);
  p.alpha = cs.alpha, p.beta = cs.beta;
  p.a = a_data, p.a_rs = a.rs, p.a_cs = a.cs;
  p.src = cs.bf16_src ? ukernel::Elem::bf16 : ukernel::Elem::f32;
  p.c = c.data.data(), p.c_rs = c.rs, p.c_cs = c.cs;
  driver::PackedBLayout layout{&kn, p.k, p.n, blk.kc, blk.nc};
  std::vector<char> packed;
  if (cs.prepack_b) {
    packed.resize(layout.bytes());
    driver::pack_b_whole(layout, p.src, b_data, b.rs, b.cs, packed.data());
    p.b_packed = packed.data(), p.b_layout = &layout;
  } else {
    p.b = b_data, p.b_rs = b.rs, p.b_cs = b.cs;
  }
  if (cs.small)
    ASSERT_EQ(driver::gemm_small(kn, p), driver::Status::ok) << kn.name;
  else if (cs.threads > 0)
    ASSERT_EQ(driver::gemm_threaded(kn, blk, p, cs.threads), driver::Status::ok);
  else
    ASSERT_EQ(driver::gemm_partitioned(kn, blk, p, cs.part), driver::Status::ok);

  const Reference r = reference_gemm(
      cs.m, cs.n, cs.k, cs.alpha, [&](std::int64_t i, std::int64_t q) { return a.at(i, q); },
      [&](std::int64_t q, std::int64_t j) { return b.at(q, j); }, cs.beta,
      [&](std::int64_t i, std::int64_t j) { return before.at(i, j); });
  ASSERT_TRUE(matches(
      r, [&](std::int64_t i, std::int64_t j) { return c.at(i, j); },
      (cs.bf16_src ? 0.0 : input_rounding(kn)) +
          fp32_bound_factor(cs.k, static_cast<std::int64_t>(shallowest_kc(blk))) +
          k_slice_rounding(cs.threads > 0 ? cs.threads : cs.part.tk)))
      << kn.name << " " << cs.m << "x" << cs.n << "x" << cs.k << " blocking mc=" << blk.mc << " kc=" << blk.kc
      << " nc=" << blk.nc << " a_row_major=" << cs.a_row_major << " b_row_major=" << cs.b_row_major
      << " alpha=" << cs.alpha << " beta=" << cs.beta << " c_row_major=" << cs.c_row_major
      << " prepack_b=" << cs.prepack_b << " bf16_src=" << cs.bf16_src << " partition " << cs.part.tm << "x"
      << cs.part.tn << "x" << cs.part.tk << " threads=" << cs.threads;
  for (std::int64_t i = 0; i < cs.m + 2; ++i)
    for (std::int64_t j = 0; j < cs.n + 3; ++j) {
      if (i < cs.m && j < cs.n) continue;
      const float now = c.at(i, j), was = before.at(i, j);
      ASSERT_EQ(0, std::memcmp(&now, &was, sizeof(float))) << "wrote outside C at (" << i << ", " << j << ")";
    }
}

std::vector<const GemmKernel*> usable_kernels() {
  std::vector<const GemmKernel*> out;
  for (const GemmKernel* k : ukernel::all_kernels())
    if (ukernel::usable(*k)) out.push_back(k);
  return out;
}

class Driver : public ::testing::TestWithParam<const GemmKernel*> {};

TEST_P(Driver, TinyBlockingCrossesEveryEdge) {
  const GemmKernel& kn = *GetParam();
  const std::int64_t mr = kn.mr, nr = kn.nr;
  const driver::Blocking blockings[] = {
      {1, 1, 1},                                                        // degenerate
      {5, 3, 7},                                                        // not multiples of MR/NR
      {static_cast<std::size_t>(mr), 8, static_cast<std::size_t>(nr)},  // one tile per block
      {static_cast<std::size_t>(2 * mr + 1), 17, static_cast<std::size_t>(3 * nr - 1)},
  };
  const Case cases[] = {
      {1, 1, 1, true, true, 1.0f, 0.0f},
      {mr + 1, nr + 1, 9, true, true, 1.0f, 0.0f},
      {2 * mr + 3, 2 * nr + 5, 40, false, true, -1.5f, 0.5f},
      {mr - 1 > 0 ? mr - 1 : 1, 3 * nr + 1, 33, true, false, 1.0f, 1.0f},
      {3 * mr, nr - 1 > 0 ? nr - 1 : 1, 21, false, false, 0.75f, 0.0f},
  };
  for (const auto& blk : blockings)
    for (const auto& cs : cases) {
      run_case(kn, blk, cs);
      if (HasFatalFailure()) return;
    }
}

TEST_P(Driver, PrimeShapeDefaultAndSmallBlocking) {
  const GemmKernel& kn = *GetParam();
  const driver::Blocking dflt = driver::blocking_for(kn, cpu::info());
  const driver::Blocking small{static_cast<std::size_t>(3 * kn.mr), 64, static_cast<std::size_t>(2 * kn.nr)};
  for (const auto& blk : {dflt, small})
    for (bool at : {true, false})
      for (bool bt : {true, false}) {
        run_case(kn, blk, {257, 113, 373, at, bt, 1.0f, 0.0f});
        if (HasFatalFailure()) return;
      }
}

TEST_P(Driver, MCFromTheCallsDepth) {
  // a_block_bytes resizes MC from the depth a call uses: at depth 16 the block of A holds 2 MR
  // panels, so 5 MR + 3 rows take three blocks, the last one partial; a prepacked B keeps its own
  // KC (16) and gets the same blocks.
  const GemmKernel& kn = *GetParam();
  const auto mr = static_cast<std::size_t>(kn.mr), nr = static_cast<std::size_t>(kn.nr);
  driver::Blocking blk{mr, 16, 2 * nr};
  blk.a_block_bytes = 2 * mr * 16 * kn.elem_size;
  const auto m = static_cast<std::int64_t>(5 * mr + 3), n = static_cast<std::int64_t>(3 * nr + 1);
  for (bool prepack : {false, true})
    for (bool b_row : {true, false}) {
      run_case(kn, blk, {m, n, 40, true, b_row, 1.0f, 0.0f, true, prepack});
      run_case(kn, blk, {m, n, 7, false, b_row, -0.5f, 0.25f, true, prepack});
      if (HasFatalFailure()) return;
    }
}

TEST_P(Driver, BReadInPlaceOrPacked) {
  const GemmKernel& kn = *GetParam();
  const std::int64_t mr = kn.mr, nr = kn.nr;
  using B = driver::Blocking::BInPlace;
  // kc_in_place = 8: B read in place is blocked 8 deep whatever KC says (41 = five blocks and a
  // remainder, each after the first accumulating onto C).
  driver::Blocking shallow_in_place{static_cast<std::size_t>(mr), 64, static_cast<std::size_t>(2 * nr + 3)};
  shallow_in_place.kc_in_place = 8;
  for (B mode : {B::kNever, B::kWhenPossible, B::kAuto})
    for (driver::Blocking blk :
         {driver::Blocking{5, 3, 7},
          driver::Blocking{static_cast<std::size_t>(mr), 17, static_cast<std::size_t>(2 * nr + 3)},
          shallow_in_place, driver::blocking_for(kn, cpu::info())}) {
      blk.b_in_place = mode;
      for (bool b_row : {true, false}) {  // in place needs contiguous rows of B: column-major B is packed
        run_case(kn, blk, {1, 3 * nr + 5, 41, true, b_row, 1.0f, 0.0f});
        run_case(kn, blk, {mr + 2, 2 * nr, 19, false, b_row, 0.5f, 1.0f});
        run_case(kn, blk, {2 * mr + 1, nr - 1 > 0 ? nr - 1 : 1, 30, true, b_row, 1.0f, 0.25f, false});
        if (HasFatalFailure()) return;
      }
    }
}

// Problems whose operands stay in L1 run tile by tile straight from A and B (driver::gemm_small),
// with every edge a tile can have, both C layouts, alpha and beta; where the kernel cannot read
// them in place it declines and writes nothing.
TEST_P(Driver, SmallProblemsRunStraightFromAAndB) {
  const GemmKernel& kn = *GetParam();
  if (!ukernel::usable(kn)) GTEST_SKIP() << kn.name << " is not usable here";
  const driver::Blocking blk = driver::blocking_for(kn, cpu::info());
  const std::int64_t mr = kn.mr, nr = kn.nr, cols = kn.b_partial_in_place_cols;
  const bool bf16 = kn.elem_size == sizeof(std::uint16_t);
  if (kn.run_a_in_place != nullptr && kn.enter == nullptr) {
    for (std::int64_t m : {std::int64_t{1}, mr - 1, mr + 1, 2 * mr + 3})
      for (std::int64_t n : {nr, 2 * nr, nr + (cols != 0 ? cols : nr)})
        for (std::int64_t k : {2, 8, 32})
          for (const auto& [alpha, beta] : {std::pair{1.0f, 0.0f}, {-0.5f, 1.0f}, {2.0f, 0.25f}})
            for (bool c_row : {true, false}) {
              Case cs{m, n, k, true, true, alpha, beta, c_row};
              cs.small = true, cs.bf16_src = bf16;
              run_case(kn, blk, cs);
              if (HasFatalFailure()) return;
            }
  }
  // A column-major B is not read in place: declined, C untouched.
  std::vector<float> a(4 * 8, 1.0f), b(8 * 4, 1.0f), c(16, 3.0f);
  driver::GemmProblem p;
  p.m = 4, p.n = 4, p.k = 8, p.a = a.data(), p.a_rs = 8, p.a_cs = 1;
  p.b = b.data(), p.b_rs = 1, p.b_cs = 8, p.c = c.data(), p.c_rs = 4, p.c_cs = 1;
  EXPECT_EQ(driver::gemm_small(kn, p), driver::Status::not_applicable) << kn.name;
  for (float v : c) EXPECT_EQ(v, 3.0f);
}

// A kernel that reads a partial panel of B in place (GemmKernel::b_partial_in_place_cols) reads
// only its columns: B ends right before a page the process may not touch, and the results match.
TEST_P(Driver, PartialPanelsReadInPlaceStayInsideB) {
  const GemmKernel& kn = *GetParam();
  const auto cols = static_cast<std::size_t>(kn.b_partial_in_place_cols);
  if (cols == 0) GTEST_SKIP() << kn.name << " packs every partial panel";
  if (!ukernel::usable(kn)) GTEST_SKIP() << kn.name << " is not usable here";
  driver::Blocking blk = driver::blocking_for(kn, cpu::info());
  blk.b_in_place = driver::Blocking::BInPlace::kWhenPossible;
  const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  const auto nr = static_cast<std::size_t>(kn.nr);
  for (std::size_t n = nr + cols; n < 3 * nr; n += cols) {
    if (n % nr == 0) continue;
    const std::size_t m = 5, k = 37, b_bytes = k * n * sizeof(float);
    const std::size_t span = (b_bytes + page - 1) / page * page + page;
    void* region = mmap(nullptr, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(region, MAP_FAILED);
    char* const guard = static_cast<char*>(region) + span - page;
    ASSERT_EQ(mprotect(guard, page, PROT_NONE), 0);
    float* b = reinterpret_cast<float*>(guard - b_bytes);  // B's last element ends at the guard page
    std::vector<float> a(m * k), c(m * n, 0.0f);
    for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(i % 7) - 3.0f;
    for (std::size_t i = 0; i < k * n; ++i) b[i] = static_cast<float>(i % 5) * 0.5f - 1.0f;
    driver::GemmProblem p;
    p.m = m, p.n = n, p.k = k, p.a = a.data(), p.a_rs = static_cast<std::ptrdiff_t>(k), p.a_cs = 1;
    p.b = b, p.b_rs = static_cast<std::ptrdiff_t>(n), p.b_cs = 1, p.c = c.data();
    p.c_rs = static_cast<std::ptrdiff_t>(n), p.c_cs = 1;
    ASSERT_TRUE(driver::reads_b_in_place(kn, blk, p)) << kn.name;
    ASSERT_EQ(driver::gemm(kn, blk, p), driver::Status::ok);
    const Reference r = reference_gemm(
        static_cast<std::int64_t>(m), static_cast<std::int64_t>(n), static_cast<std::int64_t>(k), 1.0f,
        [&](std::int64_t i, std::int64_t q) {
          return a[static_cast<std::size_t>(i) * k + static_cast<std::size_t>(q)];
        },
        [&](std::int64_t q, std::int64_t j) {
          return b[static_cast<std::size_t>(q) * n + static_cast<std::size_t>(j)];
        },
        0.0f, [](std::int64_t, std::int64_t) { return 0.0f; });
    EXPECT_TRUE(matches(
        r,
        [&](std::int64_t i, std::int64_t j) {
          return c[static_cast<std::size_t>(i) * n + static_cast<std::size_t>(j)];
        },
        fp32_bound_factor(static_cast<std::int64_t>(k), 0)))
        << kn.name << " n=" << n;
    munmap(region, span);
  }
}

// Blocking::a_one_block_bytes: an M of several MC blocks runs as one block of A with B read in
// place, while its rows of A fit the budget and B is in the caches; the results match either way.
TEST_P(Driver, OneBlockOfAForMediumM) {
  const GemmKernel& kn = *GetParam();
  if (kn.kr != 1) GTEST_SKIP() << kn.name << ": KR = 1 kernels only";
  const std::int64_t mr = kn.mr, nr = kn.nr;
  driver::Blocking blk{static_cast<std::size_t>(mr), 64, static_cast<std::size_t>(2 * nr + 3)};
  driver::GemmProblem p;
  p.m = static_cast<std::size_t>(5 * mr + 3), p.n = static_cast<std::size_t>(2 * nr + 5), p.k = 70;
  p.b_rs = static_cast<std::ptrdiff_t>(p.n), p.b_cs = 1, p.a_rs = static_cast<std::ptrdiff_t>(p.k),
  p.a_cs = 1;
  EXPECT_FALSE(driver::reads_b_in_place(kn, blk, p)) << kn.name << ": six MC blocks pack B";
  // The rows of A at the call's depth (two balanced K blocks): 6 MR panels x that depth.
  const std::size_t a_bytes = static_cast<std::size_t>(6 * mr) *
                              driver::balanced_depth(p.k, blk.kc, driver::depth_round(kn)) * kn.elem_size;
  blk.a_one_block_bytes = a_bytes - 1;
  EXPECT_FALSE(driver::a_one_block(kn, blk, p)) << kn.name;
  blk.a_one_block_bytes = a_bytes;
  EXPECT_TRUE(driver::a_one_block(kn, blk, p)) << kn.name;
  EXPECT_TRUE(driver::reads_b_in_place(kn, blk, p)) << kn.name;
  p.b_call_bytes = 32u << 20;  // a B from memory is packed
  EXPECT_FALSE(driver::reads_b_in_place(kn, blk, p)) << kn.name;
  for (bool b_row : {true, false})
    for (float beta : {0.0f, 0.5f}) {
      run_case(kn, blk, {5 * mr + 3, 2 * nr + 5, 70, true, b_row, 1.0f, beta});
      run_case(kn, blk, {3 * mr, nr + 1, 200, false, b_row, -0.5f, beta});
      if (HasFatalFailure()) return;
    }
}

// Blocking::b_packed_by_kernel: a row-major B of the kernel's element type, packed per call, is
// packed by the first MR panel of the first block of A that reads it (run_pack_b), for every
// micro-panel of every K and NC block; a partial last panel and the other cases by pack_b.
TEST_P(Driver, BPackedByTheKernel) {
  const GemmKernel& kn = *GetParam();
  const std::int64_t mr = kn.mr, nr = kn.nr;
  const bool bf16 = kn.elem_size == 2;
  driver::Blocking blk{static_cast<std::size_t>(mr), 64, static_cast<std::size_t>(2 * nr + 3)};
  blk.b_packed_by_kernel = true;
  driver::GemmProblem p;
  p.m = static_cast<std::size_t>(3 * mr + 2), p.n = static_cast<std::size_t>(5 * nr + 7), p.k = 150;
  p.b_rs = static_cast<std::ptrdiff_t>(p.n), p.b_cs = 1;
  p.src = bf16 ? ukernel::Elem::bf16 : ukernel::Elem::f32;
  const bool can = kn.run_pack_b != nullptr;
  EXPECT_EQ(driver::kernel_packs_b(kn, blk, p), can) << kn.name;
  if (can) {
    driver::GemmProblem q = p;
    q.b_cs = 2;  // not row-major
    EXPECT_FALSE(driver::kernel_packs_b(kn, blk, q)) << kn.name;
    q = p, q.src = bf16 ? ukernel::Elem::f32 : ukernel::Elem::bf16;  // converted while packing
    EXPECT_FALSE(driver::kernel_packs_b(kn, blk, q)) << kn.name;
    q = p, q.m = 2;  // one block of A: read in place
    EXPECT_FALSE(driver::kernel_packs_b(kn, blk, q)) << kn.name;
    driver::Blocking off = blk;
    off.b_packed_by_kernel = false;
    EXPECT_FALSE(driver::kernel_packs_b(kn, off, p)) << kn.name;
    // b_packed_by_kernel_max_kc: only calls at most that deep.
    const std::size_t call_kc = std::min(driver::call_blocking(kn, blk, p).kc, p.k);
    driver::Blocking capped = blk;
    capped.b_packed_by_kernel_max_kc = call_kc;
    EXPECT_TRUE(driver::kernel_packs_b(kn, capped, p)) << kn.name;
    capped.b_packed_by_kernel_max_kc = call_kc - 1;
    EXPECT_FALSE(driver::kernel_packs_b(kn, capped, p)) << kn.name;
  }
  for (std::int64_t k : {150, 8, 151})  // three K blocks; one; odd (KR = 2 kernels pack with pack_b)
    for (float beta : {0.0f, 0.5f}) {
      Case cs{3 * mr + 2, 5 * nr + 7, k, k % 2 == 0, true, -1.25f, beta};
      cs.bf16_src = bf16;
      run_case(kn, blk, cs);
      cs.m = 1, cs.n = nr;
      run_case(kn, blk, cs);
      if (HasFatalFailure()) return;
    }
}

// Blocking::a_in_place and reads_a_in_place: A read where it is instead of packed (the kernels that
// can), forced and by the rule, against the reference with B packed, packed by the kernel, read in
// place and prepacked, over several blocks of A and of K, and split as threads would split it.
TEST_P(Driver, AReadInPlace) {
  const GemmKernel& kn = *GetParam();
  const std::int64_t mr = kn.mr, nr = kn.nr;
  const bool bf16 = kn.elem_size == 2;
  const std::size_t elem = kn.elem_size;
  const driver::Blocking def = driver::blocking_for(kn, cpu::info());
  driver::GemmProblem p;
  p.m = static_cast<std::size_t>(4 * mr), p.n = static_cast<std::size_t>(3 * nr), p.k = 256;
  p.a_rs = 256, p.a_cs = 1;
  p.src = bf16 ? ukernel::Elem::bf16 : ukernel::Elem::f32;
  const bool can = kn.run_a_in_place != nullptr;
  EXPECT_EQ(driver::reads_a_in_place(kn, def, p, 512), can) << kn.name;  // rows back to back
  if (can) {
    driver::GemmProblem q = p;
    q.a_rs = 1, q.a_cs = 256;  // column-major
    EXPECT_FALSE(driver::reads_a_in_place(kn, def, q, 512)) << kn.name;
    q = p, q.src = bf16 ? ukernel::Elem::f32 : ukernel::Elem::bf16;  // converted while packing
    EXPECT_FALSE(driver::reads_a_in_place(kn, def, q, 512)) << kn.name;
    q = p, q.k = q.a_rs = 4096 / elem;  // back to back, but every row in the same L1 set
    EXPECT_FALSE(driver::reads_a_in_place(kn, def, q, 4096)) << kn.name;
    q = p, q.k = q.a_rs = 600;  // rows cut into two K blocks: only few rows are read in place
    EXPECT_FALSE(driver::reads_a_in_place(kn, def, q, 512)) << kn.name;
    q.m = static_cast<std::size_t>(2 * mr);
    EXPECT_TRUE(driver::reads_a_in_place(kn, def, q, 512)) << kn.name;
    q = p, q.k = 255, q.a_rs = 255;
    EXPECT_EQ(driver::reads_a_in_place(kn, def, q, 512), kn.kr == 1) << kn.name;  // half a pair
    driver::Blocking off = def;
    off.a_in_place = driver::Blocking::AInPlace::kNever;
    EXPECT_FALSE(driver::reads_a_in_place(kn, off, p, 512)) << kn.name;
  }
  driver::Blocking blk{static_cast<std::size_t>(mr), 64, static_cast<std::size_t>(2 * nr + 3)};
  blk.a_in_place = driver::Blocking::AInPlace::kWhenPossible;
  blk.b_packed_by_kernel = true;
  for (std::int64_t k : {150, 8, 151})
    for (float beta : {0.0f, 0.5f}) {
      Case cs{3 * mr + 2, 5 * nr + 7, k, true, true, -1.25f, beta};
      cs.bf16_src = bf16;
      run_case(kn, blk, cs);  // B packed by the kernel (or pack_b)
      cs.m = 1, cs.n = nr;
      run_case(kn, blk, cs);  // B read in place
      cs.m = 3 * mr + 2, cs.n = 5 * nr + 7, cs.b_row_major = false;
      run_case(kn, blk, cs);  // B packed by pack_b
      cs.prepack_b = true;
      run_case(kn, blk, cs);
      cs.part = {2, 2, 1};
      run_case(kn, blk, cs);
      if (HasFatalFailure()) return;
    }
  for (std::int64_t m : {std::int64_t{1}, 2 * mr + 1, 9 * mr})  // the default blocking and rule
    run_case(kn, def, Case{m, 2 * nr + 5, 64, true, true, 1.0f, 0.0f, true, false, {}, 0, bf16});
}

// Blocking::kc_one_pass_b_columns / nc_one_pass_b_columns: a B with contiguous columns packed in one
// pass over M takes them (KR = 1 kernels; the others have none), a row-major B does not; and a
// problem crossing those blocks (two K blocks, three column blocks) against the reference.
TEST_P(Driver, TransposedBInOnePass) {
  const GemmKernel& kn = *GetParam();
  const driver::Blocking def = driver::blocking_for(kn, cpu::info());
  if (kn.kr != 1) {
    EXPECT_EQ(def.kc_one_pass_b_columns, 0u) << kn.name;
    return;
  }
  ASSERT_NE(def.kc_one_pass_b_columns, 0u) << kn.name;
  const auto mr = static_cast<std::size_t>(kn.mr);
  driver::GemmProblem p;
  p.m = 2 * mr, p.n = 2 * def.nc_one_pass_b_columns + 5, p.k = def.kc_one_pass_b_columns + 40;
  p.a_rs = static_cast<std::ptrdiff_t>(p.k), p.a_cs = 1, p.b_rs = 1,
  p.b_cs = static_cast<std::ptrdiff_t>(p.k);
  p.c_rs = static_cast<std::ptrdiff_t>(p.n);
  const driver::Blocking b = driver::call_blocking(kn, def, p);
  EXPECT_EQ(b.kc, driver::balanced_depth(p.k, def.kc_one_pass_b_columns, driver::depth_round(kn))) << kn.name;
  EXPECT_EQ(b.nc, def.nc_one_pass_b_columns) << kn.name;
  driver::GemmProblem q = p;
  q.b_rs = static_cast<std::ptrdiff_t>(p.n), q.b_cs = 1;
  EXPECT_NE(driver::call_blocking(kn, def, q).nc, def.nc_one_pass_b_columns) << kn.name;
  run_case(kn, def,
           Case{static_cast<std::int64_t>(p.m) + 3, static_cast<std::int64_t>(p.n),
                static_cast<std::int64_t>(p.k), true, false, 0.75f, 0.5f});
}

// Blocking::kc_slice: K blocks deeper than kc_slice and at most twice that, with packed A and B and
// enough rows, run in two slices, the block of A capped at mc_sliced rows; the rest as before.
TEST_P(Driver, KBlocksInTwoSlices) {
  const GemmKernel& kn = *GetParam();
  const auto mr = static_cast<std::size_t>(kn.mr), nr = static_cast<std::size_t>(kn.nr);
  const std::size_t s = driver::depth_round(kn);  // the slice depth: a multiple of KR
  driver::Blocking blk{4 * mr, 2 * s, 2 * nr + 3};
  blk.kc_slice = s, blk.kc_slice_min_rows = 2 * mr, blk.mc_sliced = 2 * mr + 1;
  blk.a_in_place = driver::Blocking::AInPlace::kNever;
  blk.b_in_place = driver::Blocking::BInPlace::kNever;
  const bool bf16 = kn.elem_size == 2;
  driver::GemmProblem p;
  p.m = 5 * mr + 3, p.n = 3 * nr + 1, p.k = 5 * s + 3;  // blocks of 2s, 2s and s + 3 (balanced: 2s each)
  p.a_rs = static_cast<std::ptrdiff_t>(p.k), p.a_cs = 1, p.b_rs = 1,
  p.b_cs = static_cast<std::ptrdiff_t>(p.k);
  p.c_rs = static_cast<std::ptrdiff_t>(p.n);
  p.src = bf16 ? ukernel::Elem::bf16 : ukernel::Elem::f32;
  const driver::Blocking sliced = driver::call_blocking(kn, blk, p);
  EXPECT_EQ(sliced.kc_slice, s) << kn.name;
  EXPECT_EQ(sliced.mc, 2 * mr) << kn.name;  // mc_sliced rounded down to MR
  driver::GemmProblem q = p;
  q.m = 2 * mr - 1;  // too few rows
  EXPECT_EQ(driver::call_blocking(kn, blk, q).kc_slice, 0u) << kn.name;
  q = p, q.c_rs = 1024;  // rows of C a page apart
  EXPECT_EQ(driver::call_blocking(kn, blk, q).kc_slice, 0u) << kn.name;
  q = p, q.k = s;  // one block of s: nothing to slice
  EXPECT_EQ(driver::call_blocking(kn, blk, q).kc_slice, 0u) << kn.name;
  driver::Blocking deep = blk;
  deep.kc = 3 * s;  // blocks of 3s: more than two slices' worth
  EXPECT_EQ(driver::call_blocking(kn, deep, p).kc_slice, 0u) << kn.name;
  EXPECT_EQ(driver::call_blocking(kn, deep, p).mc, 4 * mr) << kn.name;
  const auto m = static_cast<std::int64_t>(p.m), n = static_cast<std::int64_t>(p.n),
             k = static_cast<std::int64_t>(p.k);
  for (bool prepack : {false, true})
    for (float beta : {0.0f, 0.5f}) {
      run_case(kn, blk, Case{m, n, k, true, false, -1.25f, beta, true, prepack, {}, 0, bf16});
      run_case(kn, blk, Case{m, n, k, false, false, 1.0f, beta, false, prepack, {}, 0, bf16});
      run_case(kn, blk,
               Case{m,
                    n,
                    2 * static_cast<std::int64_t>(s) - 1,
                    true,
                    false,
                    1.0f,
                    beta,
                    true,
                    prepack,
                    {},
                    0,
                    bf16});  // one block, its second slice partial
      if (HasFatalFailure()) return;
    }
}

// Blocking::kc_in_place_cached_b: the shallow K blocks of B read in place for every B (KR = 1), or
// only for a B from memory; kc_in_place_min_b_bytes: never for a B that small.
TEST_P(Driver, ShallowInPlaceBlocksForWhichB) {
  const GemmKernel& kn = *GetParam();
  driver::Blocking blk{static_cast<std::size_t>(kn.mr), 64, static_cast<std::size_t>(2 * kn.nr)};
  blk.kc_in_place = 16;
  driver::GemmProblem p;
  p.m = static_cast<std::size_t>(kn.mr), p.n = static_cast<std::size_t>(2 * kn.nr), p.k = 100;
  p.b_rs = static_cast<std::ptrdiff_t>(p.n), p.b_cs = 1;
  EXPECT_EQ(driver::reads_b_in_place_shallow(kn, blk, p), kn.kr == 1) << kn.name;
  const std::size_t b_bytes = p.k * p.n * sizeof(float);
  driver::Blocking small_b = blk;
  small_b.kc_in_place_min_b_bytes = b_bytes;
  EXPECT_FALSE(driver::reads_b_in_place_shallow(kn, small_b, p)) << kn.name;
  small_b.kc_in_place_min_b_bytes = b_bytes - 1;
  EXPECT_EQ(driver::reads_b_in_place_shallow(kn, small_b, p), kn.kr == 1) << kn.name;
  blk.kc_in_place_cached_b = false;
  EXPECT_FALSE(driver::reads_b_in_place_shallow(kn, blk, p)) << kn.name;
  p.b_call_bytes = 32u << 20;
  EXPECT_TRUE(driver::reads_b_in_place_shallow(kn, blk, p)) << kn.name;
  blk.kc_in_place = 0;
  EXPECT_FALSE(driver::reads_b_in_place_shallow(kn, blk, p)) << kn.name;
}

TEST_P(Driver, ColumnMajorCAndPrepackedB) {
  const GemmKernel& kn = *GetParam();
  const std::int64_t mr = kn.mr, nr = kn.nr;
  const driver::Blocking blockings[] = {
      {5, 3, 7},
      {static_cast<std::size_t>(2 * mr + 1), 17, static_cast<std::size_t>(3 * nr - 1)},
      driver::blocking_for(kn, cpu::info()),
  };
  for (const auto& blk : blockings)
    for (bool c_row : {true, false})
      for (bool prepack : {false, true})
        for (bool b_row : {true, false}) {
          run_case(kn, blk, {2 * mr + 3, 2 * nr + 5, 40, true, b_row, -1.5f, 0.5f, c_row, prepack});
          run_case(kn, blk, {1, 3 * nr + 1, 33, false, b_row, 1.0f, 0.0f, c_row, prepack});
          if (HasFatalFailure()) return;
        }
}

TEST_P(Driver, PackedLayoutOffsetsTileTheBuffer) {
  // Blocks in jc-major, pc-minor order, each exactly as large as pack_b writes: consecutive
  // offsets differ by the block sizes and the last one ends at bytes().
  const GemmKernel& kn = *GetParam();
  const auto round_up = [](std::size_t v, std::size_t to) { return (v + to - 1) / to * to; };
  for (const driver::PackedBLayout l :
       {driver::PackedBLayout{&kn, 100, 70, 32, 2 * static_cast<std::size_t>(kn.nr)},
        driver::PackedBLayout{&kn, 64, 13, 64, 5}}) {
    std::size_t expect = 0;
    for (std::size_t jc = 0; jc < l.n; jc += l.nc)
      for (std::size_t pc = 0; pc < l.k; pc += l.kc) {
        EXPECT_EQ(l.offset(jc, pc), expect) << "block (" << jc << ", " << pc << ")";
        expect += round_up(std::min(l.nc, l.n - jc), static_cast<std::size_t>(kn.nr)) *
                  round_up(std::min(l.kc, l.k - pc), static_cast<std::size_t>(kn.kr)) * kn.elem_size;
      }
    EXPECT_EQ(l.bytes(), expect);
  }
}

// Every way of splitting a problem over threads, with edges inside tiles, blocks and packed panels.
TEST_P(Driver, EveryPartitionMatchesTheReference) {
  const GemmKernel& kn = *GetParam();
  const std::int64_t mr = kn.mr, nr = kn.nr;
  const driver::Blocking blk{static_cast<std::size_t>(2 * mr + 1), 24, static_cast<std::size_t>(2 * nr + 3)};
  for (int tm = 1; tm <= 3; ++tm)
    for (int tn = 1; tn <= 3; ++tn)
      for (int tk = 1; tk <= 3; ++tk)
        for (bool prepack : {false, true}) {
          if (prepack && tk > 1) continue;  // a prepacked B is never split along K (see below)
          Case cs{3 * mr + 2, 4 * nr + 1, 150, true, !prepack, -1.5f, tk > 1 ? 0.5f : 0.0f};
          cs.prepack_b = prepack, cs.part = {tm, tn, tk};
          run_case(kn, blk, cs);
          // Split along one axis with a bigger or smaller first part (4, 5 and 3 units along M, N, K;
          // a lead past the end leaves the other parts empty).
          if ((tm > 1) + (tn > 1) + (tk > 1) == 1)
            for (std::size_t lead : {1, 3, 9}) {
              cs.part.lead = lead;
              run_case(kn, blk, cs);
            }
          // Fewer rows or columns than parts: some parts are empty.
          Case thin{1, 2, 130, false, true, 1.0f, 1.0f};
          thin.prepack_b = prepack, thin.part = {tm, tn, tk};
          run_case(kn, blk, thin);
          if (HasFatalFailure()) return;
        }
}

TEST_P(Driver, PrepackedBIsNotSplitAlongK) {
  const GemmKernel& kn = *GetParam();
  const driver::Blocking blk = driver::blocking_for(kn, cpu::info());
  std::vector<float> a(4 * 600, 1.0f), b(600 * 4, 1.0f), c(16, 3.0f);
  driver::PackedBLayout layout{&kn, 600, 4, blk.kc, blk.nc};
  std::vector<char> packed(layout.bytes());
  driver::pack_b_whole(layout, ukernel::Elem::f32, b.data(), 4, 1, packed.data());
  driver::GemmProblem p;
  p.m = 4, p.n = 4, p.k = 600, p.a = a.data(), p.a_rs = 600, p.a_cs = 1;
  p.b_packed = packed.data(), p.b_layout = &layout, p.c = c.data(), p.c_rs = 4, p.c_cs = 1;
  EXPECT_EQ(driver::plan_gemm(kn, blk, p, 8, {}).tk, 1);
  EXPECT_EQ(driver::gemm_partitioned(kn, blk, p, {1, 1, 2}), driver::Status::not_applicable);
  for (float v : c) EXPECT_EQ(v, 3.0f);
}

// Through the pool: more threads than this machine has CPUs are fine for correctness.
TEST_P(Driver, ThreadedMatchesTheReference) {
  const GemmKernel& kn = *GetParam();
  const driver::Blocking dflt = driver::blocking_for(kn, cpu::info());
  for (int threads : {2, 3})
    for (bool prepack : {false, true}) {
      Case big{300, 260, 200, true, true, 1.0f, 0.0f};
      big.prepack_b = prepack, big.threads = threads;
      run_case(kn, dflt, big);
      Case deep{3, 5, 3000, false, true, 0.5f, 2.0f};  // C too small to share: K slices
      deep.prepack_b = prepack, deep.threads = threads;
      run_case(kn, dflt, deep);
      if (HasFatalFailure()) return;
    }
}

TEST_P(Driver, PlansUseThreadsOnlyWhereTheyPay) {
  const GemmKernel& kn = *GetParam();
  const driver::Blocking blk = driver::blocking_for(kn, cpu::info());
  driver::GemmProblem p;
  p.alpha = 1.0f, p.b_rs = 1, p.b_cs = 1;
  const auto plan = [&](std::size_t m, std::size_t n, std::size_t k, int threads,
                        threading::TeamStart start = {}) {
    p.m = m, p.n = n, p.k = k;
    return driver::plan_gemm(kn, blk, p, threads, start);
  };
  EXPECT_EQ(plan(1024, 1024, 1024, 1).threads(), 1);
  EXPECT_EQ(plan(1024, 1024, 1024, 2).threads(), 2);
  EXPECT_EQ(plan(1024, 1024, 1024, 4).threads(), 4);
  EXPECT_EQ(plan(8, 3072, 768, 2).tn, 2);    // skinny: split the columns
  EXPECT_EQ(plan(4096, 8, 768, 2).tm, 2);    // tall: split the rows
  EXPECT_EQ(plan(4, 4, 100000, 2).tk, 2);    // tiny C, deep K: split K
  EXPECT_EQ(plan(8, 8, 8, 2).threads(), 1);  // too small to pay for a second thread
  // B read in place in shallow K blocks (the Intel blocking, forced here) with rows of 768 floats:
  // splitting N would give each part 1.5 KiB pieces of every row, so K is split instead (a kernel
  // of another element type packs B: N is split).
  driver::Blocking shallow = blk;
  shallow.kc_in_place = 32, shallow.kc_in_place_cached_b = true, shallow.b_in_place_max_panels = 4;
  p.b_rs = 768;
  p.m = 8, p.n = 768, p.k = 3072;
  const bool in_place = driver::reads_b_in_place(kn, shallow, p);
  EXPECT_EQ(in_place, kn.kr <= 2 && kn.elem_size == sizeof(float)) << kn.name;
  const driver::Partition narrow = driver::plan_gemm(kn, shallow, p, 2, {});
  EXPECT_EQ(narrow.tk, in_place ? 2 : 1) << kn.name;
  EXPECT_EQ(narrow.tn, in_place ? 1 : 2) << kn.name;
  p.b_rs = 3072;
  p.m = 8, p.n = 3072, p.k = 768;
  EXPECT_EQ(driver::plan_gemm(kn, shallow, p, 2, {}).tn, 2);  // 6 KiB pieces: the columns are split
  // A prepacked B of 3072 x 768: halves of M would each stream all of it, halves of N half of it.
  driver::PackedBLayout layout{&kn, 768, 3072, blk.kc, blk.nc};
  driver::GemmProblem packed = p;
  packed.m = 4 * static_cast<std::size_t>(kn.mr), packed.n = 3072, packed.k = 768;
  packed.b_packed = &layout, packed.b_layout = &layout;  // never read by the planner
  EXPECT_EQ(driver::plan_gemm(kn, blk, packed, 2, {}).tn, 2) << kn.name;
  p.b_rs = 1;
  p.alpha = 0.0f;
  EXPECT_EQ(plan(1024, 1024, 1024, 2).threads(), 1);  // only scales C
}

// Workers that slept start late (the figures are threading::team_start's first guess, as measured in
// a VM): a call a few times that delay gives the caller's part more of the work, so that both end
// together; one shorter than the delay runs on one thread. Polling workers get even parts.
TEST_P(Driver, ColdTeamsGiveTheCallerMore) {
  const GemmKernel& kn = *GetParam();
  const driver::Blocking blk = driver::blocking_for(kn, cpu::info());
  const threading::TeamStart cold{40, 100};
  driver::GemmProblem p;
  p.alpha = 1.0f, p.b_rs = 1, p.b_cs = 1;
  // About 280 us on one thread by the planner's rates (5x more multiply-adds a microsecond in bf16).
  p.m = kn.elem_size == 2 ? 1280 : 256, p.n = p.k = 256;
  const driver::Partition late = driver::plan_gemm(kn, blk, p, 2, cold);
  EXPECT_EQ(late.threads(), 2) << kn.name;
  EXPECT_NE(late.lead, 0u) << kn.name;
  const driver::Partition polling = driver::plan_gemm(kn, blk, p, 2, {});
  EXPECT_EQ(polling.threads(), 2) << kn.name;
  EXPECT_EQ(polling.lead, 0u) << kn.name;
  p.m = 16;  // ~20 us: not worth waking anyone
  EXPECT_EQ(driver::plan_gemm(kn, blk, p, 2, cold).threads(), 1) << kn.name;
  EXPECT_EQ(driver::plan_gemm(kn, blk, p, 2, {}).threads(), 2) << kn.name;
}

// A part that reads its rows of A in place pays nothing for them, so parts that split N share A for
// free. 2h MR panels (in one MC block) by 2 NR panels, B packed, split either way: the products
// are the same, halves of N pack half of B each, and halves of M pack half of A each.
TEST_P(Driver, PlansShareAnAReadInPlace) {
  const GemmKernel& kn = *GetParam();
  driver::Blocking blk = driver::blocking_for(kn, cpu::info());
  blk.b_in_place = driver::Blocking::BInPlace::kNever;
  const auto mr = static_cast<std::size_t>(kn.mr), nr = static_cast<std::size_t>(kn.nr);
  const std::size_t h = blk.mc / (2 * mr);
  ASSERT_GE(h, 1u) << kn.name;
  driver::GemmProblem p;
  p.alpha = 1.0f, p.b_cs = 1, p.a_cs = 1;
  p.src = kn.elem_size == 2 ? ukernel::Elem::bf16 : ukernel::Elem::f32;
  p.m = 2 * h * mr, p.n = 2 * nr, p.k = 4096;  // deep enough that threads pay
  p.a_rs = static_cast<std::ptrdiff_t>(p.k), p.b_rs = static_cast<std::ptrdiff_t>(p.n);
  blk.a_in_place = driver::Blocking::AInPlace::kNever;
  EXPECT_EQ(driver::plan_gemm(kn, blk, p, 2, {}).tm, 2) << kn.name;  // A outweighs half of B
  blk.a_in_place = driver::Blocking::AInPlace::kWhenPossible;
  const bool in_place = driver::reads_a_in_place(kn, blk, p, blk.kc);
  EXPECT_EQ(in_place, kn.run_a_in_place != nullptr) << kn.name;
  const driver::Partition shared = driver::plan_gemm(kn, blk, p, 2, {});
  EXPECT_EQ(shared.tn, in_place ? 2 : 1) << kn.name;
  EXPECT_EQ(shared.tm, in_place ? 1 : 2) << kn.name;
}

// Parts that cut C's lines into pieces shorter than a page write into the same pages and pay for it
// (kSharedPageUs in parallel.cpp). 384 x 384 x 384 with A and B packed and one MC block: halves of
// N pack all of A and half of B, halves of M the other way round, and halves of N read half as
// much packed B, so without C they would win. With a row-major C they cut its rows into 1.5 KiB
// pieces and halves of M win; with a column-major C halves of M cut its columns, and N is split.
TEST_P(Driver, PlansKeepPartsOutOfEachOthersPagesOfC) {
  const GemmKernel& kn = *GetParam();
  driver::Blocking blk = driver::blocking_for(kn, cpu::info());
  blk.b_in_place = driver::Blocking::BInPlace::kNever;
  blk.a_in_place = driver::Blocking::AInPlace::kNever;
  constexpr std::size_t kL = 384;  // a multiple of 2 MR and 2 NR of every kernel
  ASSERT_EQ(kL % (2 * static_cast<std::size_t>(kn.mr)), 0u) << kn.name;
  ASSERT_EQ(kL % (2 * static_cast<std::size_t>(kn.nr)), 0u) << kn.name;
  blk.mc = kL;
  driver::GemmProblem p;
  p.alpha = 1.0f, p.a_cs = 1, p.b_cs = 1;
  p.src = kn.elem_size == 2 ? ukernel::Elem::bf16 : ukernel::Elem::f32;
  p.m = p.n = p.k = kL;
  p.a_rs = p.b_rs = static_cast<std::ptrdiff_t>(kL);
  p.c_rs = static_cast<std::ptrdiff_t>(kL), p.c_cs = 1;
  const driver::Partition rows = driver::plan_gemm(kn, blk, p, 2, {});
  EXPECT_EQ(rows.tm, 2) << kn.name;
  EXPECT_EQ(rows.tn, 1) << kn.name;
  p.c_rs = 1, p.c_cs = static_cast<std::ptrdiff_t>(kL);
  const driver::Partition cols = driver::plan_gemm(kn, blk, p, 2, {});
  EXPECT_EQ(cols.tm, 1) << kn.name;
  EXPECT_EQ(cols.tn, 2) << kn.name;
}

// A B too big for the caches streams from memory for the whole call, whichever part of it a thread
// reads: a KR = 2 kernel then reads B in place only for a few MR panels, judged by the call's B, and
// the planner does not give each of several row parts all of such a B to fetch.
TEST_P(Driver, PartsOfACallShareItsB) {
  const GemmKernel& kn = *GetParam();
  driver::Blocking blk = driver::blocking_for(kn, cpu::info());
  blk.b_from_memory_max_panels = 4;
  driver::GemmProblem p;
  p.alpha = 1.0f, p.b_cs = 1;
  p.src = kn.elem_size == 2 ? ukernel::Elem::bf16 : ukernel::Elem::f32;
  p.m = 8 * static_cast<std::size_t>(kn.mr), p.k = 4096, p.n = (16u << 20) / (p.k * kn.elem_size);
  p.b_rs = static_cast<std::ptrdiff_t>(2 * p.n);  // the left half of a B of twice the bytes
  if (p.m > blk.mc) GTEST_SKIP() << kn.name << ": 8 MR panels are more than one MC block";
  EXPECT_FALSE(driver::b_from_memory(p));
  const bool alone = driver::reads_b_in_place(kn, blk, p);
  if (kn.kr == 2) {
    EXPECT_TRUE(alone) << kn.name;
  }
  p.b_call_bytes = 2 * p.k * p.n * kn.elem_size;
  EXPECT_TRUE(driver::b_from_memory(p));
  // KR = 2: four MR panels at most; KR = 1 does not ask B's size.
  EXPECT_EQ(driver::reads_b_in_place(kn, blk, p), kn.kr == 2 ? false : alone) << kn.name;
  blk.b_from_memory_max_panels = 8;  // Blocking::b_from_memory_max_panels: eight are allowed
  EXPECT_EQ(driver::reads_b_in_place(kn, blk, p), alone) << kn.name;
  blk.b_from_memory_max_panels = 0;  // all of one MC block
  EXPECT_EQ(driver::reads_b_in_place(kn, blk, p), alone) << kn.name;
  blk.b_from_memory_max_panels = 4;
  p.b_call_bytes = 0, p.n *= 2;
  EXPECT_EQ(driver::plan_gemm(kn, blk, p, 2, {}).tm, 1) << kn.name;
}

TEST_P(Driver, DefaultBlockingIsSane) {
  const GemmKernel& kn = *GetParam();
  const driver::Blocking b = driver::blocking_for(kn, cpu::info());
  EXPECT_GT(b.kc, 0u);
  EXPECT_EQ(b.mc % static_cast<std::size_t>(kn.mr), 0u);
  EXPECT_EQ(b.nc % static_cast<std::size_t>(kn.nr), 0u);
  EXPECT_EQ(b.kc % static_cast<std::size_t>(kn.kr), 0u);
  // The model of docs/blocking.md: the packed A block (MC x KC) and the B micro-panel (KC x NR)
  // share L2, the micro-panel at most a quarter of it; KC never drops below 64 (the accuracy bound
  // in docs/numerics.md relies on it).
  const std::size_t l2 = cpu::info().caches.l2;
  const std::size_t b_panel = b.kc * static_cast<std::size_t>(kn.nr) * kn.elem_size;
  EXPECT_LE(b.mc * b.kc * kn.elem_size + b_panel, l2);
  EXPECT_LE(b_panel, l2 / 4);
  EXPECT_GE(b.kc, 64u);
}

TEST(Blocking, BalancedDepthKeepsTheBlockCountAndEvensThem) {
  for (std::size_t round : {1u, 2u, 8u})
    for (std::size_t kc : {1u, 3u, 8u, 64u, 336u, 2048u})
      for (std::size_t k = 1; k <= 5000; k += k < 100 ? 1 : 37) {
        const std::size_t d = driver::balanced_depth(k, kc, round);
        ASSERT_LE(d, kc) << k << " " << kc << " " << round;
        ASSERT_EQ((k + d - 1) / d, (k + kc - 1) / kc) << k << " " << kc << " " << round;
        // Either kc itself or a multiple of round whose last block falls short of the others by
        // less than blocks * round: no shallow remainder.
        if (d != kc) {
          ASSERT_EQ(d % round, 0u) << k << " " << kc << " " << round;
          const std::size_t blocks = (k + d - 1) / d, last = k - (blocks - 1) * d;
          ASSERT_GT(last + blocks * round, d) << k << " " << kc << " " << round;
        }
      }
  EXPECT_EQ(driver::balanced_depth(3072, 2048, 8), 1536u);
  EXPECT_EQ(driver::balanced_depth(768, 2048, 8), 2048u);
  EXPECT_EQ(driver::balanced_depth(2100, 2048, 8), 1056u);
}

TEST_P(Driver, ZeroDepthAndZeroAlphaOnlyScaleC) {
  const GemmKernel& kn = *GetParam();
  const driver::Blocking blk = driver::blocking_for(kn, cpu::info());
  for (float beta : {0.0f, 2.0f}) {
    for (std::size_t k : {std::size_t{0}, std::size_t{5}}) {
      std::vector<float> a(3 * 5, std::numeric_limits<float>::quiet_NaN()), b(5 * 4, 1.0f);
      std::vector<float> c(3 * 4, 3.0f);
      driver::GemmProblem p;
      p.m = 3, p.n = 4, p.k = k, p.alpha = 0.0f, p.beta = beta;
      if (k == 0) p.alpha = 1.0f;
      p.a = a.data(), p.a_rs = 5, p.a_cs = 1, p.b = b.data(), p.b_rs = 4, p.b_cs = 1;
      p.c = c.data(), p.c_rs = 4, p.c_cs = 1;
      ASSERT_EQ(driver::gemm(kn, blk, p), driver::Status::ok);
      for (float v : c) EXPECT_EQ(v, 3.0f * beta) << "k=" << k << " beta=" << beta;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Registry, Driver, ::testing::ValuesIn(usable_kernels()),
                         [](const ::testing::TestParamInfo<const GemmKernel*>& info) {
                           return std::string(info.param->name);
                         });

// The matrix-vector path: m == 1 or n == 1 with every operand layout, strided C, prepacked B.
class DriverGemv : public ::testing::TestWithParam<const ukernel::GemvKernel*> {};

// pack_kernel: the kernel whose layout a prepacked B takes (nullptr: the fp32 family's). A bf16
// layout rounds A and B to bf16 (fast math), and the reference then takes the rounded values.
void run_gemv_case(const ukernel::GemvKernel& gk, std::int64_t m, std::int64_t n, std::int64_t k, bool a_row,
                   bool b_row, bool c_row, float alpha, float beta, bool prepack, driver::Partition part = {},
                   const GemmKernel* pack_kernel = nullptr) {
  const auto seed = static_cast<std::uint32_t>(m * 31 + n * 7 + k);
  const Strided a = make_matrix(m, k, a_row, 2, seed), b = make_matrix(k, n, b_row, 3, seed + 1);
  Strided c = make_matrix(m + 1, n + 2, c_row, 0, seed + 2);
  fill_nan_if_beta_zero(c, m, n, beta);
  const Strided before = c;
  driver::GemmProblem p;
  p.m = static_cast<std::size_t>(m), p.n = static_cast<std::size_t>(n), p.k = static_cast<std::size_t>(k);
  p.alpha = alpha, p.beta = beta;
  p.a = a.data.data(), p.a_rs = a.rs, p.a_cs = a.cs;
  p.c = c.data.data(), p.c_rs = c.rs, p.c_cs = c.cs;
  const ukernel::GemmKernel& kn =
      pack_kernel != nullptr ? *pack_kernel : *ukernel::choose(ukernel::Family::gemm_f32_f32p_f32p);
  const auto kr = static_cast<std::size_t>(kn.kr);
  const driver::Blocking blk{5, (13 + kr - 1) / kr * kr, 2 * static_cast<std::size_t>(kn.nr) + 1};
  driver::PackedBLayout layout{&kn, p.k, p.n, blk.kc, blk.nc};
  std::vector<char> packed;
  if (prepack) {
    packed.resize(layout.bytes());
    driver::pack_b_whole(layout, ukernel::Elem::f32, b.data.data(), b.rs, b.cs, packed.data());
    p.b_packed = packed.data(), p.b_layout = &layout;
  } else {
    p.b = b.data.data(), p.b_rs = b.rs, p.b_cs = b.cs;
  }
  const driver::Status st = part.threads() == 1 ? driver::gemv(gk, p) : driver::gemv_partitioned(gk, p, part);
  // Strided X (neither stride 1) is not for the GEMV path; everything else must be taken. More
  // rows and columns only as dots: rows of A against a B with contiguous columns, or columns of B
  // against an A with contiguous rows, few of them, not prepacked (the case runs fp32 only).
  const bool dots = m >= 2 && n >= 2;
  const bool x_unit =
      dots     ? !prepack && ((b.rs == 1 && static_cast<std::size_t>(m) <= driver::kDotsMaxRows) ||
                          (a.cs == 1 && static_cast<std::size_t>(n) <= driver::kDotsMaxColumns))
      : m == 1 ? (prepack || b.cs == 1 || b.rs == 1 || n == 1)
               : (a.rs == 1 || a.cs == 1 || m == 1);
  if (!x_unit || (prepack && m != 1)) {
    ASSERT_EQ(st, driver::Status::not_applicable);
    return;
  }
  ASSERT_EQ(st, driver::Status::ok);
  const bool rounded = prepack && kn.elem_size == 2;
  const auto in = [rounded](float f) { return rounded ? ukernel::bf16_to_f32(ukernel::f32_to_bf16(f)) : f; };
  const Reference r = reference_gemm(
      m, n, k, alpha, [&](std::int64_t i, std::int64_t q) { return in(a.at(i, q)); },
      [&](std::int64_t q, std::int64_t j) { return in(b.at(q, j)); }, beta,
      [&](std::int64_t i, std::int64_t j) { return before.at(i, j); });
  ASSERT_TRUE(matches(
      r, [&](std::int64_t i, std::int64_t j) { return c.at(i, j); }, fp32_bound_factor(k, 1)))
      << gk.name << " " << m << "x" << n << "x" << k << " a_row=" << a_row << " b_row=" << b_row
      << " c_row=" << c_row << " prepack=" << prepack << " partition " << part.tm << "x" << part.tn << "x"
      << part.tk;
  for (std::int64_t i = 0; i < m + 1; ++i)
    for (std::int64_t j = 0; j < n + 2; ++j) {
      if (i < m && j < n) continue;
      const float now = c.at(i, j), was = before.at(i, j);
      ASSERT_EQ(0, std::memcmp(&now, &was, sizeof(float))) << "wrote outside C at (" << i << ", " << j << ")";
    }
}

// The axpy sweep: acc and eight (else four) rows in L1 when they fit, else, on one thread, blocks
// whose acc and four rows do, from a cache that reads fast; whole rows, eight at a time, from
// memory.
TEST(GemvSweep, KeepsAccInL1OnlyForAnXInAFastCache) {
  const cpu::CacheSizes zen4{32u << 10, 1u << 20, 32u << 20, "test"};
  const std::size_t mib = 1u << 20;
  const auto expect = [&](std::size_t len, std::size_t elem, std::size_t x_bytes, std::size_t block,
                          std::size_t rows) {
    const driver::GemvSweep s = driver::gemv_sweep(len, elem, x_bytes, 1, zen4);
    EXPECT_EQ(s.block, block) << "len " << len << " elem " << elem << " x " << x_bytes;
    EXPECT_EQ(s.rows, rows) << "len " << len << " elem " << elem << " x " << x_bytes;
  };
  expect(768, 4, 768 * 768 * 4, 768, 8);      // acc + 8 rows: 27 KiB of L1
  expect(1024, 4, 1024 * 1024 * 4, 1024, 4);  // 36 KiB would not fit: 20 KiB
  expect(3072, 4, 3072 * 768 * 4, 1024, 4);   // 9 MiB: blocks of a page
  expect(3072, 4, 3072 * 1024 * 4, 3072, 8);  // 12 MiB: more than a third of L3
  expect(4096, 4, 64 * mib, 4096, 8);         // from DRAM
  expect(5000, 2, 5000 * 100 * 2, 2048, 4);   // bf16: a page is 2048 elements
  expect(100, 4, 100 * 4, 100, 8);
  // Two threads reading the cache at once: whole rows.
  EXPECT_EQ(driver::gemv_sweep(1536, 4, 3072 * 768 * 4, 2, zen4).block, 1536u);
  EXPECT_EQ(driver::gemv_sweep(1536, 4, 3072 * 768 * 4, 2, zen4).rows, 4u);
  // A huge reported L3 (a VM's host) still counts only 16 MiB as fast.
  const cpu::CacheSizes big_l3{48u << 10, 2u << 20, 480u << 20, "test"};
  EXPECT_EQ(driver::gemv_sweep(4096, 4, 20 * mib, 1, big_l3).rows, 8u);
  EXPECT_EQ(driver::gemv_sweep(4096, 4, 12 * mib, 1, big_l3).rows, 4u);
}

// Vectors, and the dots: few rows of A against a B with contiguous columns, few columns of B
// against an A with contiguous rows, every other layout of those shapes (and a prepacked B)
// refused; tiles of 1-8 rows and the rows left over, the limits (64 rows, 8 columns) and one past
// them.
TEST_P(DriverGemv, EveryLayout) {
  if (!ukernel::usable(*GetParam())) GTEST_SKIP() << GetParam()->name << " is not usable here";
  // 1 x 300 x 21: eight rows per sweep and the rest; 1 x 2100 x 19: column blocks (gemv_sweep).
  const auto rows = static_cast<std::int64_t>(driver::kDotsMaxRows);
  const auto cols = static_cast<std::int64_t>(driver::kDotsMaxColumns);
  const std::int64_t shapes[][3] = {
      {1, 1, 1},    {1, 37, 29},    {1, 300, 5},       {45, 1, 70}, {1, 5000, 3},    {1, 1, 40},
      {1, 300, 21}, {1, 2100, 19},  {2, 37, 29},       {3, 2, 16},  {8, 50, 67},     {9, 19, 1},
      {13, 70, 33}, {rows, 17, 40}, {rows + 1, 20, 9}, {45, 2, 70}, {300, cols, 21}, {70, cols + 1, 5}};
  for (const auto& s : shapes)
    for (bool a_row : {true, false})
      for (bool b_row : {true, false})
        for (bool c_row : {true, false})
          for (bool prepack : {false, true}) {
            run_gemv_case(*GetParam(), s[0], s[1], s[2], a_row, b_row, c_row, -1.25f, 0.0f, prepack);
            run_gemv_case(*GetParam(), s[0], s[1], s[2], a_row, b_row, c_row, 0.5f, 2.0f, prepack);
            if (HasFatalFailure()) return;
          }
}

// The dots' blocks: K blocks (12 x 700 x 1700: three) and column blocks (700 columns: two) for
// both forms, and a B over 16 MiB read along all of K.
TEST_P(DriverGemv, DotsBlocks) {
  if (!ukernel::usable(*GetParam())) GTEST_SKIP() << GetParam()->name << " is not usable here";
  run_gemv_case(*GetParam(), 12, 700, 1700, true, false, true, 1.0f, 0.0f, false);
  run_gemv_case(*GetParam(), 700, 5, 1700, true, true, false, 1.0f, 1.0f, false);
  run_gemv_case(*GetParam(), 3, 4200, 1100, false, false, true, 1.0f, 0.0f, false);
}

// A prepacked bf16 B in the c2 layout of the AVX512_BF16 kernels (fast math: A rounded to bf16
// too, which the reference of rounded inputs checks to the fp32 bound): odd and even K, partial
// panels, groups of four panels, split over threads.
TEST_P(DriverGemv, Bf16c2PackedB) {
  if (!ukernel::usable(*GetParam())) GTEST_SKIP() << GetParam()->name << " is not usable here";
  std::vector<const GemmKernel*> c2;
  for (const GemmKernel* k : ukernel::all_kernels())
    if (k->family == ukernel::Family::gemm_f32_bf16p_bf16p && k->kr == 2 && ukernel::usable(*k))
      c2.push_back(k);
  if (c2.empty()) GTEST_SKIP() << "no bf16 kernel with the c2 layout runs on this CPU";
  const std::int64_t shapes[][3] = {{1, 37, 29}, {1, 300, 5}, {1, 1000, 67}, {1, 5000, 3}, {1, 200, 300}};
  for (const GemmKernel* kn : c2)
    for (const auto& s : shapes)
      for (bool a_row : {true, false})
        for (bool c_row : {true, false}) {
          run_gemv_case(*GetParam(), s[0], s[1], s[2], a_row, true, c_row, -1.25f, 0.0f, true, {}, kn);
          run_gemv_case(*GetParam(), s[0], s[1], s[2], a_row, false, c_row, 0.5f, 2.0f, true, {1, 3, 1}, kn);
          if (HasFatalFailure()) return;
        }
}

TEST_P(DriverGemv, EveryPartition) {
  if (!ukernel::usable(*GetParam())) GTEST_SKIP() << GetParam()->name << " is not usable here";
  const std::int64_t shapes[][3] = {{1, 70, 300}, {1, 5, 290}, {53, 1, 300}, {5, 70, 300}, {70, 5, 300}};
  for (const auto& s : shapes)
    for (int parts = 2; parts <= 3; ++parts)
      for (int axis = 0; axis < 3; ++axis)
        for (bool prepack : {false, true}) {
          if (prepack && (axis == 2 || s[0] != 1)) continue;  // prepacked: m == 1, never split along K
          driver::Partition part =
              axis == 0 ? driver::Partition{parts, 1, 1}
                        : (axis == 1 ? driver::Partition{1, parts, 1} : driver::Partition{1, 1, parts});
          part.lead = parts == 3 ? 2 : 0;  // a bigger or smaller first part (cold teams)
          for (bool b_row : {true, false}) {
            run_gemv_case(*GetParam(), s[0], s[1], s[2], true, b_row, true, 0.5f, 2.0f, prepack, part);
            run_gemv_case(*GetParam(), s[0], s[1], s[2], false, b_row, false, -1.0f, 0.0f, prepack, part);
          }
          if (HasFatalFailure()) return;
        }
}

TEST_P(DriverGemv, ThreadedAndPlanned) {
  if (!ukernel::usable(*GetParam())) GTEST_SKIP() << GetParam()->name << " is not usable here";
  driver::GemmProblem p;
  p.alpha = 1.0f, p.m = 1, p.n = 4096, p.k = 4096;
  EXPECT_EQ(driver::plan_gemv(p, 2, {}).tn, 2);
  p.n = 8, p.k = 1000000;
  EXPECT_EQ(driver::plan_gemv(p, 2, {}).tk, 2);
  p.n = 16, p.k = 16;
  EXPECT_EQ(driver::plan_gemv(p, 2, {}).threads(), 1);
  p.n = 768, p.k = 768;  // ~30 us of streaming: worth a polling worker, not a sleeping one
  EXPECT_EQ(driver::plan_gemv(p, 2, {}).threads(), 2);
  EXPECT_EQ(driver::plan_gemv(p, 2, {50, 50}).threads(), 1);
  EXPECT_EQ(driver::plan_gemv(p, 2, {40, 100}).threads(), 1);  // sleeping workers
  p.n = 4096, p.k = 4096;                                      // ~4 ms from memory: worth waking them
  EXPECT_EQ(driver::plan_gemv(p, 2, {40, 100}).threads(), 2);
  p.n = 768, p.k = 768;
  // A row-major B streamed by rows: halves of 768 columns would be 1.5 KiB pieces of every row, so
  // K is split; halves of 3072 columns (6 KiB) are not.
  p.b_cs = 1, p.b_rs = 768, p.n = 768, p.k = 3072;
  EXPECT_EQ(driver::plan_gemv(p, 2, {}).tk, 2);
  p.b_rs = 3072, p.n = 3072, p.k = 768;
  EXPECT_EQ(driver::plan_gemv(p, 2, {}).tn, 2);
  p.b_cs = 0, p.b_rs = 0;
  // Through the pool: a row and a column vector.
  for (const auto& s :
       {std::array<std::int64_t, 3>{1, 3000, 700}, std::array<std::int64_t, 3>{2900, 1, 800}}) {
    const Strided a = make_matrix(s[0], s[2], true, 0, 5), b = make_matrix(s[2], s[1], true, 0, 6);
    Strided c = make_matrix(s[0], s[1], true, 0, 7);
    driver::GemmProblem q;
    q.m = static_cast<std::size_t>(s[0]), q.n = static_cast<std::size_t>(s[1]),
    q.k = static_cast<std::size_t>(s[2]);
    q.alpha = 1.0f, q.beta = 0.0f, q.a = a.data.data(), q.a_rs = a.rs, q.a_cs = a.cs;
    q.b = b.data.data(), q.b_rs = b.rs, q.b_cs = b.cs, q.c = c.data.data(), q.c_rs = c.rs, q.c_cs = c.cs;
    ASSERT_EQ(driver::gemv_threaded(*GetParam(), q, 2), driver::Status::ok);
    const Reference r = reference_gemm(
        s[0], s[1], s[2], 1.0f, [&](std::int64_t i, std::int64_t t) { return a.at(i, t); },
        [&](std::int64_t t, std::int64_t j) { return b.at(t, j); }, 0.0f,
        [](std::int64_t, std::int64_t) { return 0.0f; });
    ASSERT_TRUE(matches(
        r, [&](std::int64_t i, std::int64_t j) { return c.at(i, j); }, fp32_bound_factor(s[2], 1)));
  }
}

// Neither a vector nor dots: a column-major A and a row-major B.
TEST_P(DriverGemv, NotForGeneralShapes) {
  std::vector<float> a(4, 1.0f), b(4, 1.0f), c(4, 3.0f);
  driver::GemmProblem p;
  p.m = 2, p.n = 2, p.k = 2, p.a = a.data(), p.a_rs = 1, p.a_cs = 2, p.b = b.data(), p.b_rs = 2, p.b_cs = 1;
  p.c = c.data(), p.c_rs = 2, p.c_cs = 1;
  EXPECT_EQ(driver::gemv(*GetParam(), p), driver::Status::not_applicable);
  for (float v : c) EXPECT_EQ(v, 3.0f);
}

INSTANTIATE_TEST_SUITE_P(Registry, DriverGemv,
                         ::testing::ValuesIn(std::vector<const ukernel::GemvKernel*>(
                             ukernel::all_gemv_kernels().begin(), ukernel::all_gemv_kernels().end())),
                         [](const ::testing::TestParamInfo<const ukernel::GemvKernel*>& info) {
                           return std::string(info.param->name);
                         });

}  // namespace
}  // namespace mmla::test
