// The loops mmla-bench --peak times. Each lives in a file of its own, compiled with the flags of
// its ISA (bench/CMakeLists.txt), and is called only after the CPU said it has that ISA. Nothing
// here may be inline or a template: these files are compiled with -m flags the rest of the binary
// must not pick up (the same ODR rule as src/ukernel). Callers time them; these only compute.
#ifndef MMLA_BENCH_PEAK_KERNELS_HPP
#define MMLA_BENCH_PEAK_KERNELS_HPP

#include <cstddef>
#include <cstdint>

namespace mmla_bench::peak {

// Compute loops: `iters` iterations of independent multiply-adds into many accumulators (more than
// FMA latency x FMA throughput, so the units never wait); the return value depends on every
// accumulator so nothing can be optimised away. Floating-point operations per iteration:
constexpr int kFmaAvx2Flops = 12 * 8 * 2;     // 12 ymm accumulators, vfmadd
constexpr int kFmaAvx512Flops = 24 * 16 * 2;  // 24 zmm accumulators, vfmadd
constexpr int kDotBf16Avx512Flops =
    24 * 16 * 4;  // 24 zmm accumulators, vdpbf16ps (2 products + 2 adds per lane)
constexpr int kMmlaBf16AmxFlops = 6 * 16 * 16 * 32 * 2;  // 6 tile accumulators, tdpbf16ps (16x16, 32 deep)
constexpr int kFmaNeonFlops = 24 * 4 * 2;                // 24 q accumulators, fmla
constexpr int kMmlaBf16NeonFlops = 24 * 32;  // 24 q accumulators, bfmmla (2x4 by 4x2 per instruction)

float fma_f32_avx2(int64_t iters);
float fma_f32_avx512(int64_t iters);
// Not a peak: the 8x48 AVX-512 kernel's k-step (3 zmm loads, 8 broadcasts, 24 FMAs) on
// L1-resident panels, `iters` steps; kFmaAvx512Flops per step. The ceiling a
// kernel with these loads per FMA can reach.
float fma_f32_avx512_kstep(int64_t iters);
float dot_bf16_avx512bf16(int64_t iters);
float mmla_bf16_amx(int64_t iters);  // needs the Linux tile-data permission (amx_permitted())
float fma_f32_neon(int64_t iters);
float mmla_bf16_neon(int64_t iters);

// Read-bandwidth loops: the sum of n floats, read with the widest vector loads of the ISA into
// several independent accumulators (loads, not adds, are the limit).
float sum_f32_avx2(const float* p, size_t n);
float sum_f32_avx512(const float* p, size_t n);
float sum_f32_neon(const float* p, size_t n);

}  // namespace mmla_bench::peak

#endif  // MMLA_BENCH_PEAK_KERNELS_HPP
