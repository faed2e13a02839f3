/* What OpenMP offers this process, for sddgp_threads(verbose = TRUE). */
#include "glue.h"
#include "omp_compat.h"

SEXP C_openmp_info(void)
{
  SEXP out = PROTECT(Rf_allocVector(INTSXP, 4));
#ifdef _OPENMP
  INTEGER(out)[0] = 1;
#else
  INTEGER(out)[0] = 0;
#endif
  INTEGER(out)[1] = omp_get_num_procs();
  INTEGER(out)[2] = omp_get_max_threads();
  INTEGER(out)[3] = omp_get_thread_limit();
  UNPROTECT(1);
  return out;
}
