/* .Call entry points of doubly stochastic functional gradients: the solve,
 * and the replay of its basis at new inputs. */
#include "glue.h"
#include "dsg.h"

/* `settings`: the fields of dsg_options, made by R's dsg_settings(), and
 * those of the basis, `block` and its seed `feature_seed`. */
SEXP C_dsg_solve(SEXP x, SEXP spec, SEXP noise, SEXP rhs, SEXP settings,
                 SEXP threads)
{
  const kernel k = glue_kernel(spec);
  const points p = glue_points(x, "x"), b = glue_points(rhs, "rhs");
  if (b.n != p.n) Rf_error("internal error: rhs has the wrong number of rows");
  const dsg_basis basis = {&k, p.d, glue_int(settings, "block"),
                           glue_seed(glue_list_get(settings, "feature_seed"))};
  dsg_options opt;
  GLUE_SET_INT(opt, settings, iterations);
  GLUE_SET_INT(opt, settings, batch_size);
  GLUE_SET_REAL(opt, settings, step_size);
  GLUE_SET_REAL(opt, settings, step_decay);
  GLUE_SET_INT(opt, settings, check_every);
  GLUE_SET_INT(opt, settings, probe_size);
  GLUE_SET_SEED(opt, settings, seed);
  opt.nthreads = glue_threads(threads);

  glue_trace tr;
  glue_trace_init(&tr, b.d, opt.iterations / opt.check_every + 1, opt.nthreads);
  glue_trace_progress(&tr, settings);
  SEXP alpha = PROTECT(Rf_allocMatrix(REALSXP, opt.iterations * basis.block, b.d));
  int done = 0;
  const solver_status status =
      dsg_solve(&basis, &p, glue_doubles(noise, p.n, "noise"), b.x, b.d, &opt,
                REAL(alpha), &done, glue_trace_record, &tr);
  SEXP out = glue_solver_result(alpha, done, status, &tr);
  UNPROTECT(1);
  return out;
}

/* Phi(x) A over the first `nfeat` features of the basis; NULL when the
 * scratch memory could not be allocated (the R side raises the error). */
SEXP C_dsg_matmul(SEXP x, SEXP spec, SEXP feature_seed, SEXP block,
                  SEXP nfeat, SEXP A, SEXP threads)
{
  const kernel k = glue_kernel(spec);
  const points p = glue_points(x, "x"), a = glue_points(A, "A");
  const dsg_basis basis = {&k, p.d, Rf_asInteger(block), glue_seed(feature_seed)};
  const int m = Rf_asInteger(nfeat);
  if (a.n != m) Rf_error("internal error: A has the wrong number of rows");
  SEXP out = PROTECT(Rf_allocMatrix(REALSXP, p.n, a.d));
  const int failed = dsg_basis_matmul(&basis, 0, m, &p, a.x, a.n, a.d,
                                      REAL(out), p.n, glue_threads(threads));
  UNPROTECT(1);
  return failed ? R_NilValue : out;
}
