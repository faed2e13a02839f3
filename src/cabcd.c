#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "cabcd.h"
#include "recombination.h"
#include "rng.h"
#include "threads.h"
#include "workspace.h"

/* Rows per unit of parallel work.  Sums over rows are formed per chunk and
 * the chunks added in order, so they do not depend on the thread count. */
#define CABCD_ROW_CHUNK 4096
/* A relative gradient norm this far above its starting value of 1 means the
 * iteration is unstable. */
#define CABCD_DIVERGENCE_GRADIENT 1e3
/* Gauss-Southwell blocks hold this share of the gradient's 1-norm. */
#define CABCD_GS_SHARE 0.75
/* Each system's random draws start at counter system << CABCD_STREAM_SHIFT. */
#define CABCD_STREAM_SHIFT 40

typedef struct {
  const double *b;
  double *theta, *v, *s2, *r, *g; /* v: momentum or Adam's first moment */
  double g0, passes;
  uint64_t stream, recombinations, adam_steps;
  int done;
} system_state;

typedef struct {
  double key;
  int j;
} ranked_coordinate;

typedef struct {
  double *mu;      /* w_i / N: the measure that recombination reduces */
  double *X;       /* N x s per-sample block gradients (CaBCD) */
  double *partial; /* chunk partial sums of a block sweep */
  double cmax;     /* largest diagonal entry of H */
  int *order;      /* coordinates in block order */
  ranked_coordinate *ranked; /* sorting scratch for Gauss-Southwell */
  int *ridx;       /* recombined samples (s + 1) */
  double *rw;      /* and their weights */
  double *F, *rr;  /* their block features ((s + 1) x s) and residuals */
  double *gb, *Hb, *delta, *dnew, *vb, *vnew, *gt; /* block vectors */
  /* Adam: the mini-batch, its rows of Phi (B x m), its weighted residuals
   * and the gradient. */
  int *batch;
  double *bphi, *bres, *bgrad;
} cabcd_work;

/* r = Phi theta - b. */
static void residuals(const cabcd_problem *pr, const double *theta,
                      const double *b, double *r, int nthreads)
{
  const int n = pr->n, m = pr->m;
  #pragma omp parallel for num_threads(threads_team(nthreads)) schedule(static) \
      if (n > CABCD_ROW_CHUNK)
  for (int i0 = 0; i0 < n; i0 += CABCD_ROW_CHUNK) {
    const int i1 = min_int(n, i0 + CABCD_ROW_CHUNK);
    for (int i = i0; i < i1; i++) r[i] = -b[i];
    for (int j = 0; j < m; j++) {
      const double t = theta[j], *col = pr->phi + (size_t)j * n;
      for (int i = i0; i < i1; i++) r[i] += col[i] * t;
    }
  }
}

/* g = (2/N) Phi' W r + (2 lambda/N) theta; each entry is summed by one
 * thread in row order. */
static void gradient(const cabcd_problem *pr, const double *theta,
                     const double *r, double *g, int nthreads)
{
  const int n = pr->n, m = pr->m;
  const double a = 2.0 / n, reg = 2.0 * pr->lambda / n;
  #pragma omp parallel for num_threads(threads_team(nthreads)) schedule(static) \
      if (n > CABCD_ROW_CHUNK)
  for (int j = 0; j < m; j++) {
    const double *col = pr->phi + (size_t)j * n;
    double s = 0.0;
    for (int i = 0; i < n; i++) s += col[i] * pr->weight[i] * r[i];
    g[j] = a * s + reg * theta[j];
  }
}

static double loss(const cabcd_problem *pr, const double *theta, const double *r)
{
  double s = 0.0, t = 0.0;
  for (int i = 0; i < pr->n; i++) s += pr->weight[i] * r[i] * r[i];
  for (int j = 0; j < pr->m; j++) t += theta[j] * theta[j];
  return (s + pr->lambda * t) / pr->n;
}

static double norm2(const double *x, int len)
{
  double s = 0.0;
  for (int i = 0; i < len; i++) s += x[i] * x[i];
  return sqrt(s);
}

