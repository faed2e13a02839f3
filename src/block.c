#include <stdlib.h>
#include <string.h>
#include "block.h"
#include "tanimoto.h"
#include "shard.h"
#include "threads.h"
#include "vmath.h"

/* Column tile: the slice of p2 one row is compared with at a time.  The
 * kernel values of a chunk of rows against it (ROW_CHUNK x TILE doubles,
 * 32 KB) stay in L1 while they are multiplied into A, and the distance loop
 * runs contiguously over the tile (vectorisable).  Longer tiles amortise
 * the per-tile reduction of the lane sums in tile_dot. */
#define TILE BLOCK_TILE
/* Rows handled together against one column tile (and in a dense block
 * build, columns against one row tile). */
#define ROW_CHUNK 16
/* Slabs must be whole chunks (block_slab); a compile-time check. */
typedef char slab_holds_whole_chunks[BLOCK_SLAB_ITEMS % ROW_CHUNK == 0 ? 1 : -1];
/* Work (pairs x (d + 1)) per slab of a dense block build: a few tens of
 * milliseconds, so polls are frequent and cost nothing. */
#define BUILD_SLAB_WORK 1e8

/* Squared distances, from block_dist_template.h (which says how): as sums
 * of squared differences in double (coord_dist_points, coord_dist_rows)
 * and in float (the same with suffix 32), and from norms and inner
 * products in double (suffix _dot). */
#define SQ_DIFF(a, b) (((a) - (b)) * ((a) - (b)))
#define SUM_IS_DIST(s, nx, q, ny, j) ((void)(nx), (void)(q), (void)(ny), (void)(j), (s))
#define PRODUCT(a, b) ((a) * (b))
#define DIST_FROM_NORMS(s, nx, q, ny, j) (((nx)[q] + (ny)[j]) - 2 * (s))

#define DIST_SUFFIX
#define DIST_T double
#define DIST_COORDS x
#define DIST_W 8
#define DIST_TERM SQ_DIFF
#define DIST_FINISH SUM_IS_DIST
#include "block_dist_template.h"

#define DIST_SUFFIX _dot
#define DIST_T double
#define DIST_COORDS x
#define DIST_W 8
#define DIST_TERM PRODUCT
#define DIST_FINISH DIST_FROM_NORMS
#include "block_dist_template.h"

#define DIST_SUFFIX 32
#define DIST_T float
#define DIST_COORDS x32
#define DIST_W 16
#define DIST_TERM SQ_DIFF
#define DIST_FINISH SUM_IS_DIST
#include "block_dist_template.h"
#undef SQ_DIFF
#undef SUM_IS_DIST
#undef PRODUCT
#undef DIST_FROM_NORMS

/* Squared distances in double precision for the kernel blocks: from
 * norms and inner products, r2 = (|x|^2 + |y|^2) - 2 x'y, or as sums of
 * squared differences.  The first needs one multiply-add per coordinate
 * instead of a subtraction and a multiply-add, but it cancels: its error
 * is a few units of rounding of |x|^2 + |y|^2 (times about d), however
 * close the points.  So it is used where that is small:
 * - for every family without a cusp at 0 (kernel_info's cusp: all but
 *   Matern-1/2).  The others are flat in r2 at r2 = 0, so the error moves a
 *   kernel value by about as much again, relative to k(0); Matern-1/2 has
 *   k = exp(-r), slope -1 in r = sqrt(r2) at 0, and an error e in r2 would
 *   give near-duplicate points an error of sqrt(e);
 * - where the column points (the training points) are centred: the norm
 *   of their mean at most their spread about it (both squared, per point).
 *   Points close to a column point then have norms of the order of the
 *   spread, and points far from all of them have r2 of the order of their
 *   own norms.  gp_sdd() centres by default (standardize = TRUE).
 * The norms are sums of squares in the inner products' order, so r2(x, x)
 * is exactly 0 and r2 is symmetric. */
