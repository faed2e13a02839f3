#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "blas_threads.h"
#include "chol.h"
#include "lapack.h"
#include "threads.h"
#include "workspace.h"

/* Rows and columns per block.  For the reference BLAS 128: a tile of the
 * trailing update and the panel slices it reads, 128 KB each, stay in a
 * core's cache.  OpenBLAS blocks for the cache itself and gains from fewer,
 * larger calls: an exact fit of 5000 points on 1 and 2 threads took 2.7
 * and 5.0 s in blocks of 128, 1.75 and 2.7 s in blocks of 256, 1.75 and
 * 1.5 s in blocks of 512, 2.2 and 2.3 s in blocks of 1024 (medians of 3,
 * machine shared at load 3). */
#define CHOL_BLOCK_REFERENCE 128
#define CHOL_BLOCK_OPENBLAS 512

/* Trailing-update tiles per round between two polls: about 0.1 s of work
 * (64 tiles of 128 with the reference BLAS, 16 of 512 with OpenBLAS), and
 * several per thread.  The dynamic schedule inside a round lets a thread
 * the host has paused fall behind without stalling the other. */
#define CHOL_ROUND_REFERENCE 64
#define CHOL_ROUND_OPENBLAS 16

int chol_block_size(void)
{
  return blas_is_openblas() ? CHOL_BLOCK_OPENBLAS : CHOL_BLOCK_REFERENCE;
}

static int nblocks(int n, int bs) { return (n + bs - 1) / bs; }

/* C (rows x ncol) -= op(A) B with op(A) = A or A' as trans_a says, A with
 * leading dimension lda and B, C with ldc, by blocks of bs rows of C: each
 * block is one BLAS call by one thread, so the result does not depend on
 * the thread count. */
static void update_rows(const char *trans_a, int rows, int ncol, int inner,
                        const double *a, int lda, const double *b, double *c,
                        int ldc, int bs, int nthreads)
{
  const double one = 1.0, minus_one = -1.0;
  const int transposed = *trans_a == 'T';
  const int nb = nblocks(rows, bs);
  #pragma omp parallel for num_threads(threads_team(nthreads)) schedule(dynamic) \
      if (nb > 1 && 2.0 * rows * ncol * inner > PARALLEL_MIN_WORK)
  for (int blk = 0; blk < nb; blk++) {
    const int r0 = blk * bs, h = min_int(bs, rows - r0);
    const double *ablk = transposed ? a + (size_t)r0 * lda : a + r0;
    dgemm_(trans_a, "N", &h, &ncol, &inner, &minus_one, ablk, &lda, b, &ldc,
           &one, c + r0, &ldc, 1, 1);
  }
}

/* Tile t (numbered down each column block in turn, from its diagonal
 * tile) of the lower triangle of a grid of nb x nb tiles: column block c
 * holds nb - c tiles, so it starts at first[c] = c nb - c (c - 1) / 2. */
static void tile_position(long t, int nb, int *row, int *col)
{
  int c = (int)(t / nb); /* first[c] <= c nb: a lower bound */
  while ((long)(c + 1) * nb - (long)(c + 1) * c / 2 <= t) c++;
  *col = c;
  *row = c + (int)(t - ((long)c * nb - (long)c * (c - 1) / 2));
}

/* Right-looking: factor the diagonal block, solve the panel below it, and
 * subtract the panel's outer product from the trailing matrix tile by
 * tile (dsyrk on diagonal tiles, so the upper triangle stays as it was
 * given), polling between rounds of tiles.  Every tile is one BLAS call
 * by one thread, so the result does not depend on the thread count. */
