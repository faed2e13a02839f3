/* .Call entry points of the exact (Cholesky) solver and of its timing. */
#include "glue.h"
#include "blas_threads.h"
#include "chol.h"
#include "omp_compat.h"

SEXP C_chol_solve(SEXP x, SEXP spec, SEXP noise, SEXP rhs, SEXP threads)
{
  const kernel k = glue_kernel(spec);
  const points p = glue_points(x, "x"), b = glue_points(rhs, "rhs");
  if (b.n != p.n) Rf_error("internal error: rhs has the wrong number of rows");
  SEXP alpha = PROTECT(Rf_duplicate(rhs));
  double *work = (double *)R_alloc((size_t)p.n * p.n, sizeof(double));
  glue_trace tr; /* no trace rows: the callback only answers Ctrl-C */
  glue_trace_init(&tr, 0, 0, 1);
  double cond[2] = {NA_REAL, NA_REAL}; /* 1-norm, reciprocal condition */
  const double *lambda = glue_doubles(noise, p.n, "noise");
  const int nthreads = glue_threads(threads);
  const int blas_saved = blas_threads_serial();
  const int info = chol_solve(&k, &p, lambda, REAL(alpha), b.d, work, cond,
                              nthreads, glue_trace_record, &tr);
  blas_threads_restore(blas_saved);
  const char *names[] = {"alpha", "info", "interrupted", "norm", "rcond", ""};
  SEXP out = PROTECT(Rf_mkNamed(VECSXP, names));
  SET_VECTOR_ELT(out, 0, alpha);
  SET_VECTOR_ELT(out, 1, Rf_ScalarInteger(info == CHOL_STOPPED ? 0 : info));
  SET_VECTOR_ELT(out, 2, Rf_ScalarLogical(info == CHOL_STOPPED));
  SET_VECTOR_ELT(out, 3, Rf_ScalarReal(cond[0]));
  SET_VECTOR_ELT(out, 4, Rf_ScalarReal(cond[1]));
  UNPROTECT(2);
  return out;
}

/* Seconds taken by the phases of chol_solve() on the points x with noise 1:
 * building K, its 1-norm, the factorisation, the condition estimate, and
 * the solves for one and for nrhs right-hand sides; and the block size.
 * For exact_seconds(), which scales them to other sizes.  NULL if
 * interrupted. */
SEXP C_chol_timing(SEXP x, SEXP spec, SEXP nrhs, SEXP threads)
{
  const kernel k = glue_kernel(spec);
  const points p = glue_points(x, "x");
  const int n = p.n, ncol = Rf_asInteger(nrhs), nthreads = glue_threads(threads);
  double *a = (double *)R_alloc((size_t)n * n, sizeof(double));
  double *noise = (double *)R_alloc(n, sizeof(double));
  double *rhs = (double *)R_alloc((size_t)n * ncol, sizeof(double));
  for (int i = 0; i < n; i++) noise[i] = 1.0;
  for (size_t i = 0; i < (size_t)n * ncol; i++) rhs[i] = 1.0;
  glue_trace tr;
  glue_trace_init(&tr, 0, 0, 1);
  double t[7];
  int info;
  const int blas_saved = blas_threads_serial();
  t[0] = omp_get_wtime();
  info = chol_build(&k, &p, noise, a, nthreads, glue_trace_record, &tr) ? CHOL_STOPPED : 0;
  t[1] = omp_get_wtime();
  const double anorm = chol_norm1(a, n);
  t[2] = omp_get_wtime();
  if (info == 0) info = chol_lower(a, n, nthreads, glue_trace_record, &tr);
  t[3] = omp_get_wtime();
  if (info == 0) chol_rcond(a, n, anorm);
  t[4] = omp_get_wtime();
  if (info == 0) info = chol_solve_factored(a, n, rhs, 1, nthreads, glue_trace_record, &tr);
  t[5] = omp_get_wtime();
  if (info == 0) info = chol_solve_factored(a, n, rhs, ncol, nthreads, glue_trace_record, &tr);
  t[6] = omp_get_wtime();
  blas_threads_restore(blas_saved);
  if (info == CHOL_STOPPED) return R_NilValue;
  if (info != 0) Rf_error("internal error: the timing matrix is not positive definite");
  const char *names[] = {"build", "norm", "factor", "rcond", "solve_1", "solve",
                         "block", ""};
  SEXP out = PROTECT(Rf_mkNamed(REALSXP, names));
  for (int i = 0; i < 6; i++) REAL(out)[i] = t[i + 1] - t[i];
  REAL(out)[6] = chol_block_size();
  UNPROTECT(1);
  return out;
}