static int points_centred(const points *p)
{
  double mean2 = 0.0, msq = 0.0;
  for (int c = 0; c < p->d; c++) {
    const double *col = p->x + c * (size_t)p->n;
    double s = 0.0, s2 = 0.0;
    for (int j = 0; j < p->n; j++) {
      s += col[j];
      s2 += col[j] * col[j];
    }
    mean2 += (s / p->n) * (s / p->n);
    msq += s2 / p->n;
  }
  return mean2 <= msq - mean2;
}

int block_uses_norms(const kernel *k, int single, const points *cols)
{
  return kernel_stationary(k) && !single && !kernel_info_of(k->family)->cusp &&
         points_centred(cols);
}

/* ny[t] = |y|^2 for points j0..j0+len-1 of p. */
SDDGP_HOT
static void sq_norms(const points *p, int j0, int len, double *ny)
{
  for (int t = 0; t < len; t++) ny[t] = 0.0;
  for (int c = 0; c < p->d; c++) {
    const double *col = p->x + c * (size_t)p->n + j0;
    #pragma omp simd
    for (int t = 0; t < len; t++) ny[t] += col[t] * col[t];
  }
}

void block_norms(const points *p, double *out)
{
  sq_norms(p, 0, p->n, out);
}

/* The norms of points j0..j0+len-1 of p: from `all` (block_norms of p) when
 * given, else computed into buf.  Either way the same bits. */
static const double *tile_norms(const points *p, const double *all, int j0,
                                int len, double *buf)
{
  if (all) return all + j0;
  sq_norms(p, j0, len, buf);
  return buf;
}

/* Kernel values of the nr points idx[q] of p1 against points j0..j0+len-1
 * of p2, into out + q * ld, in double: from the squared distances, from
 * the norms of both (nx, ny) where given, else as differences; or for the
 * Tanimoto kernel from the fingerprints' similarities. */
static void kernel_rows(const kernel *k, const points *p1, const int *idx,
                        int nr, const double *nx, const points *p2, int j0,
                        int len, const double *ny, double *out, size_t ld)
{
  if (!kernel_stationary(k))
    tanimoto_rows(p1, idx, nr, p2, j0, len, out, ld);
  else if (ny)
    coord_dist_rows_dot(p1, idx, nr, nx, p2, j0, len, ny, out, ld);
  else
    coord_dist_rows(p1, idx, nr, NULL, p2, j0, len, NULL, out, ld);
  for (int q = 0; q < nr; q++) kernel_apply(k, out + q * ld, len);
}

void block_sq_dist(const points *p1, int i, const points *p2, int j0, int len,
                   double *r2)
{
  coord_dist_points(p1, i, NULL, p2, j0, len, NULL, r2);
}

void block_kernel_values(const kernel *k, const points *p1, int i,
                         const points *p2, int j0, int len, double *out)
{
  kernel_rows(k, p1, &i, 1, NULL, p2, j0, len, NULL, out, (size_t)len);
}

/* The products of kernel values with A, written out so that the compiler
 * vectorises across LANES independent sums without reordering anything:
 * a result has the same bits for any thread count, tile position or
 * vector width.  The lanes run along the columns of K for one column of A
 * (dot_4x1: interleaved partial sums added up in a fixed order at the
 * end), and along the rows for many (dot_16x8). */

/* Four rows of kernel values against one column of A (the posterior
 * mean): the four sums s[r][w] += kv[r][t] a0[t] over t = w, w + LANES,
 * ..., the last len % LANES entries going to the first lanes, each then
 * totalled in lanes_total's fixed order into tot[r].  Four independent
 * vector sums hide the latency of the additions. */
