#include <math.h>
#include <string.h>
#include "glue.h"
#include "cabcd.h"
#include "nystrom.h"
#include "recombination.h"
#include "rng.h"
#include "sdd.h"
#include "tanimoto.h"
#include "threads.h"

/* The one place where the strings of the R side meet the codes of the
 * core.  The estimators are named <objective>_<estimator> after
 * sdd_control()'s arguments, with "primal_full" for the exact primal
 * gradient. */
const glue_code glue_estimators[] = {
    {"dual_coordinates", SDD_DUAL_COORDINATES},
    {"dual_features", SDD_DUAL_FEATURES},
    {"dual_coordinates_kalpha", SDD_DUAL_KALPHA},
    {"primal_full", SDD_PRIMAL_FULL},
    {"primal_coordinates", SDD_PRIMAL_SGD},
    {NULL, 0}};
const glue_code glue_batch_samplings[] = {
    {"uniform", SDD_BATCH_UNIFORM}, {"permutation", SDD_BATCH_PERMUTATION}, {NULL, 0}};
/* The warm starts of SDD: sdd_control()'s `warm_start`. */
const glue_code glue_warm_starts[] = {
    {"nystrom", NYSTROM_FULL}, {"inducing", NYSTROM_INDUCING}, {NULL, 0}};
const glue_code glue_precisions[] = {{"double", 0}, {"single", 1}, {NULL, 0}};
/* The streams of the draws that R asks for (C_rng_normal). */
const glue_code glue_rng_streams[] = {
    {"weights", RNG_STREAM_WEIGHTS}, {"noise", RNG_STREAM_NOISE}, {NULL, 0}};
const glue_code glue_cabcd_algorithms[] = {
    {"cabcd", CABCD_CABCD}, {"bcd", CABCD_BCD}, {"adam", CABCD_ADAM}, {NULL, 0}};
const glue_code glue_cabcd_selections[] = {
    {"gauss_southwell", CABCD_GAUSS_SOUTHWELL}, {"random", CABCD_RANDOM}, {NULL, 0}};
const glue_code glue_recombination_methods[] = {
    {"randomized", RECOMB_RANDOMIZED}, {"deterministic", RECOMB_DETERMINISTIC}, {NULL, 0}};
/* Codes that still cross as numbers, so that R holds these tables too
 * (decode_status(), kernel_spec()); the tests check them against these. */
const glue_code glue_statuses[] = {
    {"iterations", SOLVER_MAX_ITER}, {"tolerance", SOLVER_TOLERANCE},
    {"diverged", SOLVER_DIVERGED},   {"interrupted", SOLVER_STOPPED},
    {"out of memory", SOLVER_NO_MEMORY}, {"time limit", SOLVER_TIME_LIMIT},
    {"stalled", SOLVER_STALLED}, {NULL, 0}};

int glue_choice(SEXP value, const glue_code *table, const char *what)
{
  if (TYPEOF(value) != STRSXP || XLENGTH(value) != 1 ||
      STRING_ELT(value, 0) == NA_STRING)
    Rf_error("internal error: `%s` must be a string", what);
  const char *s = CHAR(STRING_ELT(value, 0));
  for (const glue_code *c = table; c->name; c++)
    if (strcmp(s, c->name) == 0) return c->code;
  Rf_error("internal error: unknown %s \"%s\"", what, s);
  return 0; /* not reached */
}

/* A table as a named integer vector. */
static SEXP glue_code_vector(const glue_code *table)
{
  R_xlen_t len = 0;
  while (table[len].name) len++;
  SEXP out = PROTECT(Rf_allocVector(INTSXP, len));
  SEXP names = PROTECT(Rf_allocVector(STRSXP, len));
  for (R_xlen_t i = 0; i < len; i++) {
    INTEGER(out)[i] = table[i].code;
    SET_STRING_ELT(names, i, Rf_mkChar(table[i].name));
  }
  Rf_setAttrib(out, R_NamesSymbol, names);
  UNPROTECT(2);
  return out;
}

SEXP C_glue_codes(void)
{
  const char *names[] = {"estimator", "batch_sampling", "precision", "rng_stream",
                         "algorithm", "selection", "recombination_method",
                         "warm_start", "status", ""};
  const glue_code *tables[] = {glue_estimators, glue_batch_samplings,
                               glue_precisions, glue_rng_streams,
                               glue_cabcd_algorithms, glue_cabcd_selections,
                               glue_recombination_methods, glue_warm_starts,
                               glue_statuses};
  SEXP out = PROTECT(Rf_mkNamed(VECSXP, names));
  for (int i = 0; i < (int)(sizeof tables / sizeof tables[0]); i++)
    SET_VECTOR_ELT(out, i, glue_code_vector(tables[i]));
  UNPROTECT(1);
  return out;
}

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

