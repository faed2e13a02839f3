#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "sdd.h"
#include "rff.h"
#include "rng.h"
#include "threads.h"
#include "workspace.h"

/* A probed residual this far above 1, that of alpha = 0 (or above the
 * start's, if larger), means the iteration is unstable: the step size is
 * too large. */
#define SDD_DIVERGENCE_RESIDUAL 1e3
/* sdd_stalled() judges no run before this step (the geometric average
 * trails the iterate by 1 / rate steps, 100 with the default rate), and
 * gives the run this many times the steps its recent progress needs. */
#define SDD_STALL_FIRST_STEP 1000
#define SDD_STALL_SLACK 2.0
/* Rows per unit of work in the dense (elementwise) part of a step. */
#define SDD_DENSE_CHUNK 4096

/* The rows of residual probe `probe_id`. */
static void draw_probe(uint64_t seed, uint64_t probe_id, int probe_size, int n,
                       int *rows)
{
  for (int j = 0; j < probe_size; j++)
    rows[j] = rng_index(seed, RNG_STREAM_PROBE,
                        probe_id * (uint64_t)probe_size + j, n);
}

void residual_probe(const kernel_op *K, const double *noise,
                    const double *rhs, const double *rhs_norm, int nrhs,
                    const double *alpha, int probe_size, uint64_t seed,
                    uint64_t probe_id, int nthreads, double *work, int *rows,
                    double *residuals)
{
  const int n = K->x2->n;
  draw_probe(seed, probe_id, probe_size, n, rows);
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
  /* A batch of all the data is the full gradient: every index once. */
  if (B == n) {
    for (int j = 0; j < n; j++) idx[j] = j;
    return;
  }
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
  /* A resumed run starts with its epoch's permutation. */
  if (pos == 0 || t == opt->first_iteration) shuffle(perm, n, opt->seed, (uint64_t)epoch);
  memcpy(idx, perm + pos, sizeof(int) * (size_t)B);
}

/* One solve's operands and working memory; NULL where the estimator needs
 * none. */
typedef struct {
  const kernel_op *K;
  const double *noise, *rhs;
  const sdd_options *opt;
  int n, B, nrhs;
  double *alpha;
  double *grad;              /* B x nrhs (coordinates) or n x nrhs */
  double *rows;              /* B x nrhs: K_I alpha */
  double *tmp;               /* n x nrhs */
  double *omega, *phase, *W; /* this step's features: m x d, m, m x nrhs */
  int *idx, *perm;
} sdd_work;

/* out = s (out + diag(noise) alpha - b) for every system; b NULL is 0. */
static void add_residual(const sdd_work *w, double *out, const double *b,
                         double s)
{
  for (int c = 0; c < w->nrhs; c++) {
    const size_t off = (size_t)c * w->n;
    const double *a = w->alpha + off;
    double *o = out + off;
    for (int i = 0; i < w->n; i++)
      o[i] = s * (o[i] + w->noise[i] * a[i] - (b ? b[off + i] : 0.0));
  }
}

/* out = L L' v with step t's random features (out may be v). */
static void feature_product(sdd_work *w, const double *v, double *out, int t)
{
  const sdd_options *opt = w->opt;
  const points *p = w->K->x2;
  const int m = opt->features;
  const rff f = rff_step(w->K->k, m, p->d, opt->seed, (uint64_t)t, w->omega,
                         w->phase);
  rff_tmatmul(&f, p, v, w->nrhs, w->W, opt->nthreads);
  rff_matmul(&f, p, w->W, w->nrhs, out, w->n, opt->nthreads);
}

/* The step-t gradient estimate of the header into w->grad, at w->alpha,
 * for the batch in w->idx. */
