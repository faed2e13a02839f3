#include <math.h>
#include <string.h>
#include "dsg.h"
#include "rff.h"
#include "rng.h"
#include "workspace.h"

/* Features regenerated per chunk of an evaluation: bounds the scratch
 * memory (chunk x (d + ncol) doubles) whatever the number of steps. */
#define DSG_FEATURE_CHUNK 2048
/* A probed residual twice its starting value of 1 (f = 0) means the
 * iteration is unstable: a stable run only decreases it, up to noise.  A
 * step slightly beyond the stability limit grows the residual slowly, so a
 * high threshold would let such runs finish and return garbage. */
#define DSG_DIVERGENCE_RESIDUAL 2.0
/* Feature evaluations (points x features) below which one thread does a
 * chunk: about a millisecond of work, less than waking a second thread can
 * cost on a busy machine, and DSG's early steps are all this small.  The
 * results do not depend on the choice. */
#define DSG_PARALLEL_MIN_EVALS 32768
/* The global scale of the coefficients is folded into them before it can
 * underflow (strong regularisation over many steps). */
#define DSG_SCALE_FLOOR 1e-100

int dsg_basis_matmul(const dsg_basis *b, uint64_t first, int nfeat,
                     const points *p, const double *A, int lda, int ncol,
                     double *out, int ldo, int nthreads)
{
  const int n = p->n, d = b->d;
  for (int c = 0; c < ncol; c++)
    memset(out + (size_t)c * ldo, 0, sizeof(double) * (size_t)n);
  if (nfeat <= 0 || n == 0 || ncol == 0) return 0;

  const int chunk = min_int(nfeat, DSG_FEATURE_CHUNK);
  double *omega, *phase, *W, *part;
  workspace ws;
  workspace_init(&ws);
  WORKSPACE_ADD(&ws, omega, (size_t)chunk * d, 0);
  WORKSPACE_ADD(&ws, phase, chunk, 0);
  WORKSPACE_ADD(&ws, W, (size_t)chunk * ncol, 0);
  WORKSPACE_ADD(&ws, part, (size_t)n * ncol, 0);
  if (workspace_alloc(&ws)) return -1;
  const double scale = sqrt(2.0 * b->k->variance / b->block);
  const int nth = (double)n * chunk < DSG_PARALLEL_MIN_EVALS ? 1 : nthreads;
  for (int j0 = 0; j0 < nfeat; j0 += chunk) {
    const int len = nfeat - j0 < chunk ? nfeat - j0 : chunk;
    rff_draw_range(b->k, len, d, b->seed, first + (uint64_t)j0, omega, phase,
                   nth);
    /* rff_matmul takes the chunk's coefficients as a len x ncol matrix. */
    for (int c = 0; c < ncol; c++)
      memcpy(W + (size_t)c * len, A + j0 + (size_t)c * lda,
             sizeof(double) * (size_t)len);
    const rff f = {len, d, omega, phase, scale, 0, 0};
    rff_matmul(&f, p, W, ncol, part, n, nth);
    for (int c = 0; c < ncol; c++)
      for (int i = 0; i < n; i++)
        out[i + (size_t)c * ldo] += part[i + (size_t)c * n];
  }
  workspace_free(&ws);
  return 0;
}

