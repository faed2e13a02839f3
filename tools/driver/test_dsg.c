/* Driver checks of doubly stochastic functional gradients (src/dsg.c) and
 * of the feature ranges it replays (rff_draw_range in src/rff.c).
 *
 * Truths: slices of one rff_draw, naive feature sums typed from the basis
 * formula, a naive re-implementation of Dai et al.'s algorithm that keeps
 * and decays every coefficient explicitly (the same random draws, so the
 * same answer up to rounding), and the exact kernel ridge solution by
 * Cholesky. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "driver.h"
#include "../../src/chol.h"
#include "../../src/dsg.h"
#include "../../src/rff.h"
#include "../../src/rng.h"

/* phi_j(x_i) of a DSG basis from explicitly drawn omega (m x d) / phase. */
static double basis_feature(const double *omega, const double *phase, int m,
                            int j, const double *x, int n, int i, int d,
                            double scale)
{
  double a = phase[j];
  for (int c = 0; c < d; c++) a += omega[j + (size_t)c * m] * x[i + (size_t)c * n];
  return scale * cos(a);
}

/* rff_draw_range is the matching slice of one rff_draw, for any threads. */
static void check_draw_range(void)
{
  const int m = 1500, d = 3, first = 130, len = 1200; /* len > 512: parallel */
  double *om = dalloc((size_t)m * d), *ph = dalloc(m);
  double *om1 = dalloc((size_t)len * d), *ph1 = dalloc(len);
  double *om2 = dalloc((size_t)len * d), *ph2 = dalloc(len);
  for (int row = 0; row < kernel_table_size; row++) {
    const int f = (int)kernel_table[row].family;
    if (!kernel_table[row].stationary) continue; /* test_tanimoto.c */
    const kernel k = {(kernel_family)f, 1.3};
    rff_draw(&k, m, d, 4242u, om, ph);
    rff_draw_range(&k, len, d, 4242u, (uint64_t)first, om1, ph1, 1);
    rff_draw_range(&k, len, d, 4242u, (uint64_t)first, om2, ph2, 2);
    int same = 1;
    for (int j = 0; j < len; j++) {
      if (ph1[j] != ph[first + j]) same = 0;
      for (int c = 0; c < d; c++)
        if (om1[j + (size_t)c * len] != om[first + j + (size_t)c * m]) same = 0;
    }
    CHECK(same, "family %d: rff_draw_range(first = %d) is not the slice of rff_draw",
          f, first);
    CHECK(memcmp(om1, om2, sizeof(double) * (size_t)len * d) == 0 &&
          memcmp(ph1, ph2, sizeof(double) * len) == 0,
          "family %d: rff_draw_range differs between 1 and 2 threads", f);
  }
  free(om); free(ph); free(om1); free(ph1); free(om2); free(ph2);
}

/* dsg_basis_matmul against the naive sum over explicitly drawn features,
 * across the chunk boundary (2048 features) and from an offset; and the
 * scale convention: the average over blocks of sum_k phi phi' is k. */
