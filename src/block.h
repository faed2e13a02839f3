/* The one place kernel values are computed: products of kernel blocks with
 * dense matrices, K[rows, :] A and its transpose K[rows, :]' U, evaluated
 * tile by tile so that no n x n matrix is ever stored.  Every solver and
 * every prediction goes through here.
 *
 * Points are column-major n x d arrays already divided by their length
 * scales (kernel_scale_points).  Each output row is computed by exactly one
 * thread, summing over column tiles in a fixed order, so results are
 * bitwise identical for any thread count. */
#ifndef SDDGP_BLOCK_H
#define SDDGP_BLOCK_H

#include "kernel.h"
#include "solver.h"

/* Fingerprints for the Tanimoto kernel (tanimoto.h). */
typedef struct fingerprints fingerprints;

typedef struct {
  const double *x;   /* column-major n x d, scaled */
  int n;
  int d;
  const float *x32;  /* the same in single precision, or NULL */
  /* The Tanimoto kernel's inputs (NULL for the others): binary or sparse
   * fingerprints in place of x, or with dense counts x's row sums. */
  const fingerprints *fp;
} points;

/* Coordinates of four rows copied side by side at a time by the distance
 * loops (block_dist_template.h says why). */
#define COORD_BLOCK 64

/* A kernel block K(x1, x2) as the solvers and predictions see it: evaluated
 * on the fly, or read from a precomputed matrix when that fits in memory
 * (each step then streams rows from memory instead of recomputing them).
 * Both sources feed the same tiled loop, so they give identical sums. */
typedef struct {
  const kernel *k;
  const points *x1;    /* row points */
  const points *x2;    /* column points */
  const double *cache; /* NULL, or K(x2, x2) column-major when x1 == x2 */
  /* Single precision (precision = "single"): kernel values are computed
   * in float from the points' x32, or read from a float cache, and then
   * multiplied into A and summed in double like the others. */
  int single;
  const float *cache32; /* NULL, or the float K(x2, x2) */
  /* Squared norms of x1's and x2's points (block_norms, the same array when
   * x1 == x2), to be given only where block_uses_norms(k, single, x2); or
   * NULL: then the products decide that themselves and compute the norms
   * tile by tile, with the same bits. */
  const double *norms1, *norms2;
  /* Non-zero: distances as differences even where block_uses_norms() of
   * x2 would choose norms (a shard of columns of a set that does not). */
  int no_norms;
  /* NULL, or the processes that share x2's columns: kernel_op_rows() then
   * sums this process's shard and theirs in the order of one process
   * (shard.h). */
  const struct shard *shard;
} kernel_op;

/* Does a kernel block in this precision, with these column points, form
 * squared distances from norms and inner products rather than from
 * differences (block.c says when, and why)?  A pass over the points. */
int block_uses_norms(const kernel *k, int single, const points *cols);

/* out[j] = |x_j|^2 for every point of p (p->n values), for kernel_op. */
void block_norms(const points *p, double *out);

/* out[r + c*ldo] = sum_j K(x1[rows[r]], x2[j]) A[j + c*n2], for r < nrows,
 * c < ncol; rows == NULL means rows 0..nrows-1.  out is overwritten. */
void kernel_op_rows(const kernel_op *op, const int *rows, int nrows,
                    const double *A, int ncol, double *out, int ldo,
                    int nthreads);

/* The same added to out, A with leading dimension lda: each sum goes on
 * from out's entry, adding the terms in the order kernel_op_rows() does,
 * so that a product over columns 0..j-1 continued over columns j.. (j a
 * multiple of BLOCK_TILE) has the bits of the product over all of them.
 * Not for a sharded op. */
void kernel_op_rows_add(const kernel_op *op, const int *rows, int nrows,
                        const double *A, int lda, int ncol, double *out, int ldo,
                        int nthreads);

/* Columns of a product are summed a tile of this many at a time. */
#define BLOCK_TILE 256

