/* The driver's check framework and test-data helpers (see driver.h). */
#include <stdio.h>
#include <stdlib.h>

#include "driver.h"
#include "../../src/omp_compat.h"

int n_passed = 0, n_failed = 0;
int quick = 0;

static double section_start = -1.0;

void section(const char *name)
{
  const double now = omp_get_wtime();
  if (section_start >= 0) printf("   (%.1f s)\n", now - section_start);
  section_start = now;
  if (name) printf("-- %s\n", name);
  fflush(stdout);
}

void *xmalloc(size_t size)
{
  void *p = malloc(size ? size : 1);
  if (!p) {
    fprintf(stderr, "out of memory\n");
    exit(2);
  }
  return p;
}

double *dalloc(size_t len) { return xmalloc(len * sizeof(double)); }

/* ------------------------------------------------------------------ */
/* The driver's own random numbers (xorshift64*), independent of rng.c */

static uint64_t test_state = 0x2545F4914F6CDD1DULL;

double test_unif(void)
{
  test_state ^= test_state >> 12;
  test_state ^= test_state << 25;
  test_state ^= test_state >> 27;
  return (double)((test_state * 0x2545F4914F6CDD1DULL) >> 11) / 9007199254740992.0;
}

/* n x d column-major points uniform on [0, width)^d. */
double *random_points(int n, int d, double width)
{
  double *x = dalloc((size_t)n * d);
  for (size_t i = 0; i < (size_t)n * d; i++) x[i] = width * test_unif();
  return x;
}

double *random_matrix(int n, int ncol)
{
  double *a = dalloc((size_t)n * ncol);
  for (size_t i = 0; i < (size_t)n * ncol; i++) a[i] = 2.0 * test_unif() - 1.0;
  return a;
}

/* Squared distance between point i of (x, n) and point j of (y, m). */
double kernel_dr2_at(const kernel *k, double r2)
{
  kernel_dr2(k, &r2, 1);
  return r2;
}

double sqdist(const double *x, int n, int i, const double *y, int m, int j,
              int d)
{
  double s = 0.0;
  for (int c = 0; c < d; c++) {
    const double diff = x[i + (size_t)c * n] - y[j + (size_t)c * m];
    s += diff * diff;
  }
  return s;
}

/* Dense K(x, y) by kernel_value in a naive double loop (n x m). */
double *naive_kernel_matrix(const kernel *k, const double *x, int n,
                            const double *y, int m, int d)
{
  double *K = dalloc((size_t)n * m);
  for (int i = 0; i < n; i++)
    for (int j = 0; j < m; j++)
      K[i + (size_t)j * n] = kernel_value(k, sqdist(x, n, i, y, m, j, d));
  return K;
}

/* ||(K + diag(noise)) alpha - b|| / ||b|| for one column, K explicit. */
double system_residual(const double *K, const double *noise, int n,
                       const double *alpha, const double *b)
{
  double ss = 0.0, bb = 0.0;
  for (int i = 0; i < n; i++) {
    double s = noise[i] * alpha[i];
    for (int j = 0; j < n; j++) s += K[i + (size_t)j * n] * alpha[j];
    ss += (s - b[i]) * (s - b[i]);
    bb += b[i] * b[i];
  }
  return sqrt(ss / bb);
}

/* K(p1[rows], p2) A through the kernel operator, evaluated on the fly. */
void block_matmul(const kernel *k, const points *p1, const int *rows,
                  int nrows, const points *p2, const double *A, int ncol,
                  double *out, int ldo, int nthreads)
{
  const kernel_op op = {k, p1, p2, NULL, 0, NULL, NULL, NULL, 0, NULL};
  kernel_op_rows(&op, rows, nrows, A, ncol, out, ldo, nthreads);
}

