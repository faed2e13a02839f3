/* Stochastic dual descent (Lin, Padhy, Antoran et al. 2024, Algorithm 1)
 * for (K + diag(noise)) alpha = b with many right-hand sides at once.
 *
 * Per step: draw a batch I of B indices; the dual gradient estimate is
 *   g = (1/B) sum_{i in I} e_i [ K_i alpha + noise_i alpha_i - b_i ]
 * (the paper's (n/B) sum ... scaled by 1/n, so the step size is the
 * paper's beta n); Nesterov momentum in the optax form
 *   m <- g + rho m,   alpha <- alpha - lr (g + rho m);
 * and geometric iterate averaging abar <- r alpha + (1 - r) abar, whose
 * final value is the solution.  All right-hand sides share each step's
 * kernel rows, which is what makes posterior samples cheap. */
#ifndef SDDGP_SDD_H
#define SDDGP_SDD_H

#include <stdint.h>
#include "block.h"
#include "kernel.h"
#include "solver.h"

typedef enum {
  SDD_BATCH_UNIFORM = 1,    /* B indices uniform with replacement per step */
  SDD_BATCH_PERMUTATION = 2 /* without replacement within an epoch */
} sdd_batch_sampling;

typedef struct {
  int iterations;
  int batch_size;          /* capped at n */
  sdd_batch_sampling batch_sampling;
  const double *step_size; /* one per right-hand side: the paper's beta n */
  double momentum;
  double averaging_rate;   /* r of the geometric average */
  int check_every;         /* iterations between residual probes */
  int probe_size;          /* rows in each residual probe, >= 1 */
  double tolerance;        /* stop once every probed residual is below; 0 = never */
  uint64_t seed;
  int nthreads;
} sdd_options;

/* The callback gets, after each residual probe, nrhs estimates of
 * ||(K + diag(noise)) abar - b|| / ||b|| (a fresh random probe of rows each
 * time; unbiased for the squared norm).
 * alpha_bar (n x nrhs, column-major) receives the averaged iterate.
 * *iterations_done is the number of completed steps. */
solver_status sdd_solve(const kernel_op *K, const double *noise,
                        const double *rhs, int nrhs, const sdd_options *opt,
                        double *alpha_bar, int *iterations_done,
                        solver_callback callback, void *ctx);

/* Relative residual estimate for each column of alpha from `probe_size`
 * random rows (probe_size >= 1) drawn with counters starting at
 * `probe_id * probe_size`; needs workspace of probe_size * nrhs doubles and
 * probe_size ints.
 * Shared by SDD's trace and by other iterative solvers' diagnostics. */
void residual_probe(const kernel_op *K, const double *noise,
                    const double *rhs, const double *rhs_norm, int nrhs,
                    const double *alpha, int probe_size, uint64_t seed,
                    uint64_t probe_id, int nthreads, double *work, int *rows,
                    double *residuals);

#endif
