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
  glue_trace tr; /* no trace rows: the callback only answers Ctrl-C */
  glue_trace_init(&tr, 0, 0, 1);
  double cond[2] = {NA_REAL, NA_REAL}; /* 1-norm, reciprocal condition */
  const int info = chol_solve(&k, &p, glue_doubles(noise, p.n, "noise"),
                              REAL(alpha), b.d, work, cond,
                              glue_threads(threads), glue_trace_record, &tr);
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
