// The C API (include/mmla/mmla.h).
#include "api/problem.hpp"
#include "mmla/mmla.h"

using mmla::api::ArgError;
using mmla::ukernel::Elem;

namespace {

// One body per argument form for both element types: check, then run.
mmla_status blas_gemm(const char* fname, Elem src, mmla_layout layout, mmla_transpose trans_a,
                      mmla_transpose trans_b, int64_t m, int64_t n, int64_t k, float alpha, const void* a,
                      int64_t lda, const void* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  mmla::api::clear_error();
  mmla::driver::GemmProblem p;
  ArgError err;
  if (!mmla::api::blas_to_problem(layout, trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc,
                                  true, &p, &err))
    return mmla::api::argument_error(fname, err);
  p.src = src;
  return mmla::api::run_gemm(p);
}

mmla_status strided_gemm(const char* fname, Elem src, int64_t m, int64_t n, int64_t k, float alpha,
                         const void* a, int64_t a_rs, int64_t a_cs, const void* b, int64_t b_rs, int64_t b_cs,
                         float beta, float* c, int64_t c_rs, int64_t c_cs) {
  mmla::api::clear_error();
  mmla::driver::GemmProblem p;
  ArgError err;
  if (!mmla::api::strided_to_problem(m, n, k, alpha, a, a_rs, a_cs, b, b_rs, b_cs, beta, c, c_rs, c_cs, true,
                                     &p, &err))
    return mmla::api::argument_error(fname, err);
  p.src = src;
  return mmla::api::run_gemm(p);
}

}  // namespace

extern "C" {

MMLA_API mmla_status mmla_sgemm(mmla_layout layout, mmla_transpose trans_a, mmla_transpose trans_b, int64_t m,
                                int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
                                const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  return blas_gemm("mmla_sgemm", Elem::f32, layout, trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c,
                   ldc);
}

MMLA_API mmla_status mmla_sgemm_strided(int64_t m, int64_t n, int64_t k, float alpha, const float* a,
                                        int64_t a_row_stride, int64_t a_col_stride, const float* b,
                                        int64_t b_row_stride, int64_t b_col_stride, float beta, float* c,
                                        int64_t c_row_stride, int64_t c_col_stride) {
  return strided_gemm("mmla_sgemm_strided", Elem::f32, m, n, k, alpha, a, a_row_stride, a_col_stride, b,
                      b_row_stride, b_col_stride, beta, c, c_row_stride, c_col_stride);
}

MMLA_API mmla_status mmla_sbgemm(mmla_layout layout, mmla_transpose trans_a, mmla_transpose trans_b,
                                 int64_t m, int64_t n, int64_t k, float alpha, const mmla_bfloat16* a,
                                 int64_t lda, const mmla_bfloat16* b, int64_t ldb, float beta, float* c,
                                 int64_t ldc) {
  return blas_gemm("mmla_sbgemm", Elem::bf16, layout, trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta,
                   c, ldc);
}

MMLA_API mmla_status mmla_sbgemm_strided(int64_t m, int64_t n, int64_t k, float alpha, const mmla_bfloat16* a,
                                         int64_t a_row_stride, int64_t a_col_stride, const mmla_bfloat16* b,
                                         int64_t b_row_stride, int64_t b_col_stride, float beta, float* c,
                                         int64_t c_row_stride, int64_t c_col_stride) {
  return strided_gemm("mmla_sbgemm_strided", Elem::bf16, m, n, k, alpha, a, a_row_stride, a_col_stride, b,
                      b_row_stride, b_col_stride, beta, c, c_row_stride, c_col_stride);
}

MMLA_API const char* mmla_last_error(void) { return mmla::api::last_error(); }

MMLA_API const char* mmla_version(void) { return MMLA_VERSION_STRING; }

MMLA_API const char* mmla_status_string(mmla_status status) {
  switch (status) {
    case MMLA_STATUS_SUCCESS: return "success";
    case MMLA_STATUS_INVALID_ARGUMENT: return "invalid argument";
    case MMLA_STATUS_INVALID_ENVIRONMENT: return "invalid environment variable";
    case MMLA_STATUS_OUT_OF_MEMORY: return "out of memory";
    case MMLA_STATUS_INTERNAL_ERROR: return "internal error";
  }
  return "unknown status";
}

}  // extern "C"