SDDGP_HOT
static void dot_4x1(const double *const *kv, const double *a0, int len,
                    double *tot)
{
  const int full = len - len % LANES;
  const double *k0 = kv[0], *k1 = kv[1], *k2 = kv[2], *k3 = kv[3];
  double s[4][LANES];
  for (int i = 0; i < 4; i++)
    for (int w = 0; w < LANES; w++) s[i][w] = 0.0;
  for (int t = 0; t < full; t += LANES) {
    #pragma omp simd
    for (int w = 0; w < LANES; w++) {
      const double b0 = a0[t + w];
      s[0][w] += k0[t + w] * b0; s[1][w] += k1[t + w] * b0;
      s[2][w] += k2[t + w] * b0; s[3][w] += k3[t + w] * b0;
    }
  }
  for (int t = full; t < len; t++)
    for (int r = 0; r < 4; r++) s[r][t - full] += kv[r][t] * a0[t];
  for (int r = 0; r < 4; r++) tot[r] = lanes_total(s[r]);
}

/* Sixteen rows (a whole chunk) against eight columns of A, with the
 * kernel values transposed, kt[t][off + r]: each step of t is two
 * vectors of kernel values (rows 0-7 and 8-15) times eight broadcast
 * entries of A, sixteen independent sums s[q][w] (row w, or w + 8 for
 * q >= 8, column q mod 8), each over t in order.  The sums need no
 * reduction across lanes at the end, and each load of A serves sixteen
 * rows: with many columns (the posterior samples) this is faster than
 * dot_4x1's layout taken four columns at a time (see the benchmarks).
 * The transpose product uses it too, with the roles swapped: the sum then
 * runs over rows of K (kt[t] a row, read in place from a cache), the lanes
 * along its columns.  The sums start from acc[] (row r of column q at
 * acc[r + ldacc q]) and are stored back there. */
typedef char chunk_is_two_vectors[ROW_CHUNK == 2 * LANES ? 1 : -1];
SDDGP_HOT
static void dot_16x8(const double *const *kt, int off, const double *const *a,
                     int len, double *acc, size_t ldacc)
{
  const double *a0 = a[0], *a1 = a[1], *a2 = a[2], *a3 = a[3];
  const double *a4 = a[4], *a5 = a[5], *a6 = a[6], *a7 = a[7];
  double s[16][LANES];
  for (int q = 0; q < 8; q++)
    for (int w = 0; w < LANES; w++) {
      s[q][w] = acc[w + ldacc * q];
      s[8 + q][w] = acc[LANES + w + ldacc * q];
    }
  for (int t = 0; t < len; t++) {
    const double *k = kt[t] + off;
    const double b0 = a0[t], b1 = a1[t], b2 = a2[t], b3 = a3[t];
    const double b4 = a4[t], b5 = a5[t], b6 = a6[t], b7 = a7[t];
    #pragma omp simd
    for (int w = 0; w < LANES; w++) {
      const double u = k[w], v = k[LANES + w];
      s[0][w] += u * b0;  s[1][w] += u * b1;  s[2][w] += u * b2;  s[3][w] += u * b3;
      s[4][w] += u * b4;  s[5][w] += u * b5;  s[6][w] += u * b6;  s[7][w] += u * b7;
      s[8][w] += v * b0;  s[9][w] += v * b1;  s[10][w] += v * b2; s[11][w] += v * b3;
      s[12][w] += v * b4; s[13][w] += v * b5; s[14][w] += v * b6; s[15][w] += v * b7;
    }
  }
  for (int q = 0; q < 8; q++)
    for (int w = 0; w < LANES; w++) {
      acc[w + ldacc * q] = s[q][w];
      acc[LANES + w + ldacc * q] = s[8 + q][w];
    }
}

/* dot_16x8 for one column of A: the same two sums per row pair, in the
 * same order, so a column has the same bits whichever of the two computes
 * it (and so whatever the number of columns). */
SDDGP_HOT
static void dot_16x1(const double *const *kt, int off, const double *a0,
                     int len, double *acc)
{
  double s[2][LANES];
  for (int w = 0; w < LANES; w++) {
    s[0][w] = acc[w];
    s[1][w] = acc[LANES + w];
  }
  for (int t = 0; t < len; t++) {
    const double *k = kt[t] + off;
    const double b0 = a0[t];
    #pragma omp simd
    for (int w = 0; w < LANES; w++) {
      s[0][w] += k[w] * b0;
      s[1][w] += k[LANES + w] * b0;
    }
  }
  for (int w = 0; w < LANES; w++) {
    acc[w] = s[0][w];
    acc[LANES + w] = s[1][w];
  }
}

