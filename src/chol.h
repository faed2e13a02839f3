/* The exact solver: Cholesky factorisation of K + diag(noise) with LAPACK.
 * O(n^3) time and O(n^2) memory, so for small data and as the ground truth
 * every iterative solver is tested against. */
#ifndef SDDGP_CHOL_H
#define SDDGP_CHOL_H

#include "block.h"
#include "kernel.h"

/* Overwrite `a` (n x n, column-major) with K(x, x) + diag(noise) and then
 * with its lower Cholesky factor.  Returns LAPACK's info: 0 on success, i > 0
 * if the leading minor of order i is not positive definite. */
int chol_factor(const kernel *k, const points *x, const double *noise,
                double *a, int nthreads);

/* Solve (K + diag(noise)) alpha = rhs for nrhs columns; rhs is overwritten
 * by the solution.  `a` is n x n workspace left holding the factor. */
int chol_solve(const kernel *k, const points *x, const double *noise,
               double *rhs, int nrhs, double *a, int nthreads);

#endif
