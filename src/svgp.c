#include <math.h>
#include <string.h>
#include "svgp.h"
#include "chol.h"
#include "lapack.h"
#include "threads.h"
#include "workspace.h"

/* Kernel values per chunk of training points (M x c): 4 MB, and a fraction
 * of a second of BLAS work at M = 3000 between checks for Ctrl-C. */
#define SVGP_CHUNK_ENTRIES (1 << 19)
/* Columns per BLAS call when a product is split over threads.  The split
 * depends only on the sizes, never on the thread count, so each entry is
 * computed by the same call whichever thread makes it. */
#define SVGP_BLAS_BLOCK 32
/* Points handled at a time in the gradient's pairwise sums. */
#define SVGP_TILE 128

static int chunk_width(int m, int n)
{
  const int c = SVGP_CHUNK_ENTRIES / m;
  return min_int(c > SVGP_BLAS_BLOCK ? c : SVGP_BLAS_BLOCK, n);
}

/* B := op(L)^-1 B for the m x m lower triangular L (op as trans says) and
 * B m x ncol, with chol.c's blocked solve.  Returns 1 when stopped. */
static int solve_left(const char *trans, const double *L, int m, double *B,
                      int ncol, const svgp_problem *p)
{
  return chol_solve_triangular(L, m, trans, B, ncol, p->nthreads, p->callback,
                               p->ctx) != 0;
}

/* The lower triangle of C (m x m) += A A' for A m x k, one block of
 * columns of C per call (rows from the block's diagonal down). */
static void add_outer_lower(const double *A, int m, int k, double *C,
                            int nthreads)
{
  const int nb = (m + SVGP_BLAS_BLOCK - 1) / SVGP_BLAS_BLOCK;
  const double one = 1.0;
  #pragma omp parallel for num_threads(threads_team(nthreads)) schedule(dynamic) \
      if (nb > 1 && (double)m * m * k > PARALLEL_MIN_WORK)
  for (int b = 0; b < nb; b++) {
    const int j0 = b * SVGP_BLAS_BLOCK, w = min_int(SVGP_BLAS_BLOCK, m - j0);
    const int rows = m - j0;
    dgemm_("N", "T", &rows, &w, &k, &one, A + j0, &m, A + j0, &m, &one,
           C + j0 + (size_t)j0 * m, &m, 1, 1);
  }
}

/* C = A' W (k x m) for A m x k and W m x m, one block of columns of W per
 * call. */
static void cross_product(const double *A, int m, int k, const double *W,
                          double *C, int nthreads)
{
  const int nb = (m + SVGP_BLAS_BLOCK - 1) / SVGP_BLAS_BLOCK;
  const double one = 1.0, zero = 0.0;
  #pragma omp parallel for num_threads(threads_team(nthreads)) schedule(dynamic) \
      if (nb > 1 && (double)m * m * k > PARALLEL_MIN_WORK)
  for (int b = 0; b < nb; b++) {
    const int j0 = b * SVGP_BLAS_BLOCK, w = min_int(SVGP_BLAS_BLOCK, m - j0);
    dgemm_("T", "N", &k, &w, &m, &one, A, &m, W + (size_t)j0 * m, &m, &zero,
           C + (size_t)j0 * k, &k, 1, 1);
  }
}

/* LAPACK leaves the other triangle of a factor as it was. */
static void zero_upper(double *a, int m)
{
  for (int j = 1; j < m; j++)
    memset(a + (size_t)j * m, 0, sizeof(double) * (size_t)j);
}

static void transpose_square(double *a, int m)
{
  for (int j = 0; j < m; j++)
    for (int i = j + 1; i < m; i++) {
      const double t = a[i + (size_t)j * m];
      a[i + (size_t)j * m] = a[j + (size_t)i * m];
      a[j + (size_t)i * m] = t;
    }
}

/* X := L^-T X L^-1 for symmetric X and lower triangular L (m x m):
 * L^-T X, whose transpose is X L^-1, then L^-T (X L^-1), solves rather
 * than products with an explicit inverse.  Returns 1 when stopped. */
static int congruence(const double *L, int m, double *X, const svgp_problem *p)
{
  if (solve_left("T", L, m, X, m, p)) return 1;
  transpose_square(X, m);
  return solve_left("T", L, m, X, m, p);
}

/* grad[j, c] += scale * sum_i w_i k'(r2_ji) (z_jc - y_ic) over the points
 * y, with k' = dk/d(r2): the chain rule from dELBO/dK(z_j, y_i) = w_i to
 * the inducing point z_j (row j of grad, m x d like z). */
