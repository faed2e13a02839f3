/* The exact solver: Cholesky factorisation of K + diag(noise).  O(n^3) time
 * and O(n^2) memory, so for small data and as the ground truth every
 * iterative solver is tested against.  The factorisation and the solves
 * are blocked here rather than left to one LAPACK call so that they use
 * the package's threads (R's reference BLAS has none) and answer Ctrl-C
 * between blocks: a single dpotrf on 20000 points runs for half an hour. */
#ifndef SDDGP_CHOL_H
#define SDDGP_CHOL_H

#include "block.h"
#include "kernel.h"
#include "solver.h"

/* Returned when the callback asked to stop, and when scratch memory could
 * not be allocated. */
#define CHOL_STOPPED (-1)
#define CHOL_NO_MEMORY (-2)

/* Rows and columns of the blocks below: 128, or 512 with OpenBLAS. */
int chol_block_size(void);

/* Overwrite the lower triangle of `a` (n x n, column-major, symmetric)
 * with its Cholesky factor L; the strict upper triangle is not touched.
 * Returns 0 on success, i > 0 if the leading minor of order i is not
 * positive definite (as LAPACK's info), or CHOL_STOPPED.  The callback
 * (NULL for none) is polled between blocks with iteration 0 and no
 * residuals.  The result is the same for any thread count. */
int chol_lower(double *a, int n, int nthreads, solver_callback callback,
               void *ctx);

/* rhs (n x nrhs) := L^-1 rhs (trans "N") or L^-T rhs ("T") for a lower
 * triangular L, by blocks of rows, polling between blocks; the same result
 * for any thread count.  Returns 0 or CHOL_STOPPED. */
int chol_solve_triangular(const double *l, int n, const char *trans,
                          double *rhs, int nrhs, int nthreads,
                          solver_callback callback, void *ctx);

/* rhs (n x nrhs) := (L L')^-1 rhs for the factor L left by chol_lower.
 * Returns 0 or CHOL_STOPPED. */
int chol_solve_factored(const double *l, int n, double *rhs, int nrhs,
                        int nthreads, solver_callback callback, void *ctx);

/* Overwrite the lower triangle of the factor L left by chol_lower with
 * that of (L L')^-1; the strict upper triangle is not touched.  Polls
 * between blocks; the same result for any thread count.  Returns 0,
 * CHOL_STOPPED or CHOL_NO_MEMORY (scratch of one block of columns, n x 128
 * doubles, n x 512 with OpenBLAS). */
int chol_inverse(double *l, int n, int nthreads, solver_callback callback,
                 void *ctx);

/* Overwrite `a` (n x n) with K(x, x) + diag(noise), polling between slabs
 * of columns; non-zero if asked to stop. */
int chol_build(const kernel *k, const points *x, const double *noise,
               double *a, int nthreads, solver_callback callback, void *ctx);

/* max_j sum_i |a_ij|: the 1-norm of the full n x n matrix a. */
double chol_norm1(const double *a, int n);

/* LAPACK's estimate of the reciprocal condition number (1-norm) of L L'
 * from its factor L and the 1-norm of L L'; -1 if its scratch, 4n
 * numbers, could not be allocated. */
double chol_rcond(const double *l, int n, double anorm);

/* Overwrite `a` (n x n) with K(x, x) + diag(noise) and then its lower
 * triangle with the factor, polling while the matrix is built too;
 * returns as chol_lower. */
int chol_factor(const kernel *k, const points *x, const double *noise,
                double *a, int nthreads, solver_callback callback, void *ctx);

/* Solve (K + diag(noise)) alpha = rhs for nrhs columns; rhs is overwritten
 * by the solution.  `a` is n x n workspace left holding the factor.  Unless
 * `cond` is NULL, it receives two numbers: chol_norm1() of K + diag(noise)
 * and chol_rcond().  Returns as chol_lower. */
int chol_solve(const kernel *k, const points *x, const double *noise,
               double *rhs, int nrhs, double *a, double *cond, int nthreads,
               solver_callback callback, void *ctx);

#endif
