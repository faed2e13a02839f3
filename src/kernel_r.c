/* .Call entry points for kernel blocks: predictions, fitted values and the
 * dense kernel matrix used by tests and small problems. */
#include "glue.h"

SEXP C_kernel_matmul(SEXP x1, SEXP x2, SEXP spec, SEXP A, SEXP precision,
                     SEXP threads)
{
  const kernel k = glue_kernel(spec);
  points p1 = glue_points(x1, "x1"), p2 = glue_points(x2, "x2");
  const points a = glue_points(A, "A");
  if (p1.d != p2.d || a.n != p2.n)
    Rf_error("internal error: non-conformable kernel block product");
  SEXP out = PROTECT(Rf_allocMatrix(REALSXP, p1.n, a.d));
  const kernel_op op = {&k, &p1, &p2, NULL, glue_single(precision, &p1, &p2), NULL};
  kernel_op_rows(&op, NULL, p1.n, a.x, a.d, REAL(out), p1.n,
                 glue_threads(threads));
  UNPROTECT(1);
  return out;
}

SEXP C_kernel_matrix(SEXP x1, SEXP x2, SEXP spec, SEXP threads)
{
  const kernel k = glue_kernel(spec);
  const points p1 = glue_points(x1, "x1"), p2 = glue_points(x2, "x2");
  if (p1.d != p2.d) Rf_error("internal error: dimensions differ");
  SEXP out = PROTECT(Rf_allocMatrix(REALSXP, p1.n, p2.n));
  kernel_block_matrix(&k, &p1, &p2, REAL(out), glue_threads(threads));
  UNPROTECT(1);
  return out;
}
