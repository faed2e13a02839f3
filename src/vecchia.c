#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "vecchia.h"
#include "rng.h"
#include "threads.h"

/* Points a slab: the callback is polled between slabs. */
#define VECCHIA_SLAB 1024

typedef struct {
  uint64_t key;
  int index;
} keyed;

static int by_key(const void *a, const void *b)
{
  const keyed *x = a, *y = b;
  if (x->key != y->key) return x->key < y->key ? -1 : 1;
  return x->index - y->index;
}

/* The order in which points are conditioned: a pseudo-random permutation
 * that depends on n alone (CG takes no seed; the order changes the speed of
 * convergence, never the solution).  Data often come sorted, and an order
 * along a sort leaves each point's earlier neighbours on one side of it. */
static void random_order(int n, keyed *buf, int *order)
{
  for (int i = 0; i < n; i++) {
    buf[i].key = rng_bits(0, RNG_STREAM_VECCHIA, (uint64_t)i);
    buf[i].index = i;
  }
  qsort(buf, (size_t)n, sizeof *buf, by_key);
  for (int i = 0; i < n; i++) order[i] = buf[i].index;
}

/* Whether candidate (d1, i1) is farther than (d2, i2): ties go to the
 * larger position, so the choice never depends on the scan. */
static int farther(double d1, int i1, double d2, int i2)
{
  return d1 > d2 || (d1 == d2 && i1 > i2);
}

/* Restores the max-heap (by `farther`) of k candidates below slot s. */
static void sift_down(double *dist, int *pos, int k, int s)
{
  for (;;) {
    int top = s;
    const int l = 2 * s + 1, r = l + 1;
    if (l < k && farther(dist[l], pos[l], dist[top], pos[top])) top = l;
    if (r < k && farther(dist[r], pos[r], dist[top], pos[top])) top = r;
    if (top == s) return;
    const double d = dist[s];
    const int p = pos[s];
    dist[s] = dist[top];
    pos[s] = pos[top];
    dist[top] = d;
    pos[top] = p;
    s = top;
  }
}

/* The k = min(m, t) positions among 0..t-1 nearest to position t, by the
 * squared distances r2[0..t-1], into pos (heap order). */
static int nearest(const double *r2, int t, int m, double *dist, int *pos)
{
  const int k = t < m ? t : m;
  for (int j = 0; j < k; j++) {
    dist[j] = r2[j];
    pos[j] = j;
  }
  for (int s = k / 2 - 1; s >= 0; s--) sift_down(dist, pos, k, s);
  for (int j = k; j < t; j++) {
    if (farther(dist[0], pos[0], r2[j], j)) {
      dist[0] = r2[j];
      pos[0] = j;
      sift_down(dist, pos, k, 0);
    }
  }
  return k;
}

/* In-place Cholesky factor A = L L' of the leading k x k block of A
 * (column-major, leading dimension ld; the lower triangle is read and
 * overwritten), by the inner-product (Cholesky-Crout) form of Golub and
 * Van Loan (2013), Algorithm 4.2.1.  Returns 0, or 1 when a pivot is not
 * positive.  Blocks of at most m + 1 rows: no LAPACK call, which could
 * start threads of its own inside the parallel region. */
static int small_cholesky(double *A, int k, int ld)
{
  for (int j = 0; j < k; j++) {
    double *colj = A + (size_t)j * ld;
    double s = colj[j];
    for (int p = 0; p < j; p++) s -= A[j + (size_t)p * ld] * A[j + (size_t)p * ld];
    if (!(s > 0)) return 1;
    const double ljj = sqrt(s);
    colj[j] = ljj;
    for (int i = j + 1; i < k; i++) {
      double v = colj[i];
      for (int p = 0; p < j; p++) v -= A[i + (size_t)p * ld] * A[j + (size_t)p * ld];
      colj[i] = v / ljj;
    }
  }
  return 0;
}

/* b = (L L')^-1 b for the factor of small_cholesky(). */
static void small_solve(const double *L, int k, int ld, double *b)
{
  for (int i = 0; i < k; i++) {
    double v = b[i];
    for (int p = 0; p < i; p++) v -= L[i + (size_t)p * ld] * b[p];
    b[i] = v / L[i + (size_t)i * ld];
  }
  for (int i = k - 1; i >= 0; i--) {
    double v = b[i];
    for (int p = i + 1; p < k; p++) v -= L[p + (size_t)i * ld] * b[p];
    b[i] = v / L[i + (size_t)i * ld];
  }
}

