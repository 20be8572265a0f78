// mmla-bench --peak: what this machine can do on one core, measured, so that GEMM results can be
// read as a fraction of it. fp32 FMA and bf16 dot-product peaks per ISA the CPU has, and read
// bandwidth from L2, L3 and DRAM.
#ifndef MMLA_BENCH_PEAK_HPP
#define MMLA_BENCH_PEAK_HPP

#include <cstddef>
#include <cstdio>
#include <string>
#include <vector>

namespace mmla_bench {

// Median, minimum and maximum over the samples of a rate (GFLOPS or GB/s).
struct RateStat {
  double median = 0, min = 0, max = 0;
  int samples = 0;
};

struct ComputePeak {
  std::string kind;  // "fp32" or "bf16"
  std::string isa;   // "avx2", "avx512", "avx512bf16", "neon", "bf16"
  std::string how;   // instruction and accumulator count
  RateStat gflops;
  // A kernel-shaped loop (a micro-kernel's loads with its FMAs): the ceiling such a kernel can
  // reach, shown beside the peak and never taken as it.
  bool kernel_shaped = false;
};

struct Bandwidth {
  std::string level;  // "L2", "L3", "DRAM"
  size_t bytes = 0;   // buffer size read
  std::string isa;    // loads used
  RateStat gbps;      // 1 GB = 1e9 bytes
  std::string note;   // e.g. the buffer may not be larger than the last-level cache
};

struct PeakReport {
  bool quick = false;
  size_t l2_bytes = 0, l3_bytes = 0;  // per-core L2 and L3 as the OS reports them (0: unknown)
  std::vector<ComputePeak> compute;
  std::vector<Bandwidth> bandwidth;

  // Best peak measured of a kind, "fp32" or "bf16" (0 / "" if none). The fp32 one is the
  // denominator of "% of peak"; the bf16 one that of mmla:bf16's "% of bf16 peak".
  double best_gflops(const std::string& kind) const;
  std::string best_isa(const std::string& kind) const;
  double fp32_gflops() const { return best_gflops("fp32"); }
  std::string fp32_isa() const { return best_isa("fp32"); }
  double bf16_gflops() const { return best_gflops("bf16"); }
  std::string bf16_isa() const { return best_isa("bf16"); }
  // The smallest cache level `bytes` of data fit in by the OS's cache sizes: "L2", "L3" or "DRAM".
  std::string level_for(size_t bytes) const;
};

PeakReport measure_peak(bool quick);
// The read bandwidth of a buffer of exactly `bytes`, read over and over as a GEMM with M = 1
// reads B on every call: the rate that GEMM cannot beat. Uses the same loop and timing as
// measure_peak; the level is r.level_for(bytes).
Bandwidth measure_bandwidth_at(size_t bytes, const PeakReport& r);
void print_peak(std::FILE* out, const PeakReport& r);
// A JSON object (no trailing newline), each line after the first indented by `indent` spaces.
std::string peak_json(const PeakReport& r, int indent);

}  // namespace mmla_bench

#endif  // MMLA_BENCH_PEAK_HPP