/* kvT[t * ROW_CHUNK + r] = k[r][t]: a chunk's kernel values transposed
 * for dot_16x8, one contiguous row of kvT per t (sixteen loads, and stores
 * the compiler can merge; about 10% faster than the other loop order). */
SDDGP_HOT
static void transpose_chunk(const double *const *k, int len, double *kvT)
{
  const double *k0 = k[0], *k1 = k[1], *k2 = k[2], *k3 = k[3];
  const double *k4 = k[4], *k5 = k[5], *k6 = k[6], *k7 = k[7];
  const double *k8 = k[8], *k9 = k[9], *k10 = k[10], *k11 = k[11];
  const double *k12 = k[12], *k13 = k[13], *k14 = k[14], *k15 = k[15];
  for (int t = 0; t < len; t++) {
    double *o = kvT + (size_t)ROW_CHUNK * t;
    o[0] = k0[t];   o[1] = k1[t];   o[2] = k2[t];   o[3] = k3[t];
    o[4] = k4[t];   o[5] = k5[t];   o[6] = k6[t];   o[7] = k7[t];
    o[8] = k8[t];   o[9] = k9[t];   o[10] = k10[t]; o[11] = k11[t];
    o[12] = k12[t]; o[13] = k13[t]; o[14] = k14[t]; o[15] = k15[t];
  }
}

/* out[i + c * ldo] += sum_t kt[t][off + i] A[t + c * lda] for i < nr
 * (at most ROW_CHUNK) and columns c0 <= c < ncol: dot_16x8 eight columns
 * at a time, then dot_16x1, each sum starting from out's entry and adding
 * the terms in order.  A whole chunk is summed in place; a partial one
 * (the last rows) through tot, with the same arithmetic, so an entry's bits
 * depend neither on the number of columns nor on where its row falls. */
SDDGP_HOT
static void dot_columns(const double *const *kt, int off, const double *A,
                        int lda, int c0, int ncol, int len, int nr,
                        double *out, int ldo)
{
  double tot[ROW_CHUNK * 8];
  const int whole = nr == ROW_CHUNK;
  int c = c0;
  while (c < ncol) {
    const int nc = ncol - c >= 8 ? 8 : 1;
    double *o = out + (size_t)c * ldo, *acc = whole ? o : tot;
    const size_t ld = whole ? (size_t)ldo : ROW_CHUNK;
    if (!whole)
      for (int q = 0; q < nc; q++)
        for (int i = 0; i < ROW_CHUNK; i++)
          tot[i + ROW_CHUNK * q] = i < nr ? o[i + (size_t)q * ldo] : 0.0;
    if (nc == 8) {
      const double *a[8];
      for (int q = 0; q < 8; q++) a[q] = A + (size_t)(c + q) * lda;
      dot_16x8(kt, off, a, len, acc, ld);
    } else
      dot_16x1(kt, off, A + (size_t)c * lda, len, acc);
    if (!whole)
      for (int q = 0; q < nc; q++)
        for (int i = 0; i < nr; i++) o[i + (size_t)q * ldo] = tot[i + ROW_CHUNK * q];
    c += nc;
  }
}

/* out[r + c * ldo] += sum_t kv[r][t] A[t + c * lda] for the nr rows of a
 * chunk and every column c.  Column 0 (the posterior mean) is always summed
 * by dot_4x1, so the mean has the same bits with or without samples.  The
 * other columns go through dot_16x8, eight at a time, and dot_16x1 for the
 * last few, with the kernel values transposed once for all of them; either
 * gives a column the same bits, so the samples do not depend on how many
 * are drawn. */
