/* .Call entry points of the random-feature ridge solvers (CaBCD, BCD,
 * Adam) and, for the tests, of Caratheodory recombination. */
#include <math.h>
#include <stdlib.h>
#include "cabcd.h"
#include "glue.h"
#include "recombination.h"
#include "rff.h"

SEXP C_recombine(SEXP x, SEXP mu, SEXP method, SEXP seed)
{
  const points p = glue_points(x, "x");
  const double *m = glue_doubles(mu, p.n, "mu");
  for (int i = 0; i < p.n; i++)
    if (!(m[i] >= 0.0) || !isfinite(m[i]))
      Rf_error("internal error: weights must be finite and non-negative");
  for (R_xlen_t i = 0; i < (R_xlen_t)p.n * p.d; i++)
    if (!isfinite(p.x[i])) Rf_error("internal error: points must be finite");
  if (p.d < 1) Rf_error("internal error: points need at least one column");
  int *idx = (int *)R_alloc((size_t)p.d + 1, sizeof(int));
  double *w = (double *)R_alloc((size_t)p.d + 1, sizeof(double));
  recomb_stats stats = {0, 0};
  const recomb_method how = (recomb_method)glue_choice(
      method, glue_recombination_methods, "recombination method");
  const int k = recombine(p.x, p.n, p.d, m, how, glue_seed(seed), idx, w, &stats);
  if (k < 0) Rf_error("recombination could not allocate its working memory");
  const char *names[] = {"index", "weight", "cone_runs", "cone_failures", ""};
  SEXP out = PROTECT(Rf_mkNamed(VECSXP, names));
  SEXP index = Rf_allocVector(INTSXP, k);
  SET_VECTOR_ELT(out, 0, index);
  SEXP weight = Rf_allocVector(REALSXP, k);
  SET_VECTOR_ELT(out, 1, weight);
  for (int j = 0; j < k; j++) {
    INTEGER(index)[j] = idx[j] + 1;
    REAL(weight)[j] = w[j];
  }
  SET_VECTOR_ELT(out, 2, Rf_ScalarInteger(stats.cone_runs));
  SET_VECTOR_ELT(out, 3, Rf_ScalarInteger(stats.cone_failures));
  UNPROTECT(1);
  return out;
}

/* The ridge solve for every column of rhs with the random Fourier features
 * (omega, phase) of a kernel of amplitude `variance`, at inputs x already
 * divided by their length scales; `settings`, the fields of cabcd_options,
 * made by R's cabcd_settings().  Returns list(fit, loss, passes): fit as
 * glue_solver_result() makes it (alpha: m x ncol(rhs)), and the per-
 * iteration records of cabcd_history (iterations rows; the first
 * fit$iterations are filled in). */
SEXP C_cabcd_solve(SEXP x, SEXP omega, SEXP phase, SEXP variance, SEXP weight,
                   SEXP lambda, SEXP rhs, SEXP settings, SEXP threads)
{
  const points p = glue_points(x, "x"), om = glue_points(omega, "omega");
  const points b = glue_points(rhs, "rhs");
  if (om.d != p.d || b.n != p.n)
    Rf_error("internal error: non-conformable random-feature problem");
  const rff f = {om.n, om.d, om.x, glue_doubles(phase, om.n, "phase"),
                 sqrt(2.0 * Rf_asReal(variance) / om.n), 0, 0};
  cabcd_options opt;
  GLUE_SET_CHOICE(opt, settings, algorithm, glue_cabcd_algorithms);
  GLUE_SET_CHOICE(opt, settings, selection, glue_cabcd_selections);
  GLUE_SET_INT(opt, settings, block_size);
  GLUE_SET_REAL(opt, settings, step_size);
  GLUE_SET_REAL(opt, settings, momentum);
  GLUE_SET_INT(opt, settings, max_inner);
  GLUE_SET_INT(opt, settings, iterations);
  GLUE_SET_INT(opt, settings, batch_size);
  GLUE_SET_REAL(opt, settings, tolerance);
  GLUE_SET_SEED(opt, settings, seed);
  opt.nthreads = glue_threads(threads);
  const cabcd_problem pr = {NULL, p.n, om.n, glue_doubles(weight, p.n, "weight"),
                            Rf_asReal(lambda)};

  glue_trace tr;
  glue_trace_init(&tr, b.d, opt.iterations, opt.nthreads);
  glue_trace_progress(&tr, settings);
  SEXP theta = PROTECT(Rf_allocMatrix(REALSXP, om.n, b.d));
  SEXP loss = PROTECT(Rf_allocMatrix(REALSXP, opt.iterations, b.d));
  SEXP passes = PROTECT(Rf_allocVector(REALSXP, opt.iterations));
  cabcd_history hist = {REAL(loss), REAL(passes)};

  /* The feature matrix lives in malloc'ed memory: it may be large, and no
   * R error can occur until it is freed (interrupts are polled without a
   * longjmp), so a failed allocation becomes a classed memory error. */
  int done = 0;
  solver_status status;
  double *phi = malloc(sizeof(double) * (size_t)p.n * om.n);
  if (!phi) {
    status = SOLVER_NO_MEMORY;
  } else if (cabcd_features(&f, &p, phi, opt.nthreads, glue_trace_record, &tr)) {
    status = SOLVER_STOPPED;
  } else {
    cabcd_problem full = pr;
    full.phi = phi;
    status = cabcd_solve(&full, b.x, b.d, &opt, REAL(theta), &done, &hist,
                         glue_trace_record, &tr);
  }
  free(phi);

  const char *names[] = {"fit", "loss", "passes", ""};
  SEXP out = PROTECT(Rf_mkNamed(VECSXP, names));
  SET_VECTOR_ELT(out, 0, glue_solver_result(theta, done, status, &tr));
  SET_VECTOR_ELT(out, 1, loss);
  SET_VECTOR_ELT(out, 2, passes);
  UNPROTECT(4);
  return out;
}
