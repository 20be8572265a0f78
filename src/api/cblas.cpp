// CBLAS entry points (include/mmla/cblas.h): the standard signatures over the same checks and
// driver as the C API. Errors are reported the CBLAS way, on stderr, and C is left untouched.
#include <cstdio>

#include "api/problem.hpp"
#include "mmla/cblas.h"

extern "C" {

MMLA_CBLAS_API void cblas_sgemm(const enum CBLAS_ORDER Order, const enum CBLAS_TRANSPOSE TransA,
                                const enum CBLAS_TRANSPOSE TransB, const int M, const int N, const int K,
                                const float alpha, const float* A, const int lda, const float* B,
                                const int ldb, const float beta, float* C, const int ldc) {
  mmla::api::clear_error();
  mmla::driver::GemmProblem p;
  mmla::api::ArgError err;
  if (!mmla::api::blas_to_problem(Order, TransA, TransB, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, true,
                                  &p, &err)) {
    std::fprintf(stderr, "Parameter %d to routine cblas_sgemm was incorrect (%s)\n", err.position,
                 err.reason.c_str());
    mmla::api::argument_error("cblas_sgemm", err);
    return;
  }
  if (mmla::api::run_gemm(p) != MMLA_STATUS_SUCCESS)
    std::fprintf(stderr, "cblas_sgemm: %s; C was not written\n", mmla_last_error());
}

MMLA_CBLAS_API void cblas_sbgemm(const enum CBLAS_ORDER Order, const enum CBLAS_TRANSPOSE TransA,
                                 const enum CBLAS_TRANSPOSE TransB, const int M, const int N, const int K,
                                 const float alpha, const bfloat16* A, const int lda, const bfloat16* B,
                                 const int ldb, const float beta, float* C, const int ldc) {
  mmla::api::clear_error();
  mmla::driver::GemmProblem p;
  mmla::api::ArgError err;
  if (!mmla::api::blas_to_problem(Order, TransA, TransB, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, true,
                                  &p, &err)) {
    std::fprintf(stderr, "Parameter %d to routine cblas_sbgemm was incorrect (%s)\n", err.position,
                 err.reason.c_str());
    mmla::api::argument_error("cblas_sbgemm", err);
    return;
  }
  p.src = mmla::ukernel::Elem::bf16;
  if (mmla::api::run_gemm(p) != MMLA_STATUS_SUCCESS)
    std::fprintf(stderr, "cblas_sbgemm: %s; C was not written\n", mmla_last_error());
}

}  // extern "C"
