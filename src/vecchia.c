#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "vecchia.h"
#include "neighbours.h"
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

/* Rows rows[0 .. kn - 1] of x, then row `self` of q, as the kn + 1 rows of
 * sub (column-major). */
static void gather(const points *x, const int *rows, int kn, const points *q, int self,
                   double *sub)
{
  const int len = kn + 1;
  for (int c = 0; c < x->d; c++) {
    const double *col = x->x + (size_t)c * x->n;
    for (int a = 0; a < kn; a++) sub[a + (size_t)c * len] = col[rows[a]];
    sub[kn + (size_t)c * len] = q->x[(size_t)c * q->n + self];
  }
}

/* A point given its kn neighbours, whose inputs are the rows of sub (the
 * point last, gather()) and whose indices idx give their noise.  G
 * (len x len, len = kn + 1) receives their kernel block from the engine,
 * then G[N, N]'s Cholesky factor in its lower triangle and b = G[N, N]^-1 g
 * in its last column; the rest keeps the kernel block (g = G[N, t] in the
 * last row, G[N, N] off the diagonal in the upper triangle, G[t, t]).
 * R2 (NULL: not kept) receives the squared distances.  With kn = 0
 * neither is touched.  Returns the
 * conditional variance of the point's response, never below its noise, or
 * -1 when G[N, N] is not numerically positive definite. */
static double condition(const kernel *k, const double *sub, int kn, int d,
                        const double *noise, const int *idx, double noise_t,
                        double *G, double *R2)
{
  if (kn == 0) return kernel_diagonal(k) + noise_t;
  const int len = kn + 1;
  const points sp = {sub, len, d, NULL, NULL};
  for (int a = 0; a < len; a++) block_sq_dist(&sp, a, &sp, 0, len, G + (size_t)a * len);
  if (R2) memcpy(R2, G, sizeof(double) * (size_t)len * len);
  for (int a = 0; a < len; a++) kernel_apply(k, G + (size_t)a * len, len);
  for (int a = 0; a < kn; a++) G[a + (size_t)a * len] += noise[idx[a]];
  if (small_cholesky(G, kn, len)) return -1.0;
  double *b = G + (size_t)kn * len;
  small_solve(G, kn, len, b);
  double gb = 0.0;
  for (int a = 0; a < kn; a++) gb += G[kn + (size_t)a * len] * b[a];
  const double v = kernel_diagonal(k) + noise_t - gb;
  /* Never below the noise; rounding can say otherwise where the
   * neighbours explain f_t almost exactly. */
  return v >= noise_t ? v : noise_t;
}

/* Point order[t]'s column of U, given its kn neighbours at positions pos,
 * with the per-thread scratch sub ((m + 1) d) and G ((m + 1)^2). */
