#include <stdlib.h>
#include <string.h>
#include "block.h"
#include "omp_compat.h"
#include "vmath.h"

/* Column tile: the slice of p2 one row is compared with at a time.  The
 * kernel values of a chunk of rows against it (ROW_CHUNK x TILE doubles,
 * 32 KB) stay in L1 while they are multiplied into A, and the distance loop
 * runs contiguously over the tile (vectorisable).  Longer tiles amortise
 * the per-tile reduction of the lane sums in tile_dot. */
#define TILE 256
/* Rows handled together against one column tile (and in a dense block
 * build, columns against one row tile). */
#define ROW_CHUNK 16
/* Slabs must be whole chunks (block_slab); a compile-time check. */
typedef char slab_holds_whole_chunks[BLOCK_SLAB_ITEMS % ROW_CHUNK == 0 ? 1 : -1];
/* Work (pairs x (d + 1)) per slab of a dense block build: a few tens of
 * milliseconds, so polls are frequent and cost nothing. */
#define BUILD_SLAB_WORK 1e8

/* Squared distances from point i of p1 to W points of p2 at once, one per
 * SIMD lane, summed over the coordinates in registers (the compiler will
 * not vectorise a loop over points with a variable-length loop over
 * coordinates inside).  Every distance the package uses is computed by
 * these functions, or by the single-point remainder, which sums in the
 * same order, so a kernel value has the same bits whichever way it is
 * reached.  They are written once for both precisions: T the type, COORDS
 * the points' coordinates in it (x or x32), W the lanes (one AVX-512
 * vector), and SUFFIX names the set:
 *   sq_dist_points<SUFFIX>(p1, i, p2, j0, len, r2): distances from
 *   point i of p1 to points j0..j0+len-1 of p2. */
#define DEFINE_SQ_DIST(SUFFIX, T, COORDS, W)                                  \
  static inline void sq_dist_lanes##SUFFIX(const T *xi, size_t n1,            \
                                           const points *p2, int j0, T *r2)   \
  {                                                                           \
    T s[W] = {0};                                                             \
    for (int c = 0; c < p2->d; c++) {                                         \
      const T xc = xi[c * n1];                                                \
      const T *col = p2->COORDS + c * (size_t)p2->n;                          \
      _Pragma("omp simd")                                                     \
      for (int w = 0; w < W; w++) {                                           \
        const T diff = xc - col[j0 + w];                                      \
        s[w] += diff * diff;                                                  \
      }                                                                       \
    }                                                                         \
    for (int w = 0; w < W; w++) r2[w] = s[w];                                 \
  }                                                                           \
                                                                              \
  static inline T sq_dist_one##SUFFIX(const T *xi, size_t n1,                 \
                                      const points *p2, int j)                \
  {                                                                           \
    T s = 0;                                                                  \
    for (int c = 0; c < p2->d; c++) {                                         \
      const T diff = xi[c * n1] - p2->COORDS[c * (size_t)p2->n + j];          \
      s += diff * diff;                                                       \
    }                                                                         \
    return s;                                                                 \
  }                                                                           \
                                                                              \
  SDDGP_HOT                                                                   \
  static void sq_dist_points##SUFFIX(const points *p1, int i,                 \
                                     const points *p2, int j0, int len,       \
                                     T *r2)                                   \
  {                                                                           \
    const T *xi = p1->COORDS + i;                                             \
    const size_t n1 = (size_t)p1->n;                                          \
    int t = 0;                                                                \
    for (; t + W <= len; t += W)                                              \
      sq_dist_lanes##SUFFIX(xi, n1, p2, j0 + t, r2 + t);                      \
    for (; t < len; t++)                                                      \
      r2[t] = sq_dist_one##SUFFIX(xi, n1, p2, j0 + t);                        \
  }

DEFINE_SQ_DIST(, double, x, 8)
DEFINE_SQ_DIST(32, float, x32, 16)
#undef DEFINE_SQ_DIST

void block_sq_dist(const points *p1, int i, const points *p2, int j0, int len,
                   double *r2)
{
  sq_dist_points(p1, i, p2, j0, len, r2);
}

