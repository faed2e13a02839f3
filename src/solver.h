/* What every iterative solver shares: how a run ended, the callback
 * through which the .Call glue records a convergence trace and answers
 * Ctrl-C between iterations, and the pieces of a solver's loop that are the
 * same in each (solver.c). */
#ifndef SDDGP_SOLVER_H
#define SDDGP_SOLVER_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

typedef enum {
  SOLVER_MAX_ITER = 0,  /* ran all iterations */
  SOLVER_TOLERANCE = 1, /* the stopping tolerance was reached */
  SOLVER_DIVERGED = 2,  /* non-finite or exploding iterates */
  SOLVER_STOPPED = 3,   /* the callback asked to stop (user interrupt) */
  SOLVER_NO_MEMORY = 4,
  SOLVER_TIME_LIMIT = 5, /* ran out of its time allowance */
  SOLVER_STALLED = 6     /* too slow to reach the tolerance in its budget */
} solver_status;

/* Called after every iteration.  `residuals` is NULL, or holds one
 * convergence measure per right-hand side (a relative residual) when the
 * solver has computed them this iteration.  A non-zero return stops the
 * solver with SOLVER_STOPPED. */
typedef int (*solver_callback)(void *ctx, int iteration, const double *residuals);

static inline int min_int(int a, int b) { return a < b ? a : b; }
static inline int max_int(int a, int b) { return a > b ? a : b; }

/* a'b over n elements.  The lanes of the reduction are fixed at compile
 * time: the sum does not depend on the thread count. */
static inline double solver_dot(const double *a, const double *b, int n)
{
  double s = 0.0;
  #pragma omp simd reduction(+ : s)
  for (int i = 0; i < n; i++) s += a[i] * b[i];
  return s;
}

/* Non-zero when the callback (NULL: none) asks to stop: how long
 * computations between a solver's steps answer Ctrl-C. */
static inline int solver_poll(solver_callback callback, void *ctx, int iteration)
{
  return callback && callback(ctx, iteration, NULL);
}

/* The scale of a system's relative residuals, from the sum of squares of
 * its right-hand side b: ||b||, or 1 when b = 0, which alpha = 0 solves
 * exactly (its residuals are then absolute). */
double solver_rhs_norm(double sum_of_squares);

/* solver_rhs_norm of each column of rhs (n x nrhs), summed in row order
 * over `rows` (nrows of them; NULL: rows 0 .. nrows - 1). */
void solver_rhs_norms(const double *rhs, int n, int nrhs, const int *rows,
                      int nrows, double *norm);

/* Whether all len values of a are finite. */
int solver_all_finite(const double *a, size_t len);

/* How a run judges the end of each step (solver_end_step). */
typedef struct {
  int nmeasures;         /* convergence measures per step: one per system */
  double diverged_above; /* a measure above this, or not finite, diverged */
  int has_tolerance;     /* 0: the solver never stops at a tolerance */
  double tolerance;      /* every measure below it: SOLVER_TOLERANCE */
  const double *iterate; /* len values that must stay finite, or NULL */
  size_t len;
  solver_callback callback;
  void *ctx;
} solver_stop_rule;

/* The end of step `iteration`, in the order of SDD (and SGD), CaBCD and
 * DSG; CG's columns break down and converge one by one instead.  First
 * divergence (a measure not finite or above the threshold, or a non-finite
 * iterate), then the callback, which gets `report` (NULL, or the values to
 * record this step), then the tolerance.  `measures` is NULL when the step
 * measured nothing: then only the callback applies.  Returns
 * SOLVER_MAX_ITER to go on, or the status that ends the run. */
solver_status solver_end_step(const solver_stop_rule *rule, int iteration,
                              const double *measures, const double *report);

/* log(2 pi), of the Gaussian log likelihoods (MLL, the SVGP bound). */
#define LOG_2PI 1.8378770664093454836

/* Adam's standard constants (Kingma & Ba 2015). */
#define ADAM_BETA1 0.9
#define ADAM_BETA2 0.999
#define ADAM_EPSILON 1e-8

/* Adam's update of x (len values) with gradient g, moments m1 and m2, first
 * moment rate beta1, at step `step` (1-based):
 *   x += rate m1_hat / (sqrt(m2_hat) + ADAM_EPSILON),
 * so a negative rate descends and a positive one ascends. */
void solver_adam_step(double *x, double *m1, double *m2, const double *g,
                      size_t len, double rate, double beta1, uint64_t step);

#endif
