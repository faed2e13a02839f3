/* Driver checks of the gradient estimators that share SDD's loop (the SGD
 * baseline of Lin et al. 2023 and the SDD paper's ablations, src/sdd.c),
 * of the kernel-column product kernel_op_rows_t (src/block.c) and of the
 * per-step random features (src/rff.c).
 *
 * The truth is written out here: naive loops over an explicit kernel
 * matrix, and for the loop itself a hand-written recursion (momentum,
 * averaging, clipping) over naive gradients that replays the solver's
 * random draws (batch indices from rng_index, features from
 * rff_draw_step), so stochastic estimators are checked step by step, not
 * just in distribution. */
#include <math.h>
#include <string.h>

#include "driver.h"
#include "../../src/block.h"
#include "../../src/chol.h"
#include "../../src/rff.h"
#include "../../src/rng.h"
#include "../../src/sdd.h"

/* Largest |out - naive K[rows, :]' U| / max(1, |naive|); K is n1 x n2,
 * out is n2 x ncol. */
static double rows_t_error(const double *out, int ldo, const double *K, int n1,
                           int n2, const int *rows, int nrows, const double *U,
                           int ncol)
{
  double maxerr = 0.0;
  for (int c = 0; c < ncol; c++)
    for (int j = 0; j < n2; j++) {
      double s = 0.0;
      for (int r = 0; r < nrows; r++)
        s += K[rows[r] + (size_t)j * n1] * U[r + (size_t)c * nrows];
      maxerr = fmax(maxerr, fabs(out[j + (size_t)c * ldo] - s) / fmax(1.0, fabs(s)));
    }
  return maxerr;
}

static void test_rows_t(void)
{
  const int n = quick ? 150 : 600, d = 3, m = 29;
  const kernel k = {KERNEL_MATERN52, 0.9};
  double *x = random_points(n, d, 2.0), *xt = random_points(m, d, 2.0);
  const points p = {x, n, d, NULL, NULL}, pt = {xt, m, d, NULL, NULL};
  double *K = naive_kernel_matrix(&k, x, n, x, n, d);
  double *Kt = naive_kernel_matrix(&k, xt, m, x, n, d);
  double *Kc = dalloc((size_t)n * n);
  kernel_block_matrix(&k, &p, &p, Kc, 2);
  const kernel_op fly = {&k, &p, &p, NULL, 0, NULL, NULL, NULL, 0, NULL}, cached = {&k, &p, &p, Kc, 0, NULL, NULL, NULL, 0, NULL};
  const kernel_op test = {&k, &pt, &p, NULL, 0, NULL, NULL, NULL, 0, NULL};
  /* Row counts that fill groups of 32 rows and leave part of one; column
   * counts that take the one-column path alone and both paths; n leaves a
   * partial chunk of columns at the end of the last tile. */
  const int nrows_list[] = {37, 64, 3}, ncol_list[] = {1, 6, 70};
  for (int a = 0; a < 3; a++)
    for (int b = 0; b < 3; b++) {
      const int nrows = nrows_list[a], ncol = ncol_list[b];
      int *rows = xmalloc(sizeof(int) * (size_t)nrows), *trows = xmalloc(sizeof(int) * (size_t)nrows);
      for (int r = 0; r < nrows; r++) {
        rows[r] = (int)(test_unif() * n);
        trows[r] = (int)(test_unif() * m);
      }
      rows[nrows - 1] = rows[0]; /* repeated rows add up */
      double *U = random_matrix(nrows, ncol);
      double *o1 = dalloc((size_t)n * ncol), *o2 = dalloc((size_t)n * ncol);
      double *o3 = dalloc((size_t)n * ncol);
      kernel_op_rows_t(&fly, rows, nrows, U, ncol, o1, n, 1);
      const double err = rows_t_error(o1, n, K, n, n, rows, nrows, U, ncol);
      CHECK(err < 1e-12, "K[rows, ]' U (%d rows, %d columns) vs naive: %g", nrows, ncol, err);
      kernel_op_rows_t(&fly, rows, nrows, U, ncol, o2, n, 2);
      CHECK(memcmp(o1, o2, sizeof(double) * (size_t)n * ncol) == 0,
            "K[rows, ]' U (%d rows, %d columns) differs between 1 and 2 threads", nrows, ncol);
      kernel_op_rows_t(&cached, rows, nrows, U, ncol, o3, n, 2);
      CHECK(memcmp(o1, o3, sizeof(double) * (size_t)n * ncol) == 0,
            "K[rows, ]' U (%d rows, %d columns): cached and on-the-fly differ", nrows, ncol);
      /* Each column of the result has the same bits on its own. */
      if (ncol > 1) {
        double *one = dalloc(n);
        kernel_op_rows_t(&fly, rows, nrows, U + (size_t)(ncol - 1) * nrows, 1, one, n, 2);
        CHECK(memcmp(one, o1 + (size_t)(ncol - 1) * n, sizeof(double) * (size_t)n) == 0,
              "K[rows, ]' U: column %d alone differs from within %d columns", ncol - 1, ncol);
        free(one);
      }
      /* Rows from other points (test points against the training points). */
      kernel_op_rows_t(&test, trows, nrows, U, ncol, o1, n, 2);
      CHECK(rows_t_error(o1, n, Kt, m, n, trows, nrows, U, ncol) < 1e-12,
            "K(test[rows], x)' U vs naive");
      free(rows); free(trows); free(U); free(o1); free(o2); free(o3);
    }
  free(x); free(xt); free(K); free(Kt); free(Kc);
}

