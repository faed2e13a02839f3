/* Vecchia's approximation of H^-1, H = K + diag(noise), as a preconditioner
 * of CG: the sparse inverse Cholesky factor U of the responses' covariance
 * with every point conditioned on its m nearest earlier points (Vecchia
 * 1988; Katzfuss and Guinness 2021, "A general framework for Vecchia
 * approximations of Gaussian processes", Statistical Science 36(1)).
 *
 * In a fixed pseudo-random order of the points, y_t given all earlier
 * responses is approximated by y_t given its neighbours N(t), the m
 * earlier points nearest to it in the scaled inputs: with G = H[N, N],
 * g = H[N, t], b = G^-1 g and v = H[t, t] - g'b (the conditional variance,
 * never below noise_t), U has 1/sqrt(v) at (t, t) and -b/sqrt(v) at
 * (N(t), t), and H^-1 is approximated by U U'.  The exact factor when m
 * reaches n - 1.  Building U costs a search of a k-d tree for each point's
 * neighbours (neighbours.h) and n small factorisations of at most m^3/3
 * flops; applying it, 4 n m flops a column.  Stationary kernels only (distances in the inputs). */
#ifndef SDDGP_VECCHIA_H
#define SDDGP_VECCHIA_H

#include "block.h"
#include "solver.h"
#include "workspace.h"

typedef struct {
  int n, m;          /* points; neighbours of a point (fewer for the first) */
  int *order;        /* the points in the order of conditioning */
  int *count;        /* neighbours of point i, n */
  int *nb;           /* its neighbours nb[i m + a], a < count[i] */
  double *coef;      /* U[nb[i m + a], i] */
  double *scale;     /* U[i, i] */
  int *row_start;    /* U's rows, for products with U: row j's off-diagonal */
  int *row_col;      /* entries are U[j, row_col[e]] = row_val[e] for e in */
  double *row_val;   /* row_start[j] .. row_start[j + 1] - 1 */
  double *W;         /* scratch for U' R, n x ncol_max */
} vecchia;

/* Builds U for the kernel block K (K->x2's points, stationary kernel) and
 * noise variances `noise`, with m >= 1 neighbours, for products with up to
 * ncol_max columns; its memory is registered in the caller's workspace ws
 * and allocated there.  The callback is polled between slabs of points.
 * Returns SOLVER_MAX_ITER when P is ready, SOLVER_STOPPED or
 * SOLVER_NO_MEMORY.  A point whose neighbours' block is not numerically
 * positive definite is left unconditioned (its column of U is
 * 1/sqrt(H[t, t]) at t), so U is always usable. */
solver_status vecchia_init(vecchia *P, workspace *ws, const kernel_op *K,
                           const double *noise, int m, int ncol_max,
                           int nthreads, solver_callback callback, void *ctx);

/* Only the neighbours: P's n, m, order, count and nb as vecchia_init()
 * finds them for the points x (scaled inputs), which do not depend on the
 * kernel's variance or the noise, without U's n factorisations (P's other
 * arrays are NULL).  Returns as vecchia_init(). */
solver_status vecchia_neighbours(vecchia *P, workspace *ws, const points *x,
                                 int m, int nthreads, solver_callback callback,
                                 void *ctx);

/* Z = U U' R for ncol <= ncol_max columns (n x ncol, column-major). */
void vecchia_apply(const vecchia *P, const double *R, int ncol, double *Z,
                   int nthreads);

/* Vecchia's approximation of the log-likelihood of y ~ N(0, H), with
 * H = K + diag(noise) for the points x (scaled inputs, in their original
 * order): sum_i log N(y_i; b_i'y_N(i), v_i), each point given its
 * neighbours N(i) in P (count and nb only; b_i and v_i are computed here,
 * so P's neighbours may come from other hyperparameters), and its gradient
 * (d + 2 values) with respect to (log l_1, ..., log l_d, log variance,
 * log of a factor of all the noise).  The approximation of Vecchia (1988)
 * that GpGp maximises (Guinness 2021, "Gaussian process learning via
 * Fisher scoring of Vecchia's approximation", Statistics and Computing
 * 31:25); O(n m^2 d + n m^3) time, all derivatives in one pass.  Sums in
 * point order, so the bits do not depend on the thread count.  The
 * callback is polled between slabs of points.  Returns SOLVER_MAX_ITER
 * when *value and grad are set, SOLVER_STOPPED or SOLVER_NO_MEMORY. */
solver_status vecchia_mll(const vecchia *P, const kernel *k, const points *x,
                          const double *y, const double *noise, int nthreads,
                          solver_callback callback, void *ctx, double *value,
                          double *grad);

/* Vecchia's prediction of the columns of R (n x ncol, values at the
 * points x) at new points xq (scaled inputs, as x): each new point given
 * its m nearest points of x (fewer when n < m), N, by the kriging weights
 * b = H[N, N]^-1 k(x_N, x*) with H = K + diag(noise), so out[i + c nq] =
 * b'R[N, c] (nq x ncol, column-major): the prediction of Katzfuss, Guinness,
 * Gong and Zilber (2020), "Vecchia approximations of Gaussian-process
 * predictions", JABES 25, with the new points conditioned on observed
 * points only.  A new point whose neighbours' block is not numerically
 * positive definite gets 0.  O(nq m^3) after a k-d tree of x; the callback
 * is polled between slabs of new points.  Returns SOLVER_MAX_ITER when out
 * is set, SOLVER_STOPPED or SOLVER_NO_MEMORY. */
solver_status vecchia_predict(const kernel *k, const points *x, const double *noise,
                              const points *xq, int m, const double *R, int ncol,
                              double *out, int nthreads, solver_callback callback,
                              void *ctx);

#endif
