/* .Call entry points of conjugate gradients and of its preconditioners'
 * factors, pivoted Cholesky and Vecchia (for tests of the factors
 * themselves, and Vecchia's neighbours for its likelihood). */
#include <string.h>
#include "glue.h"
#include "cg.h"
#include "pivchol.h"
#include "vecchia.h"

/* Most residuals the trace keeps (8 bytes each): beyond this, residuals
 * are reported every few iterations instead of every one. */
#define CG_TRACE_BUDGET 1e7

static solver_status cg_solve_any(const kernel_op *K, const double *noise,
                                  const double *rhs, int nrhs, const void *opt,
                                  double *alpha, int *done, solver_callback cb,
                                  void *ctx)
{
  return cg_solve(K, noise, rhs, nrhs, opt, alpha, done, cb, ctx);
}

/* `settings`: the fields of cg_options that R sets, made by cg_settings(),
 * and the operator's use_cache and precision. */
SEXP C_cg_solve(SEXP x, SEXP spec, SEXP noise, SEXP rhs, SEXP settings,
                SEXP threads)
{
  const kernel k = glue_kernel(spec);
  points p = glue_points(x, "x");
  const points b = glue_points(rhs, "rhs");
  if (b.n != p.n) Rf_error("internal error: rhs has the wrong number of rows");
  cg_options opt;
  GLUE_SET_REAL(opt, settings, tolerance);
  GLUE_SET_INT(opt, settings, max_iterations);
  GLUE_SET_INT(opt, settings, rank);
  GLUE_SET_INT(opt, settings, neighbours);
  GLUE_SET_REAL(opt, settings, jitter);
  GLUE_SET_REAL(opt, settings, time_limit);
  opt.nthreads = glue_threads(threads);
  SEXP alpha0 = glue_list_get(settings, "alpha0");
  opt.alpha0 = Rf_isNull(alpha0) ? NULL : glue_doubles(alpha0, XLENGTH(rhs), "alpha0");
  opt.trace_every =
      1 + (int)((double)opt.max_iterations * b.d / CG_TRACE_BUDGET);

  glue_trace tr;
  glue_trace_init(&tr, b.d, opt.max_iterations / opt.trace_every + 1, opt.nthreads);
  glue_trace_progress(&tr, settings);
  return glue_square_solve(cg_solve_any, &opt, &k, &p, &b, noise, settings,
                           opt.nthreads, &tr);
}

SEXP C_pivchol(SEXP x, SEXP spec, SEXP jitter, SEXP rank, SEXP rel_tol,
               SEXP use_cache, SEXP precision, SEXP threads)
{
  const kernel k = glue_kernel(spec);
  points p = glue_points(x, "x");
  const int nthreads = glue_threads(threads);
  int max_rank = Rf_asInteger(rank), done = 0, interrupted = 0;
  if (max_rank > p.n) max_rank = p.n;
  const kernel_op K = glue_square_operator(&k, &p, use_cache, precision, nthreads,
                                           &interrupted);
  if (interrupted) R_CheckUserInterrupt();

  double *L = (double *)R_alloc((size_t)p.n * max_rank, sizeof(double));
  double *trace = (double *)R_alloc((size_t)max_rank, sizeof(double));
  int *pivots = (int *)R_alloc((size_t)max_rank, sizeof(int));
  const solver_status status =
      pivchol(&K, Rf_asReal(jitter), max_rank, Rf_asReal(rel_tol), nthreads,
              L, pivots, trace, &done, NULL, NULL);
  if (status == SOLVER_NO_MEMORY)
    Rf_error("the pivoted Cholesky factor could not allocate its workspace");

  SEXP Lr = PROTECT(Rf_allocMatrix(REALSXP, p.n, done));
  SEXP piv = PROTECT(Rf_allocVector(INTSXP, done));
  SEXP tr = PROTECT(Rf_allocVector(REALSXP, done));
  memcpy(REAL(Lr), L, sizeof(double) * (size_t)p.n * done);
  for (int m = 0; m < done; m++) {
    INTEGER(piv)[m] = pivots[m] + 1;
    REAL(tr)[m] = trace[m];
  }
  const char *names[] = {"L", "pivots", "trace", ""};
  SEXP out = PROTECT(Rf_mkNamed(VECSXP, names));
  SET_VECTOR_ELT(out, 0, Lr);
  SET_VECTOR_ELT(out, 1, piv);
  SET_VECTOR_ELT(out, 2, tr);
  UNPROTECT(4);
  return out;
}

/* The list C_vecchia_factor() and C_vecchia_neighbours() return from
 * vecchia_init()'s or vecchia_neighbours()' status and P (1-based indices;
 * NA past a point's count): order, neighbours and, with U, coef and scale;
 * or interrupted = TRUE alone.  Frees ws. */