static void pair_gradient(const kernel *k, const points *z, int j,
                          const points *y, const double *w, double scale,
                          double *grad)
{
  double r2[SVGP_TILE], wk[SVGP_TILE];
  for (int i0 = 0; i0 < y->n; i0 += SVGP_TILE) {
    const int len = min_int(SVGP_TILE, y->n - i0);
    block_sq_dist(z, j, y, i0, len, r2);
    memcpy(wk, r2, sizeof(double) * (size_t)len);
    kernel_dr2(k, wk, len);
    for (int t = 0; t < len; t++) wk[t] *= w[i0 + t];
    for (int c = 0; c < z->d; c++) {
      const double zj = z->x[j + (size_t)c * z->n];
      const double *col = y->x + (size_t)c * y->n + i0;
      double s = 0.0;
      for (int t = 0; t < len; t++) s += wk[t] * (zj - col[t]);
      grad[j + (size_t)c * z->n] += scale * s;
    }
  }
}

/* The gradient of the ELBO with respect to z, from its derivatives with
 * respect to Kmm and Kmn (entries taken as independent):
 *   dF/dKmm = (Kmm^-1 - Sigma - a a' - Kmm^-1 P Kmm^-1) / 2
 *           = L^-T (2I - B^-1 - B) L^-1 / 2 - a a' / 2,
 *   dF/dKmn = (Kmm^-1 - Sigma) Kmn Lambda^-1 + a r',
 * with P = Kmn Lambda^-1 Knm = L (B - I) L', Kmm^-1 - Sigma =
 * L^-T (I - B^-1) L^-1 and r = Lambda^-1 (y - Knm a); each kernel entry
 * then depends on z through r2 = |z_j - x_i|^2.  b holds the lower triangle
 * of B on entry and is overwritten; kc, xc and r are chunk workspace. */
static svgp_status elbo_gradient(const svgp_problem *p, const points *z,
                                 const svgp_result *fit, double *b,
                                 double *grad, double *kc, double *xc,
                                 double *r, int cw)
{
  const kernel *k = p->k;
  const int m = z->n, n = p->x->n, d = z->d, nth = p->nthreads, inc = 1;
  const double *a = fit->coef, minus_one = -1.0, one = 1.0;
  svgp_status status = SVGP_OK;
  double *w, *gt;
  workspace ws;
  workspace_init(&ws);
  WORKSPACE_ADD(&ws, w, (size_t)m * m, WORKSPACE_ZEROED);
  WORKSPACE_ADD(&ws, gt, (size_t)cw * m, 0);
  if (workspace_alloc(&ws)) {
    status = SVGP_NO_MEMORY;
    goto done;
  }

  /* B^-1 by solves with its factor, blocked so that Ctrl-C is seen. */
  for (int j = 0; j < m; j++) w[j + (size_t)j * m] = 1.0;
  if (chol_solve_factored(fit->chol_b, m, w, m, nth, p->callback, p->ctx)) {
    status = SVGP_STOPPED;
    goto done;
  }
  /* w = I - B^-1 and b = 2I - B^-1 - B, as full symmetric matrices. */
  for (int j = 0; j < m; j++)
    for (int i = j; i < m; i++) {
      const double id = i == j ? 1.0 : 0.0;
      const double x1 = id - w[i + (size_t)j * m];
      const double x2 = id + x1 - b[i + (size_t)j * m];
      w[i + (size_t)j * m] = w[j + (size_t)i * m] = x1;
      b[i + (size_t)j * m] = b[j + (size_t)i * m] = x2;
    }
  if (congruence(fit->chol_kmm, m, w, p) || congruence(fit->chol_kmm, m, b, p)) {
    status = SVGP_STOPPED;
    goto done;
  }
  /* Exactly symmetric (the products are only so up to rounding), as the
   * pairwise sums below assume; b becomes dF/dKmm. */
  for (int j = 0; j < m; j++)
    for (int i = j; i < m; i++) {
      const double wv = 0.5 * (w[i + (size_t)j * m] + w[j + (size_t)i * m]);
      const double gv = 0.25 * (b[i + (size_t)j * m] + b[j + (size_t)i * m]) -
                        0.5 * a[i] * a[j];
      w[i + (size_t)j * m] = w[j + (size_t)i * m] = wv;
      b[i + (size_t)j * m] = b[j + (size_t)i * m] = gv;
    }

  memset(grad, 0, sizeof(double) * (size_t)m * d);
  /* Kmm: z_j enters entries (j, l) and (l, j), and d(r2)/dz_j =
   * 2 (z_j - z_l), hence the factor 4. */
  #pragma omp parallel for num_threads(threads_team(nth)) schedule(static) \
      if ((double)m * m * d > PARALLEL_MIN_WORK)
  for (int j = 0; j < m; j++)
    pair_gradient(k, z, j, z, b + (size_t)j * m, 4.0, grad);

  /* Kmn, chunk by chunk; each row of grad is one thread's, and its sum
   * runs over the chunks in order. */
  for (int i0 = 0; i0 < n; i0 += cw) {
    const int len = min_int(cw, n - i0);
    const points xcp = points_rows(p->x, NULL, i0, len, xc);
    kernel_block_matrix(k, z, &xcp, kc, nth);
    memcpy(r, p->y + i0, sizeof(double) * (size_t)len);
    dgemv_("T", &m, &len, &minus_one, kc, &m, a, &inc, &one, r, &inc, 1);
    for (int i = 0; i < len; i++) r[i] /= p->noise[i0 + i];
    cross_product(kc, m, len, w, gt, nth); /* gt = Kc' W, len x m */
    #pragma omp parallel for num_threads(threads_team(nth)) schedule(static) \
        if ((double)m * len * d > PARALLEL_MIN_WORK)
    for (int j = 0; j < m; j++) {
      double *gj = gt + (size_t)j * len; /* column j of dF/dKmn, transposed */
      for (int i = 0; i < len; i++)
        gj[i] = gj[i] / p->noise[i0 + i] + a[j] * r[i];
      pair_gradient(k, z, j, &xcp, gj, 2.0, grad);
    }
    if (solver_poll(p->callback, p->ctx, 0)) {
      status = SVGP_STOPPED;
      goto done;
    }
  }
  for (size_t e = 0; e < (size_t)m * d; e++)
    if (!isfinite(grad[e])) {
      status = SVGP_NOT_FINITE;
      break;
    }

done:
  workspace_free(&ws);
  return status;
}

