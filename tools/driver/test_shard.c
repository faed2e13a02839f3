/* Driver checks of the sharded kernel operator (src/shard.c): the pieces
 * are whole tiles covering all columns, a product summed piece after
 * piece (kernel_op_rows_add() going on from the last piece's sums, as the
 * processes pass them on) has the bits of the whole product,
 * shard_rows() on one process is kernel_op_rows(), and an SDD solve
 * sharded on one process (probed rows and the final state shared through
 * the messages) is the plain solve; several processes are tested under
 * mpirun (tests/testthat/test-mpi.R). */
#include <string.h>

#include "driver.h"
#include "../../src/sdd.h"
#include "../../src/shard.h"

static void check_ranges(int n)
{
  for (int size = 1; size <= 5; size++) {
    int next = 0, ok = 1;
    for (int rank = 0; rank < size; rank++) {
      int first, count;
      shard_range(n, rank, size, &first, &count);
      ok = ok && first == next && first % BLOCK_TILE == 0 && count >= 0;
      next = first + count;
    }
    CHECK(ok && next == n, "shard_range(%d, ., %d): not whole tiles covering all columns", n, size);
  }
}

/* Messages of one process to itself: sends queue up, receives take them
 * in order, the broadcast keeps what it has. */
typedef struct {
  double queue[1 << 16];
  size_t head, tail;
} loopback;
static int push(void *ctx, const double *buf, size_t len, int to)
{
  loopback *lb = ctx;
  (void)to;
  if (lb->tail + len > sizeof lb->queue / sizeof lb->queue[0]) return 1;
  memcpy(lb->queue + lb->tail, buf, sizeof(double) * len);
  lb->tail += len;
  return 0;
}
static int pop(void *ctx, double *buf, size_t len, int from)
{
  loopback *lb = ctx;
  (void)from;
  if (lb->head + len > lb->tail) return 1;
  memcpy(buf, lb->queue + lb->head, sizeof(double) * len);
  lb->head += len;
  return 0;
}
static int keep(void *ctx, double *buf, size_t len, int root)
{
  (void)ctx; (void)buf; (void)len; (void)root;
  return 0;
}
static int fail_bcast(void *ctx, double *buf, size_t len, int root)
{
  (void)ctx; (void)buf; (void)len; (void)root;
  return 1;
}

/* K[rows, :] A summed piece after piece, for `size` processes in `rounds`
 * rounds (piece q of rank q mod P, round q / P), against the whole
 * product, for A of 1 column (the mean's path) and 11 (the samples' eight
 * at a time and one at a time). */
static void check_chain(const kernel *k, double *x, int n, int d, const char *what)
{
  const points p = {x, n, d, NULL, NULL};
  const kernel_op K = {k, &p, &p, NULL, 0, NULL, NULL, NULL, 0, NULL};
  const int nrows = 75, ncol = 11;
  int *rows = xmalloc(sizeof(int) * nrows);
  for (int r = 0; r < nrows; r++) rows[r] = (int)(test_unif() * n);
  double *A = random_matrix(n, ncol), *whole = dalloc((size_t)nrows * ncol);
  double *sums = dalloc((size_t)nrows * ncol), *a = dalloc((size_t)n * ncol);
  double *buf = dalloc((size_t)n * d);
  for (int nc = 1; nc <= ncol; nc += ncol - 1) {
    kernel_op_rows(&K, rows, nrows, A, nc, whole, nrows, 2);
    for (int size = 1; size <= 3; size++)
      for (int rounds = 1; rounds * size <= (n + BLOCK_TILE - 1) / BLOCK_TILE; rounds++) {
        memset(sums, 0, sizeof(double) * (size_t)nrows * nc);
        for (int q = 0; q < rounds * size; q++) {
          shard_comm comm = {q % size, size, NULL, NULL, keep, NULL, 0.0, 0, 0.0};
          shard sh;
          shard_op(&K, &comm, rounds, &sh, buf);
          CHECK(sh.own * (size_t)d == shard_points_len(n, d, q % size, size, rounds),
                "shard_points_len() is not the pieces' points");
          /* A piece's rows of A in place, and contiguous. */
          const int m = sh.cols[q / size].n;
          const double *in_place = A + sh.first[q / size];
          if (q % 2) {
            for (int c = 0; c < nc; c++)
              memcpy(a + (size_t)c * m, in_place + (size_t)c * n, sizeof(double) * (size_t)m);
            kernel_op_rows_add(&sh.part[q / size], rows, nrows, a, m, nc, sums, nrows, 2);
          } else {
            kernel_op_rows_add(&sh.part[q / size], rows, nrows, in_place, n, nc, sums, nrows, 2);
          }
        }
        CHECK(memcmp(sums, whole, sizeof(double) * (size_t)nrows * nc) == 0,
              "%s, %d columns: %d processes, %d rounds, in order, differ from the whole "
              "product", what, nc, size, rounds);
      }
  }
  /* One process in two rounds, passing the sums to itself: shard_rows()
   * is the product; a failed message NaN. */
  static loopback lb;
  lb.head = lb.tail = 0;
  shard_comm comm = {0, 1, push, pop, keep, &lb, 0.0, 0, 0.0};
  shard sh;
  const kernel_op S = shard_op(&K, &comm, 2, &sh, buf);
  kernel_op_rows(&S, NULL, nrows, A, ncol, sums, nrows, 2);
  kernel_op_rows(&K, NULL, nrows, A, ncol, whole, nrows, 2);
  CHECK(memcmp(sums, whole, sizeof(double) * (size_t)nrows * ncol) == 0 && !comm.failed,
        "%s: shard_rows() on one process differs from kernel_op_rows()", what);
  comm.bcast = fail_bcast;
  kernel_op_rows(&S, rows, nrows, A, ncol, sums, nrows, 2);
  CHECK(comm.failed && isnan(sums[0]) && isnan(sums[(size_t)nrows * ncol - 1]),
        "%s: a failed message is not reported", what);
  free(rows); free(A); free(whole); free(sums); free(a); free(buf);
}

