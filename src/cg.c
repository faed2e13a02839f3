#include <math.h>
#include <string.h>
#include "cg.h"
#include "nystrom.h"
#include "threads.h"
#include "vecchia.h"
#include "workspace.h"

/* Work (rows x columns x (d + right-hand sides)) of one slab of a kernel
 * product, a few hundredths of a second on one core: the callback is polled
 * between slabs. */
#define CG_SLAB_WORK 1e8

/* Q = (K + diag(noise)) P for ncol columns, in slabs of rows with the
 * callback polled between them.  Returns non-zero if it asked to stop. */
static int system_product(const kernel_op *K, const double *noise,
                          const int *rows, const double *P, int ncol,
                          double *Q, int iteration, int nthreads,
                          solver_callback callback, void *ctx)
{
  const int n = K->x2->n;
  const int slab = block_slab(n, (double)n * (K->x2->d + ncol), CG_SLAB_WORK);
  for (int r0 = 0; r0 < n; r0 += slab) {
    const int len = n - r0 < slab ? n - r0 : slab;
    kernel_op_rows(K, rows + r0, len, P, ncol, Q + r0, n, nthreads);
    if (r0 + len < n && solver_poll(callback, ctx, iteration)) return 1;
  }
  for (int c = 0; c < ncol; c++)
    for (int i = 0; i < n; i++)
      Q[i + (size_t)c * n] += noise[i] * P[i + (size_t)c * n];
  return 0;
}

/* The running columns occupy slots 0..nact-1 of X, R and P, so that one
 * kernel product covers exactly them; col[s] is the right-hand side in
 * slot s. */
typedef struct {
  int n, nact;
  double *X, *R, *P, *rz;
  int *col;
} cg_slots;

/* Slot s is done: its iterate goes to alpha and the last running column
 * moves into its place. */
static void retire(cg_slots *st, int s, double *alpha)
{
  const size_t n = (size_t)st->n, bytes = sizeof(double) * n;
  const int e = --st->nact;
  memcpy(alpha + (size_t)st->col[s] * n, st->X + (size_t)s * n, bytes);
  if (s == e) return;
  memcpy(st->X + (size_t)s * n, st->X + (size_t)e * n, bytes);
  memcpy(st->R + (size_t)s * n, st->R + (size_t)e * n, bytes);
  memcpy(st->P + (size_t)s * n, st->P + (size_t)e * n, bytes);
  st->rz[s] = st->rz[e];
  st->col[s] = st->col[e];
}

/* Retire every running column whose residual is down to the tolerance
 * (from the last slot down, so each moved column has been tested). */
static void retire_converged(cg_slots *st, const double *res, double tol,
                             double *alpha)
{
  for (int s = st->nact - 1; s >= 0; s--)
    if (res[st->col[s]] <= tol) retire(st, s, alpha);
}

/* The preconditioner: Vecchia's when `vecchia`, else the Nystrom one (the
 * identity at rank 0). */
typedef struct {
  int vecchia;
  vecchia vc;
  nystrom ny;
} preconditioner;

/* z = P^-1 r for the running columns, then p = z + (r'z / r'z_old) p
 * (p = z when `first`).  Returns 0 if some r'z is not positive and finite. */
static int new_directions(cg_slots *st, const preconditioner *w, double *Z,
                          int first, int nthreads)
{
  const int n = st->n;
  if (w->vecchia)
    vecchia_apply(&w->vc, st->R, st->nact, Z, nthreads);
  else
    nystrom_apply(&w->ny, st->R, st->nact, Z, nthreads);
  for (int s = 0; s < st->nact; s++) {
    const double *z = Z + (size_t)s * n;
    double *p = st->P + (size_t)s * n;
    const double rz = solver_dot(st->R + (size_t)s * n, z, n);
    if (!(rz > 0) || !isfinite(rz)) return 0;
    if (first) {
      memcpy(p, z, sizeof(double) * (size_t)n);
    } else {
      const double beta = rz / st->rz[s];
      for (int i = 0; i < n; i++) p[i] = z[i] + beta * p[i];
    }
    st->rz[s] = rz;
  }
  return 1;
}

