#include <math.h>
#include "solver.h"

double solver_rhs_norm(double sum_of_squares)
{
  return sum_of_squares > 0 ? sqrt(sum_of_squares) : 1.0;
}

void solver_rhs_norms(const double *rhs, int n, int nrhs, const int *rows,
                      int nrows, double *norm)
{
  for (int c = 0; c < nrhs; c++) {
    const double *b = rhs + (size_t)c * n;
    double ss = 0.0;
    for (int j = 0; j < nrows; j++) {
      const double v = b[rows ? rows[j] : j];
      ss += v * v;
    }
    norm[c] = solver_rhs_norm(ss);
  }
}

int solver_all_finite(const double *a, size_t len)
{
  for (size_t i = 0; i < len; i++)
    if (!isfinite(a[i])) return 0;
  return 1;
}

solver_status solver_end_step(const solver_stop_rule *rule, int iteration,
                              const double *measures, const double *report)
{
  int below = measures != NULL && rule->has_tolerance;
  if (measures) {
    int diverged = 0;
    for (int c = 0; c < rule->nmeasures; c++) {
      if (!isfinite(measures[c]) || measures[c] > rule->diverged_above)
        diverged = 1;
      if (!(measures[c] < rule->tolerance)) below = 0;
    }
    if (diverged || (rule->iterate && !solver_all_finite(rule->iterate, rule->len)))
      return SOLVER_DIVERGED;
  }
  if (rule->callback && rule->callback(rule->ctx, iteration, report))
    return SOLVER_STOPPED;
  return below ? SOLVER_TOLERANCE : SOLVER_MAX_ITER;
}

void solver_adam_step(double *x, double *m1, double *m2, const double *g,
                      size_t len, double rate, double beta1, uint64_t step)
{
  const double c1 = 1.0 - pow(beta1, (double)step);
  const double c2 = 1.0 - pow(ADAM_BETA2, (double)step);
  for (size_t i = 0; i < len; i++) {
    m1[i] = beta1 * m1[i] + (1.0 - beta1) * g[i];
    m2[i] = ADAM_BETA2 * m2[i] + (1.0 - ADAM_BETA2) * g[i] * g[i];
    x[i] += rate * (m1[i] / c1) / (sqrt(m2[i] / c2) + ADAM_EPSILON);
  }
}
