#include <string.h>
#include "nystrom.h"
#include "lapack.h"
#include "pivchol.h"
#include "threads.h"

/* Rows per unit of work in the dense n x k products. */
#define NYSTROM_CHUNK 2048

/* out (ka x kb) = A' B for A n x ka and B n x kb, column-major: each entry is
 * one thread's in-order dot product. */
static void cross_products(const double *A, int ka, const double *B, int kb,
                           int n, double *out, int nthreads)
{
  const size_t nout = (size_t)ka * kb;
  #pragma omp parallel for num_threads(threads_team(nthreads)) schedule(static) \
      if ((double)nout * n > PARALLEL_MIN_WORK)
  for (size_t e = 0; e < nout; e++)
    out[e] = solver_dot(A + (size_t)(e % ka) * n, B + (size_t)(e / ka) * n, n);
}

solver_status nystrom_init(nystrom *P, workspace *ws, const kernel_op *K,
                           int max_rank, double jitter, double rel_tol,
                           int ncol_max, int nthreads,
                           solver_callback callback, void *ctx)
{
  const int n = P->n;
  const double *noise = P->noise;
  P->k = 0;
  if (max_rank <= 0) return SOLVER_MAX_ITER;

  max_rank = min_int(max_rank, n);
  int rank = 0, info = 0, *pivots;
  double *L, *trace;
  workspace factor; /* needed only while P is built */
  workspace_init(&factor);
  WORKSPACE_ADD(&factor, L, (size_t)n * max_rank, 0);
  WORKSPACE_ADD(&factor, trace, max_rank, 0);
  WORKSPACE_ADD(&factor, pivots, max_rank, 0);
  solver_status status = SOLVER_NO_MEMORY;
  if (workspace_alloc(&factor)) goto done;
  status = pivchol(K, jitter, max_rank, rel_tol, nthreads, L, pivots, trace,
                   &rank, callback, ctx);
  if (status == SOLVER_STOPPED || status == SOLVER_NO_MEMORY) goto done;

  /* L's first `rank` columns are the factor. */
  P->k = rank;
  WORKSPACE_ADD(ws, P->S, (size_t)n * rank, 0);
  WORKSPACE_ADD(ws, P->M, (size_t)rank * rank, 0);
  WORKSPACE_ADD(ws, P->T, (size_t)rank * ncol_max, 0);
  WORKSPACE_ADD(ws, P->pivots, rank, 0);
  WORKSPACE_ADD(ws, P->Lpp, (size_t)rank * rank, 0);
  if (workspace_alloc(ws)) {
    status = SOLVER_NO_MEMORY;
    goto done;
  }
  memcpy(P->pivots, pivots, sizeof(int) * (size_t)rank);
  for (int b = 0; b < rank; b++)
    for (int a = 0; a < rank; a++)
      P->Lpp[a + (size_t)b * rank] = L[pivots[a] + (size_t)b * n];
  for (int a = 0; a < rank; a++)
    for (int i = 0; i < n; i++)
      P->S[i + (size_t)a * n] = L[i + (size_t)a * n] / noise[i];
  cross_products(L, rank, P->S, rank, n, P->M, nthreads);
  for (int a = 0; a < rank; a++) P->M[a + (size_t)a * rank] += 1.0;
  dpotrf_("L", &rank, P->M, &rank, &info, 1);
  /* I + L' D^-1 L is positive definite whenever the noise is positive:
   * failure means the system is not. */
  status = info == 0 ? SOLVER_MAX_ITER : SOLVER_DIVERGED;

done:
  workspace_free(&factor);
  return status;
}

void nystrom_apply(const nystrom *P, const double *R, int ncol, double *Z,
                   int nthreads)
{
  const int n = P->n, k = P->k;
  if (k == 0) {
    memcpy(Z, R, sizeof(double) * (size_t)n * ncol);
    return;
  }
  for (int c = 0; c < ncol; c++)
    for (int i = 0; i < n; i++)
      Z[i + (size_t)c * n] = R[i + (size_t)c * n] / P->noise[i];
  int info = 0;
  cross_products(P->S, k, R, ncol, n, P->T, nthreads);
  dpotrs_("L", &k, &ncol, P->M, &k, P->T, &k, &info, 1);
  #pragma omp parallel for num_threads(threads_team(nthreads)) schedule(static) \
      if ((double)n * k * ncol > PARALLEL_MIN_WORK)
  for (int i0 = 0; i0 < n; i0 += NYSTROM_CHUNK) {
    const int i1 = i0 + NYSTROM_CHUNK < n ? i0 + NYSTROM_CHUNK : n;
    for (int c = 0; c < ncol; c++) {
      double *z = Z + (size_t)c * n;
      for (int a = 0; a < k; a++) {
        const double *s = P->S + (size_t)a * n;
        const double t = P->T[a + (size_t)c * k];
        for (int i = i0; i < i1; i++) z[i] -= s[i] * t;
      }
    }
  }
}

/* Column c of alpha, NYSTROM_FULL's solution for b, becomes
 * NYSTROM_INDUCING's (see nystrom.h), with beta from P->T. */
static void inducing_solution(const nystrom *P, const double *b, int c,
                              double *alpha)
{
  const int n = P->n, k = P->k;
  double *w = P->T + (size_t)c * k; /* beta, overwritten by w */
  /* Back substitution with L[m, :]', upper triangular. */
  for (int a = k - 1; a >= 0; a--) {
    double s = w[a];
    for (int j = a + 1; j < k; j++) s -= P->Lpp[j + (size_t)a * k] * w[j];
    w[a] = s / P->Lpp[a + (size_t)a * k];
  }
  /* alpha <- (K + D) w: K[:, m] w = L beta = b - D alpha_FULL, plus D w on
   * the pivots. */
  for (int i = 0; i < n; i++) alpha[i] = b[i] - P->noise[i] * alpha[i];
  for (int a = 0; a < k; a++) alpha[P->pivots[a]] += P->noise[P->pivots[a]] * w[a];
  double bAw = 0.0, AwAw = 0.0;
  for (int i = 0; i < n; i++) {
    bAw += b[i] * alpha[i];
    AwAw += alpha[i] * alpha[i];
  }
  const double scale = AwAw > 0 ? bAw / AwAw : 0.0;
  memset(alpha, 0, sizeof(double) * (size_t)n);
  for (int a = 0; a < k; a++) alpha[P->pivots[a]] = scale * w[a];
}

solver_status nystrom_solve(const kernel_op *K, const double *noise,
                            const double *rhs, int nrhs, int rank,
                            nystrom_form form, int nthreads, double *alpha,
                            solver_callback callback, void *ctx)
{
  nystrom P = {K->x2->n, 0, noise, NULL, NULL, NULL, NULL, NULL};
  workspace ws;
  workspace_init(&ws);
  /* The factor to the rank asked for: no early stop on the trace. */
  const solver_status status = nystrom_init(&P, &ws, K, rank, 0.0, 0.0, nrhs,
                                            nthreads, callback, ctx);
  if (status == SOLVER_MAX_ITER) {
    nystrom_apply(&P, rhs, nrhs, alpha, nthreads);
    if (form == NYSTROM_INDUCING)
      for (int c = 0; c < nrhs; c++)
        inducing_solution(&P, rhs + (size_t)c * P.n, c, alpha + (size_t)c * P.n);
  }
  workspace_free(&ws);
  return status;
}