static void gradient(sdd_work *w, int t)
{
  const sdd_options *opt = w->opt;
  const int n = w->n, B = w->B, nrhs = w->nrhs, nth = opt->nthreads;
  const double *breg = opt->rhs_reg;
  switch (opt->estimator) {
  case SDD_DUAL_COORDINATES:
    kernel_op_rows(w->K, w->idx, B, w->alpha, nrhs, w->grad, B, nth);
    for (int c = 0; c < nrhs; c++) {
      const double *a = w->alpha + (size_t)c * n, *b = w->rhs + (size_t)c * n;
      double *g = w->grad + (size_t)c * B;
      for (int j = 0; j < B; j++) {
        const int i = w->idx[j];
        g[j] = (g[j] + w->noise[i] * a[i] - b[i]) / B;
      }
    }
    break;
  case SDD_DUAL_FEATURES:
    feature_product(w, w->alpha, w->grad, t);
    add_residual(w, w->grad, w->rhs, 1.0 / n);
    break;
  case SDD_DUAL_KALPHA:
    kernel_op_rows(w->K, w->idx, B, w->alpha, nrhs, w->rows, B, nth);
    memset(w->grad, 0, sizeof(double) * (size_t)n * nrhs);
    add_residual(w, w->grad, w->rhs, 1.0 / n);
    /* Repeated indices add up, in batch order. */
    for (int c = 0; c < nrhs; c++)
      for (int j = 0; j < B; j++)
        w->grad[w->idx[j] + (size_t)c * n] += w->rows[j + (size_t)c * B] / B;
    break;
  case SDD_PRIMAL_FULL:
    kernel_op_rows(w->K, NULL, n, w->alpha, nrhs, w->tmp, n, nth);
    add_residual(w, w->tmp, w->rhs, 1.0);
    kernel_op_rows(w->K, NULL, n, w->tmp, nrhs, w->grad, n, nth);
    for (size_t i = 0; i < (size_t)n * nrhs; i++) w->grad[i] /= n;
    break;
  case SDD_PRIMAL_SGD:
    /* Data term: u = K_I alpha - b_err_I, then (1/B) K[:, I] u. */
    kernel_op_rows(w->K, w->idx, B, w->alpha, nrhs, w->rows, B, nth);
    for (int c = 0; c < nrhs; c++)
      for (int j = 0; j < B; j++) {
        const size_t i = w->idx[j] + (size_t)c * n;
        w->rows[j + (size_t)c * B] -= w->rhs[i] - (breg ? breg[i] : 0.0);
      }
    kernel_op_rows_t(w->K, w->idx, B, w->rows, nrhs, w->grad, n, nth);
    /* Regulariser: L L' (diag(noise) alpha - b_reg) / n. */
    memset(w->tmp, 0, sizeof(double) * (size_t)n * nrhs);
    add_residual(w, w->tmp, breg, 1.0);
    feature_product(w, w->tmp, w->tmp, t);
    for (size_t i = 0; i < (size_t)n * nrhs; i++)
      w->grad[i] = w->grad[i] / B + w->tmp[i] / n;
    break;
  }
}

/* Global L2 norm clipping of each system's dense gradient (optax's
 * clip_by_global_norm): g <- g min(1, clip / ||g||). */
static void clip_gradient(const sdd_work *w)
{
  if (!w->opt->clip) return;
  for (int c = 0; c < w->nrhs; c++) {
    const double cap = w->opt->clip[c];
    double *g = w->grad + (size_t)c * w->n;
    if (!(cap > 0)) continue;
    double ss = 0.0;
    for (int i = 0; i < w->n; i++) ss += g[i] * g[i];
    const double norm = sqrt(ss);
    if (norm > cap)
      for (int i = 0; i < w->n; i++) g[i] *= cap / norm;
  }
}

/* The momentum step and the average, with averaging rate r, of
 * coordinates lo..hi-1 (a process of a sharded solve updates its own
 * only); a dense gradient has been clipped already. */
