#include <math.h>
#include <string.h>
#include "mll.h"
#include "chol.h"
#include "threads.h"
#include "vmath.h"
#include "workspace.h"

/* Both gradients are tr(W dH)/2 for a symmetric W (W = a a' - H^{-1} for
 * the exact one, a a' - V V'/s for the pathwise one), and every dH is a
 * Hadamard product of kernel quantities, so the traces are weighted sums
 * over pairs (i, j).  A pair_weights fills w[t] = W_{i0 + t, j} for the
 * rows i0 .. i0 + len - 1 of column j. */
typedef void (*pair_weights)(const void *source, int j, int i0, int len,
                             double *w);

/* The length scales of k on points of d columns: d, or none for the
 * Tanimoto kernel, whose only kernel hyperparameter is its variance. */
static int lengthscales(const kernel *k, const points *x)
{
  return kernel_stationary(k) ? x->d : 0;
}

/* sum_t a[t] b[t], in lanes (vmath.h). */
SDDGP_INLINE double lane_dot(const double *a, const double *b, int len)
{
  const int full = len - len % LANES;
  double s[LANES] = {0};
  for (int t = 0; t < full; t += LANES) {
    #pragma omp simd
    for (int w = 0; w < LANES; w++) s[w] += a[t + w] * b[t + w];
  }
  for (int t = full; t < len; t++) s[t - full] += a[t] * b[t];
  return lanes_total(s);
}

/* sum_t g[t] (col[t] - c)^2, in lanes. */
SDDGP_INLINE double lane_sq_diff(const double *g, const double *col, double c,
                                 int len)
{
  const int full = len - len % LANES;
  double s[LANES] = {0};
  for (int t = 0; t < full; t += LANES) {
    #pragma omp simd
    for (int w = 0; w < LANES; w++) {
      const double diff = col[t + w] - c;
      s[w] += g[t + w] * diff * diff;
    }
  }
  for (int t = full; t < len; t++) {
    const double diff = col[t] - c;
    s[t - full] += g[t] * diff * diff;
  }
  return lanes_total(s);
}

/* Rows len from i0 (all below j) of column j of the strict lower
 * triangle, given their weights w, added to out:
 *   out[c] += sum_i W_ij k'(r2_ij) (x_ic - x_jc)^2   for each column c < d,
 *   out[d] += sum_i W_ij k(r2_ij),
 * with k' = dk/d(r2) and d the length scales.  One pass over the pairs
 * gives all d + 1 sums, so no derivative matrix is ever formed.  r2, w and
 * gw are scratch of length len. */
SDDGP_HOT
static void column_sums(const kernel *k, const points *x, pair_weights weights,
                        const void *source, int j, int i0, int len, double *r2,
                        double *w, double *gw, double *out)
{
  const int m = x->n, d = lengthscales(k, x);
  weights(source, j, i0, len, w);
  if (d == 0) { /* dK/dlog(variance) = K */
    block_kernel_values(k, x, j, x, i0, len, r2);
    out[0] += lane_dot(w, r2, len);
    return;
  }
  block_sq_dist(x, j, x, i0, len, r2);
  memcpy(gw, r2, sizeof(double) * (size_t)len);
  kernel_dr2(k, gw, len);
  for (int t = 0; t < len; t++) gw[t] *= w[t];
  for (int c = 0; c < d; c++)
    out[c] += lane_sq_diff(gw, x->x + (size_t)c * m + i0, x->x[j + (size_t)c * m], len);
  kernel_apply(k, r2, len);
  out[d] += lane_dot(w, r2, len);
}

/* Columns a chunk: between chunks the callback is polled, so Ctrl-C is
 * answered within a fraction of a second at any m. */
#define MLL_CHUNK 256

/* A thread takes a group of columns and goes down the rows below them a
 * tile at a time, so that a tile's inputs and weights, read from memory
 * once, serve every column of the group from cache.  Tiles start at
 * multiples of MLL_TILE whatever the group or thread, so each column's
 * sums are added in one order. */
#define MLL_GROUP 16
#define MLL_TILE 512

/* grad (d + 2) = tr(W dH)/2 for H = K + noise W^{-1} (weights NULL: the
 * identity), with w_diag[i] = W_ii.  sums is scratch of m (d + 1) doubles,
 * scratch of 3 MLL_TILE nthreads. */
