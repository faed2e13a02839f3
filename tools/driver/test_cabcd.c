/* (g) Caratheodory recombination and the random-feature ridge solvers
 * (src/recombination.c, src/cabcd.c) against independent truth: weighted
 * means and totals summed here, and the ridge solution of the normal
 * equations by Gaussian elimination. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "driver.h"
#include "../../src/cabcd.h"
#include "../../src/recombination.h"
#include "../../src/rff.h"

/* ------------------------------------------------------------------ */
/* Recombination                                                        */

typedef struct {
  int inputs, cone_runs, cone_failures;
} recomb_tally;

/* The guarantees for one input: at most n + 1 increasing indices, positive
 * weights, the total to 1e-13 and every coordinate of the weighted sum to
 * 1e-10 of total * max_i |x_ic| (the scale of that coordinate), and the same
 * result again for the same seed. */
static void check_recombination(const char *label, const double *x, int N,
                                int n, const double *mu, recomb_method method,
                                uint64_t seed, recomb_tally *tally)
{
  int *idx = xmalloc(sizeof(int) * (size_t)(n + 1));
  int *idx2 = xmalloc(sizeof(int) * (size_t)(n + 1));
  double *w = dalloc((size_t)n + 1), *w2 = dalloc((size_t)n + 1);
  recomb_stats st = {0, 0};
  const int k = recombine(x, N, n, mu, method, seed, idx, w, &st);
  double total = 0.0, wtotal = 0.0;
  int positives = 0;
  for (int i = 0; i < N; i++) {
    total += mu[i];
    positives += mu[i] > 0.0;
  }
  CHECK(k >= (positives > 0) && k <= n + 1 && k <= positives,
        "%s: %d points kept (n = %d, %d positive weights)", label, k, n, positives);
  int ordered = 1, positive = 1;
  for (int j = 0; j < k; j++) {
    if (idx[j] < 0 || idx[j] >= N || (j > 0 && idx[j] <= idx[j - 1])) ordered = 0;
    if (!(w[j] > 0.0)) positive = 0;
    wtotal += w[j];
  }
  CHECK(ordered, "%s: indices not increasing within 0..N-1", label);
  CHECK(positive, "%s: a kept weight is not positive", label);
  CHECK(fabs(wtotal - total) <= 1e-13 * total, "%s: total %.17g, expected %.17g",
        label, wtotal, total);
  double worst = 0.0;
  for (int c = 0; c < n; c++) {
    double s0 = 0.0, s1 = 0.0, scale = 0.0;
    for (int i = 0; i < N; i++) {
      s0 += mu[i] * x[i + (size_t)c * N];
      scale = fmax(scale, fabs(x[i + (size_t)c * N]));
    }
    for (int j = 0; j < k; j++) s1 += w[j] * x[idx[j] + (size_t)c * N];
    if (scale > 0.0) worst = fmax(worst, fabs(s1 - s0) / (total * scale));
  }
  CHECK(worst <= 1e-10, "%s: weighted sum off by %g (relative)", label, worst);
  const int k2 = recombine(x, N, n, mu, method, seed, idx2, w2, NULL);
  CHECK(k2 == k && memcmp(idx, idx2, sizeof(int) * (size_t)k) == 0 &&
        memcmp(w, w2, sizeof(double) * (size_t)k) == 0,
        "%s: not reproducible for the same seed", label);
  tally->inputs++;
  tally->cone_runs += st.cone_runs;
  tally->cone_failures += st.cone_failures;
  free(idx);
  free(idx2);
  free(w);
  free(w2);
}

/* Degenerate families of points: 0 generic, 1 only 4 distinct points,
 * 2 on a line, 3 on a plane (n >= 3), 4 all equal, 5 a large offset,
 * 6 coordinates on scales 1e6 and 1e-6, 7 integer grid values. */
