/* Driver checks of the single-precision kernel values (precision =
 * "single"): kernel_apply32 against the double formulas, and the float
 * kernel operator (on the fly and cached, row and column blocks) against a
 * naive double product, with the bitwise invariants of the double one. */
#include <string.h>

#include "driver.h"

static float *float_copy(const double *x, size_t len)
{
  float *f = xmalloc(sizeof(float) * len);
  for (size_t i = 0; i < len; i++) f[i] = (float)x[i];
  return f;
}

/* max |out - K[rows, :] A| / max |K[rows, :] A|, K dense n1 x n2. */
static double product_error(const double *out, int ldo, const double *K, int n1,
                            int n2, const int *rows, int nrows, const double *A,
                            int ncol)
{
  double num = 0.0, den = 0.0;
  for (int c = 0; c < ncol; c++)
    for (int r = 0; r < nrows; r++) {
      const int i = rows ? rows[r] : r;
      double s = 0.0;
      for (int j = 0; j < n2; j++) s += K[i + (size_t)j * n1] * A[j + (size_t)c * n2];
      num = fmax(num, fabs(out[r + (size_t)c * ldo] - s));
      den = fmax(den, fabs(s));
    }
  return num / den;
}

static void test_kernel_apply32(void)
{
  /* From 0 through the range where every family is far below 1e-6. */
  const int len = 4000;
  float *r2 = xmalloc(sizeof(float) * len);
  for (int row = 0; row < kernel_table_size; row++) {
    const int f = (int)kernel_table[row].family;
    if (!kernel_table[row].stationary) continue; /* test_tanimoto.c */
    const kernel k = {(kernel_family)f, 1.7};
    for (int i = 0; i < len; i++) r2[i] = i == 0 ? 0.0f : (float)(1e-10 * exp(i * 0.0085));
    double maxerr = 0.0;
    float v[1];
    for (int i = 0; i < len; i++) {
      const double exact = kernel_value(&k, r2[i]); /* at the same float r2 */
      v[0] = r2[i];
      kernel_apply32(&k, v, 1);
      maxerr = fmax(maxerr, fabs(v[0] - exact) / k.variance);
    }
    /* The vectorised loop gives the values of the scalar one. */
    float *vec = xmalloc(sizeof(float) * len);
    memcpy(vec, r2, sizeof(float) * len);
    kernel_apply32(&k, vec, len);
    int same = 1;
    for (int i = 0; i < len && same; i++) {
      v[0] = r2[i];
      kernel_apply32(&k, v, 1);
      same = v[0] == vec[i];
    }
    CHECK(maxerr < 1e-6, "kernel_apply32 family %d: max error %g of the variance",
          f, maxerr);
    CHECK(same, "kernel_apply32 family %d: vector and scalar values differ", f);
    free(vec);
  }
  free(r2);
}

static void test_single_operator(void)
{
  const int d = 4, n = quick ? 150 : 400, ncol = 3, nrows = 37;
  double *x = random_points(n, d, 2.0);
  float *x32 = float_copy(x, (size_t)n * d);
  double *A = random_matrix(n, ncol);
  int rows[37];
  for (int r = 0; r < nrows; r++) rows[r] = (int)(test_unif() * n);
  const points p = {x, n, d, x32, NULL};
  for (int row = 0; row < kernel_table_size; row++) {
    const int f = (int)kernel_table[row].family;
    if (!kernel_table[row].stationary) continue; /* test_tanimoto.c */
    const kernel k = {(kernel_family)f, 0.9};
    double *K = naive_kernel_matrix(&k, x, n, x, n, d);
    float *cache = xmalloc(sizeof(float) * (size_t)n * n);
    kernel_block_build(&k, &p, &p, 1, cache, 2, NULL, NULL);
    const kernel_op fly = {&k, &p, &p, NULL, 1, NULL, NULL, NULL, 0, NULL};
    const kernel_op cached = {&k, &p, &p, NULL, 1, cache, NULL, NULL, 0, NULL};
    double *o1 = dalloc((size_t)nrows * ncol), *o2 = dalloc((size_t)nrows * ncol);
    double *o3 = dalloc((size_t)nrows * ncol);
    kernel_op_rows(&fly, rows, nrows, A, ncol, o1, nrows, 1);
    kernel_op_rows(&fly, rows, nrows, A, ncol, o2, nrows, 2);
    kernel_op_rows(&cached, rows, nrows, A, ncol, o3, nrows, 2);
    const double err = product_error(o1, nrows, K, n, n, rows, nrows, A, ncol);
    CHECK(err < 1e-5 && err > 0, "family %d single K[rows, ] A vs double: %g", f, err);
    CHECK(memcmp(o1, o2, sizeof(double) * (size_t)nrows * ncol) == 0,
          "family %d single: 1 and 2 threads differ", f);
    CHECK(memcmp(o1, o3, sizeof(double) * (size_t)nrows * ncol) == 0,
          "family %d single: cached and on-the-fly rows differ in the bits", f);

    /* Column block K[:, rows] A[rows, ] (the transposed product), both
     * sources. */
    double *Ac = random_matrix(nrows, ncol);
    double *c1 = dalloc((size_t)n * ncol), *c2 = dalloc((size_t)n * ncol);
    kernel_op_rows_t(&fly, rows, nrows, Ac, ncol, c1, n, 2);
    kernel_op_rows_t(&cached, rows, nrows, Ac, ncol, c2, n, 1);
    double num = 0.0, den = 0.0;
    for (int c = 0; c < ncol; c++)
      for (int i = 0; i < n; i++) {
        double s = 0.0;
        for (int j = 0; j < nrows; j++)
          s += K[i + (size_t)rows[j] * n] * Ac[j + (size_t)c * nrows];
        num = fmax(num, fabs(c1[i + (size_t)c * n] - s));
        den = fmax(den, fabs(s));
      }
    CHECK(num / den < 1e-5, "family %d single K[, cols] A vs double: %g", f, num / den);
    CHECK(memcmp(c1, c2, sizeof(double) * (size_t)n * ncol) == 0,
          "family %d single K[, cols]: cached and on-the-fly differ", f);
    /* Row values, as the pivoted Cholesky factor reads them. */
    double *r1 = dalloc(n), *r2 = dalloc(n);
    kernel_op_row_values(&fly, rows[0], r1);
    kernel_op_row_values(&cached, rows[0], r2);
    double rerr = 0.0;
    for (int j = 0; j < n; j++) rerr = fmax(rerr, fabs(r1[j] - K[rows[0] + (size_t)j * n]));
    CHECK(rerr < 1e-6 * k.variance, "family %d single row values vs double: %g", f, rerr);
    CHECK(memcmp(r1, r2, sizeof(double) * (size_t)n) == 0,
          "family %d single row values: cached and on-the-fly differ", f);
    free(r1); free(r2);
    free(K); free(cache); free(o1); free(o2); free(o3); free(Ac); free(c1); free(c2);
  }
  free(x); free(x32); free(A);
}

void test_single(void)
{
  section("(b2) single-precision kernel values");
  test_kernel_apply32();
  test_single_operator();
}
