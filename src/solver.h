/* What every iterative solver shares: how a run ended, and the callback
 * through which the .Call glue records a convergence trace and answers
 * Ctrl-C between iterations. */
#ifndef SDDGP_SOLVER_H
#define SDDGP_SOLVER_H

#include <math.h>
#include <stddef.h>

typedef enum {
  SOLVER_MAX_ITER = 0,  /* ran all iterations */
  SOLVER_TOLERANCE = 1, /* the stopping tolerance was reached */
  SOLVER_DIVERGED = 2,  /* non-finite or exploding iterates */
  SOLVER_STOPPED = 3,   /* the callback asked to stop (user interrupt) */
  SOLVER_NO_MEMORY = 4,
  SOLVER_TIME_LIMIT = 5 /* ran out of its time allowance */
} solver_status;

/* Called after every iteration.  `residuals` is NULL, or holds one
 * convergence measure per right-hand side (a relative residual) when the
 * solver has computed them this iteration.  A non-zero return stops the
 * solver with SOLVER_STOPPED. */
typedef int (*solver_callback)(void *ctx, int iteration, const double *residuals);

/* 1 when every element is finite: the solvers' last check for diverged
 * iterates before they are handed back. */
static inline int solver_all_finite(const double *a, size_t len)
{
  for (size_t i = 0; i < len; i++)
    if (!isfinite(a[i])) return 0;
  return 1;
}

#endif