/* One sweep over all samples for the block blk of k coordinates: its
 * gradient gb, its Hessian Hb (k x k) unless NULL, and the per-sample
 * block gradients X_i = phi_ib r_i (N x k) unless NULL. */
static void block_sweep(const cabcd_problem *pr, const int *blk, int k,
                        const double *theta, const double *r, double *X,
                        double *gb, double *Hb, double *partial, int nthreads)
{
  const int n = pr->n, nch = (n + CABCD_ROW_CHUNK - 1) / CABCD_ROW_CHUNK;
  const int stride = k + k * k;
  #pragma omp parallel for num_threads(threads_team(nthreads)) schedule(static) \
      if (nch > 1 && (double)n * stride > PARALLEL_MIN_WORK)
  for (int ch = 0; ch < nch; ch++) {
    const int i0 = ch * CABCD_ROW_CHUNK, i1 = min_int(n, i0 + CABCD_ROW_CHUNK);
    double *ps = partial + (size_t)ch * stride;
    for (int l = 0; l < k; l++) {
      const double *col = pr->phi + (size_t)blk[l] * n;
      double s = 0.0;
      for (int i = i0; i < i1; i++) {
        const double x = col[i] * r[i];
        if (X) X[i + (size_t)l * n] = x;
        s += pr->weight[i] * x;
      }
      ps[l] = s;
      if (!Hb) continue;
      for (int l2 = 0; l2 <= l; l2++) {
        const double *col2 = pr->phi + (size_t)blk[l2] * n;
        double h = 0.0;
        for (int i = i0; i < i1; i++) h += pr->weight[i] * col[i] * col2[i];
        ps[k + l + l2 * k] = h;
      }
    }
  }
  const double a = 2.0 / n, reg = 2.0 * pr->lambda / n;
  for (int l = 0; l < k; l++) {
    double s = 0.0;
    for (int ch = 0; ch < nch; ch++) s += partial[(size_t)ch * stride + l];
    gb[l] = a * s + reg * theta[blk[l]];
    if (!Hb) continue;
    for (int l2 = 0; l2 <= l; l2++) {
      double h = 0.0;
      for (int ch = 0; ch < nch; ch++) h += partial[(size_t)ch * stride + k + l + l2 * k];
      Hb[l + l2 * k] = Hb[l2 + l * k] = a * h + (l == l2 ? reg : 0.0);
    }
  }
}

/* r += Phi_b delta. */
static void update_residual(const cabcd_problem *pr, const int *blk, int k,
                            const double *delta, double *r, int nthreads)
{
  const int n = pr->n;
  #pragma omp parallel for num_threads(threads_team(nthreads)) schedule(static) \
      if (n > CABCD_ROW_CHUNK)
  for (int i0 = 0; i0 < n; i0 += CABCD_ROW_CHUNK) {
    const int i1 = min_int(n, i0 + CABCD_ROW_CHUNK);
    for (int l = 0; l < k; l++) {
      const double d = delta[l], *col = pr->phi + (size_t)blk[l] * n;
      for (int i = i0; i < i1; i++) r[i] += col[i] * d;
    }
  }
}

/* Decreasing key, then increasing index: a total order, so the blocks do
 * not depend on the sort's implementation. */
static int by_key(const void *a, const void *b)
{
  const ranked_coordinate *x = a, *y = b;
  if (x->key != y->key) return x->key > y->key ? -1 : 1;
  return (x->j > y->j) - (x->j < y->j);
}

/* The coordinates of this outer iteration's blocks, in block order, into
 * ws->order; returns how many. */
