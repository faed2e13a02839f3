#include <stdlib.h>
#include <string.h>
#include "block.h"
#include "omp_compat.h"
#include "vmath.h"

/* Column tile: the slice of p2 one row is compared with at a time.  128
 * points x d coordinates stay in L1/L2 while a thread sweeps its rows, and
 * the distance loop runs contiguously over the tile (vectorisable). */
#define TILE 128
/* Rows handled together against one column tile. */
#define ROW_CHUNK 16

/* Squared distances from point i of p1 to W points of p2 at once, one per
 * SIMD lane, summed over the coordinates in registers (the compiler will
 * not vectorise a loop over points with a variable-length loop over
 * coordinates inside).  j0: the first point, or with cols, the points
 * cols[0..W-1].  Every distance the package uses is computed here (or by
 * the single-point remainder below, which sums in the same order), so a
 * kernel value has the same bits whichever way it is reached. */
#define W 8
#define SQ_DIST_LANES(point)                                      \
  double s[W] = {0.0};                                            \
  for (int c = 0; c < p2->d; c++) {                               \
    const double xc = xi[c * n1];                                 \
    const double *col = p2->x + c * (size_t)p2->n;                \
    _Pragma("omp simd")                                           \
    for (int w = 0; w < W; w++) {                                 \
      const double diff = xc - col[point];                        \
      s[w] += diff * diff;                                        \
    }                                                             \
  }                                                               \
  for (int w = 0; w < W; w++) r2[w] = s[w];

static inline void sq_dist_lanes(const double *xi, size_t n1, const points *p2,
                                 int j0, double *r2)
{
  SQ_DIST_LANES(j0 + w)
}

static inline void sq_dist_lanes_gather(const double *xi, size_t n1,
                                        const points *p2, const int *cols,
                                        double *r2)
{
  SQ_DIST_LANES(cols[w])
}
#undef SQ_DIST_LANES

static inline double sq_dist_one(const double *xi, size_t n1, const points *p2, int j)
{
  double s = 0.0;
  for (int c = 0; c < p2->d; c++) {
    const double diff = xi[c * n1] - p2->x[c * (size_t)p2->n + j];
    s += diff * diff;
  }
  return s;
}

/* Distances from point i of p1 to points j0..j0+len-1 of p2, or with cols
 * to points cols[0..len-1]. */
SDDGP_HOT
static void sq_dist_points(const points *p1, int i, const points *p2,
                           const int *cols, int j0, int len, double *r2)
{
  const double *xi = p1->x + i;
  const size_t n1 = (size_t)p1->n;
  int t = 0;
  if (cols)
    for (; t + W <= len; t += W) sq_dist_lanes_gather(xi, n1, p2, cols + t, r2 + t);
  else
    for (; t + W <= len; t += W) sq_dist_lanes(xi, n1, p2, j0 + t, r2 + t);
  for (; t < len; t++) r2[t] = sq_dist_one(xi, n1, p2, cols ? cols[t] : j0 + t);
}
#undef W

void block_sq_dist(const points *p1, int i, const points *p2, int j0, int len,
                   double *r2)
{
  sq_dist_points(p1, i, p2, NULL, j0, len, r2);
}

/* out[c * ldo] += sum_t kv[t] A[t + c * lda] for every column c, four
 * columns at a time sharing each load of kv.  Each sum is kept as LANES
 * interleaved partial sums (lane w takes t = w, w + LANES, ...), added up
 * in a fixed order at the end.  Written out like this the compiler
 * vectorises across the lanes without reordering anything, so a result
 * has the same bits for any thread count, tile position or vector width. */
#define LANES 8

static inline double lanes_total(const double *s)
{
  return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
}

/* One partial sum of every lane: s[w] += k[t + w] a[t + w] over a tile,
 * the last len % LANES entries going to the first lanes. */
#define LANE_SUMS(s, k, a)                                      \
  do {                                                          \
    for (int t = 0; t < full; t += LANES) {                     \
      _Pragma("omp simd")                                       \
      for (int w = 0; w < LANES; w++) s[w] += k[t + w] * a[t + w]; \
    }                                                           \
    for (int t = full; t < len; t++) s[t - full] += k[t] * a[t]; \
  } while (0)