static void tile_dot(const double *const *kv, int nr, int len, const double *A,
                     int lda, int ncol, double *out, int ldo)
{
  static const double zeros[TILE] = {0.0};
  for (int r = 0; r < nr; r += 4) {
    const double *k[4];
    double tot[4];
    for (int i = 0; i < 4; i++) k[i] = r + i < nr ? kv[r + i] : zeros;
    dot_4x1(k, A, len, tot);
    for (int i = 0; i < 4 && r + i < nr; i++) out[r + i] += tot[i];
  }
  if (ncol == 1) return;

  double kvT[ROW_CHUNK * TILE];
  const double *k[ROW_CHUNK];
  for (int r = 0; r < ROW_CHUNK; r++) k[r] = r < nr ? kv[r] : zeros;
  transpose_chunk(k, len, kvT);
  const double *kt[TILE];
  for (int t = 0; t < len; t++) kt[t] = kvT + (size_t)ROW_CHUNK * t;
  dot_columns(kt, 0, A, lda, 1, ncol, len, nr, out, ldo);
}

/* Kernel values of a chunk of row points against points j0..j0+len-1 of
 * x2 (block_product's tile function): slices of the cache, or computed into
 * buf four rows at a time (sq_dist_rows, with the tile's norms computed
 * once for the chunk).  In single precision the float values, cached or
 * computed from x32 (always as differences: in float the cancellation of
 * the inner products would cost several digits), are widened into buf. */
#define TILE_ROWS 4
typedef struct {
  const kernel_op *op;
  int norms; /* distances from norms (block_uses_norms), decided once */
} tiles_ctx;

static tiles_ctx tiles_for(const kernel_op *op)
{
  tiles_ctx t = {op, 0};
  if (!op->cache && !op->no_norms)
    t.norms = op->norms2 || block_uses_norms(op->k, op->single, op->x2);
  return t;
}

SDDGP_HOT
static void block_tiles(const void *ctx, const int *rows, int first, int nr,
                        int j0, int len, double *buf, int ldb,
                        const double **kv)
{
  const kernel_op *op = ((const tiles_ctx *)ctx)->op;
  const int norms = ((const tiles_ctx *)ctx)->norms;
  const size_t n2 = (size_t)op->x2->n;
  if (op->cache) { /* rows of the symmetric cache, read in place */
    for (int q = 0; q < nr; q++)
      kv[q] = op->cache + block_row(rows, first, q) * n2 + j0;
    return;
  }
  double nyb[TILE];
  const double *ny = norms ? tile_norms(op->x2, op->norms2, j0, len, nyb) : NULL;
  for (int q0 = 0; q0 < nr; q0 += TILE_ROWS) {
    const int nq = nr - q0 < TILE_ROWS ? nr - q0 : TILE_ROWS;
    int idx[TILE_ROWS];
    double nx[TILE_ROWS];
    for (int q = 0; q < nq; q++) {
      idx[q] = block_row(rows, first, q0 + q);
      if (norms) nx[q] = *tile_norms(op->x1, op->norms1, idx[q], 1, nx + q);
    }
    double *b = buf + (size_t)q0 * ldb;
    if (op->single) {
      float v[TILE_ROWS * TILE];
      const float *vals[TILE_ROWS];
      if (op->cache32) {
        for (int q = 0; q < nq; q++) vals[q] = op->cache32 + idx[q] * n2 + j0;
      } else {
        coord_dist_rows32(op->x1, idx, nq, NULL, op->x2, j0, len, NULL, v, TILE);
        for (int q = 0; q < nq; q++) {
          vals[q] = v + (size_t)q * TILE;
          kernel_apply32(op->k, v + (size_t)q * TILE, len);
        }
      }
      for (int q = 0; q < nq; q++) {
        double *out = b + (size_t)q * ldb;
        #pragma omp simd
        for (int t = 0; t < len; t++) out[t] = vals[q][t];
      }
    } else {
      kernel_rows(op->k, op->x1, idx, nq, nx, op->x2, j0, len, ny, b, (size_t)ldb);
    }
    for (int q = 0; q < nq; q++) kv[q0 + q] = b + (size_t)q * ldb;
  }
}

