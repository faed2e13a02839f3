#include <string.h>
#include "glue.h"
#include "threads.h"

kernel glue_kernel(SEXP spec)
{
  kernel k;
  SEXP family = VECTOR_ELT(spec, 0), variance = VECTOR_ELT(spec, 1);
  if (TYPEOF(family) != INTSXP || XLENGTH(family) != 1 ||
      !kernel_family_valid(INTEGER(family)[0]) || TYPEOF(variance) != REALSXP ||
      XLENGTH(variance) != 1)
    Rf_error("internal error: malformed kernel specification");
  k.family = (kernel_family)INTEGER(family)[0];
  k.variance = REAL(variance)[0];
  return k;
}

points glue_points(SEXP x, const char *what)
{
  points p;
  SEXP dim = Rf_getAttrib(x, R_DimSymbol);
  if (TYPEOF(x) != REALSXP || XLENGTH(dim) != 2)
    Rf_error("internal error: `%s` must be a double matrix", what);
  p.x = REAL(x);
  p.n = INTEGER(dim)[0];
  p.d = INTEGER(dim)[1];
  p.x32 = NULL;
  return p;
}

int glue_threads(SEXP threads)
{
  /* Every .Call that runs threads starts here: a governed run that an
   * error left active ends now. */
  threads_release();
  const int nth = Rf_asInteger(threads);
  return threads_team(nth == NA_INTEGER ? 1 : nth);
}

uint64_t glue_seed(SEXP seed)
{
  const double *s = glue_doubles(seed, 2, "seed");
  return ((uint64_t)s[0] << 32) ^ (uint64_t)s[1];
}

const double *glue_doubles(SEXP x, R_xlen_t len, const char *what)
{
  if (TYPEOF(x) != REALSXP || XLENGTH(x) != len)
    Rf_error("internal error: `%s` must be a double vector of length %lld",
             what, (long long)len);
  return REAL(x);
}

SEXP glue_list_get(SEXP list, const char *name)
{
  SEXP names = Rf_getAttrib(list, R_NamesSymbol);
  for (R_xlen_t i = 0; i < XLENGTH(list); i++)
    if (strcmp(CHAR(STRING_ELT(names, i)), name) == 0)
      return VECTOR_ELT(list, i);
  Rf_error("internal error: no element '%s' in the options list", name);
  return R_NilValue; /* not reached */
}

static void check_interrupt(void *unused)
{
  (void)unused;
  R_CheckUserInterrupt();
}

int glue_interrupt_pending(void)
{
  return !R_ToplevelExec(check_interrupt, NULL);
}

/* Seconds between checks for a user interrupt: fast enough that Ctrl-C
 * answers well within a second, rare enough to cost nothing. */
#define INTERRUPT_INTERVAL 0.1

void glue_trace_init(glue_trace *tr, int nrhs, int max_rows, int nthreads)
{
  tr->nrhs = nrhs;
  tr->nrows = 0;
  tr->max_rows = max_rows;
  tr->iteration = (int *)R_alloc(max_rows, sizeof(int));
  tr->seconds = (double *)R_alloc(max_rows, sizeof(double));
  tr->residuals = (double *)R_alloc((size_t)max_rows * nrhs, sizeof(double));
  tr->start = tr->last_check = omp_get_wtime();
  if (max_rows > 0) threads_govern(nthreads, tr->start);
}

int glue_trace_record(void *trace, int iteration, const double *residuals)
{
  glue_trace *tr = trace;
  const double now = omp_get_wtime();
  threads_tick(iteration > 0 && !residuals, now);
  if (residuals && tr->nrows < tr->max_rows) {
    const int j = tr->nrows++;
    tr->iteration[j] = iteration;
    tr->seconds[j] = now - tr->start;
    for (int c = 0; c < tr->nrhs; c++)
      tr->residuals[j + (size_t)c * tr->max_rows] = residuals[c];
  }
  if (now - tr->last_check < INTERRUPT_INTERVAL) return 0;
  tr->last_check = now;
  return glue_interrupt_pending();
}