static void condition_point(vecchia *P, const kernel *k, const points *xp,
                            const int *order, const double *noise, int t,
                            int kn, const int *pos, double *sub, double *G)
{
  const int me = order[t], m = P->m;
  const int *nb = P->nb + (size_t)me * m;
  if (kn > 0) gather(xp, pos, kn, xp, t, sub);
  double v = condition(k, sub, kn, xp->d, noise, nb, noise[me], G, NULL);
  if (v < 0) { /* left unconditioned */
    kn = 0;
    v = kernel_diagonal(k) + noise[me];
  }
  const double s = 1.0 / sqrt(v), *b = G + (size_t)kn * (kn + 1);
  for (int a = 0; a < kn; a++) P->coef[(size_t)me * m + a] = -b[a] * s;
  P->count[me] = kn;
  P->scale[me] = s;
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

/* A thread's scratch for searching groups of points and conditioning each
 * on its neighbours: the search's r2 and q, the group's distances and
 * positions, and a point's gathered inputs sub and block G (condition()). */
typedef struct {
  double *r2, *q, *dist, *sub, *G;
  int *pos;
} group_scratch;

/* Its doubles and ints a thread, for points of d inputs and m neighbours. */
static size_t group_doubles(int d, int m)
{
  return (size_t)nn_scratch(d) + d + (size_t)NN_GROUP * m + (size_t)(m + 1) * d +
         (size_t)(m + 1) * (m + 1);
}

static size_t group_ints(int m) { return (size_t)NN_GROUP * m; }

/* Thread me's part of the arrays of group_doubles() and group_ints() a
 * thread. */
static group_scratch group_scratch_of(double *doubles, int *ints, int me, int d, int m)
{
  group_scratch s;
  s.r2 = doubles + group_doubles(d, m) * me;
  s.q = s.r2 + nn_scratch(d);
  s.dist = s.q + d;
  s.sub = s.dist + (size_t)NN_GROUP * m;
  s.G = s.sub + (size_t)(m + 1) * d;
  s.pos = ints + group_ints(m) * me;
  return s;
}

/* vecchia_init() for the points x, or with k NULL vecchia_neighbours(). */
static solver_status build(vecchia *P, workspace *ws, const points *x,
                           const kernel *k, const double *noise, int m,
                           int ncol_max, int nthreads, solver_callback callback,
                           void *ctx)
{
  const int n = x->n, d = x->d;
  const int team = threads_team(nthreads);
  if (m > n - 1) m = n - 1 > 0 ? n - 1 : 1;
  P->n = n;
  P->m = m;
  WORKSPACE_ADD(ws, P->order, n, 0);
  WORKSPACE_ADD(ws, P->count, n, 0);
  WORKSPACE_ADD(ws, P->nb, (size_t)n * m, 0);
  if (k) {
    WORKSPACE_ADD(ws, P->coef, (size_t)n * m, 0);
    WORKSPACE_ADD(ws, P->scale, n, 0);
    WORKSPACE_ADD(ws, P->row_start, (size_t)n + 1, 0);
    WORKSPACE_ADD(ws, P->row_col, (size_t)n * m, 0);
    WORKSPACE_ADD(ws, P->row_val, (size_t)n * m, 0);
    WORKSPACE_ADD(ws, P->W, (size_t)n * (ncol_max > 1 ? ncol_max : 1), 0);
  } else {
    P->coef = P->scale = P->row_val = P->W = NULL;
    P->row_start = P->row_col = NULL;
  }
  if (workspace_alloc(ws)) return SOLVER_NO_MEMORY;

  /* Needed only while U is built. */
  int *order = P->order, *pos, *cursor;
  keyed *keys;
  double *xbuf, *scratch;
  workspace work;
  workspace_init(&work);
  WORKSPACE_ADD(&work, keys, n, 0);
  WORKSPACE_ADD(&work, xbuf, (size_t)n * d, 0);
  WORKSPACE_ADD(&work, scratch, group_doubles(d, m) * team, 0);
  WORKSPACE_ADD(&work, pos, group_ints(m) * team, 0);
  WORKSPACE_ADD(&work, cursor, n, 0);
  points xp = {NULL, n, d, NULL, NULL};
  nn_tree T;
  nn_register(&T, &work, &xp, m);
  solver_status status = SOLVER_NO_MEMORY;
  if (workspace_alloc(&work)) goto done;

  random_order(n, keys, order);
  xp = points_rows(x, order, 0, n, xbuf);
  status = SOLVER_STOPPED;
  if (nn_build(&T, callback, ctx)) goto done;
  status = SOLVER_MAX_ITER;
  for (int t0 = 0; t0 < n; t0 += VECCHIA_SLAB) {
    if (solver_poll(callback, ctx, 0)) {
      status = SOLVER_STOPPED;
      goto done;
    }
    const int t1 = t0 + VECCHIA_SLAB < n ? t0 + VECCHIA_SLAB : n;
    /* Groups of positions searched together (neighbours.h); searches
     * differ in length, hence dynamic scheduling; each point's column is
     * one thread's, so the bits never depend on the schedule. */
    #pragma omp parallel num_threads(team) \
        if ((double)(t1 - t0) * (m + 1) * (m + 1) * d > PARALLEL_MIN_WORK)
    {
      const group_scratch w = group_scratch_of(scratch, pos, omp_get_thread_num(), d, m);
      #pragma omp for schedule(dynamic, 1)
      for (int g0 = t0; g0 < t1; g0 += NN_GROUP) {
        const int g1 = g0 + NN_GROUP < t1 ? g0 + NN_GROUP : t1;
        nn_search_group(&T, g0, g1, m, w.dist, w.pos, w.r2, w.q);
        for (int t = g0; t < g1; t++) {
          const int kn = t < m ? t : m, *tpos = w.pos + (size_t)(t - g0) * m;
          int *nb = P->nb + (size_t)order[t] * m;
          for (int a = 0; a < kn; a++) nb[a] = order[tpos[a]];
          if (k)
            condition_point(P, k, &xp, order, noise, t, kn, tpos, w.sub, w.G);
          else
            P->count[order[t]] = kn;
        }
      }
    }
  }
  if (k) transpose(P, cursor);

done:
  workspace_free(&work);
  return status;
}

solver_status vecchia_init(vecchia *P, workspace *ws, const kernel_op *K,
                           const double *noise, int m, int ncol_max,
                           int nthreads, solver_callback callback, void *ctx)
{
  return build(P, ws, K->x2, K->k, noise, m, ncol_max, nthreads, callback, ctx);
}

solver_status vecchia_neighbours(vecchia *P, workspace *ws, const points *x,
                                 int m, int nthreads, solver_callback callback,
                                 void *ctx)
{
  return build(P, ws, x, NULL, NULL, m, 0, nthreads, callback, ctx);
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

/* Point i's term of the likelihood and its derivatives (d + 3 values into
 * out).  With b = G[N, N]^-1 g, w = G[N, N]^-1 y_N, residual r = y_i - g'w
 * and conditional variance v, the term is log N(r; 0, v), and for each
 * derivative dH of the block,
 *   dv = dH[t, t] - 2 dg'b + b' dG b,   dr = -dg'w + b' dG w,
 * so d term = av dv + ar dr with av = -(1 - r^2 / v) / (2 v), ar = -r / v:
 * a weighted sum of dH's entries (Guinness 2021, Section 3). */
static void mll_term(const vecchia *P, const kernel *k, const points *x,
                     const double *y, const double *noise, int i,
                     double *scratch, double *out)
{
  const int m = P->m, d = x->d, *nb = P->nb + (size_t)i * m;
  int kn = P->count[i], len = kn + 1;
  double *sub = scratch, *G = sub + (size_t)(m + 1) * d;
  double *D = G + (size_t)(m + 1) * (m + 1), *w = D + (size_t)(m + 1) * (m + 1);
  double *c = w + m;
  const double kdiag = kernel_diagonal(k);
  if (kn > 0) gather(x, nb, kn, x, i, sub);
  double v = condition(k, sub, kn, d, noise, nb, noise[i], G, D);
  if (v < 0) { /* unconditioned, as in the factor */
    kn = 0;
    v = kdiag + noise[i];
  }
  len = kn + 1;
  const double *b = G + (size_t)kn * len;
  double r = y[i];
  for (int a = 0; a < kn; a++) w[a] = y[nb[a]];
  if (kn > 0) {
    small_solve(G, kn, len, w);
    for (int a = 0; a < kn; a++) r -= G[kn + (size_t)a * len] * w[a];
    kernel_dr2(k, D, len * len);
  }
  const double av = -0.5 * (1.0 - r * r / v) / v, ar = -r / v;
  double *gl = out + 1, gvar = av * kdiag, gnoise = av * noise[i];
  out[0] = -0.5 * (LOG_2PI + log(v) + r * r / v);
  for (int j = 0; j < d; j++) gl[j] = 0.0;
  for (int a = 0; a < kn; a++) c[a] = av * b[a] + ar * w[a];
  /* dH's entries: K's (log variance), the noise on the diagonal (log
   * noise), -2 s_j^2 dk/dr2 with s_j the scaled difference in input j
   * (log length scale j; zero on the diagonal). */
  for (int q = 0; q < len; q++) {
    for (int a = 0; a <= q && a < kn; a++) {
      /* The weight of entries (a, q) and (q, a) together. */
      double wt, kaq;
      if (q == kn) {
        wt = -2.0 * av * b[a] - ar * w[a];
        kaq = G[kn + (size_t)a * len];
      } else if (a == q) {
        gnoise += b[a] * c[a] * noise[nb[a]];
        gvar += b[a] * c[a] * kdiag;
        continue;
      } else {
        wt = b[a] * c[q] + b[q] * c[a];
        kaq = G[a + (size_t)q * len];
      }
      gvar += wt * kaq;
      const double f = -2.0 * wt * D[a + (size_t)q * len];
      for (int j = 0; j < d; j++) {
        const double s = sub[a + (size_t)j * len] - sub[q + (size_t)j * len];
        gl[j] += f * s * s;
      }
    }
  }
  gl[d] = gvar;
  gl[d + 1] = gnoise;
}

solver_status vecchia_mll(const vecchia *P, const kernel *k, const points *x,
                          const double *y, const double *noise, int nthreads,
                          solver_callback callback, void *ctx, double *value,
                          double *grad)
{
  const int n = P->n, m = P->m, d = x->d, width = d + 3;
  const int most = threads_limit(nthreads);
  const size_t per_thread = (size_t)(m + 1) * d + 2 * (size_t)(m + 1) * (m + 1) +
                            2 * (size_t)m;
  double *terms, *scratch;
  workspace ws;
  workspace_init(&ws);
  WORKSPACE_ADD(&ws, terms, (size_t)n * width, 0);
  WORKSPACE_ADD(&ws, scratch, per_thread * most, 0);
  solver_status status = SOLVER_NO_MEMORY;
  if (workspace_alloc(&ws)) goto done;
  status = SOLVER_MAX_ITER;
  /* Slabs are steps of equal work: polled with their count, they are what
   * a governed stage times (the first poll, 0, leaves out the time since
   * the last call).  The team is asked for again at every slab. */
  for (int slab = 0, i0 = 0;; slab++, i0 += VECCHIA_SLAB) {
    if (solver_poll(callback, ctx, slab)) {
      status = SOLVER_STOPPED;
      goto done;
    }
    if (i0 >= n) break;
    const int i1 = i0 + VECCHIA_SLAB < n ? i0 + VECCHIA_SLAB : n;
    #pragma omp parallel num_threads(threads_team(nthreads)) \
        if ((double)(i1 - i0) * (m + 1) * (m + 1) * d > PARALLEL_MIN_WORK)
    {
      double *mine = scratch + per_thread * omp_get_thread_num();
      #pragma omp for schedule(dynamic, 16)
      for (int i = i0; i < i1; i++)
        mll_term(P, k, x, y, noise, i, mine, terms + (size_t)i * width);
    }
  }
  /* Summed in point order: the same bits for any thread count. */
  for (int j = 0; j < width; j++) {
    double s = 0.0;
    for (int i = 0; i < n; i++) s += terms[(size_t)i * width + j];
    if (j == 0) *value = s; else grad[j - 1] = s;
  }

done:
  workspace_free(&ws);
  return status;
}

solver_status vecchia_predict(const kernel *k, const points *x, const double *noise,
                              const points *xq, int m, const double *R, int ncol,
                              double *out, int nthreads, solver_callback callback,
                              void *ctx)
{
  const int n = x->n, nq = xq->n, d = x->d;
  if (m > n) m = n;
  const int most = threads_limit(nthreads);
  double *scratch;
  int *pos;
  workspace ws;
  workspace_init(&ws);
  WORKSPACE_ADD(&ws, scratch, group_doubles(d, m) * most, 0);
  WORKSPACE_ADD(&ws, pos, group_ints(m) * most, 0);
  nn_tree T;
  nn_register(&T, &ws, x, m);
  solver_status status = SOLVER_NO_MEMORY;
  if (workspace_alloc(&ws)) goto done;
  status = SOLVER_STOPPED;
  if (nn_build(&T, callback, ctx)) goto done;
  status = SOLVER_MAX_ITER;
  for (int i0 = 0; i0 < nq; i0 += VECCHIA_SLAB) {
    if (solver_poll(callback, ctx, 0)) {
      status = SOLVER_STOPPED;
      goto done;
    }
    const int i1 = i0 + VECCHIA_SLAB < nq ? i0 + VECCHIA_SLAB : nq;
    /* Each new point's row of out is one thread's: the bits never depend
     * on the schedule. */
    #pragma omp parallel num_threads(threads_team(nthreads)) \
        if ((double)(i1 - i0) * (m + 1) * (m + 1) * d > PARALLEL_MIN_WORK)
    {
      const group_scratch w = group_scratch_of(scratch, pos, omp_get_thread_num(), d, m);
      #pragma omp for schedule(dynamic, 1)
      for (int g0 = i0; g0 < i1; g0 += NN_GROUP) {
        const int g1 = g0 + NN_GROUP < i1 ? g0 + NN_GROUP : i1;
        nn_search_outside(&T, xq, g0, g1, m, w.dist, w.pos, w.r2, w.q);
        for (int i = g0; i < g1; i++) {
          const int *nb = w.pos + (size_t)(i - g0) * m;
          gather(x, nb, m, xq, i, w.sub);
          /* Not conditioned (a block not numerically positive definite):
           * no correction. */
          const int ok = condition(k, w.sub, m, d, noise, nb, 0.0, w.G, NULL) >= 0;
          const double *b = w.G + (size_t)m * (m + 1);
          for (int c = 0; c < ncol; c++) {
            const double *r = R + (size_t)c * n;
            double s = 0.0;
            for (int a = 0; ok && a < m; a++) s += b[a] * r[nb[a]];
            out[i + (size_t)c * nq] = s;
          }
        }
      }
    }
  }

done:
  workspace_free(&ws);
  return status;
}