/* The products of kernel values with A.  Each sum is kept as LANES
 * interleaved partial sums (lane w takes t = w, w + LANES, ...), added up
 * in a fixed order at the end.  Written out like this the compiler
 * vectorises across the lanes without reordering anything, so a result
 * has the same bits for any thread count, tile position or vector width. */
#define LANES 8

static inline double lanes_total(const double *s)
{
  return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
}

/* Four rows of kernel values against four columns of A: the sixteen sums
 * s[4 r + q][w] += kv[r][t] a[q][t] over t = w, w + LANES, ..., the last
 * len % LANES entries going to the first lanes, each then totalled in
 * lanes_total's fixed order into tot[r + 4 q].  Sixteen independent
 * vector sums hide the latency of the additions; each load of A serves
 * four rows and each load of kv four columns. */
SDDGP_HOT
static void dot_4x4(const double *const *kv, const double *const *a, int len,
                    double *tot)
{
  const int full = len - len % LANES;
  const double *k0 = kv[0], *k1 = kv[1], *k2 = kv[2], *k3 = kv[3];
  const double *a0 = a[0], *a1 = a[1], *a2 = a[2], *a3 = a[3];
  double s[16][LANES];
  for (int i = 0; i < 16; i++)
    for (int w = 0; w < LANES; w++) s[i][w] = 0.0;
  for (int t = 0; t < full; t += LANES) {
    #pragma omp simd
    for (int w = 0; w < LANES; w++) {
      const double b0 = a0[t + w], b1 = a1[t + w], b2 = a2[t + w], b3 = a3[t + w];
      const double r0 = k0[t + w], r1 = k1[t + w], r2 = k2[t + w], r3 = k3[t + w];
      s[0][w] += r0 * b0;  s[1][w] += r0 * b1;  s[2][w] += r0 * b2;  s[3][w] += r0 * b3;
      s[4][w] += r1 * b0;  s[5][w] += r1 * b1;  s[6][w] += r1 * b2;  s[7][w] += r1 * b3;
      s[8][w] += r2 * b0;  s[9][w] += r2 * b1;  s[10][w] += r2 * b2; s[11][w] += r2 * b3;
      s[12][w] += r3 * b0; s[13][w] += r3 * b1; s[14][w] += r3 * b2; s[15][w] += r3 * b3;
    }
  }
  for (int t = full; t < len; t++)
    for (int r = 0; r < 4; r++)
      for (int q = 0; q < 4; q++) s[4 * r + q][t - full] += kv[r][t] * a[q][t];
  for (int r = 0; r < 4; r++)
    for (int q = 0; q < 4; q++) tot[r + 4 * q] = lanes_total(s[4 * r + q]);
}

/* dot_4x4 for a single column of A (the posterior mean alone): the same
 * four sums s[4 r][w] in the same order, so the same bits, without
 * multiplying three columns of zeros. */
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

/* out[r + c * ldo] += sum_t kv[r][t] A[t + c * lda] for the nr rows of a
 * chunk and every column c, in blocks of four rows by four columns of A
 * (4 x TILE values each, in L1), or by one column when A has only one.
 * A ragged block is padded: missing rows and columns read zeros and their
 * totals are dropped, so every entry is computed by the same arithmetic
 * wherever it lies. */
static void tile_dot(const double *const *kv, int nr, int len, const double *A,
                     int lda, int ncol, double *out, int ldo)
{
  static const double zeros[TILE] = {0.0};
  for (int c = 0; c < ncol; c += 4) {
    const double *a[4];
    for (int q = 0; q < 4; q++) a[q] = c + q < ncol ? A + (size_t)(c + q) * lda : zeros;
    for (int r = 0; r < nr; r += 4) {
      const double *k[4];
      double tot[16];
      for (int i = 0; i < 4; i++) k[i] = r + i < nr ? kv[r + i] : zeros;
      if (ncol == 1)
        dot_4x1(k, a[0], len, tot);
      else
        dot_4x4(k, a, len, tot);
      for (int q = 0; q < 4 && c + q < ncol; q++)
        for (int i = 0; i < 4 && r + i < nr; i++)
          out[r + i + (size_t)(c + q) * ldo] += tot[i + 4 * q];
    }
  }
}

