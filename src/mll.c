#include <math.h>
#include <string.h>
#include "mll.h"
#include "chol.h"
#include "threads.h"
#include "workspace.h"

/* With W = a a' - (K + noise I)^{-1}, every derivative of log p(y) is
 * tr(W dK)/2, and the dK are Hadamard products of kernel quantities, so the
 * traces are weighted sums over pairs (i, j).  This does column j of the
 * strict lower triangle (rows i > j), where the inverse's lower triangle in
 * kinv is contiguous:
 *   out[c] = sum_i W_ij k'(r2_ij) (x_ic - x_jc)^2   for each column c < d,
 *   out[d] = sum_i W_ij k(r2_ij),
 * with k' = dk/d(r2).  One pass over the pairs gives all d + 1 sums, so no
 * derivative matrix is ever formed.  r2, w and gw are scratch of length m. */
static void column_sums(const kernel *k, const points *x, const double *kinv,
                        const double *a, int j, double *r2, double *w,
                        double *gw, double *out)
{
  const int m = x->n, d = x->d, i0 = j + 1, len = m - i0;
  const double *kinv_col = kinv + (size_t)j * m + i0;
  double s = 0.0;
  block_sq_dist(x, j, x, i0, len, r2);
  for (int t = 0; t < len; t++) {
    w[t] = a[j] * a[i0 + t] - kinv_col[t];
    gw[t] = w[t] * kernel_dr2(k, r2[t]);
  }
  for (int c = 0; c < d; c++) {
    const double xj = x->x[j + (size_t)c * m];
    const double *col = x->x + (size_t)c * m + i0;
    double sc = 0.0;
    for (int t = 0; t < len; t++) {
      const double diff = col[t] - xj;
      sc += gw[t] * diff * diff;
    }
    out[c] = sc;
  }
  kernel_apply(k, r2, len);
  for (int t = 0; t < len; t++) s += w[t] * r2[t];
  out[d] = s;
}

mll_status mll_evaluate(const kernel *k, const points *x, const double *y,
                        double noise, const double *weights, int nthreads,
                        solver_callback callback, void *ctx, double *value,
                        double *grad)
{
  const int m = x->n, d = x->d;
  const size_t stride = (size_t)d + 1;
  mll_status status = MLL_OK;
  int info;
  double quad = 0.0, half_logdet = 0.0, trace_w = 0.0, trace_noise = 0.0;
  double *kmat, *a, *sums, *scratch;
  workspace ws;
  workspace_init(&ws);
  WORKSPACE_ADD(&ws, kmat, (size_t)m * m, 0);
  WORKSPACE_ADD(&ws, a, m, 0);
  WORKSPACE_ADD(&ws, sums, (size_t)m * stride, 0);
  WORKSPACE_ADD(&ws, scratch, 3 * (size_t)m * nthreads, 0);
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

  #pragma omp parallel num_threads(threads_team(nthreads))
  {
    double *r2 = scratch + 3 * (size_t)m * omp_get_thread_num();
    /* Columns shrink with j, hence dynamic scheduling; each column is summed
     * by one thread in a fixed order, so the schedule cannot change a bit. */
    #pragma omp for schedule(dynamic, 8)
    for (int j = 0; j < m; j++)
      column_sums(k, x, kmat, a, j, r2, r2 + m, r2 + 2 * (size_t)m,
                  sums + (size_t)j * stride);
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
    const double w_ii = a[i] * a[i] - kmat[i + (size_t)i * m];
    trace_w += w_ii;
    trace_noise += weights ? w_ii / weights[i] : w_ii;
  }
  grad[d] += 0.5 * kernel_value(k, 0.0) * trace_w;
  grad[d + 1] = 0.5 * noise * trace_noise;
  *value = -0.5 * quad - half_logdet - 0.5 * m * LOG_2PI;

done:
  workspace_free(&ws);
  return status;
}
