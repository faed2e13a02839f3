#include <float.h>
#include <math.h>
#include <stddef.h>
#include "kernel.h"
#include "vmath.h"

#define SQRT3 1.7320508075688772
#define SQRT5 2.2360679774997898

/* The families' vector forms: <family>_apply in double, <family>_apply32
 * in float. */
#define KFORM_SUFFIX
#define KFORM_T double
#define KFORM_EXP vm_exp_nonpositive
#define KFORM_SQRT sqrt
#define KFORM_MAX vm_max
#include "kernel_apply_template.h"

#define KFORM_SUFFIX 32
#define KFORM_T float
#define KFORM_EXP vm_expf_nonpositive
#define KFORM_SQRT sqrtf
#define KFORM_MAX vm_maxf
#include "kernel_apply_template.h"

/* dk/d(r2) over an array in place (r2 -> dk/dr2), as the apply forms:
 * branch-free loops that vectorise, the exponential of vmath.h. */
SDDGP_HOT
static void matern12_dr2(double s2, double *r2, int len)
{
  #pragma omp simd
  for (int i = 0; i < len; i++) {
    const double r = sqrt(vm_max(r2[i], 0));
    /* At r = 0 the slope is infinite; 0 there (see kernel_dr2), and the
     * division kept finite so that the select has nothing to discard. */
    const double v = -s2 * vm_exp_nonpositive(-r) / (2.0 * vm_max(r, DBL_MIN));
    r2[i] = r > 0 ? v : 0.0;
  }
}

SDDGP_HOT
static void matern32_dr2(double s2, double *r2, int len)
{
  #pragma omp simd
  for (int i = 0; i < len; i++)
    r2[i] = -1.5 * s2 * vm_exp_nonpositive(-SQRT3 * sqrt(vm_max(r2[i], 0)));
}

SDDGP_HOT
static void matern52_dr2(double s2, double *r2, int len)
{
  #pragma omp simd
  for (int i = 0; i < len; i++) {
    const double r = SQRT5 * sqrt(vm_max(r2[i], 0));
    r2[i] = -(5.0 / 6.0) * s2 * (1.0 + r) * vm_exp_nonpositive(-r);
  }
}

SDDGP_HOT
static void se_dr2(double s2, double *r2, int len)
{
  #pragma omp simd
  for (int i = 0; i < len; i++)
    r2[i] = -0.5 * s2 * vm_exp_nonpositive(-0.5 * vm_max(r2[i], 0));
}

const kernel_info kernel_table[] = {
  /* family, name, stationary, apply, apply32, dr2, cusp, spectral_df */
  {KERNEL_MATERN12, "matern12", 1, matern12_apply, matern12_apply32, matern12_dr2, 1, 1},
  {KERNEL_MATERN32, "matern32", 1, matern32_apply, matern32_apply32, matern32_dr2, 0, 3},
  {KERNEL_MATERN52, "matern52", 1, matern52_apply, matern52_apply32, matern52_dr2, 0, 5},
  {KERNEL_SE, "se", 1, se_apply, se_apply32, se_dr2, 0, 0},
  {KERNEL_TANIMOTO, "tanimoto", 0, tanimoto_apply, tanimoto_apply32, NULL, 0, 0}
};
const int kernel_table_size = (int)(sizeof kernel_table / sizeof kernel_table[0]);

/* A search: the table is a handful of rows, and the codes need no order. */
const kernel_info *kernel_info_of(int code)
{
  for (int i = 0; i < kernel_table_size; i++)
    if ((int)kernel_table[i].family == code) return &kernel_table[i];
  return NULL;
}

int kernel_family_valid(int code)
{
  return kernel_info_of(code) != NULL;
}

double kernel_value(const kernel *k, double r2)
{
  kernel_apply(k, &r2, 1);
  return r2;
}

double kernel_diagonal(const kernel *k)
{
  return k->variance;
}

int kernel_stationary(const kernel *k)
{
  return kernel_info_of(k->family)->stationary;
}

void kernel_dr2(const kernel *k, double *r2, int len)
{
  kernel_info_of(k->family)->dr2(k->variance, r2, len);
}

void kernel_apply(const kernel *k, double *r2, int len)
{
  kernel_info_of(k->family)->apply(k->variance, r2, len);
}

void kernel_apply32(const kernel *k, float *r2, int len)
{
  kernel_info_of(k->family)->apply32((float)k->variance, r2, len);
}

int kernel_spectral_df(const kernel *k)
{
  return kernel_info_of(k->family)->spectral_df;
}
