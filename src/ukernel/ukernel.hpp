// The micro-kernel descriptor: the one place a kernel's facts (name, family, required ISA, tile,
// packers, entry point) are written. Dispatch, tests and benchmarks all read it.
//
// Kernel files are compiled with ISA flags, so this header must stay free of inline functions and
// templates: anything emitted as a weak symbol from such a file could be picked by the linker for
// baseline code and SIGILL on an older CPU.
#pragma once

#include <cstddef>
#include <cstdint>

#include "cpu/cpu.hpp"

namespace mmla::ukernel {

enum class Family {
  gemm_f32_f32p_f32p,    // fp32 C += fp32 packed A x fp32 packed B
  gemv_f32_f32_f32,      // fp32 y = fp32 X x fp32 v (matrix-vector: GEMM with M = 1 or N = 1)
  gemm_f32_bf16p_bf16p,  // fp32 C += bf16 packed A x bf16 packed B (bf16 GEMM and fp32 fast math)
};

// Packs rows [0, mn) x depth [0, k) of a strided matrix into ceil(mn / R) panels, R = MR (for A)
// or NR (for B). Panel p holds element (p * R + r, kk) at p * R * kp + kk * R + r, where kp is k
// rounded up to KR; rows past mn and depth past k are zero. Element (r, kk) of the source is at
// src[r * s_mn + kk * s_k] (for B pass its column stride as s_mn).
using PackFn = void (*)(const void* src, std::ptrdiff_t s_mn, std::ptrdiff_t s_k, std::size_t mn,
                        std::size_t k, void* dst);

// C[0..m) x [0..n) = alpha * Ap * Bp + beta * C, for m <= MR, n <= NR. Ap is one packed panel. Bp
// is a packed panel (b_ks = NR for KR = 1 layouts, 0 for KR > 1) or, for KR = 1 and KR = 2 layouts,
// B itself read in place when its rows are contiguous (b_ks = ldb > 0: NR consecutive values per
// depth, rows b_ks elements apart; a KR = 2 kernel takes each depth pair from two such rows, and kp
// is then the exact depth). In place the driver only passes full NR-wide panels, so nothing past
// column n is read. Element (i, j) of C is
// at c[i * c_rs + j * c_cs]: kernels store rows with vector stores when c_cs == 1 (what the driver
// arranges whenever it can) and go through a tile buffer otherwise. beta == 0 writes C without
// reading it. kp is the packed depth (a multiple of KR).
using RunFn = void (*)(std::size_t m, std::size_t n, std::size_t kp, const void* ap, const void* bp,
                       std::ptrdiff_t b_ks, float* c, std::ptrdiff_t c_rs, std::ptrdiff_t c_cs, float alpha,
                       float beta);

// The same for one full NR-wide panel of B read in place (b_ks = ldb > 0, as for RunFn), which the
// kernel also writes to b_out (64-byte aligned) exactly as pack_b would pack it: the first MR panel
// of A against a micro-panel packs it for the rest, instead of a separate pass of the packer over
// all of B (docs/blocking.md, "B packed by the kernel").
using RunPackBFn = void (*)(std::size_t m, std::size_t kp, const void* ap, const void* b, std::ptrdiff_t b_ks,
                            void* b_out, float* c, std::ptrdiff_t c_rs, std::ptrdiff_t c_cs, float alpha,
                            float beta);

// The same with A read where it is instead of from a packed panel: row-major in the kernel's element
// type, element (i, kk) at a[i * a_rs + kk] (KR = 2: kp is the exact depth, so that no pair reads
// past a row). b_out == nullptr: B as for RunFn; else B is a full panel read in place that is also
// packed at b_out, as for RunPackBFn. Saves the pass of pack_a over A where A's rows lie close
// enough together to stay in the caches like a packed block (docs/blocking.md, "A read in place").
using RunAInPlaceFn = void (*)(std::size_t m, std::size_t n, std::size_t kp, const void* a,
                               std::ptrdiff_t a_rs, const void* bp, std::ptrdiff_t b_ks, void* b_out,
                               float* c, std::ptrdiff_t c_rs, std::ptrdiff_t c_cs, float alpha, float beta);

// The whole of C = alpha A B + beta C for 2 <= m <= GemmKernel::b_rows_max_m* rows, with A (element
// (i, kk) at a[i * a_rs + kk * a_cs]) and a row-major B (rows b_rs elements apart) in the kernel's
// element type read in place, in `scratch` of b_rows_scratch(m, n, k) bytes, 64-byte aligned.
using GemmBRowsFn = void (*)(std::size_t m, std::size_t n, std::size_t k, const void* a, std::ptrdiff_t a_rs,
                             std::ptrdiff_t a_cs, const void* b, std::ptrdiff_t b_rs, float* c,
                             std::ptrdiff_t c_rs, std::ptrdiff_t c_cs, float alpha, float beta,
                             void* scratch);
using ScratchFn = std::size_t (*)(std::size_t m, std::size_t n, std::size_t k);

// Element types of the matrices a caller passes in (A and B share one).
enum class Elem : unsigned char { f32 = 0, bf16 = 1 };
inline constexpr int kElemTypes = 2;
inline constexpr std::size_t kElemBytes[kElemTypes] = {4, 2};

struct GemmKernel {
  const char* name;  // variant name = file name = descriptor symbol
  Family family;
  cpu::Isa isa;  // the ISA level the CPU must have to run it
  int mr, nr, kr;
  std::size_t elem_size;  // bytes per packed element
  // Packers by source element type (index: Elem): they convert to the kernel's element while packing.
  PackFn pack_a[kElemTypes];
  PackFn pack_b[kElemTypes];
  RunFn run;
  // Optional (nullptr: nothing to do): per-thread state a kernel sets up once for a run of calls
  // (AMX: the tile configuration). The driver calls enter(max_rows, a_panels) before its first run()
  // on a thread, max_rows being the most rows (m) any call until leave() has and a_panels the most
  // calls (MR panels of a block of A) that read each panel of B in turn, and leave() after its
  // last; run() between them may rely on it, and outside them sets it up itself.
  using EnterFn = void (*)(std::size_t max_rows, std::size_t a_panels);
  using StateFn = void (*)();
  EnterFn enter = nullptr;
  StateFn leave = nullptr;
  // Optional (nullptr: the driver packs B with pack_b): run() that also packs the panel of B it
  // reads in place.
  RunPackBFn run_pack_b = nullptr;
  // Optional (nullptr: the driver always packs A with pack_a): run() with A read in place.
  RunAInPlaceFn run_a_in_place = nullptr;
  // A partial panel of B whose width is a multiple of this many columns may be read in place too:
  // the kernel's loads of B then cover exactly its columns. 0: partial panels are always packed.
  int b_partial_in_place_cols = 0;
  // Optional (nullptr: B is packed whenever the blocked kernel needs it): few rows with B read in
  // place by its own loop, where reading B once is the whole cost (AMX: docs/kernels.md, "B read in
  // place at few rows").
  GemmBRowsFn gemm_b_rows = nullptr;
  ScratchFn b_rows_scratch = nullptr;
  std::size_t b_rows_max_m = 0;
  std::size_t b_rows_max_m_b_from_memory = 0;  // the same for a B streamed from memory
};

// Matrix-vector kernels accumulate into a contiguous fp32 buffer; the driver applies alpha/beta.
// axpy: acc[j] += sum_p v[p] * x[p * x_ks + j]  (j < len; X's columns contiguous), `rows` rows
//       of X (8, else 4) per sweep over acc
// dot:  acc[j]  = sum_p x[j * x_ls + p] * v[p]  (j < len; X's rows contiguous)
using GemvAxpyFn = void (*)(std::size_t len, std::size_t k, const float* x, std::ptrdiff_t x_ks,
                            const float* v, float* acc, std::size_t rows);
using GemvDotFn = void (*)(std::size_t len, std::size_t k, const float* x, std::ptrdiff_t x_ls,
                           const float* v, float* acc);

// panels4: acc[q * len + j] += sum_p v[p] * x[q * panel_stride + p * x_ks + j] for q < 4, j < len:
// four narrow X^T streamed side by side (four panels of a prepacked B). Returns false, touching
// nothing, when len is not 1 to 4 whole vectors of the kernel's ISA.
using GemvPanels4Fn = bool (*)(std::size_t len, std::size_t k, const float* x, std::ptrdiff_t panel_stride,
                               std::ptrdiff_t x_ks, const float* v, float* acc);

// The same with X of bf16 (bf16 GEMM with M = 1 or N = 1; v is fp32): X widened to fp32 as it is
// read, exactly, denormals kept.
using GemvAxpyBf16Fn = void (*)(std::size_t len, std::size_t k, const std::uint16_t* x, std::ptrdiff_t x_ks,
                                const float* v, float* acc, std::size_t rows);
using GemvDotBf16Fn = void (*)(std::size_t len, std::size_t k, const std::uint16_t* x, std::ptrdiff_t x_ls,
                               const float* v, float* acc);

// A prepacked bf16 B in the c2 layout (KR = 2: the depth pair 2i, 2i + 1 of column j at
// x[2 i nr + 2 j], the second zero past an odd k), `count` panels of nr columns (1 or 4,
// panel_stride apart): acc[q nr + j] += sum_p v[p] B_q(p, j) for q < count, j < nr, and j < len in
// the last panel (len <= nr). Widened exactly, fp32 products and sums.
using GemvBf16c2Fn = void (*)(std::size_t count, std::size_t nr, std::size_t len, std::size_t k,
                              const std::uint16_t* x, std::ptrdiff_t panel_stride, const float* v,
                              float* acc);

// Several vectors at once, for few rows of A against a B whose columns are contiguous (x W^T), or
// few columns of B against an A whose rows are: acc[i * acc_ld + j] += sum_p v[i * v_rs + p] *
// x[j * x_ls + p] for i < rows <= kGemvDotsMaxRows, j < len; rows of V and of X contiguous.
using GemvDotsFn = void (*)(std::size_t rows, std::size_t len, std::size_t k, const float* x,
                            std::ptrdiff_t x_ls, const float* v, std::ptrdiff_t v_rs, float* acc,
                            std::size_t acc_ld);
inline constexpr std::size_t kGemvDotsMaxRows = 8;
// The same with X of bf16 (bf16 GEMM; V fp32), widened exactly as it is read.
using GemvDotsBf16Fn = void (*)(std::size_t rows, std::size_t len, std::size_t k, const std::uint16_t* x,
                                std::ptrdiff_t x_ls, const float* v, std::ptrdiff_t v_rs, float* acc,
                                std::size_t acc_ld);

struct GemvKernel {
  const char* name;  // variant name = file name = descriptor symbol
  Family family;
  cpu::Isa isa;  // the ISA level the CPU must have to run it
  GemvAxpyFn axpy;
  GemvDotFn dot;
  GemvPanels4Fn axpy_panels4;
  GemvAxpyBf16Fn axpy_bf16;
  GemvDotBf16Fn dot_bf16;
  GemvBf16c2Fn axpy_bf16c2;
  GemvDotsFn dots;
  GemvDotsBf16Fn dots_bf16;
};

const char* family_name(Family family);

}  // namespace mmla::ukernel