svgp_status svgp_evaluate(const svgp_problem *p, const points *z,
                          svgp_result *out, double *grad)
{
  const kernel *k = p->k;
  const points *x = p->x;
  const int m = z->n, n = x->n, nth = p->nthreads, inc = 1;
  const int cw = chunk_width(m, n);
  const double one = 1.0;
  double *L = out->chol_kmm, *B = out->chol_b, *a = out->coef;
  svgp_status status = SVGP_OK;
  int info = 0;
  double *kc, *xc, *isd, *r, *bfull;
  workspace ws;
  workspace_init(&ws);
  WORKSPACE_ADD(&ws, kc, (size_t)m * cw, 0);
  WORKSPACE_ADD(&ws, xc, (size_t)cw * x->d, 0);
  WORKSPACE_ADD(&ws, isd, n, 0);
  WORKSPACE_ADD(&ws, r, cw, 0);
  WORKSPACE_ADD_IF(&ws, grad != NULL, bfull, (size_t)m * m, 0);
  if (workspace_alloc(&ws)) {
    status = SVGP_NO_MEMORY;
    goto done;
  }

  kernel_block_matrix(k, z, z, L, nth);
  for (int j = 0; j < m; j++) L[j + (size_t)j * m] += p->jitter * k->variance;
  info = chol_lower(L, m, nth, p->callback, p->ctx);
  if (info != 0) {
    status = info == CHOL_STOPPED ? SVGP_STOPPED : SVGP_NOT_POSITIVE_DEFINITE;
    goto done;
  }
  zero_upper(L, m);

  double ysy = 0.0, logdet_noise = 0.0, inv_noise = 0.0;
  for (int i = 0; i < n; i++) {
    isd[i] = 1.0 / sqrt(p->noise[i]);
    ysy += p->y[i] * p->y[i] / p->noise[i];
    logdet_noise += log(p->noise[i]);
    inv_noise += 1.0 / p->noise[i];
  }
  /* B - I = A A' and A Lambda^-1/2 y (into a), chunk by chunk, in order. */
  memset(B, 0, sizeof(double) * (size_t)m * m);
  memset(a, 0, sizeof(double) * (size_t)m);
  for (int i0 = 0; i0 < n; i0 += cw) {
    const int len = min_int(cw, n - i0);
    const points xcp = points_rows(x, NULL, i0, len, xc);
    kernel_block_matrix(k, z, &xcp, kc, nth);
    for (int i = 0; i < len; i++) {
      double *col = kc + (size_t)i * m;
      for (int j = 0; j < m; j++) col[j] *= isd[i0 + i];
      r[i] = p->y[i0 + i] * isd[i0 + i];
    }
    if (solve_left("N", L, m, kc, len, p)) { /* A's chunk */
      status = SVGP_STOPPED;
      goto done;
    }
    add_outer_lower(kc, m, len, B, nth);
    dgemv_("N", &m, &len, &one, kc, &m, r, &inc, &one, a, &inc, 1);
    if (solver_poll(p->callback, p->ctx, 0)) {
      status = SVGP_STOPPED;
      goto done;
    }
  }
  double trace_aa = 0.0; /* tr(Lambda^-1 Qnn) */
  for (int j = 0; j < m; j++) {
    trace_aa += B[j + (size_t)j * m];
    B[j + (size_t)j * m] += 1.0;
  }
  if (bfull) memcpy(bfull, B, sizeof(double) * (size_t)m * m);
  info = chol_lower(B, m, nth, p->callback, p->ctx);
  if (info != 0) { /* B >= I: only overflow or NaN fail */
    status = info == CHOL_STOPPED ? SVGP_STOPPED : SVGP_NOT_FINITE;
    goto done;
  }
  zero_upper(B, m);

  /* c = LB^-1 A Lambda^-1/2 y, then a = L^-T LB^-T c. */
  dtrsv_("L", "N", "N", &m, B, &m, a, &inc, 1, 1, 1);
  double cc = 0.0, half_logdet_b = 0.0;
  for (int j = 0; j < m; j++) {
    cc += a[j] * a[j];
    half_logdet_b += log(B[j + (size_t)j * m]);
  }
  dtrsv_("L", "T", "N", &m, B, &m, a, &inc, 1, 1, 1);
  dtrsv_("L", "T", "N", &m, L, &m, a, &inc, 1, 1, 1);
  /* log|Qnn + Lambda| = log|Lambda| + log|B|; by Woodbury
   * y'(Qnn + Lambda)^-1 y = y' Lambda^-1 y - c'c; and
   * tr(Lambda^-1 Knn) = sigma_f^2 sum 1/noise. */
  out->elbo = -0.5 * (n * LOG_2PI + logdet_noise + ysy - cc +
                      k->variance * inv_noise - trace_aa) -
              half_logdet_b;
  if (!isfinite(out->elbo)) {
    status = SVGP_NOT_FINITE;
    goto done;
  }
  if (grad) status = elbo_gradient(p, z, out, bfull, grad, kc, xc, r, cw);

done:
  workspace_free(&ws);
  return status;
}

