/* What OpenMP offers this process, for sddgp_threads(), and whether a
 * governed stage is under way (tests: none after an interrupt). */
#include "glue.h"
#include "threads.h"

SEXP C_openmp_info(void)
{
  const char *names[] = {"openmp", "processors", "max_threads", "thread_limit",
                         "forked", "staged", ""};
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
  SET_VECTOR_ELT(out, 5, Rf_ScalarLogical(threads_staged()));
  UNPROTECT(1);
  return out;
}

/* Begins (threads > 0) or ends (threads = 0) a governed stage: R calls it
 * around a stage of many short .Calls, ending it with on.exit(). */
SEXP C_threads_stage(SEXP threads)
{
  if (Rf_asInteger(threads) > 0)
    threads_govern_stage(glue_threads(threads), omp_get_wtime());
  else
    threads_end_stage();
  return R_NilValue;
}