int chol_lower(double *a, int n, int nthreads, solver_callback callback,
               void *ctx)
{
  const double one = 1.0, minus_one = -1.0;
  const int bs = chol_block_size();
  const long round = blas_is_openblas() ? CHOL_ROUND_OPENBLAS : CHOL_ROUND_REFERENCE;
  for (int j0 = 0; j0 < n; j0 += bs) {
    const int w = min_int(bs, n - j0), below = n - j0 - w;
    double *diag = a + j0 + (size_t)j0 * n, *panel = diag + w;
    double *trailing = panel + (size_t)w * n;
    int info = 0;
    dpotrf_("L", &w, diag, &n, &info, 1);
    if (info != 0) return j0 + info;
    if (below == 0) break;

    const int nb = nblocks(below, bs);
    #pragma omp parallel for num_threads(threads_team(nthreads)) schedule(dynamic) \
        if (nb > 1 && (double)below * w * w > PARALLEL_MIN_WORK)
    for (int b = 0; b < nb; b++) {
      const int r0 = b * bs, h = min_int(bs, below - r0);
      dtrsm_("R", "L", "T", "N", &h, &w, &one, diag, &n, panel + r0, &n, 1, 1,
             1, 1);
    }

    const long ntiles = (long)nb * (nb + 1) / 2;
    for (long t0 = 0; t0 < ntiles; t0 += round) {
      const long t1 = t0 + round < ntiles ? t0 + round : ntiles;
      #pragma omp parallel for num_threads(threads_team(nthreads)) schedule(dynamic) \
          if (t1 - t0 > 1 && (double)below * w * bs > PARALLEL_MIN_WORK)
      for (long t = t0; t < t1; t++) {
        int rb, cb;
        tile_position(t, nb, &rb, &cb);
        const int r0 = rb * bs, c0 = cb * bs;
        const int h = min_int(bs, below - r0), cw = min_int(bs, below - c0);
        double *c = trailing + r0 + (size_t)c0 * n;
        if (rb == cb)
          dsyrk_("L", "N", &cw, &w, &minus_one, panel + c0, &n, &one, c, &n, 1, 1);
        else
          dgemm_("N", "T", &h, &cw, &w, &minus_one, panel + r0, &n, panel + c0,
                 &n, &one, c, &n, 1, 1);
      }
      if (solver_poll(callback, ctx, 0)) return CHOL_STOPPED;
    }
  }
  return 0;
}

/* Forwards (L y = rhs) a block of rows at a time: solve the block, then
 * update the rows below it by row blocks; backwards (L' x = rhs) the same
 * from the last block, updating the rows above it.  L (n x n) has leading
 * dimension ldl, rhs (n x nrhs) ldr. */
static int solve_blocks(const double *l, int ldl, int n, const char *trans,
                        double *rhs, int ldr, int nrhs, int nthreads,
                        solver_callback callback, void *ctx)
{
  const double one = 1.0;
  const int bs = chol_block_size(), nb = nblocks(n, bs), forwards = *trans == 'N';
  for (int step = 0; step < nb; step++) {
    const int b = forwards ? step : nb - 1 - step;
    const int j0 = b * bs, w = min_int(bs, n - j0);
    const double *diag = l + j0 + (size_t)j0 * ldl;
    dtrsm_("L", "L", trans, "N", &w, &nrhs, &one, diag, &ldl, rhs + j0, &ldr,
           1, 1, 1, 1);
    if (forwards)
      update_rows("N", n - j0 - w, nrhs, w, diag + w, ldl, rhs + j0,
                  rhs + j0 + w, ldr, bs, nthreads);
    else
      update_rows("T", j0, nrhs, w, l + j0, ldl, rhs + j0, rhs, ldr, bs, nthreads);
    if (solver_poll(callback, ctx, 0)) return CHOL_STOPPED;
  }
  return 0;
}

int chol_solve_triangular(const double *l, int n, const char *trans,
                          double *rhs, int nrhs, int nthreads,
                          solver_callback callback, void *ctx)
{
  return solve_blocks(l, n, n, trans, rhs, n, nrhs, nthreads, callback, ctx);
}

/* rhs := (L L')^-1 rhs, with leading dimensions as solve_blocks. */
static int solve_both(const double *l, int ldl, int n, double *rhs, int ldr,
                      int nrhs, int nthreads, solver_callback callback, void *ctx)
{
  const int st = solve_blocks(l, ldl, n, "N", rhs, ldr, nrhs, nthreads, callback, ctx);
  if (st != 0) return st;
  return solve_blocks(l, ldl, n, "T", rhs, ldr, nrhs, nthreads, callback, ctx);
}

