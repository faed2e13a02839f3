/* .Call entry point of stochastic dual descent: runs the solver, records a
 * trace of probed residuals, and lets Ctrl-C stop it between iterations. */
#include "glue.h"
#include "sdd.h"
#include "omp_compat.h"

/* Seconds between checks for a user interrupt: fast enough that Ctrl-C
 * answers well within a second, rare enough to cost nothing. */
#define INTERRUPT_INTERVAL 0.1

typedef struct {
  double start, last_check;
  int nrhs, ntrace, max_trace;
  int *trace_iter;
  double *trace_time, *trace_res;
} trace_ctx;

static int record(void *ctx_, int iteration, const double *residuals)
{
  trace_ctx *ctx = ctx_;
  const double now = omp_get_wtime();
  if (residuals && ctx->ntrace < ctx->max_trace) {
    const int j = ctx->ntrace++;
    ctx->trace_iter[j] = iteration;
    ctx->trace_time[j] = now - ctx->start;
    for (int c = 0; c < ctx->nrhs; c++)
      ctx->trace_res[j + (size_t)c * ctx->max_trace] = residuals[c];
  }
  if (now - ctx->last_check < INTERRUPT_INTERVAL) return 0;
  ctx->last_check = now;
  return glue_interrupt_pending();
}

/* K(x, x) in R-managed memory, built a slab of columns at a time so that
 * Ctrl-C is answered within a fraction of a second even when the whole
 * matrix takes seconds. */
static const double *build_cache(const kernel *k, const points *p,
                                 int nthreads, int *interrupted)
{
  double *cache = (double *)R_alloc((size_t)p->n * p->n, sizeof(double));
  const int slab = 1 + (int)(2e7 / ((double)p->n * (p->d + 1)));
  for (int j0 = 0; j0 < p->n; j0 += slab) {
    kernel_block_columns(k, p, p, j0, j0 + slab < p->n ? j0 + slab : p->n,
                         cache, nthreads);
    if (glue_interrupt_pending()) {
      *interrupted = 1;
      break;
    }
  }
  return cache;
}

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

  trace_ctx ctx;
  ctx.nrhs = b.d;
  ctx.ntrace = 0;
  ctx.max_trace = opt.iterations / opt.check_every + 1;
  ctx.trace_iter = (int *)R_alloc(ctx.max_trace, sizeof(int));
  ctx.trace_time = (double *)R_alloc(ctx.max_trace, sizeof(double));
  ctx.trace_res = (double *)R_alloc((size_t)ctx.max_trace * b.d, sizeof(double));
  ctx.start = ctx.last_check = omp_get_wtime();

  /* The R side decided whether the n x n kernel matrix fits the memory
   * budget; R_alloc frees it even if the solve is interrupted. */
  kernel_op K = {&k, &p, &p, NULL};
  int done = 0, interrupted = 0;
  if (Rf_asLogical(glue_list_get(control, "use_cache")))
    K.cache = build_cache(&k, &p, opt.nthreads, &interrupted);

  SEXP alpha = PROTECT(Rf_allocMatrix(REALSXP, p.n, b.d));
  const sdd_status status =
      interrupted ? SDD_STATUS_STOPPED
                  : sdd_solve(&K, glue_doubles(noise, p.n, "noise"), b.x, b.d,
                              &opt, REAL(alpha), &done, record, &ctx);

  SEXP iter = PROTECT(Rf_allocVector(INTSXP, ctx.ntrace));
  SEXP time = PROTECT(Rf_allocVector(REALSXP, ctx.ntrace));
  SEXP res = PROTECT(Rf_allocMatrix(REALSXP, ctx.ntrace, b.d));
  for (int j = 0; j < ctx.ntrace; j++) {
    INTEGER(iter)[j] = ctx.trace_iter[j];
    REAL(time)[j] = ctx.trace_time[j];
    for (int c = 0; c < b.d; c++)
      REAL(res)[j + (size_t)c * ctx.ntrace] =
          ctx.trace_res[j + (size_t)c * ctx.max_trace];
  }
  const char *names[] = {"alpha", "iterations", "status", "trace_iteration",
                         "trace_seconds", "trace_residuals", ""};
  SEXP out = PROTECT(Rf_mkNamed(VECSXP, names));
  SET_VECTOR_ELT(out, 0, alpha);
  SET_VECTOR_ELT(out, 1, Rf_ScalarInteger(done));
  SET_VECTOR_ELT(out, 2, Rf_ScalarInteger((int)status));
  SET_VECTOR_ELT(out, 3, iter);
  SET_VECTOR_ELT(out, 4, time);
  SET_VECTOR_ELT(out, 5, res);
  UNPROTECT(5);
  return out;
}
