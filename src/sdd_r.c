/* .Call entry point of stochastic dual descent. */
#include "glue.h"
#include "sdd.h"

SEXP C_sdd_solve(SEXP x, SEXP spec, SEXP noise, SEXP rhs, SEXP step_size,
                 SEXP control, SEXP seed, SEXP threads)
{
  const kernel k = glue_kernel(spec);
  const points p = glue_points(x, "x"), b = glue_points(rhs, "rhs");
  if (b.n != p.n) Rf_error("internal error: rhs has the wrong number of rows");
  sdd_options opt;
  opt.iterations = Rf_asInteger(glue_list_get(control, "iterations"));
  opt.batch_size = Rf_asInteger(glue_list_get(control, "batch_size"));
  opt.batch_sampling =
      (sdd_batch_sampling)Rf_asInteger(glue_list_get(control, "batch_code"));
  opt.step_size = glue_doubles(step_size, b.d, "step_size");
  opt.momentum = Rf_asReal(glue_list_get(control, "momentum"));
  opt.averaging_rate = Rf_asReal(glue_list_get(control, "averaging_rate"));
  opt.check_every = Rf_asInteger(glue_list_get(control, "check_every"));
  opt.probe_size = Rf_asInteger(glue_list_get(control, "probe_size"));
  opt.tolerance = Rf_asReal(glue_list_get(control, "tolerance"));
  opt.seed = glue_seed(seed);
  opt.nthreads = glue_threads(threads);

  glue_trace tr;
  glue_trace_init(&tr, b.d, opt.iterations / opt.check_every + 1);

  /* The R side decided whether the n x n kernel matrix fits the memory
   * budget; R_alloc frees it even if the solve is interrupted. */
  kernel_op K = {&k, &p, &p, NULL};
  int done = 0, interrupted = 0;
  if (Rf_asLogical(glue_list_get(control, "use_cache")))
    K.cache = glue_kernel_cache(&k, &p, opt.nthreads, &interrupted);

  SEXP alpha = PROTECT(Rf_allocMatrix(REALSXP, p.n, b.d));
  const solver_status status =
      interrupted ? SOLVER_STOPPED
                  : sdd_solve(&K, glue_doubles(noise, p.n, "noise"), b.x, b.d,
                              &opt, REAL(alpha), &done, glue_trace_record, &tr);
  SEXP out = glue_solver_result(alpha, done, status, &tr);
  UNPROTECT(1);
  return out;
}