/* Point order[t]'s column of U, from the points in order (xp) and the
 * per-thread scratch: r2 (n), dist and pos (m), sub ((m + 1) d), G
 * ((m + 1)^2). */
static void condition_point(vecchia *P, const kernel *k, const points *xp,
                            const int *order, const double *noise, int t,
                            double *r2, double *dist, int *pos, double *sub,
                            double *G)
{
  const int me = order[t], m = P->m, d = xp->d;
  double v = kernel_diagonal(k) + noise[me];
  int kn = 0;
  if (t > 0) {
    block_sq_dist(xp, t, xp, 0, t, r2);
    kn = nearest(r2, t, m, dist, pos);
    /* The neighbours and the point itself as points of their own, in that
     * order, and their kernel block from the engine. */
    const int len = kn + 1;
    for (int c = 0; c < d; c++) {
      const double *col = xp->x + (size_t)c * xp->n;
      for (int a = 0; a < kn; a++) sub[a + (size_t)c * len] = col[pos[a]];
      sub[kn + (size_t)c * len] = col[t];
    }
    const points sp = {sub, len, d, NULL, NULL};
    for (int a = 0; a < len; a++) {
      block_sq_dist(&sp, a, &sp, 0, len, G + (size_t)a * len);
      kernel_apply(k, G + (size_t)a * len, len);
    }
    for (int a = 0; a < kn; a++) G[a + (size_t)a * len] += noise[order[pos[a]]];
    /* b = G[N, N]^-1 g in place of g = G[N, t], the last column. */
    double *b = G + (size_t)kn * len;
    if (small_cholesky(G, kn, len)) {
      kn = 0;
    } else {
      small_solve(G, kn, len, b);
      double gb = 0.0;
      for (int a = 0; a < kn; a++) gb += G[kn + (size_t)a * len] * b[a];
      /* The conditional variance of y_t is never below its noise; rounding
       * can say otherwise where the neighbours explain f_t almost
       * exactly. */
      v -= gb;
      if (!(v >= noise[me])) v = noise[me];
    }
    const double s = 1.0 / sqrt(v);
    for (int a = 0; a < kn; a++) {
      P->nb[(size_t)me * m + a] = order[pos[a]];
      P->coef[(size_t)me * m + a] = -b[a] * s;
    }
  }
  P->count[me] = kn;
  P->scale[me] = 1.0 / sqrt(v);
}

/* U's rows from its columns, each row's entries in column order; next is
 * scratch of n. */
static void transpose(vecchia *P, int *next)
{
  const int n = P->n, m = P->m;
  memset(P->row_start, 0, sizeof(int) * ((size_t)n + 1));
  for (int i = 0; i < n; i++)
    for (int a = 0; a < P->count[i]; a++) P->row_start[P->nb[(size_t)i * m + a] + 1]++;
  for (int j = 0; j < n; j++) P->row_start[j + 1] += P->row_start[j];
  memcpy(next, P->row_start, sizeof(int) * (size_t)n);
  for (int i = 0; i < n; i++) {
    for (int a = 0; a < P->count[i]; a++) {
      const int j = P->nb[(size_t)i * m + a];
      P->row_col[next[j]] = i;
      P->row_val[next[j]++] = P->coef[(size_t)i * m + a];
    }
  }
}

