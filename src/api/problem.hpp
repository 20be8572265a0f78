// Argument checking and normalisation of every public GEMM call into driver::GemmProblem, plus
// the per-thread error message. Shared by the C, CBLAS and (through C) C++ and Python fronts.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "driver/gemm_driver.hpp"
#include "mmla/mmla.h"
#include "ukernel/ukernel.hpp"

namespace mmla::api {

// A rejected argument: its 1-based position in the CBLAS/mmla_sgemm signature and why.
struct ArgError {
  int position = 0;
  std::string reason;
};

// allow_transpose: the problem may be turned into C^T = B^T A^T so that C's unit stride runs along
// the kernel's rows; false when B's role is fixed (prepacked B).
bool blas_to_problem(int layout, int trans_a, int trans_b, std::int64_t m, std::int64_t n, std::int64_t k,
                     float alpha, const void* a, std::int64_t lda, const void* b, std::int64_t ldb,
                     float beta, float* c, std::int64_t ldc, bool allow_transpose, driver::GemmProblem* out,
                     ArgError* err);

bool strided_to_problem(std::int64_t m, std::int64_t n, std::int64_t k, float alpha, const void* a,
                        std::int64_t a_rs, std::int64_t a_cs, const void* b, std::int64_t b_rs,
                        std::int64_t b_cs, float beta, float* c, std::int64_t c_rs, std::int64_t c_cs,
                        bool allow_transpose, driver::GemmProblem* out, ArgError* err);

// The kernels and blockings used for a family, chosen once per process: every usable kernel of
// the highest usable ISA level (the tile set), in cmake/kernels.cmake order. `kernel` is the first
// of them: the one prepacked B is laid out for and the report names first.
struct Selection {
  struct Tile {
    const ukernel::GemmKernel* kernel;
    driver::Blocking blocking;
  };
  const ukernel::GemmKernel* kernel = nullptr;  // nullptr when MMLA_ISA is invalid
  driver::Blocking blocking;                    // kernel's
  std::vector<Tile> tiles;
  std::string why;

  // The tile for an m x n C: the one that pads it least, to multiples of its MR and NR (the rows
  // and columns of partial tiles are computed and thrown away); ties go to the earlier one.
  const Tile& tile_for(std::size_t m, std::size_t n) const;
  // The same when only n is known (a prepacked B): the one that pads n least.
  const Tile& tile_for_columns(std::size_t n) const;
};
const Selection& selection(ukernel::Family family);

// Whether the CPU has a bf16 GEMM kernel beyond the portable reference (bf16 GEMM and fast math use it).
bool bf16_hardware();

// The matrix-vector kernel, chosen once per process.
struct GemvSelection {
  const ukernel::GemvKernel* kernel = nullptr;  // nullptr when MMLA_ISA is invalid
  std::string why;
};
const GemvSelection& gemv_selection();

// Runs a checked problem (p.src says A and B's element type) on the kernel that its type and the
// fp-math mode in force select; sets the last error on failure.
mmla_status run_gemm(const driver::GemmProblem& p);

// The fp-math mode in force on the calling thread (never DEFAULT), and the MMLA_FPMATH_MODE error
// ("" if the variable is unset or valid).
mmla_fpmath_mode fpmath_mode();
const std::string& fpmath_env_error();

// The thread count calls use now, where it comes from (for the report), and the
// MMLA_NUM_THREADS error ("" if unset or valid).
int num_threads();
std::string num_threads_source();
const std::string& num_threads_env_error();

// The environment error that fails every call (MMLA_ISA, MMLA_FPMATH_MODE or MMLA_NUM_THREADS), "" if none.
const std::string& environment_error();

// Sets the last error to "<function>: argument <position>: <reason>" and returns INVALID_ARGUMENT.
mmla_status argument_error(const char* function, const ArgError& err);

mmla_status fail(mmla_status status, std::string reason);
void clear_error();
const char* last_error();

}  // namespace mmla::api
