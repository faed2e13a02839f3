/* Stochastic dual descent (Lin, Padhy, Antoran et al. 2024, Algorithm 1)
 * for (K + diag(noise)) alpha = b with many right-hand sides at once, and
 * the gradient estimators of the paper's ablations and of the SGD baseline
 * (Lin et al. 2023), all run by the same loop.
 *
 * Per step t a gradient estimate g, scaled by 1/n so that the step size is
 * the paper's beta n, from one of the estimators below (I: a batch of B
 * indices, B = n meaning all of them in order; L: an n x m random Fourier
 * feature matrix, L L' ~ K, drawn afresh every step):
 *   dual, coordinates  g = (1/B) sum_{i in I} e_i [K_i a + noise_i a_i - b_i]
 *   dual, features     g = (L L' a + diag(noise) a - b) / n
 *   dual, K a only     g = ((n/B) sum_{i in I} e_i K_i a + diag(noise) a - b) / n
 *   primal, full batch g = K ((K + diag(noise)) a - b) / n
 *   primal, SGD        g = [(n/B) K_I' (K_I a - b_err_I)
 *                           + L L' (diag(noise) a - b_reg)] / n
 * with b_err = b - b_reg (Lin et al. 2023 put the samples' noise draws in
 * the regulariser: b_reg = zeta, b_err = f0(X)).  Then Nesterov momentum in
 * the optax form
 *   m <- g + rho m,   a <- a - lr (g + rho m),
 * and an average abar of the iterates (geometric, abar <- r a + (1 - r) abar,
 * or arithmetic from a given iteration on), whose final value is the
 * solution.  a and abar start at zero or at a given warm start (for
 * example nystrom_solve()'s approximate solution).  All right-hand sides share each step's kernel rows and
 * features, which is what makes posterior samples cheap. */
#ifndef SDDGP_SDD_H
#define SDDGP_SDD_H

#include <stdint.h>
#include "block.h"
#include "kernel.h"
#include "shard.h"
#include "solver.h"

typedef enum {
  SDD_BATCH_UNIFORM = 1,    /* B indices uniform with replacement per step */
  SDD_BATCH_PERMUTATION = 2 /* without replacement within an epoch */
} sdd_batch_sampling;

/* The gradient estimators above.  Zero is SDD's own, so a zero-initialised
 * sdd_options describes plain SDD. */
typedef enum {
  SDD_DUAL_COORDINATES = 0,
  SDD_DUAL_FEATURES = 1,
  SDD_DUAL_KALPHA = 2,
  SDD_PRIMAL_FULL = 3,
  SDD_PRIMAL_SGD = 4
} sdd_estimator;

/* Error metrics of the first right-hand side (the posterior mean's system),
 * evaluated at chosen iterations only: each costs a full kernel product. */
typedef struct {
  const int *at;           /* iterations, increasing; n_at of them */
  int n_at;
  const double *reference; /* n reference weights, or NULL */
  const kernel_op *test;   /* K(test inputs, x), or NULL */
  const double *test_y;    /* test->x1->n targets when test is set */
} sdd_metrics;

/* The callback gets SDD_TRACE_VALUES(nrhs) values whenever the step probed
 * the residuals or evaluated the metrics (NULL otherwise):
 *   [0, nrhs)  estimated ||(K + diag(noise)) abar - b|| / ||b|| per system
 *              (a fresh random probe of rows; unbiased for the squared
 *              norm), NaN when not probed this step;
 *   nrhs + 0   (abar - ref)' K (abar - ref), NaN when not evaluated;
 *   nrhs + 1   ||K (abar - ref)||^2, likewise;
 *   nrhs + 2   root mean squared error of K(test, x) abar against test_y;
 *   nrhs + 3   seconds spent on metrics so far (to leave out of timings). */
#define SDD_TRACE_EXTRA 4
#define SDD_TRACE_VALUES(nrhs) ((nrhs) + SDD_TRACE_EXTRA)

typedef struct {
  int iterations;
  int batch_size;          /* capped at n; n means the full gradient */
  sdd_batch_sampling batch_sampling;
  sdd_estimator estimator;
  int features;            /* m of the feature estimators, >= 1 for them */
  const double *rhs_reg;   /* b_reg of the primal SGD estimator (n x nrhs),
                              or NULL for zero */
  const double *step_size; /* one per right-hand side: the paper's beta n */
  const double *clip;      /* NULL, or per right-hand side the largest L2
                              norm of a dense estimator's g (0: no clipping) */
  const double *alpha0;    /* initial iterate of alpha and abar (n x nrhs),
                              or NULL for zero; the momentum starts at 0 */
  double momentum;
  double averaging_rate;   /* r of the geometric average */
  int averaging_start;     /* > 0: abar is instead the arithmetic mean of the
                              iterates from this iteration (1-based) on, and
                              the current iterate before it */
  int check_every;         /* iterations between residual probes */
  int probe_size;          /* rows in each residual probe, >= 1 */
  double tolerance;        /* stop once every probed residual is below; 0 = never */
  int stop_stalled;        /* non-zero: stop with SOLVER_STALLED once the
                              residuals seem to fall too slowly to reach
                              the tolerance within `iterations` (sdd_stalled()) */
  double time_limit;       /* seconds of iterations before stopping with
                              SOLVER_TIME_LIMIT (the last step probes the
                              residuals); 0 or INFINITY = none */
  sdd_metrics metrics;
  uint64_t seed;
  int nthreads;
  /* Resuming a run where an earlier one stopped (the chunked solves of
   * R/future.R): the index of the first step (0 for a fresh run), with
   * abar and the momentum at that point (NULL: alpha0, and zero).  Steps
   * draw their batches from their index, so a run stopped and resumed
   * takes the same steps as one run straight through. */
  int first_iteration;
  const double *alpha_bar0, *momentum0;
  /* The first step (1-based) at which the tolerance may stop the run; 0 or
   * less: any. */
  int tolerance_from;
  /* Where to leave the final iterate and momentum (n x nrhs each) for a
   * later resumed run, or NULL. */
  double *alpha_out, *momentum_out;
  /* NULL, or where to add the seconds spent updating the coefficients
   * (a sharded solve's processes each update their own: benchmarks). */
  double *update_seconds;
  /* NULL, or the processes that share K's columns (shard.h), each running
   * this same solve: every product with K is then summed across them, with
   * the bits of one process, and each updates the coordinates of its own
   * columns, the state gathered at the end (and the rows a residual probe
   * or a metric reads, when they do) into every process's.  The dual
   * coordinate estimator only; no time limit (the processes must stop at
   * the same step). */
  shard_comm *shard;
} sdd_options;

/* alpha_bar (n x nrhs, column-major) receives the averaged iterate.
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