static void check_basis_matmul(void)
{
  /* 20 points x 2048 features per chunk: above the size below which one
   * thread does the work, so the 2-thread runs are parallel. */
  const int d = 2, npts = 20, ncol = 2, r = 13, ldo = npts + 3;
  const int nfeat = quick ? 2100 : 2600;
  const kernel k = {KERNEL_MATERN52, 1.7};
  const dsg_basis b = {&k, d, r, 99u};
  double *x = random_points(npts, d, 2.0);
  const points p = {x, npts, d, NULL, NULL};
  double *om = dalloc((size_t)nfeat * d), *ph = dalloc(nfeat);
  rff_draw(&k, nfeat, d, b.seed, om, ph);
  const double scale = sqrt(2.0 * k.variance / r);
  const int lda = nfeat + 5;
  double *A = random_matrix(lda, ncol);
  double *o1 = dalloc((size_t)ldo * ncol), *o2 = dalloc((size_t)ldo * ncol);

  const int starts[3] = {0, 37, 0}, counts[3] = {nfeat, 100, 0};
  for (int s = 0; s < 3; s++) {
    const int first = starts[s], m = counts[s];
    for (int i = 0; i < ldo * ncol; i++) o1[i] = o2[i] = -7.0;
    CHECK(dsg_basis_matmul(&b, (uint64_t)first, m, &p, A, lda, ncol, o1, ldo, 1) == 0 &&
          dsg_basis_matmul(&b, (uint64_t)first, m, &p, A, lda, ncol, o2, ldo, 2) == 0,
          "dsg_basis_matmul(first %d, %d features) failed", first, m);
    double maxerr = 0.0;
    int padding_ok = 1;
    for (int c = 0; c < ncol; c++) {
      for (int i = 0; i < npts; i++) {
        double sum = 0.0;
        for (int j = 0; j < m; j++)
          sum += basis_feature(om, ph, nfeat, first + j, x, npts, i, d, scale) *
                 A[j + (size_t)c * lda];
        maxerr = fmax(maxerr, fabs(o1[i + (size_t)c * ldo] - sum));
      }
      for (int i = npts; i < ldo; i++) if (o1[i + (size_t)c * ldo] != -7.0) padding_ok = 0;
    }
    CHECK(maxerr < 1e-11, "dsg_basis_matmul(first %d, %d features) vs naive: %g",
          first, m, maxerr);
    CHECK(padding_ok, "dsg_basis_matmul must leave rows n..ldo-1 alone");
    CHECK(memcmp(o1, o2, sizeof(double) * (size_t)ldo * ncol) == 0,
          "dsg_basis_matmul(first %d) differs between 1 and 2 threads", first);
  }

  /* (1 / blocks) sum_j phi_j(x_i) phi_j(x_q) against k(x_i, x_q): feature
   * j contributes (sigma_f^2 / F)(cos(w'(x - x')) + cos(w'(x + x') + 2 b))
   * with F = blocks r, the bracket of variance <= 1, so the average has sd
   * <= sigma_f^2 / sqrt(F) (0.033 at F = 2600); tolerance 5 sd. */
  {
    const int blocks = nfeat / r, F = blocks * r;
    double *W = dalloc(F), *o = dalloc(npts);
    double maxerr = 0.0;
    for (int q = 0; q < 7; q++) {
      for (int j = 0; j < F; j++)
        W[j] = basis_feature(om, ph, nfeat, j, x, npts, q, d, scale) / blocks;
      dsg_basis_matmul(&b, 0, F, &p, W, F, 1, o, npts, 2);
      for (int i = 0; i < npts; i++)
        maxerr = fmax(maxerr, fabs(o[i] - kernel_value(&k, sqdist(x, npts, i, x, npts, q, d))));
    }
    const double tol = 5.0 * k.variance / sqrt((double)F);
    printf("   basis: max |mean over blocks of sum phi phi' - k| = %.4f (tolerance %.4f)\n",
           maxerr, tol);
    CHECK(maxerr < tol, "each block of r features must average to k: error %g >= %g",
          maxerr, tol);
    free(W); free(o);
  }
  free(x); free(om); free(ph); free(A); free(o1); free(o2);
}

/* Dai et al.'s algorithm as written: every coefficient kept and decayed
 * explicitly each step, features drawn once up front, the same batches
 * (stream RNG_STREAM_DSG, counter t B + j). */