/* sdd_solve() with a one-process shard (one round) against the plain
 * solve: the same average, status, steps and final state. */
static void check_sdd(const kernel *k, double *x, int n, int d)
{
  const points p = {x, n, d, NULL, NULL};
  const kernel_op K = {k, &p, &p, NULL, 0, NULL, NULL, NULL, 0, NULL};
  const int nrhs = 3;
  const size_t len = (size_t)n * nrhs;
  double *rhs = random_matrix(n, nrhs), *noise = dalloc(n), *ab[2], *state[2];
  const double steps[3] = {2.0, 1.0, 1.0};
  for (int i = 0; i < n; i++) noise[i] = 0.05;
  sdd_options opt;
  memset(&opt, 0, sizeof opt);
  opt.iterations = 120;
  opt.batch_size = 40;
  opt.batch_sampling = SDD_BATCH_UNIFORM;
  opt.step_size = steps;
  opt.momentum = 0.9;
  opt.averaging_rate = 0.05;
  opt.check_every = 25;
  opt.probe_size = 30;
  opt.seed = 77u;
  opt.nthreads = 2;
  static loopback lb;
  shard_comm comm = {0, 1, push, pop, keep, &lb, 0.0, 0, 0.0};
  solver_status st[2];
  int done[2];
  for (int run = 0; run < 2; run++) {
    ab[run] = dalloc(len);
    state[run] = dalloc(2 * len);
    opt.alpha_out = state[run];
    opt.momentum_out = state[run] + len;
    opt.shard = run ? &comm : NULL;
    lb.head = lb.tail = 0;
    st[run] = sdd_solve(&K, noise, rhs, nrhs, &opt, ab[run], &done[run], NULL, NULL);
  }
  CHECK(st[0] == st[1] && done[0] == done[1] && !comm.failed &&
            memcmp(ab[0], ab[1], sizeof(double) * len) == 0 &&
            memcmp(state[0], state[1], sizeof(double) * 2 * len) == 0,
        "sdd_solve() sharded on one process differs from the plain solve");
  for (int run = 0; run < 2; run++) {
    free(ab[run]);
    free(state[run]);
  }
  free(rhs);
  free(noise);
}

void test_shard(void)
{
  section("(s) sharded kernel operator");
  check_ranges(1000);
  check_ranges(256);
  check_ranges(5000);
  /* SDD's batches of 512 (8 groups): G R >= 50 (P - 1), seven rounds for
   * 2 processes (and 94 for 16), but at least a tile per piece (24 at n =
   * 100000) and at most 32 rounds. */
  CHECK(shard_rounds(100000, 2, 512) == 7 && shard_rounds(1000000, 16, 512) == 32 &&
        shard_rounds(100000, 16, 512) == 24 && shard_rounds(10000, 16, 512) == 2 &&
        shard_rounds(10000000, 64, 512) == 32 && shard_rounds(100000, 1, 512) == 1 &&
        shard_rounds(1000, 2, 100) == 2,
        "shard_rounds(): %d %d %d %d", shard_rounds(100000, 2, 512),
        shard_rounds(1000000, 16, 512), shard_rounds(100000, 16, 512),
        shard_rounds(10000, 16, 512));
  const int n = 1000, d = 3;
  const kernel m32 = {KERNEL_MATERN32, 1.3}, m12 = {KERNEL_MATERN12, 0.7};
  /* Centred points: distances from norms; off-centre ones: from
   * differences (a shard must decide as the whole set does). */
  double *x = random_points(n, d, 2.0);
  for (size_t i = 0; i < (size_t)n * d; i++) x[i] -= 1.0;
  check_chain(&m32, x, n, d, "centred, matern32");
  check_sdd(&m32, x, n, d);
  check_chain(&m12, x, n, d, "centred, matern12");
  /* A spread-out first tile at 0 and the rest bunched far away: not
   * centred, though the first shards are. */
  for (int c = 0; c < d; c++)
    for (int i = 0; i < n; i++) {
      double *v = x + i + (size_t)c * n;
      *v = i < BLOCK_TILE ? 3.0 * *v : 10.0 + 0.1 * *v;
    }
  check_chain(&m32, x, n, d, "off centre, matern32");
  free(x);
}
