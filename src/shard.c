#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "shard.h"
#include "threads.h"

void shard_range(int n, int rank, int size, int *first, int *count)
{
  const long long tiles = (n + BLOCK_TILE - 1) / BLOCK_TILE;
  const long long t0 = tiles * rank / size, t1 = tiles * (rank + 1) / size;
  const long long c0 = t0 * BLOCK_TILE, c1 = t1 * BLOCK_TILE < n ? t1 * BLOCK_TILE : n;
  *first = (int)c0;
  *count = (int)(c1 > c0 ? c1 - c0 : 0);
}

size_t shard_points_len(int n, int d, int rank, int size)
{
  int first, count;
  shard_range(n, rank, size, &first, &count);
  return (size_t)count * d;
}

kernel_op shard_op(const kernel_op *K, shard_comm *comm, shard *sh, double *buf)
{
  int count;
  shard_range(K->x2->n, comm->rank, comm->size, &sh->first, &count);
  sh->cols = points_rows(K->x2, NULL, sh->first, count, buf);
  sh->columns = K->x2->n;
  sh->comm = comm;
  /* Decided on all the points, as kernel_op_rows() decides for K. */
  const int norms = K->norms2 || block_uses_norms(K->k, K->single, K->x2);
  sh->part = *K;
  sh->part.x2 = &sh->cols;
  sh->part.norms2 = norms && K->norms2 ? K->norms2 + sh->first : NULL;
  sh->part.no_norms = !norms;
  sh->part.shard = NULL;
  kernel_op out = *K;
  out.shard = sh;
  return out;
}

/* One callback, timed; a failure is remembered and stops the messages. */
#define SHARD_CALL(comm, fn, ...)                                    \
  do {                                                               \
    const double t0_ = omp_get_wtime();                              \
    if (!(comm)->failed && (comm)->fn((comm)->ctx, __VA_ARGS__))     \
      (comm)->failed = 1;                                            \
    (comm)->seconds += omp_get_wtime() - t0_;                        \
  } while (0)

void shard_rows(const shard *sh, const int *rows, int nrows, const double *A,
                int ncol, double *out, int ldo, int nthreads)
{
  shard_comm *comm = sh->comm;
  const int n = sh->cols.n, last = comm->size - 1;
  const size_t all = (size_t)nrows * ncol;
  /* The shard's rows of A, contiguous as kernel_op_rows_add() reads them;
   * the running sums of one group; all the sums, contiguous, for the
   * broadcast; the row indices when rows is NULL. */
  double *a = malloc(sizeof(double) * ((size_t)n * ncol + (size_t)SHARD_GROUP * ncol + all));
  int *idx = rows ? NULL : malloc(sizeof(int) * (size_t)nrows);
  if (!a || (!rows && !idx)) comm->failed = 1;
  if (!comm->failed) {
    double *sums = a + (size_t)n * ncol, *packed = sums + (size_t)SHARD_GROUP * ncol;
    for (int c = 0; c < ncol; c++)
      memcpy(a + (size_t)c * n, A + (size_t)c * sh->columns + sh->first,
             sizeof(double) * (size_t)n);
    if (!rows) {
      for (int r = 0; r < nrows; r++) idx[r] = r;
      rows = idx;
    }
    for (int g0 = 0; g0 < nrows && !comm->failed; g0 += SHARD_GROUP) {
      const int len = nrows - g0 < SHARD_GROUP ? nrows - g0 : SHARD_GROUP;
      const size_t m = (size_t)len * ncol;
      if (comm->rank == 0)
        memset(sums, 0, sizeof(double) * m);
      else
        SHARD_CALL(comm, recv, sums, m, comm->rank - 1);
      if (n > 0) kernel_op_rows_add(&sh->part, rows + g0, len, a, ncol, sums, len, nthreads);
      if (comm->rank < last)
        SHARD_CALL(comm, send, sums, m, comm->rank + 1);
      else
        for (int c = 0; c < ncol; c++)
          memcpy(packed + g0 + (size_t)c * nrows, sums + (size_t)c * len,
                 sizeof(double) * (size_t)len);
    }
    SHARD_CALL(comm, bcast, packed, all, last);
    if (!comm->failed)
      for (int c = 0; c < ncol; c++)
        memcpy(out + (size_t)c * ldo, packed + (size_t)c * nrows, sizeof(double) * (size_t)nrows);
  }
  if (comm->failed)
    for (int c = 0; c < ncol; c++)
      for (int r = 0; r < nrows; r++) out[r + (size_t)c * ldo] = NAN;
  free(a);
  free(idx);
}
