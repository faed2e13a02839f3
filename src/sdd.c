#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "sdd.h"
#include "rng.h"
#include "omp_compat.h"

/* A probed residual this far above its starting value of 1 (alpha = 0)
 * means the iteration is unstable: the step size is too large. */
#define DIVERGENCE_RESIDUAL 1e3
/* Rows per unit of work in the dense (elementwise) part of a step. */
#define DENSE_CHUNK 4096

void residual_probe(const kernel_op *K, const double *noise,
                    const double *rhs, const double *rhs_norm, int nrhs,
                    const double *alpha, int probe_size, uint64_t seed,
                    uint64_t probe_id, int nthreads, double *work, int *rows,
                    double *residuals)
{
  const int n = K->x2->n;
  for (int j = 0; j < probe_size; j++)
    rows[j] = rng_index(seed, RNG_STREAM_PROBE,
                        probe_id * (uint64_t)probe_size + j, n);
  kernel_op_rows(K, rows, probe_size, alpha, nrhs, work, probe_size, nthreads);
  for (int c = 0; c < nrhs; c++) {
    const double *a = alpha + (size_t)c * n, *b = rhs + (size_t)c * n;
    double ss = 0.0;
    for (int j = 0; j < probe_size; j++) {
      const int i = rows[j];
      const double r = work[j + (size_t)c * probe_size] + noise[i] * a[i] - b[i];
      ss += r * r;
    }
    /* (n / P) sum over P uniform rows is unbiased for ||r||^2. */
    residuals[c] = sqrt(ss * n / probe_size) / rhs_norm[c];
  }
}

/* Epoch permutation by Fisher-Yates with counter-based draws. */
static void shuffle(int *perm, int n, uint64_t seed, uint64_t epoch)
{
  for (int i = 0; i < n; i++) perm[i] = i;
  for (int i = n - 1; i > 0; i--) {
    const int j = rng_index(seed, RNG_STREAM_BATCH,
                            epoch * (uint64_t)n + (uint64_t)i, i + 1);
    const int tmp = perm[i];
    perm[i] = perm[j];
    perm[j] = tmp;
  }
}

static void draw_batch(const sdd_options *opt, int n, int B, int t, int *perm,
                       int *idx)
{
  if (opt->batch_sampling == SDD_BATCH_UNIFORM) {
    for (int j = 0; j < B; j++)
      idx[j] = rng_index(opt->seed, RNG_STREAM_BATCH,
                         (uint64_t)t * B + j, n);
    return;
  }
  /* Without replacement: each epoch is one permutation cut into n / B
   * batches; the n mod B leftover indices wait for a later epoch. */
  const int per_epoch = n / B;
  const int epoch = t / per_epoch, pos = (t % per_epoch) * B;
  if (pos == 0) shuffle(perm, n, opt->seed, (uint64_t)epoch);
  memcpy(idx, perm + pos, sizeof(int) * (size_t)B);
}

static int all_finite(const double *a, size_t len)
{
  for (size_t i = 0; i < len; i++)
    if (!isfinite(a[i])) return 0;
  return 1;
}

