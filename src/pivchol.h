/* Greedy pivoted (partial) Cholesky factorisation of K + jitter I, the
 * low-rank part of CG's preconditioner (Harbrecht, Peters and Schneider
 * 2012; as in the reference implementation's linalg_utils.pivoted_cholesky).
 *
 * Step m picks as pivot the point with the largest remaining diagonal
 * (ties: the smallest index), evaluates its kernel column (one column per
 * step, so K is never formed) and appends one column to the factor:
 *   L[:, m] = (K[:, i] + jitter e_i - L[:, <m] L[i, <m]') / sqrt(d_i),
 *   d <- d - L[:, m]^2,
 * starting from d = sigma_f^2 + jitter.  After `rank` steps
 * K + jitter I - L L' is the Schur complement on the unpivoted points:
 * zero on the pivots' rows and columns, positive semi-definite elsewhere. */
#ifndef SDDGP_PIVCHOL_H
#define SDDGP_PIVCHOL_H

#include "block.h"
#include "solver.h"

/* K: the n x n kernel operator (cached or not).  L: n x max_rank,
 * column-major, overwritten (columns past the final rank are zero); row i
 * belongs to point i, so L is lower triangular in pivot order.  pivots:
 * max_rank ints, the 0-based pivot of each step.  trace: max_rank doubles,
 * the remaining trace sum(|d|) over the initial n (sigma_f^2 + jitter) after
 * each step.  *rank: the steps taken.  It stops early once that relative
 * trace is <= rel_tol (SOLVER_TOLERANCE; also when nothing positive is
 * left), else after max_rank <= n steps (SOLVER_MAX_ITER).  The callback
 * (may be NULL) is polled after every step with iteration 0 and no
 * residuals, so Ctrl-C can stop it (SOLVER_STOPPED). */
solver_status pivchol(const kernel_op *K, double jitter, int max_rank,
                      double rel_tol, int nthreads, double *L, int *pivots,
                      double *trace, int *rank, solver_callback callback,
                      void *ctx);

#endif
