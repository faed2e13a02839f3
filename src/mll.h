/* The exact Gaussian process log marginal likelihood and its gradient with
 * respect to the log hyperparameters, for estimating them on a random subset
 * of the data (O(m^3) time and O(m^2) memory in the subset size m), and
 * the pathwise estimate of its gradient from iterative solves, for
 * estimating them on all n points (O(n^2) time, O(n) memory).
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
 * with a = (K + noise W^{-1})^{-1} y, and grad (length d + 2) to its
 * derivatives with respect to (log l_1, ..., log l_d, log variance,
 * log noise), d = x->d, or 0 for the Tanimoto kernel (no length scales).  x holds the m inputs already divided by the length scales.
 * The callback (NULL for none) is polled between the blocks of the
 * factorisation, the solve and the inverse, as in chol.h.  grad NULL: the
 * value only, without the inverse the gradient needs.  On failure
 * value and grad are left untouched. */
mll_status mll_evaluate(const kernel *k, const points *x, const double *y,
                        double noise, const double *weights, int nthreads,
                        solver_callback callback, void *ctx, double *value,
                        double *grad);

/* The pathwise estimate of the same gradient (Lin, Padhy, Mlodozeniec,
 * Antoran and Hernandez-Lobato 2024, "Improving linear system solvers for
 * hyperparameter optimisation in iterative Gaussian processes", Section 3):
 * with H = K + noise W^{-1}, a = H^{-1} y and v_q = H^{-1} z_q for probes
 * z_q ~ N(0, H) (prior function draws plus noise), E[v_q' dH v_q] =
 * tr(H^{-1} dH), so
 *   grad = a' dH a / 2 - (1/s) sum_q v_q' dH v_q / 2
 * is unbiased for the exact gradient when the solves are exact and the
 * probes exact draws.  sols is m x (1 + nprobes), column-major: a, then
 * the v_q.  It costs one pass over the m (m - 1) / 2 pairs, each
 * O(d + nprobes), for all d + 2 derivatives at once; the callback is polled
 * between chunks of columns.  Status MLL_OK, MLL_NO_MEMORY or MLL_STOPPED;
 * grad is complete only with MLL_OK. */
mll_status mll_pathwise_gradient(const kernel *k, const points *x,
                                 const double *sols, int nprobes, double noise,
                                 const double *weights, int nthreads,
                                 solver_callback callback, void *ctx,
                                 double *grad);

#endif