static int select_coordinates(const double *g, int m, int s,
                              const cabcd_options *opt, uint64_t counter,
                              cabcd_work *ws)
{
  int count = 0;
  if (opt->selection == CABCD_GAUSS_SOUTHWELL) {
    ranked_coordinate *rk = ws->ranked;
    double total = 0.0, cum = 0.0;
    for (int j = 0; j < m; j++) {
      rk[j].key = fabs(g[j]);
      rk[j].j = j;
      total += rk[j].key;
    }
    qsort(rk, (size_t)m, sizeof(ranked_coordinate), by_key);
    while (count < m && cum < CABCD_GS_SHARE * total) cum += rk[count++].key;
    for (int j = 0; j < m; j++) ws->order[j] = rk[j].j;
  } else {
    count = (m + 1) / 2;
    for (int j = 0; j < m; j++) ws->order[j] = j;
    for (int l = 0; l < count; l++) {
      const int pick = l + rng_index(opt->seed, RNG_STREAM_BLOCKS, counter + l, m - l);
      const int tmp = ws->order[l];
      ws->order[l] = ws->order[pick];
      ws->order[pick] = tmp;
    }
  }
  return count < s ? s : count;
}

/* One CaBCD outer iteration; sys->g holds the gradient at sys->theta.
 * Returns 0, 1 if the callback asked to stop, -1 when out of memory. */
static int cabcd_outer(const cabcd_problem *pr, const cabcd_options *opt,
                       system_state *sys, cabcd_work *ws, int s, int t,
                       solver_callback callback, void *ctx)
{
  const int n = pr->n, m = pr->m;
  const double beta = opt->momentum, reg = 2.0 * pr->lambda / n;
  const double gamma_all = opt->step_size / (m * ws->cmax);
  /* Heavy-ball step on all coordinates (the first full pass). */
  for (int j = 0; j < m; j++) {
    sys->v[j] = beta * sys->v[j] - gamma_all * sys->g[j];
    sys->theta[j] += sys->v[j];
  }
  residuals(pr, sys->theta, sys->b, sys->r, opt->nthreads);
  /* The second full pass chooses Gauss-Southwell blocks. */
  if (opt->selection == CABCD_GAUSS_SOUTHWELL) {
    gradient(pr, sys->theta, sys->r, sys->g, opt->nthreads);
    sys->passes += 1.0;
  }
  const int count = select_coordinates(sys->g, m, s, opt,
                                       sys->stream + (uint64_t)(t - 1) * m, ws);
  for (int b0 = 0; b0 < count; b0 += s) {
    const int k = min_int(s, count - b0), *blk = ws->order + b0;
    const double gamma = opt->step_size / (k * ws->cmax);
    block_sweep(pr, blk, k, sys->theta, sys->r, ws->X, ws->gb, ws->Hb,
                ws->partial, opt->nthreads);
    const uint64_t seed = rng_bits(opt->seed, RNG_STREAM_RECOMBINATION,
                                   sys->stream + sys->recombinations++);
    const int q = recombine(ws->X, n, k, ws->mu, RECOMB_RANDOMIZED, seed,
                            ws->ridx, ws->rw, NULL);
    if (q < 0) return -1;
    for (int a = 0; a < q; a++) {
      ws->rr[a] = sys->r[ws->ridx[a]];
      for (int l = 0; l < k; l++)
        ws->F[a + (size_t)l * q] = pr->phi[ws->ridx[a] + (size_t)blk[l] * n];
    }
    /* Momentum steps on the reduced measure while the exact change of the
     * loss, Delta = gb' delta + delta' Hb delta / 2, keeps falling. */
    double delta_loss = 0.0;
    int steps = 0;
    for (int l = 0; l < k; l++) ws->delta[l] = ws->vb[l] = 0.0;
    while (steps < opt->max_inner) {
      for (int l = 0; l < k; l++) ws->gt[l] = reg * (sys->theta[blk[l]] + ws->delta[l]);
      for (int a = 0; a < q; a++) {
        double e = ws->rr[a];
        for (int l = 0; l < k; l++) e += ws->F[a + (size_t)l * q] * ws->delta[l];
        const double c = 2.0 * ws->rw[a] * e;
        for (int l = 0; l < k; l++) ws->gt[l] += c * ws->F[a + (size_t)l * q];
      }
      double next = 0.0;
      for (int l = 0; l < k; l++) {
        ws->vnew[l] = beta * ws->vb[l] - gamma * ws->gt[l];
        ws->dnew[l] = ws->delta[l] + ws->vnew[l];
      }
      for (int l = 0; l < k; l++) {
        double hd = 0.0;
        for (int l2 = 0; l2 < k; l2++) hd += ws->Hb[l + (size_t)l2 * k] * ws->dnew[l2];
        next += ws->dnew[l] * (ws->gb[l] + 0.5 * hd);
      }
      if (!(next < delta_loss)) break; /* undo the step that raised it */
      memcpy(ws->delta, ws->dnew, sizeof(double) * (size_t)k);
      memcpy(ws->vb, ws->vnew, sizeof(double) * (size_t)k);
      delta_loss = next;
      steps++;
    }
    sys->passes += (double)k / m + (double)steps * q * k / ((double)n * m);
    for (int l = 0; l < k; l++) sys->theta[blk[l]] += ws->delta[l];
    if (steps > 0) update_residual(pr, blk, k, ws->delta, sys->r, opt->nthreads);
    if (solver_poll(callback, ctx, t)) return 1;
  }
  return 0;
}