static solver_status failure(svgp_status st)
{
  switch (st) {
  case SVGP_STOPPED: return SOLVER_STOPPED;
  case SVGP_NO_MEMORY: return SOLVER_NO_MEMORY;
  default: return SOLVER_DIVERGED;
  }
}

solver_status svgp_fit(const svgp_problem *p, double *z, int m,
                       int iterations, double learning_rate,
                       svgp_result *out, int *iterations_done)
{
  const points zp = {z, m, p->x->d, NULL, NULL};
  const size_t len = (size_t)m * p->x->d;
  solver_status status = SOLVER_MAX_ITER;
  svgp_status st;
  double best_elbo = -HUGE_VAL;
  double *grad, *m1, *m2, *best;
  workspace ws;
  *iterations_done = 0;
  out->not_positive_definite = 0;
  /* Without iterations the inducing points are only evaluated. */
  workspace_init(&ws);
  WORKSPACE_ADD_IF(&ws, iterations > 0, grad, len, 0);
  WORKSPACE_ADD_IF(&ws, iterations > 0, m1, len, WORKSPACE_ZEROED);
  WORKSPACE_ADD_IF(&ws, iterations > 0, m2, len, WORKSPACE_ZEROED);
  WORKSPACE_ADD_IF(&ws, iterations > 0, best, len, 0);
  if (workspace_alloc(&ws)) {
    status = SOLVER_NO_MEMORY;
    goto done;
  }

  for (int t = 0; t <= iterations; t++) {
    st = svgp_evaluate(p, &zp, out, t < iterations ? grad : NULL);
    if (st != SVGP_OK) {
      out->not_positive_definite = t == 0 && st == SVGP_NOT_POSITIVE_DEFINITE;
      status = failure(st);
      goto done;
    }
    if (iterations == 0) break;
    if (out->elbo > best_elbo) {
      best_elbo = out->elbo;
      memcpy(best, z, sizeof(double) * len);
    }
    if (p->callback && p->callback(p->ctx, t, &out->elbo)) {
      status = SOLVER_STOPPED;
      goto done;
    }
    if (t == iterations) break;
    /* Adam, ascending. */
    solver_adam_step(z, m1, m2, grad, len, learning_rate, ADAM_BETA1,
                     (uint64_t)t + 1);
    *iterations_done = t + 1;
  }
  /* Return the best inducing points visited, refitted there (a point that
   * was evaluated before, so it cannot fail for numerical reasons). */
  if (iterations > 0 && out->elbo < best_elbo) {
    memcpy(z, best, sizeof(double) * len);
    st = svgp_evaluate(p, &zp, out, NULL);
    if (st != SVGP_OK) status = failure(st);
  }

done:
  workspace_free(&ws);
  return status;
}
