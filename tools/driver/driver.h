/* The driver's check framework and test-data helpers, shared by driver.c
 * and the per-solver test files tools/driver/test_<solver>.c. */
#ifndef SDDGP_DRIVER_H
#define SDDGP_DRIVER_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "../../src/block.h"
#include "../../src/kernel.h"

extern int n_passed, n_failed;
extern int quick; /* --quick: smaller sizes (valgrind), the same checks */

#define CHECK(cond, ...)                                                  \
  do {                                                                    \
    if (cond) {                                                           \
      n_passed++;                                                         \
    } else {                                                              \
      n_failed++;                                                         \
      fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);               \
      fprintf(stderr, __VA_ARGS__);                                       \
      fputc('\n', stderr);                                                \
    }                                                                     \
  } while (0)

/* |a - b| <= tol * max(1, |b|) */
#define CHECK_CLOSE(a, b, tol, what)                                      \
  do {                                                                    \
    const double a_ = (a), b_ = (b);                                      \
    CHECK(fabs(a_ - b_) <= (tol) * fmax(1.0, fabs(b_)),                   \
          "%s: got %.17g, expected %.17g (tol %g)", what, a_, b_,         \
          (double)(tol));                                                 \
  } while (0)

/* Prints the section's name, and the time the previous section took. */
void section(const char *name);

void *xmalloc(size_t size);
double *dalloc(size_t len);

/* The driver's own random numbers (xorshift64*), independent of rng.c. */
double test_unif(void);

/* n x d column-major points uniform on [0, width)^d. */
double *random_points(int n, int d, double width);

/* n x ncol uniform on [-1, 1). */
double *random_matrix(int n, int ncol);

/* Squared distance between point i of (x, n) and point j of (y, m). */
double sqdist(const double *x, int n, int i, const double *y, int m, int j,
              int d);

/* dk/dr2 at one squared distance, through the engine's array form. */
double kernel_dr2_at(const kernel *k, double r2);

/* Dense K(x, y) by kernel_value in a naive double loop (n x m). */
double *naive_kernel_matrix(const kernel *k, const double *x, int n,
                            const double *y, int m, int d);

/* ||(K + diag(noise)) alpha - b|| / ||b|| for one column, K explicit. */
double system_residual(const double *K, const double *noise, int n,
                       const double *alpha, const double *b);

/* K(p1[rows], p2) A through the kernel operator, evaluated on the fly. */
void block_matmul(const kernel *k, const points *p1, const int *rows,
                  int nrows, const points *p2, const double *A, int ncol,
                  double *out, int ldo, int nthreads);

/* The test groups, one per core file; main() runs them in turn. */
void test_kernels(void);
void test_block(void);
void test_single(void); /* test_single.c: single-precision kernel values */
void test_chol(void);
void test_sdd(void);
void test_cg(void); /* test_cg.c: pivoted Cholesky and conjugate gradients */
void test_rng(void);
void test_rff(void);
void test_svgp(void); /* test_svgp.c: k-means++ and sparse variational GPs */
void test_sgd(void);  /* test_sgd.c: the SDD loop's other gradient estimators */
void test_tanimoto(void); /* test_tanimoto.c: fingerprints, random hashes */
void test_cabcd(void); /* test_cabcd.c: recombination, CaBCD, BCD and Adam */
void test_dsg(void);   /* test_dsg.c: doubly stochastic gradients */
void test_threads(void); /* test_threads.c: the thread policy */
void test_solver(void);  /* test_solver.c: workspace allocator, end of a step */
void test_mll(void);
void test_neighbours(void); /* test_neighbours.c: nearest earlier points */
void test_vecchia_mll(void);     /* test_mll.c: pathwise gradient of the marginal likelihood */
void test_shard(void);   /* test_shard.c: the sharded kernel operator of MPI solves */

#endif
