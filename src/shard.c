#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "shard.h"
#include "threads.h"

void shard_range(int n, int q, int pieces, int *first, int *count)
{
  const long long tiles = (n + BLOCK_TILE - 1) / BLOCK_TILE;
  const long long t0 = tiles * q / pieces, t1 = tiles * (q + 1) / pieces;
  const long long c0 = t0 * BLOCK_TILE, c1 = t1 * BLOCK_TILE < n ? t1 * BLOCK_TILE : n;
  *first = (int)c0;
  *count = (int)(c1 > c0 ? c1 - c0 : 0);
}

/* Rows per group of a product of nrows rows (whole row chunks). */
static int group_rows(int nrows)
{
  const int per = (nrows + SHARD_MAX_GROUPS - 1) / SHARD_MAX_GROUPS;
  return per > SHARD_GROUP ? (per + 15) / 16 * 16 : SHARD_GROUP;
}

int shard_rounds(int n, int size, int batch)
{
  const int g = group_rows(batch), groups = (batch + g - 1) / g;
  const int tiles = (n + BLOCK_TILE - 1) / BLOCK_TILE;
  int rounds = (SHARD_FILL * (size - 1) + groups - 1) / groups;
  if (rounds > tiles / size) rounds = tiles / size;
  if (rounds > SHARD_MAX_ROUNDS) rounds = SHARD_MAX_ROUNDS;
  return rounds > 1 ? rounds : 1;
}

size_t shard_points_len(int n, int d, int rank, int size, int rounds)
{
  size_t len = 0;
  for (int k = 0; k < rounds; k++) {
    int first, count;
    shard_range(n, k * size + rank, rounds * size, &first, &count);
    len += (size_t)count * d;
  }
  return len;
}

kernel_op shard_op(const kernel_op *K, shard_comm *comm, int rounds, shard *sh,
                   double *buf)
{
  /* Decided on all the points, as kernel_op_rows() decides for K. */
  const int norms = K->norms2 || block_uses_norms(K->k, K->single, K->x2);
  sh->rounds = rounds;
  sh->columns = K->x2->n;
  sh->own = 0;
  sh->comm = comm;
  for (int k = 0; k < rounds; k++) {
    int count;
    shard_range(K->x2->n, k * comm->size + comm->rank, rounds * comm->size,
                &sh->first[k], &count);
    sh->cols[k] = points_rows(K->x2, NULL, sh->first[k], count,
                              buf + (size_t)sh->own * K->x2->d);
    sh->own += count;
    kernel_op *part = &sh->part[k];
    *part = *K;
    part->x2 = &sh->cols[k];
    part->norms2 = norms && K->norms2 ? K->norms2 + sh->first[k] : NULL;
    part->no_norms = !norms;
    part->shard = NULL;
  }
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
  const int P = comm->size, r = comm->rank, pieces = sh->rounds * P;
  const int next = (r + 1) % P, prev = (r + P - 1) % P;
  const size_t all = (size_t)nrows * ncol;
  const int group = group_rows(nrows);
  /* The running sums of one group; all the sums, contiguous, for the
   * broadcast; the row indices when rows is NULL. */
  double *sums = malloc(sizeof(double) * ((size_t)group * ncol + all));
  int *idx = rows ? NULL : malloc(sizeof(int) * (size_t)nrows);
  if (!sums || (!rows && !idx)) comm->failed = 1;
  if (!comm->failed) {
    double *packed = sums + (size_t)group * ncol;
    if (!rows) {
      for (int i = 0; i < nrows; i++) idx[i] = i;
      rows = idx;
    }
    /* Round by round, group by group: the order in which the sums arrive
     * from the previous piece's owner. */
    for (int k = 0; k < sh->rounds; k++) {
      const int q = k * P + r;
      for (int g0 = 0; g0 < nrows && !comm->failed; g0 += group) {
        const int len = nrows - g0 < group ? nrows - g0 : group;
        const size_t m = (size_t)len * ncol;
        if (q == 0)
          memset(sums, 0, sizeof(double) * m);
        else
          SHARD_CALL(comm, recv, sums, m, prev);
        if (sh->cols[k].n > 0)
          kernel_op_rows_add(&sh->part[k], rows + g0, len, A + sh->first[k], sh->columns,
                             ncol, sums, len, nthreads);
        if (q < pieces - 1)
          SHARD_CALL(comm, send, sums, m, next);
        else
          for (int c = 0; c < ncol; c++)
            memcpy(packed + g0 + (size_t)c * nrows, sums + (size_t)c * len,
                   sizeof(double) * (size_t)len);
      }
    }
    SHARD_CALL(comm, bcast, packed, all, P - 1);
    if (!comm->failed)
      for (int c = 0; c < ncol; c++)
        memcpy(out + (size_t)c * ldo, packed + (size_t)c * nrows, sizeof(double) * (size_t)nrows);
  }
  if (comm->failed)
    for (int c = 0; c < ncol; c++)
      for (int i = 0; i < nrows; i++) out[i + (size_t)c * ldo] = NAN;
  free(sums);
  free(idx);
}

