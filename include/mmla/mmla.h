/* mmla — fast matrix math for deep-learning inference on CPUs. The C API (the contract every other
 * front — C++, Python, CLI — is built on). Functions return a status code; they never abort. */
#ifndef MMLA_MMLA_H
#define MMLA_MMLA_H

#include <stddef.h>
#include <stdint.h>

#if defined(_WIN32)
#define MMLA_API
#else
#define MMLA_API __attribute__((visibility("default")))
#endif

#ifdef __cplusplus
extern "C" {
#endif

typedef enum mmla_status {
  MMLA_STATUS_SUCCESS = 0,
  MMLA_STATUS_INVALID_ARGUMENT = 1,    /* a size, stride, pointer or enum is not valid */
  MMLA_STATUS_INVALID_ENVIRONMENT = 2, /* an MMLA_* environment variable has a value mmla rejects */
  MMLA_STATUS_OUT_OF_MEMORY = 3,
  MMLA_STATUS_INTERNAL_ERROR = 4
} mmla_status;

/* Values are those of the CBLAS enums, so a CBLAS value can be passed as is. */
typedef enum mmla_layout { MMLA_ROW_MAJOR = 101, MMLA_COL_MAJOR = 102 } mmla_layout;
typedef enum mmla_transpose {
  MMLA_NO_TRANS = 111,
  MMLA_TRANS = 112,
  MMLA_CONJ_TRANS = 113 /* same as MMLA_TRANS for real matrices */
} mmla_transpose;

/* C = alpha * op(A) * op(B) + beta * C, with BLAS semantics: op(A) is m x k, op(B) is k x n, C is
 * m x n; lda/ldb/ldc are leading dimensions in elements. beta == 0 writes C without reading it;
 * alpha == 0 or k == 0 only scales C. On any error C is not touched. */
MMLA_API mmla_status mmla_sgemm(mmla_layout layout, mmla_transpose trans_a, mmla_transpose trans_b, int64_t m,
                                int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
                                const float* b, int64_t ldb, float beta, float* c, int64_t ldc);

/* The same product on strided views: element (i, j) of A is a[i * a_row_stride + j * a_col_stride]
 * (A is m x k, B is k x n, C is m x n, already transposed as needed). Strides are in elements and
 * must be >= 1 along any dimension longer than 1; C must have a unit stride in one dimension and
 * must not overlap itself. */
MMLA_API mmla_status mmla_sgemm_strided(int64_t m, int64_t n, int64_t k, float alpha, const float* a,
                                        int64_t a_row_stride, int64_t a_col_stride, const float* b,
                                        int64_t b_row_stride, int64_t b_col_stride, float beta, float* c,
                                        int64_t c_row_stride, int64_t c_col_stride);

/* Prepacked weights. mmla_pack_b packs op(B) (k x n) once into the layout of the kernel chosen at
 * run time; mmla_gemm_packed then computes C = alpha * op(A) * B + beta * C for any A without
 * repacking. A handle is tied to the kernel and blocking it was packed for: using it after the
 * kernel changed (a different MMLA_ISA or fp-math mode) or with another k or n is an
 * MMLA_STATUS_INVALID_ARGUMENT error, not a wrong answer. Handles are immutable once packed and
 * may be shared by concurrent calls. */
typedef struct mmla_packed_matrix mmla_packed_matrix;

/* bfloat16 values as their bits: the upper 16 bits of an IEEE fp32 (same as OpenBLAS's bfloat16). */
typedef uint16_t mmla_bfloat16;

MMLA_API mmla_status mmla_pack_b(mmla_layout layout, mmla_transpose trans_b, int64_t k, int64_t n,
                                 const float* b, int64_t ldb, mmla_packed_matrix** packed);

/* The same from bf16 weights. On a CPU with bf16 kernels B stays bf16 (half the bytes of fp32)
 * and mmla_gemm_packed rounds A to bf16 as fast math does; elsewhere B is widened to fp32. mmla_pack_b
 * also packs as bf16 (rounding B) when fast math is in force at packing time on such a CPU. */
MMLA_API mmla_status mmla_pack_b_bf16(mmla_layout layout, mmla_transpose trans_b, int64_t k, int64_t n,
                                      const mmla_bfloat16* b, int64_t ldb, mmla_packed_matrix** packed);

/* Bytes the packed data occupies (what prepacking costs in memory). */
MMLA_API mmla_status mmla_packed_size(const mmla_packed_matrix* packed, size_t* bytes);

/* m x n result; k and n must be those the handle was packed with. */
MMLA_API mmla_status mmla_gemm_packed(mmla_layout layout, mmla_transpose trans_a, int64_t m, int64_t n,
                                      int64_t k, float alpha, const float* a, int64_t lda,
                                      const mmla_packed_matrix* b, float beta, float* c, int64_t ldc);

/* The same with bf16 A (mmla_sbgemm's operands, fp32 accumulation and C): with a bf16-packed B on a
 * CPU with bf16 kernels A is used as is; elsewhere it is widened to fp32 (exact). */
MMLA_API mmla_status mmla_sbgemm_packed(mmla_layout layout, mmla_transpose trans_a, int64_t m, int64_t n,
                                        int64_t k, float alpha, const mmla_bfloat16* a, int64_t lda,
                                        const mmla_packed_matrix* b, float beta, float* c, int64_t ldc);

/* Frees a handle (null is allowed). */
MMLA_API void mmla_packed_free(mmla_packed_matrix* packed);

/* C = alpha * op(A) * op(B) + beta * C with bf16 A and B, fp32 accumulation and fp32 C; otherwise
 * exactly mmla_sgemm's semantics. Uses BF16 instructions where the CPU has them; elsewhere A and B
 * are widened to fp32 while packing and the fp32 kernels run (exact products, never slower than
 * fp32). */
MMLA_API mmla_status mmla_sbgemm(mmla_layout layout, mmla_transpose trans_a, mmla_transpose trans_b,
                                 int64_t m, int64_t n, int64_t k, float alpha, const mmla_bfloat16* a,
                                 int64_t lda, const mmla_bfloat16* b, int64_t ldb, float beta, float* c,
                                 int64_t ldc);

/* mmla_sgemm_strided for bf16 A and B. */
MMLA_API mmla_status mmla_sbgemm_strided(int64_t m, int64_t n, int64_t k, float alpha, const mmla_bfloat16* a,
                                         int64_t a_row_stride, int64_t a_col_stride, const mmla_bfloat16* b,
                                         int64_t b_row_stride, int64_t b_col_stride, float beta, float* c,
                                         int64_t c_row_stride, int64_t c_col_stride);

/* fp32 math mode for the fp32 entry points (mmla_sgemm, cblas_sgemm, mmla_gemm_packed, ...):
 * STRICT computes in fp32; BF16 ("fast math") rounds A and B to bf16 while packing and multiplies
 * them on BF16 hardware with fp32 accumulation (docs/numerics.md gives the error bound); on a CPU
 * without BF16 instructions it computes as STRICT. The process default comes from
 * MMLA_FPMATH_MODE=strict|bf16 (STRICT if unset; any other value makes every call fail with
 * MMLA_STATUS_INVALID_ENVIRONMENT) and mmla_set_fpmath_mode; a thread may override it. */
typedef enum mmla_fpmath_mode {
  MMLA_FPMATH_DEFAULT = 0, /* thread override only: follow the process default */
  MMLA_FPMATH_STRICT = 1,
  MMLA_FPMATH_BF16 = 2
} mmla_fpmath_mode;

MMLA_API mmla_status mmla_set_fpmath_mode(mmla_fpmath_mode mode);        /* process default */
MMLA_API mmla_fpmath_mode mmla_get_fpmath_mode(void);                    /* in force on this thread */
MMLA_API mmla_status mmla_set_thread_fpmath_mode(mmla_fpmath_mode mode); /* DEFAULT clears it */
MMLA_API mmla_fpmath_mode mmla_get_thread_fpmath_mode(void);             /* the override, or DEFAULT */

/* Threads. Every GEMM may run on a persistent pool of worker threads, started on first use. The
 * count is mmla_set_num_threads(n) if set, else MMLA_NUM_THREADS, else the CPUs this process may
 * use (its affinity mask and cgroup CPU quota, whichever is smaller), and never more than those
 * CPUs. Small problems run on the calling thread. Calls from several threads are safe: one call at
 * a time uses the pool and the others run on their own thread; so do calls from inside a pool job
 * or an OpenMP parallel region. A forked child gets a new pool. An MMLA_NUM_THREADS that is not a
 * positive integer makes every call fail with MMLA_STATUS_INVALID_ENVIRONMENT. */
MMLA_API mmla_status mmla_set_num_threads(int n); /* n >= 1; 0 restores the default; < 0 is an error */
MMLA_API int mmla_get_num_threads(void);          /* the count a GEMM call would use now */

/* A readable, multi-line report: version, detected CPU features, cache sizes, the MMLA_ISA cap, the
 * fp-math mode in force on this thread and the kernel chosen for each family with the reason. The
 * string stays valid until the calling thread calls mmla_get_config again. */
MMLA_API const char* mmla_get_config(void);

/* "MAJOR.MINOR.PATCH" */
MMLA_API const char* mmla_version(void);

/* A short name for a status code. */
MMLA_API const char* mmla_status_string(mmla_status status);

/* The reason for the last non-success status returned on the calling thread ("" if none). */
MMLA_API const char* mmla_last_error(void);

#ifdef __cplusplus
}
#endif

#endif /* MMLA_MMLA_H */
