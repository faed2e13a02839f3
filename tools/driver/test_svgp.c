/* Checks of the sparse variational GP core (src/kmeans.c, src/svgp.c)
 * against independent truths: k-means objectives and centroids recomputed
 * by naive loops, the exact GP (Cholesky) when the inducing points are the
 * training inputs, and central finite differences of the ELBO for its
 * gradient. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "driver.h"
#include "../../src/chol.h"
#include "../../src/kmeans.h"
#include "../../src/svgp.h"

/* A callback that stops on its `limit`-th call and counts the calls that
 * carried a residual (the ELBO), checking they come in order. */
typedef struct {
  int calls, limit, values, last_iteration, ordered;
} svgp_cb;

static int svgp_callback(void *ctx, int iteration, const double *residuals)
{
  svgp_cb *s = ctx;
  s->calls++;
  if (residuals) {
    if (iteration != s->last_iteration + 1 || !isfinite(residuals[0]))
      s->ordered = 0;
    s->last_iteration = iteration;
    s->values++;
  }
  return s->limit > 0 && s->calls >= s->limit;
}

/* Sum over points of the squared distance to the nearest centre. */
static double naive_objective(const double *x, int n, const double *c, int m,
                              int d, int *label)
{
  double total = 0.0;
  for (int i = 0; i < n; i++) {
    double best = HUGE_VAL;
    for (int j = 0; j < m; j++) {
      const double s = sqdist(x, n, i, c, m, j, d);
      if (s < best) {
        best = s;
        label[i] = j;
      }
    }
    total += best;
  }
  return total;
}

