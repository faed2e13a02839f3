/* Preconditioned conjugate gradients for (K + diag(noise)) alpha = b with
 * many right-hand sides at once, the reference implementation's CG
 * baseline (Lin, Padhy, Antoran et al. 2024, Section 5 of the notes).
 *
 * Every iteration forms one kernel product K P for all columns still
 * running, and each column then takes its own standard PCG step from
 * alpha = 0, or from a given start alpha0 (a warm start: the previous
 * solution when the system changes little, as in hyperparameter
 * estimation).  A column stops (and is frozen) once its relative residual
 * ||b - A alpha|| / ||b|| (the recursively updated residual, as in SciPy)
 * is <= tolerance; the others continue until max_iterations.
 *
 * The preconditioner is P = diag(noise) + L L', with L the rank-k pivoted
 * Cholesky factor of K + jitter I, applied by Woodbury (nystrom.h), or
 * Vecchia's sparse approximation of (K + diag(noise))^-1 (vecchia.h). */
#ifndef SDDGP_CG_H
#define SDDGP_CG_H

#include "block.h"
#include "solver.h"

/* Relative-trace tolerance of the preconditioner's pivoted Cholesky: stop
 * adding columns once the remaining trace is this small a fraction of the
 * initial one (the reference's pivoted_diag_rtol). */
#define CG_PIVCHOL_RTOL 1e-3

typedef struct {
  double tolerance;   /* relative residual at which a column stops; 0 = never */
  int max_iterations;
  int rank;           /* pivoted-Cholesky rank (<= n); 0 = no preconditioner */
  double jitter;      /* the factor approximates K + jitter I */
  int trace_every;    /* iterations between residual reports, >= 1 */
  int nthreads;
  const double *alpha0; /* the start (n x nrhs), or NULL for zero; its
                         * residual costs one more kernel product */
  int neighbours;     /* > 0: Vecchia's preconditioner with this many
                       * neighbours a point, in place of the rank's */
  double time_limit;  /* seconds from the call, the preconditioner's
                       * construction included: no iteration starts that
                       * would end past them if as long as the last one;
                       * <= 0 or not finite: none */
} cg_options;

/* alpha (n x nrhs, column-major) receives the iterates; *iterations_done is
 * the number of kernel products formed.  The callback gets the relative
 * residual of every column (frozen ones at their final value) every
 * trace_every iterations and at the last one, and NULL otherwise; it is
 * also polled, with NULL, while the preconditioner is built and between
 * slabs of rows of each kernel product, so Ctrl-C is answered quickly even
 * when one product takes seconds.  Status: SOLVER_TOLERANCE when every
 * column converged, SOLVER_MAX_ITER otherwise, SOLVER_DIVERGED on
 * breakdown (p'Ap <= 0 or non-finite values: the matrix is not numerically
 * positive definite), SOLVER_TIME_LIMIT when time ran out with columns
 * still running (after at least one iteration), SOLVER_STOPPED,
 * SOLVER_NO_MEMORY. */
solver_status cg_solve(const kernel_op *K, const double *noise,
                       const double *rhs, int nrhs, const cg_options *opt,
                       double *alpha, int *iterations_done,
                       solver_callback callback, void *ctx);

#endif
