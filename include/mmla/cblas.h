/* CBLAS entry points provided by mmla, with the standard CBLAS signatures (int = blasint, LP64). */
#ifndef MMLA_CBLAS_H
#define MMLA_CBLAS_H

#if defined(_WIN32)
#define MMLA_CBLAS_API
#else
#define MMLA_CBLAS_API __attribute__((visibility("default")))
#endif

#ifdef __cplusplus
extern "C" {
#endif

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

#ifdef __cplusplus
}
#endif

#endif /* MMLA_CBLAS_H */