/* Phi(x) (n x m) with phi_j(x) = scale cos(omega_j' x + phase_j), naively. */
static double *naive_features(const rff *f, const double *x, int n)
{
  double *phi = dalloc((size_t)n * f->m);
  for (int j = 0; j < f->m; j++)
    for (int i = 0; i < n; i++) {
      double a = f->phase[j];
      for (int c = 0; c < f->d; c++)
        a += x[i + (size_t)c * n] * f->omega[j + (size_t)c * f->m];
      phi[i + (size_t)j * n] = f->scale * cos(a);
    }
  return phi;
}

static void test_step_features(void)
{
  const int n = quick ? 200 : 600, d = 3, m = quick ? 60 : 400, ncol = 3;
  const kernel k = {KERNEL_MATERN32, 1.4};
  double *x = random_points(n, d, 2.0), *A = random_matrix(n, ncol);
  const points p = {x, n, d, NULL, NULL};
  double *om = dalloc((size_t)m * d), *ph = dalloc(m);
  double *om2 = dalloc((size_t)m * d), *ph2 = dalloc(m);
  double *o1 = dalloc((size_t)m * ncol), *o2 = dalloc((size_t)m * ncol);

  rff_draw_step(&k, m, d, 77u, 5u, om, ph);
  rff_draw_step(&k, m, d, 77u, 5u, om2, ph2);
  CHECK(memcmp(om, om2, sizeof(double) * (size_t)m * d) == 0 &&
        memcmp(ph, ph2, sizeof(double) * (size_t)m) == 0,
        "rff_draw_step is a function of (seed, step)");
  rff_draw_step(&k, m, d, 77u, 6u, om2, ph2);
  CHECK(memcmp(om, om2, sizeof(double) * (size_t)m * d) != 0,
        "rff_draw_step: the next step has new features");
  rff_draw(&k, m, d, 77u, om2, ph2);
  CHECK(memcmp(om, om2, sizeof(double) * (size_t)m * d) != 0,
        "rff_draw_step does not repeat the prior's features of the same seed");

  const rff f = {m, d, om, ph, sqrt(2.0 * k.variance / m), 0, 0};
  double *phi = naive_features(&f, x, n);
  rff_tmatmul(&f, &p, A, ncol, o1, 1);
  rff_tmatmul(&f, &p, A, ncol, o2, 2);
  double maxerr = 0.0;
  for (int c = 0; c < ncol; c++)
    for (int j = 0; j < m; j++) {
      double s = 0.0;
      for (int i = 0; i < n; i++) s += phi[i + (size_t)j * n] * A[i + (size_t)c * n];
      maxerr = fmax(maxerr, fabs(o1[j + (size_t)c * m] - s));
    }
  CHECK(maxerr < 1e-11, "rff_tmatmul vs naive Phi' A: %g", maxerr);
  CHECK(memcmp(o1, o2, sizeof(double) * (size_t)m * ncol) == 0,
        "rff_tmatmul differs between 1 and 2 threads");
  free(x); free(A); free(om); free(ph); free(om2); free(ph2); free(o1);
  free(o2); free(phi);
}

