#include "chol.h"
#include "lapack.h"

int chol_factor(const kernel *k, const points *x, const double *noise,
                double *a, int nthreads)
{
  const int n = x->n;
  int info = 0;
  kernel_block_matrix(k, x, x, a, nthreads);
  for (int i = 0; i < n; i++) a[i + (size_t)i * n] += noise[i];
  dpotrf_("L", &n, a, &n, &info, 1);
  return info;
}

int chol_solve(const kernel *k, const points *x, const double *noise,
               double *rhs, int nrhs, double *a, int nthreads)
{
  const int n = x->n;
  int info = chol_factor(k, x, noise, a, nthreads);
  if (info != 0) return info;
  dpotrs_("L", &n, &nrhs, a, &n, rhs, &n, &info, 1);
  return info;
}
