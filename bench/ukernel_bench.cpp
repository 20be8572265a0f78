// mmla-ukernel-bench: every GEMM micro-kernel of the registry that this CPU can run, timed alone,
// in two settings:
//   l1   one A panel and one B panel of depth KC, both L1-resident, C tile in L1: the kernel's own
//        ceiling (what its k-loop reaches when nothing else costs);
//   l2   the driver's inner loop: MC/MR A panels (an L2-sized packed A block) against one B panel,
//        each call writing its own C tile of a larger C (rows ldc apart), as gemm_driver does.
// The gap between the two, and between them and the mmla-bench figures, says whether the k-loop,
// the memory hierarchy or the driver is what is short of peak. Not a test: prints GFLOPS only.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "driver/gemm_driver.hpp"
#include "ukernel/registry.hpp"

namespace {

using mmla::ukernel::Elem;
using mmla::ukernel::GemmKernel;
using Clock = std::chrono::steady_clock;

struct Aligned {
  void* p = nullptr;
  explicit Aligned(std::size_t bytes) { p = std::aligned_alloc(64, (bytes + 63) / 64 * 64); }
  ~Aligned() { std::free(p); }
  Aligned(const Aligned&) = delete;
  Aligned& operator=(const Aligned&) = delete;
};

// Median GFLOPS of `reps` timed batches of `calls` kernel calls of 2 * mr * nr * kc flops each.
template <class F>
double median_gflops(F&& batch, double flops_per_batch, int reps) {
  batch();  // warm-up
  std::vector<double> g;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = Clock::now();
    batch();
    const double s = std::chrono::duration<double>(Clock::now() - t0).count();
    g.push_back(flops_per_batch / s * 1e-9);
  }
  std::nth_element(g.begin(), g.begin() + g.size() / 2, g.end());
  return g[g.size() / 2];
}

void fill(std::vector<float>& v, std::mt19937& rng) {
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  for (float& x : v) x = d(rng);
}

// Random rows x depth of A and depth x NR of B, packed for the kernel (from fp32).
struct Packed {
  Aligned a, b;
  Packed(const GemmKernel& k, std::size_t rows, std::size_t depth, std::mt19937& rng)
      : a(rows * depth * k.elem_size), b(depth * static_cast<std::size_t>(k.nr) * k.elem_size) {
    const std::size_t nr = static_cast<std::size_t>(k.nr);
    std::vector<float> as(rows * depth), bs(depth * nr);
    fill(as, rng);
    fill(bs, rng);
    k.pack_a[static_cast<int>(Elem::f32)](as.data(), static_cast<std::ptrdiff_t>(depth), 1, rows, depth, a.p);
    k.pack_b[static_cast<int>(Elem::f32)](bs.data(), 1, static_cast<std::ptrdiff_t>(nr), nr, depth, b.p);
  }
};

void bench_kernel(const GemmKernel& k, const mmla::driver::Blocking& blk, int reps, std::size_t l1_depth) {
  const std::size_t mr = static_cast<std::size_t>(k.mr), nr = static_cast<std::size_t>(k.nr);
  const std::size_t kr = static_cast<std::size_t>(k.kr);
  std::mt19937 rng(1);
  // l1: depth from the L1 rule of the blocking (the one-MC-block KC), so A + B panels fit L1, or
  // the --depth given.
  const std::size_t kc1 = ((l1_depth != 0 ? l1_depth : blk.kc_one_pass) + kr - 1) / kr * kr;
  // As the driver does around its calls (AMX: the tile configuration, loaded once), for its
  // many-rows blocking (the l2 case below).
  if (k.enter != nullptr) k.enter(mr, std::max(mr, blk.mc / mr * mr) / mr);
  const Packed l1(k, mr, kc1, rng);
  std::vector<float> c(mr * nr, 0.0f);
  const int calls1 = static_cast<int>(std::max<std::size_t>(1, (200u << 20) / (2 * mr * nr * kc1)));
  const double g1 = median_gflops(
      [&] {
        for (int i = 0; i < calls1; ++i)
          k.run(mr, nr, kc1, l1.a.p, l1.b.p, static_cast<std::ptrdiff_t>(nr), c.data(),
                static_cast<std::ptrdiff_t>(nr), 1, 1.0f, 1.0f);
      },
      2.0 * static_cast<double>(mr * nr * kc1) * calls1, reps);

  // l2: the driver's many-rows blocking (MC x KC of A in L2, one KC x NR panel of B), C rows
  // ldc = 4096 apart as in a large GEMM.
  const std::size_t kc2 = (blk.kc + kr - 1) / kr * kr, mc = std::max(mr, blk.mc / mr * mr);
  const std::size_t panels = mc / mr, ldc = 4096;
  const Packed l2(k, mc, kc2, rng);
  std::vector<float> c2(mc * ldc, 0.0f);
  const std::size_t a_panel_bytes = mr * kc2 * k.elem_size;
  const int rounds = static_cast<int>(std::max<std::size_t>(1, (400u << 20) / (2 * mc * nr * kc2)));
  const double g2 = median_gflops(
      [&] {
        for (int r = 0; r < rounds; ++r) {
          // Successive B panels of a real NC block write successive column tiles of C.
          const std::size_t col = (static_cast<std::size_t>(r) * nr) % (ldc - nr + 1);
          for (std::size_t p = 0; p < panels; ++p)
            k.run(mr, nr, kc2, static_cast<const char*>(l2.a.p) + p * a_panel_bytes, l2.b.p,
                  static_cast<std::ptrdiff_t>(nr), c2.data() + p * mr * ldc + col,
                  static_cast<std::ptrdiff_t>(ldc), 1, 1.0f, 1.0f);
        }
      },
      2.0 * static_cast<double>(mc * nr * kc2) * rounds, reps);
  if (k.leave != nullptr) k.leave();
  std::printf("%-46s %3zux%-3zu  l1: KC=%-4zu %7.1f GFLOPS   l2: MC=%-4zu KC=%-4zu %7.1f GFLOPS\n", k.name,
              mr, nr, kc1, g1, mc, kc2, g2);
}

}  // namespace

int main(int argc, char** argv) {
  int reps = 11;
  std::size_t depth = 0;
  std::string only;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--reps") && i + 1 < argc) {
      reps = std::max(1, std::atoi(argv[++i]));
    } else if (!std::strcmp(argv[i], "--depth") && i + 1 < argc) {
      depth = static_cast<std::size_t>(std::max(1, std::atoi(argv[++i])));
    } else if (!std::strcmp(argv[i], "--kernel") && i + 1 < argc) {
      only = argv[++i];
    } else {
      std::fprintf(stderr,
                   "usage: mmla-ukernel-bench [--kernel SUBSTRING] [--reps N] [--depth K]\n"
                   "Times each GEMM micro-kernel this CPU can run, alone (l1) and in the driver's inner\n"
                   "loop (l2); median GFLOPS of N batches (default 11). Honours MMLA_ISA. --depth K: the l1\n"
                   "panels' depth (default: the blocking's one-MC-block KC).\n");
      return 2;
    }
  }
  for (const GemmKernel* k : mmla::ukernel::all_kernels()) {
    if (!mmla::ukernel::usable(*k)) continue;
    if (!only.empty() && std::string(k->name).find(only) == std::string::npos) continue;
    bench_kernel(*k, mmla::driver::blocking_for(*k, mmla::cpu::info()), reps, depth);
  }
  return 0;
}
