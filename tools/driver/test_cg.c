/* Driver checks of the pivoted Cholesky factor (src/pivchol.c) against a
 * naive dense version, of conjugate gradients (src/cg.c) and of SDD's warm
 * starts (src/nystrom.c) against the exact Cholesky solve. */
#include <math.h>
#include <string.h>

#include "driver.h"
#include "../../src/cg.h"
#include "../../src/chol.h"
#include "../../src/nystrom.h"
#include "../../src/pivchol.h"
#include "../../src/sdd.h"

/* Greedy pivoted Cholesky of the dense n x n matrix A (column-major) to rank
 * k, by the textbook recursion on the whole Schur complement S: pivot on
 * the largest diagonal of S (first on ties), take column S[:, i] / sqrt(S_ii)
 * and subtract its outer product from S.  L (n x k) and pivots as pivchol's;
 * trace[m] = trace(S) / trace(A) after step m. */
static void naive_pivchol(const double *A, int n, int k, double *L,
                          int *pivots, double *trace)
{
  double *S = dalloc((size_t)n * n);
  memcpy(S, A, sizeof(double) * (size_t)n * n);
  double trace0 = 0.0;
  for (int i = 0; i < n; i++) trace0 += A[i + (size_t)i * n];
  for (int m = 0; m < k; m++) {
    int piv = 0;
    for (int i = 1; i < n; i++)
      if (S[i + (size_t)i * n] > S[piv + (size_t)piv * n]) piv = i;
    const double p = sqrt(S[piv + (size_t)piv * n]);
    for (int i = 0; i < n; i++) L[i + (size_t)m * n] = S[i + (size_t)piv * n] / p;
    for (int j = 0; j < n; j++)
      for (int i = 0; i < n; i++)
        S[i + (size_t)j * n] -= L[i + (size_t)m * n] * L[j + (size_t)m * n];
    pivots[m] = piv;
    double t = 0.0;
    for (int i = 0; i < n; i++) t += fabs(S[i + (size_t)i * n]);
    trace[m] = t / trace0;
  }
  free(S);
}

typedef struct {
  int calls, reports, polls, last_iteration;
  int stop_after; /* stop at this call if > 0 */
  int nrhs, order_ok, finite;
} cg_cb;

#define CG_CB(nrhs_, stop_) {0, 0, 0, 0, (stop_), (nrhs_), 1, 1}

/* Counts reports (residuals given) and polls (NULL); iterations must not go
 * backwards and reported residuals must be finite and >= 0. */
static int cg_callback(void *ctx_, int iteration, const double *residuals)
{
  cg_cb *s = ctx_;
  s->calls++;
  if (iteration < s->last_iteration) s->order_ok = 0;
  s->last_iteration = iteration;
  if (residuals) {
    s->reports++;
    for (int c = 0; c < s->nrhs; c++)
      if (!isfinite(residuals[c]) || residuals[c] < 0) s->finite = 0;
  } else {
    s->polls++;
  }
  return s->stop_after > 0 && s->calls >= s->stop_after;
}

static double max_rel_diff(const double *a, const double *b, size_t len)
{
  double num = 0.0, den = 0.0;
  for (size_t i = 0; i < len; i++) {
    num = fmax(num, fabs(a[i] - b[i]));
    den = fmax(den, fabs(b[i]));
  }
  return num / den;
}

