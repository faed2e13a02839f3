/* What OpenMP offers this process, for sddgp_threads(). */
#include "glue.h"
#include "threads.h"

SEXP C_openmp_info(void)
{
  const char *names[] = {"openmp", "processors", "max_threads", "thread_limit",
                         "forked", ""};
  SEXP out = PROTECT(Rf_mkNamed(VECSXP, names));
#ifdef _OPENMP
  SET_VECTOR_ELT(out, 0, Rf_ScalarLogical(1));
#else
  SET_VECTOR_ELT(out, 0, Rf_ScalarLogical(0));
#endif
  SET_VECTOR_ELT(out, 1, Rf_ScalarInteger(omp_get_num_procs()));
  SET_VECTOR_ELT(out, 2, Rf_ScalarInteger(omp_get_max_threads()));
  SET_VECTOR_ELT(out, 3, Rf_ScalarInteger(omp_get_thread_limit()));
  SET_VECTOR_ELT(out, 4, Rf_ScalarLogical(threads_forked()));
  UNPROTECT(1);
  return out;
}
