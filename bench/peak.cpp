// mmla-bench --peak: times the loops of bench/peak/ (each compiled for its ISA) on the ISAs this
// CPU reports, and the read bandwidth of buffers sized for L2, L3 and DRAM.
#include "peak.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <utility>
#include <vector>

#include "json.hpp"
#include "peak/peak_kernels.hpp"

#if defined(__aarch64__) && defined(__linux__)
#include <sys/auxv.h>
#ifndef HWCAP_ASIMD
#define HWCAP_ASIMD (1 << 1)
#endif
#ifndef HWCAP2_BF16
#define HWCAP2_BF16 (1 << 14)
#endif
#endif

#if defined(__x86_64__) && defined(__linux__)
#include <cpuid.h>
#include <sys/syscall.h>
#endif

namespace mmla_bench {
namespace {

#if defined(__x86_64__)
// AMX-TILE and AMX-BF16 (CPUID 7.0 EDX bits 24, 22), their state enabled by the OS (XCR0 bits 17,
// 18), and Linux's permission to use tile data (arch_prctl ARCH_REQ_XCOMP_PERM, XTILEDATA = 18),
// which a process must ask for before its first tile instruction.
bool amx_permitted() {
#if defined(__linux__)
  unsigned a, b, c, d;
  if (__get_cpuid_max(0, nullptr) < 7) return false;
  __cpuid_count(7, 0, a, b, c, d);
  if (!(d & (1u << 24)) || !(d & (1u << 22))) return false;
  __cpuid(1, a, b, c, d);
  if (!(c & (1u << 27))) return false;  // OSXSAVE
  unsigned lo, hi;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  if ((lo & 0x60000u) != 0x60000u) return false;
  constexpr long kArchReqXcompPerm = 0x1023, kXfeatureXtileData = 18;
  return syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtileData) == 0;
#else
  return false;
#endif
}
#endif

// Written with every loop's result, so no loop is dead code.
volatile float g_sink;

constexpr size_t kKiB = 1024, kMiB = 1024 * kKiB, kGiB = 1024 * kMiB;

struct Timing {
  double sample_s;  // target length of one timed sample
  int samples;
};

Timing timing(bool quick) { return quick ? Timing{0.01, 5} : Timing{0.02, 11}; }

// One loop to time: body(n) does n units of work, each worth `per_unit` (flops or bytes).
struct Probe {
  std::function<void(int64_t)> body;
  double per_unit = 0;
  RateStat* out = nullptr;  // receives the rate in G(FLOP|B)/s
  int64_t n = 1;            // units per sample, from calibration
  std::vector<double> rates;
};

double seconds(const Probe& p, int64_t n) {
  using Clock = std::chrono::steady_clock;
  const Clock::time_point t0 = Clock::now();
  p.body(n);
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// Grows the unit count until one sample lasts about t.sample_s (which also warms up caches and
// clocks).
void calibrate(Probe& p, const Timing& t) {
  int64_t n = 1;
  double dt = seconds(p, n);
  while (dt < t.sample_s / 4 && n < (int64_t{1} << 40)) {
    const double grow = dt > 0 ? std::clamp(t.sample_s / 2 / dt, 2.0, 64.0) : 64.0;
    n = static_cast<int64_t>(static_cast<double>(n) * grow);
    dt = seconds(p, n);
  }
  p.n = std::max<int64_t>(1, static_cast<int64_t>(static_cast<double>(n) * t.sample_s / dt));
}

// Calibrates every probe, then samples them in rounds, one sample of each per round, so that a
// burst of activity elsewhere on the machine costs each figure a sample rather than one figure
// all of its samples. Contention only ever slows a loop down; the median keeps one bad sample out.
void run_probes(std::vector<Probe>& probes, const Timing& t) {
  for (Probe& p : probes) calibrate(p, t);
  for (int s = 0; s < t.samples; ++s)
    for (Probe& p : probes) p.rates.push_back(p.per_unit * static_cast<double>(p.n) / seconds(p, p.n));
  for (Probe& p : probes) {
    std::vector<double>& v = p.rates;
    std::sort(v.begin(), v.end());
    const size_t k = v.size();
    RateStat& r = *p.out;
    r.median = 1e-9 * (k % 2 ? v[k / 2] : 0.5 * (v[k / 2 - 1] + v[k / 2]));
    r.min = 1e-9 * v.front();
    r.max = 1e-9 * v.back();
    r.samples = static_cast<int>(k);
  }
}

Probe compute_probe(float (*loop)(int64_t), int flops_per_iter, RateStat* out) {
  Probe p;
  p.body = [loop](int64_t n) { g_sink = g_sink + loop(n); };
  p.per_unit = flops_per_iter;
  p.out = out;
  return p;
}

using SumFn = float (*)(const float*, size_t);

// The baseline fallback: scalar code with independent accumulators.
float sum_f32_baseline(const float* p, size_t n) {
  float s[8] = {};
  size_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int j = 0; j < 8; ++j) s[j] += p[i + j];
  float total = 0;
  for (; i < n; ++i) total += p[i];
  for (const float x : s) total += x;
  return total;
}

struct SumKernel {
  SumFn fn;
  const char* isa;
};

// The widest loads the CPU has.
SumKernel best_sum_kernel() {
#if defined(__x86_64__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) return {peak::sum_f32_avx512, "avx512"};
  if (__builtin_cpu_supports("avx2")) return {peak::sum_f32_avx2, "avx2"};
#elif defined(__aarch64__) && defined(__linux__)
  if (getauxval(AT_HWCAP) & HWCAP_ASIMD) return {peak::sum_f32_neon, "neon"};
#endif
  return {sum_f32_baseline, "baseline"};
}

struct FreeDeleter {
  void operator()(float* p) const { std::free(p); }
};
using Buffer = std::unique_ptr<float[], FreeDeleter>;

// A page-aligned buffer of `bytes` (a multiple of 4 KiB), every page touched before timing.
Buffer make_buffer(size_t bytes) {
  Buffer p(static_cast<float*>(std::aligned_alloc(4096, bytes)));
  if (p) std::fill_n(p.get(), bytes / sizeof(float), 1.0f);
  return p;
}

Probe bandwidth_probe(const SumKernel& kernel, const float* p, size_t bytes, RateStat* out) {
  const size_t n = bytes / sizeof(float);
  const SumFn fn = kernel.fn;
  Probe probe;
  probe.body = [fn, p, n](int64_t passes) {
    float s = 0;
    for (int64_t i = 0; i < passes; ++i) s += fn(p, n);
    g_sink = g_sink + s;
  };
  probe.per_unit = static_cast<double>(bytes);
  probe.out = out;
  return probe;
}

size_t os_cache_size(int name) {
#if defined(_SC_LEVEL2_CACHE_SIZE)
  const long v = sysconf(name);
  return v > 0 ? static_cast<size_t>(v) : 0;
#else
  (void)name;
  return 0;
#endif
}

std::string size_name(size_t bytes) {
  char buf[32];
  if (bytes >= kGiB && bytes % kGiB == 0)
    std::snprintf(buf, sizeof buf, "%zu GiB", bytes / kGiB);
  else if (bytes >= kMiB && bytes % kMiB == 0)
    std::snprintf(buf, sizeof buf, "%zu MiB", bytes / kMiB);
  else
    std::snprintf(buf, sizeof buf, "%zu KiB", bytes / kKiB);
  return buf;
}

}  // namespace

