/* Stationary kernels on inputs that are already divided by their length
 * scales, so every family is a function of the scaled squared distance r2.
 * No R headers: this file is part of the numerical core. */
#ifndef SDDGP_KERNEL_H
#define SDDGP_KERNEL_H

typedef enum {
  KERNEL_MATERN12 = 1,
  KERNEL_MATERN32 = 2,
  KERNEL_MATERN52 = 3,
  KERNEL_SE = 4
} kernel_family;

typedef struct {
  kernel_family family;
  double variance; /* amplitude sigma_f^2 */
} kernel;

/* Is `code` one of the kernel_family values? */
int kernel_family_valid(int code);

/* k(r2) for one scaled squared distance. */
double kernel_value(const kernel *k, double r2);

/* dk/d(r2), the building block of length-scale gradients:
 * dk/dlog(l_j) = -2 s_j^2 dk/d(r2) with s_j the scaled difference in
 * coordinate j.  Matern-1/2 is not differentiable at r = 0; there s_j = 0
 * too, and we return 0 so the product is the correct limit 0. */
double kernel_dr2(const kernel *k, double r2);

/* Evaluate k over a vector of squared distances in place (r2 -> k). */
void kernel_apply(const kernel *k, double *r2, int len);

/* The same in single precision (precision = "single"): float arithmetic
 * with 16 lanes to an AVX-512 vector, values within a few float ulps. */
void kernel_apply32(const kernel *k, float *r2, int len);

/* Degrees of freedom of the Student-t spectral density (2 nu), or 0 for the
 * Gaussian spectral density of the squared exponential kernel. */
int kernel_spectral_df(const kernel *k);

#endif