/* One outer iteration of plain block coordinate descent. */
static int bcd_outer(const cabcd_problem *pr, const cabcd_options *opt,
                     system_state *sys, cabcd_work *ws, int s, int t,
                     solver_callback callback, void *ctx)
{
  const int m = pr->m;
  const int count = select_coordinates(sys->g, m, s, opt,
                                       sys->stream + (uint64_t)(t - 1) * m, ws);
  for (int b0 = 0; b0 < count; b0 += s) {
    const int k = min_int(s, count - b0), *blk = ws->order + b0;
    const double gamma = opt->step_size / (k * ws->cmax);
    block_sweep(pr, blk, k, sys->theta, sys->r, NULL, ws->gb, NULL,
                ws->partial, opt->nthreads);
    for (int l = 0; l < k; l++) {
      ws->delta[l] = -gamma * ws->gb[l];
      sys->theta[blk[l]] += ws->delta[l];
    }
    update_residual(pr, blk, k, ws->delta, sys->r, opt->nthreads);
    sys->passes += (double)k / m;
    if (solver_poll(callback, ctx, t)) return 1;
  }
  return 0;
}

/* One epoch of Adam: ceil(N / B) mini-batch steps. */
static int adam_epoch(const cabcd_problem *pr, const cabcd_options *opt,
                      system_state *sys, cabcd_work *ws, int t,
                      solver_callback callback, void *ctx)
{
  const int n = pr->n, m = pr->m, B = min_int(opt->batch_size, n);
  const int steps = (n + B - 1) / B;
  const double beta1 = opt->momentum, reg = 2.0 * pr->lambda / n;
  for (int st = 0; st < steps; st++) {
    for (int a = 0; a < B; a++) {
      ws->batch[a] = rng_index(opt->seed, RNG_STREAM_BLOCKS,
                               sys->stream + sys->adam_steps * B + a, n);
      ws->bres[a] = -sys->b[ws->batch[a]];
    }
    /* The batch's rows of Phi, gathered once (B x m): the scattered reads
     * of the large matrix are what a step costs. */
    for (int j = 0; j < m; j++) {
      const double tj = sys->theta[j], *col = pr->phi + (size_t)j * n;
      double *bp = ws->bphi + (size_t)j * B;
      for (int a = 0; a < B; a++) {
        bp[a] = col[ws->batch[a]];
        ws->bres[a] += bp[a] * tj;
      }
    }
    for (int a = 0; a < B; a++) ws->bres[a] *= pr->weight[ws->batch[a]];
    for (int j = 0; j < m; j++) {
      const double *bp = ws->bphi + (size_t)j * B;
      double s = 0.0;
      for (int a = 0; a < B; a++) s += bp[a] * ws->bres[a];
      ws->bgrad[j] = 2.0 * s / B + reg * sys->theta[j];
    }
    sys->adam_steps++;
    solver_adam_step(sys->theta, sys->v, sys->s2, ws->bgrad, (size_t)m,
                     -opt->step_size, beta1, sys->adam_steps);
    sys->passes += (double)B / n;
    if (solver_poll(callback, ctx, t)) return 1;
  }
  return 0;
}