static void test_kmeans(void)
{
  const int n = quick ? 400 : 1500, d = 3, m = 25, iters = 100;
  double *x = random_points(n, d, 1.0);
  const points p = {x, n, d, NULL, NULL};
  double *c1 = dalloc((size_t)m * d), *c2 = dalloc((size_t)m * d);
  double *obj1 = dalloc(iters + 1), *obj2 = dalloc(iters + 1);
  int *s1 = xmalloc(sizeof(int) * m), *s2 = xmalloc(sizeof(int) * m);
  int *label = xmalloc(sizeof(int) * n);
  kmeans_options opt = {0, 2718u, 1};
  int done = -1, done2 = -1;

  /* No Lloyd iterations: the centres are m distinct training points. */
  solver_status st = kmeans_fit(&p, m, &opt, c1, s1, obj1, &done, NULL, NULL);
  int distinct = 1, copies = 1;
  for (int j = 0; j < m; j++) {
    for (int l = 0; l < j; l++) if (s1[l] == s1[j]) distinct = 0;
    if (s1[j] < 0 || s1[j] >= n) distinct = 0;
    else
      for (int c = 0; c < d; c++)
        if (c1[j + (size_t)c * m] != x[s1[j] + (size_t)c * n]) copies = 0;
  }
  CHECK(st == SOLVER_MAX_ITER && done == 0, "k-means++ seeding: status %d, %d iterations",
        (int)st, done);
  CHECK(distinct && copies, "k-means++ seeds are %d distinct training points", m);
  CHECK_CLOSE(obj1[0], naive_objective(x, n, c1, m, d, label), 1e-12,
              "objective of the seeds");

  /* Lloyd iterations: the objective never increases (up to rounding of
   * sums of ~n terms), and at the fixed point every centre is the mean of
   * the points nearest to it. */
  opt.iterations = iters;
  st = kmeans_fit(&p, m, &opt, c1, s1, obj1, &done, NULL, NULL);
  int monotone = 1;
  for (int t = 1; t <= done; t++)
    if (obj1[t] > obj1[t - 1] * (1 + 1e-12)) monotone = 0;
  printf("   k-means: objective %.4f after seeding, %.4f after %d Lloyd iterations\n",
         obj1[0], obj1[done], done);
  CHECK(st == SOLVER_MAX_ITER && done >= 1 && done < iters,
        "Lloyd iterations converge: status %d after %d", (int)st, done);
  CHECK(monotone, "the k-means objective never increases");
  CHECK(obj1[done] < obj1[0], "Lloyd iterations lower the objective");
  CHECK_CLOSE(obj1[done], naive_objective(x, n, c1, m, d, label), 1e-12,
              "final objective, recomputed");
  {
    double maxerr = 0.0;
    for (int j = 0; j < m; j++) {
      int count = 0;
      double mean[3] = {0.0, 0.0, 0.0};
      for (int i = 0; i < n; i++)
        if (label[i] == j) {
          count++;
          for (int c = 0; c < d; c++) mean[c] += x[i + (size_t)c * n];
        }
      for (int c = 0; c < d && count > 0; c++)
        maxerr = fmax(maxerr, fabs(mean[c] / count - c1[j + (size_t)c * m]));
    }
    CHECK(maxerr < 1e-12, "converged centres are their clusters' means: %g", maxerr);
  }

  /* Two threads: the same bits. */
  opt.nthreads = 2;
  st = kmeans_fit(&p, m, &opt, c2, s2, obj2, &done2, NULL, NULL);
  CHECK(st == SOLVER_MAX_ITER && done2 == done &&
            memcmp(c1, c2, sizeof(double) * (size_t)m * d) == 0 &&
            memcmp(s1, s2, sizeof(int) * m) == 0 &&
            memcmp(obj1, obj2, sizeof(double) * (done + 1)) == 0,
        "k-means differs between 1 and 2 threads");

  /* Enough points (n d > 1e6) that the seeding and the centroid updates
   * run threaded too. */
  {
    const int nb = 350000, mb = 20;
    double *xb = random_points(nb, d, 1.0), *cb1 = dalloc((size_t)mb * d),
           *cb2 = dalloc((size_t)mb * d), ob1[4], ob2[4];
    int sb1[20], sb2[20], db1 = 0, db2 = 0;
    const points pb = {xb, nb, d, NULL, NULL};
    kmeans_options o = {3, 77u, 1};
    kmeans_fit(&pb, mb, &o, cb1, sb1, ob1, &db1, NULL, NULL);
    o.nthreads = 2;
    kmeans_fit(&pb, mb, &o, cb2, sb2, ob2, &db2, NULL, NULL);
    CHECK(db1 == 3 && db2 == 3 &&
              memcmp(cb1, cb2, sizeof(double) * (size_t)mb * d) == 0 &&
              memcmp(sb1, sb2, sizeof(sb1)) == 0 &&
              memcmp(ob1, ob2, sizeof(ob1)) == 0,
          "k-means on %d points differs between 1 and 2 threads", nb);
    free(xb); free(cb1); free(cb2);
  }

  /* Duplicated inputs: 5 distinct points, 8 centres.  The seeds are still
   * distinct training points (3 of them duplicates), the objective 0. */
  {
    const int nd = 40, md = 8;
    double *xd = dalloc((size_t)nd * d), cd[8 * 3], od[3];
    int sd[8];
    for (int i = 0; i < nd; i++)
      for (int c = 0; c < d; c++) xd[i + (size_t)c * nd] = (double)((i % 5) * (c + 1));
    const points pd = {xd, nd, d, NULL, NULL};
    kmeans_options o = {2, 5u, 2};
    st = kmeans_fit(&pd, md, &o, cd, sd, od, &done, NULL, NULL);
    int ok = 1;
    for (int j = 0; j < md; j++)
      for (int l = 0; l < j; l++) if (sd[l] == sd[j]) ok = 0;
    CHECK(st == SOLVER_MAX_ITER && ok && od[done] == 0.0,
          "duplicated inputs: distinct seeds, objective %g", od[done]);
    free(xd);
  }

  /* Ctrl-C during the seeding. */
  {
    svgp_cb cb = {0, 3, 0, -1, 1};
    st = kmeans_fit(&p, m, &opt, c2, s2, obj2, &done2, svgp_callback, &cb);
    CHECK(st == SOLVER_STOPPED && cb.calls == 3, "k-means stops when asked: %d",
          (int)st);
  }
  free(x); free(c1); free(c2); free(obj1); free(obj2); free(s1); free(s2);
  free(label);
}

/* Result buffers for m inducing points. */
static svgp_result new_result(int m)
{
  svgp_result r;
  r.coef = dalloc(m);
  r.chol_kmm = dalloc((size_t)m * m);
  r.chol_b = dalloc((size_t)m * m);
  r.elbo = NAN;
  r.not_positive_definite = 0;
  return r;
}

static void free_result(svgp_result *r)
{
  free(r->coef);
  free(r->chol_kmm);
  free(r->chol_b);
}