solver_status cg_solve(const kernel_op *K, const double *noise,
                       const double *rhs, int nrhs, const cg_options *opt,
                       double *alpha, int *iterations_done,
                       solver_callback callback, void *ctx)
{
  const int n = K->x2->n;
  const size_t len = (size_t)n * nrhs;
  solver_status status = SOLVER_NO_MEMORY;
  preconditioner w = {opt->neighbours > 0, {0}, {n, 0, noise, NULL, NULL, NULL, NULL, NULL}};
  /* No column is running until the slots are filled. */
  cg_slots st = {n, 0, NULL, NULL, NULL, NULL, NULL};
  double *Z, *Q, *bnorm, *res;
  int *rows;
  workspace ws;
  const double started = omp_get_wtime();
  /* The clock is read only when there is a limit. */
  const int timed = opt->time_limit > 0 && isfinite(opt->time_limit);
  *iterations_done = 0;

  workspace_init(&ws);
  WORKSPACE_ADD(&ws, st.X, len, WORKSPACE_ZEROED);
  WORKSPACE_ADD(&ws, st.R, len, 0);
  WORKSPACE_ADD(&ws, st.P, len, 0);
  WORKSPACE_ADD(&ws, st.rz, nrhs, 0);
  WORKSPACE_ADD(&ws, st.col, nrhs, 0);
  WORKSPACE_ADD(&ws, Z, len, 0);
  WORKSPACE_ADD(&ws, Q, len, 0);
  WORKSPACE_ADD(&ws, bnorm, nrhs, 0);
  WORKSPACE_ADD(&ws, res, nrhs, 0);
  WORKSPACE_ADD(&ws, rows, n, 0);
  if (workspace_alloc(&ws)) goto done;
  status = w.vecchia ?
    vecchia_init(&w.vc, &ws, K, noise, opt->neighbours, nrhs, opt->nthreads,
                 callback, ctx) :
    nystrom_init(&w.ny, &ws, K, opt->rank, opt->jitter, CG_PIVCHOL_RTOL,
                 nrhs, opt->nthreads, callback, ctx);
  if (status != SOLVER_MAX_ITER) goto done;

  for (int i = 0; i < n; i++) rows[i] = i;
  memcpy(st.R, rhs, sizeof(double) * len);
  st.nact = nrhs;
  for (int c = 0; c < nrhs; c++) st.col[c] = c;
  if (opt->alpha0) {
    /* R = b - A alpha0, with Q as scratch. */
    memcpy(st.X, opt->alpha0, sizeof(double) * len);
    if (system_product(K, noise, rows, st.X, nrhs, Q, 0, opt->nthreads,
                       callback, ctx)) {
      status = SOLVER_STOPPED;
      goto done;
    }
    for (size_t i = 0; i < len; i++) st.R[i] -= Q[i];
  }
  for (int c = 0; c < nrhs; c++) {
    /* Summed like every other dot product of CG. */
    const double ss = solver_dot(rhs + (size_t)c * n, rhs + (size_t)c * n, n);
    const double *r = st.R + (size_t)c * n;
    bnorm[c] = solver_rhs_norm(ss);
    /* 0 for a zero right-hand side at alpha = 0, which solves it. */
    res[c] = sqrt(solver_dot(r, r, n)) / bnorm[c];
    if (!isfinite(ss) || !isfinite(res[c])) status = SOLVER_DIVERGED;
  }
  if (status == SOLVER_DIVERGED) goto done;
  retire_converged(&st, res, opt->tolerance, alpha);
  if (st.nact > 0 && !new_directions(&st, &w, Z, 1, opt->nthreads)) {
    status = SOLVER_DIVERGED;
    goto done;
  }

  for (int t = 0; t < opt->max_iterations && st.nact > 0; t++) {
    const double iteration_start = timed ? omp_get_wtime() : 0.0;
    if (system_product(K, noise, rows, st.P, st.nact, Q, t, opt->nthreads,
                       callback, ctx)) {
      status = SOLVER_STOPPED;
      break;
    }
    for (int s = 0; s < st.nact && status != SOLVER_DIVERGED; s++) {
      double *x = st.X + (size_t)s * n, *r = st.R + (size_t)s * n;
      const double *p = st.P + (size_t)s * n, *q = Q + (size_t)s * n;
      const double pq = solver_dot(p, q, n);
      /* Breakdown: A is not positive definite in this direction. */
      if (!(pq > 0) || !isfinite(pq)) {
        status = SOLVER_DIVERGED;
        break;
      }
      const double a = st.rz[s] / pq;
      for (int i = 0; i < n; i++) {
        x[i] += a * p[i];
        r[i] -= a * q[i];
      }
      const int c = st.col[s];
      res[c] = sqrt(solver_dot(r, r, n)) / bnorm[c];
      if (!isfinite(res[c])) status = SOLVER_DIVERGED;
    }
    if (status == SOLVER_DIVERGED) break;
    *iterations_done = t + 1;
    retire_converged(&st, res, opt->tolerance, alpha);
    if (st.nact > 0 && !new_directions(&st, &w, Z, 0, opt->nthreads)) {
      status = SOLVER_DIVERGED;
      break;
    }
    /* Out of time when another iteration as long as this one would end
     * past the limit.  Such a run reports its last residuals, so the
     * trace ends with those of the iterate handed back. */
    int out_of_time = 0;
    if (timed && st.nact > 0) {
      const double now = omp_get_wtime();
      out_of_time = now - started + (now - iteration_start) > opt->time_limit;
    }
    const int report = (t + 1) % opt->trace_every == 0 || st.nact == 0 ||
                       t + 1 == opt->max_iterations || out_of_time;
    if (callback && callback(ctx, t + 1, report ? res : NULL)) {
      status = SOLVER_STOPPED;
      break;
    }
    if (out_of_time) {
      status = SOLVER_TIME_LIMIT;
      break;
    }
  }
  if (status == SOLVER_MAX_ITER && st.nact == 0) status = SOLVER_TOLERANCE;

done:
  /* Columns still running hand over their current iterate. */
  for (int s = 0; s < st.nact; s++)
    memcpy(alpha + (size_t)st.col[s] * n, st.X + (size_t)s * n,
           sizeof(double) * (size_t)n);
  workspace_free(&ws);
  return status;
}
