/* .Call entry point of stochastic dual descent and its variants (the SGD
 * solver runs the same loop). */
#include <string.h>
#include "glue.h"
#include "sdd.h"

/* The optional trace metrics: NULL, or list(at, reference, test_x, test_y)
 * with NULL for the parts not asked for; test_x is scaled like x.  The
 * kernel_op of the test block lives in the caller's *test. */
static sdd_metrics glue_metrics(SEXP metrics, const kernel *k, const points *x,
                                points *test_x, kernel_op *test)
{
  sdd_metrics mt;
  memset(&mt, 0, sizeof mt);
  if (Rf_isNull(metrics)) return mt;
  SEXP at = glue_list_get(metrics, "at"), ref = glue_list_get(metrics, "reference");
  SEXP tx = glue_list_get(metrics, "test_x");
  if (TYPEOF(at) != INTSXP) Rf_error("internal error: `at` must be integer");
  mt.at = INTEGER(at);
  mt.n_at = (int)XLENGTH(at);
  if (!Rf_isNull(ref)) mt.reference = glue_doubles(ref, x->n, "reference");
  if (!Rf_isNull(tx)) {
    *test_x = glue_points(tx, "test_x");
    if (test_x->d != x->d) Rf_error("internal error: test_x has the wrong columns");
    const kernel_op op = {k, test_x, x, NULL, 0, NULL, NULL, NULL};
    *test = op;
    glue_op_norms(test);
    mt.test = test;
    mt.test_y = glue_doubles(glue_list_get(metrics, "test_y"), test_x->n, "test_y");
  }
  return mt;
}

static solver_status sdd_solve_any(const kernel_op *K, const double *noise,
                                   const double *rhs, int nrhs, const void *opt,
                                   double *alpha, int *done, solver_callback cb,
                                   void *ctx)
{
  return sdd_solve(K, noise, rhs, nrhs, opt, alpha, done, cb, ctx);
}

SEXP C_sdd_solve(SEXP x, SEXP spec, SEXP noise, SEXP rhs, SEXP rhs_reg,
                 SEXP step_size, SEXP clip, SEXP control, SEXP metrics,
                 SEXP seed, SEXP threads)
{
  const kernel k = glue_kernel(spec);
  points p = glue_points(x, "x");
  const points b = glue_points(rhs, "rhs");
  if (b.n != p.n) Rf_error("internal error: rhs has the wrong number of rows");
  sdd_options opt;
  memset(&opt, 0, sizeof opt);
  opt.iterations = Rf_asInteger(glue_list_get(control, "iterations"));
  opt.batch_size = Rf_asInteger(glue_list_get(control, "batch_size"));
  opt.batch_sampling =
      (sdd_batch_sampling)Rf_asInteger(glue_list_get(control, "batch_code"));
  const int estimator = Rf_asInteger(glue_list_get(control, "estimator_code"));
  if (estimator < SDD_DUAL_COORDINATES || estimator > SDD_PRIMAL_SGD)
    Rf_error("internal error: unknown gradient estimator");
  opt.estimator = (sdd_estimator)estimator;
  opt.features = Rf_asInteger(glue_list_get(control, "step_features"));
  if (opt.features < 1) Rf_error("internal error: step_features must be >= 1");
  if (!Rf_isNull(rhs_reg)) opt.rhs_reg = glue_doubles(rhs_reg, XLENGTH(rhs), "rhs_reg");
  opt.step_size = glue_doubles(step_size, b.d, "step_size");
  if (!Rf_isNull(clip)) opt.clip = glue_doubles(clip, b.d, "clip");
  opt.momentum = Rf_asReal(glue_list_get(control, "momentum"));
  opt.averaging_rate = Rf_asReal(glue_list_get(control, "averaging_rate"));
  opt.averaging_start = Rf_asInteger(glue_list_get(control, "averaging_start"));
  opt.check_every = Rf_asInteger(glue_list_get(control, "check_every"));
  opt.probe_size = Rf_asInteger(glue_list_get(control, "probe_size"));
  opt.tolerance = Rf_asReal(glue_list_get(control, "tolerance"));
  opt.time_limit = Rf_asReal(glue_list_get(control, "time_limit"));
  opt.seed = glue_seed(seed);
  opt.nthreads = glue_threads(threads);
  points test_x;
  kernel_op test;
  opt.metrics = glue_metrics(metrics, &k, &p, &test_x, &test);

  glue_trace tr;
  glue_trace_init(&tr, SDD_TRACE_VALUES(b.d),
                  opt.iterations / opt.check_every + 1 + opt.metrics.n_at,
                  opt.nthreads);

  return glue_square_solve(sdd_solve_any, &opt, &k, &p, &b, noise, control,
                           opt.nthreads, &tr);
}
