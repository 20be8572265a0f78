// CPU detection, the MMLA_ISA cap and the kernel choice, as mmla_get_config() reports them.
//
// The suite adapts to the MMLA_ISA it runs under (CTest runs it under every level). Runners that
// know what the (emulated) CPU is set MMLA_TEST_EXPECT_FEATURES / MMLA_TEST_EXPECT_KERNEL, and the
// report must then say exactly that.
#include <gtest/gtest.h>

#include <cstdlib>
#if defined(__x86_64__)
#include <sys/syscall.h>
#include <unistd.h>
#endif
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "api/problem.hpp"
#include "cpu/cpu.hpp"
#include "mmla/mmla.h"
#include "ukernel/registry.hpp"

namespace mmla::test {
namespace {

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr ? "" : v;
}

std::string config_line(const std::string& prefix) {
  std::istringstream in(mmla_get_config());
  for (std::string line; std::getline(in, line);)
    if (line.rfind(prefix, 0) == 0) return line.substr(prefix.size());
  return "<no line starting with '" + prefix + "'>";
}

std::set<std::string> words(const std::string& s) {
  std::istringstream in(s);
  std::set<std::string> out;
  for (std::string w; in >> w;) out.insert(w);
  return out;
}

TEST(Dispatch, LevelsMatchTheBuildList) {
  // cmake/kernels.cmake's per-architecture list (used to run the suite per level) and cpu.cpp's
  // list must agree.
  std::string levels;
  for (cpu::Isa isa : cpu::levels()) levels += std::string(levels.empty() ? "" : ",") + cpu::name(isa);
  EXPECT_EQ(levels, MMLA_TEST_ISA_LEVELS);
}

// The family's kernel is usable, within the cap, and no usable kernel of the family ranks higher.
const ukernel::GemmKernel* expect_highest_usable(ukernel::Family family, const cpu::IsaCap& cap) {
  const auto& sel = api::selection(family);
  EXPECT_NE(sel.kernel, nullptr);
  if (sel.kernel == nullptr) return nullptr;
  EXPECT_TRUE(ukernel::usable(*sel.kernel));
  EXPECT_LE(cpu::rank(sel.kernel->isa), cpu::rank(cap.level));
  for (const ukernel::GemmKernel* k : ukernel::all_kernels())
    if (k->family == sel.kernel->family && ukernel::usable(*k)) {
      EXPECT_LE(cpu::rank(k->isa), cpu::rank(sel.kernel->isa)) << k->name << " is usable and preferred";
    }
  return sel.kernel;
}

TEST(Dispatch, ChoiceIsTheHighestUsableLevelUnderTheCap) {
  const cpu::IsaCap& cap = cpu::cap();
  if (!cap.error.empty()) GTEST_SKIP() << "covered by InvalidIsaIsAnError";
  const ukernel::GemmKernel* kernel = expect_highest_usable(ukernel::Family::gemm_f32_f32p_f32p, cap);
  ASSERT_NE(kernel, nullptr);
  // The report names it.
  EXPECT_EQ(config_line("kernel gemm_f32_f32p_f32p: ").rfind(kernel->name, 0), 0u) << mmla_get_config();
  if (!env("MMLA_ISA").empty()) {
    EXPECT_EQ(cpu::name(cap.level), env("MMLA_ISA"));
    EXPECT_NE(config_line("MMLA_ISA: ").find(env("MMLA_ISA")), std::string::npos);
  }
}

TEST(Dispatch, TileSetAndTheTileForEachM) {
  if (!cpu::cap().error.empty()) GTEST_SKIP() << "covered by InvalidIsaIsAnError";
  const auto& sel = api::selection(ukernel::Family::gemm_f32_f32p_f32p);
  ASSERT_FALSE(sel.tiles.empty());
  EXPECT_EQ(sel.tiles.front().kernel, sel.kernel);
  for (const auto& t : sel.tiles) EXPECT_EQ(t.kernel->isa, sel.kernel->isa) << t.kernel->name;
  // Every usable kernel of the chosen level is in the set.
  std::size_t same_level = 0;
  for (const ukernel::GemmKernel* k : ukernel::all_kernels())
    same_level += k->family == sel.kernel->family && k->isa == sel.kernel->isa && ukernel::usable(*k);
  EXPECT_EQ(sel.tiles.size(), same_level);
  // The tile for an m x n C pads it least.
  for (std::size_t m : {1, 2, 7, 8, 12, 24, 32, 100, 128, 256, 1000})
    for (std::size_t n : {1, 16, 32, 48, 64, 100, 256, 768, 4096}) {
      const auto padded_area = [m, n](const ukernel::GemmKernel* k) {
        const std::size_t mr = static_cast<std::size_t>(k->mr), nr = static_cast<std::size_t>(k->nr);
        return (m + mr - 1) / mr * mr * ((n + nr - 1) / nr * nr);
      };
      const auto padded_n = [n](const ukernel::GemmKernel* k) {
        const std::size_t nr = static_cast<std::size_t>(k->nr);
        return (n + nr - 1) / nr * nr;
      };
      const auto& chosen = sel.tile_for(m, n);
      for (const auto& t : sel.tiles) {
        EXPECT_LE(padded_area(chosen.kernel), padded_area(t.kernel)) << "m=" << m << " n=" << n;
        // Of equal areas (8 x 64 with 8x48 and 12x32), the one with fewer padded columns.
        if (padded_area(chosen.kernel) == padded_area(t.kernel)) {
          EXPECT_LE(padded_n(chosen.kernel), padded_n(t.kernel)) << "m=" << m << " n=" << n;
        }
      }
    }
}

TEST(Dispatch, ExpectedKernelAndFeatures) {
  const std::string kernel = env("MMLA_TEST_EXPECT_KERNEL"), features = env("MMLA_TEST_EXPECT_FEATURES");
  if (kernel.empty() && features.empty()) GTEST_SKIP() << "no expectation given by the runner";
  // The expected kernel is the uncapped choice; under MMLA_ISA the cap test above applies.
  if (!kernel.empty() && env("MMLA_ISA").empty()) {
    EXPECT_EQ(config_line("kernel gemm_f32_f32p_f32p: ").rfind(kernel + " ", 0), 0u) << mmla_get_config();
  }
  if (!features.empty()) {
    EXPECT_EQ(words(config_line("features: ")), words(features)) << mmla_get_config();
  }
  const std::string bf16 = env("MMLA_TEST_EXPECT_BF16_KERNEL");
  if (!bf16.empty() && env("MMLA_ISA").empty()) {
    const std::string report = mmla_get_config();
    if (bf16 == "none") {
      EXPECT_FALSE(api::bf16_hardware());
      EXPECT_NE(report.find("no bf16 kernel for this CPU"), std::string::npos) << report;
    } else {
      EXPECT_NE(report.find("bf16 GEMM and fast math run on " + bf16), std::string::npos) << report;
    }
  }
}

#if defined(__x86_64__)
TEST(Dispatch, AmxPermissionOnlyRequestedForAnAmxKernel) {
  // The grant enlarges every signal frame of the process; a library that merely detects AMX must
  // not ask for it.
  float a[4] = {1, 1, 1, 1}, c[4];
  ASSERT_EQ(MMLA_STATUS_SUCCESS,
            mmla_sgemm(MMLA_ROW_MAJOR, MMLA_NO_TRANS, MMLA_NO_TRANS, 2, 2, 2, 1, a, 2, a, 2, 0, c, 2));
  (void)mmla_get_config();
  bool amx_kernel_in_use = false;
  for (const ukernel::GemmKernel* k : ukernel::all_kernels())
    amx_kernel_in_use |= k->isa == cpu::Isa::amx && api::selection(k->family).kernel == k;
  unsigned long mask = 0;
  ASSERT_EQ(0, syscall(SYS_arch_prctl, 0x1022 /* ARCH_GET_XCOMP_PERM */, &mask));
  EXPECT_EQ(amx_kernel_in_use, (mask >> 18) & 1) << "tile-data permission state";
  EXPECT_NE(config_line("amx: "), "");
}

TEST(Dispatch, X86FeaturesAgreeWithProcCpuinfo) {
  // The kernel's view of the CPU, independent of our CPUID code.
  std::ifstream f("/proc/cpuinfo");
  std::string line, flags;
  while (std::getline(f, line))
    if (line.rfind("flags", 0) == 0) {
      flags = line.substr(line.find(':') + 1);
      break;
    }
  if (flags.empty()) GTEST_SKIP() << "/proc/cpuinfo has no flags line";
  const std::set<std::string> have = words(flags);
  const cpu::Features& ft = cpu::info().features;
  const std::pair<const char*, bool> checks[] = {
      {"avx2", ft.avx2},
      {"fma", ft.fma},
      {"avx512f", ft.avx512f},
      {"avx512bw", ft.avx512bw},
      {"avx512dq", ft.avx512dq},
      {"avx512vl", ft.avx512vl},
      {"avx512_bf16", ft.avx512_bf16},
      {"avx512_vnni", ft.avx512_vnni},
  };
  for (const auto& [name, detected] : checks) EXPECT_EQ(have.count(name) == 1, detected) << name;
  // AMX additionally needs the permission; detected implies the kernel advertises it.
  if (ft.amx_tile) {
    EXPECT_EQ(have.count("amx_tile"), 1u);
  }
  if (ft.amx_bf16) {
    EXPECT_EQ(have.count("amx_bf16"), 1u);
  }
}
#endif

TEST(Dispatch, CacheSizesArePlausible) {
  const cpu::CacheSizes& c = cpu::info().caches;
  EXPECT_GE(c.l1d, 4u << 10);
  EXPECT_GE(c.l2, c.l1d);
  EXPECT_GE(c.l3, 1u << 10);
  EXPECT_NE(config_line("caches: "), "");
}

TEST(Dispatch, InvalidIsaIsAnError) {
  if (cpu::cap().error.empty()) {
    // A valid run: the parser itself must still reject what is not a level of this build.
    cpu::Isa out;
    EXPECT_FALSE(cpu::parse("avx1024", &out));
    EXPECT_FALSE(cpu::parse("", &out));
    EXPECT_FALSE(cpu::parse(cpu::levels().back() == cpu::Isa::amx ? "neon" : "avx2", &out));
    EXPECT_TRUE(cpu::parse("ref", &out));
    return;
  }
  // MMLA_ISA is set to something unknown: every call fails cleanly, the report says why.
  EXPECT_NE(std::string(mmla_get_config()).find("MMLA_ISA: ERROR"), std::string::npos);
  float a[4] = {1, 1, 1, 1}, b[4] = {1, 1, 1, 1}, c[4] = {3, 3, 3, 3};
  EXPECT_EQ(MMLA_STATUS_INVALID_ENVIRONMENT,
            mmla_sgemm(MMLA_ROW_MAJOR, MMLA_NO_TRANS, MMLA_NO_TRANS, 2, 2, 2, 1, a, 2, b, 2, 0, c, 2));
  EXPECT_NE(std::string(mmla_last_error()).find("MMLA_ISA="), std::string::npos);
  for (float v : c) EXPECT_EQ(v, 3.0f);
  // Even a call with nothing to compute reports it.
  EXPECT_EQ(MMLA_STATUS_INVALID_ENVIRONMENT,
            mmla_sgemm(MMLA_ROW_MAJOR, MMLA_NO_TRANS, MMLA_NO_TRANS, 0, 2, 2, 1, a, 2, b, 2, 0, c, 2));
}

// The bf16 family follows the same order (amx > avx512bf16 > ref on x86): under MMLA_ISA=avx512 a
// CPU with AVX512_BF16 must fall back to the portable kernel, i.e. to the exact fp32 path.
TEST(Dispatch, Bf16ChoiceIsTheHighestUsableLevelUnderTheCap) {
  const cpu::IsaCap& cap = cpu::cap();
  if (!cap.error.empty()) GTEST_SKIP() << "covered by InvalidIsaIsAnError";
  const ukernel::GemmKernel* kernel = expect_highest_usable(ukernel::Family::gemm_f32_bf16p_bf16p, cap);
  ASSERT_NE(kernel, nullptr);
  EXPECT_EQ(api::bf16_hardware(), kernel->isa != cpu::Isa::ref);
}

TEST(Dispatch, InvalidFpmathModeIsAnError) {
  if (env("MMLA_FPMATH_MODE").empty() || env("MMLA_FPMATH_MODE") == "strict" ||
      env("MMLA_FPMATH_MODE") == "bf16")
    GTEST_SKIP() << "run by CTest with an invalid MMLA_FPMATH_MODE";
  EXPECT_NE(std::string(mmla_get_config()).find("fp-math mode: ERROR"), std::string::npos)
      << mmla_get_config();
  float a[4] = {1, 1, 1, 1}, c[4] = {3, 3, 3, 3};
  EXPECT_EQ(MMLA_STATUS_INVALID_ENVIRONMENT,
            mmla_sgemm(MMLA_ROW_MAJOR, MMLA_NO_TRANS, MMLA_NO_TRANS, 2, 2, 2, 1, a, 2, a, 2, 0, c, 2));
  EXPECT_NE(std::string(mmla_last_error()).find("MMLA_FPMATH_MODE="), std::string::npos);
  for (float v : c) EXPECT_EQ(v, 3.0f);
}

}  // namespace
}  // namespace mmla::test