static void update(sdd_work *w, double *mom, double *alpha_bar, double r,
                   int lo, int hi)
{
  const sdd_options *opt = w->opt;
  const int n = w->n, nrhs = w->nrhs;
  const double rho = opt->momentum;
  const int sparse = opt->estimator == SDD_DUAL_COORDINATES;
  if (sparse) {
    /* The gradient is sparse: scatter it into the momentum and the iterate
     * serially (repeated indices add up, in batch order). */
    for (int c = 0; c < nrhs; c++) {
      const double lr = opt->step_size[c];
      double *a = w->alpha + (size_t)c * n, *m = mom + (size_t)c * n;
      const double *g = w->grad + (size_t)c * w->B;
      for (int j = 0; j < w->B; j++) {
        const int i = w->idx[j];
        if (i < lo || i >= hi) continue;
        m[i] += g[j];
        a[i] -= lr * g[j];
      }
    }
  }

  /* Dense part of the step in one pass (a dense gradient enters here the
   * way the scatter above adds a sparse one): alpha -= lr rho m, average,
   * and decay m by rho ahead of the next step's gradient, which together
   * give m_t = g_t + rho m_{t-1}. */
  #pragma omp parallel for num_threads(threads_team(opt->nthreads)) schedule(static) \
      if (hi - lo > SDD_DENSE_CHUNK)
  for (int i0 = lo; i0 < hi; i0 += SDD_DENSE_CHUNK) {
    const int i1 = i0 + SDD_DENSE_CHUNK < hi ? i0 + SDD_DENSE_CHUNK : hi;
    for (int c = 0; c < nrhs; c++) {
      const double lr = opt->step_size[c], lr_rho = lr * rho;
      double *a = w->alpha + (size_t)c * n, *m = mom + (size_t)c * n;
      double *ab = alpha_bar + (size_t)c * n;
      if (!sparse) {
        const double *g = w->grad + (size_t)c * n;
        for (int i = i0; i < i1; i++) {
          m[i] += g[i];
          a[i] -= lr * g[i];
        }
      }
      for (int i = i0; i < i1; i++) {
        a[i] -= lr_rho * m[i];
        ab[i] = r * a[i] + (1.0 - r) * ab[i];
        m[i] *= rho;
      }
    }
  }
}

/* Averaging rate of iteration `iteration` (1-based): geometric, or the
 * running arithmetic mean from averaging_start on. */
static double averaging_rate(const sdd_options *opt, int iteration)
{
  if (opt->averaging_start <= 0) return opt->averaging_rate;
  if (iteration < opt->averaging_start) return 1.0;
  return 1.0 / (double)(iteration - opt->averaging_start + 1);
}

/* The metrics of sdd_metrics for abar's first column into out[0..2] (NaN
 * where not asked for); work holds 2 n doubles with a reference and then
 * test->x1->n more. */
static void evaluate_metrics(const sdd_work *w, const double *ab, double *work,
                             double *out)
{
  const sdd_metrics *mt = &w->opt->metrics;
  const int n = w->n;
  out[0] = out[1] = out[2] = NAN;
  if (mt->reference) {
    double *e = work, *Ke = work + n, eKe = 0.0, KeKe = 0.0;
    work += 2 * (size_t)n;
    for (int i = 0; i < n; i++) e[i] = ab[i] - mt->reference[i];
    kernel_op_rows(w->K, NULL, n, e, 1, Ke, n, w->opt->nthreads);
    for (int i = 0; i < n; i++) {
      eKe += e[i] * Ke[i];
      KeKe += Ke[i] * Ke[i];
    }
    out[0] = eKe;
    out[1] = KeKe;
  }
  if (mt->test) {
    const int m = mt->test->x1->n;
    double ss = 0.0;
    kernel_op_rows(mt->test, NULL, m, ab, 1, work, m, w->opt->nthreads);
    for (int i = 0; i < m; i++) ss += (mt->test_y[i] - work[i]) * (mt->test_y[i] - work[i]);
    out[2] = sqrt(ss / m);
  }
}

/* Whether a run seems too slow to reach its tolerance within its budget:
 * at probe k (step k * check_every), with worst[j] the largest residual
 * probed at probe j, the decrease from probe k / 2 to probe k continued at
 * the same log-linear rate would take more than SDD_STALL_SLACK times the
 * steps left.  A heuristic: on large data sets SDD's residuals fall ever
 * more slowly, but they can also level off and then fall faster (seen on
 * small ones), so a run given up on might have made it. */
