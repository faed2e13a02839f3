/* Kernel families.  Everything the engine knows about a family is its row
 * of kernel_table (kernel.c): block.c, rff.c and the functions below read
 * the row, never the family code, so a new family is its formulas and one
 * row (README, "Adding a kernel").  The families so far are stationary kernels on
 * inputs already divided by their length scales, functions of the scaled
 * squared distance r2; one that is not (the Tanimoto kernel on counts) adds
 * to kernel_info what it has in their place (values from inner products
 * and norms, a feature map of its own).  No R headers: this file is part
 * of the numerical core. */
#ifndef SDDGP_KERNEL_H
#define SDDGP_KERNEL_H

/* The codes R passes (R/kernels.R's kernel_families): any distinct
 * positive values, in no particular order. */
typedef enum {
  KERNEL_MATERN12 = 1,
  KERNEL_MATERN32 = 2,
  KERNEL_MATERN52 = 3,
  KERNEL_SE = 4,
  KERNEL_TANIMOTO = 5
} kernel_family;

typedef struct {
  kernel_family family;
  double variance; /* amplitude sigma_f^2 */
} kernel;

/* A row of the table: one family. */
typedef struct {
  kernel_family family;
  const char *name; /* the family's name in R */
  /* 1 for a function of the scaled squared distance; 0 for the Tanimoto
   * kernel, whose values block.c takes from tanimoto.c's similarities of
   * fingerprints (points' fp), whose features rff.c takes from minhash.c's
   * random hashes, and which has no length scales (mll.c). */
  int stationary;
  /* k over an array of scaled squared distances, in place (r2 -> k), with
   * variance s2, in double and in float (precision = "single": 16 lanes to
   * an AVX-512 vector, values within a few float ulps).  r2 may be
   * slightly negative (formed from rounded sums): read as 0.  For a family
   * that is not stationary, k from its similarities instead (s2 times the
   * Tanimoto coefficient). */
  void (*apply)(double s2, double *r2, int len);
  void (*apply32)(float s2, float *r2, int len);
  /* dk/d(r2) over an array in place (r2 -> dk/dr2, see kernel_dr2), r2
   * read as apply reads it; NULL if not stationary. */
  void (*dr2)(double s2, double *r2, int len);
  /* k has a cusp at r = 0 (a slope in r = sqrt(r2), not flat in r2), so an
   * error e in r2 near 0 moves it by about sqrt(e): block.c then forms r2
   * from differences, never from norms (block_uses_norms). */
  int cusp;
  /* Random features (rff.c) are Fourier features, their frequencies drawn
   * from the spectral density: a multivariate Student-t with spectral_df
   * degrees of freedom (2 nu for Matern-nu), or the standard normal for 0.
   * A family that is not stationary has no spectral density (0 here):
   * its features are random hashes (minhash.h). */
  int spectral_df;
} kernel_info;

/* The table, kernel_table[0 .. kernel_table_size - 1], one row a family. */
extern const kernel_info kernel_table[];
extern const int kernel_table_size;

/* The row of family `code`, or NULL if no family has that code. */
const kernel_info *kernel_info_of(int code);

/* Is `code` the code of a family in the table? */
int kernel_family_valid(int code);

/* k(r2) for one scaled squared distance. */
double kernel_value(const kernel *k, double r2);

/* k(x, x): the variance (for the Tanimoto kernel too, T(x, x) = 1). */
double kernel_diagonal(const kernel *k);

/* Is the family stationary (kernel_info's stationary)? */
int kernel_stationary(const kernel *k);

/* dk/d(r2) over a vector of squared distances in place (r2 -> dk/dr2),
 * the building block of length-scale gradients: dk/dlog(l_j) =
 * -2 s_j^2 dk/d(r2) with s_j the scaled difference in coordinate j.
 * Matern-1/2 is not differentiable at r = 0; there s_j = 0 too, and it
 * gives 0 so the product is the correct limit 0. */
void kernel_dr2(const kernel *k, double *r2, int len);

/* Evaluate k over a vector of squared distances in place (r2 -> k). */
void kernel_apply(const kernel *k, double *r2, int len);

/* The same in single precision (precision = "single"). */
void kernel_apply32(const kernel *k, float *r2, int len);

/* Degrees of freedom of the Student-t spectral density (2 nu), or 0 for the
 * Gaussian spectral density of the squared exponential kernel. */
int kernel_spectral_df(const kernel *k);

#endif