/* ------------------------------------------------------------------ */
/* The loop against a hand-written recursion                            */

typedef struct {
  const kernel *k;
  const double *x, *K, *noise, *rhs, *rhs_reg;
  int n, d, nrhs;
} hand_problem;

/* (K + diag(noise)) a - b for every column; out n x nrhs. */
static void hand_residual(const hand_problem *hp, const double *a, double *out)
{
  const int n = hp->n;
  for (int c = 0; c < hp->nrhs; c++)
    for (int i = 0; i < n; i++) {
      double s = hp->noise[i] * a[i + (size_t)c * n] - hp->rhs[i + (size_t)c * n];
      for (int j = 0; j < n; j++) s += hp->K[i + (size_t)j * n] * a[j + (size_t)c * n];
      out[i + (size_t)c * n] = s;
    }
}

/* out = M v for a dense n x n matrix M, nrhs columns. */
static void hand_matvec(const double *M, int n, int nrhs, const double *v,
                        double *out)
{
  for (int c = 0; c < nrhs; c++)
    for (int i = 0; i < n; i++) {
      double s = 0.0;
      for (int j = 0; j < n; j++) s += M[i + (size_t)j * n] * v[j + (size_t)c * n];
      out[i + (size_t)c * n] = s;
    }
}

/* The 1/n-scaled gradient of sdd.h's estimator `est` at a, replaying step
 * t's batch (uniform sampling) and features. */