static int sdd_stalled(const sdd_options *opt, const double *worst, int k)
{
  const int step = k * opt->check_every, half = k / 2;
  if (step < SDD_STALL_FIRST_STEP || half < 1 || !(worst[k] > opt->tolerance))
    return 0;
  const double rate = log(worst[half] / worst[k]) / ((k - half) * (double)opt->check_every);
  if (!(rate > 0)) return 1;
  const double needed = log(worst[k] / opt->tolerance) / rate;
  return needed > SDD_STALL_SLACK * (opt->iterations - step);
}

solver_status sdd_solve(const kernel_op *K, const double *noise,
                        const double *rhs, int nrhs, const sdd_options *opt,
                        double *alpha_bar, int *iterations_done,
                        solver_callback callback, void *ctx)
{
  const int n = K->x2->n, P = opt->probe_size, nvalues = SDD_TRACE_VALUES(nrhs);
  const sdd_estimator est = opt->estimator;
  const int batched = est != SDD_DUAL_FEATURES && est != SDD_PRIMAL_FULL;
  const int featured = est == SDD_DUAL_FEATURES || est == SDD_PRIMAL_SGD;
  const int with_rows = est == SDD_DUAL_KALPHA || est == SDD_PRIMAL_SGD;
  const int with_tmp = est == SDD_PRIMAL_FULL || est == SDD_PRIMAL_SGD;
  const int permuted = batched && opt->batch_sampling == SDD_BATCH_PERMUTATION;
  const sdd_metrics *mt = &opt->metrics;
  const size_t metric_len = (mt->reference ? 2 * (size_t)n : 0) +
                            (mt->test ? (size_t)mt->test->x1->n : 0);
  /* A batch larger than the data would make an epoch of permutation
   * sampling empty. */
  const int B = opt->batch_size < n ? opt->batch_size : n;
  const size_t len = (size_t)n * nrhs, m = (size_t)opt->features;
  solver_status status = SOLVER_MAX_ITER;
  double metric_seconds = 0.0;
  int t = 0, next_metric = 0;
  double *mom, *probe_work, *rhs_norm, *values, *metric_work, *worst, *shard_x;
  int *probe_rows;
  shard sh;
  kernel_op sharded;

  sdd_work w = {K, noise, rhs, opt, n, B, nrhs, NULL, NULL, NULL, NULL,
                NULL, NULL, NULL, NULL, NULL};
  workspace ws;
  workspace_init(&ws);
  WORKSPACE_ADD(&ws, w.alpha, len, WORKSPACE_ZEROED);
  WORKSPACE_ADD(&ws, w.grad, est == SDD_DUAL_COORDINATES ? (size_t)B * nrhs : len, 0);
  WORKSPACE_ADD_IF(&ws, with_rows, w.rows, (size_t)B * nrhs, 0);
  WORKSPACE_ADD_IF(&ws, with_tmp, w.tmp, len, 0);
  /* Random hashes (the Tanimoto kernel) are drawn as they are used. */
  const int fourier = featured && kernel_stationary(K->k);
  WORKSPACE_ADD_IF(&ws, fourier, w.omega, m * K->x2->d, 0);
  WORKSPACE_ADD_IF(&ws, fourier, w.phase, m, 0);
  WORKSPACE_ADD_IF(&ws, featured, w.W, m * nrhs, 0);
  WORKSPACE_ADD_IF(&ws, batched, w.idx, B, 0);
  WORKSPACE_ADD_IF(&ws, permuted, w.perm, n, 0);
  WORKSPACE_ADD(&ws, mom, len, WORKSPACE_ZEROED);
  WORKSPACE_ADD(&ws, probe_work, (size_t)P * nrhs, 0);
  WORKSPACE_ADD(&ws, rhs_norm, nrhs, 0);
  WORKSPACE_ADD(&ws, values, nvalues, 0);
  WORKSPACE_ADD_IF(&ws, metric_len > 0, metric_work, metric_len, 0);
  WORKSPACE_ADD(&ws, probe_rows, P, 0);
  const int stall_checked = opt->stop_stalled && opt->tolerance > 0 && opt->check_every > 0;
  WORKSPACE_ADD_IF(&ws, stall_checked, worst,
                   (size_t)(stall_checked ? opt->iterations / opt->check_every + 1 : 0), 0);
  const int rounds = opt->shard ? shard_rounds(n, opt->shard->size, B) : 0;
  WORKSPACE_ADD_IF(&ws, opt->shard != NULL, shard_x,
                   opt->shard ? shard_points_len(n, K->x2->d, opt->shard->rank,
                                                 opt->shard->size, rounds) : 0, 0);
  *iterations_done = 0;
  if (workspace_alloc(&ws)) {
    status = SOLVER_NO_MEMORY;
    goto done;
  }
  if (opt->alpha0) memcpy(w.alpha, opt->alpha0, sizeof(double) * len);
  if (opt->alpha_bar0 || opt->alpha0)
    memcpy(alpha_bar, opt->alpha_bar0 ? opt->alpha_bar0 : opt->alpha0, sizeof(double) * len);
  else
    memset(alpha_bar, 0, sizeof(double) * len);
  if (opt->momentum0) memcpy(mom, opt->momentum0, sizeof(double) * len);
  *iterations_done = opt->first_iteration;
  solver_rhs_norms(rhs, n, nrhs, NULL, n, rhs_norm);
  /* Divergence is judged against the start: a warm start can itself lie
   * far above the residual of zero (warm_start = "nystrom" where the noise
   * is small against the kernel), which says nothing of the step size.
   * Every process probes the whole start alike (probe 0; steps probe from
   * 1), before the kernel is sharded. */
  double diverged_above = SDD_DIVERGENCE_RESIDUAL;
  if (opt->alpha0 && opt->first_iteration == 0 && opt->check_every > 0) {
    residual_probe(K, noise, rhs, rhs_norm, nrhs, alpha_bar, P, opt->seed, 0,
                   opt->nthreads, probe_work, probe_rows, values);
    for (int c = 0; c < nrhs; c++)
      if (isfinite(values[c]))
        diverged_above = fmax(diverged_above, SDD_DIVERGENCE_RESIDUAL * values[c]);
  }
  if (opt->shard) {
    sharded = shard_op(K, opt->shard, rounds, &sh, shard_x);
    K = w.K = &sharded;
  }
  /* Probed residuals are the measures; the iterate (not only its average)
   * must stay finite (a sharded solve's processes check their own
   * coordinates and share the verdict, below). */
  const solver_stop_rule rule = {
      .nmeasures = nrhs, .diverged_above = diverged_above,
      .has_tolerance = 1, .tolerance = opt->tolerance,
      .iterate = opt->shard ? NULL : w.alpha, .len = len, .callback = callback,
      .ctx = ctx};
  /* The coordinates this process updates: all, or its pieces' (each
   * process owns the iterate, momentum and average of its columns of K, and
   * reads only those in its products; the others it holds are stale). */
  int own = 1, own_first[SHARD_MAX_ROUNDS], own_end[SHARD_MAX_ROUNDS];
  own_first[0] = 0;
  own_end[0] = n;
  if (opt->shard) {
    own = sh.rounds;
    for (int k = 0; k < own; k++) {
      own_first[k] = sh.first[k];
      own_end[k] = sh.first[k] + sh.cols[k].n;
    }
  }

  const double started = omp_get_wtime();
  /* The clock is read only when there is a limit. */
  const int timed = opt->time_limit > 0 && isfinite(opt->time_limit);
  for (t = opt->first_iteration; t < opt->iterations; t++) {
    if (batched) draw_batch(opt, n, B, t, w.perm, w.idx);
    /* A sharded solve's processes get the gradient right at their own
     * coordinates only (the noise term reads the iterate), all they use. */
    gradient(&w, t);
    const double update_start = opt->update_seconds ? omp_get_wtime() : 0.0;
    if (est != SDD_DUAL_COORDINATES) clip_gradient(&w);
    for (int k = 0; k < own; k++)
      update(&w, mom, alpha_bar, averaging_rate(opt, t + 1), own_first[k], own_end[k]);
    if (opt->update_seconds) *opt->update_seconds += omp_get_wtime() - update_start;
    *iterations_done = t + 1;

    /* A run stopped by its time limit probes its last step like a
     * complete one, so the trace ends with the residual handed back. */
    const int out_of_time = timed && omp_get_wtime() - started >= opt->time_limit;
    const int probe_now = opt->check_every > 0 &&
                          ((t + 1) % opt->check_every == 0 ||
                           t + 1 == opt->iterations || out_of_time);
    while (next_metric < mt->n_at && mt->at[next_metric] < t + 1) next_metric++;
    const int metric_now = next_metric < mt->n_at && mt->at[next_metric] == t + 1;
    const int report = probe_now || metric_now;
    if (report) {
      for (int c = 0; c < nvalues; c++) values[c] = NAN;
      if (metric_now) {
        const double start = omp_get_wtime();
        /* The metrics read all of the mean's average. */
        if (opt->shard) shard_share_all(&sh, alpha_bar, n, 1);
        evaluate_metrics(&w, alpha_bar, metric_work, values + nrhs);
        metric_seconds += omp_get_wtime() - start;
      }
      values[nrhs + 3] = metric_seconds;
      int bad = 0;
      if (probe_now && opt->shard) {
        /* The probe's noise term reads the average at its rows, and every
         * process must judge the same iterate. */
        for (int c = 0; c < nrhs && !bad; c++)
          for (int k = 0; k < own && !bad; k++)
            bad = !solver_all_finite(w.alpha + (size_t)c * n + own_first[k],
                                     (size_t)(own_end[k] - own_first[k]));
        draw_probe(opt->seed, (uint64_t)(t + 1), P, n, probe_rows);
        shard_share_rows(&sh, probe_rows, P, alpha_bar, n, nrhs, &bad);
      }
      if (probe_now)
        residual_probe(K, noise, rhs, rhs_norm, nrhs, alpha_bar, P, opt->seed,
                       (uint64_t)(t + 1), opt->nthreads, probe_work,
                       probe_rows, values);
      /* A non-finite iterate diverges, as one process's rule finds. */
      if (bad) values[0] = NAN;
    }
    status = solver_end_step(&rule, t + 1, probe_now ? values : NULL,
                             report ? values : NULL);
    /* Out of time, the run ends after this step's checks (such a step
     * probes, see above). */
    if (status == SOLVER_MAX_ITER && report && out_of_time &&
        t + 1 < opt->iterations)
      status = SOLVER_TIME_LIMIT;
    if (status == SOLVER_MAX_ITER && stall_checked && (t + 1) % opt->check_every == 0) {
      const int k = (t + 1) / opt->check_every;
      worst[k] = 0.0;
      for (int c = 0; c < nrhs; c++) worst[k] = fmax(worst[k], values[c]);
      if (t + 1 < opt->iterations && sdd_stalled(opt, worst, k)) status = SOLVER_STALLED;
    }
    if (status == SOLVER_TOLERANCE && t + 1 < opt->tolerance_from) status = SOLVER_MAX_ITER;
    if (status != SOLVER_MAX_ITER) break;
  }
  /* Each process has updated its own coordinates: gathered once, here. */
  if (opt->shard) {
    const double before = opt->shard->seconds;
    shard_share_all(&sh, alpha_bar, n, nrhs);
    if (opt->alpha_out) shard_share_all(&sh, w.alpha, n, nrhs);
    if (opt->momentum_out) shard_share_all(&sh, mom, n, nrhs);
    opt->shard->gather_seconds += opt->shard->seconds - before;
  }
  if (opt->alpha_out) memcpy(opt->alpha_out, w.alpha, sizeof(double) * len);
  if (opt->momentum_out) memcpy(opt->momentum_out, mom, sizeof(double) * len);

done:
  workspace_free(&ws);
  return status;
}