/* Fingerprints as tanimoto_r.c's C_fingerprints() made them. */
static points glue_fingerprints(SEXP x)
{
  fingerprints *f = (fingerprints *)R_alloc(1, sizeof *f);
  SEXP dense = glue_list_get(x, "x"), start = glue_list_get(x, "start");
  points p;
  p.n = glue_int(x, "n");
  p.d = glue_int(x, "d");
  p.x = Rf_isNull(dense) ? NULL : REAL(dense);
  p.x32 = NULL;
  f->words = glue_int(x, "words");
  /* R's vector data are aligned for doubles, so for 64-bit words too. */
  f->bits = f->words ? (const uint64_t *)RAW(glue_list_get(x, "bits")) : NULL;
  f->start = Rf_isNull(start) ? NULL : INTEGER(start);
  f->col = f->start ? INTEGER(glue_list_get(x, "col")) : NULL;
  f->val = f->start ? REAL(glue_list_get(x, "val")) : NULL;
  f->sums = glue_doubles(glue_list_get(x, "sums"), p.n, "sums");
  p.fp = f;
  return p;
}

points glue_points(SEXP x, const char *what)
{
  points p;
  if (Rf_inherits(x, "sddgp_fingerprints")) return glue_fingerprints(x);
  SEXP dim = Rf_getAttrib(x, R_DimSymbol);
  if (TYPEOF(x) != REALSXP || XLENGTH(dim) != 2)
    Rf_error("internal error: `%s` must be a double matrix", what);
  p.x = REAL(x);
  p.n = INTEGER(dim)[0];
  p.d = INTEGER(dim)[1];
  p.x32 = NULL;
  p.fp = NULL;
  return p;
}

int glue_threads(SEXP threads)
{
  /* Every .Call that runs threads starts here: a governed run that an
   * error left active ends now (a stage's goes on, and its regions take
   * their teams from it). */
  threads_release();
  const int nth = Rf_asInteger(threads);
  return threads_limit(nth == NA_INTEGER ? 1 : nth);
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
  Rf_error("internal error: no element '%s' in the settings list", name);
  return R_NilValue; /* not reached */
}

SEXP glue_list_append(SEXP list, const char *name, SEXP value)
{
  const R_xlen_t len = XLENGTH(list);
  SEXP out = PROTECT(Rf_allocVector(VECSXP, len + 1));
  SEXP names = PROTECT(Rf_allocVector(STRSXP, len + 1));
  SEXP old = Rf_getAttrib(list, R_NamesSymbol);
  for (R_xlen_t i = 0; i < len; i++) {
    SET_VECTOR_ELT(out, i, VECTOR_ELT(list, i));
    SET_STRING_ELT(names, i, STRING_ELT(old, i));
  }
  SET_VECTOR_ELT(out, len, value);
  SET_STRING_ELT(names, len, Rf_mkChar(name));
  Rf_setAttrib(out, R_NamesSymbol, names);
  UNPROTECT(2);
  return out;
}

int glue_int(SEXP list, const char *name)
{
  return Rf_asInteger(glue_list_get(list, name));
}