static void test_pivchol(void)
{
  const int d = 3;
  const kernel k = {KERNEL_MATERN32, 1.3};
  char what[128];

  /* Against the naive version, for two jitters. */
  {
    const int n = quick ? 250 : 600, rank = quick ? 40 : 120;
    double *x = random_points(n, d, 3.0);
    const points p = {x, n, d, NULL, NULL};
    double *K = naive_kernel_matrix(&k, x, n, x, n, d);
    double *A = dalloc((size_t)n * n), *Kc = dalloc((size_t)n * n);
    kernel_block_matrix(&k, &p, &p, Kc, 2);
    double *Lref = dalloc((size_t)n * rank), *L1 = dalloc((size_t)n * rank);
    double *L2 = dalloc((size_t)n * rank), *L3 = dalloc((size_t)n * rank);
    double *tref = dalloc(rank), *t1 = dalloc(rank), *t2 = dalloc(rank);
    int *pref = xmalloc(sizeof(int) * rank), *p1 = xmalloc(sizeof(int) * rank);
    int *p2 = xmalloc(sizeof(int) * rank);
    const kernel_op fly = {&k, &p, &p, NULL, 0, NULL, NULL, NULL, 0, NULL}, cached = {&k, &p, &p, Kc, 0, NULL, NULL, NULL, 0, NULL};
    const double jitters[2] = {1.0, 1e-3};
    for (int t = 0; t < 2; t++) {
      const double jitter = jitters[t];
      memcpy(A, K, sizeof(double) * (size_t)n * n);
      for (int i = 0; i < n; i++) A[i + (size_t)i * n] += jitter;
      naive_pivchol(A, n, rank, Lref, pref, tref);
      int r1 = -1, r2 = -1, r3 = -1;
      solver_status s1 = pivchol(&fly, jitter, rank, 0.0, 1, L1, p1, t1, &r1, NULL, NULL);
      solver_status s2 = pivchol(&fly, jitter, rank, 0.0, 2, L2, p2, t2, &r2, NULL, NULL);
      solver_status s3 = pivchol(&cached, jitter, rank, 0.0, 2, L3, p2, t2, &r3, NULL, NULL);
      CHECK(s1 == SOLVER_MAX_ITER && s2 == SOLVER_MAX_ITER && s3 == SOLVER_MAX_ITER &&
                r1 == rank && r2 == rank && r3 == rank,
            "pivchol jitter %g: statuses %d %d %d, ranks %d %d %d", jitter, (int)s1,
            (int)s2, (int)s3, r1, r2, r3);
      CHECK(memcmp(p1, pref, sizeof(int) * rank) == 0,
            "pivchol jitter %g: pivots differ from the naive greedy rule", jitter);
      snprintf(what, sizeof what, "pivchol jitter %g: L vs naive", jitter);
      const double err = max_rel_diff(L1, Lref, (size_t)n * rank);
      CHECK(err < 1e-10, "%s: max difference %g", what, err);
      double terr = 0.0;
      int falling = 1;
      for (int m = 0; m < rank; m++) {
        terr = fmax(terr, fabs(t1[m] - tref[m]));
        if (m > 0 && !(t1[m] < t1[m - 1])) falling = 0;
      }
      CHECK(terr < 1e-10 && falling,
            "pivchol jitter %g: trace error %g, decreasing %d", jitter, terr, falling);
      CHECK(memcmp(L1, L2, sizeof(double) * (size_t)n * rank) == 0 &&
                memcmp(p1, p2, sizeof(int) * rank) == 0,
            "pivchol jitter %g: 1 and 2 threads differ", jitter);
      CHECK(memcmp(L1, L3, sizeof(double) * (size_t)n * rank) == 0,
            "pivchol jitter %g: cached and on-the-fly kernels differ", jitter);
    }
    free(x); free(K); free(A); free(Kc); free(Lref); free(L1); free(L2); free(L3);
    free(tref); free(t1); free(t2); free(pref); free(p1); free(p2);
  }

  /* Full rank reproduces K + jitter I; the rank is capped at n. */
  {
    const int n = 80;
    double *x = random_points(n, d, 2.0);
    const points p = {x, n, d, NULL, NULL};
    const kernel_op op = {&k, &p, &p, NULL, 0, NULL, NULL, NULL, 0, NULL};
    double *K = naive_kernel_matrix(&k, x, n, x, n, d);
    double *L = dalloc((size_t)n * n), *tr = dalloc(n);
    int *piv = xmalloc(sizeof(int) * n), rank = -1;
    solver_status st = pivchol(&op, 0.7, n + 10, 0.0, 2, L, piv, tr, &rank, NULL, NULL);
    /* Nothing is left after n steps: either status will do. */
    CHECK((st == SOLVER_MAX_ITER || st == SOLVER_TOLERANCE) && rank == n,
          "full rank: status %d, rank %d", (int)st, rank);
    double err = 0.0;
    for (int i = 0; i < n; i++)
      for (int j = 0; j < n; j++) {
        double s = 0.0;
        for (int m = 0; m < n; m++) s += L[i + (size_t)m * n] * L[j + (size_t)m * n];
        err = fmax(err, fabs(s - K[i + (size_t)j * n] - (i == j ? 0.7 : 0.0)));
      }
    CHECK(err < 1e-12, "full rank: |L L' - (K + 0.7 I)| = %g", err);

    /* The relative-trace stop: a smooth kernel without jitter. */
    const kernel se = {KERNEL_SE, 1.0};
    for (size_t i = 0; i < (size_t)n * d; i++) x[i] *= 0.1; /* long length scale */
    const kernel_op smooth = {&se, &p, &p, NULL, 0, NULL, NULL, NULL, 0, NULL};
    st = pivchol(&smooth, 0.0, 50, 1e-3, 2, L, piv, tr, &rank, NULL, NULL);
    CHECK(st == SOLVER_TOLERANCE && rank > 1 && rank < 50 && tr[rank - 1] <= 1e-3 &&
              tr[rank - 2] > 1e-3,
          "trace stop: status %d at rank %d, trace %g", (int)st, rank,
          rank > 0 ? tr[rank - 1] : -1.0);

    /* The callback stops it. */
    cg_cb cb = CG_CB(1, 3);
    st = pivchol(&op, 0.7, 50, 0.0, 1, L, piv, tr, &rank, cg_callback, &cb);
    CHECK(st == SOLVER_STOPPED && rank == 3 && cb.polls == 3,
          "pivchol callback stop: status %d, rank %d, polls %d", (int)st, rank, cb.polls);
    free(x); free(K); free(L); free(tr); free(piv);
  }
}