/* Columns are taken a panel at a time, each panel (its points and its rows
 * of A) small enough to stay in a core's L2 cache while every chunk of
 * the thread's rows passes over it.  Taken chunk by chunk over all
 * columns, the column points would be read from memory once per chunk: at
 * n = 1e6, d = 8, 64 MB each time, 2 GB per SDD step of 512 rows, and the
 * distance loop waits on those loads.  Each row still adds its tiles in
 * column order, so the bits are those of any panel width. */
#define PANEL_BYTES (256 * 1024)

/* block_product() added to out, A with leading dimension lda. */
static void block_product_add(block_tile_fn tile, const void *ctx, double entry_cost,
                              size_t col_bytes, const int *rows, int nrows, int ncols,
                              const double *A, int lda, int ncol, double *out, int ldo,
                              int nthreads)
{
  const int nchunks = (nrows + ROW_CHUNK - 1) / ROW_CHUNK;
  const size_t per_col = col_bytes + sizeof(double) * (size_t)ncol;
  const int tiles = (int)(PANEL_BYTES / (per_col * TILE));
  const int panel = TILE * (tiles > 1 ? tiles : 1);

  const double work = (double)nrows * ncols * (entry_cost + ncol);
  #pragma omp parallel num_threads(threads_team(nthreads)) \
      if (nchunks > 1 && work > PARALLEL_MIN_WORK)
  {
    double buf[ROW_CHUNK * TILE];
    /* A chunk of rows is the unit of work: one thread owns each row (a
     * fixed, contiguous range of chunks) and adds its tiles in order, so
     * there is no cross-thread sum to reorder.  The tile of A (TILE x ncol)
     * is reused by every row of the chunk while it is in L1, the panel by
     * every chunk of the thread while it is in L2. */
    const int nt = omp_get_num_threads(), id = omp_get_thread_num();
    const int ch0 = (int)((long long)nchunks * id / nt);
    const int ch1 = (int)((long long)nchunks * (id + 1) / nt);
    for (int p0 = 0; p0 < ncols; p0 += panel) {
      const int p1 = ncols - p0 < panel ? ncols : p0 + panel;
      for (int ch = ch0; ch < ch1; ch++) {
        const int r0 = ch * ROW_CHUNK;
        const int r1 = r0 + ROW_CHUNK < nrows ? r0 + ROW_CHUNK : nrows;
        for (int j0 = p0; j0 < p1; j0 += TILE) {
          const int len = p1 - j0 < TILE ? p1 - j0 : TILE;
          const double *kv[ROW_CHUNK];
          tile(ctx, rows, r0, r1 - r0, j0, len, buf, TILE, kv);
          tile_dot(kv, r1 - r0, len, A + j0, lda, ncol, out + r0, ldo);
        }
      }
    }
  }
}

void block_product(block_tile_fn tile, const void *ctx, double entry_cost,
                   size_t col_bytes, const int *rows, int nrows, int ncols,
                   const double *A, int ncol, double *out, int ldo,
                   int nthreads)
{
  for (int c = 0; c < ncol; c++)
    memset(out + (size_t)c * ldo, 0, sizeof(double) * (size_t)nrows);
  block_product_add(tile, ctx, entry_cost, col_bytes, rows, nrows, ncols, A, ncols,
                    ncol, out, ldo, nthreads);
}

void kernel_op_row_values(const kernel_op *op, int i, double *out)
{
  const int n2 = op->x2->n;
  const tiles_ctx ctx = tiles_for(op);
  for (int j0 = 0; j0 < n2; j0 += TILE) {
    const int len = n2 - j0 < TILE ? n2 - j0 : TILE;
    const double *v;
    block_tiles(&ctx, &i, 0, 1, j0, len, out + j0, TILE, &v);
    if (v != out + j0) memcpy(out + j0, v, sizeof(double) * (size_t)len);
  }
}

