/* .Call entry point of stochastic dual descent and its variants (the SGD
 * solver runs the same loop). */
#include <string.h>
#include "glue.h"
#include "nystrom.h"
#include "sdd.h"
#include "shard_glue.h"

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
    const kernel_op op = {k, test_x, x, NULL, 0, NULL, NULL, NULL, 0, NULL};
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

/* `settings`: the fields of sdd_options, made by R's sdd_settings(), and
 * the operator's use_cache and precision. */
SEXP C_sdd_solve(SEXP x, SEXP spec, SEXP noise, SEXP rhs, SEXP settings,
                 SEXP threads)
{
  const kernel k = glue_kernel(spec);
  points p = glue_points(x, "x");
  const points b = glue_points(rhs, "rhs");
  if (b.n != p.n) Rf_error("internal error: rhs has the wrong number of rows");
  sdd_options opt;
  memset(&opt, 0, sizeof opt);
  GLUE_SET_INT(opt, settings, iterations);
  GLUE_SET_INT(opt, settings, batch_size);
  GLUE_SET_CHOICE(opt, settings, batch_sampling, glue_batch_samplings);
  GLUE_SET_CHOICE(opt, settings, estimator, glue_estimators);
  GLUE_SET_INT(opt, settings, features);
  if (opt.features < 1) Rf_error("internal error: features must be >= 1");
  SEXP rhs_reg = glue_list_get(settings, "rhs_reg"), clip = glue_list_get(settings, "clip");
  SEXP alpha0 = glue_list_get(settings, "alpha0");
  if (!Rf_isNull(rhs_reg)) opt.rhs_reg = glue_doubles(rhs_reg, XLENGTH(rhs), "rhs_reg");
  opt.step_size = glue_doubles(glue_list_get(settings, "step_size"), b.d, "step_size");
  if (!Rf_isNull(clip)) opt.clip = glue_doubles(clip, b.d, "clip");
  if (!Rf_isNull(alpha0)) opt.alpha0 = glue_doubles(alpha0, XLENGTH(rhs), "alpha0");
  GLUE_SET_REAL(opt, settings, momentum);
  GLUE_SET_REAL(opt, settings, averaging_rate);
  GLUE_SET_INT(opt, settings, averaging_start);
  GLUE_SET_INT(opt, settings, check_every);
  GLUE_SET_INT(opt, settings, probe_size);
  GLUE_SET_REAL(opt, settings, tolerance);
  GLUE_SET_INT(opt, settings, stop_stalled);
  GLUE_SET_REAL(opt, settings, time_limit);
  GLUE_SET_SEED(opt, settings, seed);
  GLUE_SET_INT(opt, settings, first_iteration);
  GLUE_SET_INT(opt, settings, tolerance_from);
  SEXP alpha_bar0 = glue_list_get(settings, "alpha_bar0");
  SEXP momentum0 = glue_list_get(settings, "momentum0");
  if (!Rf_isNull(alpha_bar0))
    opt.alpha_bar0 = glue_doubles(alpha_bar0, XLENGTH(rhs), "alpha_bar0");
  if (!Rf_isNull(momentum0)) opt.momentum0 = glue_doubles(momentum0, XLENGTH(rhs), "momentum0");
  /* keep_state: the final iterate and momentum come back as `state`
   * (n x 2 nrhs), for a resumed run. */
  SEXP state = R_NilValue;
  if (glue_int(settings, "keep_state")) {
    state = Rf_allocMatrix(REALSXP, p.n, 2 * b.d);
    opt.alpha_out = REAL(state);
    opt.momentum_out = REAL(state) + XLENGTH(rhs);
  }
  PROTECT(state);
  glue_shard gs;
  opt.shard = glue_shard_comm(glue_list_get(settings, "shard"), &gs);
  double update_seconds = 0.0;
  opt.update_seconds = &update_seconds;
  opt.nthreads = glue_threads(threads);
  points test_x;
  kernel_op test;
  opt.metrics = glue_metrics(glue_list_get(settings, "metrics"), &k, &p, &test_x, &test);

  /* The values of each trace row in the order of SDD_TRACE_VALUES (sdd.h). */
  const glue_trace_part parts[] = {{"residuals", b.d},
                                   {"knorm_error", GLUE_TRACE_VECTOR},
                                   {"k2norm_error", GLUE_TRACE_VECTOR},
                                   {"test_rmse", GLUE_TRACE_VECTOR},
                                   {"metric_seconds", GLUE_TRACE_VECTOR}};
  glue_trace tr;
  glue_trace_init(&tr, SDD_TRACE_VALUES(b.d),
                  opt.iterations / opt.check_every + 1 + opt.metrics.n_at,
                  opt.nthreads);
  glue_trace_name(&tr, parts, (int)(sizeof parts / sizeof parts[0]));
  glue_trace_progress(&tr, settings);

  SEXP res = PROTECT(glue_square_solve(sdd_solve_any, &opt, &k, &p, &b, noise,
                                       settings, opt.nthreads, &tr));
  SEXP out = PROTECT(glue_list_append(res, "state", state));
  /* A failed message (R raises the error: sdd_loop_call()). */
  SEXP failed = PROTECT(Rf_ScalarLogical(opt.shard && opt.shard->failed));
  out = PROTECT(glue_list_append(out, "comm_failed", failed));
  /* Seconds spent passing messages (a sharded solve's; of them, gathering
   * the state at the end) and updating the coefficients, for benchmarks. */
  SEXP seconds = PROTECT(Rf_ScalarReal(opt.shard ? opt.shard->seconds : 0.0));
  out = PROTECT(glue_list_append(out, "comm_seconds", seconds));
  SEXP updating = PROTECT(Rf_ScalarReal(update_seconds));
  out = PROTECT(glue_list_append(out, "update_seconds", updating));
  SEXP gathering = PROTECT(Rf_ScalarReal(opt.shard ? opt.shard->gather_seconds : 0.0));
  out = PROTECT(glue_list_append(out, "gather_seconds", gathering));
  UNPROTECT(11);
  return out;
}

