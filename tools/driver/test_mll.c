/* The pathwise estimate of the marginal likelihood's gradient (mll.h)
 * against a naive double loop over dH, and its thread independence;
 * Vecchia's likelihood (vecchia.h) against the exact one. */
#include <string.h>
#include "driver.h"
#include "../../src/mll.h"
#include "../../src/vecchia.h"
#include "../../src/workspace.h"

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

/* With every earlier point a neighbour (m = n - 1) Vecchia's likelihood is
 * the exact one, value and gradient, whatever the order; with fewer it
 * keeps its bits across thread counts; the neighbours found alone
 * (vecchia_neighbours()) are the factor's. */
void test_vecchia_mll(void)
{
  section("Vecchia's likelihood");
  const int n = quick ? 120 : 400, d = 3;
  const kernel k = {KERNEL_MATERN52, 1.3};
  double *x = random_points(n, d, 2.0), *y = random_matrix(n, 1);
  double *noise = malloc(sizeof(double) * n);
  for (int i = 0; i < n; i++) noise[i] = 0.05 * (1.0 + (i % 3)); /* weights */
  const points p = {x, n, d, NULL, NULL};
  const kernel_op op = {&k, &p, &p, NULL, 0, NULL, NULL, NULL, 0, NULL};
  double value, grad[5], exact, exact_grad[5], v1, g1[5];
  double *weights = malloc(sizeof(double) * n);
  for (int i = 0; i < n; i++) weights[i] = 0.05 / noise[i];
  CHECK(mll_evaluate(&k, &p, y, 0.05, weights, 1, NULL, NULL, &exact, exact_grad) == MLL_OK,
        "exact likelihood: status");
  const int ms[2] = {n - 1, 10};
  for (int v = 0; v < 2; v++) {
    vecchia P;
    workspace ws;
    workspace_init(&ws);
    CHECK(vecchia_init(&P, &ws, &op, noise, ms[v], 1, 2, NULL, NULL) == SOLVER_MAX_ITER,
          "Vecchia factor: status");
    CHECK(vecchia_mll(&P, &k, &p, y, noise, 2, NULL, NULL, &value, grad) == SOLVER_MAX_ITER,
          "Vecchia's likelihood: status");
    CHECK(vecchia_mll(&P, &k, &p, y, noise, 1, NULL, NULL, &v1, g1) == SOLVER_MAX_ITER,
          "Vecchia's likelihood: status");
    CHECK(v1 == value && memcmp(g1, grad, sizeof grad) == 0,
          "Vecchia's likelihood: 1 and 2 threads differ");
    /* The neighbours alone are the factor's, and give the same likelihood. */
    vecchia Q;
    workspace wq;
    workspace_init(&wq);
    CHECK(vecchia_neighbours(&Q, &wq, &p, ms[v], 2, NULL, NULL) == SOLVER_MAX_ITER &&
              Q.coef == NULL,
          "Vecchia's neighbours alone: status");
    CHECK(Q.m == P.m && memcmp(Q.order, P.order, sizeof(int) * n) == 0 &&
              memcmp(Q.count, P.count, sizeof(int) * n) == 0,
          "Vecchia's neighbours alone: the factor's order and counts");
    int same = 1;
    for (int i = 0; i < n; i++)
      same = same && memcmp(Q.nb + (size_t)i * Q.m, P.nb + (size_t)i * P.m,
                            sizeof(int) * (size_t)P.count[i]) == 0;
    CHECK(same, "Vecchia's neighbours alone: the factor's neighbours");
    CHECK(vecchia_mll(&Q, &k, &p, y, noise, 2, NULL, NULL, &v1, g1) == SOLVER_MAX_ITER &&
              v1 == value && memcmp(g1, grad, sizeof grad) == 0,
          "Vecchia's likelihood: the same from the neighbours alone");
    workspace_free(&wq);
    if (v == 0) {
      CHECK_CLOSE(value, exact, 1e-9, "m = n - 1: the exact likelihood");
      for (int c = 0; c < d + 2; c++) CHECK_CLOSE(grad[c], exact_grad[c], 1e-8, "m = n - 1: the exact gradient");
    } else {
      CHECK(vecchia_mll(&P, &k, &p, y, noise, 2, stop_at_first, NULL, &value, grad) ==
            SOLVER_STOPPED, "Vecchia's likelihood: a stop requested by the callback");
    }
    workspace_free(&ws);
  }
  free(x);
  free(y);
  free(noise);
  free(weights);
}