solver_status vecchia_init(vecchia *P, workspace *ws, const kernel_op *K,
                           const double *noise, int m, int ncol_max,
                           int nthreads, solver_callback callback, void *ctx)
{
  const int n = K->x2->n, d = K->x2->d;
  const int team = threads_team(nthreads);
  if (m > n - 1) m = n - 1 > 0 ? n - 1 : 1;
  P->n = n;
  P->m = m;
  WORKSPACE_ADD(ws, P->order, n, 0);
  WORKSPACE_ADD(ws, P->count, n, 0);
  WORKSPACE_ADD(ws, P->nb, (size_t)n * m, 0);
  WORKSPACE_ADD(ws, P->coef, (size_t)n * m, 0);
  WORKSPACE_ADD(ws, P->scale, n, 0);
  WORKSPACE_ADD(ws, P->row_start, (size_t)n + 1, 0);
  WORKSPACE_ADD(ws, P->row_col, (size_t)n * m, 0);
  WORKSPACE_ADD(ws, P->row_val, (size_t)n * m, 0);
  WORKSPACE_ADD(ws, P->W, (size_t)n * (ncol_max > 1 ? ncol_max : 1), 0);
  if (workspace_alloc(ws)) return SOLVER_NO_MEMORY;

  /* Needed only while U is built. */
  int *order = P->order, *pos, *cursor;
  keyed *keys;
  double *xbuf, *scratch;
  const size_t per_thread = (size_t)n + m + (size_t)(m + 1) * d +
                            (size_t)(m + 1) * (m + 1);
  workspace build;
  workspace_init(&build);
  WORKSPACE_ADD(&build, keys, n, 0);
  WORKSPACE_ADD(&build, xbuf, (size_t)n * d, 0);
  WORKSPACE_ADD(&build, scratch, per_thread * team, 0);
  WORKSPACE_ADD(&build, pos, (size_t)m * team, 0);
  WORKSPACE_ADD(&build, cursor, n, 0);
  solver_status status = SOLVER_NO_MEMORY;
  if (workspace_alloc(&build)) goto done;

  random_order(n, keys, order);
  const points xp = points_rows(K->x2, order, 0, n, xbuf);
  status = SOLVER_MAX_ITER;
  for (int t0 = 0; t0 < n; t0 += VECCHIA_SLAB) {
    if (solver_poll(callback, ctx, 0)) {
      status = SOLVER_STOPPED;
      goto done;
    }
    const int t1 = t0 + VECCHIA_SLAB < n ? t0 + VECCHIA_SLAB : n;
    /* Later points search more earlier ones, hence dynamic scheduling;
     * each point's column is one thread's, so the bits never depend on
     * the schedule. */
    #pragma omp parallel num_threads(team) \
        if ((double)t1 * (t1 - t0) * d > PARALLEL_MIN_WORK)
    {
      const int me = omp_get_thread_num();
      double *r2 = scratch + per_thread * me, *dist = r2 + n;
      double *sub = dist + m, *G = sub + (size_t)(m + 1) * d;
      int *mpos = pos + (size_t)m * me;
      #pragma omp for schedule(dynamic, 16)
      for (int t = t0; t < t1; t++)
        condition_point(P, K->k, &xp, order, noise, t, r2, dist, mpos, sub, G);
    }
  }
  transpose(P, cursor);

done:
  workspace_free(&build);
  return status;
}

void vecchia_apply(const vecchia *P, const double *R, int ncol, double *Z,
                   int nthreads)
{
  const int n = P->n, m = P->m;
  const size_t ld = (size_t)n;
  const double work = (double)n * (m + 1) * ncol;
  /* One pass over U's columns, then one over its rows, each serving every
   * column of R while a point's neighbours and coefficients are at hand. */
  #pragma omp parallel for num_threads(threads_team(nthreads)) schedule(static) \
      if (work > PARALLEL_MIN_WORK)
  for (int i = 0; i < n; i++) {
    const int *nb = P->nb + (size_t)i * m;
    const double *coef = P->coef + (size_t)i * m;
    for (int c = 0; c < ncol; c++) {
      const double *r = R + c * ld;
      double s = P->scale[i] * r[i];
      for (int a = 0; a < P->count[i]; a++) s += coef[a] * r[nb[a]];
      P->W[i + c * ld] = s;
    }
  }
  #pragma omp parallel for num_threads(threads_team(nthreads)) schedule(static) \
      if (work > PARALLEL_MIN_WORK)
  for (int j = 0; j < n; j++) {
    for (int c = 0; c < ncol; c++) {
      const double *w = P->W + c * ld;
      double s = P->scale[j] * w[j];
      for (int e = P->row_start[j]; e < P->row_start[j + 1]; e++)
        s += P->row_val[e] * w[P->row_col[e]];
      Z[j + c * ld] = s;
    }
  }
}