/* Whether column i of K is in one of this process's pieces. */
static int owns(const shard *sh, int i)
{
  for (int k = 0; k < sh->rounds; k++)
    if (i >= sh->first[k] && i < sh->first[k] + sh->cols[k].n) return 1;
  return 0;
}

void shard_share_rows(const shard *sh, const int *rows, int nrows, double *A,
                      int lda, int ncol, int *flag)
{
  shard_comm *comm = sh->comm;
  const int P = comm->size, r = comm->rank;
  /* The rows' values, column by column, and the flag. */
  const size_t len = (size_t)nrows * ncol + 1;
  double *buf = malloc(sizeof(double) * len);
  if (!buf) comm->failed = 1;
  if (!comm->failed) {
    if (r == 0) memset(buf, 0, sizeof(double) * len);
    else SHARD_CALL(comm, recv, buf, len, r - 1);
    for (int j = 0; j < nrows; j++)
      if (owns(sh, rows[j]))
        for (int c = 0; c < ncol; c++)
          buf[j + (size_t)c * nrows] = A[rows[j] + (size_t)c * lda];
    if (*flag) buf[len - 1] = 1.0;
    if (r < P - 1) SHARD_CALL(comm, send, buf, len, r + 1);
    SHARD_CALL(comm, bcast, buf, len, P - 1);
  }
  if (!comm->failed) {
    for (int j = 0; j < nrows; j++)
      for (int c = 0; c < ncol; c++)
        A[rows[j] + (size_t)c * lda] = buf[j + (size_t)c * nrows];
    *flag = buf[len - 1] != 0.0;
  }
  free(buf);
}

void shard_share_all(const shard *sh, double *A, int lda, int ncol)
{
  shard_comm *comm = sh->comm;
  const int P = comm->size, pieces = sh->rounds * P;
  int first, count, most = 0;
  for (int q = 0; q < pieces; q++) {
    shard_range(sh->columns, q, pieces, &first, &count);
    if (count > most) most = count;
  }
  double *buf = malloc(sizeof(double) * (size_t)most * ncol);
  if (!buf) comm->failed = 1;
  for (int q = 0; q < pieces && !comm->failed; q++) {
    const int mine = q % P == comm->rank;
    shard_range(sh->columns, q, pieces, &first, &count);
    if (count == 0) continue;
    for (int c = 0; c < ncol && mine; c++)
      memcpy(buf + (size_t)c * count, A + first + (size_t)c * lda, sizeof(double) * count);
    SHARD_CALL(comm, bcast, buf, (size_t)count * ncol, q % P);
    for (int c = 0; c < ncol && !mine && !comm->failed; c++)
      memcpy(A + first + (size_t)c * lda, buf + (size_t)c * count, sizeof(double) * count);
  }
  free(buf);
}