static void hand_gradient(const hand_problem *hp, const sdd_options *opt,
                          int t, const double *a, double *g)
{
  const int n = hp->n, nrhs = hp->nrhs, B = opt->batch_size;
  const size_t len = (size_t)n * nrhs;
  double *r = dalloc(len), *LLt = NULL;
  int *idx = xmalloc(sizeof(int) * (size_t)B);
  for (int j = 0; j < B; j++)
    idx[j] = B == n ? j : rng_index(opt->seed, RNG_STREAM_BATCH, (uint64_t)t * B + j, n);
  if (opt->estimator == SDD_DUAL_FEATURES || opt->estimator == SDD_PRIMAL_SGD) {
    const int m = opt->features;
    double *om = dalloc((size_t)m * hp->d), *ph = dalloc(m);
    rff_draw_step(hp->k, m, hp->d, opt->seed, (uint64_t)t, om, ph);
    const rff f = {m, hp->d, om, ph, sqrt(2.0 * hp->k->variance / m), 0, 0};
    double *phi = naive_features(&f, hp->x, n);
    LLt = dalloc((size_t)n * n);
    for (int i = 0; i < n; i++)
      for (int i2 = 0; i2 < n; i2++) {
        double s = 0.0;
        for (int j = 0; j < m; j++) s += phi[i + (size_t)j * n] * phi[i2 + (size_t)j * n];
        LLt[i + (size_t)i2 * n] = s;
      }
    free(om); free(ph); free(phi);
  }
  memset(g, 0, sizeof(double) * len);
  hand_residual(hp, a, r); /* (K + Lambda) a - b */
  switch (opt->estimator) {
  case SDD_DUAL_COORDINATES:
    for (int c = 0; c < nrhs; c++)
      for (int j = 0; j < B; j++)
        g[idx[j] + (size_t)c * n] += r[idx[j] + (size_t)c * n] / B;
    break;
  case SDD_DUAL_FEATURES:
  case SDD_DUAL_KALPHA: {
    /* r - K a = Lambda a - b; the estimate of K a is L L' a, or K a on the
     * batch rows scaled by n / B. */
    double *Ka = dalloc(len), *La = calloc(len, sizeof(double));
    hand_matvec(hp->K, n, nrhs, a, Ka);
    if (LLt) hand_matvec(LLt, n, nrhs, a, La);
    for (size_t q = 0; q < len; q++) g[q] = (La[q] + r[q] - Ka[q]) / n;
    if (opt->estimator == SDD_DUAL_KALPHA)
      for (int c = 0; c < nrhs; c++)
        for (int j = 0; j < B; j++)
          g[idx[j] + (size_t)c * n] += Ka[idx[j] + (size_t)c * n] / B;
    free(Ka); free(La);
    break;
  }
  case SDD_PRIMAL_FULL:
    hand_matvec(hp->K, n, nrhs, r, g);
    for (size_t q = 0; q < len; q++) g[q] /= n;
    break;
  case SDD_PRIMAL_SGD: {
    /* (n/B) K[:, I] (K_I a - b_err_I) + L L' (Lambda a - b_reg), over n. */
    double *v = dalloc(len), *w = dalloc(len);
    for (int c = 0; c < nrhs; c++)
      for (int i = 0; i < n; i++) {
        const size_t q = i + (size_t)c * n;
        const double breg = hp->rhs_reg ? hp->rhs_reg[q] : 0.0;
        v[q] = hp->noise[i] * a[q] - breg;
        /* r - v = K a - b + b_reg = K a - b_err. */
        r[q] -= v[q];
      }
    hand_matvec(LLt, n, nrhs, v, w);
    for (int c = 0; c < nrhs; c++)
      for (int i = 0; i < n; i++) {
        double s = 0.0;
        for (int j = 0; j < B; j++)
          s += hp->K[i + (size_t)idx[j] * n] * r[idx[j] + (size_t)c * n];
        g[i + (size_t)c * n] = (s * n / B + w[i + (size_t)c * n]) / n;
      }
    free(v); free(w);
    break;
  }
  }
  free(r); free(idx); free(LLt);
}

/* `steps` steps of optax Nesterov with clipping and the average of
 * sdd.h, written out directly; the arithmetic average is the plain mean of
 * the stored iterates. */
static void hand_descent(const hand_problem *hp, const sdd_options *opt,
                         int steps, double *ab)
{
  const int n = hp->n, nrhs = hp->nrhs;
  const size_t len = (size_t)n * nrhs;
  double *a = calloc(len, sizeof(double)), *m = calloc(len, sizeof(double));
  double *g = dalloc(len), *sum = calloc(len, sizeof(double));
  const double rho = opt->momentum;
  int count = 0;
  memset(ab, 0, sizeof(double) * len);
  for (int t = 0; t < steps; t++) {
    hand_gradient(hp, opt, t, a, g);
    for (int c = 0; c < nrhs && opt->clip; c++) {
      double ss = 0.0;
      for (int i = 0; i < n; i++) ss += g[i + (size_t)c * n] * g[i + (size_t)c * n];
      if (opt->clip[c] > 0 && sqrt(ss) > opt->clip[c])
        for (int i = 0; i < n; i++) g[i + (size_t)c * n] *= opt->clip[c] / sqrt(ss);
    }
    for (int c = 0; c < nrhs; c++)
      for (int i = 0; i < n; i++) {
        const size_t q = i + (size_t)c * n;
        m[q] = g[q] + rho * m[q];
        a[q] -= opt->step_size[c] * (g[q] + rho * m[q]);
      }
    if (opt->averaging_start > 0) {
      if (t + 1 >= opt->averaging_start) {
        count++;
        for (size_t q = 0; q < len; q++) sum[q] += a[q];
      }
      for (size_t q = 0; q < len; q++) ab[q] = count ? sum[q] / count : a[q];
    } else {
      for (size_t q = 0; q < len; q++)
        ab[q] = opt->averaging_rate * a[q] + (1.0 - opt->averaging_rate) * ab[q];
    }
  }
  free(a); free(m); free(g); free(sum);
}