static double *degenerate_points(int kind, int N, int n)
{
  double *x = random_points(N, n, 1.0);
  double a[8], b[8], c[8];
  for (int j = 0; j < n; j++) {
    a[j] = 2.0 * test_unif() - 1.0;
    b[j] = 2.0 * test_unif() - 1.0;
    c[j] = 2.0 * test_unif() - 1.0;
  }
  for (int i = 0; i < N; i++) {
    const double s = test_unif(), t = test_unif();
    const int pick = (int)(4 * test_unif());
    for (int j = 0; j < n; j++) {
      double *v = x + i + (size_t)j * N;
      switch (kind) {
      case 1: *v = (double)((pick + j) % 3); break;
      case 2: *v = c[j] + s * a[j]; break;
      case 3: *v = c[j] + s * a[j] + t * b[j]; break;
      case 4: *v = c[j]; break;
      case 5: *v += 1e8; break;
      case 6: *v *= j % 2 ? 1e-6 : 1e6; break;
      case 7: *v = floor(*v * 4.0); break;
      default: break;
      }
    }
  }
  return x;
}

static void test_recombination(void)
{
  section("(g) Caratheodory recombination");
  const int sizes[] = {0, 1, 2, 5, 50, 300, 1000, 10000};
  const int nsizes = (int)(sizeof sizes / sizeof sizes[0]);
  recomb_tally rnd = {0, 0, 0}, det = {0, 0, 0};
  char label[128];
  uint64_t seed = 11;
  for (int n = 1; n <= 6; n++) {
    for (int si = 0; si < nsizes; si++) {
      /* N from n + 1 upwards; the largest only at full size. */
      const int N = si == 0 ? n + 1 : si == 1 ? n + 2 : sizes[si];
      if (quick && N > 1000) continue;
      for (int kind = 0; kind <= 7; kind++) {
        if (kind == 3 && n < 3) continue;
        double *x = degenerate_points(kind, N, n);
        double *mu = dalloc((size_t)N);
        for (int i = 0; i < N; i++) mu[i] = 0.1 + test_unif();
        for (int zeros = 0; zeros <= 1; zeros++) {
          /* The second pass zeroes about half of the weights. */
          if (zeros)
            for (int i = 0; i < N; i++) if (test_unif() < 0.5) mu[i] = 0.0;
          snprintf(label, sizeof label, "randomized n=%d N=%d kind=%d zeros=%d", n, N,
                   kind, zeros);
          check_recombination(label, x, N, n, mu, RECOMB_RANDOMIZED, seed++, &rnd);
          snprintf(label, sizeof label, "deterministic n=%d N=%d kind=%d zeros=%d", n,
                   N, kind, zeros);
          check_recombination(label, x, N, n, mu, RECOMB_DETERMINISTIC, seed++, &det);
        }
        free(x);
        free(mu);
      }
    }
  }
  printf("   %d inputs per method; randomized: %d cone searches, %d fell back\n",
         rnd.inputs, rnd.cone_runs, rnd.cone_failures);
  CHECK(det.cone_runs == 0, "the deterministic method ran %d cone searches",
        det.cone_runs);
  /* The randomised search does the work (inputs of at most n + 1 points
   * need none): it rarely needs the fallback. */
  CHECK(2 * rnd.cone_runs > rnd.inputs && rnd.cone_failures * 20 < rnd.cone_runs,
        "randomized: %d searches, %d failures", rnd.cone_runs, rnd.cone_failures);

  /* Points on a line plus three off it with weight 1e-12: the group
   * barycentres are all but collinear, no random basis of them is well
   * conditioned, and the deterministic routine must take over. */
  {
    const int N = quick ? 2000 : 10000;
    double *x = dalloc((size_t)2 * N), *mu = dalloc(N);
    for (int i = 0; i < N; i++) {
      const double t = test_unif();
      x[i] = t;
      x[i + (size_t)N] = 2.0 * t + 1.0;
      mu[i] = 1.0;
    }
    for (int j = 0; j < 3; j++) {
      const int i = (j * N) / 3 + 7;
      x[i + (size_t)N] += 1.0;
      mu[i] = 1e-12;
    }
    recomb_tally near = {0, 0, 0};
    check_recombination("near-collinear", x, N, 2, mu, RECOMB_RANDOMIZED, 99u, &near);
    CHECK(near.cone_failures > 0, "near-collinear: the fallback was not used");
    free(x);
    free(mu);
  }
  /* No points, and all weights zero. */
  {
    double x[3] = {1.0, 2.0, 3.0}, mu[3] = {0.0, 0.0, 0.0}, w[2];
    int idx[2];
    CHECK(recombine(x, 0, 1, mu, RECOMB_RANDOMIZED, 1u, idx, w, NULL) == 0,
          "no points: nothing kept");
    CHECK(recombine(x, 3, 1, mu, RECOMB_RANDOMIZED, 1u, idx, w, NULL) == 0,
          "zero weights: nothing kept");
  }
  /* One point carries all the weight: it alone is the answer. */
  {
    double *x = random_points(500, 3, 1.0), *mu = dalloc(500), w[4];
    int idx[4];
    for (int i = 0; i < 500; i++) mu[i] = i == 123 ? 2.5 : 0.0;
    const int k = recombine(x, 500, 3, mu, RECOMB_RANDOMIZED, 1u, idx, w, NULL);
    CHECK(k == 1 && idx[0] == 123 && w[0] == 2.5, "single weighted point: k = %d", k);
    free(x);
    free(mu);
  }
}