static SEXP vecchia_result(solver_status status, const vecchia *P, workspace *ws)
{
  if (status != SOLVER_MAX_ITER) {
    workspace_free(ws);
    if (status == SOLVER_NO_MEMORY)
      Rf_error("the Vecchia factor could not allocate its workspace");
    const char *stopped[] = {"interrupted", ""};
    SEXP out = PROTECT(Rf_mkNamed(VECSXP, stopped));
    SET_VECTOR_ELT(out, 0, Rf_ScalarLogical(1));
    UNPROTECT(1);
    return out;
  }
  const int n = P->n, m = P->m, with_u = P->coef != NULL;
  const char *names[] = {"order", "neighbours", "interrupted", "coef", "scale", ""};
  const char *names_nb[] = {"order", "neighbours", "interrupted", ""};
  SEXP out = PROTECT(Rf_mkNamed(VECSXP, with_u ? names : names_nb));
  SEXP order = Rf_allocVector(INTSXP, n);
  SET_VECTOR_ELT(out, 0, order);
  SEXP nb = Rf_allocMatrix(INTSXP, m, n);
  SET_VECTOR_ELT(out, 1, nb);
  SET_VECTOR_ELT(out, 2, Rf_ScalarLogical(0));
  for (int i = 0; i < n; i++) {
    INTEGER(order)[i] = P->order[i] + 1;
    for (int a = 0; a < m; a++) {
      const size_t e = (size_t)i * m + a;
      INTEGER(nb)[e] = a < P->count[i] ? P->nb[e] + 1 : NA_INTEGER;
    }
  }
  if (with_u) {
    SEXP coef = Rf_allocMatrix(REALSXP, m, n);
    SET_VECTOR_ELT(out, 3, coef);
    SEXP scale = Rf_allocVector(REALSXP, n);
    SET_VECTOR_ELT(out, 4, scale);
    for (int i = 0; i < n; i++) {
      REAL(scale)[i] = P->scale[i];
      for (int a = 0; a < m; a++) {
        const size_t e = (size_t)i * m + a;
        REAL(coef)[e] = a < P->count[i] ? P->coef[e] : NA_REAL;
      }
    }
  }
  workspace_free(ws);
  UNPROTECT(1);
  return out;
}

SEXP C_vecchia_factor(SEXP x, SEXP spec, SEXP noise, SEXP neighbours, SEXP threads)
{
  const kernel k = glue_kernel(spec);
  points p = glue_points(x, "x");
  const double *nz = glue_doubles(noise, p.n, "noise");
  const int nthreads = glue_threads(threads);
  int interrupted = 0;
  SEXP no_cache = PROTECT(Rf_ScalarLogical(0)), dbl = PROTECT(Rf_mkString("double"));
  const kernel_op K = glue_square_operator(&k, &p, no_cache, dbl, nthreads, &interrupted);
  vecchia P;
  workspace ws;
  workspace_init(&ws);
  glue_trace tr; /* no trace rows: the callback only answers Ctrl-C */
  glue_trace_init(&tr, 0, 0, 1);
  const solver_status status = vecchia_init(&P, &ws, &K, nz, Rf_asInteger(neighbours),
                                            1, nthreads, glue_trace_record, &tr);
  UNPROTECT(2);
  return vecchia_result(status, &P, &ws);
}

SEXP C_vecchia_neighbours(SEXP x, SEXP neighbours, SEXP threads)
{
  const points p = glue_points(x, "x");
  const int nthreads = glue_threads(threads);
  vecchia P;
  workspace ws;
  workspace_init(&ws);
  glue_trace tr;
  glue_trace_init(&tr, 0, 0, 1);
  const solver_status status = vecchia_neighbours(&P, &ws, &p, Rf_asInteger(neighbours),
                                                  nthreads, glue_trace_record, &tr);
  return vecchia_result(status, &P, &ws);
}

/* vecchia_predict() of the columns of R at the points xq; NULL when
 * interrupted. */
SEXP C_vecchia_predict(SEXP x, SEXP xq, SEXP spec, SEXP noise, SEXP neighbours, SEXP R,
                       SEXP threads)
{
  const kernel k = glue_kernel(spec);
  const points p = glue_points(x, "x"), q = glue_points(xq, "xq");
  const double *nz = glue_doubles(noise, p.n, "noise");
  if (q.d != p.d) Rf_error("`xq` must have the columns of `x`");
  if (!Rf_isMatrix(R) || Rf_nrows(R) != p.n) Rf_error("`R` must be a matrix of n rows");
  const double *r = glue_doubles(R, XLENGTH(R), "R");
  const int nthreads = glue_threads(threads), ncol = Rf_ncols(R);
  SEXP out = PROTECT(Rf_allocMatrix(REALSXP, q.n, ncol));
  glue_trace tr; /* no trace rows: the callback only answers Ctrl-C */
  glue_trace_init(&tr, 0, 0, 1);
  const solver_status status = vecchia_predict(&k, &p, nz, &q, Rf_asInteger(neighbours), r,
                                               ncol, REAL(out), nthreads, glue_trace_record,
                                               &tr);
  UNPROTECT(1);
  if (status == SOLVER_NO_MEMORY) Rf_error("Vecchia's prediction could not allocate its workspace");
  return status == SOLVER_STOPPED ? R_NilValue : out;
}