double PeakReport::best_gflops(const std::string& kind) const {
  double best = 0;
  for (const ComputePeak& c : compute)
    if (c.kind == kind && !c.kernel_shaped) best = std::max(best, c.gflops.median);
  return best;
}

std::string PeakReport::best_isa(const std::string& kind) const {
  double best = 0;
  std::string isa;
  for (const ComputePeak& c : compute)
    if (c.kind == kind && !c.kernel_shaped && c.gflops.median > best) best = c.gflops.median, isa = c.isa;
  return isa;
}

std::string PeakReport::level_for(size_t bytes) const {
  if (l2_bytes && bytes <= l2_bytes) return "L2";
  if (l3_bytes && bytes <= l3_bytes) return "L3";
  return l3_bytes ? "DRAM" : "?";
}

Bandwidth measure_bandwidth_at(size_t bytes, const PeakReport& r) {
  const SumKernel kernel = best_sum_kernel();
  Bandwidth b;
  b.level = r.level_for(bytes);
  b.bytes = std::max<size_t>(4096, (bytes + 4095) / 4096 * 4096);
  b.isa = kernel.isa;
  const Buffer buf = make_buffer(b.bytes);
  if (!buf) {
    b.note = "could not allocate the buffer";
    return b;
  }
  std::vector<Probe> probes{bandwidth_probe(kernel, buf.get(), b.bytes, &b.gbps)};
  run_probes(probes, timing(r.quick));
  return b;
}

