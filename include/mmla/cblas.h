/* CBLAS entry points provided by mmla, with the standard CBLAS signatures (int = blasint, LP64). */
#ifndef MMLA_CBLAS_H
#define MMLA_CBLAS_H

#if defined(_WIN32)
#define MMLA_CBLAS_API
#else
#define MMLA_CBLAS_API __attribute__((visibility("default")))
#endif

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* bfloat16 as OpenBLAS spells it: the upper 16 bits of an IEEE fp32. */
typedef uint16_t bfloat16;

#ifndef CBLAS_ENUM_DEFINED_H
#define CBLAS_ENUM_DEFINED_H
enum CBLAS_ORDER { CblasRowMajor = 101, CblasColMajor = 102 };
enum CBLAS_TRANSPOSE { CblasNoTrans = 111, CblasTrans = 112, CblasConjTrans = 113 };
typedef enum CBLAS_ORDER CBLAS_LAYOUT;
#endif

/* C = alpha * op(A) * op(B) + beta * C. Invalid arguments print the reference CBLAS parameter
 * error ("Parameter N to routine cblas_sgemm was incorrect", followed by the reason) to stderr and
 * return without touching C. */
MMLA_CBLAS_API void cblas_sgemm(const enum CBLAS_ORDER Order, const enum CBLAS_TRANSPOSE TransA,
                                const enum CBLAS_TRANSPOSE TransB, const int M, const int N, const int K,
                                const float alpha, const float* A, const int lda, const float* B,
                                const int ldb, const float beta, float* C, const int ldc);

/* C = alpha * op(A) * op(B) + beta * C with bf16 A and B and fp32 C: OpenBLAS's signature. Errors as
 * for cblas_sgemm (reported as cblas_sbgemm). */
MMLA_CBLAS_API void cblas_sbgemm(const enum CBLAS_ORDER Order, const enum CBLAS_TRANSPOSE TransA,
                                 const enum CBLAS_TRANSPOSE TransB, const int M, const int N, const int K,
                                 const float alpha, const bfloat16* A, const int lda, const bfloat16* B,
                                 const int ldb, const float beta, float* C, const int ldc);

/* Conversions with OpenBLAS's names and semantics: n elements, strided by inc (a negative inc walks
 * the vector from its end, as in BLAS; n <= 0 does nothing). fp32/fp64 -> bf16 round to nearest
 * even (one rounding, also from fp64); NaN stays a (quiet) NaN, +-Inf stays +-Inf, finite values
 * beyond the bf16 range become +-Inf. bf16 -> fp32/fp64 is exact. */
MMLA_CBLAS_API void cblas_sbstobf16(const int n, const float* in, const int incin, bfloat16* out,
                                    const int incout);
MMLA_CBLAS_API void cblas_sbdtobf16(const int n, const double* in, const int incin, bfloat16* out,
                                    const int incout);
MMLA_CBLAS_API void cblas_sbf16tos(const int n, const bfloat16* in, const int incin, float* out,
                                   const int incout);
MMLA_CBLAS_API void cblas_dbf16tod(const int n, const bfloat16* in, const int incin, double* out,
                                   const int incout);

#ifdef __cplusplus
}
#endif

#endif /* MMLA_CBLAS_H */