/* Large enough that the threaded update (n * m > 1e6) runs in parallel:
 * the bits must not depend on the thread count. */
static void test_pivchol_threads(void)
{
  const int n = 4000, d = 3, rank = 300;
  const kernel k = {KERNEL_MATERN52, 1.0};
  double *x = random_points(n, d, 4.0);
  const points p = {x, n, d, NULL, NULL};
  const kernel_op op = {&k, &p, &p, NULL, 0, NULL, NULL, NULL, 0, NULL};
  double *L1 = dalloc((size_t)n * rank), *L2 = dalloc((size_t)n * rank);
  double *tr = dalloc(rank);
  int *piv = xmalloc(sizeof(int) * rank), r1 = -1, r2 = -1;
  pivchol(&op, 1.0, rank, 0.0, 1, L1, piv, tr, &r1, NULL, NULL);
  pivchol(&op, 1.0, rank, 0.0, 2, L2, piv, tr, &r2, NULL, NULL);
  CHECK(r1 == rank && r2 == rank &&
            memcmp(L1, L2, sizeof(double) * (size_t)n * rank) == 0,
        "pivchol n = %d: 1 and 2 threads differ (ranks %d %d)", n, r1, r2);
  free(x); free(L1); free(L2); free(tr); free(piv);
}

static void test_cg_solve(void)
{
  const int n = quick ? 150 : 300, d = 3, nrhs = 4;
  const kernel k = {KERNEL_MATERN52, 1.0};
  double *x = random_points(n, d, 2.0);
  const points p = {x, n, d, NULL, NULL};
  double *K = naive_kernel_matrix(&k, x, n, x, n, d);
  double *Kc = dalloc((size_t)n * n);
  kernel_block_matrix(&k, &p, &p, Kc, 2);
  const kernel_op fly = {&k, &p, &p, NULL, 0, NULL, NULL, NULL, 0, NULL}, cached = {&k, &p, &p, Kc, 0, NULL, NULL, NULL, 0, NULL};
  double *rhs = random_matrix(n, nrhs), *noise = dalloc(n);
  for (int i = 0; i < n; i++) {
    noise[i] = 0.02 + 0.08 * (i % 4); /* heteroscedastic */
    rhs[i + (size_t)3 * n] = 0.0;     /* a zero right-hand side */
  }
  double *star = dalloc((size_t)n * nrhs), *a = dalloc((size_t)n * n);
  memcpy(star, rhs, sizeof(double) * (size_t)n * nrhs);
  CHECK(chol_solve(&k, &p, noise, star, nrhs, a, NULL, 2, NULL, NULL) == 0, "reference chol_solve");
  double *al1 = dalloc((size_t)n * nrhs), *al2 = dalloc((size_t)n * nrhs);
  double *al3 = dalloc((size_t)n * nrhs);
  char what[128];

  cg_options opt = {1e-12, 2000, 0, 1.0, 1, 1, NULL, 0, 0};
  /* No preconditioner, two pivoted Cholesky ones, Vecchia's with 20
   * neighbours and with n - 1 (the exact inverse: one iteration). */
  const int ranks[5] = {0, 40, 40, 0, 0}, neighbours[5] = {0, 0, 0, 20, n - 1};
  const double jitters[5] = {1.0, 1.0, 0.05, 1.0, 1.0};
  for (int v = 0; v < 5; v++) {
    opt.rank = ranks[v];
    opt.jitter = jitters[v];
    opt.neighbours = neighbours[v];
    opt.nthreads = 1;
    int done1 = -1, done2 = -1, done3 = -1;
    cg_cb cb = CG_CB(nrhs, 0);
    solver_status s1 = cg_solve(&fly, noise, rhs, nrhs, &opt, al1, &done1,
                                cg_callback, &cb);
    snprintf(what, sizeof what, "cg rank %d jitter %g neighbours %d", opt.rank,
             opt.jitter, opt.neighbours);
    CHECK(s1 == SOLVER_TOLERANCE && done1 > 0 && done1 < opt.max_iterations,
          "%s: status %d after %d iterations", what, (int)s1, done1);
    CHECK(v < 4 || done1 == 1, "%s: the exact inverse took %d iterations", what, done1);
    printf("   %s: %d iterations\n", what, done1);
    /* A residual of 1e-12 and cond(K + noise) ~ 1e4 bound the error by 1e-8. */
    for (int c = 0; c < 3; c++) {
      const double err = max_rel_diff(al1 + (size_t)c * n, star + (size_t)c * n, n);
      const double res = system_residual(K, noise, n, al1 + (size_t)c * n,
                                         rhs + (size_t)c * n);
      CHECK(err < 1e-8 && res < 1e-11, "%s rhs %d: error %g, residual %g", what, c,
            err, res);
    }
    int zero = 1;
    for (int i = 0; i < n; i++) if (al1[i + (size_t)3 * n] != 0.0) zero = 0;
    CHECK(zero, "%s: a zero right-hand side gives alpha = 0", what);
    CHECK(cb.reports == done1 && cb.order_ok && cb.finite,
          "%s: %d reports for %d iterations", what, cb.reports, done1);

    opt.nthreads = 2;
    solver_status s2 = cg_solve(&fly, noise, rhs, nrhs, &opt, al2, &done2, NULL, NULL);
    solver_status s3 = cg_solve(&cached, noise, rhs, nrhs, &opt, al3, &done3, NULL, NULL);
    CHECK(s2 == s1 && done2 == done1 &&
              memcmp(al1, al2, sizeof(double) * (size_t)n * nrhs) == 0,
          "%s: 1 and 2 threads differ", what);
    CHECK(s3 == s1 && done3 == done1 &&
              memcmp(al1, al3, sizeof(double) * (size_t)n * nrhs) == 0,
          "%s: cached and on-the-fly kernels differ", what);
  }

  /* max_iterations, and residual reports every 4 iterations and at the end. */
  {
    int done = -1;
    cg_options o = {1e-12, 10, 40, 1.0, 4, 2, NULL, 0, 0};
    cg_cb cb = CG_CB(nrhs, 0);
    solver_status st = cg_solve(&fly, noise, rhs, nrhs, &o, al2, &done, cg_callback, &cb);
    CHECK(st == SOLVER_MAX_ITER && done == 10, "max_iterations: status %d, %d done",
          (int)st, done);
    CHECK(cb.reports == 3 && cb.order_ok, "reports at 4, 8 and 10: %d", cb.reports);
    /* A zero tolerance runs every iteration too. */
    o.tolerance = 0.0;
    st = cg_solve(&fly, noise, rhs, nrhs, &o, al2, &done, NULL, NULL);
    CHECK(st == SOLVER_MAX_ITER && done == 10, "tolerance 0: status %d, %d done",
          (int)st, done);
  }

  /* Breakdown: a negative definite system. */
  {
    double *neg = dalloc(n);
    for (int i = 0; i < n; i++) neg[i] = -1e3;
    for (int v = 0; v < 3; v++) {
      int done = -1;
      cg_options o = {1e-6, 100, v == 1 ? 20 : 0, 1.0, 1, 2, NULL, v == 2 ? 10 : 0, 0};
      solver_status st = cg_solve(&fly, neg, rhs, nrhs, &o, al2, &done, NULL, NULL);
      CHECK(st == SOLVER_DIVERGED && done == 0,
            "negative definite, rank %d, neighbours %d: status %d after %d", o.rank,
            o.neighbours, (int)st, done);
    }
    free(neg);
  }

  /* A warm start: from the solution CG stops at once; from a perturbed
   * solution it needs fewer iterations than from zero and converges to the
   * same answer. */
  {
    int cold = -1, warm = -1;
    cg_options o = {1e-10, 2000, 0, 1.0, 1, 2, NULL, 0, 0};
    solver_status st = cg_solve(&fly, noise, rhs, nrhs, &o, al2, &cold, NULL, NULL);
    o.alpha0 = star;
    solver_status sw = cg_solve(&fly, noise, rhs, nrhs, &o, al3, &warm, NULL, NULL);
    CHECK(st == SOLVER_TOLERANCE && sw == SOLVER_TOLERANCE && warm == 0,
          "warm start at the solution: status %d after %d iterations", (int)sw, warm);
    double *near = dalloc((size_t)n * nrhs);
    for (size_t i = 0; i < (size_t)n * nrhs; i++) near[i] = star[i] * (1.0 + 1e-3 * test_unif());
    o.alpha0 = near;
    sw = cg_solve(&fly, noise, rhs, nrhs, &o, al3, &warm, NULL, NULL);
    CHECK(sw == SOLVER_TOLERANCE && warm > 0 && warm < cold,
          "warm start near the solution: status %d, %d iterations (cold %d)", (int)sw,
          warm, cold);
    for (int c = 0; c < 3; c++)
      CHECK(max_rel_diff(al3 + (size_t)c * n, star + (size_t)c * n, n) < 1e-7,
            "warm start near the solution: rhs %d", c);
    free(near);
  }

  /* A stop requested by the callback (at its 5th call: the 5th report). */
  {
    int done = -1;
    cg_cb cb = CG_CB(nrhs, 5);
    cg_options o = {1e-12, 100, 0, 1.0, 1, 2, NULL, 0, 0};
    solver_status st = cg_solve(&fly, noise, rhs, nrhs, &o, al2, &done, cg_callback, &cb);
    CHECK(st == SOLVER_STOPPED && done == 5 && cb.reports == 5,
          "callback stop: status %d after %d iterations", (int)st, done);
  }

  /* A time limit reached at once: one iteration runs, its residuals are
   * reported, and its iterate is that of a run of one iteration. */
  {
    int done = -1, one = -1;
    cg_cb cb = CG_CB(nrhs, 0);
    cg_options o = {1e-12, 1, 0, 1.0, 50, 2, NULL, 20, 0};
    solver_status so = cg_solve(&fly, noise, rhs, nrhs, &o, al3, &one, NULL, NULL);
    o.max_iterations = 100;
    o.time_limit = 1e-300;
    solver_status st = cg_solve(&fly, noise, rhs, nrhs, &o, al2, &done, cg_callback, &cb);
    CHECK(so == SOLVER_MAX_ITER && one == 1, "one iteration: status %d", (int)so);
    CHECK(st == SOLVER_TIME_LIMIT && done == 1 && cb.reports == 1,
          "time limit: status %d after %d iterations, %d reports", (int)st, done, cb.reports);
    CHECK(max_rel_diff(al2, al3, (size_t)n * nrhs) == 0.0,
          "time limit: the iterate of one iteration");
  }

  /* SDD's warm starts at full rank are the exact solution (0 for the zero
   * right-hand side), and SDD started there stays there. */
  {
    const nystrom_form forms[2] = {NYSTROM_FULL, NYSTROM_INDUCING};
    for (int f = 0; f < 2; f++) {
      cg_cb cb = CG_CB(nrhs, 0);
      solver_status st = nystrom_solve(&fly, noise, rhs, nrhs, n, forms[f], 2, al2,
                                       cg_callback, &cb);
      CHECK(st == SOLVER_MAX_ITER && cb.polls > 0 && cb.reports == 0,
            "nystrom_solve form %d: status %d, %d polls", (int)forms[f], (int)st, cb.polls);
      for (int c = 0; c < 3; c++) {
        const double err = max_rel_diff(al2 + (size_t)c * n, star + (size_t)c * n, n);
        CHECK(err < 1e-8, "nystrom_solve form %d, full rank, rhs %d: error %g",
              (int)forms[f], c, err);
      }
      int zero = 1;
      for (int i = 0; i < n; i++) if (al2[i + (size_t)3 * n] != 0.0) zero = 0;
      CHECK(zero, "nystrom_solve form %d: a zero right-hand side gives 0", (int)forms[f]);
    }
    const double steps[4] = {0.5, 0.5, 0.5, 0.5};
    sdd_options so;
    memset(&so, 0, sizeof so);
    so.iterations = 20;
    so.batch_size = 16;
    so.batch_sampling = SDD_BATCH_UNIFORM;
    so.step_size = steps;
    so.momentum = 0.9;
    so.averaging_rate = 0.01;
    so.check_every = 10;
    so.probe_size = 20;
    so.seed = 7u;
    so.nthreads = 2;
    so.alpha0 = al2;
    int done = -1;
    solver_status st = sdd_solve(&fly, noise, rhs, nrhs, &so, al3, &done, NULL, NULL);
    const double err = max_rel_diff(al3, star, (size_t)n * nrhs);
    CHECK(st == SOLVER_MAX_ITER && done == 20 && err < 1e-8,
          "sdd_solve from the exact solution: status %d, %d steps, error %g", (int)st,
          done, err);
  }

  free(x); free(K); free(Kc); free(rhs); free(noise); free(star); free(a);
  free(al1); free(al2); free(al3);
}