PeakReport measure_peak(bool quick) {
  PeakReport r;
  r.quick = quick;

  // What to measure. r.compute and r.bandwidth are complete before any probe points into them.
  using ComputeLoop = float (*)(int64_t);
  std::vector<std::pair<ComputeLoop, int>> loops;
  const auto add_compute = [&](const char* kind, const char* isa, const char* how, ComputeLoop loop,
                               int flops, bool kernel_shaped = false) {
    r.compute.push_back({kind, isa, how, {}, kernel_shaped});
    loops.emplace_back(loop, flops);
  };
#if defined(__x86_64__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    add_compute("fp32", "avx2", "vfmadd ymm, 12 accumulators", peak::fma_f32_avx2, peak::kFmaAvx2Flops);
  if (__builtin_cpu_supports("avx512f")) {
    add_compute("fp32", "avx512", "vfmadd zmm, 24 accumulators", peak::fma_f32_avx512, peak::kFmaAvx512Flops);
    add_compute("fp32", "avx512", "8x48 k-step, L1 loads", peak::fma_f32_avx512_kstep, peak::kFmaAvx512Flops,
                true);
  }
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bf16"))
    add_compute("bf16", "avx512bf16", "vdpbf16ps zmm, 24 accumulators", peak::dot_bf16_avx512bf16,
                peak::kDotBf16Avx512Flops);
  if (amx_permitted())
    add_compute("bf16", "amx", "tdpbf16ps, 6 tile accumulators", peak::mmla_bf16_amx,
                peak::kMmlaBf16AmxFlops);
#elif defined(__aarch64__) && defined(__linux__)
  if (getauxval(AT_HWCAP) & HWCAP_ASIMD)
    add_compute("fp32", "neon", "fmla v.4s, 24 accumulators", peak::fma_f32_neon, peak::kFmaNeonFlops);
  if (getauxval(AT_HWCAP2) & HWCAP2_BF16)
    add_compute("bf16", "bf16", "bfmmla v.4s, 24 accumulators", peak::mmla_bf16_neon,
                peak::kMmlaBf16NeonFlops);
#endif

#if defined(_SC_LEVEL2_CACHE_SIZE) && defined(_SC_LEVEL3_CACHE_SIZE)
  r.l2_bytes = os_cache_size(_SC_LEVEL2_CACHE_SIZE);
  r.l3_bytes = os_cache_size(_SC_LEVEL3_CACHE_SIZE);
#endif
  // Half a cache level leaves room for everything else it holds; the L3 buffer stays well above
  // L2, the DRAM one well above L3 (except with --quick, where it is kept small and flagged).
  const size_t l2_buf = r.l2_bytes ? std::max(r.l2_bytes / 2, 64 * kKiB) / 4096 * 4096 : 512 * kKiB;
  size_t l3_buf = 16 * kMiB;
  if (r.l3_bytes) l3_buf = std::min(l3_buf, r.l3_bytes / 2 / 4096 * 4096);
  const size_t dram_buf = quick ? 128 * kMiB : std::clamp(4 * r.l3_bytes / kMiB * kMiB, kGiB, 4 * kGiB);
  const SumKernel kernel = best_sum_kernel();
  const auto add_bandwidth = [&](const char* level, size_t bytes) {
    Bandwidth b;
    b.level = level;
    b.bytes = bytes;
    b.isa = kernel.isa;
    r.bandwidth.push_back(b);
  };
  add_bandwidth("L2", l2_buf);
  if (l3_buf >= 4 * l2_buf) add_bandwidth("L3", l3_buf);
  add_bandwidth("DRAM", dram_buf);
  if (r.l3_bytes && dram_buf < 2 * r.l3_bytes)
    r.bandwidth.back().note =
        "buffer not 2x larger than the " + size_name(r.l3_bytes) + " L3: partly cache-resident";
  else if (!r.l3_bytes)
    r.bandwidth.back().note = "L3 size unknown";

  std::vector<Probe> probes;
  for (size_t i = 0; i < loops.size(); ++i)
    probes.push_back(compute_probe(loops[i].first, loops[i].second, &r.compute[i].gflops));
  std::vector<Buffer> buffers;
  for (Bandwidth& b : r.bandwidth) {
    buffers.push_back(make_buffer(b.bytes));
    if (buffers.back())
      probes.push_back(bandwidth_probe(kernel, buffers.back().get(), b.bytes, &b.gbps));
    else
      b.note = "could not allocate the buffer";
  }
  run_probes(probes, timing(quick));
  return r;
}

