/* A kernel operator whose columns (training points) are split across
 * processes, each owning a contiguous shard of whole column tiles, with
 * results bitwise identical to one process's.
 *
 * One process sums each row of a product over the column tiles in order,
 * every sum going on from the last (block.c).  A sum of per-shard partial
 * sums would round differently, so the processes instead pass the running
 * sums along in rank order: rank 0 sums a group of rows over its shard
 * and sends the sums to rank 1, which goes on over its own
 * (kernel_op_rows_add()), and so on; the last rank then broadcasts the
 * finished sums.  The batch's rows are taken in groups, so that rank r
 * works on group g while rank r + 1 works on group g - 1: a pipeline,
 * idle only while it fills and drains.  Each message is a group of rows'
 * sums, and the broadcast all of them: B (s + 1) numbers per step for a
 * batch of B rows and s + 1 systems.
 *
 * The messages go through callbacks (the R glue passes them to Rmpi), so
 * this file knows neither MPI nor R. */
#ifndef SDDGP_SHARD_H
#define SDDGP_SHARD_H

#include <stddef.h>
#include "block.h"

/* The processes and how to talk to them.  Each callback returns 0 on
 * success; buffers hold len doubles. */
typedef struct {
  int rank, size;
  int (*send)(void *ctx, const double *buf, size_t len, int to);
  int (*recv)(void *ctx, double *buf, size_t len, int from);
  int (*bcast)(void *ctx, double *buf, size_t len, int root);
  void *ctx;
  double seconds; /* spent in the callbacks, accumulated */
  int failed;     /* set when a callback or an allocation failed */
} shard_comm;

/* This process's part of an operator (kernel_op's `shard`). */
typedef struct shard {
  kernel_op part;   /* K(x1, the shard's columns) */
  points cols;      /* the shard's columns, part.x2 */
  int first;        /* the shard's first column in the whole operator */
  int columns;      /* the whole operator's */
  shard_comm *comm;
} shard;

/* Rows of a product passed on in one message. */
#define SHARD_GROUP 64

/* The shard of rank `rank` out of `size` among n columns: whole tiles of
 * BLOCK_TILE columns, as evenly as they go; *first and *count. */
void shard_range(int n, int rank, int size, int *first, int *count);

/* Workspace of shard_op(): the shard's coordinates. */
size_t shard_points_len(int n, int d, int rank, int size);

/* K (evaluated on the fly in double precision: neither cached nor single)
 * as this process of `comm` sees it:
 * K itself with `shard` set to sh, which it fills, its points copied into
 * buf (shard_points_len() doubles).  Whether distances come from norms is
 * decided on all of K's points, as one process decides. */
kernel_op shard_op(const kernel_op *K, shard_comm *comm, shard *sh, double *buf);

/* kernel_op_rows() of the sharded operator: A holds all of the operator's
 * columns' rows (x2->n x ncol), of which this process reads its shard's;
 * every process gets all of out.  A failed message sets comm->failed and
 * fills out with NaN (the solver then stops as diverged). */
void shard_rows(const shard *sh, const int *rows, int nrows, const double *A,
                int ncol, double *out, int ldo, int nthreads);

#endif
