/* A C program that includes only mmla/cblas.h and links libmmla, as a CBLAS user would. It checks
 * cblas_sgemm over every order/transpose combination (beta = 0 with NaN in C included) against a
 * double-precision reference and, when the netlib reference BLAS is present (Debian's libblas3:
 * <libdir>/blas/libblas.so.3; plain libblas.so.3 may be an alternative such as OpenBLAS), against
 * its sgemm_ too. Prints "N passed, N failed". */
#include <mmla/cblas.h>

#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef void (*fortran_sgemm)(const char*, const char*, const int*, const int*, const int*, const float*,
                              const float*, const int*, const float*, const int*, const float*, float*,
                              const int*, size_t, size_t);

static int passed, failed;

static float rnd(unsigned* s) {
  *s = *s * 1664525u + 1013904223u;
  return (float)((*s >> 8) & 0xffff) / 32768.0f - 1.0f;
}

/* Element (i, j) of a stored matrix with the given layout and leading dimension. */
static size_t at(int row_major, int i, int j, int ld) {
  return row_major ? (size_t)i * ld + j : (size_t)j * ld + i;
}

static void check(const char* what, int ok) {
  if (ok) {
    ++passed;
  } else {
    ++failed;
    printf("FAILED: %s\n", what);
  }
}

int main(void) {
#ifndef MMLA_NETLIB_BLAS
#define MMLA_NETLIB_BLAS "libblas.so.3"
#endif
  void* blas = dlopen(MMLA_NETLIB_BLAS, RTLD_NOW | RTLD_LOCAL);
  fortran_sgemm ref_sgemm = blas ? (fortran_sgemm)dlsym(blas, "sgemm_") : NULL;
#ifdef MMLA_REQUIRE_REFERENCE_BLAS
  check("reference BLAS " MMLA_NETLIB_BLAS " with sgemm_ is available", ref_sgemm != NULL);
#endif
  if (ref_sgemm == NULL)
    printf("note: no %s here; comparing with the double reference only\n", MMLA_NETLIB_BLAS);
  else
    printf("comparing with the reference BLAS %s\n", MMLA_NETLIB_BLAS);

  const int shapes[][3] = {{1, 1, 1}, {5, 7, 3}, {31, 17, 45}, {64, 65, 66}, {100, 3, 257}};
  const double u = ldexp(1.0, -24);
  for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; ++s) {
    const int m = shapes[s][0], n = shapes[s][1], k = shapes[s][2];
    for (int order = 0; order < 2; ++order)
      for (int ta = 0; ta < 2; ++ta)
        for (int tb = 0; tb < 2; ++tb)
          for (int bi = 0; bi < 2; ++bi) {
            const int row = order == 0;
            const float alpha = 0.75f, beta = bi ? 0.5f : 0.0f;
            const int ar = ta ? k : m, ac = ta ? m : k, br = tb ? n : k, bc = tb ? k : n;
            const int lda = (row ? ac : ar) + 2, ldb = (row ? bc : br) + 1, ldc = (row ? n : m) + 3;
            const size_t asz = (size_t)lda * (row ? ar : ac), bsz = (size_t)ldb * (row ? br : bc);
            const size_t csz = (size_t)ldc * (row ? m : n);
            float *a = malloc(asz * sizeof(float)), *b = malloc(bsz * sizeof(float));
            float *c = malloc(csz * sizeof(float)), *c0 = malloc(csz * sizeof(float));
            float* cref = malloc(csz * sizeof(float));
            unsigned seed = (unsigned)(m * 131 + n * 17 + k + order * 7 + ta * 3 + tb * 5);
            for (size_t i = 0; i < asz; ++i) a[i] = rnd(&seed);
            for (size_t i = 0; i < bsz; ++i) b[i] = rnd(&seed);
            for (size_t i = 0; i < csz; ++i) c0[i] = beta == 0.0f ? NAN : rnd(&seed);
            memcpy(c, c0, csz * sizeof(float));
            memcpy(cref, c0, csz * sizeof(float));

            cblas_sgemm(row ? CblasRowMajor : CblasColMajor, ta ? CblasTrans : CblasNoTrans,
                        tb ? CblasTrans : CblasNoTrans, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
            if (ref_sgemm) {
              /* Fortran is column-major; a row-major C is the column-major C^T = op(B)^T op(A)^T. */
              const char tA = ta ? 'T' : 'N', tB = tb ? 'T' : 'N';
              if (row)
                ref_sgemm(&tB, &tA, &n, &m, &k, &alpha, b, &ldb, a, &lda, &beta, cref, &ldc, 1, 1);
              else
                ref_sgemm(&tA, &tB, &m, &n, &k, &alpha, a, &lda, b, &ldb, &beta, cref, &ldc, 1, 1);
            }
            int ok_ref = 1, ok_blas = 1, ok_pad = 1;
            for (int i = 0; i < m; ++i)
              for (int j = 0; j < n; ++j) {
                double sum = 0, abs_sum = 0;
                for (int p = 0; p < k; ++p) {
                  const float x = ta ? a[at(row, p, i, lda)] : a[at(row, i, p, lda)];
                  const float y = tb ? b[at(row, j, p, ldb)] : b[at(row, p, j, ldb)];
                  sum += (double)x * y;
                  abs_sum += fabs((double)x * y);
                }
                const size_t ci = at(row, i, j, ldc);
                double expect = alpha * sum, scale = fabs(alpha) * abs_sum;
                if (beta != 0.0f) expect += beta * (double)c0[ci], scale += fabs(beta * (double)c0[ci]);
                /* k is summed in blocks of KC >= 64 (docs/numerics.md): (k + 2 ceil(k/64) + 2) u. */
                const double bound = (k + 2 * ((k + 63) / 64) + 2) * u * scale * 1.01;
                if (!(fabs(c[ci] - expect) <= bound)) ok_ref = 0;
                if (ref_sgemm && !(fabs((double)c[ci] - cref[ci]) <= 2 * bound)) ok_blas = 0;
              }
            for (size_t idx = 0; idx < csz; ++idx) {
              const int i = row ? (int)(idx / ldc) : (int)(idx % ldc),
                        j = row ? (int)(idx % ldc) : (int)(idx / ldc);
              if ((i >= m || j >= n) && memcmp(&c[idx], &c0[idx], sizeof(float)) != 0) ok_pad = 0;
            }
            char what[160];
            snprintf(what, sizeof what, "%dx%dx%d %s trans_a=%d trans_b=%d beta=%g", m, n, k,
                     row ? "row-major" : "col-major", ta, tb, beta);
            char buf[200];
            snprintf(buf, sizeof buf, "%s: matches double reference", what);
            check(buf, ok_ref);
            snprintf(buf, sizeof buf, "%s: padding of C untouched", what);
            check(buf, ok_pad);
            if (ref_sgemm) {
              snprintf(buf, sizeof buf, "%s: matches reference BLAS sgemm_", what);
              check(buf, ok_blas);
            }
            free(a), free(b), free(c), free(c0), free(cref);
          }
  }
  printf("%d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}
