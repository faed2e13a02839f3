#include <math.h>
#include "kernel.h"
#include "vmath.h"

#define SQRT3 1.7320508075688772
#define SQRT5 2.2360679774997898

int kernel_family_valid(int code)
{
  return code >= KERNEL_MATERN12 && code <= KERNEL_SE;
}

double kernel_value(const kernel *k, double r2)
{
  kernel_apply(k, &r2, 1);
  return r2;
}

double kernel_dr2(const kernel *k, double r2)
{
  double r;
  if (r2 < 0) r2 = 0;
  switch (k->family) {
  case KERNEL_MATERN12:
    if (r2 == 0) return 0.0;
    r = sqrt(r2);
    return -k->variance * exp(-r) / (2.0 * r);
  case KERNEL_MATERN32:
    return -1.5 * k->variance * exp(-SQRT3 * sqrt(r2));
  case KERNEL_MATERN52:
    r = SQRT5 * sqrt(r2);
    return -(5.0 / 6.0) * k->variance * (1.0 + r) * exp(-r);
  case KERNEL_SE:
    return -0.5 * k->variance * exp(-0.5 * r2);
  }
  return 0.0;
}

/* The family's formula over an array of squared distances r2 (in place),
 * in the precision of T with that precision's exp from vmath.h and sqrt
 * from libm (a vector instruction under configure's -fno-math-errno).  The
 * switch sits outside the loops so each loop body is branch-free
 * straight-line arithmetic that vectorises. */
#define KERNEL_APPLY(T, EXP, SQRT, MAX)                                      \
  const T s2 = (T)k->variance, one = 1, three = 3, half = (T)0.5;            \
  switch (k->family) {                                                       \
  case KERNEL_MATERN12:                                                      \
    _Pragma("omp simd")                                                      \
    for (int i = 0; i < len; i++) r2[i] = s2 * EXP(-SQRT(MAX(r2[i], 0)));   \
    break;                                                                   \
  case KERNEL_MATERN32:                                                      \
    _Pragma("omp simd")                                                      \
    for (int i = 0; i < len; i++) {                                          \
      const T r = (T)SQRT3 * SQRT(MAX(r2[i], 0));                            \
      r2[i] = s2 * (one + r) * EXP(-r);                                      \
    }                                                                        \
    break;                                                                   \
  case KERNEL_MATERN52:                                                      \
    _Pragma("omp simd")                                                      \
    for (int i = 0; i < len; i++) {                                          \
      const T r = (T)SQRT5 * SQRT(MAX(r2[i], 0));                            \
      r2[i] = s2 * (one + r + r * r / three) * EXP(-r);                      \
    }                                                                        \
    break;                                                                   \
  case KERNEL_SE:                                                            \
    _Pragma("omp simd")                                                      \
    for (int i = 0; i < len; i++) r2[i] = s2 * EXP(-half * MAX(r2[i], 0));   \
    break;                                                                   \
  }

/* Callers may form r2 from rounded sums, hence the clamp at 0. */
SDDGP_HOT
void kernel_apply(const kernel *k, double *r2, int len)
{
  KERNEL_APPLY(double, vm_exp_nonpositive, sqrt, vm_max)
}

SDDGP_HOT
void kernel_apply32(const kernel *k, float *r2, int len)
{
  KERNEL_APPLY(float, vm_expf_nonpositive, sqrtf, vm_maxf)
}
#undef KERNEL_APPLY

int kernel_spectral_df(const kernel *k)
{
  switch (k->family) {
  case KERNEL_MATERN12: return 1;
  case KERNEL_MATERN32: return 3;
  case KERNEL_MATERN52: return 5;
  case KERNEL_SE: return 0;
  }
  return 0;
}
