/* Shared helpers of the .Call glue: SEXP -> core structs.  Arguments are
 * validated in R before .Call; the checks here only turn a broken internal
 * call into an R error instead of a crash. */
#ifndef SDDGP_GLUE_H
#define SDDGP_GLUE_H

#include <stdint.h>
#include <R.h>
#include <Rinternals.h>
#include "block.h"
#include "kernel.h"
#include "solver.h"

/* list(family = <int code>, variance = <double>) built by R's kernel_spec(). */
kernel glue_kernel(SEXP spec);

/* A double matrix (n x d), already scaled by the length scales; or the
 * fingerprints of the Tanimoto kernel (R's tanimoto_points()). */
points glue_points(SEXP x, const char *what);

/* The requested thread count under the thread policy (threads.h); ends a
 * governed run that an error left active. */
int glue_threads(SEXP threads);

/* A 64-bit seed from two doubles in [0, 2^32) drawn by R's generator. */
uint64_t glue_seed(SEXP seed);

/* A double vector of exactly `len` elements. */
const double *glue_doubles(SEXP x, R_xlen_t len, const char *what);

/* Element `name` of a named list; an R error if it is missing.  The
 * settings of a solver are such a list, made by its R function
 * <solver>_settings() with exactly the fields of the C options struct,
 * named as those fields. */
SEXP glue_list_get(SEXP list, const char *name);

/* A copy of the named list `list` with `value` appended as `name`. */
SEXP glue_list_append(SEXP list, const char *name, SEXP value);

/* Element `name` of a settings list as an int, or as a double. */
int glue_int(SEXP list, const char *name);
double glue_real(SEXP list, const char *name);

/* opt.field from the element of `settings` named as the field itself, so
 * that the names of the R side's <solver>_settings() are those of C. */