/* ------------------------------------------------------------------ */
/* Ridge solvers                                                        */

/* Solve A X = B (m x m, nrhs columns) by Gaussian elimination with partial
 * pivoting; A and B are overwritten, X is left in B. */
static void solve_dense(double *A, double *B, int m, int nrhs)
{
  for (int c = 0; c < m; c++) {
    int p = c;
    for (int i = c + 1; i < m; i++)
      if (fabs(A[i + (size_t)c * m]) > fabs(A[p + (size_t)c * m])) p = i;
    for (int j = 0; j < m; j++) {
      const double t = A[c + (size_t)j * m];
      A[c + (size_t)j * m] = A[p + (size_t)j * m];
      A[p + (size_t)j * m] = t;
    }
    for (int j = 0; j < nrhs; j++) {
      const double t = B[c + (size_t)j * m];
      B[c + (size_t)j * m] = B[p + (size_t)j * m];
      B[p + (size_t)j * m] = t;
    }
    for (int i = c + 1; i < m; i++) {
      const double f = A[i + (size_t)c * m] / A[c + (size_t)c * m];
      for (int j = c; j < m; j++) A[i + (size_t)j * m] -= f * A[c + (size_t)j * m];
      for (int j = 0; j < nrhs; j++) B[i + (size_t)j * m] -= f * B[c + (size_t)j * m];
    }
  }
  for (int j = 0; j < nrhs; j++)
    for (int c = m - 1; c >= 0; c--) {
      double s = B[c + (size_t)j * m];
      for (int k = c + 1; k < m; k++) s -= A[c + (size_t)k * m] * B[k + (size_t)j * m];
      B[c + (size_t)j * m] = s / A[c + (size_t)c * m];
    }
}

typedef struct {
  int reports, bad, last, stop_at, nrhs;
} ridge_cb;

/* Residual reports must come once per outer iteration, in order, finite
 * and non-negative; NULL calls (interrupt polls) may come at any time. */
static int ridge_callback(void *ctx, int iteration, const double *residuals)
{
  ridge_cb *s = ctx;
  if (residuals) {
    s->reports++;
    if (iteration != s->last + 1) s->bad = 1;
    s->last = iteration;
    for (int c = 0; c < s->nrhs; c++)
      if (!isfinite(residuals[c]) || residuals[c] < 0.0) s->bad = 1;
  }
  if (s->stop_at < 0) return 1; /* stop at the first call */
  return residuals && s->stop_at > 0 && iteration >= s->stop_at;
}

static double max_rel_error(const double *a, const double *b, int len)
{
  double e = 0.0, s = 0.0;
  for (int i = 0; i < len; i++) {
    e = fmax(e, fabs(a[i] - b[i]));
    s = fmax(s, fabs(b[i]));
  }
  return e / s;
}

/* Run one algorithm with 1 and 2 threads: the results must agree to the
 * bit; the 1-thread run is checked against the exact solution. */
