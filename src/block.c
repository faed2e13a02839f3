#include <stdlib.h>
#include <string.h>
#include "block.h"
#include "omp_compat.h"

/* Column tile: the slice of p2 one row is compared with at a time.  128
 * points x d coordinates stay in L1/L2 while a thread sweeps its rows, and
 * the distance loop runs contiguously over the tile (vectorisable). */
#define TILE 128
/* Rows handled together against one column tile. */
#define ROW_CHUNK 16

void block_sq_dist(const points *p1, int i, const points *p2, int j0, int len,
                   double *r2)
{
  const int d = p1->d;
  memset(r2, 0, sizeof(double) * (size_t)len);
  for (int c = 0; c < d; c++) {
    const double xi = p1->x[i + (size_t)c * p1->n];
    const double *col = p2->x + (size_t)c * p2->n + j0;
    /* omp simd: R compiles with -O2, where gcc will not vectorise a loop
     * that needs a runtime aliasing check. */
    #pragma omp simd
    for (int t = 0; t < len; t++) {
      const double diff = xi - col[t];
      r2[t] += diff * diff;
    }
  }
}

/* out[c * ldo] += sum_t kv[t] A[t + c * lda] for every column c.  Four
 * columns at a time share each load of kv.  The SIMD reductions split each
 * sum into vector lanes in an order fixed at compile time, so results still
 * do not depend on the number of threads. */
static void tile_dot(const double *kv, int len, const double *A, int lda,
                     int ncol, double *out, int ldo)
{
  int c = 0;
  for (; c + 4 <= ncol; c += 4) {
    const double *a0 = A + (size_t)c * lda, *a1 = a0 + lda, *a2 = a1 + lda,
                 *a3 = a2 + lda;
    double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
    #pragma omp simd reduction(+ : s0, s1, s2, s3)
    for (int t = 0; t < len; t++) {
      const double k = kv[t];
      s0 += k * a0[t];
      s1 += k * a1[t];
      s2 += k * a2[t];
      s3 += k * a3[t];
    }
    out[(size_t)c * ldo] += s0;
    out[(size_t)(c + 1) * ldo] += s1;
    out[(size_t)(c + 2) * ldo] += s2;
    out[(size_t)(c + 3) * ldo] += s3;
  }
  for (; c < ncol; c++) {
    const double *a = A + (size_t)c * lda;
    double s = 0.0;
    #pragma omp simd reduction(+ : s)
    for (int t = 0; t < len; t++) s += kv[t] * a[t];
    out[(size_t)c * ldo] += s;
  }
}

/* Kernel values of row point i against the column tile j0..j0+len-1 of
 * the block (columns cols[j0..] of x2, or x2's own j0.. when cols is NULL):
 * a slice of the cache, or computed into buf.  Gathered columns form their
 * squared distances in the same coordinate order as block_sq_dist, so every
 * value is the same bits whichever way it is obtained. */
static const double *block_tile(const kernel_op *op, int i, const int *cols,
                                int j0, int len, double *buf)
{
  const int n2 = op->x2->n;
  if (!cols) {
    if (op->cache) return op->cache + (size_t)i * n2 + j0;
    block_sq_dist(op->x1, i, op->x2, j0, len, buf);
    kernel_apply(op->k, buf, len);
    return buf;
  }
  cols += j0;
  if (op->cache) {
    /* Column cols[t] of the symmetric cache, entry i. */
    for (int t = 0; t < len; t++) buf[t] = op->cache[(size_t)cols[t] * n2 + i];
    return buf;
  }
  memset(buf, 0, sizeof(double) * (size_t)len);
  for (int c = 0; c < op->x1->d; c++) {
    const double xi = op->x1->x[i + (size_t)c * op->x1->n];
    const double *col = op->x2->x + (size_t)c * n2;
    for (int t = 0; t < len; t++) {
      const double diff = xi - col[cols[t]];
      buf[t] += diff * diff;
    }
  }
  kernel_apply(op->k, buf, len);
  return buf;
}

void kernel_op_block(const kernel_op *op, const int *rows, int nrows,
                     const int *cols, int ncols, const double *A, int ncol,
                     double *out, int ldo, int nthreads)
{
  const int nchunks = (nrows + ROW_CHUNK - 1) / ROW_CHUNK;
  for (int c = 0; c < ncol; c++)
    memset(out + (size_t)c * ldo, 0, sizeof(double) * (size_t)nrows);

  /* Below about a millisecond of work a thread team costs more than it
   * saves: idle threads spin-wait, which on a busy machine steals the cores
   * the work needs. */
  const double work = (double)nrows * ncols * (op->x1->d + ncol);
  #pragma omp parallel num_threads(nthreads) if (nchunks > 1 && work > 1e6)
  {
    double buf[TILE];
    /* A chunk of rows is the unit of work: one thread owns each row and adds
     * its tiles in order, so there is no cross-thread sum to reorder.  The
     * tile of A (TILE x ncol) is reused by every row of the chunk while it
     * is in cache. */
    #pragma omp for schedule(static)
    for (int ch = 0; ch < nchunks; ch++) {
      const int r0 = ch * ROW_CHUNK;
      const int r1 = r0 + ROW_CHUNK < nrows ? r0 + ROW_CHUNK : nrows;
      for (int j0 = 0; j0 < ncols; j0 += TILE) {
        const int len = ncols - j0 < TILE ? ncols - j0 : TILE;
        for (int r = r0; r < r1; r++) {
          const double *kv = block_tile(op, rows ? rows[r] : r, cols, j0, len, buf);
          tile_dot(kv, len, A + j0, ncols, ncol, out + r, ldo);
        }
      }
    }
  }
}

void kernel_op_rows(const kernel_op *op, const int *rows, int nrows,
                    const double *A, int ncol, double *out, int ldo,
                    int nthreads)
{
  kernel_op_block(op, rows, nrows, NULL, op->x2->n, A, ncol, out, ldo, nthreads);
}

void kernel_block_columns(const kernel *k, const points *p1, const points *p2,
                          int j0, int j1, double *out, int nthreads)
{
  const int n1 = p1->n;
  /* Column by column (k is symmetric, so column j is point j of p2 against
   * all of p1), writing each column contiguously.  Small blocks run on one
   * thread, for the reason given in kernel_op_rows. */
  #pragma omp parallel for num_threads(nthreads) schedule(static) \
      if ((double)(j1 - j0) * n1 * (p1->d + 1) > 1e6)
  for (int j = j0; j < j1; j++) {
    double *col = out + (size_t)j * n1;
    for (int i0 = 0; i0 < n1; i0 += TILE) {
      const int len = n1 - i0 < TILE ? n1 - i0 : TILE;
      block_sq_dist(p2, j, p1, i0, len, col + i0);
      kernel_apply(k, col + i0, len);
    }
  }
}

void kernel_block_matrix(const kernel *k, const points *p1, const points *p2,
                         double *out, int nthreads)
{
  kernel_block_columns(k, p1, p2, 0, p2->n, out, nthreads);
}

points points_rows(const points *x, const int *rows, int first, int len,
                   double *buf)
{
  for (int c = 0; c < x->d; c++) {
    const double *col = x->x + (size_t)c * x->n;
    double *out = buf + (size_t)c * len;
    if (rows)
      for (int j = 0; j < len; j++) out[j] = col[rows[j]];
    else
      memcpy(out, col + first, sizeof(double) * (size_t)len);
  }
  const points p = {buf, len, x->d};
  return p;
}