/* Largest eigenvalue of a symmetric positive semi-definite n x n matrix by
 * power iteration. */
static double largest_eigenvalue(const double *M, int n)
{
  double *v = dalloc(n), *w = dalloc(n), ev = 0.0;
  for (int i = 0; i < n; i++) v[i] = 1.0 / sqrt((double)n);
  for (int it = 0; it < 500; it++) {
    hand_matvec(M, n, 1, v, w);
    double ss = 0.0;
    for (int i = 0; i < n; i++) ss += w[i] * w[i];
    ev = sqrt(ss);
    for (int i = 0; i < n; i++) v[i] = w[i] / ev;
  }
  free(v); free(w);
  return ev;
}

static double max_abs_diff(const double *a, const double *b, size_t len)
{
  double e = 0.0;
  for (size_t i = 0; i < len; i++) e = fmax(e, fabs(a[i] - b[i]));
  return e;
}

typedef struct {
  int rows, nrhs;
  int iteration[64];
  double values[64][SDD_TRACE_VALUES(2)];
} trace_rec;

static int record(void *ctx, int iteration, const double *values)
{
  trace_rec *tr = ctx;
  if (values && tr->rows < 64) {
    tr->iteration[tr->rows] = iteration;
    memcpy(tr->values[tr->rows], values, sizeof(double) * SDD_TRACE_VALUES(tr->nrhs));
    tr->rows++;
  }
  return 0;
}

/* K-norm relative error sqrt(e'(K + Lambda)e / s'(K + Lambda)s) of each
 * column of alpha against star. */
static double knorm_error(const hand_problem *hp, const double *alpha,
                          const double *star)
{
  const int n = hp->n;
  double worst = 0.0;
  for (int c = 0; c < hp->nrhs; c++) {
    double eAe = 0.0, sAs = 0.0;
    for (int i = 0; i < n; i++) {
      double ke = hp->noise[i] * (alpha[i + (size_t)c * n] - star[i + (size_t)c * n]);
      double ks = hp->noise[i] * star[i + (size_t)c * n];
      for (int j = 0; j < n; j++) {
        ke += hp->K[i + (size_t)j * n] * (alpha[j + (size_t)c * n] - star[j + (size_t)c * n]);
        ks += hp->K[i + (size_t)j * n] * star[j + (size_t)c * n];
      }
      eAe += (alpha[i + (size_t)c * n] - star[i + (size_t)c * n]) * ke;
      sAs += star[i + (size_t)c * n] * ks;
    }
    worst = fmax(worst, sqrt(eAe / sAs));
  }
  return worst;
}