static void naive_dsg(const dsg_basis *b, const double *x, int n,
                      const double *noise, const double *rhs, int nrhs,
                      const dsg_options *opt, double *alpha)
{
  const int d = b->d, r = b->block, T = opt->iterations, B = opt->batch_size;
  const int F = T * r;
  double *om = dalloc((size_t)F * d), *ph = dalloc(F), *g = dalloc((size_t)B * nrhs);
  int *idx = xmalloc(sizeof(int) * B);
  rff_draw(b->k, F, d, b->seed, om, ph);
  const double scale = sqrt(2.0 * b->k->variance / r);
  double lambda = 0.0;
  for (int i = 0; i < n; i++) lambda += noise[i] / n;
  memset(alpha, 0, sizeof(double) * (size_t)F * nrhs);
  for (int t = 0; t < T; t++) {
    const double gamma = opt->step_size / (1.0 + t / opt->step_decay);
    for (int j = 0; j < B; j++)
      idx[j] = rng_index(opt->seed, RNG_STREAM_DSG, (uint64_t)t * B + j, n);
    for (int c = 0; c < nrhs; c++)
      for (int j = 0; j < B; j++) {
        double f = 0.0;
        for (int i = 0; i < t * r; i++)
          f += alpha[i + (size_t)c * F] * basis_feature(om, ph, F, i, x, n, idx[j], d, scale);
        g[j + (size_t)c * B] = lambda / noise[idx[j]] * (f - rhs[idx[j] + (size_t)c * n]);
      }
    for (int c = 0; c < nrhs; c++) {
      for (int i = 0; i < t * r; i++) alpha[i + (size_t)c * F] *= 1.0 - gamma * lambda / n;
      for (int q = 0; q < r; q++) {
        double s = 0.0;
        for (int j = 0; j < B; j++)
          s += g[j + (size_t)c * B] * basis_feature(om, ph, F, t * r + q, x, n, idx[j], d, scale);
        alpha[t * r + q + (size_t)c * F] = -gamma / B * s;
      }
    }
  }
  free(om); free(ph); free(g); free(idx);
}

/* Largest |a - b| over len entries, relative to max |b|. */
static double max_rel_diff(const double *a, const double *b, size_t len)
{
  double diff = 0.0, size = 0.0;
  for (size_t i = 0; i < len; i++) {
    diff = fmax(diff, fabs(a[i] - b[i]));
    size = fmax(size, fabs(b[i]));
  }
  return diff / size;
}

typedef struct {
  int calls, records, last, monotone, stop_at, nrhs, finite;
} dsg_cb;

static int dsg_callback(void *ctx, int iteration, const double *residuals)
{
  dsg_cb *s = ctx;
  s->calls++;
  if (iteration != s->last + 1) s->monotone = 0;
  s->last = iteration;
  if (residuals) {
    s->records++;
    for (int c = 0; c < s->nrhs; c++)
      if (!(residuals[c] >= 0.0 && isfinite(residuals[c]))) s->finite = 0;
  }
  return s->stop_at > 0 && iteration >= s->stop_at;
}

/* The bookkeeping (global scale and its renormalisation, decay order,
 * 1 / B, loss weights, replayed features) against naive_dsg. */