void kernel_op_rows_add(const kernel_op *op, const int *rows, int nrows,
                        const double *A, int lda, int ncol, double *out, int ldo,
                        int nthreads)
{
  const tiles_ctx ctx = tiles_for(op);
  /* A column brings its coordinates and norm (or its fingerprint); from a
   * cache, nothing that another chunk of rows reuses.  A kernel value
   * costs about a flop per coordinate (per word or entry of a
   * fingerprint). */
  const int stationary = kernel_stationary(op->k);
  const double fp_bytes = stationary ? 0.0 : tanimoto_point_bytes(op->x2);
  const size_t col_bytes = op->cache || op->cache32 ? 0 :
    !stationary ? (size_t)fp_bytes :
    op->single ? sizeof(float) * (size_t)op->x2->d :
    sizeof(double) * (size_t)(op->x2->d + 1);
  block_product_add(block_tiles, &ctx, stationary ? op->x1->d : fp_bytes / 8.0,
                    col_bytes, rows, nrows, op->x2->n, A, lda, ncol, out, ldo,
                    nthreads);
}

void kernel_op_rows(const kernel_op *op, const int *rows, int nrows,
                    const double *A, int ncol, double *out, int ldo,
                    int nthreads)
{
  if (op->shard) {
    shard_rows(op->shard, rows, nrows, A, ncol, out, ldo, nthreads);
    return;
  }
  for (int c = 0; c < ncol; c++)
    memset(out + (size_t)c * ldo, 0, sizeof(double) * (size_t)nrows);
  kernel_op_rows_add(op, rows, nrows, A, op->x2->n, ncol, out, ldo, nthreads);
}

/* Rows of K taken together by the transpose product: their kernel values
 * against a column tile (ROWS_T_GROUP x TILE, 64 KB when computed) stay in
 * cache while every column of U is multiplied in. */
#define ROWS_T_GROUP 32

void kernel_op_rows_t(const kernel_op *op, const int *rows, int nrows,
                      const double *U, int ncol, double *out, int ldo,
                      int nthreads)
{
  const int n2 = op->x2->n, ntiles = (n2 + TILE - 1) / TILE;
  const double work = (double)nrows * n2 * (op->x1->d + ncol);
  const tiles_ctx ctx = tiles_for(op);
  /* Threads split x2 into tiles: each output entry is summed by one thread,
   * over the rows in order. */
  #pragma omp parallel num_threads(threads_team(nthreads)) \
      if (ntiles > 1 && work > PARALLEL_MIN_WORK)
  {
    double buf[ROWS_T_GROUP * TILE], pad[ROWS_T_GROUP * ROW_CHUNK];
    const double *kt[ROWS_T_GROUP], *kp[ROWS_T_GROUP];
    for (int q = 0; q < ROWS_T_GROUP; q++) kp[q] = pad + (size_t)q * ROW_CHUNK;
    #pragma omp for schedule(static)
    for (int g = 0; g < ntiles; g++) {
      const int j0 = g * TILE, len = n2 - j0 < TILE ? n2 - j0 : TILE;
      for (int c = 0; c < ncol; c++)
        memset(out + j0 + (size_t)c * ldo, 0, sizeof(double) * (size_t)len);
      for (int r0 = 0; r0 < nrows; r0 += ROWS_T_GROUP) {
        const int nq = nrows - r0 < ROWS_T_GROUP ? nrows - r0 : ROWS_T_GROUP;
        block_tiles(&ctx, rows, r0, nq, j0, len, buf, TILE, kt);
        /* The rows are dot_16x8's transposed layout, sixteen columns of the
         * tile at a time; the last few are copied out with zeros after them,
         * as a chunk reads sixteen. */
        int t0 = 0;
        for (; t0 + ROW_CHUNK <= len; t0 += ROW_CHUNK)
          dot_columns(kt, t0, U + r0, nrows, 0, ncol, nq, ROW_CHUNK, out + j0 + t0, ldo);
        if (t0 < len) {
          for (int q = 0; q < nq; q++)
            for (int i = 0; i < ROW_CHUNK; i++)
              pad[i + (size_t)q * ROW_CHUNK] = t0 + i < len ? kt[q][t0 + i] : 0.0;
          dot_columns(kp, 0, U + r0, nrows, 0, ncol, nq, len - t0, out + j0 + t0, ldo);
        }
      }
    }
  }
}

