/* Doubly stochastic functional gradients (Dai, Xie, He, Liang, Raj, Balcan
 * and Song 2014, Algorithms 1-2 in their mini-batch / feature-block form)
 * for the GP posterior mean as kernel ridge regression:
 *
 *   min_f (1/n) sum_i (w_i / 2) (f(x_i) - b_i)^2 + (nu / 2) ||f||_H^2,
 *   nu = lambda / n,  w_i = lambda / noise_i,  lambda = mean(noise),
 *
 * whose minimiser is k(., X) (K + diag(noise))^{-1} b: the weights make
 * heteroscedastic noise exact, and are all 1 for a single noise variance.
 * (The paper's "nu = 2 sigma^2" belongs to a summed, un-halved loss.)
 *
 * Step t draws B data points and a block of r random Fourier features
 * phi_{t,k}, evaluates the current f at the batch from all earlier blocks,
 * decays every older coefficient by (1 - gamma_t nu) and appends
 *   alpha_{t,k} = -(gamma_t / B) sum_j w_j (f(x_j) - b_j) phi_{t,k}(x_j),
 * the stochastic functional gradient with k(x, .) replaced by the block's
 * feature average.  The decay is a global scale (O(1) per step).  Features
 * are never stored: block t is regenerated from (seed, t) whenever f is
 * evaluated, so a step costs O(t r B d) and memory is the (T r) x nrhs
 * coefficients.  All right-hand sides share batches and features. */
#ifndef SDDGP_DSG_H
#define SDDGP_DSG_H

#include <stdint.h>
#include "block.h"
#include "kernel.h"
#include "solver.h"

/* The basis a DSG run builds: feature j (of block j / r) is
 *   phi_j(x) = sqrt(2 sigma_f^2 / r) cos(omega_j' x + b_j),
 * with (omega_j, b_j) feature j of rff_draw_range(seed), on inputs divided
 * by the length scales.  E[sum over one block of phi(x) phi(x')] = k(x, x'). */
typedef struct {
  const kernel *k;
  int d;
  int block;     /* r: features per step */
  uint64_t seed; /* of the features */
} dsg_basis;

/* out (p->n x ncol, leading dimension ldo) = sum over features
 * j = first..first+nfeat-1 of phi_j(p) A[j - first + c * lda].  Features
 * are regenerated a fixed-size chunk at a time and the chunks summed in
 * order, so the result does not depend on nthreads.  Returns 0, or -1 when
 * out of memory. */
int dsg_basis_matmul(const dsg_basis *b, uint64_t first, int nfeat,
                     const points *p, const double *A, int lda, int ncol,
                     double *out, int ldo, int nthreads);

typedef struct {
  int iterations; /* T */
  int batch_size; /* B, drawn uniformly with replacement */
  double step_size;  /* gamma_0; gamma_0 nu < 1 */
  double step_decay; /* gamma_t = gamma_0 / (1 + t / step_decay); INFINITY:
                        constant */
  int check_every;   /* iterations between trace records */
  int probe_size;    /* training rows of the residual probe, >= 1 */
  uint64_t seed;     /* batches and probe rows (not the features) */
  int nthreads;
} dsg_options;

/* Runs T steps on inputs x (scaled) with targets rhs (n x nrhs).  alpha
 * ((T r) x nrhs, leading dimension T r) receives the coefficients of the
 * basis, the final scale folded in.  After every step the relative residual
 * ||f(X_P) - b_P|| / ||b_P|| on a fixed probe of training rows is updated
 * (O(r P) per step: only the new block is evaluated there); it tends to the
 * exact solution's residual, not to 0.  The callback receives it every
 * check_every steps and at the last one.  A non-finite coefficient or a
 * probe residual above 2 stops the run with SOLVER_DIVERGED. */
solver_status dsg_solve(const dsg_basis *basis, const points *x,
                        const double *noise, const double *rhs, int nrhs,
                        const dsg_options *opt, double *alpha,
                        int *iterations_done, solver_callback callback,
                        void *ctx);

#endif