void print_peak(std::FILE* out, const PeakReport& r) {
  const Timing t = timing(r.quick);
  std::fprintf(out, "peak: 1 thread, median of %d samples of ~%g ms each, all loops interleaved\n", t.samples,
               t.sample_s * 1e3);
  // Contention only slows a loop down: a wide spread means the machine was busy meanwhile.
  const auto noisy = [](const RateStat& s) {
    return s.max - s.min > 0.15 * s.median ? "  noisy: rerun" : "";
  };
  for (const ComputePeak& c : r.compute)
    std::fprintf(out, "  %-4s %-11s %-32s %8.1f GFLOPS  (min..max %.1f..%.1f)%s%s\n", c.kind.c_str(),
                 c.isa.c_str(), c.how.c_str(), c.gflops.median, c.gflops.min, c.gflops.max, noisy(c.gflops),
                 c.kernel_shaped ? "  kernel-shaped: a ceiling, not the peak" : "");
  if (r.compute.empty()) std::fprintf(out, "  no compute loop for this CPU/architecture\n");
  for (const Bandwidth& b : r.bandwidth) {
    const std::string what = size_name(b.bytes) + " buffer, " + b.isa + " loads";
    std::fprintf(out, "  read %-11s %-32s %8.1f GB/s    (min..max %.1f..%.1f)%s%s%s\n", b.level.c_str(),
                 what.c_str(), b.gbps.median, b.gbps.min, b.gbps.max, noisy(b.gbps),
                 b.note.empty() ? "" : "  ", b.note.c_str());
  }
  std::fprintf(out, "  caches (OS): L2 %s, L3 %s\n", r.l2_bytes ? size_name(r.l2_bytes).c_str() : "unknown",
               r.l3_bytes ? size_name(r.l3_bytes).c_str() : "unknown");
  if (r.fp32_gflops() > 0)
    std::fprintf(out, "  fp32 peak: %.1f GFLOPS (%s); M = 1 fp32 GEMM ceiling = bandwidth / 2\n",
                 r.fp32_gflops(), r.fp32_isa().c_str());
  if (r.bf16_gflops() > 0)
    std::fprintf(out, "  bf16 peak: %.1f GFLOPS (%s): the denominator of mmla:bf16's %%bf16pk\n",
                 r.bf16_gflops(), r.bf16_isa().c_str());
  std::fflush(out);
}

std::string peak_json(const PeakReport& r, int indent) {
  const std::string pad(static_cast<size_t>(indent), ' ');
  const auto rate = [](const char* unit, const RateStat& s) {
    return ", \"" + std::string(unit) + "\": " + json_number(s.median) + ", \"" + unit +
           "_min\": " + json_number(s.min) + ", \"" + unit + "_max\": " + json_number(s.max) +
           ", \"samples\": " + std::to_string(s.samples);
  };
  std::string j = "{\n" + pad + "  \"threads\": 1, \"quick\": " + (r.quick ? "true" : "false") +
                  ", \"l2_bytes\": " + std::to_string(r.l2_bytes) +
                  ", \"l3_bytes\": " + std::to_string(r.l3_bytes) + ",\n" + pad +
                  "  \"fp32_gflops\": " + json_number(r.fp32_gflops()) +
                  ", \"fp32_isa\": " + json_string(r.fp32_isa()) +
                  ", \"bf16_gflops\": " + (r.bf16_gflops() > 0 ? json_number(r.bf16_gflops()) : "null") +
                  ", \"bf16_isa\": " + json_string(r.bf16_isa()) + ",\n" + pad + "  \"compute\": [";
  for (size_t i = 0; i < r.compute.size(); ++i) {
    const ComputePeak& c = r.compute[i];
    j += (i ? ",\n" : "\n") + pad + "    {\"kind\": " + json_string(c.kind) +
         ", \"isa\": " + json_string(c.isa) + ", \"how\": " + json_string(c.how) + rate("gflops", c.gflops) +
         ", \"kernel_shaped\": " + (c.kernel_shaped ? "true" : "false") + "}";
  }
  j += (r.compute.empty() ? "" : "\n" + pad + "  ") + "],\n" + pad + "  \"bandwidth\": [";
  for (size_t i = 0; i < r.bandwidth.size(); ++i) {
    const Bandwidth& b = r.bandwidth[i];
    j += (i ? ",\n" : "\n") + pad + "    {\"level\": " + json_string(b.level) +
         ", \"bytes\": " + std::to_string(b.bytes) + ", \"isa\": " + json_string(b.isa) +
         rate("gbps", b.gbps) + ", \"note\": " + json_string(b.note) + "}";
  }
  j += (r.bandwidth.empty() ? "" : "\n" + pad + "  ") + "]\n" + pad + "}";
  return j;
}

}  // namespace mmla_bench
