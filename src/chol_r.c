/* .Call entry point of the exact (Cholesky) solver. */
#include "glue.h"
#include "chol.h"

SEXP C_chol_solve(SEXP x, SEXP spec, SEXP noise, SEXP rhs, SEXP threads)
{
  const kernel k = glue_kernel(spec);
  const points p = glue_points(x, "x"), b = glue_points(rhs, "rhs");
  if (b.n != p.n) Rf_error("internal error: rhs has the wrong number of rows");
  SEXP alpha = PROTECT(Rf_duplicate(rhs));
  double *work = (double *)R_alloc((size_t)p.n * p.n, sizeof(double));
  const int info = chol_solve(&k, &p, glue_doubles(noise, p.n, "noise"),
                              REAL(alpha), b.d, work, glue_threads(threads));
  SEXP out = PROTECT(Rf_allocVector(VECSXP, 2));
  SET_VECTOR_ELT(out, 0, alpha);
  SET_VECTOR_ELT(out, 1, Rf_ScalarInteger(info));
  UNPROTECT(2);
  return out;
}