solver_status dsg_solve(const dsg_basis *basis, const points *x,
                        const double *noise, const double *rhs, int nrhs,
                        const dsg_options *opt, double *alpha,
                        int *iterations_done, solver_callback callback,
                        void *ctx)
{
  const int n = x->n, d = x->d, B = opt->batch_size, P = opt->probe_size;
  const int r = basis->block, T = opt->iterations, nth = opt->nthreads;
  const int lda = T * r;
  solver_status status = SOLVER_MAX_ITER;
  int *idx, *prow;
  double *w, *xb_, *fb, *phib, *eye, *xp_, *gp, *part, *bp_norm, *resid;
  *iterations_done = 0;

  workspace ws;
  workspace_init(&ws);
  WORKSPACE_ADD(&ws, idx, B, 0);
  WORKSPACE_ADD(&ws, prow, P, 0);
  WORKSPACE_ADD(&ws, w, B, 0);
  WORKSPACE_ADD(&ws, xb_, (size_t)B * d, 0);
  WORKSPACE_ADD(&ws, fb, (size_t)B * nrhs, 0);
  WORKSPACE_ADD(&ws, phib, (size_t)B * r, 0);
  WORKSPACE_ADD(&ws, eye, (size_t)r * r, WORKSPACE_ZEROED);
  WORKSPACE_ADD(&ws, xp_, (size_t)P * d, 0);
  WORKSPACE_ADD(&ws, gp, (size_t)P * nrhs, WORKSPACE_ZEROED);
  WORKSPACE_ADD(&ws, part, (size_t)P * nrhs, 0);
  WORKSPACE_ADD(&ws, bp_norm, nrhs, 0);
  WORKSPACE_ADD(&ws, resid, nrhs, 0);
  if (workspace_alloc(&ws)) {
    status = SOLVER_NO_MEMORY;
    goto done;
  }
  memset(alpha, 0, sizeof(double) * (size_t)lda * nrhs);
  const points xb = {xb_, B, d, NULL, NULL}, xp = {xp_, P, d, NULL, NULL};

  double lambda = 0.0;
  for (int i = 0; i < n; i++) lambda += noise[i];
  lambda /= n;
  const double nu = lambda / n;

  /* A fixed probe of training rows; f there is kept up to date by adding
   * each new block's contribution. */
  for (int j = 0; j < P; j++)
    prow[j] = rng_index(opt->seed, RNG_STREAM_PROBE, (uint64_t)j, n);
  points_rows(x, prow, 0, P, xp_);
  solver_rhs_norms(rhs, n, nrhs, prow, P, bp_norm);
  /* DSG has no tolerance: its probed residual tends to the exact
   * solution's, not to 0.  The coefficients are checked as they are made. */
  const solver_stop_rule rule = {
      .nmeasures = nrhs, .diverged_above = DSG_DIVERGENCE_RESIDUAL,
      .has_tolerance = 0, .tolerance = 0.0,
      .iterate = NULL, .len = 0, .callback = callback, .ctx = ctx};
  /* Phi_t(x_B) itself is Phi_t(x_B) I, through the same evaluator. */
  for (int k = 0; k < r; k++) eye[k + (size_t)k * r] = 1.0;

  /* f = scale * sum_j alpha_j phi_j: the decay of all older coefficients
   * by (1 - gamma_t nu) is one multiplication of the scale. */
  double scale = 1.0;
  for (int t = 0; t < T; t++) {
    const double gamma = opt->step_size / (1.0 + t / opt->step_decay);
    const uint64_t first = (uint64_t)t * r;
    for (int j = 0; j < B; j++) {
      idx[j] = rng_index(opt->seed, RNG_STREAM_DSG, (uint64_t)t * B + j, n);
      w[j] = lambda / noise[idx[j]];
    }
    points_rows(x, idx, 0, B, xb_);

    /* f_t at the batch from blocks 0..t-1, then the weighted loss
     * derivatives w_j (f(x_j) - b_j) in place. */
    if (dsg_basis_matmul(basis, 0, t * r, &xb, alpha, lda, nrhs, fb, B, nth) ||
        dsg_basis_matmul(basis, first, r, &xb, eye, r, r, phib, B, nth)) {
      status = SOLVER_NO_MEMORY;
      break;
    }
    for (int c = 0; c < nrhs; c++)
      for (int j = 0; j < B; j++)
        fb[j + (size_t)c * B] =
            w[j] * (scale * fb[j + (size_t)c * B] - rhs[idx[j] + (size_t)c * n]);

    /* Decay, then the new block, stored divided by the new scale. */
    scale *= 1.0 - gamma * nu;
    const double coef = -gamma / B / scale;
    int finite = 1;
    for (int c = 0; c < nrhs; c++) {
      const double *g = fb + (size_t)c * B;
      double *a = alpha + first + (size_t)c * lda;
      for (int k = 0; k < r; k++) {
        const double *ph = phib + (size_t)k * B;
        double s = 0.0;
        for (int j = 0; j < B; j++) s += ph[j] * g[j];
        a[k] = coef * s;
        if (!isfinite(a[k])) finite = 0;
      }
    }
    *iterations_done = t + 1;
    if (!finite) {
      status = SOLVER_DIVERGED;
      break;
    }

    if (dsg_basis_matmul(basis, first, r, &xp, alpha + first, lda, nrhs,
                         part, P, nth)) {
      status = SOLVER_NO_MEMORY;
      break;
    }
    for (size_t i = 0; i < (size_t)P * nrhs; i++) gp[i] += part[i];
    for (int c = 0; c < nrhs; c++) {
      double ss = 0.0;
      for (int j = 0; j < P; j++) {
        const double e = scale * gp[j + (size_t)c * P] - rhs[prow[j] + (size_t)c * n];
        ss += e * e;
      }
      resid[c] = sqrt(ss) / bp_norm[c];
    }
    const int record = (t + 1) % opt->check_every == 0 || t + 1 == T;
    status = solver_end_step(&rule, t + 1, resid, record ? resid : NULL);
    if (status != SOLVER_MAX_ITER) break;

    /* After the end of the step: a run that stops there folds the scale in
     * below all the same. */
    if (scale < DSG_SCALE_FLOOR) {
      for (int c = 0; c < nrhs; c++)
        for (uint64_t j = 0; j < first + r; j++) alpha[j + (size_t)c * lda] *= scale;
      for (size_t i = 0; i < (size_t)P * nrhs; i++) gp[i] *= scale;
      scale = 1.0;
    }
  }

  for (size_t i = 0; i < (size_t)lda * nrhs; i++) alpha[i] *= scale;

done:
  workspace_free(&ws);
  return status;
}
