/* .Call entry point of the exact log marginal likelihood, the objective of
 * hyperparameter estimation (R/hyperparameters.R). */
#include "glue.h"
#include "blas_threads.h"
#include "mll.h"
#include "vecchia.h"

/* gradient FALSE: the value only (its gradient stays NA). */
SEXP C_mll(SEXP x, SEXP y, SEXP spec, SEXP noise, SEXP weights, SEXP gradient,
           SEXP threads)
{
  const kernel k = glue_kernel(spec);
  const points p = glue_points(x, "x");
  const double *yy = glue_doubles(y, p.n, "y");
  const double lambda = glue_doubles(noise, 1, "noise")[0];
  /* NULL weights: every observation has the noise variance lambda. */
  const double *w = Rf_isNull(weights) ? NULL : glue_doubles(weights, p.n, "weights");
  const char *names[] = {"value", "gradient", "interrupted", ""};
  SEXP out = PROTECT(Rf_mkNamed(VECSXP, names));
  SEXP value = PROTECT(Rf_ScalarReal(NA_REAL));
  const int ng = (kernel_stationary(&k) ? p.d : 0) + 2;
  SEXP grad = PROTECT(Rf_allocVector(REALSXP, ng));
  for (int c = 0; c < ng; c++) REAL(grad)[c] = NA_REAL;
  glue_trace tr; /* no trace rows: the callback only answers Ctrl-C */
  glue_trace_init(&tr, 0, 0, 1);
  /* A matrix that is not positive definite is an answer (NA), not an
   * error: the optimiser's line search may step there and back off. */
  const int nthreads = glue_threads(threads);
  const int blas_saved = blas_threads_serial();
  const mll_status status = mll_evaluate(&k, &p, yy, lambda, w, nthreads,
                                         glue_trace_record, &tr, REAL(value),
                                         Rf_asLogical(gradient) ? REAL(grad) : NULL);
  blas_threads_restore(blas_saved);
  if (status == MLL_NO_MEMORY)
    Rf_error("not enough memory for the %d x %d kernel matrix of the "
             "marginal likelihood", p.n, p.n);
  SET_VECTOR_ELT(out, 0, value);
  SET_VECTOR_ELT(out, 1, grad);
  SET_VECTOR_ELT(out, 2, Rf_ScalarLogical(status == MLL_STOPPED));
  UNPROTECT(3);
  return out;
}

/* .Call entry point of the pathwise gradient estimate: sols is the n x
 * (1 + s) matrix of solutions [H^{-1} y, H^{-1} z_1, ...]. */
SEXP C_mll_pathwise(SEXP x, SEXP sols, SEXP spec, SEXP noise, SEXP weights,
                    SEXP threads)
{
  const kernel k = glue_kernel(spec);
  const points p = glue_points(x, "x");
  if (!Rf_isMatrix(sols) || Rf_nrows(sols) != p.n || Rf_ncols(sols) < 2)
    Rf_error("'sols' must be a matrix with one row per point and at least two columns");
  const double *v = glue_doubles(sols, (R_xlen_t)p.n * Rf_ncols(sols), "sols");
  const double lambda = glue_doubles(noise, 1, "noise")[0];
  const double *w = Rf_isNull(weights) ? NULL : glue_doubles(weights, p.n, "weights");
  const char *names[] = {"gradient", "interrupted", ""};
  SEXP out = PROTECT(Rf_mkNamed(VECSXP, names));
  const int ng = (kernel_stationary(&k) ? p.d : 0) + 2;
  SEXP grad = PROTECT(Rf_allocVector(REALSXP, ng));
  glue_trace tr; /* no trace rows: the callback only answers Ctrl-C */
  glue_trace_init(&tr, 0, 0, 1);
  const mll_status status = mll_pathwise_gradient(&k, &p, v, Rf_ncols(sols) - 1,
                                                  lambda, w, glue_threads(threads),
                                                  glue_trace_record, &tr, REAL(grad));
  if (status == MLL_NO_MEMORY)
    Rf_error("not enough memory for the marginal likelihood's gradient");
  if (status != MLL_OK)
    for (int c = 0; c < ng; c++) REAL(grad)[c] = NA_REAL;
  SET_VECTOR_ELT(out, 0, grad);
  SET_VECTOR_ELT(out, 1, Rf_ScalarLogical(status == MLL_STOPPED));
  UNPROTECT(2);
  return out;
}

/* .Call entry point of Vecchia's approximation of the same likelihood and
 * its gradient, each point given the neighbours found by
 * C_vecchia_factor() (its `neighbours`: m x n, 1-based, NA past a point's
 * count). */
SEXP C_mll_vecchia(SEXP x, SEXP y, SEXP spec, SEXP noise, SEXP weights,
                   SEXP neighbours, SEXP threads)
{
  const kernel k = glue_kernel(spec);
  const points p = glue_points(x, "x");
  const double *yy = glue_doubles(y, p.n, "y");
  const double lambda = glue_doubles(noise, 1, "noise")[0];
  const double *w = Rf_isNull(weights) ? NULL : glue_doubles(weights, p.n, "weights");
  if (!Rf_isMatrix(neighbours) || TYPEOF(neighbours) != INTSXP ||
      Rf_ncols(neighbours) != p.n)
    Rf_error("internal error: 'neighbours' must be an integer matrix with a column per point");
  vecchia P;
  P.n = p.n;
  P.m = Rf_nrows(neighbours);
  P.count = (int *)R_alloc((size_t)p.n, sizeof(int));
  P.nb = (int *)R_alloc((size_t)p.n * P.m, sizeof(int));
  double *nz = (double *)R_alloc((size_t)p.n, sizeof(double));
  const int *nb = INTEGER(neighbours);
  for (int i = 0; i < p.n; i++) {
    int a = 0;
    for (; a < P.m && nb[(size_t)i * P.m + a] != NA_INTEGER; a++) {
      const int j = nb[(size_t)i * P.m + a] - 1;
      if (j < 0 || j >= p.n) Rf_error("internal error: neighbour out of range");
      P.nb[(size_t)i * P.m + a] = j;
    }
    P.count[i] = a;
    nz[i] = w ? lambda / w[i] : lambda;
  }
  const char *names[] = {"value", "gradient", "interrupted", ""};
  SEXP out = PROTECT(Rf_mkNamed(VECSXP, names));
  SEXP value = PROTECT(Rf_ScalarReal(NA_REAL));
  SEXP grad = PROTECT(Rf_allocVector(REALSXP, p.d + 2));
  glue_trace tr; /* no trace rows: the callback only answers Ctrl-C */
  glue_trace_init(&tr, 0, 0, 1);
  const solver_status status = vecchia_mll(&P, &k, &p, yy, nz, glue_threads(threads),
                                           glue_trace_record, &tr, REAL(value),
                                           REAL(grad));
  if (status == SOLVER_NO_MEMORY)
    Rf_error("not enough memory for Vecchia's likelihood");
  if (status != SOLVER_MAX_ITER)
    for (int c = 0; c < p.d + 2; c++) REAL(grad)[c] = NA_REAL;
  SET_VECTOR_ELT(out, 0, value);
  SET_VECTOR_ELT(out, 1, grad);
  SET_VECTOR_ELT(out, 2, Rf_ScalarLogical(status == SOLVER_STOPPED));
  UNPROTECT(3);
  return out;
}