void test_sgd(void)
{
  section("(g) kernel_op_rows_t: products with kernel columns");
  test_rows_t();
  section("(h) per-step random features");
  test_step_features();
  section("(i) sdd_solve's other estimators (SGD, ablations)");

  /* Inputs on a jittered 10 x 6 grid two length scales apart: K is well
   * conditioned (the primal's condition number is that of K (K + Lambda),
   * the square of the dual's), so full-batch primal descent converges in a
   * few hundred steps. */
  const int n = 60, d = 2, nrhs = 2;
  const kernel k = {KERNEL_MATERN32, 1.0};
  double *x = random_points(n, d, 0.6), *rhs = random_matrix(n, nrhs);
  for (int i = 0; i < n; i++) {
    x[i] += 2.0 * (i % 10);
    x[i + (size_t)n] += 2.0 * (i / 10);
  }
  double *reg = random_matrix(n, nrhs), *noise = dalloc(n);
  for (int i = 0; i < n; i++) noise[i] = 0.3 + 0.2 * (i % 2); /* heteroscedastic */
  const points p = {x, n, d, NULL, NULL};
  double *K = naive_kernel_matrix(&k, x, n, x, n, d);
  double *Kc = dalloc((size_t)n * n);
  kernel_block_matrix(&k, &p, &p, Kc, 2);
  const kernel_op op = {&k, &p, &p, NULL, 0, NULL, NULL, NULL, 0, NULL}, op_cached = {&k, &p, &p, Kc, 0, NULL, NULL, NULL, 0, NULL};
  const hand_problem hp = {&k, x, K, noise, rhs, reg, n, d, nrhs};
  const size_t len = (size_t)n * nrhs;
  double *star = dalloc(len), *chol_work = dalloc((size_t)n * n);
  memcpy(star, rhs, sizeof(double) * len);
  CHECK(chol_solve(&k, &p, noise, star, nrhs, chol_work, NULL, 1, NULL, NULL) == 0, "reference chol_solve");
  double *ab1 = dalloc(len), *ab2 = dalloc(len), *hand = dalloc(len);
  char what[160];

  const char *names[] = {"dual coordinates", "dual features", "dual K alpha",
                         "primal full", "primal SGD"};
  /* Curvatures of the expected dual and primal steps, lambda_max of
   * (K + Lambda) / n and of K (K + Lambda) / n; Nesterov momentum 0.9 is
   * stable while step size x curvature < 1.36. */
  const double lmax = largest_eigenvalue(K, n);
  const double h_dual = (lmax + 0.5) / n, h_primal = lmax * (lmax + 0.5) / n;
  printf("   lambda_max(K) = %.3f: step limits %.2f (dual), %.3f (primal)\n", lmax,
         1.36 / h_dual, 1.36 / h_primal);
  const double lr_dual[2] = {0.6 / h_dual, 0.4 / h_dual};
  const double lr_primal[2] = {0.6 / h_primal, 0.4 / h_primal};
  const double clip[2] = {0.02, 0.0};

  /* (1) Seven steps of every estimator against the hand recursion, with
   * momentum, geometric or arithmetic averaging, heteroscedastic noise,
   * b_reg for SGD and clipping of the first system for the primal ones. */
  for (int e = SDD_DUAL_COORDINATES; e <= SDD_PRIMAL_SGD; e++) {
    for (int arith = 0; arith <= 1; arith++) {
      sdd_options opt;
      memset(&opt, 0, sizeof opt);
      opt.iterations = 7;
      opt.batch_size = e == SDD_PRIMAL_FULL ? n : 13;
      opt.batch_sampling = SDD_BATCH_UNIFORM;
      opt.estimator = (sdd_estimator)e;
      opt.features = 17;
      opt.rhs_reg = e == SDD_PRIMAL_SGD ? reg : NULL;
      opt.step_size = e >= SDD_PRIMAL_FULL ? lr_primal : lr_dual;
      opt.clip = e >= SDD_PRIMAL_FULL ? clip : NULL;
      opt.momentum = 0.9;
      opt.averaging_rate = 0.3;
      opt.averaging_start = arith ? 3 : 0;
      opt.check_every = 3;
      opt.probe_size = 20;
      opt.seed = 4242u;
      opt.nthreads = 1;
      int done = 0;
      solver_status st = sdd_solve(&op, noise, rhs, nrhs, &opt, ab1, &done, NULL, NULL);
      hand_descent(&hp, &opt, opt.iterations, hand);
      const double err = max_abs_diff(ab1, hand, len);
      snprintf(what, sizeof what, "%s, %s averaging: 7 steps vs hand recursion",
               names[e], arith ? "arithmetic" : "geometric");
      CHECK(st == SOLVER_MAX_ITER && done == 7 && err < 1e-12,
            "%s: status %d, max difference %g", what, (int)st, err);
      /* Two threads and the cached kernel: the same bits. */
      opt.nthreads = 2;
      st = sdd_solve(&op_cached, noise, rhs, nrhs, &opt, ab2, &done, NULL, NULL);
      CHECK(memcmp(ab1, ab2, sizeof(double) * len) == 0,
            "%s: 2 threads with the cached kernel differ in the bits", what);
    }
  }

  /* (2) The clip binds in that check: the first primal gradient, K b / n,
   * is longer than 0.02, so its step is exactly lr * clip long. */
  {
    sdd_options opt;
    memset(&opt, 0, sizeof opt);
    opt.iterations = 1;
    opt.batch_size = n;
    opt.estimator = SDD_PRIMAL_FULL;
    opt.features = 1;
    opt.step_size = lr_primal;
    opt.clip = clip;
    opt.averaging_rate = 1.0;
    opt.check_every = 1;
    opt.probe_size = 5;
    opt.nthreads = 1;
    int done = 0;
    sdd_solve(&op, noise, rhs, nrhs, &opt, ab1, &done, NULL, NULL);
    double ss = 0.0;
    for (int i = 0; i < n; i++) ss += ab1[i] * ab1[i];
    CHECK_CLOSE(sqrt(ss), lr_primal[0] * clip[0], 1e-12,
                "clipped first step length (momentum 0)");
  }

  /* (3) Convergence to the Cholesky solution.  Full-batch primal descent
   * is deterministic and converges linearly (400 steps reach ~1e-10 here);
   * the stochastic estimators' noise does not vanish at the solution
   * (features, K alpha only, SGD), so they reach a noise floor that the
   * arithmetic average over the second half of the run lowers: the
   * tolerance is a few times the error observed with these seeds. */
  {
    const struct { sdd_estimator e; int iterations; double lr, tol; } runs[] = {
      {SDD_PRIMAL_FULL, 400, 1.0 / h_primal, 1e-8},
      {SDD_DUAL_FEATURES, quick ? 800 : 3000, 0.3 / h_dual, 0.15},
      {SDD_DUAL_KALPHA, quick ? 3000 : 20000, 0.05 / h_dual, 0.1},
      {SDD_PRIMAL_SGD, quick ? 3000 : 6000, 0.05 / h_primal, 0.15}};
    for (size_t q = 0; q < sizeof runs / sizeof runs[0]; q++) {
      const double lr[2] = {runs[q].lr, runs[q].lr};
      sdd_options opt;
      memset(&opt, 0, sizeof opt);
      opt.iterations = runs[q].iterations;
      opt.batch_size = runs[q].e == SDD_PRIMAL_FULL ? n : 16;
      opt.batch_sampling = SDD_BATCH_PERMUTATION;
      opt.estimator = runs[q].e;
      opt.features = 50;
      opt.rhs_reg = reg;
      opt.step_size = lr;
      opt.momentum = 0.9;
      opt.averaging_rate = 1.0;
      opt.averaging_start = runs[q].e == SDD_PRIMAL_FULL ? 0 : opt.iterations / 2;
      opt.check_every = 100;
      opt.probe_size = 30;
      opt.seed = 99u;
      opt.nthreads = 2;
      int done = 0;
      const solver_status st = sdd_solve(&op, noise, rhs, nrhs, &opt, ab1, &done, NULL, NULL);
      const double err = knorm_error(&hp, ab1, star);
      printf("   %s, %d steps: K-norm relative error %.2e\n", names[runs[q].e],
             opt.iterations, err);
      CHECK(st == SOLVER_MAX_ITER && err < runs[q].tol,
            "%s converges: status %d, K-norm relative error %g >= %g",
            names[runs[q].e], (int)st, err, runs[q].tol);
    }
  }

  /* (4) Trace metrics: recorded at the chosen iterations only, NaN where
   * not evaluated, and equal to naive values from the returned iterate. */
  {
    const int m = 23, at[3] = {5, 10, 12};
    double *xt = random_points(m, d, 18.0), *yt = random_matrix(m, 1);
    const points pt = {xt, m, d, NULL, NULL};
    const kernel_op test = {&k, &pt, &p, NULL, 0, NULL, NULL, NULL, 0, NULL};
    double *Kt = naive_kernel_matrix(&k, xt, m, x, n, d);
    sdd_options opt;
    memset(&opt, 0, sizeof opt);
    opt.iterations = 12;
    opt.batch_size = 16;
    opt.batch_sampling = SDD_BATCH_UNIFORM;
    opt.step_size = lr_dual;
    opt.momentum = 0.9;
    opt.averaging_rate = 0.2;
    opt.check_every = 4;
    opt.probe_size = 20;
    opt.seed = 5u;
    opt.nthreads = 2;
    opt.metrics.at = at;
    opt.metrics.n_at = 3;
    opt.metrics.reference = star;
    opt.metrics.test = &test;
    opt.metrics.test_y = yt;
    trace_rec tr;
    memset(&tr, 0, sizeof tr);
    tr.nrhs = nrhs;
    int done = 0;
    sdd_solve(&op, noise, rhs, nrhs, &opt, ab1, &done, record, &tr);
    /* Probes at 4, 8, 12; metrics at 5, 10, 12. */
    const int want[5] = {4, 5, 8, 10, 12};
    int rows_ok = tr.rows == 5, nan_ok = 1, time_ok = 1;
    for (int j = 0; j < 5 && rows_ok; j++) {
      const double *v = tr.values[j];
      const int probed = want[j] % 4 == 0, metric = want[j] % 4 != 0 || want[j] == 12;
      if (tr.iteration[j] != want[j]) rows_ok = 0;
      if ((isnan(v[0]) != 0) == probed || (isnan(v[nrhs]) != 0) == metric ||
          (isnan(v[nrhs + 2]) != 0) == metric)
        nan_ok = 0;
      if (!(v[nrhs + 3] >= 0.0) || (j > 0 && v[nrhs + 3] < tr.values[j - 1][nrhs + 3]))
        time_ok = 0;
    }
    CHECK(rows_ok, "trace rows at the probe and metric iterations (%d rows)", tr.rows);
    CHECK(nan_ok, "NaN exactly where a value was not evaluated");
    CHECK(time_ok, "metric seconds are cumulative");
    double eKe = 0.0, KeKe = 0.0, ss = 0.0;
    for (int i = 0; i < n; i++) {
      double ke = 0.0;
      for (int j = 0; j < n; j++) ke += K[i + (size_t)j * n] * (ab1[j] - star[j]);
      eKe += (ab1[i] - star[i]) * ke;
      KeKe += ke * ke;
    }
    for (int i = 0; i < m; i++) {
      double pr = 0.0;
      for (int j = 0; j < n; j++) pr += Kt[i + (size_t)j * m] * ab1[j];
      ss += (yt[i] - pr) * (yt[i] - pr);
    }
    if (rows_ok) {
      CHECK_CLOSE(tr.values[4][nrhs], eKe, 1e-12, "K-norm error at the last iteration");
      CHECK_CLOSE(tr.values[4][nrhs + 1], KeKe, 1e-12, "K^2-norm error at the last iteration");
      CHECK_CLOSE(tr.values[4][nrhs + 2], sqrt(ss / m), 1e-12, "test RMSE at the last iteration");
    }
    free(xt); free(yt); free(Kt);
  }

  /* (5) Primal descent with a step far beyond its stability limit diverges
   * and says so, for the deterministic and the stochastic estimator. */
  for (int e = SDD_PRIMAL_FULL; e <= SDD_PRIMAL_SGD; e++) {
    const double huge[2] = {50.0 / h_primal, 50.0 / h_primal};
    sdd_options opt;
    memset(&opt, 0, sizeof opt);
    opt.iterations = 1000;
    opt.batch_size = e == SDD_PRIMAL_FULL ? n : 16;
    opt.batch_sampling = SDD_BATCH_UNIFORM;
    opt.estimator = (sdd_estimator)e;
    opt.features = 20;
    opt.step_size = huge;
    opt.momentum = 0.9;
    opt.averaging_rate = 0.1;
    opt.check_every = 10;
    opt.probe_size = 20;
    opt.nthreads = 1;
    int done = 0;
    const solver_status st = sdd_solve(&op, noise, rhs, nrhs, &opt, ab1, &done, NULL, NULL);
    CHECK(st == SOLVER_DIVERGED && done < 1000, "%s, step 50 / curvature: status %d after %d steps",
          names[e], (int)st, done);
  }

  free(x); free(rhs); free(reg); free(noise); free(K); free(Kc); free(star);
  free(chol_work); free(ab1); free(ab2); free(hand);
}
