#include <math.h>
#include <string.h>
#include "pivchol.h"
#include "threads.h"
#include "workspace.h"

/* Rows per unit of work when a new column is orthogonalised against the
 * previous ones; each row's sum runs over the columns in order, so the
 * result does not depend on the thread count. */
#define PIVCHOL_CHUNK 2048

solver_status pivchol(const kernel_op *K, double jitter, int max_rank,
                      double rel_tol, int nthreads, double *L, int *pivots,
                      double *trace, int *rank, solver_callback callback,
                      void *ctx)
{
  const int n = K->x2->n;
  const double diag0 = K->k->variance + jitter;
  const double trace0 = n * diag0;
  solver_status status = SOLVER_MAX_ITER;
  if (max_rank > n) max_rank = n;
  *rank = 0;

  double *d;
  unsigned char *used;
  workspace ws;
  workspace_init(&ws);
  WORKSPACE_ADD(&ws, d, n, 0);
  WORKSPACE_ADD(&ws, used, n, WORKSPACE_ZEROED);
  if (workspace_alloc(&ws)) {
    status = SOLVER_NO_MEMORY;
    goto done;
  }
  memset(L, 0, sizeof(double) * (size_t)n * max_rank);
  for (int i = 0; i < n; i++) d[i] = diag0;

  for (int m = 0; m < max_rank; m++) {
    int piv = -1;
    double dmax = 0.0;
    for (int i = 0; i < n; i++)
      if (!used[i] && d[i] > dmax) {
        dmax = d[i];
        piv = i;
      }
    /* Nothing positive is left: the factor is already exact. */
    if (piv < 0) {
      status = SOLVER_TOLERANCE;
      break;
    }
    const double p = sqrt(dmax);
    double *col = L + (size_t)m * n;
    /* K is symmetric: column piv is row piv. */
    kernel_op_row_values(K, piv, col);

    #pragma omp parallel for num_threads(threads_team(nthreads)) schedule(static) \
        if ((double)n * m > PARALLEL_MIN_WORK)
    for (int i0 = 0; i0 < n; i0 += PIVCHOL_CHUNK) {
      const int i1 = i0 + PIVCHOL_CHUNK < n ? i0 + PIVCHOL_CHUNK : n;
      for (int l = 0; l < m; l++) {
        const double *Ll = L + (size_t)l * n;
        const double w = Ll[piv];
        for (int i = i0; i < i1; i++) col[i] -= Ll[i] * w;
      }
      /* Earlier pivots' rows are exactly zero: the factor is lower
       * triangular in pivot order. */
      for (int i = i0; i < i1; i++) col[i] = used[i] ? 0.0 : col[i] / p;
    }
    col[piv] = p;
    used[piv] = 1;
    pivots[m] = piv;

    double rest = 0.0;
    for (int i = 0; i < n; i++) {
      d[i] = used[i] ? 0.0 : d[i] - col[i] * col[i];
      rest += fabs(d[i]);
    }
    trace[m] = rest / trace0;
    *rank = m + 1;
    if (solver_poll(callback, ctx, 0)) {
      status = SOLVER_STOPPED;
      break;
    }
    if (trace[m] <= rel_tol) {
      status = SOLVER_TOLERANCE;
      break;
    }
  }

done:
  workspace_free(&ws);
  return status;
}