static mll_status trace_gradient(const kernel *k, const points *x,
                                 pair_weights weights, const void *source,
                                 const double *w_diag, double noise,
                                 const double *obs_weights, int nthreads,
                                 solver_callback callback, void *ctx,
                                 double *sums, double *scratch, double *grad)
{
  const int m = x->n, d = lengthscales(k, x);
  const size_t stride = (size_t)d + 1;
  double trace_w = 0.0, trace_noise = 0.0;
  memset(sums, 0, sizeof(double) * (size_t)m * stride);
  for (int j0 = 0; j0 < m; j0 += MLL_CHUNK) {
    const int j1 = min_int(m, j0 + MLL_CHUNK);
    if (solver_poll(callback, ctx, j0)) return MLL_STOPPED;
    #pragma omp parallel num_threads(threads_team(nthreads)) \
        if ((double)(j1 - j0) * (m - j0) * stride > PARALLEL_MIN_WORK)
    {
      double *r2 = scratch + 3 * (size_t)MLL_TILE * omp_get_thread_num();
      /* Columns shrink with j, hence dynamic scheduling; each column is
       * summed by one thread in a fixed order, so the schedule cannot
       * change a bit. */
      #pragma omp for schedule(dynamic, 1)
      for (int g0 = j0; g0 < j1; g0 += MLL_GROUP) {
        const int g1 = min_int(j1, g0 + MLL_GROUP);
        for (int t0 = (g0 + 1) / MLL_TILE * MLL_TILE; t0 < m; t0 += MLL_TILE) {
          const int t1 = min_int(m, t0 + MLL_TILE);
          for (int j = g0; j < g1; j++) {
            const int i0 = max_int(t0, j + 1);
            if (i0 < t1)
              column_sums(k, x, weights, source, j, i0, t1 - i0, r2,
                          r2 + MLL_TILE, r2 + 2 * MLL_TILE,
                          sums + (size_t)j * stride);
          }
        }
      }
    }
  }
  /* Totals over columns added serially, in column order. */
  for (size_t c = 0; c <= (size_t)d; c++) {
    double s = 0.0;
    for (int j = 0; j < m; j++) s += sums[(size_t)j * stride + c];
    /* tr(W dK)/2 = (sum over i > j) + (diagonal)/2 by symmetry; the
     * diagonal of dK/dlog(l_c) = -2 (x_ic - x_jc)^2 k' is zero. */
    grad[c] = c < (size_t)d ? -2.0 * s : s;
  }
  /* Diagonal terms: dK/dlog(variance) has the kernel's variance on its
   * diagonal, and d(noise_i)/dlog(noise) = noise_i = noise / w_i. */
  for (int i = 0; i < m; i++) {
    trace_w += w_diag[i];
    trace_noise += obs_weights ? w_diag[i] / obs_weights[i] : w_diag[i];
  }
  grad[d] += 0.5 * kernel_diagonal(k) * trace_w;
  grad[d + 1] = 0.5 * noise * trace_noise;
  return MLL_OK;
}

/* W = a a' - H^{-1}, with the inverse's lower triangle in kinv, where
 * column j's rows below the diagonal are contiguous. */
typedef struct {
  const double *a, *kinv;
  int m;
} exact_source;

SDDGP_HOT
static void exact_weights(const void *source, int j, int i0, int len,
                          double *w)
{
  const exact_source *e = source;
  const double *kinv_col = e->kinv + (size_t)j * e->m + i0;
  for (int t = 0; t < len; t++) w[t] = e->a[j] * e->a[i0 + t] - kinv_col[t];
}

mll_status mll_evaluate(const kernel *k, const points *x, const double *y,
                        double noise, const double *weights, int nthreads,
                        solver_callback callback, void *ctx, double *value,
                        double *grad)
{
  const int m = x->n, d = lengthscales(k, x);
  mll_status status = MLL_OK;
  int info;
  double quad = 0.0, half_logdet = 0.0;
  double *kmat, *a, *sums, *scratch, *w_diag;
  workspace ws;
  workspace_init(&ws);
  WORKSPACE_ADD(&ws, kmat, (size_t)m * m, 0);
  WORKSPACE_ADD(&ws, a, m, 0);
  WORKSPACE_ADD(&ws, w_diag, m, 0);
  WORKSPACE_ADD(&ws, sums, (size_t)m * ((size_t)d + 1), 0);
  WORKSPACE_ADD(&ws, scratch, 3 * (size_t)MLL_TILE * nthreads, 0);
  if (workspace_alloc(&ws)) {
    status = MLL_NO_MEMORY;
    goto done;
  }

  /* chol_factor takes one noise variance per point; a (scratch) is free
   * until the solve below. */
  for (int i = 0; i < m; i++) a[i] = weights ? noise / weights[i] : noise;
  info = chol_factor(k, x, a, kmat, nthreads, callback, ctx);
  if (info == 0) {
    memcpy(a, y, sizeof(double) * (size_t)m);
    info = chol_solve_factored(kmat, m, a, 1, nthreads, callback, ctx);
  }
  if (info == 0) {
    for (int i = 0; i < m; i++) {
      quad += y[i] * a[i];
      half_logdet += log(kmat[i + (size_t)i * m]);
    }
    /* The value alone (logLik()) needs no inverse: a third of the work. */
    if (!grad) {
      *value = -0.5 * quad - half_logdet - 0.5 * m * LOG_2PI;
      goto done;
    }
    /* The traces need every element of the inverse, not just solves. */
    info = chol_inverse(kmat, m, nthreads, callback, ctx);
  }
  if (info != 0) {
    status = info == CHOL_STOPPED ? MLL_STOPPED :
      info == CHOL_NO_MEMORY ? MLL_NO_MEMORY : MLL_NOT_POSITIVE_DEFINITE;
    goto done;
  }

  for (int i = 0; i < m; i++) w_diag[i] = a[i] * a[i] - kmat[i + (size_t)i * m];
  const exact_source source = {a, kmat, m};
  status = trace_gradient(k, x, exact_weights, &source, w_diag, noise, weights,
                          nthreads, callback, ctx, sums, scratch, grad);
  if (status == MLL_OK) *value = -0.5 * quad - half_logdet - 0.5 * m * LOG_2PI;

done:
  workspace_free(&ws);
  return status;
}