/* block_tile in single precision: float kernel values, read from the
 * float cache or computed from x32, widened into buf. */
SDDGP_HOT
static const double *block_tile32(const kernel_op *op, int i, int j0, int len,
                                  double *buf)
{
  float v[TILE];
  const float *vals = v;
  if (op->cache32)
    vals = op->cache32 + (size_t)i * op->x2->n + j0; /* row i of the symmetric cache */
  else {
    sq_dist_points32(op->x1, i, op->x2, j0, len, v);
    kernel_apply32(op->k, v, len);
  }
  #pragma omp simd
  for (int t = 0; t < len; t++) buf[t] = vals[t];
  return buf;
}

/* Kernel values of row point i against points j0..j0+len-1 of x2: a slice
 * of the cache, or computed into buf. */
static const double *block_tile(const void *ctx, int i, int j0, int len,
                                double *buf)
{
  const kernel_op *op = ctx;
  if (op->single) return block_tile32(op, i, j0, len, buf);
  if (op->cache) return op->cache + (size_t)i * op->x2->n + j0;
  block_sq_dist(op->x1, i, op->x2, j0, len, buf);
  kernel_apply(op->k, buf, len);
  return buf;
}

void block_product(block_tile_fn tile, const void *ctx, double entry_cost,
                   const int *rows, int nrows, int ncols, const double *A,
                   int ncol, double *out, int ldo, int nthreads)
{
  const int nchunks = (nrows + ROW_CHUNK - 1) / ROW_CHUNK;
  for (int c = 0; c < ncol; c++)
    memset(out + (size_t)c * ldo, 0, sizeof(double) * (size_t)nrows);

  const double work = (double)nrows * ncols * (entry_cost + ncol);
  #pragma omp parallel num_threads(nthreads) \
      if (nchunks > 1 && work > PARALLEL_MIN_WORK)
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
          kv[r - r0] = tile(ctx, rows ? rows[r] : r, j0, len,
                            buf + (size_t)(r - r0) * TILE);
        tile_dot(kv, r1 - r0, len, A + j0, ncols, ncol, out + r0, ldo);
      }
    }
  }
}

void kernel_op_row_values(const kernel_op *op, int i, double *out)
{
  const int n2 = op->x2->n;
  for (int j0 = 0; j0 < n2; j0 += TILE) {
    const int len = n2 - j0 < TILE ? n2 - j0 : TILE;
    const double *v = block_tile(op, i, j0, len, out + j0);
    if (v != out + j0) memcpy(out + j0, v, sizeof(double) * (size_t)len);
  }
}

void kernel_op_rows(const kernel_op *op, const int *rows, int nrows,
                    const double *A, int ncol, double *out, int ldo,
                    int nthreads)
{
  block_product(block_tile, op, op->x1->d, rows, nrows, op->x2->n, A, ncol,
                out, ldo, nthreads);
}

/* out[t + c ldo] += sum_q kv[q][t] U[q + c ldu] over the q < 4 rows of a
 * group (q in order, one multiply-add each), t < len, for columns c < ncol,
 * four columns at a time while four remain (each kernel value loaded once
 * for four of them) and then one at a time, with the same arithmetic for
 * every entry either way.  Rows past nq read as zero. */