SEXP glue_solver_result(SEXP alpha, int iterations, solver_status status,
                        const glue_trace *tr)
{
  threads_release();
  PROTECT(alpha);
  SEXP iter = PROTECT(Rf_allocVector(INTSXP, tr->nrows));
  SEXP time = PROTECT(Rf_allocVector(REALSXP, tr->nrows));
  SEXP res = PROTECT(Rf_allocMatrix(REALSXP, tr->nrows, tr->nrhs));
  for (int j = 0; j < tr->nrows; j++) {
    INTEGER(iter)[j] = tr->iteration[j];
    REAL(time)[j] = tr->seconds[j];
    for (int c = 0; c < tr->nrhs; c++)
      REAL(res)[j + (size_t)c * tr->nrows] =
          tr->residuals[j + (size_t)c * tr->max_rows];
  }
  const char *names[] = {"alpha", "iterations", "status", "trace_iteration",
                         "trace_seconds", "trace_residuals", ""};
  SEXP out = PROTECT(Rf_mkNamed(VECSXP, names));
  SET_VECTOR_ELT(out, 0, alpha);
  SET_VECTOR_ELT(out, 1, Rf_ScalarInteger(iterations));
  SET_VECTOR_ELT(out, 2, Rf_ScalarInteger((int)status));
  SET_VECTOR_ELT(out, 3, iter);
  SET_VECTOR_ELT(out, 4, time);
  SET_VECTOR_ELT(out, 5, res);
  UNPROTECT(5);
  return out;
}

int glue_single(SEXP precision, points *p1, points *p2)
{
  if (TYPEOF(precision) != STRSXP || XLENGTH(precision) != 1)
    Rf_error("internal error: `precision` must be a string");
  if (strcmp(CHAR(STRING_ELT(precision, 0)), "single") != 0) return 0;
  points *ps[2] = {p1, p2};
  for (int m = 0; m < 2 && ps[m]; m++) {
    const size_t len = (size_t)ps[m]->n * ps[m]->d;
    float *x32 = (float *)R_alloc(len, sizeof(float));
    for (size_t i = 0; i < len; i++) x32[i] = (float)ps[m]->x[i];
    ps[m]->x32 = x32;
  }
  return 1;
}

static const double *glue_point_norms(const points *p)
{
  double *norms = (double *)R_alloc(p->n, sizeof(double));
  block_norms(p, norms);
  return norms;
}

void glue_op_norms(kernel_op *op)
{
  if (!block_uses_norms(op->k, op->single, op->x2)) return;
  op->norms2 = glue_point_norms(op->x2);
  op->norms1 = op->x1 == op->x2 ? op->norms2 : glue_point_norms(op->x1);
}

kernel_op glue_square_operator(const kernel *k, points *p, SEXP use_cache,
                               SEXP precision, int nthreads, int *interrupted)
{
  const size_t nn = (size_t)p->n * p->n;
  const int single = glue_single(precision, p, NULL);
  kernel_op K = {k, p, p, NULL, single, NULL, NULL, NULL};
  *interrupted = 0;
  if (!Rf_asLogical(use_cache)) {
    glue_op_norms(&K);
    return K;
  }
  void *cache = R_alloc(nn, single ? sizeof(float) : sizeof(double));
  glue_trace tr; /* no trace rows: the callback only answers Ctrl-C */
  glue_trace_init(&tr, 0, 0, 1);
  *interrupted = kernel_block_build(k, p, p, single, cache, nthreads,
                                    glue_trace_record, &tr);
  if (single)
    K.cache32 = cache;
  else
    K.cache = cache;
  return K;
}

SEXP glue_square_solve(glue_square_solver solve, const void *opt, const kernel *k,
                       points *p, const points *b, SEXP noise, SEXP control,
                       int nthreads, glue_trace *tr)
{
  int done = 0, interrupted = 0;
  const kernel_op K =
      glue_square_operator(k, p, glue_list_get(control, "use_cache"),
                           glue_list_get(control, "precision"), nthreads,
                           &interrupted);
  SEXP alpha = PROTECT(Rf_allocMatrix(REALSXP, p->n, b->d));
  const solver_status status =
      interrupted ? SOLVER_STOPPED
                  : solve(&K, glue_doubles(noise, p->n, "noise"), b->x, b->d, opt,
                          REAL(alpha), &done, glue_trace_record, tr);
  SEXP out = glue_solver_result(alpha, done, status, tr);
  UNPROTECT(1);
  return out;
}