/* One kernel product of a large problem is split into slabs, with the
 * callback polled between them: a stop there ends the solve at once. */
static void test_cg_slabs(void)
{
  const int n = 2500, d = 3, nrhs = 16;
  const kernel k = {KERNEL_MATERN32, 1.0};
  double *x = random_points(n, d, 3.0);
  const points p = {x, n, d, NULL, NULL};
  const kernel_op op = {&k, &p, &p, NULL, 0, NULL, NULL, NULL, 0, NULL};
  double *rhs = random_matrix(n, nrhs), *noise = dalloc(n);
  double *al = dalloc((size_t)n * nrhs);
  for (int i = 0; i < n; i++) noise[i] = 0.1;
  int done = -1;
  cg_options o = {0.0, 2, 0, 1.0, 1, 2, NULL, 0, 0};
  cg_cb cb = CG_CB(nrhs, 0);
  solver_status st = cg_solve(&op, noise, rhs, nrhs, &o, al, &done, cg_callback, &cb);
  CHECK(st == SOLVER_MAX_ITER && done == 2 && cb.reports == 2 && cb.polls >= 2,
        "slabs: status %d, %d iterations, %d reports, %d polls", (int)st, done,
        cb.reports, cb.polls);
  cg_cb stop = CG_CB(nrhs, 1);
  st = cg_solve(&op, noise, rhs, nrhs, &o, al, &done, cg_callback, &stop);
  CHECK(st == SOLVER_STOPPED && done == 0 && stop.polls == 1 && stop.reports == 0,
        "stop between slabs: status %d after %d iterations", (int)st, done);
  free(x); free(rhs); free(noise); free(al);
}

void test_cg(void)
{
  section("(g) pivoted Cholesky");
  test_pivchol();
  section("(h) cg_solve and SDD's warm starts");
  test_cg_solve();
  /* Thousands of points: too slow under valgrind, which runs the same code
   * on the smaller problems above. */
  if (!quick) {
    section("(i) pivoted Cholesky and cg_solve at n in the thousands");
    test_pivchol_threads();
    test_cg_slabs();
  }
}
