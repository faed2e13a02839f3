/* Sparse variational GP regression with the collapsed bound (Titsias 2009):
 * M inducing points Z, the optimal Gaussian q(u) in closed form, fixed
 * kernel hyperparameters and noise.
 *
 * With Kmm = k(Z, Z) + jitter * sigma_f^2 I (a jitter relative to the
 * kernel variance keeps the Cholesky factorisation stable when inducing
 * points nearly coincide; the bound and q(u) are those of the jittered
 * Kmm), Kmn = k(Z, X) and Lambda = diag(noise):
 *   Sigma = (Kmm + Kmn Lambda^-1 Knm)^-1,
 *   mean coefficients a = Sigma Kmn Lambda^-1 y   (mean(x) = k(x, Z) a),
 *   q(u) = N(Kmm a, Kmm Sigma Kmm),
 *   ELBO = log N(y | 0, Qnn + Lambda) - tr(Lambda^-1 (Knn - Qnn)) / 2,
 *          Qnn = Knm Kmm^-1 Kmn.
 * Computed stably from L = chol(Kmm) and LB = chol(B), B = I + A A',
 * A = L^-1 Kmn Lambda^-1/2: Sigma = L^-T B^-1 L^-1, and
 * Kmm Sigma Kmm = (L LB^-T)(L LB^-T)'.
 *
 * The training points are processed in chunks of c columns of Kmn (about
 * 2^19 kernel values, c chosen from M alone), so no n x M matrix is ever
 * stored: besides the two M x M factors of the result, an evaluation
 * allocates one M x c chunk of Kmn (4 MB) and O(n + c d) more; with the
 * gradient also three M x M matrices and a second chunk.  Time is
 * O(n M^2) per evaluation (a triangular solve and a rank-c update per
 * chunk), about twice that plus O(M^3) with the gradient.  BLAS calls
 * are split over threads by column blocks of fixed width, so every result
 * is the same for any thread count.
 * No R headers: this file is part of the numerical core. */
#ifndef SDDGP_SVGP_H
#define SDDGP_SVGP_H

#include "block.h"
#include "kernel.h"
#include "solver.h"

typedef struct {
  const kernel *k;
  const points *x;     /* n training inputs, divided by the length scales */
  const double *noise; /* n noise variances */
  const double *y;     /* n targets */
  double jitter;       /* relative to the kernel variance */
  int nthreads;
  /* Polled with NULL residuals between chunks (Ctrl-C), and given the ELBO
   * as its one residual after each refinement step; may be NULL. */
  solver_callback callback;
  void *ctx;
} svgp_problem;

/* What predictions and posterior samples need, in caller memory. */
typedef struct {
  double *coef;     /* M: a */
  double *chol_kmm; /* M x M: L, lower triangle (strict upper zeroed) */
  double *chol_b;   /* M x M: LB, lower triangle (strict upper zeroed) */
  double elbo;
  int not_positive_definite; /* set when Kmm's Cholesky failed at the
                                initial inducing points */
} svgp_result;

typedef enum {
  SVGP_OK = 0,
  SVGP_NOT_POSITIVE_DEFINITE = 1, /* Cholesky of Kmm failed */
  SVGP_NOT_FINITE = 2,            /* the ELBO or its gradient is not finite */
  SVGP_STOPPED = 3,               /* the callback asked to stop */
  SVGP_NO_MEMORY = 4
} svgp_status;

/* The closed-form fit at inducing points z (M x d, scaled like x) into out,
 * and if grad is not NULL the gradient of the ELBO with respect to z
 * (M x d, in the scaled coordinates). */
svgp_status svgp_evaluate(const svgp_problem *p, const points *z,
                          svgp_result *out, double *grad);

/* The fit at z (M x d, column-major, scaled like x); with iterations > 0,
 * first that many Adam steps of size learning_rate (in length-scale units)
 * up the ELBO with respect to z.  z is overwritten by the inducing points of
 * the fit: the best of those visited (the ELBO is evaluated at each), so
 * refinement never lowers the bound.  The callback gets the ELBO at each
 * iterate, iterations 0..iterations.  *iterations_done counts the Adam
 * steps taken.  Returns SOLVER_MAX_ITER; SOLVER_DIVERGED when an iterate
 * gives a non-finite ELBO or gradient or a singular Kmm (or, at the initial
 * points, sets out->not_positive_definite instead); SOLVER_STOPPED;
 * SOLVER_NO_MEMORY. */
solver_status svgp_fit(const svgp_problem *p, double *z, int m,
                       int iterations, double learning_rate,
                       svgp_result *out, int *iterations_done);

#endif
