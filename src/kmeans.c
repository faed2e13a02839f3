#include <math.h>
#include <string.h>
#include "kmeans.h"
#include "rng.h"
#include "threads.h"
#include "workspace.h"

/* Points per unit of parallel work; a fixed size, so the split (and every
 * result) is the same for any thread count. */
#define KMEANS_CHUNK 1024
/* Centres compared with one point at a time. */
#define KMEANS_TILE 128

/* d2[i] = min(d2[i], squared distance from point i to centre t). */
static void update_nearest(const points *x, const points *cen, int t,
                           double *d2, int nthreads)
{
  const int n = x->n, nchunks = (n + KMEANS_CHUNK - 1) / KMEANS_CHUNK;
  /* One seed's work: a thread team pays off only for large n d, and the
   * seeding opens m of them. */
  #pragma omp parallel for num_threads(threads_team(nthreads)) schedule(static) \
      if (nchunks > 1 && (double)n * x->d > PARALLEL_MIN_WORK)
  for (int ch = 0; ch < nchunks; ch++) {
    double buf[KMEANS_CHUNK];
    const int i0 = ch * KMEANS_CHUNK;
    const int len = n - i0 < KMEANS_CHUNK ? n - i0 : KMEANS_CHUNK;
    block_sq_dist(cen, t, x, i0, len, buf);
    for (int i = 0; i < len; i++)
      if (buf[i] < d2[i0 + i]) d2[i0 + i] = buf[i];
  }
}

/* Seed t >= 1: point i with probability d2[i] / sum(d2), by inverting the
 * cumulative sum (serial, so the same for any thread count). */
static int draw_seed(const double *d2, const char *chosen, int n,
                     uint64_t seed, int t)
{
  double total = 0.0;
  for (int i = 0; i < n; i++) total += d2[i];
  if (total > 0.0) {
    const double u = rng_uniform(seed, RNG_STREAM_KMEANS, (uint64_t)t) * total;
    double cum = 0.0;
    int last = -1;
    for (int i = 0; i < n; i++) {
      if (d2[i] <= 0.0) continue; /* the seeds so far, and their duplicates */
      cum += d2[i];
      last = i;
      if (cum > u) return i;
    }
    return last; /* u rounded up to the total */
  }
  /* Every point duplicates a seed: any point not chosen yet, so that the
   * seeds stay distinct training points. */
  int j = rng_index(seed, RNG_STREAM_KMEANS, (uint64_t)t, n);
  while (chosen[j]) j = j + 1 < n ? j + 1 : 0;
  return j;
}

/* Nearest centre of every point (the lowest index among ties) and the
 * squared distance to it; returns how many labels changed. */
static int assign(const points *x, const points *cen, int *label,
                  double *dist, int nthreads)
{
  const int n = x->n, m = cen->n;
  const int nchunks = (n + KMEANS_CHUNK - 1) / KMEANS_CHUNK;
  int changed = 0;
  /* An integer count is exact in any order, so the reduction cannot make
   * results depend on the thread count. */
  #pragma omp parallel for num_threads(threads_team(nthreads)) schedule(static) \
      reduction(+ : changed) if (nchunks > 1)
  for (int ch = 0; ch < nchunks; ch++) {
    double buf[KMEANS_TILE];
    const int i1 = (ch + 1) * KMEANS_CHUNK < n ? (ch + 1) * KMEANS_CHUNK : n;
    for (int i = ch * KMEANS_CHUNK; i < i1; i++) {
      double best = HUGE_VAL;
      int arg = 0;
      for (int j0 = 0; j0 < m; j0 += KMEANS_TILE) {
        const int len = m - j0 < KMEANS_TILE ? m - j0 : KMEANS_TILE;
        block_sq_dist(x, i, cen, j0, len, buf);
        for (int t = 0; t < len; t++)
          if (buf[t] < best) {
            best = buf[t];
            arg = j0 + t;
          }
      }
      if (label[i] != arg) changed++;
      label[i] = arg;
      dist[i] = best;
    }
  }
  return changed;
}

