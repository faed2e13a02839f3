/* .Call entry points of the sparse variational GP: k-means inducing points
 * and the closed-form fit (with optional refinement of the inducing
 * points). */
#include "glue.h"
#include "blas_threads.h"
#include "kmeans.h"
#include "svgp.h"

SEXP C_kmeans(SEXP x, SEXP m_, SEXP iterations, SEXP seed, SEXP threads)
{
  const points p = glue_points(x, "x");
  const int m = Rf_asInteger(m_);
  kmeans_options opt;
  opt.iterations = Rf_asInteger(iterations);
  opt.seed = glue_seed(seed);
  opt.nthreads = glue_threads(threads);
  if (m < 1 || m > p.n || opt.iterations < 0)
    Rf_error("internal error: bad number of centres or iterations");

  glue_trace tr; /* no trace rows: the callback only answers Ctrl-C */
  glue_trace_init(&tr, 0, 0, 1);
  SEXP centres = PROTECT(Rf_allocMatrix(REALSXP, m, p.d));
  SEXP seeds = PROTECT(Rf_allocVector(INTSXP, m));
  double *objective = (double *)R_alloc((size_t)opt.iterations + 1, sizeof(double));
  int done = 0;
  const solver_status status =
      kmeans_fit(&p, m, &opt, REAL(centres), INTEGER(seeds), objective, &done,
                 glue_trace_record, &tr);
  for (int j = 0; j < m; j++) INTEGER(seeds)[j]++;
  SEXP obj = PROTECT(Rf_allocVector(REALSXP, done + 1));
  for (int i = 0; i <= done; i++) REAL(obj)[i] = objective[i];

  const char *names[] = {"centres", "seeds", "objective", "iterations",
                         "status", ""};
  SEXP out = PROTECT(Rf_mkNamed(VECSXP, names));
  SET_VECTOR_ELT(out, 0, centres);
  SET_VECTOR_ELT(out, 1, seeds);
  SET_VECTOR_ELT(out, 2, obj);
  SET_VECTOR_ELT(out, 3, Rf_ScalarInteger(done));
  SET_VECTOR_ELT(out, 4, Rf_ScalarInteger((int)status));
  UNPROTECT(4);
  return out;
}

/* `settings`: svgp_problem's jitter and svgp_fit()'s iterations and
 * learning_rate, made by R's svgp_settings(). */
SEXP C_svgp_fit(SEXP x, SEXP spec, SEXP noise, SEXP y, SEXP z, SEXP settings,
                SEXP threads)
{
  const kernel k = glue_kernel(spec);
  const points p = glue_points(x, "x"), zin = glue_points(z, "z");
  if (zin.d != p.d) Rf_error("internal error: inducing points of the wrong dimension");
  const int m = zin.n;
  const int iterations = glue_int(settings, "iterations");

  /* Not governed: an iteration is a few large matrix products, and line
   * searches make iterations unequal.  The callback's one value is the
   * ELBO. */
  const glue_trace_part elbo = {"elbo", GLUE_TRACE_VECTOR};
  glue_trace tr;
  glue_trace_init(&tr, 1, iterations + 1, 1);
  glue_trace_name(&tr, &elbo, 1);
  svgp_problem prob;
  prob.k = &k;
  prob.x = &p;
  prob.noise = glue_doubles(noise, p.n, "noise");
  prob.y = glue_doubles(y, p.n, "y");
  GLUE_SET_REAL(prob, settings, jitter);
  prob.nthreads = glue_threads(threads);
  prob.callback = glue_trace_record;
  prob.ctx = &tr;

  SEXP zout = PROTECT(Rf_duplicate(z)); /* refined in place */
  SEXP coef = PROTECT(Rf_allocMatrix(REALSXP, m, 1));
  SEXP chol_kmm = PROTECT(Rf_allocMatrix(REALSXP, m, m));
  SEXP chol_b = PROTECT(Rf_allocMatrix(REALSXP, m, m));
  svgp_result res = {REAL(coef), REAL(chol_kmm), REAL(chol_b), 0.0, 0};
  int done = 0;
  const int blas_saved = blas_threads_serial();
  const solver_status status =
      svgp_fit(&prob, REAL(zout), m, iterations,
               glue_real(settings, "learning_rate"), &res, &done);
  blas_threads_restore(blas_saved);

  const char *names[] = {"result", "inducing", "chol_kmm", "chol_b", "elbo",
                         "not_positive_definite", ""};
  SEXP out = PROTECT(Rf_mkNamed(VECSXP, names));
  SET_VECTOR_ELT(out, 0, glue_solver_result(coef, done, status, &tr));
  SET_VECTOR_ELT(out, 1, zout);
  SET_VECTOR_ELT(out, 2, chol_kmm);
  SET_VECTOR_ELT(out, 3, chol_b);
  SET_VECTOR_ELT(out, 4, Rf_ScalarReal(res.elbo));
  SET_VECTOR_ELT(out, 5, Rf_ScalarLogical(res.not_positive_definite));
  UNPROTECT(5);
  return out;
}