/* Inducing points at the training inputs: the exact GP. */
static void test_svgp_exact(void)
{
  const int n = quick ? 60 : 150, d = 2;
  const kernel k = {KERNEL_MATERN52, 1.3};
  double *x = random_points(n, d, 3.0), *y = random_matrix(n, 1);
  double *noise = dalloc(n), *alpha = dalloc(n), *a = dalloc((size_t)n * n);
  for (int i = 0; i < n; i++) noise[i] = 0.05 + 0.1 * test_unif();
  const points p = {x, n, d, NULL, NULL};
  memcpy(alpha, y, sizeof(double) * n);
  CHECK(chol_solve(&k, &p, noise, alpha, 1, a, NULL, 2, NULL, NULL) == 0, "reference chol_solve");
  double exact = -0.5 * n * 1.8378770664093454836; /* log(2 pi) */
  for (int i = 0; i < n; i++)
    exact += -0.5 * y[i] * alpha[i] - log(a[i + (size_t)i * n]);

  /* With jitter e, Qnn = K (K + e I)^-1 K differs from K by about e: with
   * e = 1e-10 sigma_f^2 and noise >= 0.05 the mean and the bound are exact
   * to ~1e-8, far inside the tolerance. */
  svgp_problem prob = {&k, &p, noise, y, 1e-10, 2, NULL, NULL};
  svgp_result r = new_result(n);
  const points z = {x, n, d, NULL, NULL};
  CHECK(svgp_evaluate(&prob, &z, &r, NULL) == SVGP_OK, "svgp_evaluate at Z = X");
  /* The posterior means K a and K alpha at the training inputs (the
   * coefficients themselves are ill-determined along K's tiny
   * eigenvectors, the means are not). */
  double *K = naive_kernel_matrix(&k, x, n, x, n, d);
  double maxerr = 0.0, maxmu = 0.0;
  for (int i = 0; i < n; i++) {
    double mu = 0.0, mu_svgp = 0.0;
    for (int j = 0; j < n; j++) {
      mu += K[i + (size_t)j * n] * alpha[j];
      mu_svgp += K[i + (size_t)j * n] * r.coef[j];
    }
    maxerr = fmax(maxerr, fabs(mu_svgp - mu));
    maxmu = fmax(maxmu, fabs(mu));
  }
  printf("   Z = X: posterior mean rel. error %.2e, ELBO %.6f vs log ML %.6f\n",
         maxerr / maxmu, r.elbo, exact);
  CHECK(maxerr / maxmu < 1e-6, "Z = X: SVGP posterior mean vs exact: %g",
        maxerr / maxmu);
  CHECK_CLOSE(r.elbo, exact, 1e-6, "Z = X: ELBO vs exact log marginal likelihood");

  /* Fewer inducing points: the bound lies below the log marginal
   * likelihood. */
  const int ms = n / 3; /* the first n / 3 training inputs */
  double *zc = dalloc((size_t)ms * d);
  for (int c = 0; c < d; c++)
    memcpy(zc + (size_t)c * ms, x + (size_t)c * n, sizeof(double) * ms);
  const points zsub = {zc, ms, d, NULL, NULL};
  svgp_result r2 = new_result(ms);
  CHECK(svgp_evaluate(&prob, &zsub, &r2, NULL) == SVGP_OK && r2.elbo < exact,
        "M < n: ELBO %g below the log marginal likelihood %g", r2.elbo, exact);
  free_result(&r);
  free_result(&r2);
  free(x); free(y); free(noise); free(alpha); free(a); free(zc); free(K);
}

/* The analytic gradient against central differences, every family. */
static void test_svgp_gradient(void)
{
  const int n = quick ? 50 : 120, m = 12, d = 2;
  double *x = random_points(n, d, 2.5), *z = random_points(m, d, 2.5);
  double *y = dalloc(n), *noise = dalloc(n), *grad = dalloc((size_t)m * d);
  const points p = {x, n, d, NULL, NULL};
  for (int i = 0; i < n; i++) {
    y[i] = sin(2 * x[i]) + 0.3 * x[i + n] + 0.1 * (2 * test_unif() - 1);
    noise[i] = 0.02 + 0.05 * test_unif();
  }
  for (int row = 0; row < kernel_table_size; row++) {
    const int f = (int)kernel_table[row].family;
    if (!kernel_table[row].stationary) continue; /* test_tanimoto.c */
    const kernel k = {(kernel_family)f, 0.8};
    svgp_problem prob = {&k, &p, noise, y, 1e-6, 2, NULL, NULL};
    svgp_result r = new_result(m);
    const points zp = {z, m, d, NULL, NULL};
    CHECK(svgp_evaluate(&prob, &zp, &r, grad) == SVGP_OK, "gradient evaluation");
    /* h = 1e-5 in length-scale units: truncation error ~h^2 |F'''| / 6
     * and rounding ~1e-16 |F| / h stay below 5e-8 of the largest gradient
     * entry here (printed); the tolerance is 1e-6 of it.  A gradient with
     * a wrong term would be off by O(1) of it. */
    const double h = 1e-5;
    double maxerr = 0.0, maxg = 0.0;
    for (int e = 0; e < m * d; e++) {
      const double z0 = z[e];
      z[e] = z0 + h;
      svgp_evaluate(&prob, &zp, &r, NULL);
      const double fp = r.elbo;
      z[e] = z0 - h;
      svgp_evaluate(&prob, &zp, &r, NULL);
      const double fm = r.elbo;
      z[e] = z0;
      maxerr = fmax(maxerr, fabs((fp - fm) / (2 * h) - grad[e]));
      maxg = fmax(maxg, fabs(grad[e]));
    }
    printf("   kernel %d: max |finite difference - gradient| %.2e (max |gradient| %.2f)\n",
           f, maxerr, maxg);
    CHECK(maxerr < 1e-6 * maxg, "kernel %d: ELBO gradient vs finite differences: %g",
          f, maxerr / maxg);
    free_result(&r);
  }
  free(x); free(z); free(y); free(noise); free(grad);
}