/* out[r + c * ldo] += sum_t kv[r][t] A[t + c * lda] for the nr rows of a
 * chunk and every column c.  Blocks of four columns of A (4 x TILE values,
 * in L1) are swept over the rows in pairs: eight independent sums hide the
 * latency of the additions, and each load of A serves two rows. */
SDDGP_HOT
static void tile_dot(const double *const *kv, int nr, int len, const double *A,
                     int lda, int ncol, double *out, int ldo)
{
  const int full = len - len % LANES;
  int c = 0;
  for (; c + 4 <= ncol; c += 4) {
    const double *a0 = A + (size_t)c * lda, *a1 = a0 + lda, *a2 = a1 + lda,
                 *a3 = a2 + lda;
    int r = 0;
    for (; r + 2 <= nr; r += 2) {
      const double *kv0 = kv[r], *kv1 = kv[r + 1];
      double s[8][LANES] = {{0.0}};
      for (int t = 0; t < full; t += LANES) {
        #pragma omp simd
        for (int w = 0; w < LANES; w++) {
          const double k0 = kv0[t + w], k1 = kv1[t + w];
          const double b0 = a0[t + w], b1 = a1[t + w], b2 = a2[t + w], b3 = a3[t + w];
          s[0][w] += k0 * b0;
          s[1][w] += k0 * b1;
          s[2][w] += k0 * b2;
          s[3][w] += k0 * b3;
          s[4][w] += k1 * b0;
          s[5][w] += k1 * b1;
          s[6][w] += k1 * b2;
          s[7][w] += k1 * b3;
        }
      }
      for (int t = full; t < len; t++) {
        s[0][t - full] += kv0[t] * a0[t];
        s[1][t - full] += kv0[t] * a1[t];
        s[2][t - full] += kv0[t] * a2[t];
        s[3][t - full] += kv0[t] * a3[t];
        s[4][t - full] += kv1[t] * a0[t];
        s[5][t - full] += kv1[t] * a1[t];
        s[6][t - full] += kv1[t] * a2[t];
        s[7][t - full] += kv1[t] * a3[t];
      }
      for (int q = 0; q < 4; q++) {
        out[r + (size_t)(c + q) * ldo] += lanes_total(s[q]);
        out[r + 1 + (size_t)(c + q) * ldo] += lanes_total(s[4 + q]);
      }
    }
    if (r < nr) {
      double s[4][LANES] = {{0.0}};
      LANE_SUMS(s[0], kv[r], a0);
      LANE_SUMS(s[1], kv[r], a1);
      LANE_SUMS(s[2], kv[r], a2);
      LANE_SUMS(s[3], kv[r], a3);
      for (int q = 0; q < 4; q++) out[r + (size_t)(c + q) * ldo] += lanes_total(s[q]);
    }
  }
  for (; c < ncol; c++) {
    const double *a = A + (size_t)c * lda;
    for (int r = 0; r < nr; r++) {
      double s[LANES] = {0.0};
      LANE_SUMS(s, kv[r], a);
      out[r + (size_t)c * ldo] += lanes_total(s);
    }
  }
}
#undef LANE_SUMS

/* Kernel values of row point i against the column tile j0..j0+len-1 of
 * the block (columns cols[j0..] of x2, or x2's own j0.. when cols is NULL):
 * a slice of the cache, or computed into buf. */
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
  sq_dist_points(op->x1, i, op->x2, cols, 0, len, buf);
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
    double buf[ROW_CHUNK * TILE];
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
        const double *kv[ROW_CHUNK];
        for (int r = r0; r < r1; r++)
          kv[r - r0] = block_tile(op, rows ? rows[r] : r, cols, j0, len,
                                  buf + (size_t)(r - r0) * TILE);
        tile_dot(kv, r1 - r0, len, A + j0, ncols, ncol, out + r0, ldo);
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