static void check_ridge_run(const char *label, const cabcd_problem *pr,
                            const double *rhs, int nrhs, cabcd_options *opt,
                            const double *star, double tol,
                            solver_status expected)
{
  const size_t len = (size_t)pr->m * nrhs;
  double *t1 = dalloc(len), *t2 = dalloc(len);
  double *loss = dalloc((size_t)opt->iterations * nrhs), *passes = dalloc(opt->iterations);
  cabcd_history hist = {loss, passes};
  ridge_cb cb = {0, 0, 0, 0, nrhs};
  int done1 = 0, done2 = 0;
  opt->nthreads = 1;
  const solver_status st = cabcd_solve(pr, rhs, nrhs, opt, t1, &done1, &hist,
                                       ridge_callback, &cb);
  CHECK(st == expected, "%s: status %d, expected %d", label, (int)st, (int)expected);
  CHECK(cb.reports == done1 && !cb.bad, "%s: %d residual reports for %d iterations%s",
        label, cb.reports, done1, cb.bad ? ", out of order or not finite" : "");
  int increasing = done1 > 0 && passes[0] > 0.0;
  for (int t = 1; t < done1; t++) if (passes[t] < passes[t - 1]) increasing = 0;
  CHECK(increasing, "%s: passes must be positive and never decrease", label);
  for (int c = 0; c < nrhs; c++) {
    const double err = max_rel_error(t1 + (size_t)c * pr->m, star + (size_t)c * pr->m, pr->m);
    printf("   %s rhs %d: %d iterations, %.1f passes, max rel error %.2e\n", label, c,
           done1, passes[done1 - 1], err);
    CHECK(err < tol, "%s rhs %d: relative error %g >= %g", label, c, err, tol);
  }
  opt->nthreads = 2;
  const solver_status st2 = cabcd_solve(pr, rhs, nrhs, opt, t2, &done2, NULL, NULL, NULL);
  CHECK(st2 == st && done2 == done1 && memcmp(t1, t2, sizeof(double) * len) == 0,
        "%s: 1 and 2 threads differ", label);
  free(t1);
  free(t2);
  free(loss);
  free(passes);
}

