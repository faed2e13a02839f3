/* Driver checks of the sharded kernel operator (src/shard.c): the shards
 * are whole tiles covering all columns, a product summed shard after
 * shard in rank order (kernel_op_rows_add() going on from the last
 * shard's sums, as the processes pass them on) has the bits of the whole
 * product, and shard_rows() on one process is kernel_op_rows(). */
#include <string.h>

#include "driver.h"
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

/* Messages that never fail, for one process: its broadcast keeps its own. */
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

/* K[rows, :] A summed shard after shard for `size` processes against the
 * whole product, for A of 1 column (the mean's path) and 11 (the samples'
 * eight at a time and one at a time). */
static void check_chain(const kernel *k, double *x, int n, int d, const char *what)
{
  const points p = {x, n, d, NULL};
  const kernel_op K = {k, &p, &p, NULL, 0, NULL, NULL, NULL, 0, NULL};
  const int nrows = 75, ncol = 11;
  int *rows = xmalloc(sizeof(int) * nrows);
  for (int r = 0; r < nrows; r++) rows[r] = (int)(test_unif() * n);
  double *A = random_matrix(n, ncol), *whole = dalloc((size_t)nrows * ncol);
  double *sums = dalloc((size_t)nrows * ncol), *a = dalloc((size_t)n * ncol);
  double *buf = dalloc((size_t)n * d);
  for (int nc = 1; nc <= ncol; nc += ncol - 1) {
    kernel_op_rows(&K, rows, nrows, A, nc, whole, nrows, 2);
    for (int size = 1; size <= 3; size++) {
      memset(sums, 0, sizeof(double) * (size_t)nrows * nc);
      for (int rank = 0; rank < size; rank++) {
        shard_comm comm = {rank, size, NULL, NULL, keep, NULL, 0.0, 0};
        shard sh;
        shard_op(&K, &comm, &sh, buf);
        const int m = sh.cols.n;
        for (int c = 0; c < nc; c++)
          memcpy(a + (size_t)c * m, A + (size_t)c * n + sh.first, sizeof(double) * (size_t)m);
        kernel_op_rows_add(&sh.part, rows, nrows, a, nc, sums, nrows, 2);
      }
      CHECK(memcmp(sums, whole, sizeof(double) * (size_t)nrows * nc) == 0,
            "%s, %d columns: %d shards in rank order differ from the whole product",
            what, nc, size);
    }
  }
  /* One process: shard_rows() is the product; a failed message NaN. */
  shard_comm comm = {0, 1, NULL, NULL, keep, NULL, 0.0, 0};
  shard sh;
  const kernel_op S = shard_op(&K, &comm, &sh, buf);
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

void test_shard(void)
{
  section("(s) sharded kernel operator");
  check_ranges(1000);
  check_ranges(256);
  check_ranges(5000);
  const int n = 1000, d = 3;
  const kernel m32 = {KERNEL_MATERN32, 1.3}, m12 = {KERNEL_MATERN12, 0.7};
  /* Centred points: distances from norms; off-centre ones: from
   * differences (a shard must decide as the whole set does). */
  double *x = random_points(n, d, 2.0);
  for (size_t i = 0; i < (size_t)n * d; i++) x[i] -= 1.0;
  check_chain(&m32, x, n, d, "centred, matern32");
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