/* Columns j0..j1-1 of K(p1, p2) into the same places of out.  Column j is
 * point j of p2 against all of p1 (k is symmetric), written contiguously.
 * A chunk of ROW_CHUNK columns is computed tile by tile of p1, so that the
 * tile's coordinates (TILE x d) are read from memory once per chunk rather
 * than once per column (at d = 80 a build ran 1.4 times as fast).  Small
 * blocks run on one thread (PARALLEL_MIN_WORK). */
static void block_columns(const kernel *k, const points *p1, const points *p2,
                          int j0, int j1, int single, int norms,
                          const double *p1_norms, void *out, int nthreads)
{
  const int n1 = p1->n;
  #pragma omp parallel for num_threads(threads_team(nthreads)) schedule(static) \
      if ((double)(j1 - j0) * n1 * (p1->d + 1) > PARALLEL_MIN_WORK)
  for (int g = j0; g < j1; g += ROW_CHUNK) {
    const int nj = j1 - g < ROW_CHUNK ? j1 - g : ROW_CHUNK;
    int idx[ROW_CHUNK];
    double nx[ROW_CHUNK];
    for (int q = 0; q < nj; q++) idx[q] = g + q;
    if (norms) sq_norms(p2, g, nj, nx);
    for (int i0 = 0; i0 < n1; i0 += TILE) {
      const int len = n1 - i0 < TILE ? n1 - i0 : TILE;
      const size_t at = (size_t)g * n1 + i0;
      if (single) {
        coord_dist_rows32(p2, idx, nj, NULL, p1, i0, len, NULL, (float *)out + at,
                          (size_t)n1);
        for (int q = 0; q < nj; q++)
          kernel_apply32(k, (float *)out + at + (size_t)q * n1, len);
      } else {
        double nyb[TILE];
        const double *ny = norms ? tile_norms(p1, p1_norms, i0, len, nyb) : NULL;
        kernel_rows(k, p2, idx, nj, nx, p1, i0, len, ny, (double *)out + at, (size_t)n1);
      }
    }
  }
}

int kernel_block_build(const kernel *k, const points *p1, const points *p2,
                       int single, void *out, int nthreads,
                       solver_callback callback, void *ctx)
{
  const int n2 = p2->n;
  const int slab = block_slab(n2, (double)p1->n * (p1->d + 1), BUILD_SLAB_WORK);
  /* Decided on p2, the points of K's columns, as kernel_op decides on x2.
   * p1's norms are computed once rather than for every chunk of columns
   * (if they cannot be allocated, chunk by chunk: the same bits). */
  const int norms = block_uses_norms(k, single, p2);
  double *p1_norms = norms ? malloc(sizeof(double) * (size_t)p1->n) : NULL;
  if (p1_norms) block_norms(p1, p1_norms);
  int stopped = 0;
  for (int j0 = 0; j0 < n2 && !stopped; j0 += slab) {
    const int j1 = n2 - j0 < slab ? n2 : j0 + slab;
    block_columns(k, p1, p2, j0, j1, single, norms, p1_norms, out, nthreads);
    stopped = j1 < n2 && callback && callback(ctx, 0, NULL);
  }
  free(p1_norms);
  return stopped;
}

void kernel_block_matrix(const kernel *k, const points *p1, const points *p2,
                         double *out, int nthreads)
{
  kernel_block_build(k, p1, p2, 0, out, nthreads, NULL, NULL);
}

int block_slab(int n, double per_item, double work)
{
  const double fit = work / (per_item + 1.0);
  if (fit >= n) return n > 0 ? n : 1;
  return BLOCK_SLAB_ITEMS * (fit < BLOCK_SLAB_ITEMS ? 1 : (int)(fit / BLOCK_SLAB_ITEMS));
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
  const points p = {buf, len, x->d, NULL, NULL};
  return p;
}