static void check_against_naive(void)
{
  const int n = 30, d = 2, nrhs = 2;
  const kernel k = {KERNEL_MATERN32, 1.0};
  double *x = random_points(n, d, 2.0), *rhs = random_matrix(n, nrhs);
  double *noise = dalloc(n);
  const points p = {x, n, d, NULL, NULL};
  const dsg_basis b = {&k, d, 4, 777u};
  dsg_options opt = {quick ? 100 : 200, 8, 0.5, 60.0, 25, 10, 31u, 2};
  const size_t len = (size_t)opt.iterations * b.block * nrhs;
  double *a = dalloc(len), *ref = dalloc(len);
  int done;

  /* Heteroscedastic noise: the weights lambda / noise_i differ. */
  for (int i = 0; i < n; i++) noise[i] = 0.05 + 0.1 * (i % 4);
  solver_status st = dsg_solve(&b, &p, noise, rhs, nrhs, &opt, a, &done, NULL, NULL);
  naive_dsg(&b, x, n, noise, rhs, nrhs, &opt, ref);
  double err = max_rel_diff(a, ref, len);
  printf("   dsg_solve vs naive algorithm: max relative difference %.2e\n", err);
  CHECK(st == SOLVER_MAX_ITER && done == opt.iterations,
        "dsg_solve: status %d after %d iterations", (int)st, done);
  CHECK(err < 1e-10, "dsg_solve differs from the naive algorithm: %g", err);

  /* Strong regularisation: each step multiplies the old coefficients by
   * 1 - gamma lambda / n = 0.25, so the global scale falls below its floor
   * (1e-100) after 167 steps and is folded into the coefficients.  A small
   * step with a large noise keeps the data term small against the decay,
   * so the iterates cannot overshoot (and be taken for diverging) on any
   * data. */
  for (int i = 0; i < n; i++) noise[i] = 225.0;
  opt.step_size = 0.1;
  opt.step_decay = INFINITY;
  opt.iterations = 200;
  const size_t len2 = (size_t)opt.iterations * b.block * nrhs;
  double *a2 = dalloc(len2), *ref2 = dalloc(len2);
  st = dsg_solve(&b, &p, noise, rhs, nrhs, &opt, a2, &done, NULL, NULL);
  naive_dsg(&b, x, n, noise, rhs, nrhs, &opt, ref2);
  err = max_rel_diff(a2, ref2, len2);
  CHECK(st == SOLVER_MAX_ITER, "strongly regularised: status %d", (int)st);
  CHECK(err < 1e-10, "strongly regularised dsg_solve differs from the naive "
        "algorithm (scale renormalisation): %g", err);
  /* The oldest coefficients have been decayed far below the scale floor. */
  CHECK(fabs(a2[0]) > 0.0 && fabs(a2[0]) < 1e-100, "block 0 decayed by 0.25^199: %g",
        a2[0]);
  free(x); free(rhs); free(noise); free(a); free(ref); free(a2); free(ref2);
}

static double pred_rel_error(const dsg_basis *b, int nfeat, const points *p,
                             const double *alpha, int lda, const double *exact)
{
  double *f = dalloc(p->n);
  dsg_basis_matmul(b, 0, nfeat, p, alpha, lda, 1, f, p->n, 2);
  double e2 = 0.0, s2 = 0.0;
  for (int i = 0; i < p->n; i++) {
    e2 += (f[i] - exact[i]) * (f[i] - exact[i]);
    s2 += exact[i] * exact[i];
  }
  free(f);
  return sqrt(e2 / s2);
}