/* The transpose of a row block, K[rows, :]' U:
 *   out[j + c*ldo] = sum_r K(x1[rows[r]], x2[j]) U[r + c*nrows]
 * for j < x2->n, c < ncol.  With x1 == x2 this is the product with kernel
 * *columns* K[:, rows] U (a primal gradient's K_I' u), read from the
 * rows of a cache rather than gathered down its columns.  Rows may repeat.
 * Each entry of out is summed by one thread over r in order, in groups of
 * rows whose sums are added in order, so the bits do not depend on the
 * thread count, the number of columns, nor on whether the kernel is
 * cached. */
void kernel_op_rows_t(const kernel_op *op, const int *rows, int nrows,
                      const double *U, int ncol, double *out, int ldo,
                      int nthreads);

/* Row i of the block itself, K(x1[i], x2[j]) for all j, into out: the
 * values the products above multiply (cache or on the fly, either
 * precision), a tile at a time on the calling thread. */
void kernel_op_row_values(const kernel_op *op, int i, double *out);

/* The tiled product behind kernel_op_rows, for any matrix M whose entries
 * can be produced a row tile at a time (kernel values, random features):
 *   out[r + c*ldo] = sum_j M[rows[r], j] A[j + c*ncols]
 * for j < ncols, with the same tiling, summation order and thread-count
 * independence.  tile() is given a chunk of nr rows, row q being
 * block_row(rows, first, q), and sets kv[q] to M[row, j0..j0+len-1],
 * computed into buf + q * ldb (room for len values) or pointing into
 * storage of its own: a chunk at a time, so that rows can share the loads
 * of what they are computed from.  entry_cost is about the flops of one
 * entry, to decide whether threads pay; col_bytes what one column of M is
 * computed from (a point's coordinates), for the width of the panels of
 * columns that stay in cache while all rows pass over them. */
typedef void (*block_tile_fn)(const void *ctx, const int *rows, int first,
                              int nr, int j0, int len, double *buf, int ldb,
                              const double **kv);
static inline int block_row(const int *rows, int first, int q)
{
  return rows ? rows[first + q] : first + q;
}
void block_product(block_tile_fn tile, const void *ctx, double entry_cost,
                   size_t col_bytes, const int *rows, int nrows, int ncols,
                   const double *A, int ncol, double *out, int ldo,
                   int nthreads);

/* The dense block K(p1, p2) into out (p1->n x p2->n, column-major): the
 * cache, the exact solver and the marginal likelihood on small subsets. */
void kernel_block_matrix(const kernel *k, const points *p1, const points *p2,
                         double *out, int nthreads);

/* The same block built a slab of columns at a time, polling the callback
 * (NULL for none; iteration 0, no residuals) between slabs, so Ctrl-C is
 * answered while a matrix of billions of entries is filled.  out is a
 * double array, or with single a float array computed from the points'
 * x32.  The values are those kernel_op_rows uses.  Returns non-zero if
 * the callback asked to stop. */
int kernel_block_build(const kernel *k, const points *p1, const points *p2,
                       int single, void *out, int nthreads,
                       solver_callback callback, void *ctx);

/* Items (rows or columns) per slab when a long computation over n items of
 * per_item units each is cut into slabs of about `work` units, with a
 * check for Ctrl-C between slabs: all n when they fit, else a whole
 * multiple of BLOCK_SLAB_ITEMS, so that the threads' chunks of rows divide
 * every slab evenly. */
#define BLOCK_SLAB_ITEMS 64
int block_slab(int n, double per_item, double work);

/* Rows of x as points of their own, copied into buf (len x d doubles):
 * rows[0..len-1], or first..first+len-1 when rows is NULL.  For solvers
 * that evaluate kernels or features at a batch or a chunk of the data. */
points points_rows(const points *x, const int *rows, int first, int len,
                   double *buf);

/* Kernel values k(p1[i], p2[j]) for j = j0..j0+len-1, into out. */
void block_kernel_values(const kernel *k, const points *p1, int i,
                         const points *p2, int j0, int len, double *out);

/* Squared scaled distances from point i of p1 to points j0..j0+len-1 of p2
 * (stationary kernels). */
void block_sq_dist(const points *p1, int i, const points *p2, int j0, int len,
                   double *r2);

#endif