/* Each centre with members becomes their mean.  The members are first
 * grouped by cluster in index order (a counting sort), so each centroid is
 * one serial sum in a fixed order, computed by one thread. */
static void update_centres(const points *x, const int *label, double *centres,
                           int m, int *start, int *order, int nthreads)
{
  const int n = x->n, d = x->d;
  memset(start, 0, sizeof(int) * ((size_t)m + 1));
  for (int i = 0; i < n; i++) start[label[i] + 1]++;
  for (int j = 0; j < m; j++) start[j + 1] += start[j];
  for (int i = 0; i < n; i++) order[start[label[i]]++] = i;
  /* start[j] now marks the end of cluster j; shift back to the starts. */
  for (int j = m; j > 0; j--) start[j] = start[j - 1];
  start[0] = 0;

  #pragma omp parallel for num_threads(threads_team(nthreads)) schedule(static) \
      if ((double)n * d > 1e5)
  for (int j = 0; j < m; j++) {
    const int count = start[j + 1] - start[j];
    if (count == 0) continue; /* an empty cluster keeps its centre */
    for (int c = 0; c < d; c++) {
      const double *col = x->x + (size_t)c * n;
      double s = 0.0;
      for (int r = start[j]; r < start[j + 1]; r++) s += col[order[r]];
      centres[j + (size_t)c * m] = s / count;
    }
  }
}

static double sum(const double *v, int n)
{
  double s = 0.0;
  for (int i = 0; i < n; i++) s += v[i];
  return s;
}

solver_status kmeans_fit(const points *x, int m, const kmeans_options *opt,
                         double *centres, int *seeds, double *objective,
                         int *iterations_done, solver_callback callback,
                         void *ctx)
{
  const int n = x->n, d = x->d;
  const points cen = {centres, m, d, NULL, NULL};
  solver_status status = SOLVER_MAX_ITER;
  double *d2;
  char *chosen;
  int *label, *order, *start;
  workspace ws;
  *iterations_done = 0;
  objective[0] = NAN;
  workspace_init(&ws);
  WORKSPACE_ADD(&ws, d2, n, 0);
  WORKSPACE_ADD(&ws, chosen, n, WORKSPACE_ZEROED);
  WORKSPACE_ADD(&ws, label, n, 0);
  WORKSPACE_ADD(&ws, order, n, 0);
  WORKSPACE_ADD(&ws, start, (size_t)m + 1, 0);
  if (workspace_alloc(&ws)) {
    status = SOLVER_NO_MEMORY;
    goto done;
  }

  for (int i = 0; i < n; i++) d2[i] = HUGE_VAL;
  for (int t = 0; t < m; t++) {
    const int j = t == 0 ? rng_index(opt->seed, RNG_STREAM_KMEANS, 0, n)
                         : draw_seed(d2, chosen, n, opt->seed, t);
    seeds[t] = j;
    chosen[j] = 1;
    for (int c = 0; c < d; c++)
      centres[t + (size_t)c * m] = x->x[j + (size_t)c * n];
    update_nearest(x, &cen, t, d2, opt->nthreads);
    if (solver_poll(callback, ctx, 0)) {
      status = SOLVER_STOPPED;
      goto done;
    }
  }

  /* d2 (scratch from here on) holds each point's distance to its centre. */
  for (int i = 0; i < n; i++) label[i] = -1;
  assign(x, &cen, label, d2, opt->nthreads);
  objective[0] = sum(d2, n);
  for (int it = 1; it <= opt->iterations; it++) {
    update_centres(x, label, centres, m, start, order, opt->nthreads);
    const int changed = assign(x, &cen, label, d2, opt->nthreads);
    objective[it] = sum(d2, n);
    *iterations_done = it;
    if (solver_poll(callback, ctx, it)) {
      status = SOLVER_STOPPED;
      break;
    }
    if (changed == 0) break; /* a fixed point: the centres are the means */
  }

done:
  workspace_free(&ws);
  return status;
}