double glue_real(SEXP list, const char *name)
{
  return Rf_asReal(glue_list_get(list, name));
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

void glue_trace_init(glue_trace *tr, int nvalues, int max_rows, int nthreads)
{
  tr->nvalues = nvalues;
  tr->nrows = 0;
  tr->max_rows = max_rows;
  tr->iteration = (int *)R_alloc(max_rows, sizeof(int));
  tr->seconds = (double *)R_alloc(max_rows, sizeof(double));
  tr->values = (double *)R_alloc((size_t)max_rows * nvalues, sizeof(double));
  tr->nparts = nvalues > 0;
  tr->parts[0].name = "residuals";
  tr->parts[0].columns = nvalues;
  tr->progress = R_NilValue;
  tr->residual = NAN;
  tr->start = tr->last_check = omp_get_wtime();
  if (max_rows > 0) threads_govern(nthreads, tr->start);
}

void glue_trace_progress(glue_trace *tr, SEXP settings)
{
  SEXP names = Rf_getAttrib(settings, R_NamesSymbol);
  for (R_xlen_t i = 0; i < XLENGTH(settings); i++)
    if (strcmp(CHAR(STRING_ELT(names, i)), "progress") == 0 &&
        Rf_isFunction(VECTOR_ELT(settings, i)))
      tr->progress = VECTOR_ELT(settings, i);
}

/* The largest finite residual of a reported row, if any (rows that probed
 * nothing report NaN). */
static void note_residual(glue_trace *tr, const double *values)
{
  if (tr->nparts < 1 || strcmp(tr->parts[0].name, "residuals") != 0) return;
  double top = NAN;
  for (int c = 0; c < tr->parts[0].columns; c++)
    if (isfinite(values[c]) && !(values[c] <= top)) top = values[c];
  if (!isnan(top)) tr->residual = top;
}

typedef struct {
  SEXP fn;
  int iteration;
  double residual;
} progress_call;

static void call_progress(void *data)
{
  const progress_call *pc = data;
  SEXP it = PROTECT(Rf_ScalarInteger(pc->iteration));
  SEXP res = PROTECT(Rf_ScalarReal(pc->residual));
  SEXP call = PROTECT(Rf_lang3(pc->fn, it, res));
  Rf_eval(call, R_GlobalEnv);
  UNPROTECT(3);
}

/* Non-zero when the progress function was interrupted (or failed: the R
 * side catches its own errors, so that means a Ctrl-C). */
static int report_progress(const glue_trace *tr, int iteration)
{
  if (tr->progress == R_NilValue) return 0;
  progress_call pc = {tr->progress, iteration, tr->residual};
  return !R_ToplevelExec(call_progress, &pc);
}

/* Recorded values that a part takes. */
static int part_width(const glue_trace_part *part)
{
  return part->columns == GLUE_TRACE_VECTOR ? 1 : part->columns;
}

void glue_trace_name(glue_trace *tr, const glue_trace_part *parts, int nparts)
{
  int width = 0;
  for (int m = 0; m < nparts; m++) width += part_width(&parts[m]);
  if (nparts > GLUE_TRACE_MAX_PARTS || width != tr->nvalues)
    Rf_error("internal error: the trace parts do not cover its %d values", tr->nvalues);
  tr->nparts = nparts;
  memcpy(tr->parts, parts, sizeof(glue_trace_part) * (size_t)nparts);
}

int glue_trace_record(void *trace, int iteration, const double *residuals)
{
  glue_trace *tr = trace;
  const double now = omp_get_wtime();
  threads_tick(iteration > 0 && !residuals, now);
  if (residuals && tr->progress != R_NilValue) note_residual(tr, residuals);
  if (residuals && tr->nrows < tr->max_rows) {
    const int j = tr->nrows++;
    tr->iteration[j] = iteration;
    tr->seconds[j] = now - tr->start;
    for (int c = 0; c < tr->nvalues; c++)
      tr->values[j + (size_t)c * tr->max_rows] = residuals[c];
  }
  if (now - tr->last_check < INTERRUPT_INTERVAL) return 0;
  tr->last_check = now;
  return report_progress(tr, iteration) || glue_interrupt_pending();
}

/* The recorded values `first`, ... of the rows filled in, as `part` says. */
static SEXP trace_part(const glue_trace *tr, int first, const glue_trace_part *part)
{
  const int ncol = part_width(part);
  SEXP out = part->columns == GLUE_TRACE_VECTOR
                 ? Rf_allocVector(REALSXP, tr->nrows)
                 : Rf_allocMatrix(REALSXP, tr->nrows, ncol);
  for (int c = 0; c < ncol; c++)
    for (int j = 0; j < tr->nrows; j++)
      REAL(out)[j + (size_t)c * tr->nrows] =
          tr->values[j + (size_t)(first + c) * tr->max_rows];
  return out;
}

static SEXP trace_list(const glue_trace *tr)
{
  SEXP out = PROTECT(Rf_allocVector(VECSXP, 2 + tr->nparts));
  SEXP names = PROTECT(Rf_allocVector(STRSXP, 2 + tr->nparts));
  Rf_setAttrib(out, R_NamesSymbol, names);
  SEXP iter = Rf_allocVector(INTSXP, tr->nrows);
  SET_VECTOR_ELT(out, 0, iter);
  SEXP time = Rf_allocVector(REALSXP, tr->nrows);
  SET_VECTOR_ELT(out, 1, time);
  for (int j = 0; j < tr->nrows; j++) {
    INTEGER(iter)[j] = tr->iteration[j];
    REAL(time)[j] = tr->seconds[j];
  }
  SET_STRING_ELT(names, 0, Rf_mkChar("iteration"));
  SET_STRING_ELT(names, 1, Rf_mkChar("seconds"));
  for (int m = 0, first = 0; m < tr->nparts; m++) {
    SET_STRING_ELT(names, 2 + m, Rf_mkChar(tr->parts[m].name));
    SET_VECTOR_ELT(out, 2 + m, trace_part(tr, first, &tr->parts[m]));
    first += part_width(&tr->parts[m]);
  }
  UNPROTECT(2);
  return out;
}

SEXP glue_solver_result(SEXP alpha, int iterations, solver_status status,
                        const glue_trace *tr)
{
  threads_release();
  PROTECT(alpha);
  const char *names[] = {"alpha", "iterations", "status", "trace", ""};
  SEXP out = PROTECT(Rf_mkNamed(VECSXP, names));
  SET_VECTOR_ELT(out, 0, alpha);
  SET_VECTOR_ELT(out, 1, Rf_ScalarInteger(iterations));
  SET_VECTOR_ELT(out, 2, Rf_ScalarInteger((int)status));
  SET_VECTOR_ELT(out, 3, trace_list(tr));
  UNPROTECT(2);
  return out;
}

int glue_single(SEXP precision, points *p1, points *p2)
{
  if (!glue_choice(precision, glue_precisions, "precision")) return 0;
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
  kernel_op K = {k, p, p, NULL, single, NULL, NULL, NULL, 0, NULL};
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
                       points *p, const points *b, SEXP noise, SEXP settings,
                       int nthreads, glue_trace *tr)
{
  int done = 0, interrupted = 0;
  const kernel_op K =
      glue_square_operator(k, p, glue_list_get(settings, "use_cache"),
                           glue_list_get(settings, "precision"), nthreads,
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