static void test_ridge(void)
{
  section("(h) random-feature ridge: CaBCD, BCD, Adam");
  /* More rows than one parallel chunk (4096), so two threads really split
   * the work. */
  const int n = 5000, d = 2, m = 8, nrhs = 2;
  const kernel k = {KERNEL_MATERN32, 1.0};
  double *x = random_points(n, d, 10.0); /* about 10 length scales wide */
  const points p = {x, n, d, NULL, NULL};
  double *omega = dalloc((size_t)m * d), *phase = dalloc(m);
  rff_draw(&k, m, d, 77u, omega, phase);
  const rff f = {m, d, omega, phase, sqrt(2.0 / m), 0, 0};
  double *phi = dalloc((size_t)n * m);

  /* The feature matrix: slabs and threads change nothing, and it is what
   * rff_matmul multiplies (Phi times the identity, bit for bit). */
  {
    double *eye = dalloc((size_t)m * m), *ref = dalloc((size_t)n * m);
    double *one = dalloc((size_t)n * m);
    for (int i = 0; i < m * m; i++) eye[i] = i % (m + 1) == 0 ? 1.0 : 0.0;
    rff_matmul(&f, &p, eye, m, ref, n, 2);
    ridge_cb cb = {0, 0, 0, 0, 0};
    CHECK(cabcd_features(&f, &p, phi, 2, ridge_callback, &cb) == 0,
          "cabcd_features stopped without being asked");
    rff_features(&f, &p, 0, n, one, (size_t)n, 1);
    CHECK(memcmp(phi, ref, sizeof(double) * (size_t)n * m) == 0,
          "cabcd_features differs from rff_matmul(Phi, I)");
    CHECK(memcmp(phi, one, sizeof(double) * (size_t)n * m) == 0,
          "rff_features differs between 1 and 2 threads");
    cb.stop_at = -1;
    CHECK(cabcd_features(&f, &p, one, 2, ridge_callback, &cb) == 1,
          "cabcd_features ignored a stop request");
    free(eye);
    free(ref);
    free(one);
  }

  double *wt = dalloc(n), *rhs = random_matrix(n, nrhs);
  for (int i = 0; i < n; i++) {
    wt[i] = 0.5 + 1.5 * test_unif();
    rhs[i] += sin(x[i]); /* column 0: a signal plus noise */
  }
  const double lambda = 0.3;
  const cabcd_problem pr = {phi, n, m, wt, lambda};
  /* theta* = (Phi' W Phi + lambda I)^-1 Phi' W b. */
  double *A = dalloc((size_t)m * m), *star = dalloc((size_t)m * nrhs);
  for (int a = 0; a < m; a++) {
    for (int b = 0; b < m; b++) {
      double s = 0.0;
      for (int i = 0; i < n; i++) s += phi[i + (size_t)a * n] * wt[i] * phi[i + (size_t)b * n];
      A[a + (size_t)b * m] = s + (a == b ? lambda : 0.0);
    }
    for (int c = 0; c < nrhs; c++) {
      double s = 0.0;
      for (int i = 0; i < n; i++) s += phi[i + (size_t)a * n] * wt[i] * rhs[i + (size_t)c * n];
      star[a + (size_t)c * m] = s;
    }
  }
  solve_dense(A, star, m, nrhs);

  cabcd_options opt = {CABCD_CABCD, CABCD_GAUSS_SOUTHWELL, 2, 1.0, 0.9, 100,
                       quick ? 400 : 1000, 256, 1e-10, 5u, 1};
  /* A relative gradient norm of 1e-10 leaves an error of at most the
   * condition number (a few hundred here) times that in theta. */
  check_ridge_run("CaBCD gauss-southwell", &pr, rhs, nrhs, &opt, star, 1e-7,
                  SOLVER_TOLERANCE);
  opt.selection = CABCD_RANDOM;
  opt.block_size = 3;
  check_ridge_run("CaBCD random, blocks of 3", &pr, rhs, nrhs, &opt, star, 1e-7,
                  SOLVER_TOLERANCE);
  opt.algorithm = CABCD_BCD;
  opt.iterations = quick ? 2000 : 4000;
  check_ridge_run("BCD random", &pr, rhs, nrhs, &opt, star, 1e-7, SOLVER_TOLERANCE);
  /* Adam with a constant learning rate settles into a band around theta*
   * whose width is set by the mini-batch noise (2.4e-2 here at a rate of
   * 0.002); the tolerance is that band, not convergence.  A wrong gradient
   * would leave it at O(1). */
  opt.algorithm = CABCD_ADAM;
  opt.step_size = 0.002;
  opt.iterations = quick ? 100 : 200;
  check_ridge_run("Adam", &pr, rhs, 1, &opt, star, 0.05, SOLVER_MAX_ITER);

  /* A zero right-hand side is solved by theta = 0 before any step. */
  {
    double *zero = dalloc(n), th[8];
    int done = 0;
    memset(zero, 0, sizeof(double) * (size_t)n);
    cabcd_options o = {CABCD_CABCD, CABCD_GAUSS_SOUTHWELL, 2, 1.0, 0.9, 100, 50, 256,
                       1e-8, 5u, 1};
    const solver_status st = cabcd_solve(&pr, zero, 1, &o, th, &done, NULL, NULL, NULL);
    int zeros = 1;
    for (int j = 0; j < m; j++) if (th[j] != 0.0) zeros = 0;
    CHECK(st == SOLVER_TOLERANCE && done == 1 && zeros,
          "zero rhs: status %d after %d iterations", (int)st, done);
    free(zero);
  }
  /* A step far beyond the stable range is reported, not returned as NaN. */
  {
    double th[16];
    int done = 0;
    cabcd_options o = {CABCD_BCD, CABCD_RANDOM, 2, 500.0, 0.9, 100, 100, 256, 0.0, 5u, 1};
    const solver_status st = cabcd_solve(&pr, rhs, nrhs, &o, th, &done, NULL, NULL, NULL);
    CHECK(st == SOLVER_DIVERGED && done < 20, "huge step: status %d after %d iterations",
          (int)st, done);
  }
  /* The callback stops the run. */
  {
    double th[16];
    int done = 0;
    ridge_cb cb = {0, 0, 0, 3, nrhs};
    cabcd_options o = {CABCD_CABCD, CABCD_GAUSS_SOUTHWELL, 2, 1.0, 0.9, 100, 100, 256,
                       0.0, 5u, 1};
    const solver_status st = cabcd_solve(&pr, rhs, nrhs, &o, th, &done, NULL,
                                         ridge_callback, &cb);
    CHECK(st == SOLVER_STOPPED && done == 3, "stop request: status %d after %d", (int)st,
          done);
  }
  free(x);
  free(omega);
  free(phase);
  free(phi);
  free(wt);
  free(rhs);
  free(A);
  free(star);
}

void test_cabcd(void)
{
  test_recombination();
  test_ridge();
}
