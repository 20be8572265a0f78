// CBLAS entry points (include/mmla/cblas.h): the standard signatures over the same checks and
// driver as the C API. Errors are reported the CBLAS way, on stderr, and C is left untouched.
#include <cstdio>

#include "api/problem.hpp"
#include "mmla/cblas.h"

namespace {

// One body for every CBLAS GEMM: check (printing the reference CBLAS parameter error), then run.
void cblas_gemm(const char* routine, mmla::ukernel::Elem src, int order, int trans_a, int trans_b, int m,
                int n, int k, float alpha, const void* a, int lda, const void* b, int ldb, float beta,
                float* c, int ldc) {
  mmla::api::clear_error();
  mmla::driver::GemmProblem p;
  mmla::api::ArgError err;
  if (!mmla::api::blas_to_problem(order, trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, true,
                                  &p, &err)) {
    std::fprintf(stderr, "Parameter %d to routine %s was incorrect (%s)\n", err.position, routine,
                 err.reason.c_str());
    mmla::api::argument_error(routine, err);
    return;
  }
  p.src = src;
  if (mmla::api::run_gemm(p) != MMLA_STATUS_SUCCESS)
    std::fprintf(stderr, "%s: %s; C was not written\n", routine, mmla_last_error());
}

}  // namespace

extern "C" {

MMLA_CBLAS_API void cblas_sgemm(const enum CBLAS_ORDER Order, const enum CBLAS_TRANSPOSE TransA,
                                const enum CBLAS_TRANSPOSE TransB, const int M, const int N, const int K,
                                const float alpha, const float* A, const int lda, const float* B,
                                const int ldb, const float beta, float* C, const int ldc) {
  cblas_gemm("cblas_sgemm", mmla::ukernel::Elem::f32, Order, TransA, TransB, M, N, K, alpha, A, lda, B, ldb,
             beta, C, ldc);
}

MMLA_CBLAS_API void cblas_sbgemm(const enum CBLAS_ORDER Order, const enum CBLAS_TRANSPOSE TransA,
                                 const enum CBLAS_TRANSPOSE TransB, const int M, const int N, const int K,
                                 const float alpha, const bfloat16* A, const int lda, const bfloat16* B,
                                 const int ldb, const float beta, float* C, const int ldc) {
  cblas_gemm("cblas_sbgemm", mmla::ukernel::Elem::bf16, Order, TransA, TransB, M, N, K, alpha, A, lda, B, ldb,
             beta, C, ldc);
}

}  // extern "C"