solver_status sdd_solve(const kernel_op *K, const double *noise,
                        const double *rhs, int nrhs, const sdd_options *opt,
                        double *alpha_bar, int *iterations_done,
                        solver_callback callback, void *ctx)
{
  const int n = K->x2->n, P = opt->probe_size;
  /* A batch larger than the data would make an epoch of permutation
   * sampling empty. */
  const int B = opt->batch_size < n ? opt->batch_size : n;
  const size_t len = (size_t)n * nrhs;
  const double rho = opt->momentum, r = opt->averaging_rate;
  solver_status status = SOLVER_MAX_ITER;
  int t = 0;

  double *alpha = calloc(len, sizeof(double));
  double *mom = calloc(len, sizeof(double));
  double *grad = malloc(sizeof(double) * (size_t)B * nrhs);
  double *probe_work = malloc(sizeof(double) * (size_t)P * nrhs);
  double *rhs_norm = malloc(sizeof(double) * (size_t)nrhs);
  double *residuals = malloc(sizeof(double) * (size_t)nrhs);
  int *idx = malloc(sizeof(int) * (size_t)B);
  int *probe_rows = malloc(sizeof(int) * (size_t)P);
  int *perm = opt->batch_sampling == SDD_BATCH_PERMUTATION
                  ? malloc(sizeof(int) * (size_t)n) : NULL;
  *iterations_done = 0;
  if (!alpha || !mom || !grad || !probe_work || !rhs_norm || !residuals ||
      !idx || !probe_rows ||
      (opt->batch_sampling == SDD_BATCH_PERMUTATION && !perm)) {
    status = SOLVER_NO_MEMORY;
    goto done;
  }
  memset(alpha_bar, 0, sizeof(double) * len);
  for (int c = 0; c < nrhs; c++) {
    double ss = 0.0;
    for (int i = 0; i < n; i++) ss += rhs[i + (size_t)c * n] * rhs[i + (size_t)c * n];
    rhs_norm[c] = ss > 0 ? sqrt(ss) : 1.0;
  }

  for (t = 0; t < opt->iterations; t++) {
    draw_batch(opt, n, B, t, perm, idx);

    /* Gradient rows: (K_I alpha + noise_I alpha_I - b_I) / B. */
    kernel_op_rows(K, idx, B, alpha, nrhs, grad, B, opt->nthreads);
    for (int c = 0; c < nrhs; c++) {
      const double *a = alpha + (size_t)c * n, *b = rhs + (size_t)c * n;
      double *g = grad + (size_t)c * B;
      for (int j = 0; j < B; j++) {
        const int i = idx[j];
        g[j] = (g[j] + noise[i] * a[i] - b[i]) / B;
      }
    }

    /* The gradient is sparse: scatter it into the momentum and the
     * iterate serially (repeated indices add up, in batch order). */
    for (int c = 0; c < nrhs; c++) {
      const double lr = opt->step_size[c];
      double *a = alpha + (size_t)c * n, *m = mom + (size_t)c * n;
      const double *g = grad + (size_t)c * B;
      for (int j = 0; j < B; j++) {
        m[idx[j]] += g[j];
        a[idx[j]] -= lr * g[j];
      }
    }

    /* Dense part of the step in one pass: alpha -= lr rho m, average, and
     * decay m by rho ahead of the next step's scatter, which together give
     * m_t = g_t + rho m_{t-1}. */
    #pragma omp parallel for num_threads(opt->nthreads) schedule(static) \
        if (n > DENSE_CHUNK)
    for (int i0 = 0; i0 < n; i0 += DENSE_CHUNK) {
      const int i1 = i0 + DENSE_CHUNK < n ? i0 + DENSE_CHUNK : n;
      for (int c = 0; c < nrhs; c++) {
        const double lr_rho = opt->step_size[c] * rho;
        double *a = alpha + (size_t)c * n, *m = mom + (size_t)c * n;
        double *ab = alpha_bar + (size_t)c * n;
        for (int i = i0; i < i1; i++) {
          a[i] -= lr_rho * m[i];
          ab[i] = r * a[i] + (1.0 - r) * ab[i];
          m[i] *= rho;
        }
      }
    }
    *iterations_done = t + 1;

    const int probe_now = opt->check_every > 0 &&
                          ((t + 1) % opt->check_every == 0 ||
                           t + 1 == opt->iterations);
    if (probe_now) {
      residual_probe(K, noise, rhs, rhs_norm, nrhs, alpha_bar, P,
                     opt->seed, (uint64_t)(t + 1), opt->nthreads, probe_work,
                     probe_rows, residuals);
      int below = 1;
      for (int c = 0; c < nrhs; c++) {
        if (!isfinite(residuals[c]) || residuals[c] > DIVERGENCE_RESIDUAL)
          status = SOLVER_DIVERGED;
        if (!(residuals[c] < opt->tolerance)) below = 0;
      }
      if (status == SOLVER_DIVERGED || !all_finite(alpha, len)) {
        status = SOLVER_DIVERGED;
        break;
      }
      if (callback && callback(ctx, t + 1, residuals)) {
        status = SOLVER_STOPPED;
        break;
      }
      if (below) {
        status = SOLVER_TOLERANCE;
        break;
      }
    } else if (callback && callback(ctx, t + 1, NULL)) {
      status = SOLVER_STOPPED;
      break;
    }
  }

done:
  free(alpha);
  free(mom);
  free(grad);
  free(probe_work);
  free(rhs_norm);
  free(residuals);
  free(idx);
  free(probe_rows);
  free(perm);
  return status;
}