solver_status cabcd_solve(const cabcd_problem *pr, const double *rhs, int nrhs,
                          const cabcd_options *opt, double *theta,
                          int *iterations_done, cabcd_history *hist,
                          solver_callback callback, void *ctx)
{
  const int n = pr->n, m = pr->m, s = min_int(opt->block_size, m);
  const int B = min_int(opt->batch_size, n);
  const int nch = (n + CABCD_ROW_CHUNK - 1) / CABCD_ROW_CHUNK;
  const int adam = opt->algorithm == CABCD_ADAM;
  /* Whether the full gradient at the end of an outer iteration is part of
   * the algorithm (see the cost accounting in cabcd.h). */
  const int end_gradient_counts =
      opt->algorithm == CABCD_CABCD ||
      (opt->algorithm == CABCD_BCD && opt->selection == CABCD_GAUSS_SOUTHWELL);
  const size_t mk = (size_t)m * nrhs, nk = (size_t)n * nrhs;
  solver_status status = SOLVER_MAX_ITER;
  system_state *sys;
  double *v, *s2, *r, *g, *rel, *small;
  cabcd_work ws;
  workspace mem;
  *iterations_done = 0;

  memset(&ws, 0, sizeof ws);
  workspace_init(&mem);
  WORKSPACE_ADD(&mem, sys, nrhs, WORKSPACE_ZEROED);
  WORKSPACE_ADD(&mem, v, mk, WORKSPACE_ZEROED);
  WORKSPACE_ADD_IF(&mem, adam, s2, mk, WORKSPACE_ZEROED);
  WORKSPACE_ADD(&mem, r, nk, 0);
  WORKSPACE_ADD(&mem, g, mk, 0);
  WORKSPACE_ADD(&mem, rel, nrhs, 0);
  WORKSPACE_ADD(&mem, small, (size_t)(s + 1) * (2 * s + 1 + 7), 0);
  WORKSPACE_ADD(&mem, ws.mu, n, 0);
  WORKSPACE_ADD_IF(&mem, opt->algorithm == CABCD_CABCD, ws.X, (size_t)n * s, 0);
  WORKSPACE_ADD(&mem, ws.partial, (size_t)nch * (s + s * s), 0);
  WORKSPACE_ADD(&mem, ws.order, m, 0);
  WORKSPACE_ADD(&mem, ws.ranked, m, 0);
  WORKSPACE_ADD(&mem, ws.ridx, s + 1, 0);
  WORKSPACE_ADD_IF(&mem, adam, ws.batch, B, 0);
  WORKSPACE_ADD_IF(&mem, adam, ws.bphi, (size_t)B * m, 0);
  WORKSPACE_ADD_IF(&mem, adam, ws.bres, B, 0);
  WORKSPACE_ADD_IF(&mem, adam, ws.bgrad, m, 0);
  if (workspace_alloc(&mem)) {
    status = SOLVER_NO_MEMORY;
    goto done;
  }
  /* Carve the block-sized vectors out of one allocation. */
  ws.rw = small;
  ws.rr = ws.rw + (s + 1);
  ws.F = ws.rr + (s + 1);
  ws.gb = ws.F + (size_t)(s + 1) * s;
  ws.Hb = ws.gb + (s + 1);
  ws.delta = ws.Hb + (size_t)(s + 1) * s;
  ws.dnew = ws.delta + (s + 1);
  ws.vb = ws.dnew + (s + 1);
  ws.vnew = ws.vb + (s + 1);
  ws.gt = ws.vnew + (s + 1);

  for (int i = 0; i < n; i++) ws.mu[i] = pr->weight[i] / n;
  /* The curvature scale c = max_j H_jj of the step sizes (H_jj into g,
   * which is overwritten below). */
  #pragma omp parallel for num_threads(threads_team(opt->nthreads)) schedule(static) \
      if (n > CABCD_ROW_CHUNK)
  for (int j = 0; j < m; j++) {
    const double *col = pr->phi + (size_t)j * n;
    double h = 0.0;
    for (int i = 0; i < n; i++) h += pr->weight[i] * col[i] * col[i];
    g[j] = 2.0 * (h + pr->lambda) / n;
  }
  ws.cmax = 0.0;
  for (int j = 0; j < m; j++) ws.cmax = fmax(ws.cmax, g[j]);

  memset(theta, 0, sizeof(double) * mk);
  /* The measures are the relative gradient norms. */
  const solver_stop_rule rule = {
      .nmeasures = nrhs, .diverged_above = CABCD_DIVERGENCE_GRADIENT,
      .has_tolerance = 1, .tolerance = opt->tolerance,
      .iterate = theta, .len = mk, .callback = callback, .ctx = ctx};
  for (int c = 0; c < nrhs; c++) {
    system_state *st = sys + c;
    st->b = rhs + (size_t)c * n;
    st->theta = theta + (size_t)c * m;
    st->v = v + (size_t)c * m;
    st->s2 = adam ? s2 + (size_t)c * m : NULL;
    st->r = r + (size_t)c * n;
    st->g = g + (size_t)c * m;
    st->stream = (uint64_t)c << CABCD_STREAM_SHIFT;
    for (int i = 0; i < n; i++) st->r[i] = -st->b[i];
    gradient(pr, st->theta, st->r, st->g, opt->nthreads);
    st->g0 = norm2(st->g, m);
    st->passes = end_gradient_counts ? 1.0 : 0.0;
    /* b = 0 (or orthogonal to every feature): theta = 0 is the solution. */
    st->done = !(st->g0 > 0.0);
    rel[c] = st->done ? 0.0 : 1.0;
  }

  for (int t = 1; t <= opt->iterations; t++) {
    for (int c = 0; c < nrhs; c++) {
      if (sys[c].done) continue;
      int rc;
      if (opt->algorithm == CABCD_CABCD)
        rc = cabcd_outer(pr, opt, sys + c, &ws, s, t, callback, ctx);
      else if (opt->algorithm == CABCD_BCD)
        rc = bcd_outer(pr, opt, sys + c, &ws, s, t, callback, ctx);
      else
        rc = adam_epoch(pr, opt, sys + c, &ws, t, callback, ctx);
      if (rc != 0) {
        status = rc < 0 ? SOLVER_NO_MEMORY : SOLVER_STOPPED;
        goto done;
      }
    }
    /* Exact residuals and gradients at the new iterates: the convergence
     * measure, and the next iteration's first pass. */
    for (int c = 0; c < nrhs; c++) {
      system_state *st = sys + c;
      if (st->done) continue;
      residuals(pr, st->theta, st->b, st->r, opt->nthreads);
      gradient(pr, st->theta, st->r, st->g, opt->nthreads);
      rel[c] = norm2(st->g, m) / st->g0;
      if (end_gradient_counts) st->passes += 1.0;
    }
    *iterations_done = t;
    if (hist && hist->loss)
      for (int c = 0; c < nrhs; c++)
        hist->loss[t - 1 + (size_t)c * opt->iterations] = loss(pr, sys[c].theta, sys[c].r);
    if (hist && hist->passes) hist->passes[t - 1] = sys[0].passes;

    status = solver_end_step(&rule, t, rel, rel);
    if (status != SOLVER_MAX_ITER) break;
    /* A system down to the tolerance stays as it is. */
    for (int c = 0; c < nrhs; c++)
      if (rel[c] < opt->tolerance) sys[c].done = 1;
  }

done:
  workspace_free(&mem);
  return status;
}

int cabcd_features(const rff *f, const points *p, double *phi, int nthreads,
                   solver_callback callback, void *ctx)
{
  /* About 1e7 units of feature work between interrupt checks. */
  const int slab = block_slab(p->n, (double)f->m * (f->d + 1), 1e7);
  for (int i0 = 0; i0 < p->n; i0 += slab) {
    rff_features(f, p, i0, min_int(p->n, i0 + slab), phi, (size_t)p->n, nthreads);
    if (solver_poll(callback, ctx, 0)) return 1;
  }
  return 0;
}