/* W = a a' - V V'/s, from the solutions sols = [a, V] (m x (s + 1)). */
typedef struct {
  const double *sols;
  int m, nprobes;
} pathwise_source;

/* Probes a group and rows a block at a time: a block of w stays in
 * registers through the group's probes instead of going through memory
 * once a probe.  Each w[t] still subtracts the probes in order. */
#define WEIGHT_PROBES 64
#define WEIGHT_BLOCK (4 * LANES)

SDDGP_HOT
static void pathwise_weights(const void *source, int j, int i0, int len,
                             double *w)
{
  const pathwise_source *p = source;
  const size_t m = (size_t)p->m;
  const double *a = p->sols;
  double c[WEIGHT_PROBES];
  for (int t = 0; t < len; t++) w[t] = a[j] * a[i0 + t];
  for (int q0 = 1; q0 <= p->nprobes; q0 += WEIGHT_PROBES) {
    const int nq = min_int(WEIGHT_PROBES, p->nprobes - q0 + 1);
    const double *v = p->sols + q0 * m + i0;
    for (int q = 0; q < nq; q++) c[q] = p->sols[j + (q0 + q) * m] / p->nprobes;
    int t = 0;
    for (; t + WEIGHT_BLOCK <= len; t += WEIGHT_BLOCK) {
      double acc[WEIGHT_BLOCK];
      for (int u = 0; u < WEIGHT_BLOCK; u++) acc[u] = w[t + u];
      for (int q = 0; q < nq; q++) {
        const double *vq = v + q * m + t;
        #pragma omp simd
        for (int u = 0; u < WEIGHT_BLOCK; u++) acc[u] -= c[q] * vq[u];
      }
      for (int u = 0; u < WEIGHT_BLOCK; u++) w[t + u] = acc[u];
    }
    for (; t < len; t++) {
      double acc = w[t];
      for (int q = 0; q < nq; q++) acc -= c[q] * v[q * m + t];
      w[t] = acc;
    }
  }
}

mll_status mll_pathwise_gradient(const kernel *k, const points *x,
                                 const double *sols, int nprobes, double noise,
                                 const double *weights, int nthreads,
                                 solver_callback callback, void *ctx,
                                 double *grad)
{
  const int m = x->n, d = lengthscales(k, x);
  mll_status status;
  double *sums, *scratch, *w_diag;
  workspace ws;
  workspace_init(&ws);
  WORKSPACE_ADD(&ws, w_diag, m, 0);
  WORKSPACE_ADD(&ws, sums, (size_t)m * ((size_t)d + 1), 0);
  WORKSPACE_ADD(&ws, scratch, 3 * (size_t)MLL_TILE * nthreads, 0);
  if (workspace_alloc(&ws)) {
    workspace_free(&ws);
    return MLL_NO_MEMORY;
  }
  for (int i = 0; i < m; i++) {
    double s = 0.0;
    for (int q = 1; q <= nprobes; q++) {
      const double v = sols[i + (size_t)q * m];
      s += v * v;
    }
    w_diag[i] = sols[i] * sols[i] - s / nprobes;
  }
  const pathwise_source source = {sols, m, nprobes};
  status = trace_gradient(k, x, pathwise_weights, &source, w_diag, noise,
                          weights, nthreads, callback, ctx, sums, scratch, grad);
  workspace_free(&ws);
  return status;
}
