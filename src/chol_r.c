/* .Call entry points of the exact (Cholesky) solver and of its timing. */
#include <math.h>
#include <string.h>
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
  /* log det(K + diag(noise)) from the factor left in work, for the log
   * marginal likelihood of the fit (logLik()) at no extra cost. */
  double log_det = NA_REAL;
  if (info == 0) {
    log_det = 0.0;
    for (size_t i = 0; i < (size_t)p.n; i++) log_det += 2.0 * log(work[i + i * p.n]);
  }
  const char *names[] = {"alpha", "info", "interrupted", "norm", "rcond", "log_det", ""};
  SEXP out = PROTECT(Rf_mkNamed(VECSXP, names));
  SET_VECTOR_ELT(out, 0, alpha);
  SET_VECTOR_ELT(out, 1, Rf_ScalarInteger(info == CHOL_STOPPED ? 0 : info));
  SET_VECTOR_ELT(out, 2, Rf_ScalarLogical(info == CHOL_STOPPED));
  SET_VECTOR_ELT(out, 3, Rf_ScalarReal(cond[0]));
  SET_VECTOR_ELT(out, 4, Rf_ScalarReal(cond[1]));
  SET_VECTOR_ELT(out, 5, Rf_ScalarReal(log_det));
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

/* The Cholesky factor L of K(x, x) + diag(noise): an n x n matrix whose
 * lower triangle holds L (the strict upper one is zeroed), for exact
 * posterior variances (predict() of an exact fit without samples).  NULL
 * if interrupted; info as chol_lower otherwise, as attribute "info". */
SEXP C_chol_factor(SEXP x, SEXP spec, SEXP noise, SEXP threads)
{
  const kernel k = glue_kernel(spec);
  const points p = glue_points(x, "x");
  const double *lambda = glue_doubles(noise, p.n, "noise");
  const int n = p.n, nthreads = glue_threads(threads);
  SEXP out = PROTECT(Rf_allocMatrix(REALSXP, n, n));
  double *a = REAL(out);
  glue_trace tr;
  glue_trace_init(&tr, 0, 0, 1);
  const int blas_saved = blas_threads_serial();
  const int info = chol_factor(&k, &p, lambda, a, nthreads, glue_trace_record, &tr);
  blas_threads_restore(blas_saved);
  if (info == CHOL_STOPPED) {
    UNPROTECT(1);
    return R_NilValue;
  }
  for (size_t j = 1; j < (size_t)n; j++)
    memset(a + j * n, 0, j * sizeof(double));
  Rf_setAttrib(out, Rf_install("info"), Rf_ScalarInteger(info));
  UNPROTECT(1);
  return out;
}

/* Exact posterior variances of f at the points xnew, k(x*, x*) -
 * |L^-1 k(X, x*)|^2, given the factor L of C_chol_factor() for the
 * training points x (both divided by the length scales): one triangular
 * solve for all of xnew.  NULL if interrupted. */
SEXP C_chol_variance(SEXP factor, SEXP x, SEXP xnew, SEXP spec, SEXP threads)
{
  const kernel k = glue_kernel(spec);
  const points p = glue_points(x, "x"), q = glue_points(xnew, "xnew");
  if (p.d != q.d) Rf_error("internal error: dimensions differ");
  if (Rf_nrows(factor) != p.n || Rf_ncols(factor) != p.n)
    Rf_error("internal error: the factor does not match the training points");
  const int n = p.n, m = q.n, nthreads = glue_threads(threads);
  double *kx = (double *)R_alloc((size_t)n * m, sizeof(double));
  kernel_block_matrix(&k, &p, &q, kx, nthreads);
  glue_trace tr;
  glue_trace_init(&tr, 0, 0, 1);
  const int blas_saved = blas_threads_serial();
  const int info = chol_solve_triangular(REAL(factor), n, "N", kx, m, nthreads,
                                         glue_trace_record, &tr);
  blas_threads_restore(blas_saved);
  if (info == CHOL_STOPPED) return R_NilValue;
  SEXP out = PROTECT(Rf_allocVector(REALSXP, m));
  const double prior = kernel_diagonal(&k);
  for (int j = 0; j < m; j++) {
    const double *col = kx + (size_t)j * n;
    double s = 0.0;
    for (int i = 0; i < n; i++) s += col[i] * col[i];
    /* Rounding can take it a hair below 0 at a training input. */
    REAL(out)[j] = prior - s > 0.0 ? prior - s : 0.0;
  }
  UNPROTECT(1);
  return out;
}