int chol_solve_factored(const double *l, int n, double *rhs, int nrhs,
                        int nthreads, solver_callback callback, void *ctx)
{
  return solve_both(l, n, n, rhs, n, nrhs, nthreads, callback, ctx);
}

/* Column block J of the inverse's lower triangle, rows j0 on, depends only
 * on the trailing factor L[j0:, j0:]: with M = L[j0:, j0:] it is
 * M^-T M^-1 E, E the first w columns of the identity.  So the blocks are
 * solved in scratch from the first, and each overwrites its own columns of
 * L, which no later block reads.  2n^3/3 flops, as LAPACK's dpotri. */
int chol_inverse(double *l, int n, int nthreads, solver_callback callback,
                 void *ctx)
{
  const int bs = chol_block_size();
  double *x = malloc(sizeof(double) * (size_t)n * bs);
  if (!x) return CHOL_NO_MEMORY;
  int status = 0;
  for (int j0 = 0; j0 < n && status == 0; j0 += bs) {
    const int w = min_int(bs, n - j0), rows = n - j0;
    double *trailing = l + j0 + (size_t)j0 * n;
    memset(x, 0, sizeof(double) * (size_t)rows * w);
    for (int c = 0; c < w; c++) x[c + (size_t)c * rows] = 1.0;
    status = solve_both(trailing, n, rows, x, rows, w, nthreads, callback, ctx);
    if (status == 0)
      for (int c = 0; c < w; c++) /* the lower triangle only */
        memcpy(trailing + c + (size_t)c * n, x + c + (size_t)c * rows,
               sizeof(double) * (size_t)(rows - c));
  }
  free(x);
  return status;
}

int chol_build(const kernel *k, const points *x, const double *noise,
               double *a, int nthreads, solver_callback callback, void *ctx)
{
  if (kernel_block_build(k, x, x, 0, a, nthreads, callback, ctx)) return 1;
  for (int i = 0; i < x->n; i++) a[i + (size_t)i * x->n] += noise[i];
  return 0;
}

int chol_factor(const kernel *k, const points *x, const double *noise,
                double *a, int nthreads, solver_callback callback, void *ctx)
{
  if (chol_build(k, x, noise, a, nthreads, callback, ctx)) return CHOL_STOPPED;
  return chol_lower(a, x->n, nthreads, callback, ctx);
}

double chol_norm1(const double *a, int n)
{
  double norm = 0.0;
  for (int j = 0; j < n; j++) {
    double s = 0.0;
    for (int i = 0; i < n; i++) s += fabs(a[i + (size_t)j * n]);
    if (s > norm) norm = s;
  }
  return norm;
}

/* LAPACK's dpocon rather than the ratio of L's extreme diagonal entries:
 * that ratio only bounds the condition number from below (by orders of
 * magnitude for nearly duplicated inputs), while dpocon's estimate is
 * usually within a factor 3, for O(n^2) work against the factor's O(n^3). */
double chol_rcond(const double *l, int n, double anorm)
{
  double rcond = 0.0, *work;
  int *iwork, info = 0;
  workspace ws;
  workspace_init(&ws);
  WORKSPACE_ADD(&ws, work, 3 * (size_t)n, 0);
  WORKSPACE_ADD(&ws, iwork, n, 0);
  if (workspace_alloc(&ws) == 0)
    dpocon_("L", &n, l, &n, &anorm, &rcond, work, iwork, &info, 1);
  else
    rcond = -1.0;
  workspace_free(&ws);
  return rcond;
}

int chol_solve(const kernel *k, const points *x, const double *noise,
               double *rhs, int nrhs, double *a, double *cond, int nthreads,
               solver_callback callback, void *ctx)
{
  const int n = x->n;
  if (chol_build(k, x, noise, a, nthreads, callback, ctx)) return CHOL_STOPPED;
  if (cond) cond[0] = chol_norm1(a, n);
  const int info = chol_lower(a, n, nthreads, callback, ctx);
  if (info != 0) return info;
  if (cond) cond[1] = chol_rcond(a, n, cond[0]);
  return chol_solve_factored(a, n, rhs, nrhs, nthreads, callback, ctx);
}
