#include <math.h>
#include "kernel.h"
#include "vmath.h"

#define SQRT3 1.7320508075688772
#define SQRT5 2.2360679774997898

/* Callers may form r2 from rounded sums. */
static inline double clamp0(double x)
{
  return vm_max(x, 0.0);
}

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

SDDGP_HOT
void kernel_apply(const kernel *k, double *r2, int len)
{
  /* The switch sits outside the loops so each loop body is branch-free
   * straight-line arithmetic (vmath.h) that vectorises. */
  const double s2 = k->variance;
  switch (k->family) {
  case KERNEL_MATERN12:
    #pragma omp simd
    for (int i = 0; i < len; i++)
      r2[i] = s2 * vm_exp_nonpositive(-vm_sqrt_nonnegative(clamp0(r2[i])));
    break;
  case KERNEL_MATERN32:
    #pragma omp simd
    for (int i = 0; i < len; i++) {
      const double r = SQRT3 * vm_sqrt_nonnegative(clamp0(r2[i]));
      r2[i] = s2 * (1.0 + r) * vm_exp_nonpositive(-r);
    }
    break;
  case KERNEL_MATERN52:
    #pragma omp simd
    for (int i = 0; i < len; i++) {
      const double r = SQRT5 * vm_sqrt_nonnegative(clamp0(r2[i]));
      r2[i] = s2 * (1.0 + r + r * r / 3.0) * vm_exp_nonpositive(-r);
    }
    break;
  case KERNEL_SE:
    #pragma omp simd
    for (int i = 0; i < len; i++) r2[i] = s2 * vm_exp_nonpositive(-0.5 * clamp0(r2[i]));
    break;
  }
}

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
