/* The exact Gaussian process log marginal likelihood and its gradient with
 * respect to the log hyperparameters, for estimating them on a random subset
 * of the data.  O(m^3) time and O(m^2) memory in the subset size m.
 * No R headers: this file is part of the numerical core. */
#ifndef SDDGP_MLL_H
#define SDDGP_MLL_H

#include "block.h"
#include "kernel.h"
#include "solver.h"

typedef enum {
  MLL_OK = 0,
  MLL_NOT_POSITIVE_DEFINITE = 1, /* Cholesky of K + noise I failed */
  MLL_NO_MEMORY = 2,
  MLL_STOPPED = 3 /* the callback asked to stop (user interrupt) */
} mll_status;

/* For y ~ N(0, K + noise W^{-1}) with K = k(x, x) and W = diag(weights)
 * (weights NULL: W = I), sets
 *   *value = log p(y) = -y'a/2 - log|K + noise W^{-1}|/2 - (m/2) log(2 pi),
 * with a = (K + noise W^{-1})^{-1} y, and grad (length x->d + 2) to its
 * derivatives with respect to (log l_1, ..., log l_d, log variance,
 * log noise).  x holds the m inputs already divided by the length scales.
 * The callback (NULL for none) is polled between the blocks of the
 * factorisation, the solve and the inverse, as in chol.h.  grad NULL: the
 * value only, without the inverse the gradient needs.  On failure
 * value and grad are left untouched. */
mll_status mll_evaluate(const kernel *k, const points *x, const double *y,
                        double noise, const double *weights, int nthreads,
                        solver_callback callback, void *ctx, double *value,
                        double *grad);

#endif