#define GLUE_SET_INT(opt, settings, field) ((opt).field = glue_int((settings), #field))
#define GLUE_SET_REAL(opt, settings, field) ((opt).field = glue_real((settings), #field))
/* A choice passed as a string, mapped by glue_choice() with `table`. */
#define GLUE_SET_CHOICE(opt, settings, field, table) \
  ((opt).field = glue_choice(glue_list_get((settings), #field), (table), #field))
#define GLUE_SET_SEED(opt, settings, field) \
  ((opt).field = glue_seed(glue_list_get((settings), #field)))

/* A choice that R passes as a string and its code in the core: one row of
 * a table that ends with a NULL name. */
typedef struct {
  const char *name;
  int code;
} glue_code;

/* The code of `value` (a string) in `table`; an internal error naming
 * `what` when it is not there: R validates every choice before .Call. */
int glue_choice(SEXP value, const glue_code *table, const char *what);

/* The tables of glue_choice(), and that of the solver statuses, which
 * cross to R as numbers; C_glue_codes() reports them all, for the tests.
 * (Kernel family codes cross from R as numbers too: C_kernel_families()
 * reports src/kernel.c's table.) */
extern const glue_code glue_estimators[], glue_batch_samplings[],
    glue_precisions[], glue_rng_streams[], glue_cabcd_algorithms[],
    glue_cabcd_selections[], glue_recombination_methods[], glue_warm_starts[],
    glue_statuses[];

/* TRUE when the user has pressed Ctrl-C; never longjmps, so the caller can
 * free its memory and return normally. */
int glue_interrupt_pending(void);

/* How the values a trace records at each row come back to R: part `name`
 * holds the next `columns` of them as a matrix (one column per right-hand
 * side), or with GLUE_TRACE_VECTOR the next one as a vector. */
typedef struct {
  const char *name;
  int columns;
} glue_trace_part;

#define GLUE_TRACE_VECTOR 0
#define GLUE_TRACE_MAX_PARTS 8

/* The convergence trace of an iterative solver, recorded by its callback:
 * iteration, elapsed seconds and `nvalues` values (by default one residual
 * per right-hand side, the part "residuals") at each iteration where the
 * solver reports them (at most max_rows of them).  The callback also polls
 * for Ctrl-C every INTERRUPT_INTERVAL seconds. */
typedef struct {
  double start, last_check;
  int nvalues, nrows, max_rows;
  int *iteration;
  double *seconds, *values; /* values: max_rows x nvalues */
  int nparts;
  glue_trace_part parts[GLUE_TRACE_MAX_PARTS];
  SEXP progress;   /* R_NilValue, or R's function(iteration, residual) */
  double residual; /* the largest residual last reported (NaN: none yet) */
} glue_trace;

/* Storage comes from R_alloc, so it is freed even after an R error.  A run
 * that keeps a trace (max_rows > 0) is an iterative solve: its team size on
 * up to `nthreads` threads is governed (threads.h) until
 * glue_solver_result(). */
void glue_trace_init(glue_trace *tr, int nvalues, int max_rows, int nthreads);

/* Has the callback report progress: `settings`' element "progress", if it
 * is a function (R's progress_solver()), is called as f(iteration,
 * residual) every INTERRUPT_INTERVAL seconds, with the largest value of
 * the part "residuals" last reported.  The function must stay protected
 * (it is part of a .Call argument) for the run. */
void glue_trace_progress(glue_trace *tr, SEXP settings);

/* Names the parts of the recorded values, in order, instead of the one
 * part "residuals"; they must cover the nvalues exactly. */
void glue_trace_name(glue_trace *tr, const glue_trace_part *parts, int nparts);

/* A solver_callback over a glue_trace; each call ends a step for the
 * thread governor (a step with residuals counts as irregular).  It runs on
 * the main thread outside parallel regions, so it may call R (inside
 * R_ToplevelExec: no longjmp leaves it). */
int glue_trace_record(void *trace, int iteration, const double *residuals);

/* The solver's result as the R side reads it: list(alpha, iterations,
 * status (a solver_status code), trace = list(iteration, seconds, <parts>)). */
SEXP glue_solver_result(SEXP alpha, int iterations, solver_status status,
                        const glue_trace *tr);

/* Whether `precision` ("double" or "single") is "single"; if so, p1 and
 * p2 (p2 may be NULL) get their float coordinates x32, in R-managed
 * memory. */
int glue_single(SEXP precision, points *p1, points *p2);

/* Gives an operator on the fly the squared norms of its points (kernel_op's
 * norms1 and norms2, in R-managed memory) where its products use them
 * (block_uses_norms), so that they are computed once. */
void glue_op_norms(kernel_op *op);

/* K(p, p) as the operator of a solver: read from a cached matrix when
 * `use_cache` (an R logical: the R side decided that the n x n matrix fits
 * the memory budget), evaluated on the fly otherwise; in the `precision`
 * "double" or "single" (then p gets its float coordinates x32).  The
 * cache and x32 live in R-managed memory, so they are freed even if the
 * solve is interrupted, and the cache is built a slab of columns at a time
 * so that Ctrl-C is answered within a fraction of a second; *interrupted
 * is set if it was. */
kernel_op glue_square_operator(const kernel *k, points *p, SEXP use_cache,
                               SEXP precision, int nthreads, int *interrupted);

/* A solver of (K + diag(noise)) alpha = rhs on the square operator K, its
 * options cast to the solver's own type (cg_solve, sdd_solve). */
typedef solver_status (*glue_square_solver)(const kernel_op *K, const double *noise,
                                            const double *rhs, int nrhs,
                                            const void *opt, double *alpha,
                                            int *iterations_done,
                                            solver_callback callback, void *ctx);

/* Runs `solve` on K(p, p) (glue_square_operator with the settings list's
 * use_cache and precision) for the right-hand sides b and returns
 * glue_solver_result's list, its trace recorded in tr. */
SEXP glue_square_solve(glue_square_solver solve, const void *opt, const kernel *k,
                       points *p, const points *b, SEXP noise, SEXP settings,
                       int nthreads, glue_trace *tr);

#endif
