/* k-means clustering for choosing inducing points: k-means++ seeding
 * (Arthur & Vassilvitskii 2007) with the counter-based generator, then
 * Lloyd iterations.  Works on the inputs as given (the SVGP solver passes
 * them divided by the length scales, where the kernel is isotropic).
 *
 * Deterministic for any thread count: points are split into chunks of a
 * fixed size, every point's nearest centre is found by one thread, sums
 * that feed results (the seeding weights, the objective, the centroids)
 * run serially or per cluster in index order.
 * No R headers: this file is part of the numerical core. */
#ifndef SDDGP_KMEANS_H
#define SDDGP_KMEANS_H

#include <stdint.h>
#include "block.h"
#include "solver.h"

typedef struct {
  int iterations; /* Lloyd iterations at most (0: the seeds themselves) */
  uint64_t seed;  /* draws come from stream RNG_STREAM_KMEANS */
  int nthreads;
} kmeans_options;

/* Chooses m (1 <= m <= x->n) centres, written to `centres` (m x d,
 * column-major).  seeds[j] receives the index of the training point that
 * seeded centre j: m distinct indices (the seeding draws each point with
 * probability proportional to its squared distance to the nearest seed so
 * far, which is 0 for the seeds themselves; only when every remaining
 * point duplicates a seed is one drawn uniformly among the unchosen).
 * objective[0..*iterations_done] (room for iterations + 1 values) receives
 * the k-means objective, the sum over points of the squared distance to
 * the nearest centre, after seeding and after each Lloyd iteration; Lloyd
 * iterations stop early once no point changes cluster.  An empty cluster
 * keeps its centre.  The callback is polled (with NULL residuals) after
 * every seed and every iteration.  Returns SOLVER_MAX_ITER, SOLVER_STOPPED
 * or SOLVER_NO_MEMORY. */
solver_status kmeans_fit(const points *x, int m, const kmeans_options *opt,
                         double *centres, int *seeds, double *objective,
                         int *iterations_done, solver_callback callback,
                         void *ctx);

#endif