SDDGP_HOT
static void rows_t_group(const double *const *kv, const double *U, int ldu,
                         int nq, int ncol, int len, double *out, int ldo)
{
  const double *k0 = kv[0], *k1 = kv[1], *k2 = kv[2], *k3 = kv[3];
  double u[4][4];
  int c = 0;
  for (; c + 4 <= ncol; c += 4) {
    for (int q = 0; q < 4; q++)
      for (int e = 0; e < 4; e++) u[e][q] = q < nq ? U[q + (size_t)(c + e) * ldu] : 0.0;
    double *o0 = out + (size_t)c * ldo, *o1 = o0 + ldo, *o2 = o1 + ldo, *o3 = o2 + ldo;
    #pragma omp simd
    for (int t = 0; t < len; t++) {
      const double r0 = k0[t], r1 = k1[t], r2 = k2[t], r3 = k3[t];
      o0[t] = o0[t] + r0 * u[0][0] + r1 * u[0][1] + r2 * u[0][2] + r3 * u[0][3];
      o1[t] = o1[t] + r0 * u[1][0] + r1 * u[1][1] + r2 * u[1][2] + r3 * u[1][3];
      o2[t] = o2[t] + r0 * u[2][0] + r1 * u[2][1] + r2 * u[2][2] + r3 * u[2][3];
      o3[t] = o3[t] + r0 * u[3][0] + r1 * u[3][1] + r2 * u[3][2] + r3 * u[3][3];
    }
  }
  for (; c < ncol; c++) {
    for (int q = 0; q < 4; q++) u[0][q] = q < nq ? U[q + (size_t)c * ldu] : 0.0;
    double *o = out + (size_t)c * ldo;
    #pragma omp simd
    for (int t = 0; t < len; t++)
      o[t] = o[t] + k0[t] * u[0][0] + k1[t] * u[0][1] + k2[t] * u[0][2] + k3[t] * u[0][3];
  }
}

void kernel_op_rows_t(const kernel_op *op, const int *rows, int nrows,
                      const double *U, int ncol, double *out, int ldo,
                      int nthreads)
{
  static const double zeros[TILE] = {0.0};
  const int n2 = op->x2->n, ntiles = (n2 + TILE - 1) / TILE;
  const double work = (double)nrows * n2 * (op->x1->d + ncol);
  /* Threads split x2 into tiles: each output entry is summed by one thread,
   * over the rows in order. */
  #pragma omp parallel num_threads(nthreads) \
      if (ntiles > 1 && work > PARALLEL_MIN_WORK)
  {
    double buf[4 * TILE];
    #pragma omp for schedule(static)
    for (int g = 0; g < ntiles; g++) {
      const int j0 = g * TILE, len = n2 - j0 < TILE ? n2 - j0 : TILE;
      for (int c = 0; c < ncol; c++)
        memset(out + j0 + (size_t)c * ldo, 0, sizeof(double) * (size_t)len);
      for (int r0 = 0; r0 < nrows; r0 += 4) {
        const int nq = nrows - r0 < 4 ? nrows - r0 : 4;
        const double *kv[4];
        for (int q = 0; q < 4; q++)
          kv[q] = q < nq ? block_tile(op, rows[r0 + q], j0, len, buf + (size_t)q * TILE)
                         : zeros;
        rows_t_group(kv, U + r0, nrows, nq, ncol, len, out + j0, ldo);
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
                          int j0, int j1, int single, void *out, int nthreads)
{
  const int n1 = p1->n;
  #pragma omp parallel for num_threads(nthreads) schedule(static) \
      if ((double)(j1 - j0) * n1 * (p1->d + 1) > PARALLEL_MIN_WORK)
  for (int g = j0; g < j1; g += ROW_CHUNK) {
    const int g1 = j1 - g < ROW_CHUNK ? j1 : g + ROW_CHUNK;
    for (int i0 = 0; i0 < n1; i0 += TILE) {
      const int len = n1 - i0 < TILE ? n1 - i0 : TILE;
      for (int j = g; j < g1; j++) {
        const size_t at = (size_t)j * n1 + i0;
        if (single) {
          sq_dist_points32(p2, j, p1, i0, len, (float *)out + at);
          kernel_apply32(k, (float *)out + at, len);
        } else {
          block_sq_dist(p2, j, p1, i0, len, (double *)out + at);
          kernel_apply(k, (double *)out + at, len);
        }
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
  for (int j0 = 0; j0 < n2; j0 += slab) {
    const int j1 = n2 - j0 < slab ? n2 : j0 + slab;
    block_columns(k, p1, p2, j0, j1, single, out, nthreads);
    if (j1 < n2 && callback && callback(ctx, 0, NULL)) return 1;
  }
  return 0;
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
  const points p = {buf, len, x->d, NULL};
  return p;
}