void test_dsg(void)
{
  section("(g) doubly stochastic gradients");
  check_draw_range();
  check_basis_matmul();
  check_against_naive();

  /* Against the exact kernel ridge solution K (K + lambda I)^{-1} b at the
   * training inputs: smooth targets on [0, 2)^2 in length-scale units. */
  const int n = 200, d = 2, r = quick ? 16 : 32;
  const double lambda = 0.1;
  const kernel k = {KERNEL_MATERN32, 1.0};
  double *x = random_points(n, d, 2.0);
  const points p = {x, n, d, NULL, NULL};
  double *rhs = dalloc((size_t)2 * n), *noise = dalloc(n), *star = dalloc(n);
  double *work = dalloc((size_t)n * n), *exact = dalloc(n);
  for (int i = 0; i < n; i++) {
    noise[i] = lambda;
    rhs[i] = sin(2.0 * x[i]) + 0.5 * x[i + (size_t)n] + 0.3 * (test_unif() - 0.5);
    rhs[i + (size_t)n] = 2.0 * test_unif() - 1.0;
  }
  memcpy(star, rhs, sizeof(double) * n);
  CHECK(chol_solve(&k, &p, noise, star, 1, work, NULL, 2, NULL, NULL) == 0, "reference chol_solve");
  block_matmul(&k, &p, NULL, n, &p, star, 1, exact, n, 2);

  const dsg_basis b = {&k, d, r, 2024u};
  /* gamma_0 = 2: the full-batch step is stable below 2 n / lambda_max(K), at
   * least 2 / sigma_f^2 = 2 here, and smaller batches add noise, not
   * instability, while gamma sigma_f^2 / B << 2. */
  dsg_options opt = {quick ? 120 : 200, quick ? 32 : 64, 2.0, INFINITY, 20, 64,
                     5u, 1};
  const int T = opt.iterations, lda = T * r;
  double *a1 = dalloc((size_t)lda * 2), *a2 = dalloc((size_t)lda * 2);
  double *a3 = dalloc((size_t)lda);
  int done1, done2;
  dsg_cb cb = {0, 0, 0, 1, 0, 2, 1};
  solver_status st = dsg_solve(&b, &p, noise, rhs, 2, &opt, a1, &done1,
                               dsg_callback, &cb);
  CHECK(st == SOLVER_MAX_ITER && done1 == T, "status %d after %d iterations",
        (int)st, done1);
  CHECK(cb.calls == T && cb.monotone, "callback once per step in order: %d calls",
        cb.calls);
  CHECK(cb.records == T / opt.check_every && cb.finite,
        "trace records every check_every steps: %d", cb.records);
  /* Error sources: Monte Carlo error of the T r = 6400 (quick: 1920)
   * features and of the batches (~ 1 / sqrt(T r) relative, a few per
   * cent), and the unfinished optimisation, which acts like extra
   * regularisation n / sum gamma_t = 0.5 (0.83) against lambda = 0.1.
   * Measured: about 0.02 (0.04); 0.1 leaves room for other random draws. */
  const double err = pred_rel_error(&b, lda, &p, a1, lda, exact);
  printf("   %d steps: relative error of f(X) against the exact mean %.4f\n", T, err);
  CHECK(err < 0.1, "dsg_solve vs exact: relative error %g >= 0.1", err);

  /* Few steps: clearly worse (the optimisation is far from done). */
  {
    dsg_options short_opt = opt;
    short_opt.iterations = 5;
    double *as = dalloc((size_t)5 * r);
    dsg_solve(&b, &p, noise, rhs, 1, &short_opt, as, &done2, NULL, NULL);
    const double err_short = pred_rel_error(&b, 5 * r, &p, as, 5 * r, exact);
    printf("   5 steps: relative error %.4f\n", err_short);
    CHECK(err_short > 2.0 * err, "5 steps (%g) should be clearly worse than %d (%g)",
          err_short, T, err);
    free(as);
  }

  /* Two threads: the same bits.  One right-hand side alone: the same bits
   * as its column in the joint solve (shared batches and features, columns
   * otherwise independent). */
  opt.nthreads = 2;
  st = dsg_solve(&b, &p, noise, rhs, 2, &opt, a2, &done2, NULL, NULL);
  CHECK(st == SOLVER_MAX_ITER && memcmp(a1, a2, sizeof(double) * (size_t)lda * 2) == 0,
        "dsg_solve differs between 1 and 2 threads");
  st = dsg_solve(&b, &p, noise, rhs, 1, &opt, a3, &done2, NULL, NULL);
  CHECK(memcmp(a1, a3, sizeof(double) * (size_t)lda) == 0,
        "a right-hand side solved alone differs from its column in a joint solve");

  /* The callback stops the run. */
  {
    dsg_cb stop = {0, 0, 0, 1, 7, 2, 1};
    st = dsg_solve(&b, &p, noise, rhs, 2, &opt, a2, &done2, dsg_callback, &stop);
    CHECK(st == SOLVER_STOPPED && done2 == 7 && stop.calls == 7,
          "stop at 7: status %d, %d done", (int)st, done2);
  }
  /* A step far beyond the stability limit diverges and is reported. */
  {
    dsg_options big = opt;
    big.step_size = 60.0;
    st = dsg_solve(&b, &p, noise, rhs, 2, &big, a2, &done2, NULL, NULL);
    CHECK(st == SOLVER_DIVERGED && done2 < 100,
          "step 60: status %d after %d steps, want DIVERGED early", (int)st, done2);
  }
  free(x); free(rhs); free(noise); free(star); free(work); free(exact);
  free(a1); free(a2); free(a3);
}
