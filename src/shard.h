/* A kernel operator whose columns (training points) are split across
 * processes, with results bitwise identical to one process's.
 *
 * One process sums each row of a product over the column tiles in order,
 * every sum going on from the last (block.c).  A sum of per-process
 * partial sums would round differently, so the processes pass the running
 * sums along instead: the columns are cut into P R pieces of whole tiles
 * (R rounds of P processes), piece q owned by rank q mod P; the sums of a
 * group of rows start at piece 0 and go from the owner of each piece,
 * which goes on over its columns (kernel_op_rows_add()), to the next
 * (rank r to r + 1, and rank P - 1 to rank 0 between rounds); the owner
 * of the last piece broadcasts the finished sums.  The batch's rows are
 * taken in groups, so that the processes work on different groups at
 * once: a pipeline of G R slots per process for G groups, idle while it
 * fills and drains (P - 1 slots).  With one round the fill costs a
 * fraction (P - 1) / (G + P - 1) of a step, so the rounds are chosen to
 * make G R >= SHARD_FILL (P - 1), about 2 % (shard_rounds()), at the price
 * of R times the messages.  Each message is a group of rows'
 * sums, and the broadcast all of them: B (s + 1) numbers per round and
 * step for a batch of B rows and s + 1 systems.
 *
 * The messages go through callbacks (the R glue passes them to Rmpi), so
 * this file knows neither MPI nor R.  Sends must not wait for their
 * receive (MPI_Isend): between rounds the messages go round a ring. */
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
  double gather_seconds; /* of seconds, the end of a solve's gathering
                            of the state (once per solve: benchmarks) */
} shard_comm;

/* At most this many rounds: on a cluster's network more cost more in
 * messages than they save in fill (n = 1M on 16 processes, the model of
 * inst/benchmarks/distributed.R). */
#define SHARD_MAX_ROUNDS 32

/* Slots of work per slot of fill the rounds aim at: the fill's fraction
 * (P - 1) / (G R + P - 1) is then at most 1/51, leaving most of a step's
 * 5 % for the messages and for waits on a slower process.  A build may
 * set another (0: one round, the first rule) to compare
 * (inst/benchmarks/distributed.R). */
#ifndef SHARD_FILL
#define SHARD_FILL 50
#endif

/* This process's part of an operator (kernel_op's `shard`): its piece of
 * each round. */
typedef struct shard {
  int rounds;
  kernel_op part[SHARD_MAX_ROUNDS]; /* K(x1, the piece's columns) */
  points cols[SHARD_MAX_ROUNDS];    /* the piece's columns, part[k].x2 */
  int first[SHARD_MAX_ROUNDS];      /* the piece's first column in K */
  int columns;                      /* all of K's, and all of this process's */
  int own;
  shard_comm *comm;
} shard;

/* Rows of a product passed on in one message: SHARD_GROUP, or more to
 * keep a product to SHARD_MAX_GROUPS groups, so that a process has at
 * most SHARD_MAX_GROUPS SHARD_MAX_ROUNDS = 512 sends in flight (Rmpi
 * keeps 2000 requests). */
#define SHARD_GROUP 64
#define SHARD_MAX_GROUPS 16

/* Piece q of `pieces` among n columns: whole tiles of BLOCK_TILE columns,
 * as evenly as they go; *first and *count. */
void shard_range(int n, int q, int pieces, int *first, int *count);

/* Rounds for `size` processes on n columns whose products take `batch`
 * rows (an SDD step's): the fewest for the pipeline to fill in at most a
 * fifty-first of its slots (G R >= SHARD_FILL (P - 1)), but at least one
 * tile per piece and at most SHARD_MAX_ROUNDS. */
int shard_rounds(int n, int size, int batch);

/* Workspace of shard_op(): the coordinates of this process's pieces. */
size_t shard_points_len(int n, int d, int rank, int size, int rounds);

/* K (evaluated on the fly in double precision: neither cached nor single)
 * as this process of `comm` sees it, with `rounds` rounds: K itself with
 * `shard` set to sh, which it fills, its points copied into buf
 * (shard_points_len() doubles).  Whether distances come from norms is
 * decided on all of K's points, as one process decides. */
kernel_op shard_op(const kernel_op *K, shard_comm *comm, int rounds, shard *sh,
                   double *buf);

/* kernel_op_rows() of the sharded operator: A holds all of the operator's
 * columns' rows (x2->n x ncol), of which this process reads its pieces';
 * every process gets all of out.  A failed message sets comm->failed and
 * fills out with NaN (the solver then stops as diverged). */
void shard_rows(const shard *sh, const int *rows, int nrows, const double *A,
                int ncol, double *out, int ldo, int nthreads);

/* The rows `rows` of A (lda x ncol), each right on the process that owns
 * it (its column of K is in one of the process's pieces), made right on
 * every process, the values passed on in rank order and then broadcast;
 * *flag (0 or 1) becomes 1 on every process if it is 1 on any. */
void shard_share_rows(const shard *sh, const int *rows, int nrows, double *A,
                      int lda, int ncol, int *flag);

/* All the rows of A, likewise, each piece broadcast by its owner in turn
 * (once, at the end of a solve: A is all of an n x ncol state). */
void shard_share_all(const shard *sh, double *A, int lda, int ncol);

#endif
