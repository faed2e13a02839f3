/* The Nystrom approximation of K + diag(noise) by a pivoted Cholesky
 * factor, and its solve by the Woodbury identity: CG's preconditioner and
 * SDD's warm start.
 *
 * P = diag(noise) + L L', with L the rank-k pivoted Cholesky factor of
 * K + jitter I (pivchol.h), is solved by
 *   P^-1 v = D^-1 v - D^-1 L (I_k + L' D^-1 L)^-1 L' D^-1 v,
 * with D = diag(noise) and the k x k system factored once: O(n k^2) to
 * build after the factor's k kernel columns, O(n k) per right-hand side.
 * P is positive definite for any L whenever the noise is. */
#ifndef SDDGP_NYSTROM_H
#define SDDGP_NYSTROM_H

#include "block.h"
#include "solver.h"
#include "workspace.h"

typedef struct {
  int n, k;            /* k = 0: no factor, nystrom_apply copies */
  const double *noise;
  double *S;           /* D^-1 L, n x k */
  double *M;           /* Cholesky factor of I_k + L' D^-1 L */
  double *T;           /* k x ncol_max: after nystrom_apply, beta =
                          (I_k + L' D^-1 L)^-1 L' D^-1 R */
  int *pivots;         /* the factor's k pivots, in order */
  double *Lpp;         /* L's pivot rows, k x k lower triangular */
} nystrom;

/* Builds P from the pivoted Cholesky factor of K + jitter I of rank at most
 * max_rank (none for max_rank <= 0: P is then the identity), stopping
 * early once the remaining trace is at most rel_tol of the initial one
 * (pivchol()).  P's memory (with the factor's pivots and pivot rows) is
 * registered in the caller's workspace ws and
 * allocated there (its size is known only once the factor's rank is), with
 * room for products with up to ncol_max columns; the callback is polled
 * while the factor is built.  P->n and P->noise are set by the caller.
 * Returns SOLVER_MAX_ITER when P is ready, or SOLVER_STOPPED,
 * SOLVER_NO_MEMORY, or SOLVER_DIVERGED when I + L' D^-1 L is not positive
 * definite (the noise is not positive). */
solver_status nystrom_init(nystrom *P, workspace *ws, const kernel_op *K,
                           int max_rank, double jitter, double rel_tol,
                           int ncol_max, int nthreads,
                           solver_callback callback, void *ctx);

/* Z = P^-1 R for ncol <= ncol_max columns (n x ncol, column-major);
 * Z = R when P has no factor. */
void nystrom_apply(const nystrom *P, const double *R, int ncol, double *Z,
                   int nthreads);

/* The approximate solutions of (K + D) alpha = b that warm-start SDD, from
 * the pivoted Cholesky factor L of K (n x k) with pivots m, so that
 * K[:, m] = L L[m, :]' exactly, and beta of nystrom_apply:
 *   NYSTROM_FULL      alpha = P^-1 b = D^-1 (b - L beta), the solution of
 *                     the approximate system (L L' + D) alpha = b;
 *   NYSTROM_INDUCING  alpha = c w on the pivots m and 0 elsewhere, with
 *                     L[m, :]' w = beta: the subset-of-regressors
 *                     (inducing-point) solution on the pivots, whose
 *                     predictions K(x, m) w are those of L L' alpha_FULL.
 *                     It is scaled by the c that minimises the residual
 *                     ||b - c (K + D) w||, so that this is never above
 *                     ||b||, that of 0 (c is 1 when w solves the system);
 *                     (K + D) w costs O(n) more: K[:, m] w = L beta.
 * Both are the exact solution when k = n. */
typedef enum { NYSTROM_FULL = 1, NYSTROM_INDUCING = 2 } nystrom_form;

/* alpha (n x nrhs) = the warm start `form` for rhs, with the factor of K of
 * rank min(rank, n), rank >= 1 (fewer where K's remaining diagonal runs
 * out).  Status as nystrom_init's, SOLVER_MAX_ITER on success. */
solver_status nystrom_solve(const kernel_op *K, const double *noise,
                            const double *rhs, int nrhs, int rank,
                            nystrom_form form, int nthreads, double *alpha,
                            solver_callback callback, void *ctx);

#endif
