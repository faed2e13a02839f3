/* The pathwise estimate of the marginal likelihood's gradient (mll.h)
 * against a naive double loop over dH, and its thread independence. */
#include <string.h>
#include "driver.h"
#include "../../src/mll.h"

static int stop_at_first(void *ctx, int iteration, const double *residuals)
{
  (void)ctx; (void)iteration; (void)residuals;
  return 1;
}

/* tr(W dH)/2 for W = a a' - V V'/s, every derivative, by definition:
 * dK/dlog(l_c) = -2 k'(r2) (x_ic - x_jc)^2, dK/dlog(variance) = K,
 * dH/dlog(noise) = noise I. */
static void naive_gradient(const kernel *k, const double *x, int m, int d,
                           const double *sols, int s, double noise,
                           double *grad)
{
  for (int c = 0; c < d + 2; c++) grad[c] = 0.0;
  for (int i = 0; i < m; i++)
    for (int j = 0; j < m; j++) {
      double w = sols[i] * sols[j];
      for (int q = 1; q <= s; q++)
        w -= sols[i + (size_t)q * m] * sols[j + (size_t)q * m] / s;
      const double r2 = sqdist(x, m, i, x, m, j, d);
      for (int c = 0; c < d; c++) {
        const double diff = x[i + (size_t)c * m] - x[j + (size_t)c * m];
        grad[c] += 0.5 * w * -2.0 * kernel_dr2_at(k, r2) * diff * diff;
      }
      grad[d] += 0.5 * w * kernel_value(k, r2);
      if (i == j) grad[d + 1] += 0.5 * w * noise;
    }
}

void test_mll(void)
{
  section("pathwise gradient of the marginal likelihood");
  const int m = quick ? 150 : 700, d = 3, s = 5;
  const double noise = 0.1;
  const kernel kernels[2] = {{KERNEL_MATERN32, 1.3}, {KERNEL_SE, 0.7}};
  double *x = random_points(m, d, 2.0);
  const points p = {x, m, d, NULL, NULL};
  double *sols = random_matrix(m, s + 1);
  double g1[5], g2[5], ref[5];
  char what[64];
  for (int v = 0; v < 2; v++) {
    naive_gradient(&kernels[v], x, m, d, sols, s, noise, ref);
    CHECK(mll_pathwise_gradient(&kernels[v], &p, sols, s, noise, NULL, 1, NULL,
                                NULL, g1) == MLL_OK, "pathwise gradient: status");
    CHECK(mll_pathwise_gradient(&kernels[v], &p, sols, s, noise, NULL, 2, NULL,
                                NULL, g2) == MLL_OK, "pathwise gradient: status");
    for (int c = 0; c < d + 2; c++) {
      snprintf(what, sizeof what, "kernel %d, derivative %d", v, c);
      CHECK_CLOSE(g1[c], ref[c], 1e-9, what);
    }
    CHECK(memcmp(g1, g2, sizeof g1) == 0, "pathwise gradient: 1 and 2 threads differ");
  }
  CHECK(mll_pathwise_gradient(&kernels[0], &p, sols, s, noise, NULL, 2,
                              stop_at_first, NULL, g1) == MLL_STOPPED,
        "pathwise gradient: a stop requested by the callback");
  free(x);
  free(sols);
}