/* SDD's warm start: nystrom_solve() of the form `form` (a string of
 * glue_warm_starts) for the right-hand sides rhs with the rank-`rank`
 * factor, on the kernel evaluated on the fly (only `rank` columns of it
 * are needed).  Returns list(alpha, status), status a solver_status code. */
SEXP C_nystrom_solve(SEXP x, SEXP spec, SEXP noise, SEXP rhs, SEXP rank,
                     SEXP form, SEXP threads)
{
  const kernel k = glue_kernel(spec);
  points p = glue_points(x, "x");
  const points b = glue_points(rhs, "rhs");
  if (b.n != p.n) Rf_error("internal error: rhs has the wrong number of rows");
  const nystrom_form f = glue_choice(form, glue_warm_starts, "warm_start");
  const int nthreads = glue_threads(threads);
  kernel_op K = {&k, &p, &p, NULL, 0, NULL, NULL, NULL, 0, NULL};
  glue_op_norms(&K);
  glue_trace tr; /* no trace rows: the callback only answers Ctrl-C */
  glue_trace_init(&tr, 0, 0, 1);
  SEXP alpha = PROTECT(Rf_allocMatrix(REALSXP, p.n, b.d));
  const solver_status status =
      nystrom_solve(&K, glue_doubles(noise, p.n, "noise"), b.x, b.d,
                    Rf_asInteger(rank), f, nthreads, REAL(alpha),
                    glue_trace_record, &tr);
  const char *names[] = {"alpha", "status", ""};
  SEXP out = PROTECT(Rf_mkNamed(VECSXP, names));
  SET_VECTOR_ELT(out, 0, alpha);
  SET_VECTOR_ELT(out, 1, Rf_ScalarInteger((int)status));
  UNPROTECT(2);
  return out;
}
