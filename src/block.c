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
    for (int t = 0; t < len; t++) {
      const double diff = xi - col[t];
      r2[t] += diff * diff;
    }
  }
}

void kernel_block_matmul(const kernel *k, const points *p1, const int *rows,
                         int nrows, const points *p2, const double *A,
                         int ncol, double *out, int ldo, int nthreads)
{
  const int n2 = p2->n;
  const int nchunks = (nrows + ROW_CHUNK - 1) / ROW_CHUNK;
  for (int c = 0; c < ncol; c++)
    memset(out + (size_t)c * ldo, 0, sizeof(double) * (size_t)nrows);

  #pragma omp parallel num_threads(nthreads)
  {
    double kv[TILE];
    /* A chunk of rows is the unit of work: one thread owns each row and adds
     * its tiles in order, so there is no cross-thread sum to reorder.  The
     * column tile is reused by every row of the chunk while it is in cache. */
    #pragma omp for schedule(static)
    for (int ch = 0; ch < nchunks; ch++) {
      const int r0 = ch * ROW_CHUNK;
      const int r1 = r0 + ROW_CHUNK < nrows ? r0 + ROW_CHUNK : nrows;
      for (int j0 = 0; j0 < n2; j0 += TILE) {
        const int len = n2 - j0 < TILE ? n2 - j0 : TILE;
        for (int r = r0; r < r1; r++) {
          block_sq_dist(p1, rows ? rows[r] : r, p2, j0, len, kv);
          kernel_apply(k, kv, len);
          for (int c = 0; c < ncol; c++) {
            const double *a = A + (size_t)c * n2 + j0;
            double s = 0.0;
            for (int t = 0; t < len; t++) s += kv[t] * a[t];
            out[r + (size_t)c * ldo] += s;
          }
        }
      }
    }
  }
}

void kernel_block_matrix(const kernel *k, const points *p1, const points *p2,
                         double *out, int nthreads)
{
  const int n1 = p1->n, n2 = p2->n;
  #pragma omp parallel num_threads(nthreads)
  {
    double kv[TILE];
    #pragma omp for schedule(static)
    for (int i = 0; i < n1; i++) {
      for (int j0 = 0; j0 < n2; j0 += TILE) {
        const int len = n2 - j0 < TILE ? n2 - j0 : TILE;
        block_sq_dist(p1, i, p2, j0, len, kv);
        kernel_apply(k, kv, len);
        for (int t = 0; t < len; t++) out[i + (size_t)(j0 + t) * n1] = kv[t];
      }
    }
  }
}