/* Thread counts, refinement, interrupts and failures. */
static void test_svgp_fit(void)
{
  /* Large enough that every BLAS split, kernel block and pairwise
   * gradient sum runs threaded. */
  const int n = 400, m = 300, d = 12;
  const kernel k = {KERNEL_MATERN32, 1.0};
  double *x = random_points(n, d, 3.0), *y = random_matrix(n, 1);
  double *noise = dalloc(n), *z = dalloc((size_t)m * d), *z2 = dalloc((size_t)m * d);
  double *g1 = dalloc((size_t)m * d), *g2 = dalloc((size_t)m * d), obj[11];
  int seeds[300], done = 0;
  for (int i = 0; i < n; i++) noise[i] = 0.1;
  const points p = {x, n, d, NULL, NULL};
  kmeans_options ko = {10, 99u, 2};
  kmeans_fit(&p, m, &ko, z, seeds, obj, &done, NULL, NULL);

  svgp_problem prob = {&k, &p, noise, y, 1e-6, 1, NULL, NULL};
  svgp_result r1 = new_result(m), r2 = new_result(m);
  const points zp = {z, m, d, NULL, NULL};
  svgp_evaluate(&prob, &zp, &r1, g1);
  prob.nthreads = 2;
  svgp_evaluate(&prob, &zp, &r2, g2);
  CHECK(r1.elbo == r2.elbo &&
            memcmp(r1.coef, r2.coef, sizeof(double) * m) == 0 &&
            memcmp(r1.chol_b, r2.chol_b, sizeof(double) * (size_t)m * m) == 0 &&
            memcmp(g1, g2, sizeof(double) * (size_t)m * d) == 0,
        "svgp_evaluate differs between 1 and 2 threads");

  /* Refinement: the ELBO of each iterate reaches the callback, and the fit
   * returned is at least as good as the start. */
  const double start = r1.elbo;
  svgp_cb cb = {0, 0, 0, -1, 1};
  prob.callback = svgp_callback;
  prob.ctx = &cb;
  memcpy(z2, z, sizeof(double) * (size_t)m * d);
  solver_status st = svgp_fit(&prob, z2, m, 5, 0.05, &r2, &done);
  printf("   refinement: ELBO %.4f -> %.4f in %d Adam steps\n", start, r2.elbo, done);
  CHECK(st == SOLVER_MAX_ITER && done == 5 && cb.values == 6 && cb.ordered,
        "refinement: status %d, %d steps, %d ELBO values", (int)st, done, cb.values);
  CHECK(r2.elbo > start, "refinement raises the ELBO: %g -> %g", start, r2.elbo);

  /* Ctrl-C between chunks. */
  svgp_cb stop = {0, 1, 0, -1, 1};
  prob.ctx = &stop;
  st = svgp_fit(&prob, z2, m, 0, 0.05, &r2, &done);
  CHECK(st == SOLVER_STOPPED, "svgp_fit stops when asked: status %d", (int)st);
  prob.callback = NULL;

  /* A non-finite target is reported, not returned. */
  y[3] = NAN;
  st = svgp_fit(&prob, z2, m, 0, 0.05, &r2, &done);
  CHECK(st == SOLVER_DIVERGED && !r2.not_positive_definite,
        "a NaN target: status %d", (int)st);
  y[3] = 0.0;
  /* Nearly coincident inducing points, no jitter: a singular Kmm. */
  for (int e = 0; e < m * d; e++) z2[e] = 1e-4 * test_unif();
  const kernel se = {KERNEL_SE, 1.0};
  prob.k = &se;
  prob.jitter = 0.0;
  st = svgp_fit(&prob, z2, m, 3, 0.05, &r2, &done);
  CHECK(st == SOLVER_DIVERGED && r2.not_positive_definite && done == 0,
        "singular Kmm: status %d, flag %d", (int)st, r2.not_positive_definite);

  free_result(&r1);
  free_result(&r2);
  free(x); free(y); free(noise); free(z); free(z2); free(g1); free(g2);
}

void test_svgp(void)
{
  section("(g) k-means and sparse variational GP");
  test_kmeans();
  test_svgp_exact();
  test_svgp_gradient();
  test_svgp_fit();
}
