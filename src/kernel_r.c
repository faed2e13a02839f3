/* .Call entry points for kernel blocks: predictions, fitted values and the
 * dense kernel matrix used by tests and small problems; and the families
 * of the kernel table. */
#include "glue.h"

/* Work (row x column pairs times d + columns of A) between two checks for
 * Ctrl-C, a fraction of a second: at a million training points one of
 * predict()'s chunks of 4096 rows is otherwise one product of tens of
 * seconds.  Smaller slabs measured slower (thread teams per slab). */
#define MATMUL_SLAB_WORK 1e9

SEXP C_kernel_matmul(SEXP x1, SEXP x2, SEXP spec, SEXP A, SEXP precision,
                     SEXP threads)
{
  const kernel k = glue_kernel(spec);
  points p1 = glue_points(x1, "x1"), p2 = glue_points(x2, "x2");
  const points a = glue_points(A, "A");
  if (p1.d != p2.d || a.n != p2.n)
    Rf_error("internal error: non-conformable kernel block product");
  SEXP out = PROTECT(Rf_allocMatrix(REALSXP, p1.n, a.d));
  kernel_op op = {&k, &p1, &p2, NULL, glue_single(precision, &p1, &p2), NULL,
                  NULL, NULL, 0, NULL};
  glue_op_norms(&op);
  const int nthreads = glue_threads(threads);
  /* Rows are summed independently, so slabs give the same bits as one
   * product; nothing here is malloc'ed, so the interrupt may jump out. */
  const int slab = block_slab(p1.n, (double)p2.n * (p2.d + a.d), MATMUL_SLAB_WORK);
  int *rows = (int *)R_alloc(slab, sizeof(int));
  for (int r0 = 0; r0 < p1.n; r0 += slab) {
    const int len = p1.n - r0 < slab ? p1.n - r0 : slab;
    for (int t = 0; t < len; t++) rows[t] = r0 + t;
    kernel_op_rows(&op, rows, len, a.x, a.d, REAL(out) + r0, p1.n, nthreads);
    R_CheckUserInterrupt();
  }
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

/* The kernel table's codes named by family, c(matern12 = 1L, ...), for the
 * test that R's table (R/kernels.R) agrees with it. */
SEXP C_kernel_families(void)
{
  SEXP code = PROTECT(Rf_allocVector(INTSXP, kernel_table_size));
  SEXP name = PROTECT(Rf_allocVector(STRSXP, kernel_table_size));
  for (int i = 0; i < kernel_table_size; i++) {
    INTEGER(code)[i] = (int)kernel_table[i].family;
    SET_STRING_ELT(name, i, Rf_mkChar(kernel_table[i].name));
  }
  Rf_setAttrib(code, R_NamesSymbol, name);
  UNPROTECT(2);
  return code;
}
