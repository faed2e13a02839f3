#include <string.h>
#include "glue.h"
#include "omp_compat.h"

kernel glue_kernel(SEXP spec)
{
  kernel k;
  SEXP family = VECTOR_ELT(spec, 0), variance = VECTOR_ELT(spec, 1);
  if (TYPEOF(family) != INTSXP || XLENGTH(family) != 1 ||
      !kernel_family_valid(INTEGER(family)[0]) || TYPEOF(variance) != REALSXP ||
      XLENGTH(variance) != 1)
    Rf_error("internal error: malformed kernel specification");
  k.family = (kernel_family)INTEGER(family)[0];
  k.variance = REAL(variance)[0];
  return k;
}

points glue_points(SEXP x, const char *what)
{
  points p;
  SEXP dim = Rf_getAttrib(x, R_DimSymbol);
  if (TYPEOF(x) != REALSXP || XLENGTH(dim) != 2)
    Rf_error("internal error: `%s` must be a double matrix", what);
  p.x = REAL(x);
  p.n = INTEGER(dim)[0];
  p.d = INTEGER(dim)[1];
  return p;
}

int glue_threads(SEXP threads)
{
  int nth = Rf_asInteger(threads);
  if (nth == NA_INTEGER || nth < 1) nth = 1;
  /* CRAN and batch systems cap threads through OMP_THREAD_LIMIT; asking for
   * more than the limit makes OpenMP print warnings and form smaller teams. */
  if (nth > omp_get_thread_limit()) nth = omp_get_thread_limit();
  return nth;
}

uint64_t glue_seed(SEXP seed)
{
  const double *s = glue_doubles(seed, 2, "seed");
  return ((uint64_t)s[0] << 32) ^ (uint64_t)s[1];
}

const double *glue_doubles(SEXP x, R_xlen_t len, const char *what)
{
  if (TYPEOF(x) != REALSXP || XLENGTH(x) != len)
    Rf_error("internal error: `%s` must be a double vector of length %lld",
             what, (long long)len);
  return REAL(x);
}

SEXP glue_list_get(SEXP list, const char *name)
{
  SEXP names = Rf_getAttrib(list, R_NamesSymbol);
  for (R_xlen_t i = 0; i < XLENGTH(list); i++)
    if (strcmp(CHAR(STRING_ELT(names, i)), name) == 0)
      return VECTOR_ELT(list, i);
  Rf_error("internal error: no element '%s' in the options list", name);
  return R_NilValue; /* not reached */
}

static void check_interrupt(void *unused)
{
  (void)unused;
  R_CheckUserInterrupt();
}

int glue_interrupt_pending(void)
{
  return !R_ToplevelExec(check_interrupt, NULL);
}
